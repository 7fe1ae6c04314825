"""Per-channel rendering: a reply's Markdown turned into what each chat channel shows well.

Every channel gets the same preparation (:func:`prepare`): code fences the model left open
are closed, and Markdown tables become aligned text in a code block (no chat renders pipe
tables). Then one function per channel:

- :func:`telegram` — Telegram's MarkdownV2: bold, italic, strike, inline code, pre blocks and
  links kept; every other special character escaped; headings bold; at most 4096 characters
  a message.
- :func:`discord` — Discord's own Markdown (it renders headings, lists, fences); at most 2000
  characters a message.
- :func:`feishu` — Feishu/Lark rich text (``post``): a paragraph per line, bold and links as
  styled elements, code blocks as ``code_block``; at most 4000 characters (and 30 KB) a message.
- :func:`email` — one mail, no limit: the Markdown as its plain-text part (it reads well as
  it is) and a simple HTML alternative (paragraphs, bold, italic, links, code in ``<pre>``).

A reply longer than a message is split (:func:`split_text`) at paragraph breaks, else line
breaks, else spaces; a code block cut in two is closed at the end of one message and opened
again, with its language, at the start of the next.
"""

from __future__ import annotations

import json
import re

TELEGRAM_LIMIT = 4096
DISCORD_LIMIT = 2000
FEISHU_LIMIT = 4000
FEISHU_MAX_BYTES = 30_000

FENCE = re.compile(r"^(\s*)(```+|~~~+)(.*)$")
_TABLE_RULE = re.compile(r"^\s*\|?\s*:?-{3,}:?\s*(\|\s*:?-{3,}:?\s*)*\|?\s*$")


# --------------------------------------------------------------------------- shared
def repair_fences(text: str) -> str:
    """Close a code fence the text leaves open."""
    open_fence = None
    for line in text.split("\n"):
        match = FENCE.match(line)
        if match:
            mark = match.group(2)
            if open_fence is None:
                open_fence = mark
            elif mark.startswith(open_fence[0]) and len(mark) >= len(open_fence) and not match.group(3).strip():
                open_fence = None
    if open_fence is not None:
        return text.rstrip("\n") + "\n" + open_fence
    return text


def tables_to_text(text: str) -> str:
    """Markdown pipe tables (header, rule, rows) as aligned columns in a code block."""
    lines, out, i = text.split("\n"), [], 0
    in_code = False
    while i < len(lines):
        line = lines[i]
        if FENCE.match(line):
            in_code = not in_code
        if (not in_code and "|" in line and i + 1 < len(lines) and _TABLE_RULE.match(lines[i + 1])
                and "-" in lines[i + 1]):
            rows = [_cells(line)]
            i += 2
            while i < len(lines) and "|" in lines[i] and lines[i].strip():
                rows.append(_cells(lines[i]))
                i += 1
            width = max(len(r) for r in rows)
            rows = [r + [""] * (width - len(r)) for r in rows]
            sizes = [max(len(r[c]) for r in rows) for c in range(width)]
            fmt = lambda row: "  ".join(cell.ljust(sizes[c]) for c, cell in enumerate(row)).rstrip()  # noqa: E731
            out += ["```", fmt(rows[0]), "  ".join("-" * s for s in sizes), *[fmt(r) for r in rows[1:]], "```"]
            continue
        out.append(line)
        i += 1
    return "\n".join(out)


def _cells(line: str) -> list[str]:
    line = line.strip()
    if line.startswith("|"):
        line = line[1:]
    if line.endswith("|"):
        line = line[:-1]
    return [cell.strip() for cell in line.split("|")]


def prepare(text: str) -> str:
    """What every channel does first: open fences closed, tables as aligned text."""
    return tables_to_text(repair_fences(text.replace("\r\n", "\n").strip("\n")))


def split_text(text: str, limit: int) -> list[str]:
    """``text`` in pieces of at most ``limit`` characters, cut at paragraph breaks, else line
    breaks, else spaces, else anywhere; a code block cut in two is closed and opened again."""
    if limit < 20:
        raise ValueError("limit must be at least 20 characters")
    pieces: list[str] = []
    fence: str | None = None  # the fence line open at the start of the next piece
    rest = text
    while rest:
        head = fence + "\n" if fence else ""
        budget = limit - len(head)
        if len(rest) <= budget and _open_fence(head + rest) is None:
            pieces.append(head + rest)
            break
        budget -= 4  # room to close a fence cut in two ("\n```")
        cut = _cut_point(rest, budget)
        piece, rest = head + rest[:cut].rstrip("\n"), rest[cut:].lstrip("\n")
        fence = _open_fence(piece)
        if fence is not None:
            piece += "\n" + re.sub(r"[^`~].*$", "", fence.strip())
        pieces.append(piece)
        if not rest and fence is not None:
            break
    return [p for p in pieces if p.strip()]


def _cut_point(text: str, budget: int) -> int:
    if len(text) <= budget:
        return len(text)
    window = text[:budget + 1]
    for sep in ("\n\n", "\n", " "):
        at = window.rfind(sep)
        if at > budget // 4:
            return at + len(sep)
    return budget


def _open_fence(text: str) -> str | None:
    """The fence line (with its language) left open at the end of ``text``, else None."""
    open_line = None
    for line in text.split("\n"):
        match = FENCE.match(line)
        if match:
            if open_line is None:
                open_line = match.group(2) + match.group(3).strip()
            elif not match.group(3).strip():
                open_line = None
    return open_line


def _fit(text: str, limit: int, render, measure=len) -> list:
    """Split the prepared Markdown and render each piece; a piece whose rendering outgrows
    ``limit`` (escapes add characters) is split smaller and rendered again."""
    out = []
    for piece in split_text(text, limit):
        out += _fit_piece(piece, limit, render, measure)
    return out


