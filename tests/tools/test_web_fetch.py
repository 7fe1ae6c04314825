"""web_fetch against a real local HTTP server.

The server listens on 127.0.0.1, which the address guard refuses by default, so every test
here that must succeed allows it with ``allow_private`` (the refusals are in
test_web_fetch_ssrf.py).
"""

from __future__ import annotations

import gzip
import socket

import pytest
from jsonschema import ValidationError

from capabilities.base import CapabilityError, CapabilityInputError, ExecutionContext
from capabilities.tools.web_fetch import web_fetch
from tests.tools.conftest import call
from tests.tools.local_http import LocalHTTPServer, Reply, Request

LOCAL = {"allow_private": ["127.0.0.1"]}

ARTICLE = """<!doctype html>
<html><head><meta charset="utf-8"><title> Flora learns to read </title>
<style>body { color: red }</style></head>
<body>
<header><a href="/">Home</a> <a href="/about">About us</a></header>
<nav><a href="https://elsewhere.example/x#top">Elsewhere</a></nav>
<main>
  <h1>Reading the web</h1>
  <p>Flora now reads <b>pages</b> as text. Café crème.</p>
  <ul><li>first point</li><li>second point</li></ul>
  <p>See <a href="notes/1.html#part">the notes</a> and <a href="mailto:a@b.c">mail</a>.</p>
</main>
<script>document.write("tracking")</script>
<footer>© 2026 the footer text</footer>
</body></html>"""


def app(request: Request) -> Reply:
    if request.path == "/article":
        return Reply.text(ARTICLE, content_type="text/html; charset=utf-8")
    if request.path == "/latin1.html":  # no charset in the header: the page's <meta> says it
        return Reply(200, '<html><head><meta charset="iso-8859-1"><title>Été</title></head><body><p>Crème brûlée</p>'
                     '</body></html>'.encode("latin-1"), {"Content-Type": "text/html"})
    if request.path == "/data.json":
        return Reply.json({"city": "北京", "items": [1, 2]})
    if request.path == "/notes.txt":
        return Reply.text("line one\nline two")
    if request.path == "/untyped":
        return Reply(200, b"<!DOCTYPE html><html><title>No type</title><body><p>sniffed</p></body></html>")
    if request.path == "/image.png":
        return Reply(200, b"\x89PNG\r\n\x1a\n" + bytes(5000), {"Content-Type": "image/png"})
    if request.path == "/blob":
        return Reply(200, b"\x00\x01\x02binary" * 100)
    if request.path == "/packed.txt":  # 1 MB of text in about 1 kB of gzip
        return Reply(200, gzip.compress(b"z" * 1_000_000), {"Content-Type": "text/plain", "Content-Encoding": "gzip"})
    if request.path == "/big.txt":
        return Reply.text("a" * 5000)
    if request.path == "/long.html":
        return Reply.text("<html><body><p>" + "word " * 2000 + "</p></body></html>", content_type="text/html")
    if request.path == "/slow":
        return Reply.text("late", delay_s=1.0)
    if request.path == "/hop":
        return Reply(302, b"", {"Location": request.query["to"][0]})
    if request.path == "/loop":
        return Reply(302, b"", {"Location": "/loop"})
    return Reply.text("<html><title>Not here</title><body><p>no such page</p></body></html>", 404,
                      content_type="text/html")


@pytest.fixture
def server():
    with LocalHTTPServer(app) as running:
        yield running


def test_html_page_becomes_title_and_main_text_without_scripts_or_page_furniture(registry, server):
    result = call(registry, "web_fetch", {"url": f"{server.url}/article"}, LOCAL)

    assert result["status"] == 200 and result["kind"] == "html"
    assert result["title"] == "Flora learns to read"
    text = result["text"]
    assert text.startswith("# Reading the web")
    assert "Flora now reads **pages** as text. Café crème." in text
    assert "* first point" in text and "* second point" in text
    for furniture in ("tracking", "color: red", "footer text", "About us", "Elsewhere"):
        assert furniture not in text
    assert "links" not in result
    assert result["truncated"] is False and result["truncated_by"] is None


def test_links_are_absolute_without_fragments_and_only_when_asked(registry, server):
    result = call(registry, "web_fetch", {"url": f"{server.url}/article", "include_links": True}, LOCAL)

    assert result["links"] == [
        {"text": "Home", "url": f"{server.url}/"},
        {"text": "About us", "url": f"{server.url}/about"},
        {"text": "Elsewhere", "url": "https://elsewhere.example/x"},
        {"text": "the notes", "url": f"{server.url}/notes/1.html"},
    ]


def test_html_charset_is_read_from_the_page_when_the_header_has_none(registry, server):
    result = call(registry, "web_fetch", {"url": f"{server.url}/latin1.html"}, LOCAL)
    assert result["title"] == "Été" and result["text"] == "Crème brûlée"


def test_json_is_pretty_printed_and_text_returned_as_is(registry, server):
    data = call(registry, "web_fetch", {"url": f"{server.url}/data.json"}, LOCAL)
    text = call(registry, "web_fetch", {"url": f"{server.url}/notes.txt"}, LOCAL)

    assert data["kind"] == "json" and data["title"] is None
    assert data["text"] == '{\n  "city": "北京",\n  "items": [\n    1,\n    2\n  ]\n}'
    assert (text["kind"], text["text"]) == ("text", "line one\nline two")


