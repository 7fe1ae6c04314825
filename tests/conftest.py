"""Test-wide switches.

- Unit and actor tests never touch the real model: loading it or starting the model host
  fails loudly unless the test is marked ``real_model``.
- ``FLORA_REQUIRE_REAL_MODEL=1`` (set by scripts/test.sh) turns a real-model test that
  would skip for a missing install into a failure, so CI cannot pass without the model.
- Tests that open embedded Chroma in this process run after all the others. Chroma's native
  runtime does not survive a fork, and Thespian forks actor processes from this one: a
  MemoryActor forked after Chroma was opened here would find it unusable (the store refuses
  it, see capabilities/memory/store.py). Such tests are the ones on ``simpleSystemBase``
  (their actors live in this process), those under tests/memory/, and any marked
  ``chroma_here``; a test that opens it here without being one of them fails, naming the marker.
- No process the suite starts may outlive it. Every process started from here carries
  ``FLORA_TEST_SUITE`` in its environment, and on Linux this process adopts the orphans of
  its descendants (a child subreaper: Thespian's admin double-forks away from whoever started
  it), so at the end both lookups find whatever is left; it is killed and the run fails.
"""

from __future__ import annotations

import ctypes
import os
import sys
import uuid

import pytest
import redis

REDIS_URL = os.environ.get("FLORA_TEST_REDIS_URL", "redis://127.0.0.1:6379/0")
SUITE_ENV = "FLORA_TEST_SUITE"
_PR_SET_CHILD_SUBREAPER = 36


def pytest_sessionstart(session):
    os.environ[SUITE_ENV] = uuid.uuid4().hex  # inherited by every process the tests start
    if sys.platform.startswith("linux"):
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)


def _chroma_order(item) -> int:
    """0: may fork actor processes; 1: opens embedded Chroma here (marked, or under
    tests/memory/); 2: runs a module's Flora on simpleSystemBase. The last two run after the
    first; the marked ones before the module-scoped simpleSystemBase Floras, since two
    simpleSystemBase Floras cannot run in one process at once."""
    params = getattr(getattr(item, "callspec", None), "params", {})
    if "simpleSystemBase" in params.values():
        return 2
    if item.get_closest_marker("chroma_here") is not None or "memory" in item.path.relative_to(
            item.config.rootpath).parts[1:2]:
        return 1
    return 0


@pytest.hookimpl(trylast=True)  # after pytest grouped the items by their fixtures' parameters
def pytest_collection_modifyitems(session, config, items):
    order = {id(item): _chroma_order(item) for item in items}
    for item in items:
        if order[id(item)]:
            item.add_marker("chroma_here")
    items.sort(key=lambda item: order[id(item)])  # stable: the order within each part is kept


@pytest.fixture(autouse=True)
def _chroma_opened_only_where_ordered(request):
    from capabilities.memory.store import embedded_opened_in

    before = embedded_opened_in()
    yield
    if before is None and embedded_opened_in() == os.getpid() and not request.node.get_closest_marker("chroma_here"):
        pytest.fail("this test opened embedded Chroma in the test process, so the actor processes forked by the "
                    "tests after it could not use it: mark it @pytest.mark.chroma_here (it then runs after them)",
                    pytrace=False)


@pytest.fixture(autouse=True)
def _reap_adopted_orphans():
    """Thespian admins and actors whose parents died were adopted by this process (the
    subreaper); reap those that ended, so they do not pile up as zombies. Only processes of
    another process group: the tests' own children (subprocess.Popen) are theirs to wait for."""
    yield
    if not sys.platform.startswith("linux"):
        return
    from common.processes import PROC, stat

    for entry in PROC.iterdir():
        if not entry.name.isdigit():
            continue
        info = stat(int(entry.name))
        if info and info[0] == "Z" and info[1] == os.getpid() and info[2] != os.getpgrp():
            try:
                os.waitpid(int(entry.name), os.WNOHANG)
            except ChildProcessError:
                pass  # reaped meanwhile