def _fit_piece(piece: str, limit: int, render, measure) -> list:
    rendered = render(piece)
    if measure(rendered) <= limit:
        return [rendered]
    smaller = max(20, len(piece) // 2)
    if smaller >= len(piece):
        raise ValueError("a piece of text cannot be made to fit the channel's limit")
    out = []
    for part in split_text(piece, smaller):
        out += _fit_piece(part, limit, render, measure)
    return out


# --------------------------------------------------------------------------- Telegram
_TG_SPECIAL = re.compile(r"([_*\[\]()~`>#+\-=|{}.!\\])")
_INLINE = re.compile(
    r"(?P<code>`[^`\n]+`)"
    r"|(?P<link>\[(?P<ltext>[^\]\n]+)\]\((?P<lurl>(?:[^()\s]|\([^()\s]*\))+)\))"
    r"|(?P<bold>\*\*(?P<btext>[^*\n]+?)\*\*|__(?P<b2text>[^_\n]+?)__)"
    r"|(?P<strike>~~(?P<stext>[^~\n]+?)~~)"
    r"|(?P<italic>(?<![\w*])\*(?P<itext>[^*\s][^*\n]*?)\*(?![\w*])|(?<!\w)_(?P<i2text>[^_\s][^_\n]*?)_(?!\w))"
)
_HEADING = re.compile(r"^\s{0,3}#{1,6}\s+(.*?)\s*#*\s*$")
_BULLET = re.compile(r"^(\s*)[-*+]\s+(.*)$")


def tg_escape(text: str) -> str:
    """Escape every MarkdownV2 special character (and the backslash) in plain text."""
    return _TG_SPECIAL.sub(r"\\\1", text)


def _tg_code_escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace("`", "\\`")


def _tg_inline(text: str) -> str:
    out, at = [], 0
    for match in _INLINE.finditer(text):
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
                out.append("```" + re.sub(r"[^\w+-]", "", code))
            else:
                code = None
                out.append("```")
            continue
        if code is not None:
            out.append(_tg_code_escape(line))
            continue
        heading = _HEADING.match(line)
        bullet = _BULLET.match(line)
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
    return _fit(prepared, TELEGRAM_LIMIT, _tg_render) if prepared else []


# --------------------------------------------------------------------------- Discord
def discord(text: str) -> list[str]:
    """``text`` (Markdown) as Discord messages of at most 2000 characters."""
    prepared = prepare(text)
    return split_text(prepared, DISCORD_LIMIT) if prepared else []


# --------------------------------------------------------------------------- Feishu
_FEISHU_INLINE = re.compile(
    r"(?P<link>\[(?P<ltext>[^\]\n]+)\]\((?P<lurl>(?:[^()\s]|\([^()\s]*\))+)\))"
    r"|(?P<bold>\*\*(?P<btext>[^*\n]+?)\*\*)"
    r"|(?P<italic>(?<![\w*])\*(?P<itext>[^*\s][^*\n]*?)\*(?![\w*]))"
    r"|(?P<strike>~~(?P<stext>[^~\n]+?)~~)"
)


def _feishu_line(line: str) -> list[dict]:
    heading = _HEADING.match(line)
    if heading:
        return [{"tag": "text", "text": heading.group(1), "style": ["bold"]}]
    bullet = _BULLET.match(line)
    if bullet:
        line = bullet.group(1) + "• " + bullet.group(2)
    elements, at = [], 0
    for match in _FEISHU_INLINE.finditer(line):
        if match.start() > at:
            elements.append({"tag": "text", "text": line[at:match.start()]})
        at = match.end()
        if match.group("link"):
            elements.append({"tag": "a", "text": match.group("ltext"), "href": match.group("lurl")})
        elif match.group("bold"):
            elements.append({"tag": "text", "text": match.group("btext"), "style": ["bold"]})
        elif match.group("italic"):
            elements.append({"tag": "text", "text": match.group("itext"), "style": ["italic"]})
        else:
            elements.append({"tag": "text", "text": match.group("stext"), "style": ["lineThrough"]})
    if at < len(line) or not elements:
        elements.append({"tag": "text", "text": line[at:]})
    return elements


def _feishu_render(markdown: str) -> dict:
    paragraphs: list[list[dict]] = []
    code: list[str] | None = None
    language = ""
    for line in markdown.split("\n"):
        fence = FENCE.match(line)
        if fence:
            if code is None:
                code, language = [], fence.group(3).strip()
            else:
                block = {"tag": "code_block", "text": "\n".join(code)}
                if language:
                    block["language"] = language.upper()
                paragraphs.append([block])
                code = None
            continue
        if code is not None:
            code.append(line)
        else:
            paragraphs.append(_feishu_line(line))
    return {"zh_cn": {"title": "", "content": paragraphs}}


def _feishu_size(post: dict) -> int:
    text_chars = sum(len(e.get("text", "")) for para in post["zh_cn"]["content"] for e in para)
    size = len(json.dumps(post, ensure_ascii=False).encode())
    return text_chars if size <= FEISHU_MAX_BYTES else FEISHU_LIMIT + 1


def feishu(text: str) -> list[dict]:
    """``text`` (Markdown) as Feishu ``post`` contents of at most 4000 characters (30 KB) each."""
    prepared = prepare(text)
    return _fit(prepared, FEISHU_LIMIT, _feishu_render, _feishu_size) if prepared else []


# --------------------------------------------------------------------------- e-mail
def _html_inline(text: str) -> str:
    from html import escape

    out, at = [], 0
    for match in _INLINE.finditer(text):
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
        heading = _HEADING.match(line)
        bullet = _BULLET.match(line)
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


RENDERERS = {"telegram": telegram, "discord": discord, "feishu": feishu, "email": email}
