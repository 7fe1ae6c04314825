"""Readable text out of a fetched body: HTML as Markdown-like text, JSON pretty-printed, text as is.

HTML is parsed with BeautifulSoup (Python's own ``html.parser``, so no C library is needed);
scripts, styles, navigation, headers, footers, asides and forms are dropped, the ``<main>`` or
``<article>`` element is preferred over the whole body, and html2text turns what is left
into text with headings, lists and emphasis kept as Markdown. Links are gathered from the
whole page, made absolute, and returned separately (the text itself carries none).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from urllib.parse import urljoin, urlsplit

import html2text
from bs4 import BeautifulSoup

from common.text import one_blank_line

MAX_LINKS = 100
_NOT_TEXT = ("script", "style", "noscript", "template", "svg", "canvas", "iframe", "object", "embed",
             "nav", "header", "footer", "aside", "form", "button", "select")
HTML, JSON, TEXT, BINARY = "html", "json", "text", "binary"
_TEXT_TYPES = ("text/", "application/xml", "application/javascript", "application/ecmascript",
               "application/x-www-form-urlencoded", "application/csv", "application/x-ndjson")


@dataclass
class Page:
    kind: str  # html | json | text
    text: str
    title: str | None = None
    links: list[dict] = field(default_factory=list)  # [{"text": ..., "url": ...}], HTML only


def declared_kind(content_type: str) -> str | None:
    """What the server's content type says: ``html``, ``json``, ``text`` or ``binary``; None
    when it says nothing useful (no type, or ``application/octet-stream``)."""
    content_type = content_type.split(";")[0].strip().lower()
    if content_type in ("text/html", "application/xhtml+xml"):
        return HTML
    if content_type == "application/json" or content_type.endswith("+json"):
        return JSON
    if content_type.startswith(_TEXT_TYPES) or content_type.endswith("+xml"):
        return TEXT
    if content_type and content_type != "application/octet-stream":
        return BINARY
    return None


def sniffed_kind(head: bytes) -> str:
    """``html``, ``text`` or ``binary`` from the start of a body whose type was not declared."""
    sample = head[:1024]
    if b"\x00" in sample:
        return BINARY
    try:
        text = sample.decode("utf-8")
    except UnicodeDecodeError as exc:
        if exc.start < len(sample) - 4:  # not just a character cut at the sample's end
            return BINARY
        text = sample[:exc.start].decode("utf-8")
    return HTML if text.lstrip().lower().startswith(("<!doctype html", "<html")) else TEXT


def read_page(kind: str, raw: bytes, charset: str | None, base_url: str, *, whole: bool) -> Page:
    """The page in ``raw`` as text. ``whole`` is False when the body was cut (a cut JSON body
    is shown as text, since it no longer parses)."""
    if kind == HTML:
        return _html_page(raw, charset, base_url)
    text = raw.decode(charset or "utf-8", errors="replace")
    if kind == JSON and whole:
        try:
            return Page(JSON, json.dumps(json.loads(text), indent=2, ensure_ascii=False))
        except ValueError:
            pass  # labelled JSON but is not: show it as it came
    return Page(kind, text)


def _html_page(raw: bytes, charset: str | None, base_url: str) -> Page:
    soup = BeautifulSoup(raw, "html.parser", from_encoding=charset)
    title = soup.title.get_text(" ", strip=True) if soup.title else None
    base = soup.find("base", href=True)
    base_url = urljoin(base_url, base["href"]) if base else base_url
    links = _links(soup, base_url)
    for tag in soup.find_all(_NOT_TEXT):
        tag.decompose()
    main = soup.find("main") or soup.find("article") or soup.body or soup
    converter = html2text.HTML2Text()
    converter.ignore_links = True
    converter.ignore_images = True
    converter.body_width = 0  # no hard wrapping: the reader wraps
    converter.unicode_snob = True  # keep "é", not "e"
    text = one_blank_line(converter.handle(str(main))).strip()
    return Page(HTML, text, title or None, links)


def _links(soup: BeautifulSoup, base_url: str) -> list[dict]:
    seen, links = set(), []
    for anchor in soup.find_all("a", href=True):
        url = urljoin(base_url, anchor["href"].strip()).split("#", 1)[0]
        if urlsplit(url).scheme not in ("http", "https") or url in seen:
            continue
        seen.add(url)
        links.append({"text": anchor.get_text(" ", strip=True), "url": url})
        if len(links) == MAX_LINKS:
            break
    return links
