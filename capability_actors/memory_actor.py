"""MemoryActor: a node's long-term memory, in one process.

The embedded Chroma store is a file one process should own, and recall must answer while a
conversation turn is being distilled (a model call of a second or more), so this actor keeps
both: it answers ``memory_request`` (recall, list, forget, clear) in its own thread, and a
worker thread beside it distils the turns waiting in the store whenever it is woken (a
``wake`` request, sent after each turn worth remembering) and once at start, which picks up
what a restart left. Distilling asks the model that writes replies, which answers one call
at a time, so the worker waits until no turn has come for ``QUIET_S`` (a person reading the
reply) rather than make the next reply queue behind it. Its MemoryDesk decides; this actor
only moves messages.
"""

from __future__ import annotations

import threading

from thespian.actors import ActorExitRequest

from agents.base import FloraActor
from agents.coordination.memory_desk import MemoryDesk
from common import messages as m

IDLE_CHECK_S = 60.0  # the worker looks for waiting turns this often even when nobody wakes it
QUIET_S = 2.0  # distil once the conversation has paused this long: the model is then free for replies


class MemoryActor(FloraActor):
    role = "memory"

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.desk: MemoryDesk | None = None
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._worker: threading.Thread | None = None

    def handlers(self):
        return {"memory_request": self.on_request}

    def configured(self, message, sender):
        rt = self.runtime
        memory = rt.registry.get_capability("memory") if "memory" in rt.registry else None
        self.desk = MemoryDesk(memory, rt.store, rt.events, top_k=rt.config.memory.top_k)
        if self.desk.enabled:
            self._worker = threading.Thread(target=self._distil_forever, name="flora-memory-distil", daemon=True)
            self._worker.start()
            self._wake.set()  # what an earlier run left waiting

    def on_request(self, message, sender):
        m.validate(message)
        if message["op"] == "wake":
            self._wake.set()
            return
        self.send(sender, self.desk.on_request(message))

    def on_system_message(self, message, sender):
        if isinstance(message, ActorExitRequest):
            self._stop.set()
            self._wake.set()

    def _distil_forever(self) -> None:
        while not self._stop.is_set():
            self._wake.wait(IDLE_CHECK_S)
            self._wake.clear()
            while self._wake.wait(QUIET_S) and not self._stop.is_set():
                self._wake.clear()  # another turn came: the conversation goes on, wait for a pause
            if self._stop.is_set():
                return
            try:
                while self.desk.distil_pending() and not self._stop.is_set():
                    pass  # more may have come while the last batch was distilled
            except Exception:  # the store was unreachable: the turns stay waiting for the next wake
                self.log.exception("distilling waiting conversation turns failed")
