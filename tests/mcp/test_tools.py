"""MCP tools through the registry, in this process, against real servers: mcp-server-time
over stdio, and the SDK test server over stdio and streamable HTTP."""

from __future__ import annotations

import json
import os
import signal
import sys
import threading

import pytest

from capabilities.base import CapabilityError, ExecutionContext
from capabilities.mcp import catalogue
from capabilities.mcp.tools import MCPTools
from config import load_config
from init_plugins import build_registry
from tests.mcp.conftest import config, server_pids, servers, start_http_server, stop_http_server
from tests.support.waiting import wait_until

pytestmark = pytest.mark.timeout(120)


def context(store=None) -> ExecutionContext:
    return ExecutionContext(task_id="t1", user_id="u1", store=store)


@pytest.fixture(scope="module")
def registry(tmp_path_factory, http_server):
    flora_config = load_config(config(tmp_path_factory.mktemp("mcp"), http_server.url, call_timeout_s=2), env={})
    yield build_registry(flora_config)


def test_each_servers_tools_are_registered_as_server_dot_tool_with_their_input_schemas(registry, http_server):
    names = {spec.name for spec in registry.executables()}
    assert {"time.get_current_time", "time.convert_time"} <= names
    assert {"notes.greet", "notes.fail", "notes.slow", "notes.delete_note", "notes.note_count"} <= names
    assert {"local.greet", "local.crash"} <= names
    now = registry.get_executable("time.get_current_time")
    assert now.description == "Get current time in a specific timezone"
    assert now.required == ["timezone"] and now.properties["timezone"]["type"] == "string"
    assert "time" in now.keywords and "current" in now.keywords
    greet = registry.get_executable("notes.greet")
    assert greet.required == ["name"] and greet.describe_parameter("name") == "Name"
    listed = json.loads(catalogue.catalogue_path(load_config(
        config(registry.get_capability("mcp")._config.data_dir, http_server.url), env={})).read_text())
    assert listed["servers"]["notes"]["tools"][0]["input_schema"] == greet.parameters


def test_approval_follows_the_tools_annotations(registry):
    assert registry.get_executable("notes.delete_note").needs_approval is True  # destructiveHint
    assert registry.get_executable("local.crash").needs_approval is True  # no annotations: not read-only
    assert registry.get_executable("notes.greet").needs_approval is False  # readOnlyHint
    assert registry.get_executable("time.get_current_time").needs_approval is False


def test_a_call_through_the_registry_returns_the_tools_text_and_structured_content(registry):
    result = registry.get_executable("time.get_current_time").invoke({"timezone": "Europe/Warsaw"}, context())
    assert result["structured"]["timezone"] == "Europe/Warsaw"
    assert result["structured"]["datetime"][:4].isdigit()
    assert "Europe/Warsaw" in result["text"] and result["message"] == result["text"]
    assert registry.get_executable("notes.greet").invoke({"name": "Ada"}, context())["text"] == "Hello, Ada!"


def test_a_tool_whose_name_a_capability_cannot_hold_is_called_by_its_own_name(registry):
    result = registry.get_executable("notes.note_count").invoke({}, context())
    assert result["tool"] == "note-count" and json.loads(result["text"]) == {"count": 2}


def test_an_is_error_result_fails_with_the_tools_own_text(registry):
    with pytest.raises(CapabilityError) as failed:
        registry.get_executable("notes.fail").invoke({"reason": "the ink ran out"}, context())
    assert "cannot do that: the ink ran out" in str(failed.value)
    assert failed.value.retryable is False


def test_a_slow_tool_times_out_with_a_clear_message_and_the_server_keeps_serving(registry):
    with pytest.raises(CapabilityError) as slow:
        registry.get_executable("notes.slow").invoke({"seconds": 30}, context())
    assert slow.value.error_type == "timeout" and slow.value.retryable
    assert "notes did not answer slow within 2 s" in str(slow.value)
    assert registry.get_executable("notes.greet").invoke({"name": "again"}, context())["text"] == "Hello, again!"


class CancellingStore:
    """A TaskStore's one question here, get_task: the task reads cancelled once ``cancel`` is set."""

    def __init__(self):
        self.cancel = threading.Event()

    def get_task(self, tenant_id, task_id):
        return type("Task", (), {"state": "cancelled" if self.cancel.is_set() else "running"})()


def test_a_cancelled_task_stops_waiting_for_its_tool(tmp_path, http_server):
    registry = build_registry(load_config(config(tmp_path, http_server.url, call_timeout_s=60), env={}))
    store = CancellingStore()
    threading.Timer(0.5, store.cancel.set).start()
    with pytest.raises(CapabilityError) as stopped:
        registry.get_executable("notes.slow").invoke({"seconds": 30}, context(store))
    assert stopped.value.error_type == "cancelled"


def test_a_server_killed_between_calls_is_started_again_on_the_next_call(registry, mark):
    now = registry.get_executable("time.get_current_time")
    now.invoke({"timezone": "UTC"}, context())
    [first] = wait_until(lambda: server_pids(mark, "mcp_server_time"), 10, "the time server runs")
    os.kill(first, signal.SIGKILL)
    wait_until(lambda: first not in server_pids(mark, "mcp_server_time"), 10, "the killed server is gone")
    result = now.invoke({"timezone": "Asia/Tokyo"}, context())
    assert result["structured"]["timezone"] == "Asia/Tokyo"
    assert [pid for pid in server_pids(mark, "mcp_server_time") if pid != first]


