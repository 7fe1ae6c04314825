"""One model server per machine, shared by every actor process.

Thespian's multiprocess bases put actors in separate OS processes. If each
built a `LocalLlamaLLM`, each would load its own copy of the weights (0.5-1 GB
for the packaged models), pay the load time again, and run its own llama.cpp
thread pool fighting the others for the same cores. Instead the main process
starts a `ModelHost` (llama-cpp-python's bundled OpenAI-compatible server, run by
``model_server.py`` so that a stop signal ends it within seconds) and hands its `base_url` to the actors, which
talk to it through `OpenAICompatibleLLM(schema_mode="json_object")`. The
server serializes requests itself.

Flags passed beyond the obvious ones, each for a reason:

- ``--interrupt_requests False``: by default the server cuts a running stream
  short whenever another request arrives, which breaks sharing.
- ``--logits_all False``: the server defaults to keeping logits for every
  position (n_ctx x vocabulary floats, about 2.5 GB for Qwen at n_ctx 4096);
  nothing here asks for logprobs.
- ``--n_threads_batch``: otherwise prompt processing uses every core.
- no ``--cache``: the server already reuses the longest prefix shared with the
  previous prompt; its RAM cache saves the whole state after every call (hundreds
  of MB for these models), which made calls slower, not faster. Flora keeps each
  host on one kind of prompt instead (an understanding host and a chat host).
- no ``--chat_format``: without it the server renders prompts with the chat
  template stored in the GGUF, as `LocalLlamaLLM` does.

The server reads any environment variable named like one of its settings
(PORT, HOST, API_KEY, MODEL, ...), and PORT/HOST even override the command
line, so the child gets an environment with those names removed.

With ``idle_unload_s`` the server frees the model after that long without a request and loads
it again on the next one (see model_server.py); it writes its state to ``state_file``, which
`state()` and :func:`read_host_states` (for ``main.py --status``) read.

The child never outlives us: `stop()` terminates then kills it, an atexit hook
calls `stop()`, and on Linux the child is asked to receive SIGTERM when its
parent dies (which covers SIGKILL of the parent). That death signal is tied to
the thread that started the host, so start it from the main thread.

A host that dies after it started is started again (host_supervisor.py): ``down`` with the
reason meanwhile (``state()``, the state file, so ``/health`` and ``--status`` say it), on the
same port, with a bounded exponential backoff; ``restarts`` counts the times it came back.

Raises ModelHostError (an LLMError) when the server exits or does not answer
within `startup_timeout_s`; the message carries the tail of its log.
"""

from __future__ import annotations

import atexit
import ctypes
import json
import logging
import os
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Callable, Sequence

import httpx

from capabilities.llm.base import LLMError
from capabilities.llm.host_supervisor import DEFAULT_POLL_S, HostSupervisor, RestartBackoff, describe_exit

logger = logging.getLogger("flora.llm.model_host")

DEFAULT_STARTUP_TIMEOUT_S = 120.0
_STOP_GRACE_S = 5.0  # the server itself exits within model_server.HARD_EXIT_S of SIGTERM
_POLL_S = 0.25
_LOG_TAIL_CHARS = 2000
_PR_SET_PDEATHSIG = 1


class ModelHostError(LLMError):
    """The shared model server could not be started."""


