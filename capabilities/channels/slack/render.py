"""Slack's mrkdwn: ``*bold*``, ``_italic_``, ``~strike~``, inline code and code blocks as in
Markdown, links as ``<url|text>``, headings bold; ``&``, ``<`` and ``>`` escaped outside what
Flora writes as a link. A section block holds at most 3000 characters, so a message does too."""

from __future__ import annotations

import re

from capabilities.channels.render import BULLET, FENCE, HEADING, INLINE, fit, prepare

SLACK_LIMIT = 3000  # characters of a section block's text



def escape(text: str) -> str:
    """The three characters Slack reads as markup, as its entities."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _inline(text: str) -> str:
    out, at = [], 0
    for match in INLINE.finditer(text):
        out.append(escape(text[at:match.start()]))
        if match.group("code"):
            out.append(escape(match.group("code")))
        elif match.group("link"):
            out.append(f"<{match.group('lurl').replace('|', '%7C')}|{escape(match.group('ltext'))}>")
        elif match.group("bold"):
            out.append(f"*{escape(match.group('btext') or match.group('b2text'))}*")
        elif match.group("strike"):
            out.append(f"~{escape(match.group('stext'))}~")
        else:
            out.append(f"_{escape(match.group('itext') or match.group('i2text'))}_")
        at = match.end()
    out.append(escape(text[at:]))
    return "".join(out)


def _render(markdown: str) -> str:
    out, in_code = [], False
    for line in markdown.split("\n"):
        if FENCE.match(line):
            in_code = not in_code
            out.append("```")  # Slack takes no language after the fence
            continue
        if in_code:
            out.append(escape(line))
            continue
        heading = HEADING.match(line)
        bullet = BULLET.match(line)
        if heading:
            out.append(f"*{_inline(heading.group(1))}*")
        elif bullet:
            out.append(f"{bullet.group(1)}• {_inline(bullet.group(2))}")
        else:
            out.append(_inline(line))
    return "\n".join(out)


def mrkdwn(text: str) -> list[str]:
    """``text`` (Markdown) as Slack mrkdwn messages of at most 3000 characters each."""
    prepared = prepare(text)
    return fit(prepared, SLACK_LIMIT, _render) if prepared else []
