"""WhatsApp's formatting: ``*bold*``, ``_italic_``, ``~strike~``, inline code and code blocks as
in Markdown; links as ``text (url)``, headings bold. A text message holds at most 4096
characters; the body of an interactive message 1024."""

from __future__ import annotations

import re

from capabilities.channels.render import FENCE, HEADING, INLINE, fit, prepare

TEXT_LIMIT = 4096
INTERACTIVE_BODY_LIMIT = 1024



def _inline(text: str) -> str:
    def one(match: re.Match) -> str:
        if match.group("code"):
            return match.group("code")
        if match.group("link"):
            return f"{match.group('ltext')} ({match.group('lurl')})"
        if match.group("bold"):
            return f"*{match.group('btext') or match.group('b2text')}*"
        if match.group("strike"):
            return f"~{match.group('stext')}~"
        return f"_{match.group('itext') or match.group('i2text')}_"

    return INLINE.sub(one, text)


def _render(markdown: str) -> str:
    out, in_code = [], False
    for line in markdown.split("\n"):
        if FENCE.match(line):
            in_code = not in_code
            out.append("```")
        elif in_code:
            out.append(line)
        elif HEADING.match(line):
            out.append(f"*{_inline(HEADING.match(line).group(1))}*")
        else:
            out.append(_inline(line))
    return "\n".join(out)


def whatsapp(text: str, limit: int = TEXT_LIMIT) -> list[str]:
    """``text`` (Markdown) as WhatsApp messages of at most ``limit`` characters each."""
    prepared = prepare(text)
    return fit(prepared, limit, _render) if prepared else []
