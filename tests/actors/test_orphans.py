"""No orphans: when the program that started Flora ends, whichever way, every Flora process it
started ends within 10 s and every port they listened on is closed.

The program is tests/support/embedder.py: a plain ``start_flora`` on the real
``multiprocTCPBase`` with no signal handler of its own, the deterministic fake model (so no
model host), started in a process of its own. Once Flora answered it, the program is
SIGKILLed, SIGTERMed, ended by an uncaught exception, crashed (SIGSEGV) or simply returns,
and the test waits until no process of its family is left: the processes carrying the
environment mark the test started it with (tests/support/flora_process.py), which every
process forked from it keeps, the double-forked Thespian admin and its actors included,
like the suite's own ``FLORA_TEST_SUITE`` (tests/conftest.py) but for this program only. Its
ports are the listening sockets those processes held, told apart by socket inode, so that
another program that happens to bind the same port number meanwhile does not count.

The model host case runs the packaged model (marked ``real_model``; skipped where it is
not assembled): the host is the program's own child, and must go too.

A node started on purpose as a daemon (a worker launched in the background by a program that
exits at once) keeps working: its actors follow the node's own program, not whoever started
it, and killing that program takes its actors and nobody else's.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from agents.actor_system import free_port
from common.processes import alive, listening_sockets, socket_inodes, stat
from tests.actors.test_restart_recovery import config as fake_config
from tests.actors.test_nodes import SLOW_S, node_config, say
from tests.actors.test_stops import read_line_until, wait_for
from tests.api.conftest import REPO, start_server, stop_server
from tests.support.flora_process import end_marked, marked_env, marked_pids, wait_gone

pytestmark = pytest.mark.timeout(240)

GONE_WITHIN_S = 10.0


def start_embedder(config: dict, tmp_path: Path, *args: str) -> tuple[subprocess.Popen, str]:
    (tmp_path / "config.json").write_text(json.dumps(config))
    env, mark = marked_env({**os.environ, "PYTHONPATH": str(REPO)})
    process = subprocess.Popen([sys.executable, "-m", "tests.support.embedder", str(tmp_path / "config.json"), *args],
                               cwd=REPO, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, text=True)
    return process, mark


def family_sockets(mark: str) -> dict[int, tuple[str, int]]:
    """The listening sockets of the family's processes: inode -> (address, port)."""
    listening = listening_sockets()
    return {inode: listening[inode] for pid in marked_pids(mark) for inode in socket_inodes(pid)
            if inode in listening}


def end_it(process: subprocess.Popen, how: str) -> None:
    if how in ("SIGKILL", "SIGTERM"):
        process.send_signal(getattr(signal, how))
    else:
        process.stdin.write(how + "\n")
        process.stdin.flush()


EXIT_STATUS = {"SIGKILL": -signal.SIGKILL, "SIGTERM": -signal.SIGTERM, "raise": 1, "segfault": -signal.SIGSEGV,
               "return": 0}


@pytest.mark.parametrize("how", list(EXIT_STATUS))
def test_every_process_and_port_goes_with_the_program_that_started_flora(tmp_path, how):
    process, mark = start_embedder(fake_config(tmp_path), tmp_path)
    try:
        read_line_until(process, "READY")  # Flora answered a question
        before = marked_pids(mark)
        sockets = family_sockets(mark)
        # the program, Thespian's admin and logger, router, agent, interaction, loop scheduler, workers
        assert len(before) >= 7, before
        assert len(sockets) >= 6, sockets
        started = time.monotonic()
        end_it(process, how)
        took = wait_gone(mark, GONE_WITHIN_S)
        wait_for(lambda: not set(sockets) & set(listening_sockets()), GONE_WITHIN_S - (time.monotonic() - started),
                 f"the ports {sorted(p for _, p in sockets.values())} close")
        assert process.wait(timeout=5) == EXIT_STATUS[how]
        print(f"{how}: {len(before)} processes and {len(sockets)} ports gone after {took:.2f} s")
    finally:
        end_marked(mark)


def test_main_py_killed_with_9_takes_every_process_and_port_with_it(tmp_path):
    server = start_server(tmp_path / "api")  # python main.py --api, answering /ready
    try:
        before = marked_pids(server.mark)
        sockets = family_sockets(server.mark)
        assert len(before) >= 7 and len(sockets) >= 6, (before, sockets)
        server.process.kill()
        took = wait_gone(server.mark, GONE_WITHIN_S)
        wait_for(lambda: not set(sockets) & set(listening_sockets()), GONE_WITHIN_S, "the ports close")
        print(f"main.py --api, SIGKILL: {len(before)} processes and {len(sockets)} ports gone after {took:.2f} s")
    finally:
        stop_server(server)


