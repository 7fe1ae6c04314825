"""Rendering shared by every channel: a reply's Markdown turned into what each chat channel shows well.

Every channel gets the same preparation (:func:`prepare`): code fences the model left open
are closed, and Markdown tables become aligned text in a code block (no chat renders pipe
tables). Then each channel renders in its own package (``capabilities/channels/<type>/``):
Telegram's MarkdownV2, Feishu's ``post``, a mail's plain and HTML parts, Slack's mrkdwn;
Discord and Matrix show Markdown as it is (:func:`plain`). :func:`fit` keeps a rendering
within the channel's limit.

A reply longer than a message is split (:func:`split_text`) at paragraph breaks, else line
breaks, else spaces; a code block cut in two is closed at the end of one message and opened
again, with its language, at the start of the next.
"""

from __future__ import annotations

import re

FENCE = re.compile(r"^(\s*)(```+|~~~+)(.*)$")
HEADING = re.compile(r"^\s{0,3}#{1,6}\s+(.*?)\s*#*\s*$")
BULLET = re.compile(r"^(\s*)[-*+]\s+(.*)$")
# Markdown's inline marks: code, link, bold, strike, italic (each channel writes them its way)
INLINE = re.compile(
    r"(?P<code>`[^`\n]+`)"
    r"|(?P<link>\[(?P<ltext>[^\]\n]+)\]\((?P<lurl>(?:[^()\s]|\([^()\s]*\))+)\))"
    r"|(?P<bold>\*\*(?P<btext>[^*\n]+?)\*\*|__(?P<b2text>[^_\n]+?)__)"
    r"|(?P<strike>~~(?P<stext>[^~\n]+?)~~)"
    r"|(?P<italic>(?<![\w*])\*(?P<itext>[^*\s][^*\n]*?)\*(?![\w*])|(?<!\w)_(?P<i2text>[^_\s][^_\n]*?)_(?!\w))"
)
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
            piece += "\n" + _closing(fence)
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


def _closing(fence: str) -> str:
    """The marker that closes ``fence`` (the ```` ``` ```` of ```` ```python ````)."""
    return fence[:len(fence) - len(fence.lstrip("`~"))]


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


def fit(text: str, limit: int, render, measure=len) -> list:
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


def plain(text: str, limit: int) -> list[str]:
    """``text`` (Markdown) as pieces of at most ``limit`` characters, for a channel that shows
    Markdown as it is (Discord, Slack's mrkdwn near enough, Matrix): prepared and split."""
    prepared = prepare(text)
    return split_text(prepared, limit) if prepared else []
