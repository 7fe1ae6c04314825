"""actors.bind_address: the configuration rules, the Thespian version check, and where a
patched Thespian address binds (no actor system needed)."""

from __future__ import annotations

import os
import signal
import socket

import pytest

from common import actor_network
from common.processes import StopSignals, listening_addresses
from config import ConfigError, load_config


def test_bind_address_defaults_to_loopback_and_names_the_key_when_wrong():
    assert load_config({}, env={}).actors.bind_address == "127.0.0.1"
    assert load_config({}, env={"FLORA_ACTORS__BIND_ADDRESS": "10.0.0.7"}).actors.bind_address == "10.0.0.7"
    assert load_config({"actors": {"bind_address": "worker-1"}}, env={}).actors.bind_address == "worker-1"
    with pytest.raises(ConfigError, match="actors.bind_address"):
        load_config({"actors": {"bind_address": "10.0.0.300"}}, env={})
    with pytest.raises(ConfigError, match="bind_address"):
        load_config({"actors": {"bind_address": "not an address"}}, env={})


def test_a_loopback_bind_address_with_a_remote_leader_is_refused():
    with pytest.raises(ConfigError, match="bind_address 127.0.0.1 is loopback but the convention leader is 10.1.2.3"):
        load_config({"store": {"backend": "redis"},
                     "actors": {"convention_address": "10.1.2.3:19700"}}, env={})
    load_config({"store": {"backend": "redis"},
                 "actors": {"convention_address": "10.1.2.3:19700", "bind_address": "10.1.2.4"}}, env={})


def test_another_thespian_version_refuses_to_start(monkeypatch):
    monkeypatch.setattr(actor_network.metadata, "version", lambda _name: "4.0.2")
    with pytest.raises(actor_network.UnsupportedThespian, match="written for Thespian 4.0.1"):
        actor_network.restrict_actor_sockets("127.0.0.1")


@pytest.fixture
def restore_binding():
    before_env, before_host = os.environ.get(actor_network.ADDRESS_ENV), actor_network._bind_host
    yield
    actor_network._bind_host = before_host
    if before_env is None:
        os.environ.pop(actor_network.ADDRESS_ENV, None)
    else:
        os.environ[actor_network.ADDRESS_ENV] = before_env


def test_an_external_thespian_address_binds_on_the_configured_address_not_every_interface(restore_binding):
    from thespian.system.transport.IPBase import TCPv4ActorAddress

    actor_network.restrict_actor_sockets("127.0.0.1")
    address = TCPv4ActorAddress(None, 0, external=True)
    assert address.bindname[0] == "127.0.0.1" and address.sockname[0] == "127.0.0.1"
    with socket.socket(*address.socketArgs) as sock:
        sock.bind(*address.bindArgs)
        sock.listen()
        assert listening_addresses([os.getpid()])[os.getpid()] == [("127.0.0.1", sock.getsockname()[1])]

    actor_network.restrict_actor_sockets("0.0.0.0")  # explicit: Thespian's own wildcard
    assert TCPv4ActorAddress(None, 0, external=True).bindname[0] == ""


def test_a_second_stop_signal_forces_and_a_forked_child_gets_the_default_action():
    calls = []
    signals = StopSignals(lambda sig: calls.append(("stop", sig)), lambda sig: calls.append(("force", sig)))
    signals.install()
    try:
        os.kill(os.getpid(), signal.SIGTERM)
        os.kill(os.getpid(), signal.SIGINT)
        assert calls == [("stop", signal.SIGTERM), ("force", signal.SIGINT)]
        pid = os.fork()
        if pid == 0:  # inherited handler: must not swallow the signal
            os.kill(os.getpid(), signal.SIGTERM)
            os._exit(0)  # not reached
        _, status = os.waitpid(pid, 0)
        assert os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGTERM
    finally:
        signals.uninstall()


def test_a_deferred_stop_signal_is_only_recorded_and_a_later_one_forces():
    calls = []
    signals = StopSignals(lambda sig: calls.append(("stop", sig)), lambda sig: calls.append(("force", sig)))
    signals.install()
    try:
        with signals.deferred():
            os.kill(os.getpid(), signal.SIGTERM)
            assert signals.stopping and calls == []
        os.kill(os.getpid(), signal.SIGTERM)
        assert calls == [("force", signal.SIGTERM)]
    finally:
        signals.uninstall()
