"""Keeping a model host up: a host process that dies is started again, with a bounded backoff.

A llama.cpp server can die under Flora (a segfault in libllama on some prompt, the kernel's
OOM killer, a stray ``kill``). Without a watcher every later request fails with "the language
model is unavailable" until someone restarts Flora by hand. :class:`HostSupervisor` is that
watcher: one thread per :class:`~capabilities.llm.model_host.ModelHost`, started with it and
stopped with it. It looks at the process every ``poll_s``; when it has exited, the host is
marked ``down`` with the reason (the signal or the exit status, and the last line of its log),
and started again on the same port (so the actors' ``host_url`` stays right) after a delay
from :class:`RestartBackoff`: 1 s, 2 s, 4 s … at most 60 s, back to 1 s once a life lasted
``reset_after_s``. A start that fails counts as a short life and waits longer next time.

The thread that starts a process is the one whose exit SIGTERMs it (``PR_SET_PDEATHSIG``, see
model_host.py): the supervisor's thread lives exactly as long as the host should, so a host
it started again is ended with it.

Requests that were running when the host died fail on their connection; the client
(`OpenAICompatibleLLM` with ``restart_wait_s``) waits for the host to answer again and sends
such a request once more — only once, so a prompt that crashes the host every time cannot
keep it crashing.
"""

from __future__ import annotations

import logging
import signal
import threading
import time
from typing import Callable, Protocol

logger = logging.getLogger("flora.llm.model_host")

DEFAULT_POLL_S = 0.5
DEFAULT_INITIAL_S = 1.0
DEFAULT_MAX_S = 60.0
DEFAULT_RESET_AFTER_S = 300.0


class RestartBackoff:
    """How long to wait before the next start of a host that died.

    ``initial_s``, doubled after every life shorter than ``reset_after_s``, never more than
    ``max_s``; a life at least ``reset_after_s`` long starts the sequence again."""

    def __init__(self, initial_s: float = DEFAULT_INITIAL_S, max_s: float = DEFAULT_MAX_S,
                 reset_after_s: float = DEFAULT_RESET_AFTER_S) -> None:
        if initial_s <= 0 or max_s < initial_s:
            raise ValueError("need 0 < initial_s <= max_s")
        self.initial_s, self.max_s, self.reset_after_s = initial_s, max_s, reset_after_s
        self._next = initial_s

    def delay(self, lived_s: float) -> float:
        """The wait before the next start, for a host whose last life lasted ``lived_s``."""
        if lived_s >= self.reset_after_s:
            self._next = self.initial_s
        wait = self._next
        self._next = min(self.max_s, self._next * 2)
        return wait


def describe_exit(code: int) -> str:
    """``killed by SIGSEGV`` / ``exited with status 1``, from a Popen return code."""
    if code < 0:
        try:
            return f"killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"killed by signal {-code}"
    return f"exited with status {code}"


class Supervised(Protocol):
    """What the supervisor needs of a host (ModelHost implements it)."""

    alias: str

    def exit_code(self) -> int | None: ...  # None while the process runs
    def lived_s(self) -> float: ...  # how long its last life lasted
    def mark_down(self, reason: str) -> None: ...
    def relaunch(self) -> None: ...  # start it again and wait until it answers; ModelHostError if not
    def last_log_line(self) -> str: ...


class HostSupervisor:
    """Restarts ``host`` whenever its process has exited, until :meth:`stop`."""

    def __init__(self, host: Supervised, *, backoff: RestartBackoff | None = None, poll_s: float = DEFAULT_POLL_S,
                 on_restart: Callable[[], None] | None = None) -> None:
        self.host = host
        self.backoff = backoff or RestartBackoff()
        self.poll_s = poll_s
        self._on_restart = on_restart
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        if self._thread is not None:
            return
        self._stop.clear()
        self._thread = threading.Thread(target=self._run, name=f"flora-model-host-{self.host.alias}", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        """Stop watching (a restart in progress is waited for, at most its start-up time)."""
        self._stop.set()
        thread, self._thread = self._thread, None
        if thread is not None and thread is not threading.current_thread():
            thread.join()

    @property
    def watching(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    @property
    def stopping(self) -> bool:
        return self._stop.is_set()

    def _run(self) -> None:
        while not self._stop.wait(self.poll_s):
            try:
                code = self.host.exit_code()
                if code is not None:
                    self._restart(code)
            except Exception:  # the watcher must outlive any surprise: it is the host's only way back
                logger.exception("supervising model host %s failed; watching on", self.host.alias)

    def _restart(self, code: int) -> None:
        reason = describe_exit(code)
        last = self.host.last_log_line()
        reason += f"; its log ends with: {last}" if last else ""
        lived = self.host.lived_s()
        logger.error("model host %s died after %.0f s (%s)", self.host.alias, lived, reason)
        self.host.mark_down(reason)
        while not self._stop.is_set():
            wait = self.backoff.delay(lived)
            logger.info("model host %s: starting it again in %.1f s", self.host.alias, wait)
            if self._stop.wait(wait):
                return
            started = time.monotonic()
            try:
                self.host.relaunch()
            except Exception as exc:
                lived = time.monotonic() - started
                logger.error("model host %s did not start again: %s", self.host.alias, exc)
                self.host.mark_down(f"{reason}; starting it again failed: {str(exc).splitlines()[0]}")
                continue
            logger.warning("model host %s is back", self.host.alias)
            if self._on_restart is not None:
                self._on_restart()
            return
