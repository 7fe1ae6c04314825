"""mcp-server-fetch (PyPI), run as a subprocess: its tool as a capability, fetching a page
from a local HTTP server, and its refusal (an isError result) as a failed call."""

from __future__ import annotations

import sys

import pytest

from capabilities.base import CapabilityError, ExecutionContext
from config import load_config
from init_plugins import build_registry
from tests.mcp.conftest import MARK_ENV, config
from tests.tools.local_http import LocalHTTPServer, Reply

pytestmark = pytest.mark.timeout(120)
PAGE = "<html><head><title>Flora notes</title></head><body><h1>Release notes</h1>" \
       "<p>The <b>MCP</b> tools arrived today, with approval and timeouts.</p></body></html>"


def site(request) -> Reply:
    if request.path == "/notes":
        return Reply.text(PAGE, content_type="text/html; charset=utf-8")
    return Reply.text("not here", 404)


def fetch_server(*flags: str) -> dict:
    return {"command": sys.executable, "args": ["-m", "mcp_server_fetch", *flags], "env": [MARK_ENV]}


def test_the_fetch_tool_reads_a_local_page_as_markdown(tmp_path):
    registry = build_registry(load_config(config(tmp_path, servers_={
        "web": fetch_server("--ignore-robots-txt", "--allow-private-ips")}), env={}))
    fetch = registry.get_executable("web.fetch")
    assert fetch.required == ["url"] and fetch.needs_approval is False  # read-only by its annotations
    with LocalHTTPServer(site) as server:
        result = fetch.invoke({"url": server.url + "/notes"}, ExecutionContext(task_id="t", user_id="u"))
    assert "Release notes" in result["text"] and "**MCP** tools arrived today" in result["text"]


def test_a_refusal_by_the_fetch_server_fails_the_call_with_its_reason(tmp_path):
    registry = build_registry(load_config(config(tmp_path, servers_={"web": fetch_server("--ignore-robots-txt")}),
                                          env={}))
    with LocalHTTPServer(site) as server, pytest.raises(CapabilityError) as refused:
        registry.get_executable("web.fetch").invoke({"url": server.url + "/notes"},
                                                    ExecutionContext(task_id="t", user_id="u"))
    assert "--allow-private-ips" in str(refused.value)