@pytest.hookimpl(trylast=True)  # after the session's fixtures were torn down
def pytest_sessionfinish(session, exitstatus):
    if not sys.platform.startswith("linux") or SUITE_ENV not in os.environ:
        return
    from common.processes import descendants
    from tests.support.flora_process import end_pids, pids_with_env

    left = sorted(pid for pid in set(pids_with_env(SUITE_ENV, os.environ[SUITE_ENV])) | set(descendants(os.getpid()))
                  if not _multiprocessing_helper(pid))
    if not left:
        return
    described = [f"{pid}: {_cmdline(pid)}" for pid in left]
    end_pids(left, grace_s=2.0)
    session.exitstatus = pytest.ExitCode.TESTS_FAILED
    terminal = session.config.pluginmanager.get_plugin("terminalreporter")
    message = (f"{len(left)} process(es) started by the tests outlived them (now killed):\n  "
               + "\n  ".join(described))
    if terminal is not None:
        terminal.write_line("")
        terminal.write_sep("=", "processes left behind", red=True)
        terminal.write_line(message, red=True)
    else:
        print(message, file=sys.stderr)


def _multiprocessing_helper(pid: int) -> bool:
    """The resource tracker (or fork server) that multiprocessing keeps for this process: it
    ends when this process does, and is not a test's process."""
    return _cmdline(pid).split(" -c ")[-1].startswith(("from multiprocessing.resource_tracker import",
                                                       "from multiprocessing.forkserver import"))


def _cmdline(pid: int) -> str:
    try:
        return open(f"/proc/{pid}/cmdline", "rb").read().replace(b"\0", b" ").decode(errors="replace")[:160]
    except OSError:
        return "(gone)"


@pytest.fixture(autouse=True)
def _no_real_model(request, monkeypatch):
    if request.node.get_closest_marker("real_model"):
        yield
        return
    from capabilities.llm.local import LocalLlamaLLM
    from capabilities.llm.model_host import ModelHost

    def refuse(*_args, **_kwargs):
        raise AssertionError("a unit test tried to use the real model; mark it real_model or use a fake LLM")

    real_start = ModelHost.start

    def start_a_stand_in_only(host, *args, **kwargs):  # a host running a test's own server is no model
        if host.server is None:
            refuse()
        return real_start(host, *args, **kwargs)

    monkeypatch.setattr(LocalLlamaLLM, "_loaded", refuse)
    monkeypatch.setattr(ModelHost, "start", start_a_stand_in_only)
    yield


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    if (os.environ.get("FLORA_REQUIRE_REAL_MODEL") == "1" and report.skipped
            and item.get_closest_marker("real_model")):
        report.outcome = "failed"
        report.longrepr = f"real-model test skipped but FLORA_REQUIRE_REAL_MODEL=1: {report.longrepr}"


@pytest.fixture(autouse=True)
def _default_flora_logging():
    """start_flora configures the ``flora`` logger of the process (its own handler, no
    propagation); put it back to the default before each test, so caplog sees flora records."""
    import logging

    logger = logging.getLogger("flora")
    logger.handlers.clear()
    logger.propagate = True
    logger.setLevel(logging.NOTSET)
    yield


@pytest.fixture
def redis_prefix():
    """A key prefix no other test uses; its keys are deleted after the test."""
    client = redis.Redis.from_url(REDIS_URL, decode_responses=True)
    try:
        client.ping()
    except redis.ConnectionError as exc:
        pytest.fail(f"Redis at {REDIS_URL} is unreachable ({exc}); the redis task store is tested against a "
                    "real Redis", pytrace=False)
    prefix = f"flora-test-{uuid.uuid4().hex[:12]}"
    yield prefix
    leftover = list(client.scan_iter(f"{prefix}:*", count=1000))
    if leftover:
        client.delete(*leftover)
    client.close()
