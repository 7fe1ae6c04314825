"""Feishu/Lark rich text (``post``): a paragraph per line, bold and links as styled elements, code
blocks as ``code_block``; at most 4000 characters (and 30 KB) a message."""

from __future__ import annotations

import json
import re

from capabilities.channels.render import BULLET, FENCE, HEADING, fit, prepare

FEISHU_LIMIT = 4000
FEISHU_MAX_BYTES = 30_000


_FEISHU_INLINE = re.compile(
    r"(?P<link>\[(?P<ltext>[^\]\n]+)\]\((?P<lurl>(?:[^()\s]|\([^()\s]*\))+)\))"
    r"|(?P<bold>\*\*(?P<btext>[^*\n]+?)\*\*)"
    r"|(?P<italic>(?<![\w*])\*(?P<itext>[^*\s][^*\n]*?)\*(?![\w*]))"
    r"|(?P<strike>~~(?P<stext>[^~\n]+?)~~)"
)


def _feishu_line(line: str) -> list[dict]:
    heading = HEADING.match(line)
    if heading:
        return [{"tag": "text", "text": heading.group(1), "style": ["bold"]}]
    bullet = BULLET.match(line)
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
    return fit(prepared, FEISHU_LIMIT, _feishu_render, _feishu_size) if prepared else []
