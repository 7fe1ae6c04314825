"""Bad MCP configuration stops Flora's start with a ConfigError that names the key."""

from __future__ import annotations

import sys

import pytest

import main
from config import ConfigError, load_config
from tests.mcp.conftest import config, servers


@pytest.mark.parametrize("server, key", [
    ({"command": ""}, "mcp.servers.s"),
    ({"url": "http://127.0.0.1:9/mcp"}, "mcp.servers.s"),  # a URL needs transport: streamable_http
    ({"url": "ftp://host/mcp", "transport": "streamable_http"}, "mcp.servers.s.url"),
    ({"command": "x", "url": "http://h/mcp", "transport": "streamable_http"}, "mcp.servers.s"),
    ({"command": "x", "env": {"TOKEN": "sk-secret value"}}, "mcp.servers.s.env"),
    ({"url": "http://h/mcp", "transport": "streamable_http", "headers": {"Authorization": "Bearer sk-1"}},
     "mcp.servers.s.headers"),
    ({"command": "x", "approve": "sometimes"}, "mcp.servers.s.approve"),
    ({"command": "x", "call_timeout_s": 0}, "mcp.servers.s.call_timeout_s"),
    ({"command": "x", "colour": "blue"}, "mcp.servers.s.colour: unknown configuration key"),
])
def test_a_bad_server_entry_names_its_key(server, key):
    with pytest.raises(ConfigError, match=key.replace(".", r"\.")):
        load_config({"mcp": {"servers": {"s": server}}}, env={})


def test_a_server_name_that_cannot_start_a_capability_name_is_refused():
    with pytest.raises(ConfigError, match=r"mcp\.servers: .*'my-server'"):
        load_config({"mcp": {"servers": {"my-server": {"command": "x"}}}}, env={})


def test_mcp_settings_come_from_the_environment_too():
    loaded = load_config({}, env={"FLORA_MCP__CALL_TIMEOUT_S": "5",
                                  "FLORA_MCP__SERVERS": '{"time": {"command": "python"}}'})
    assert loaded.mcp.call_timeout_s == 5 and loaded.mcp.servers["time"].command == "python"


@pytest.mark.parametrize("server, key", [
    ({"command": sys.executable, "env": ["FLORA_TEST_UNSET_VARIABLE"]}, r"mcp\.servers\.s\.env: environment "
                                                                          r"variable FLORA_TEST_UNSET_VARIABLE"),
    ({"url": "http://127.0.0.1:9/mcp", "transport": "streamable_http",
      "headers": {"Authorization": "FLORA_TEST_UNSET_VARIABLE"}}, r"mcp\.servers\.s\.headers\.Authorization"),
    ({"command": "flora-no-such-mcp-server"}, r"mcp\.servers\.s\.command: 'flora-no-such-mcp-server' is not"),
    ({"command": sys.executable, "cwd": "/no/such/dir"}, r"mcp\.servers\.s\.cwd"),
])
def test_flora_does_not_start_when_a_server_cannot_be_resolved(tmp_path, server, key):
    with pytest.raises(ConfigError, match=key):
        main.start_flora(config(tmp_path, servers_={"s": server}) | {"llm": {"backend": "function",
                                                                             "function": "tests.support.fake_llm:respond"}})


def test_a_disabled_server_or_a_disabled_mcp_section_lists_nothing(tmp_path):
    from init_plugins import build_registry

    off = build_registry(load_config(config(tmp_path, servers_={"time": {**servers()["time"], "enabled": False}}),
                                     env={}))
    assert not [s for s in off.executables() if s.name.startswith("time.")]
    section_off = build_registry(load_config(config(tmp_path / "off", enabled=False), env={}))
    assert "mcp" not in section_off and not (tmp_path / "off" / "mcp" / "catalogue.json").exists()
