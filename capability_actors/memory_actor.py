"""MemoryActor: a node's long-term memory, in one process.

The embedded Chroma store is a file one process should own, and recall must answer while a
conversation turn is being distilled (a model call of a second or more), so this actor keeps
both: it answers ``memory_request`` (recall, list, forget, clear) in its own thread, and a
worker thread beside it distils the turns waiting in the store whenever it is woken (a
``wake`` request, sent after each turn worth remembering) and once at start, which picks up
what a restart left.

Distilling asks the model that writes replies, which answers one call at a time, and a reply
asked for meanwhile waits behind it. So the worker distils only once nobody has talked to
this node for ``memory.distil_after_idle_s``: every request here is a sign of conversation
(new work asks for a recall before it is routed), not only the turns worth remembering. It
distils one turn at a time and waits again if someone spoke during it. Its MemoryDesk
decides; this actor only moves messages.
"""

from __future__ import annotations

import multiprocessing
import threading

from thespian.actors import ActorExitRequest

from agents.base import FloraActor
from agents.coordination.memory_desk import ConversationPause, MemoryDesk
from capabilities.memory import embedding
from common import messages as m

IDLE_CHECK_S = 60.0  # the worker looks for waiting turns this often even when nobody wakes it


class MemoryActor(FloraActor):
    role = "memory"

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.desk: MemoryDesk | None = None
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._worker: threading.Thread | None = None
        self._pause = ConversationPause(0.0, self._stop)

    def handlers(self):
        return {"memory_request": self.on_request}

    def configured(self, message, sender):
        if multiprocessing.parent_process() is not None:
            # an actor process of its own (multiprocTCPBase), and this actor creates none, so
            # nothing is forked from it: the embedding engine may use more than one thread
            embedding.allow_threads()
        rt = self.runtime
        memory = rt.registry.get_capability("memory") if "memory" in rt.registry else None
        self.desk = MemoryDesk(memory, rt.store, rt.events, top_k=rt.config.memory.top_k)
        self._pause = ConversationPause(rt.config.memory.distil_after_idle_s, self._stop)
        if self.desk.enabled:
            self._worker = threading.Thread(target=self._distil_forever, name="flora-memory-distil", daemon=True)
            self._worker.start()
            self._wake.set()  # what an earlier run left waiting

    def on_request(self, message, sender):
        m.validate(message)
        self._pause.spoken()
        if message["op"] == "wake":
            self._wake.set()
            return
        self.send(sender, self.desk.on_request(message))
        # a person may have waited through it (a list distils what they just said): the pause starts
        # now, and what it left waiting (their facts' questions) is looked at after it
        self._pause.spoken()
        self._wake.set()

    def on_system_message(self, message, sender):
        if isinstance(message, ActorExitRequest):
            self._stop.set()
            self._wake.set()
            self._pause.spoken()

    def _distil_forever(self) -> None:
        while not self._stop.is_set():
            self._wake.wait(IDLE_CHECK_S)
            self._wake.clear()
            try:
                while self._pause.wait() and self.desk.distil_pending(limit=1):
                    pass  # one turn at a time: someone may have spoken during it
            except Exception:  # the store was unreachable: the turns stay waiting for the next wake
                self.log.exception("distilling waiting conversation turns failed")
