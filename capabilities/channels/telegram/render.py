"""Telegram's MarkdownV2: bold, italic, strike, inline code, pre blocks and links kept; every
other special character escaped; headings bold; at most 4096 characters a message."""

from __future__ import annotations

from capabilities.channels.render import BULLET, FENCE, HEADING, INLINE, fit, prepare

TELEGRAM_LIMIT = 4096


_TG_ESCAPED = str.maketrans({c: "\\" + c for c in "_*[]()~`>#+-=|{}.!\\"})


def tg_escape(text: str) -> str:
    """Escape every MarkdownV2 special character (and the backslash) in plain text."""
    return text.translate(_TG_ESCAPED)


def _tg_code_escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace("`", "\\`")


def _tg_inline(text: str) -> str:
    out, at = [], 0
    for match in INLINE.finditer(text):
        out.append(tg_escape(text[at:match.start()]))
        at = match.end()
        if match.group("code"):
            out.append("`" + _tg_code_escape(match.group("code")[1:-1]) + "`")
        elif match.group("link"):
            url = match.group("lurl").replace("\\", "\\\\").replace(")", "\\)")
            out.append("[" + _tg_inline(match.group("ltext")) + "](" + url + ")")
        elif match.group("bold"):
            out.append("*" + _tg_inline(match.group("btext") or match.group("b2text")) + "*")
        elif match.group("strike"):
            out.append("~" + _tg_inline(match.group("stext")) + "~")
        else:
            out.append("_" + _tg_inline(match.group("itext") or match.group("i2text")) + "_")
    out.append(tg_escape(text[at:]))
    return "".join(out)


def _tg_render(markdown: str) -> str:
    out, code = [], None
    for line in markdown.split("\n"):
        fence = FENCE.match(line)
        if fence:
            if code is None:
                code = fence.group(3).strip()
                out.append("```" + "".join(c for c in code if c.isalnum() or c in "_+-"))
            else:
                code = None
                out.append("```")
            continue
        if code is not None:
            out.append(_tg_code_escape(line))
            continue
        heading = HEADING.match(line)
        bullet = BULLET.match(line)
        if heading:
            out.append("*" + _tg_inline(heading.group(1)) + "*")
        elif bullet:
            out.append(bullet.group(1) + "• " + _tg_inline(bullet.group(2)))
        elif line.lstrip().startswith("> "):
            out.append(">" + _tg_inline(line.lstrip()[2:]))
        else:
            out.append(_tg_inline(line))
    return "\n".join(out)


def telegram(text: str) -> list[str]:
    """``text`` (Markdown) as Telegram MarkdownV2 messages of at most 4096 characters."""
    prepared = prepare(text)
    return fit(prepared, TELEGRAM_LIMIT, _tg_render) if prepared else []