class ModelHost:
    """Runs ``python -m llama_cpp.server`` for one GGUF on a free local port."""

    def __init__(
        self,
        model_path: str | os.PathLike[str],
        *,
        n_ctx: int = 4096,
        n_threads: int = 2,
        alias: str | None = None,
        startup_timeout_s: float = DEFAULT_STARTUP_TIMEOUT_S,
        idle_unload_s: float = 0.0,
        state_file: str | os.PathLike[str] | None = None,
        supervise: bool = True,
        backoff: RestartBackoff | None = None,
        poll_s: float = DEFAULT_POLL_S,
        server: Sequence[str] | None = None,
    ) -> None:
        """``supervise``: start the server again when it dies (``backoff``, looked at every
        ``poll_s``). ``server``: the program to run instead of model_server.py (a test's
        stand-in; it gets the same flags)."""
        self.model_path = Path(model_path)
        self.idle_unload_s = idle_unload_s
        self.state_file = Path(state_file) if state_file else None
        self.alias = alias or self.model_path.stem
        self._n_ctx = n_ctx
        self._n_threads = n_threads
        self._startup_timeout_s = startup_timeout_s
        self._process: subprocess.Popen[bytes] | None = None
        self._port: int | None = None
        self._log_path: Path | None = None
        self.startup_seconds: float | None = None
        self.server = list(server) if server else None
        self.restarts = 0  # times the server was started again after it died
        self._down: tuple[str, float] | None = None  # why and since when (epoch) it is down
        self._launched_at = 0.0
        self._lock = threading.Lock()
        self._supervisor = HostSupervisor(self, backoff=backoff, poll_s=poll_s) if supervise else None

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:PORT/v1``, for OpenAICompatibleLLM."""
        if self._port is None or not self.running:
            raise ModelHostError("the model host is not running; call start() first")
        return f"http://127.0.0.1:{self._port}/v1"

    @property
    def running(self) -> bool:
        return self._process is not None and self._process.poll() is None

    @property
    def supervised(self) -> bool:
        """Whether a watcher starts the server again should it die."""
        return self._supervisor is not None and self._supervisor.watching

    @property
    def pid(self) -> int | None:
        return self._process.pid if self._process else None

    def start(self) -> ModelHost:
        """Start the server and wait until it answers; idempotent. Supervised from then on."""
        if self.running:
            return self
        if not self.model_path.is_file():
            raise ModelHostError(f"model file {self.model_path} does not exist")
        self._port = _free_port()
        fd, log_name = tempfile.mkstemp(prefix="flora-model-host-", suffix=".log")
        os.close(fd)
        self._log_path = Path(log_name)
        started = time.monotonic()
        if self.state_file is not None:
            self.state_file.parent.mkdir(parents=True, exist_ok=True)
            self.state_file.unlink(missing_ok=True)  # a previous life's
        self._launch()
        atexit.register(self.stop)
        try:
            self._wait_until_ready(started)
        except ModelHostError as exc:
            tail = self._log_tail()
            self.stop()
            raise ModelHostError(
                f"model host for {self.model_path} did not start ({exc}); its log ends with:\n{tail}"
            ) from None
        except BaseException:
            self.stop()
            raise
        self.startup_seconds = time.monotonic() - started
        logger.info("model host ready at %s after %.1f s", self.base_url, self.startup_seconds)
        if self._supervisor is not None:
            self._supervisor.start()
        return self

    def _launch(self, restarts: int = 0) -> None:
        assert self._log_path is not None
        with open(self._log_path, "ab") as log:  # a later life's lines follow the earlier's
            process = subprocess.Popen(
                self._command(restarts),
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                env=_server_environment() if self.server is None else dict(os.environ),
                preexec_fn=_die_with_parent(),
            )
        with self._lock:
            self._process, self._launched_at = process, time.monotonic()
        logger.info("model host pid %s starting on port %s for %s", process.pid, self._port, self.model_path)

    # -- what the supervisor asks (host_supervisor.Supervised) ---------------------------
    def exit_code(self) -> int | None:
        """The exit status of a server that died; None while it runs (or was stopped)."""
        process = self._process
        return None if process is None else process.poll()

    def lived_s(self) -> float:
        return time.monotonic() - self._launched_at

    def mark_down(self, reason: str) -> None:
        """Down for ``reason``: said by ``state()`` and in the state file until it is back."""
        self._down = (reason, time.time())
        if self.state_file is not None:
            from capabilities.llm.model_server import write_state

            self.state_file.parent.mkdir(parents=True, exist_ok=True)
            write_state(self.state_file, {**self.state(), "pid": os.getpid()})  # alive while this process is

    def relaunch(self) -> None:
        """Start the server again on the same port and wait until it answers."""
        if self._supervisor is not None and self._supervisor.stopping:
            raise ModelHostError("the host is being stopped")
        self._launch(self.restarts + 1)
        try:
            self._wait_until_ready(time.monotonic(), cancelled=lambda: self._supervisor is not None
                                   and self._supervisor.stopping)
        except ModelHostError as exc:
            self._end_process(force=True)
            raise ModelHostError(f"{exc}; its log ends with: {self.last_log_line() or '(nothing)'}") from None
        self.restarts += 1
        self._down = None
        logger.info("model host ready again at %s (restart %d)", self.base_url, self.restarts)

    def last_log_line(self) -> str:
        if self._log_path is None or not self._log_path.exists():
            return ""
        lines = [line.strip() for line in self._log_tail().splitlines() if line.strip()]
        return lines[-1] if lines else ""

    def stop(self) -> None:
        """Terminate the server (kill it after a grace period); idempotent."""
        atexit.unregister(self.stop)
        if self._supervisor is not None:
            self._supervisor.stop()  # first: nothing starts it again from here on
        process = self._end_process(force=False)
        if self._log_path is not None:
            self._log_path.unlink(missing_ok=True)
            self._log_path = None
        if self.state_file is not None and (process is not None or self._down is not None):
            self.state_file.unlink(missing_ok=True)
        self._down = None

    def _end_process(self, *, force: bool) -> subprocess.Popen[bytes] | None:
        with self._lock:
            process, self._process = self._process, None
        if process is not None and process.poll() is None:
            if force:
                process.kill()
            else:
                process.terminate()
            try:
                process.wait(timeout=_STOP_GRACE_S)
            except subprocess.TimeoutExpired:
                logger.warning("model host pid %s ignored SIGTERM; killing it", process.pid)
                process.kill()
                process.wait()
            logger.info("model host pid %s stopped", process.pid)
        return process

    def state(self) -> dict:
        """What the server last said of its model: ``state`` (``loaded`` / ``unloaded_idle``),
        ``since`` (epoch seconds), ``rss_mb`` then, ``loads``/``unloads`` so far; ``stopped``
        when it is not running; ``down`` with its ``reason`` while it died and is being started
        again. ``restarts``: how often it was."""
        if self._down is not None:
            reason, since = self._down
            return {"model": self.alias, "state": "down", "reason": reason, "since": since,
                    "restarts": self.restarts}
        if not self.running:
            return {"model": self.alias, "state": "stopped", "restarts": self.restarts}
        read = _read_state(self.state_file) if self.state_file is not None else None
        return {**(read or {"model": self.alias, "state": "loaded", "pid": self.pid}), "restarts": self.restarts}

    def kill(self) -> None:
        """End the server at once (a forced stop); idempotent."""
        if self._supervisor is not None:
            self._supervisor.stop()
        self._end_process(force=True)
        self.stop()

    def __enter__(self) -> ModelHost:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    def _command(self, restarts: int = 0) -> list[str]:
        return [
            *(self.server or [sys.executable, str(Path(__file__).with_name("model_server.py"))]),
            "--model", str(self.model_path),
            "--model_alias", self.alias,
            "--host", "127.0.0.1",
            "--port", str(self._port),
            "--n_ctx", str(self._n_ctx),
            "--n_threads", str(self._n_threads),
            "--n_threads_batch", str(self._n_threads),
            "--interrupt_requests", "False",
            "--logits_all", "False",
            "--verbose", "False",
            "--flora_idle_unload_s", str(self.idle_unload_s),
            "--flora_restarts", str(restarts),
            *(["--flora_state_file", str(self.state_file)] if self.state_file is not None else []),
        ]

    def _wait_until_ready(self, started: float, cancelled: Callable[[], bool] | None = None) -> None:
        url = f"http://127.0.0.1:{self._port}/v1/models"
        with httpx.Client(timeout=2.0) as client:
            while True:
                process = self._process
                if process is None or (cancelled is not None and cancelled()):
                    raise ModelHostError("stopped while starting")
                code = process.poll()
                if code is not None:
                    raise ModelHostError(describe_exit(code))
                try:
                    if client.get(url).status_code == 200:
                        return
                except httpx.TransportError:
                    pass  # not listening yet: the model loads before the socket opens
                if time.monotonic() - started > self._startup_timeout_s:
                    raise ModelHostError(f"no answer from {url} within {self._startup_timeout_s:.0f} s")
                time.sleep(_POLL_S)

    def _log_tail(self) -> str:
        if self._log_path is None or not self._log_path.exists():
            return "(no log)"
        text = self._log_path.read_text(errors="replace")
        return text[-_LOG_TAIL_CHARS:].strip() or "(empty log)"


def read_host_states(directory: str | os.PathLike[str]) -> list[dict]:
    """The states of the model hosts that write under ``directory`` and are alive, by model."""
    folder = Path(directory)
    states = [_read_state(path) for path in sorted(folder.glob("*.json"))] if folder.is_dir() else []
    return [s for s in states if s is not None and _alive(s.get("pid"))]


def _read_state(path: Path) -> dict | None:
    try:
        state = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None  # not written yet, or gone
    return state if isinstance(state, dict) else None


def _alive(pid: object) -> bool:
    if not isinstance(pid, int) or pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _server_environment() -> dict[str, str]:
    """os.environ without the names llama_cpp.server would read as settings."""
    try:
        from llama_cpp.server.settings import ConfigFileSettings, Settings
    except ImportError as exc:
        raise ModelHostError(
            f"llama-cpp-python's server is not importable ({exc}); run scripts/install_llm.sh"
        ) from exc
    reserved = {name.lower() for name in (*Settings.model_fields, *ConfigFileSettings.model_fields)}
    reserved.add("config_file")
    return {key: value for key, value in os.environ.items() if key.lower() not in reserved}


def _die_with_parent() -> Callable[[], None] | None:
    """A preexec_fn asking Linux to SIGTERM the child when this thread's process dies."""
    if not sys.platform.startswith("linux"):
        return None
    # Resolved before fork: the child only makes one foreign call.
    prctl = ctypes.CDLL(None, use_errno=True).prctl

    def set_death_signal() -> None:
        prctl(_PR_SET_PDEATHSIG, int(signal.SIGTERM))

    return set_death_signal
