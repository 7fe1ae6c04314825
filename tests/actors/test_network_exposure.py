"""No actor port open to the network.

A running Flora (``python main.py --api`` on multiprocTCPBase) is looked at from the outside:
which addresses its processes listen on (``/proc/net/tcp``), and what a second host on a
private network can do to them. The second host is a network namespace of its own joined to
this one by a veth pair whose addresses (10.200.x.x) exist only on that pair.
"""

from __future__ import annotations

import json
import random
import shutil
import socket
import subprocess
import sys
import time
import uuid
from dataclasses import dataclass

import pytest

from common.processes import listening_addresses
from tests.api.conftest import start_server, stop_server
from tests.support.flora_process import marked_pids

pytestmark = pytest.mark.timeout(240)

# run inside the other host: connect to each port and send one Thespian frame ("<length>>" and a
# pickle) whose unpickling creates the marker directory
SEND_PICKLE = r"""
import json, os, pickle, socket, sys
host, ports, marker = json.loads(sys.argv[1])
class Plant:
    def __reduce__(self):
        return (os.mkdir, (marker,))
payload = pickle.dumps(Plant())
frame = b"%d>" % len(payload) + payload
out = {}
for port in ports:
    try:
        with socket.create_connection((host, port), timeout=3) as sock:
            sock.sendall(frame)
            sock.shutdown(socket.SHUT_WR)
            sock.settimeout(1)
            try:
                sock.recv(1)
            except OSError:
                pass
        out[port] = "sent"
    except OSError as exc:
        out[port] = type(exc).__name__
print(json.dumps(out))
"""


@dataclass
class PeerHost:
    namespace: str
    here: str  # this host's address on the pair
    there: str  # the other host's address

    def send_pickles(self, ports: list[int], marker: str, host: str | None = None) -> dict[int, str]:
        done = subprocess.run(["ip", "netns", "exec", self.namespace, sys.executable, "-c", SEND_PICKLE,
                               json.dumps([host or self.here, ports, marker])],
                              capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr
        return {int(port): outcome for port, outcome in json.loads(done.stdout).items()}


def _ip(*args: str, check: bool = True) -> subprocess.CompletedProcess:
    return subprocess.run(["ip", *args], capture_output=True, text=True, check=check, timeout=30)


@pytest.fixture
def peer_host():
    if not sys.platform.startswith("linux") or shutil.which("ip") is None:
        pytest.skip("needs Linux and iproute2 (ip netns)")
    suffix = uuid.uuid4().hex[:6]
    namespace, here_if, there_if = f"flora-peer-{suffix}", f"flh{suffix}", f"flp{suffix}"
    added = _ip("netns", "add", namespace, check=False)
    if added.returncode != 0:
        pytest.skip(f"creating a network namespace is not permitted here (ip netns add: {added.stderr.strip()})")
    octet = random.randint(1, 254)
    here, there = f"10.200.{octet}.1", f"10.200.{octet}.2"
    try:
        _ip("link", "add", here_if, "type", "veth", "peer", "name", there_if)
        _ip("link", "set", there_if, "netns", namespace)
        _ip("addr", "add", f"{here}/24", "dev", here_if)
        _ip("link", "set", here_if, "up")
        _ip("netns", "exec", namespace, "ip", "addr", "add", f"{there}/24", "dev", there_if)
        _ip("netns", "exec", namespace, "ip", "link", "set", there_if, "up")
        _ip("netns", "exec", namespace, "ip", "link", "set", "lo", "up")
        yield PeerHost(namespace, here, there)
    finally:
        _ip("link", "del", here_if, check=False)
        _ip("netns", "del", namespace, check=False)


def flora_listening(server) -> dict[int, list[tuple[str, int]]]:
    """What each process of the server's family listens on (its admin, logger and actors)."""
    pids = marked_pids(server.mark)
    assert len(pids) >= 5, f"expected the main process, the admin, the logger and actors, found {pids}"
    return listening_addresses(pids)


def actor_ports(server) -> list[int]:
    http_port = int(server.url.rsplit(":", 1)[1])
    return sorted({port for pairs in flora_listening(server).values() for _, port in pairs} - {http_port})


def test_every_flora_process_listens_on_loopback_only_by_default(tmp_path):
    server = start_server(tmp_path / "flora")
    try:
        listening = flora_listening(server)
        addresses = {host for pairs in listening.values() for host, _ in pairs}
        assert addresses == {"127.0.0.1"}, listening
        assert len(actor_ports(server)) >= 5  # the admin, the logger, the actors: all of them checked
    finally:
        stop_server(server)


def test_a_pickle_from_another_host_neither_connects_nor_runs_while_it_would_on_every_interface(
        tmp_path, peer_host):
    # the other host does reach this one: a listener on every interface accepts it
    with socket.socket() as probe:
        probe.bind(("0.0.0.0", 0))
        probe.listen()
        reached = peer_host.send_pickles([probe.getsockname()[1]], str(tmp_path / "unused"))
        assert list(reached.values()) == ["sent"]

    marker = tmp_path / "planted"
    server = start_server(tmp_path / "default")
    try:
        ports = actor_ports(server)
        outcomes = peer_host.send_pickles(ports, str(marker))
        assert set(outcomes.values()) == {"ConnectionRefusedError"}, outcomes
        assert not marker.exists()
        with server.client() as client:  # Flora still answers
            assert client.post("/v1/messages", json={"user_id": "u", "content": "hello"}).status_code == 200
    finally:
        stop_server(server)

    # the same frames against actors bound to every interface (an operator's explicit 0.0.0.0)
    # do run: what the default prevents
    exposed = start_server(tmp_path / "exposed", extra={"actors": {"system_base": "multiprocTCPBase",
                                                                   "ask_timeout_s": 20, "bind_address": "0.0.0.0"}})
    try:
        assert "actors.bind_address is 0.0.0.0" in (tmp_path / "exposed" / "server.log").read_text()
        outcomes = peer_host.send_pickles(actor_ports(exposed), str(marker))
        assert "sent" in outcomes.values()
        deadline = time.monotonic() + 10
        while not marker.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert marker.exists(), "the exposed actor ports should have unpickled the frame"
    finally:
        stop_server(exposed)


def test_with_a_private_bind_address_flora_listens_there_only_and_still_works(tmp_path, peer_host):
    server = start_server(tmp_path / "private", extra={"actors": {"system_base": "multiprocTCPBase",
                                                                  "ask_timeout_s": 20,
                                                                  "bind_address": peer_host.here}})
    try:
        http_port = int(server.url.rsplit(":", 1)[1])
        listening = flora_listening(server)
        actors = {host for pairs in listening.values() for host, port in pairs if port != http_port}
        assert actors == {peer_host.here}, listening
        with server.client() as client:  # the actors talk to each other over that address
            reply = client.post("/v1/messages", json={"user_id": "u", "content": "add numbers a=2 b=3"}).json()
        assert reply["message_type"] == "task_completed" and reply["result"] == {"sum": 5}
    finally:
        stop_server(server)