def test_untyped_body_is_sniffed(registry, server):
    result = call(registry, "web_fetch", {"url": f"{server.url}/untyped"}, LOCAL)
    assert (result["kind"], result["title"], result["text"]) == ("html", "No type", "sniffed")


@pytest.mark.parametrize("path", ["/image.png", "/blob"])
def test_binary_content_is_refused(registry, server, path):
    with pytest.raises(CapabilityError) as caught:
        call(registry, "web_fetch", {"url": f"{server.url}{path}"}, LOCAL)
    assert caught.value.error_type == "unsupported_content"
    assert "not a page Flora can read as text" in str(caught.value)


def test_body_is_cut_at_max_bytes_and_flagged(registry, server):
    result = call(registry, "web_fetch", {"url": f"{server.url}/big.txt"}, {**LOCAL, "max_bytes": 1000})
    assert result["text"] == "a" * 1000 and result["bytes_read"] == 1000
    assert (result["truncated"], result["truncated_by"]) == (True, "bytes")


def test_a_small_compressed_body_that_unpacks_large_is_cut_at_max_bytes(registry, server):
    result = call(registry, "web_fetch", {"url": f"{server.url}/packed.txt"}, {**LOCAL, "max_bytes": 5000})
    assert result["bytes_read"] == 5000 and result["text"] == "z" * 5000
    assert result["truncated_by"] == "bytes"


def test_text_is_cut_at_max_chars_and_flagged(registry, server):
    result = call(registry, "web_fetch", {"url": f"{server.url}/long.html", "max_chars": 150}, LOCAL)
    assert len(result["text"]) == 150 and result["text"].startswith("word word")
    assert (result["truncated"], result["truncated_by"]) == (True, "chars")


def test_the_setting_caps_what_a_call_may_ask_for(registry, server):
    result = call(registry, "web_fetch", {"url": f"{server.url}/long.html", "max_chars": 5000},
                  {**LOCAL, "max_chars": 200})
    assert len(result["text"]) == 200 and result["truncated_by"] == "chars"


def test_error_status_is_returned_as_data(registry, server):
    result = call(registry, "web_fetch", {"url": f"{server.url}/missing"}, LOCAL)
    assert (result["status"], result["title"], result["text"]) == (404, "Not here", "no such page")


def test_redirects_are_followed_and_reported(registry, server):
    result = call(registry, "web_fetch", {"url": f"{server.url}/hop?to=/notes.txt"}, LOCAL)
    assert result["final_url"] == f"{server.url}/notes.txt" and result["text"] == "line one\nline two"
    assert result["redirects"] == [f"{server.url}/notes.txt"]


def test_endless_redirects_stop(registry, server):
    with pytest.raises(CapabilityError) as caught:
        call(registry, "web_fetch", {"url": f"{server.url}/loop"}, {**LOCAL, "max_redirects": 3})
    assert caught.value.error_type == "too_many_redirects"
    assert len(server.requests) == 4


def test_redirect_to_another_scheme_is_refused(registry, server):
    with pytest.raises(CapabilityError) as caught:
        call(registry, "web_fetch", {"url": f"{server.url}/hop?to=file:///etc/passwd"}, LOCAL)
    assert caught.value.error_type == "forbidden"


def test_slow_server_times_out_as_retryable(registry, server):
    with pytest.raises(CapabilityError) as caught:
        call(registry, "web_fetch", {"url": f"{server.url}/slow", "timeout_s": 0.2}, LOCAL)
    assert caught.value.retryable and caught.value.error_type == "timeout"


def test_refused_connection_is_retryable(registry):
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    with pytest.raises(CapabilityError) as caught:
        call(registry, "web_fetch", {"url": f"http://127.0.0.1:{port}/"}, LOCAL)
    assert caught.value.retryable and caught.value.error_type == "unavailable"


def test_unknown_host_is_retryable(registry):
    with pytest.raises(CapabilityError) as caught:
        call(registry, "web_fetch", {"url": "http://no-such-host.invalid/"})
    assert caught.value.retryable and caught.value.error_type == "unavailable"


def test_schema_refuses_other_schemes_and_out_of_range_values(registry):
    for bad in ({"url": "ftp://example.com/file"}, {"url": "https://example.com", "max_chars": 10},
                {"url": "https://example.com", "timeout_s": 600}, {"url": "https://example.com", "method": "POST"}):
        with pytest.raises(ValidationError):
            call(registry, "web_fetch", bad)


def test_non_http_url_is_refused_even_without_the_schema():
    with pytest.raises(CapabilityInputError) as caught:
        web_fetch("file:///etc/passwd", ExecutionContext(task_id="t", user_id="u"))
    assert caught.value.parameter == "url"


@pytest.mark.parametrize("settings, key", [
    ({"allow_private": "127.0.0.1"}, "allow_private"),
    ({"allow_private": [""]}, "allow_private"),
    ({"max_bytes": 0}, "max_bytes"),
    ({"max_chars": "many"}, "max_chars"),
])
def test_bad_settings_are_reported_by_key(registry, server, settings, key):
    with pytest.raises(CapabilityError) as caught:
        call(registry, "web_fetch", {"url": f"{server.url}/notes.txt"}, settings)
    assert caught.value.error_type == "misconfigured"
    assert f"capabilities.settings.web_fetch.{key}" in str(caught.value)
    assert server.requests == []
