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
import time
from pathlib import Path
from typing import Callable

import httpx

from capabilities.llm.base import LLMError

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
    ) -> None:
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
    def pid(self) -> int | None:
        return self._process.pid if self._process else None

    def start(self) -> ModelHost:
        """Start the server and wait until it answers; idempotent."""
        if self.running:
            return self
        if not self.model_path.is_file():
            raise ModelHostError(f"model file {self.model_path} does not exist")
        self._port = _free_port()
        fd, log_name = tempfile.mkstemp(prefix="flora-model-host-", suffix=".log")
        self._log_path = Path(log_name)
        started = time.monotonic()
        if self.state_file is not None:
            self.state_file.parent.mkdir(parents=True, exist_ok=True)
            self.state_file.unlink(missing_ok=True)  # a previous life's
        with os.fdopen(fd, "wb") as log:
            self._process = subprocess.Popen(
                self._command(),
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                env=_server_environment(),
                preexec_fn=_die_with_parent(),
            )
        atexit.register(self.stop)
        logger.info(
            "model host pid %s starting on port %s for %s", self._process.pid, self._port, self.model_path
        )
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
        return self

    def stop(self) -> None:
        """Terminate the server (kill it after a grace period); idempotent."""
        atexit.unregister(self.stop)
        process, self._process = self._process, None
        if process is not None and process.poll() is None:
            process.terminate()
            try:
                process.wait(timeout=_STOP_GRACE_S)
            except subprocess.TimeoutExpired:
                logger.warning("model host pid %s ignored SIGTERM; killing it", process.pid)
                process.kill()
                process.wait()
            logger.info("model host pid %s stopped", process.pid)
        if self._log_path is not None:
            self._log_path.unlink(missing_ok=True)
            self._log_path = None
        if self.state_file is not None and process is not None:
            self.state_file.unlink(missing_ok=True)

    def state(self) -> dict:
        """What the server last said of its model: ``state`` (``loaded`` / ``unloaded_idle``),
        ``since`` (epoch seconds), ``rss_mb`` then, ``loads``/``unloads`` so far; ``stopped``
        when it is not running."""
        if not self.running:
            return {"model": self.alias, "state": "stopped"}
        read = _read_state(self.state_file) if self.state_file is not None else None
        return read or {"model": self.alias, "state": "loaded", "pid": self.pid}

    def kill(self) -> None:
        """End the server at once (a forced stop); idempotent."""
        process = self._process
        if process is not None and process.poll() is None:
            process.kill()
            process.wait()
        self.stop()

    def __enter__(self) -> ModelHost:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    def _command(self) -> list[str]:
        return [
            sys.executable, str(Path(__file__).with_name("model_server.py")),
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
            *(["--flora_state_file", str(self.state_file)] if self.state_file is not None else []),
        ]

    def _wait_until_ready(self, started: float) -> None:
        url = f"http://127.0.0.1:{self._port}/v1/models"
        with httpx.Client(timeout=2.0) as client:
            while True:
                assert self._process is not None
                code = self._process.poll()
                if code is not None:
                    raise ModelHostError(f"exited with status {code}")
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
