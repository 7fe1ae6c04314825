"""MemoryDesk: what the MemoryActor does, as a plain class.

Two jobs, on one person's memories at a time (tenant and user on every call):

- **Requests** (``memory_request``): ``recall`` the memories bearing on a message (before new
  work: they travel with it to chat and the understanding step), ``list``, ``forget`` one (by
  id) or those matching words ("forget that I live in Shanghai"), ``clear`` all. Each answer is
  a ``memory_reply``; when memory is off or its store is unreachable the reply says so in
  ``error`` and the asker goes on without memories.
- **Distilling** the conversation turns that the InteractionActor left in the store as pending
  work (kind ``memory``): each turn is handed to the memory service, which extracts facts about
  the person and merges them with what it has. Off the reply path, in the MemoryActor's
  worker thread; a turn is finished only once written, so a restart picks up what was left; a
  turn that keeps failing is reported once and dropped after ``MAX_ATTEMPTS``, never retried
  in a loop. A model that is busy or down (LLMUnavailable: memory's calls have a short timeout
  of their own) is no failure of the turn: it waits, uncounted, for the next pause.

A person asking about their memories, or about themselves ("what's my name?",
``cues.asks_about_self``: its recall), is the one time a turn is distilled on the reply path:
"what do you remember about me?" or "forget that I live in Shanghai" right after telling it
first takes in that person's waiting turns (``PERSON_WAIT_LIMIT`` at most: their facts, while
the questions each fact answers are left as waiting work for the worker), so the answer includes
what they just said and nothing they asked to forget comes back later; "clear" drops their
waiting turns unread. One lock keeps this and the worker from distilling a turn twice.

Every change is in the event history: ``MEMORY_RECALLED``, ``MEMORY_WRITTEN``,
``MEMORY_FORGOTTEN`` (task id ``memory``, the person's tenant and user).
"""

from __future__ import annotations

import logging
import threading
from typing import Any

from capabilities.cognition import cues
from capabilities.llm.base import LLMUnavailable
from common import messages as m
from common.tasks.models import WorkItem
from common.tasks.store import TaskStore
from events.event_types import EventType

log = logging.getLogger("flora.memory")

WORK_KIND = "memory"
MAX_ATTEMPTS = 3
EVENT_TASK = "memory"  # the task id memory events are recorded under
PERSON_WAIT_LIMIT = 5  # a person's waiting turns taken in before answering about their memories
PENDING_SCAN = 500  # waiting turns looked through for one person's
SOURCE = "MemoryActor"


class ConversationPause:
    """A pause in the conversation, for work that must not hold up a reply: ``spoken()`` at
    every sign of conversation; ``wait()`` returns True once nobody has spoken for ``quiet_s``
    (measured from the call or from the last sign during it), False once ``stop`` is set."""

    def __init__(self, quiet_s: float, stop: threading.Event):
        self.quiet_s = quiet_s
        self._stop = stop
        self._spoken = threading.Event()

    def spoken(self) -> None:
        self._spoken.set()

    def wait(self) -> bool:
        self._spoken.clear()
        while not self._stop.is_set():
            if self.quiet_s == 0 or not self._spoken.wait(self.quiet_s):
                return not self._stop.is_set()
            self._spoken.clear()  # the conversation goes on: a pause counts from now
        return False


def turn_work(*, tenant_id: str, user_id: str, msg_id: str, content: str, reply: str) -> WorkItem:
    """A conversation turn to distil, keyed by its message so the same turn is distilled once."""
    return WorkItem(tenant_id=tenant_id, kind=WORK_KIND, key=msg_id,
                    payload={"user_id": user_id, "content": content, "reply": reply})


def questions_work(*, tenant_id: str, user_id: str, memory_id: str) -> WorkItem:
    """A memory stored while its person waited, whose questions are still to be written."""
    return WorkItem(tenant_id=tenant_id, kind=WORK_KIND, key=f"questions:{memory_id}",
                    payload={"user_id": user_id, "questions_for": memory_id})


