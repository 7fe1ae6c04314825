"""A mail's rendering: no length limit; the Markdown as its plain-text part (it reads well as it
is) and a simple HTML alternative (paragraphs, bold, italic, links, code in ``<pre>``)."""

from __future__ import annotations

import re

from capabilities.channels.render import BULLET, FENCE, HEADING, INLINE, prepare


def _html_inline(text: str) -> str:
    from html import escape

    out, at = [], 0
    for match in INLINE.finditer(text):
        out.append(escape(text[at:match.start()]))
        at = match.end()
        if match.group("code"):
            out.append("<code>" + escape(match.group("code")[1:-1]) + "</code>")
        elif match.group("link"):
            out.append(f'<a href="{escape(match.group("lurl"))}">' + _html_inline(match.group("ltext")) + "</a>")
        elif match.group("bold"):
            out.append("<b>" + _html_inline(match.group("btext") or match.group("b2text")) + "</b>")
        elif match.group("strike"):
            out.append("<s>" + _html_inline(match.group("stext")) + "</s>")
        else:
            out.append("<i>" + _html_inline(match.group("itext") or match.group("i2text")) + "</i>")
    out.append(escape(text[at:]))
    return "".join(out)


def _email_html(markdown: str) -> str:
    from html import escape

    out, code = [], None
    for line in markdown.split("\n"):
        if FENCE.match(line):
            out.append("<pre>" if code is None else "</pre>")
            code = None if code is not None else []
            continue
        if code is not None:
            out.append(escape(line))
            continue
        heading = HEADING.match(line)
        bullet = BULLET.match(line)
        if heading:
            out.append("<p><b>" + _html_inline(heading.group(1)) + "</b></p>")
        elif bullet:
            out.append(bullet.group(1).replace(" ", "&nbsp;") + "&bull; " + _html_inline(bullet.group(2)) + "<br>")
        elif line.strip():
            out.append(_html_inline(line) + "<br>")
        else:
            out.append("<br>")
    body = "\n".join(out).replace("<pre>\n", "<pre>")
    return f"<html><body>\n{body}\n</body></html>"


def email(text: str) -> tuple[str, str]:
    """``text`` (Markdown) as a mail's plain-text part and its HTML alternative."""
    prepared = prepare(text)
    return prepared + "\n", _email_html(prepared)
