"""StreamedCall: a blocking call that writes text as it goes, run beside an actor.

An actor must not block while a reply is being written if the pieces are to reach the
person as they come: Thespian sends only from the actor's own thread, between messages. So
the call (``fn(on_text)``) runs in a thread of its own, the pieces it hands to ``on_text``
are collected here, and the actor drains them from its wakeups (``pieces``), sending each
batch on, until ``done``; then ``result`` is the call's return value, or ``error`` what it
raised.
"""

from __future__ import annotations

import queue
import threading
from typing import Any, Callable


class StreamedCall:
    def __init__(self, fn: Callable[[Callable[[str], None]], Any], *, name: str = "flora-stream"):
        self._pieces: queue.SimpleQueue[str] = queue.SimpleQueue()
        self._finished = threading.Event()
        self.result: Any = None
        self.error: BaseException | None = None
        self.seq = 0  # pieces sent on so far
        self._thread = threading.Thread(target=self._run, args=(fn,), name=name, daemon=True)
        self._thread.start()

    def _run(self, fn) -> None:
        try:
            self.result = fn(self._pieces.put)
        except BaseException as exc:  # handed to the actor's thread, which reports it
            self.error = exc
        finally:
            self._finished.set()

    @property
    def done(self) -> bool:
        return self._finished.is_set()

    def pieces(self) -> str:
        """The text written since the last call ("" if none)."""
        taken = []
        while True:
            try:
                taken.append(self._pieces.get_nowait())
            except queue.Empty:
                return "".join(taken)

    def wait(self, timeout: float | None = None) -> bool:
        return self._finished.wait(timeout)