class MemoryDesk:
    def __init__(self, memory: Any, store: TaskStore, events: Any = None, *, top_k: int = 5):
        self._memory = memory  # the registry's ``memory`` service (None: memory is off)
        self._store = store
        self._events = events
        self._top_k = top_k
        self._reported: set[str] = set()  # turns whose failure was logged already
        self._distilling = threading.Lock()  # the worker's turns and a person's own, one at a time

    @property
    def enabled(self) -> bool:
        return self._memory is not None

    # -- requests ------------------------------------------------------------------
    def on_request(self, msg: dict) -> dict:
        op, request_id = msg.get("op", ""), msg.get("request_id")
        if self._memory is None:
            return m.memory_reply(op=op, request_id=request_id, error="memory is off (memory.enabled: false)")
        tenant, user = msg["tenant_id"], msg["user_id"]
        try:
            if op == "list" or (op == "forget" and not msg.get("memory_id")) or (
                    op == "recall" and cues.asks_about_self(msg.get("query") or "")):  # what they told a moment ago counts
                self.distil_person(tenant, user)
            if op in ("recall", "search"):
                found = self._memory.recall(tenant, user, msg.get("query", ""), k=msg.get("limit") or self._top_k,
                                            floor=op == "recall")
                memories = [_view(record) for record in found]
                if memories:
                    self._event(EventType.MEMORY_RECALLED, tenant, user,
                                {"memory_ids": [r["memory_id"] for r in memories]})
                return m.memory_reply(op=op, request_id=request_id, memories=memories)
            if op == "list":
                return m.memory_reply(op=op, request_id=request_id,
                                      memories=[_view(r) for r in self._memory.list(tenant, user)])
            if op == "forget":
                if msg.get("memory_id"):
                    gone = [msg["memory_id"]] if self._memory.forget(tenant, user, msg["memory_id"]) else []
                else:
                    gone = [_view(r)["memory_id"] for r in self._memory.forget_matching(tenant, user,
                                                                                          msg.get("query", ""))]
                if gone:
                    self._event(EventType.MEMORY_FORGOTTEN, tenant, user, {"memory_ids": gone})
                return m.memory_reply(op=op, request_id=request_id, removed=len(gone))
            if op == "clear":
                self._drop_person(tenant, user)
                removed = self._memory.clear(tenant, user)
                if removed:
                    self._event(EventType.MEMORY_FORGOTTEN, tenant, user, {"all": True, "count": removed})
                return m.memory_reply(op=op, request_id=request_id, removed=removed)
        except Exception as exc:  # an unreachable store degrades memory; the conversation goes on
            log.warning("memory %s for user=%s failed: %s", op, user, exc, extra={"tenant_id": tenant})
            return m.memory_reply(op=op, request_id=request_id, error=f"memory is unavailable: {exc}")
        return m.memory_reply(op=op, request_id=request_id, error=f"unknown memory operation {op!r}")

    # -- distilling ----------------------------------------------------------------
    def distil_pending(self, limit: int = 20) -> int:
        """Distil up to ``limit`` waiting turns, oldest first; returns how many were done."""
        if self._memory is None:
            return 0
        if not self._distilling.acquire(blocking=False):
            return 0  # a person waits on their own turns: the model is theirs now, and the pause starts again
        done = 0
        try:
            for item in self._store.pending_work(WORK_KIND, limit=limit):
                if self._distil(item):
                    done += 1
        finally:
            self._distilling.release()
        return done

    def distil_person(self, tenant_id: str, user_id: str, limit: int = PERSON_WAIT_LIMIT) -> int:
        """Distil one person's waiting turns now, oldest first; returns how many were done."""
        if self._memory is None:
            return 0
        if not self._turns_of(tenant_id, user_id):
            return 0  # nothing of theirs waits: no need to wait for the worker's model call
        done = 0
        with self._distilling:  # the worker may have taken some in meanwhile: looked up under the lock
            turns = self._turns_of(tenant_id, user_id)
            for item in turns[:limit]:
                if self._distil(item, questions=False):  # the facts now; their questions after a pause
                    done += 1
        return done

    def _turns_of(self, tenant_id: str, user_id: str) -> list[WorkItem]:
        return [item for item in self._persons(tenant_id, user_id) if "questions_for" not in item.payload]

    def _drop_person(self, tenant_id: str, user_id: str) -> None:
        with self._distilling:
            for item in self._persons(tenant_id, user_id):
                self._store.finish_work(item.tenant_id, WORK_KIND, item.key)

    def _persons(self, tenant_id: str, user_id: str) -> list[WorkItem]:
        return [item for item in self._store.pending_work(WORK_KIND, limit=PENDING_SCAN)
                if item.tenant_id == tenant_id and item.payload.get("user_id") == user_id]

    def _distil(self, item: WorkItem, *, questions: bool = True) -> bool:
        from capabilities.memory.service import DistillationFailed, Turn

        said = item.payload
        user = said.get("user_id", "")
        try:
            if said.get("questions_for"):
                self._memory.write_questions(item.tenant_id, user, said["questions_for"])
                self._store.finish_work(item.tenant_id, WORK_KIND, item.key)
                return True
            written = self._memory.remember_turn(item.tenant_id, user, Turn(
                message=said.get("content", ""), reply=said.get("reply", ""), message_id=item.key),
                questions=questions)
        except DistillationFailed as exc:  # the model's answer was refused: reported once, not tried again
            log.warning("turn %s of user=%s gave no memories: %s", item.key, user, exc,
                        extra={"tenant_id": item.tenant_id})
            self._store.finish_work(item.tenant_id, WORK_KIND, item.key)
            return True
        except LLMUnavailable as exc:  # busy or down: not the turn's fault, and not an attempt
            log.info("turn %s of user=%s waits for the model (%s)", item.key, user, exc,
                     extra={"tenant_id": item.tenant_id})
            return False
        except Exception as exc:
            attempts = self._store.retry_work(item.tenant_id, WORK_KIND, item.key)
            if item.key not in self._reported:  # reported once, whatever happens next
                self._reported.add(item.key)
                log.warning("distilling turn %s of user=%s failed (attempt %d of %d): %s", item.key, user,
                            attempts, MAX_ATTEMPTS, exc, extra={"tenant_id": item.tenant_id})
            if attempts >= MAX_ATTEMPTS:
                self._store.finish_work(item.tenant_id, WORK_KIND, item.key)
                log.warning("gave up distilling turn %s of user=%s after %d attempts", item.key, user, attempts,
                            extra={"tenant_id": item.tenant_id})
            return False
        if not questions:
            for record in written or []:
                self._store.add_work(questions_work(tenant_id=item.tenant_id, user_id=user,
                                                    memory_id=record.memory_id))
        self._store.finish_work(item.tenant_id, WORK_KIND, item.key)
        views = [_view(record) for record in written or []]
        if views:
            self._event(EventType.MEMORY_WRITTEN, item.tenant_id, user,
                        {"msg_id": item.key, "memories": [{"memory_id": v["memory_id"], "fact": v["fact"]}
                                                          for v in views]})
        return True

    def _event(self, event_type: EventType, tenant_id: str, user_id: str, data: dict) -> None:
        if self._events is None:
            return
        try:
            self._events.publish_task_event(task_id=EVENT_TASK, event_type=event_type, source=SOURCE,
                                            tenant_id=tenant_id, user_id=user_id, data=data)
        except Exception as exc:  # the history is a record, not a reason to fail the memory change
            log.warning("could not record %s: %s", event_type.value, exc)


def _view(found: Any) -> dict:
    """A memory (a record, or a recalled one with its score) as the protocol carries it."""
    record = getattr(found, "record", found)
    view = {k: v for k, v in record.to_dict().items() if k != "tenant_id"}
    if hasattr(found, "score"):
        view["score"] = round(float(found.score), 4)
    return view