def test_a_server_that_crashes_during_a_call_is_a_retryable_failure_then_restarted(registry):
    with pytest.raises(CapabilityError) as crashed:
        registry.get_executable("local.crash").invoke({}, context())
    assert crashed.value.error_type == "unavailable" and crashed.value.retryable
    assert "local stopped during crash" in str(crashed.value)
    assert registry.get_executable("local.greet").invoke({"name": "Bo"}, context())["text"] == "Hello, Bo!"


def test_an_http_server_that_went_away_is_a_retryable_error_and_is_reached_again_when_back(tmp_path):
    server = start_http_server()
    flora_config = load_config(config(tmp_path, server.url, servers_={"notes": servers(server.url)["notes"]}),
                               env={})
    registry = build_registry(flora_config)
    greet = registry.get_executable("notes.greet")
    assert greet.invoke({"name": "A"}, context())["text"] == "Hello, A!"
    stop_http_server(server)
    with pytest.raises(CapabilityError) as gone:
        greet.invoke({"name": "B"}, context())
    assert gone.value.error_type == "unavailable" and gone.value.retryable and "could not be reached" in str(gone.value)
    back = start_http_server(port=int(server.url.rsplit(":", 1)[1].split("/")[0]))
    try:
        assert greet.invoke({"name": "C"}, context())["text"] == "Hello, C!"
    finally:
        stop_http_server(back)


def test_the_catalogue_is_listed_once_and_listed_again_when_the_servers_change(tmp_path, mark):
    flora_config = load_config(config(tmp_path, servers_={"time": servers()["time"]}), env={})
    build_registry(flora_config)
    path = catalogue.catalogue_path(flora_config)
    listed_at = json.loads(path.read_text())["listed_at"]
    build_registry(flora_config)  # another process's registry: registered from the file
    assert json.loads(path.read_text())["listed_at"] == listed_at
    changed = load_config(config(tmp_path, servers_={"clock": servers()["time"]}), env={})
    registry = build_registry(changed)
    assert registry.has_executable("clock.get_current_time") and not registry.has_executable("time.get_current_time")
    assert json.loads(path.read_text())["listed_at"] > listed_at


def test_a_server_that_cannot_be_listed_gives_no_tools_and_the_rest_still_register(tmp_path):
    broken = {"command": sys.executable, "args": ["-c", "import sys; sys.exit(2)"]}
    flora_config = load_config(config(tmp_path, servers_={"broken": broken, "time": servers()["time"]},
                                      list_timeout_s=10), env={})
    registry = build_registry(flora_config)
    assert registry.has_executable("time.get_current_time")
    assert not [s for s in registry.executables() if s.name.startswith("broken.")]
    entry = json.loads(catalogue.catalogue_path(flora_config).read_text())["servers"]["broken"]
    assert entry["tools"] == [] and "broken" in entry["error"] and "could not be started" in entry["error"]


def test_a_tool_with_an_invalid_input_schema_is_skipped_with_its_reason(tmp_path):
    flora_config = load_config(config(tmp_path, servers_={"time": servers()["time"]}), env={})
    listed = {"servers": {"time": {"error": None, "tools": [
        {"name": "ok", "description": "fine", "input_schema": {"type": "object", "properties": {}}},
        {"name": "bad", "description": "", "input_schema": {"type": "object", "properties": {"x": {"type": 7}}}},
        {"name": "flat", "description": "", "input_schema": {"type": "string"}},
        {"name": "get_time", "description": "", "input_schema": {"type": "object"}},
        {"name": "get-time", "description": "", "input_schema": {"type": "object"}}]}}}
    tools = MCPTools(flora_config, listed)
    assert set(tools.names()) == {"time.ok", "time.get_time"} and tools.tools["time.get_time"].tool == "get_time"
    assert "Draft 2020-12" in tools.skipped["time.bad"]
    assert "type object" in tools.skipped["time.flat"]
    assert "becomes time.get_time" in tools.skipped["time.get-time"]


def test_a_server_that_never_answers_is_given_up_at_the_list_timeout_and_ended(tmp_path, mark):
    import time

    silent = {"command": sys.executable, "args": ["-c", "import time; time.sleep(120)  # mcp_silent_server"],
              "env": ["MCP_TEST_MARK"]}
    flora_config = load_config(config(tmp_path, servers_={"silent": silent}, list_timeout_s=2), env={})
    started = time.monotonic()
    registry = build_registry(flora_config)
    assert time.monotonic() - started < 10
    assert not [s for s in registry.executables() if s.name.startswith("silent.")]
    entry = json.loads(catalogue.catalogue_path(flora_config).read_text())["servers"]["silent"]
    assert "within 2 s" in entry["error"]
    wait_until(lambda: server_pids(mark, "import time; time.sleep(120)  # mcp_silent_server") == [], 10,
             "the silent server is ended")


def test_the_warehouse_server_of_the_agent_bench_answers_what_only_it_knows(tmp_path):
    from bench.agent_tasks import STOCK_SERVER

    registry = build_registry(load_config(config(tmp_path, servers_={"stock": {**STOCK_SERVER, "env": ["MCP_TEST_MARK"]}}),
                                          env={}))
    level = registry.get_executable("stock.stock_level")
    assert level.needs_approval is False and level.required == ["item"]
    assert json.loads(level.invoke({"item": "Blue Widgets"}, context())["text"])["on_hand"] == 137
    assert json.loads(level.invoke({"item": "螺丝刀"}, context())["text"])["aisle"] == "B2"
    with pytest.raises(CapabilityError, match="no item 'anvil'"):
        level.invoke({"item": "anvil"}, context())