@pytest.mark.real_model
@pytest.mark.timeout(900)
def test_the_model_host_goes_with_the_program_that_started_flora(tmp_path):
    pytest.importorskip("llama_cpp", reason="llama-cpp-python not installed (scripts/install_llm.sh)")
    from capabilities.llm.models import DEFAULT_UNDERSTANDING_MODEL, model_path

    model = model_path(DEFAULT_UNDERSTANDING_MODEL, REPO / "data")  # the smaller packaged model starts fastest
    if not model.is_file():
        pytest.skip(f"{model} is not installed (scripts/install_llm.sh)")
    config = {**fake_config(tmp_path),
              "llm": {"backend": "local", "model_path": str(model), "understanding_model": "", "n_ctx": 1024,
                      "n_threads": 1}}
    process, mark = start_embedder(config, tmp_path, "--no-ask")  # READY once the host answers
    try:
        read_line_until(process, "READY", within_s=600)
        hosts = [pid for pid in marked_pids(mark) if (stat(pid) or ("", 0, 0))[1] == process.pid]
        assert hosts, "no model host among the program's children"
        process.send_signal(signal.SIGKILL)  # while the host warms up: it is busy generating
        took = wait_gone(mark, GONE_WITHIN_S)
        print(f"SIGKILL with a model host: every process gone after {took:.2f} s")
        for host in hosts:  # adopted by the suite (tests/conftest.py), in its process group
            try:
                os.waitpid(host, os.WNOHANG)
            except ChildProcessError:
                pass
    finally:
        end_marked(mark)


# what nohup, a service manager or a container's entry point do: start the node in a session
# of its own, in the background, and go away
LAUNCH = """
import subprocess, sys
python, config, log = sys.argv[1:]
node = subprocess.Popen([python, "main.py", "--worker", "--config", config], stdin=subprocess.DEVNULL,
                        stdout=open(log, "wb"), stderr=subprocess.STDOUT, start_new_session=True)
print(node.pid)
"""


@pytest.mark.timeout(600)  # a worker node's start on a loaded machine
def test_a_node_started_as_a_daemon_outlives_its_launcher_and_takes_only_its_own_actors_with_it(tmp_path,
                                                                                              redis_prefix):
    leader = free_port()
    config = node_config(redis_prefix, "F", leader, leader, execution=False)  # its ExecutionActors go to W
    config["actors"]["ask_timeout_s"] = SLOW_S
    front = start_server(tmp_path / "front", extra=config)
    env, mark = marked_env({**os.environ, "PYTHONPATH": str(REPO)})
    try:
        (tmp_path / "worker.json").write_text(json.dumps(node_config(redis_prefix, "W", free_port(), leader)))
        log = tmp_path / "worker.log"
        launcher = subprocess.run([sys.executable, "-c", LAUNCH, sys.executable, str(tmp_path / "worker.json"),
                                   str(log)], cwd=REPO, env=env, capture_output=True, text=True, timeout=60)
        worker = int(launcher.stdout)  # the launcher has exited: the node has no parent of its own to follow
        wait_for(lambda: "joined" in log.read_text(errors="replace"), SLOW_S, "the worker node joins")

        reply = say(front, "daemon_user", "add numbers a=2 b=5", SLOW_S)
        assert reply["message_type"] == "task_completed", reply
        with front.client() as client:
            assert client.get(f"/v1/tasks/{reply['task_id']}", params={"user_id": "daemon_user"}).json()[
                "meta"]["node"] == "W"
        workers = marked_pids(mark)  # the node, its admin and logger, the ExecutionActors placed on it
        assert worker in workers and len(workers) >= 4, workers
        fronts = marked_pids(front.mark)

        os.kill(worker, signal.SIGKILL)
        took = wait_gone(mark, GONE_WITHIN_S)
        assert all(alive(pid) for pid in fronts), "the front node's processes follow their own program"
        with front.client() as client:
            assert client.get("/ready").status_code == 200
        print(f"daemon worker node: {len(workers)} processes gone {took:.2f} s after SIGKILL; the front node runs on")
    finally:
        end_marked(mark)
        stop_server(front)
