"""InteractionCoordinator: what the InteractionActor decides, as a plain class.

It checks a ``user_input`` against the protocol, lets the ConversationManager decide what
the message is, and turns that decision into either an immediate reply or a message for
the AgentActor. Replies coming back from the AgentActor are matched to the waiting user
message by ``msg_id``. Returns ``(destination, message)`` pairs: ``"reply"`` (to the user
who sent ``msg_id``) or ``"agent"``.

Every turn — the message and the reply that answers it — is kept in the person's
conversation (``ConversationLog``), and the recent turns travel with new work, so the
understanding step and chat read a message in its context ("and tomorrow?").

With long-term memory (a MemoryActor, destination ``"memory"``): new work first asks it for
the memories bearing on the message (``recall``; after ``RECALL_WAIT_S`` without an answer
the work goes on without them), and they travel with the work — unless the front desk found
that no model will read them (``Decision.recall``: a capability named outright); a turn in which the person
may have told something about themselves is left in the store as pending work and the
MemoryActor is woken to distil it; "what do you remember about me?" and "forget …" are
answered from it directly.

With personas (``personas`` in the config, docs/personas.md), the persona of each new piece of
work is chosen here, once: by the rules in order, else the default — or, in auto mode when no
rule matched, left to the understanding step (``pick_persona``), since that takes a model
call. The choice travels with the work and is published as ``PERSONA_SELECTED``; replies name
the persona that answered.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass

from agents.coordination.memory_desk import turn_work
from capabilities.cognition import cues
from capabilities.cognition.personas import PersonaBook
from capabilities.cognition.reading import carried
from capabilities.context.conversation_log import ConversationLog
from capabilities.context.conversation_manager import ConversationManager, Decision
from capabilities.memory import recalled
from common import messages as m
from common import spans
from common.i18n import ZH, is_mostly, language_of, say
from common.tasks.models import COMPLETED, FAILED, Notification, TaskRecord
from common.tasks.store import TaskStore
from events.event_bus import EventBus
from events.event_types import EventType

log = logging.getLogger("flora.interaction")

Out = tuple[str, dict]
RECALL_WAIT_S = 2.0  # new work waits at most this long for its memories
# ... and a question about the person themselves ("what's my name?") this long: their turns
# still waiting are distilled first, so it is answered from what they said, not invented
SELF_RECALL_WAIT_S = 45.0
LATE_KEPT = 1000  # replies still expected after their person was told it took too long


@dataclass
class Waiting:
    """A user message whose reply comes from the back end."""

    tenant_id: str
    user_id: str
    content: str
    task_id: str
    deadline: float  # time.monotonic() after which the user is told it took too long
    conversation_id: str = ""
    said: dict | None = None  # the user's message as recorded with the reply
    persona: str = ""  # the persona chosen here for the message, named on its reply


@dataclass
class Recalling:
    """New work waiting for its memories (``task``), or a person's question about them."""

    task: dict | None
    deadline: float
    language: str = "en"


class InteractionCoordinator:
    def __init__(self, conversation: ConversationManager, *, default_tenant: str = "default",
                 reply_timeout_s: float = 120.0, log: ConversationLog | None = None,
                 memory_store: TaskStore | None = None, personas: PersonaBook | None = None,
                 events: EventBus | None = None, store: TaskStore | None = None):
        self._conversation = conversation
        self._personas = personas if personas is not None and personas.enabled else None
        self._events = events  # where PERSONA_SELECTED goes
        self._log = log
        self._default_tenant = default_tenant
        self._reply_timeout_s = reply_timeout_s
        self._memory_store = memory_store  # set when a MemoryActor serves: where turns to distil wait
        self._store = store  # where a reply that came too late is kept (a task and a notification)
        self.waiting: dict[str, Waiting] = {}
        self.late: dict[str, Waiting] = {}  # msg_id -> work whose person was told it took too long
        self.recalling: dict[str, Recalling] = {}  # request_id (the msg_id) -> what waits for the MemoryActor

    @property
    def remembers(self) -> bool:
        return self._memory_store is not None

    def on_user_input(self, raw: object) -> list[Out]:
        """Decide what to do with a user message (which may be malformed)."""
        msg_id = raw.get("msg_id") if isinstance(raw, dict) and isinstance(raw.get("msg_id"), str) else ""
        msg_id = msg_id or m.new_id("msg")
        try:
            m.validate(raw)
            if raw["message_type"] != "user_input":  # type: ignore[index]
                raise m.ProtocolError(f"InteractionActor does not accept {raw['message_type']!r} "  # type: ignore[index]
                                      "messages; send user_input", field="message_type",
                                      error_type="unknown_message_type")
        except m.ProtocolError as exc:
            return [("reply", m.task_error(msg_id=msg_id, error_type=exc.error_type, message=str(exc),
                                           field=exc.field))]
        msg = {**raw, "msg_id": msg_id, "tenant_id": raw.get("tenant_id") or self._default_tenant}  # type: ignore[union-attr]
        tenant, user = msg["tenant_id"], msg["user_id"]
        with spans.span("conversation_log"):
            conversation = ConversationLog.conversation_id(tenant, user, msg.get("channel"), msg.get("session_id"))
            found = self._log.standing(tenant, user, conversation) if self._log is not None else None
            if msg.get("session_id") and found is not None and found.owner not in (None, user):
                return [("reply", m.task_error(msg_id=msg_id, error_type="forbidden", field="session_id",
                                               message=f"Conversation {msg['session_id']} belongs to another user."))]
            history = self._log.history(user, found.owner, found.messages) if found is not None else []
        with spans.span("front_desk"):
            decision = self._conversation.handle_user_input(msg, history=history, standing=found)
        log.info("user input msg_id=%s user=%s action=%s task_id=%s", msg_id, user, decision.action,
                 decision.task_id, extra={"tenant_id": tenant, "task_id": decision.task_id})
        outs: list[Out] = []
        for to, out in self._act(msg, decision, conversation, history):
            outs.append((to, out))
            if to == "reply":
                self._recorded(msg, conversation, out)
                outs += self._remember(tenant, memory_owner(msg), msg, out)
        return outs

    def _act(self, msg: dict, d: Decision, conversation: str, history: list[dict]) -> list[Out]:
        msg_id, tenant, user = msg["msg_id"], msg["tenant_id"], msg["user_id"]
        if d.action == "memory":
            language = language_of(msg.get("content", ""))
            if not self.remembers:
                return [("reply", m.chat_reply(msg_id=msg_id, message=say(language, "memory_off"), intent="memory"))]
            self.recalling[msg_id] = Recalling(None, self._deadline(), language)
            self.waiting[msg_id] = Waiting(tenant, user, msg.get("content", ""), "", self._deadline(), conversation,
                                           {"content": msg.get("content")})
            return [("memory", m.memory_request(op=d.intent or "list", tenant_id=tenant, user_id=memory_owner(msg),
                                                request_id=msg_id, query=d.content or None))]
        if d.action == "error":
            return [("reply", m.task_error(msg_id=msg_id, error_type=d.error_type or "internal", message=d.message,
                                           task_id=d.task_id))]
        if d.action == "clarification":
            return [("reply", m.clarification(msg_id=msg_id, message=d.message, options=d.options,
                                              intent="clarify"))]
        if d.action == "rejected":
            return [("reply", m.task_error(msg_id=msg_id, error_type="cancelled", message=d.message,
                                           task_id=d.task_id))]
        if not d.needs_backend:
            if d.missing:  # a value was refused before reaching the back end: ask again now
                return [("reply", m.task_paused(msg_id=msg_id, task_id=d.task_id, message=d.message,
                                                missing_parameters=d.missing, capability=d.capability))]
            return [("reply", m.chat_reply(msg_id=msg_id, message=d.message, intent=d.intent or "chat"))]
        said = {k: msg.get(k) for k in ("content", "task_id", "parameters", "approve", "always_allow")}
        if d.action in ("parameter_completion", "resume_draft"):
            self.waiting[msg_id] = Waiting(tenant, user, msg["content"], d.task_id, self._deadline(),
                                           conversation, said)
            return [("agent", m.resume_task(task_id=d.task_id, msg_id=msg_id, tenant_id=tenant, user_id=user))]
        task_id = m.new_id("task")
        persona = self._choose_persona(msg, d.content, task_id)
        self.waiting[msg_id] = Waiting(tenant, user, d.content, task_id, self._deadline(), conversation, said,
                                       persona.name if persona is not None else "")
        task = m.agent_task(task_id=task_id, msg_id=msg_id, tenant_id=tenant, user_id=user, content=d.content,
                            intent=d.intent, capability=d.capability, channel=msg.get("channel"),
                            history=history or None, pending_task_id=d.pending_task_id,
                            stream=msg.get("stream") or None,
                            persona=persona.to_dict() if persona is not None else None,
                            pick_persona=(persona is None and self._personas is not None) or None,
                            reading=d.reading, operation=d.operation)
        if not self.remembers or not d.content or not d.recall:
            return [("agent", task)]
        with spans.span("memory"):
            wait = SELF_RECALL_WAIT_S if carried(task).asks_about_self else RECALL_WAIT_S
        self.recalling[msg_id] = Recalling(task, time.monotonic() + wait)
        return [("memory", m.memory_request(op="recall", tenant_id=tenant, user_id=memory_owner(msg),
                                            request_id=msg_id, query=d.content))]

    def _choose_persona(self, msg: dict, content: str, task_id: str):
        """The persona the rules (or the default) give this work, published; None when there are
        no personas, or the understanding step is to pick one."""
        if self._personas is None:
            return None
        with spans.span("persona"):
            return self._chosen_persona(msg, content, task_id)

    def _chosen_persona(self, msg: dict, content: str, task_id: str):
        persona = self._personas.choose(content or msg.get("content", ""), channel=msg.get("channel"),
                                        user_id=msg["user_id"])
        if persona is not None and self._events is not None:
            self._events.publish_task_event(task_id=task_id, event_type=EventType.PERSONA_SELECTED,
                                            source="InteractionActor", tenant_id=msg["tenant_id"],
                                            user_id=msg["user_id"], data=persona.event_data())
        return persona

    def on_memory_reply(self, msg: dict) -> list[Out]:
        """The MemoryActor answered: new work goes on with its memories, or the person's
        question about their memories is answered."""
        recalling = self.recalling.pop(msg.get("request_id") or "", None)
        if recalling is None:
            return []  # it went on without them already
        if recalling.task is not None:
            with spans.span("memory"):
                memories = recalled.facts(msg.get("memories"))
            return [("agent", {**recalling.task, "memories": memories} if memories else recalling.task)]
        waiting = self.waiting.pop(msg["request_id"], None)
        if waiting is None:
            return []
        reply = m.chat_reply(msg_id=msg["request_id"], message=memory_answer(msg, recalling.language),
                             intent="memory")
        return [("reply", self._kept(waiting, reply))]

    def is_waiting(self, msg_id: str) -> bool:
        return msg_id in self.waiting

    def on_backend_reply(self, msg: dict) -> list[Out]:
        """A reply from the AgentActor for a waiting user message."""
        waiting = self.waiting.pop(msg.get("msg_id", ""), None)
        if waiting is None:
            late = self.late.pop(msg.get("msg_id", ""), None)
            if late is not None:
                return self._kept_late(late, msg)
            log.info("reply for msg_id=%s has no waiting user (answered elsewhere)", msg.get("msg_id"))
            return []
        if msg["message_type"] == "clarification" and msg.get("options"):
            self._conversation.record_clarification(tenant_id=waiting.tenant_id, user_id=waiting.user_id,
                                                    content=waiting.content, options=msg["options"])
        if waiting.persona and "persona" not in msg:
            msg = {**msg, "persona": waiting.persona}
        kept = self._kept(waiting, in_their_language(msg, waiting.content))
        return [("reply", kept), *self._remember(waiting.tenant_id, waiting.user_id,
                                                  {**(waiting.said or {}), "msg_id": msg.get("msg_id", "")}, kept)]

    def _remember(self, tenant: str, user: str, said: dict, reply: dict) -> list[Out]:
        """Leave a turn in which the person may have told about themselves for the MemoryActor."""
        with spans.span("memory"):
            return self._remembered(tenant, user, said, reply)

    def _remembered(self, tenant: str, user: str, said: dict, reply: dict) -> list[Out]:
        content = said.get("content") or ""
        if not self.remembers or not isinstance(content, str) or not cues.may_tell_about_self(content):
            return []
        if self._log is not None:
            content = self._log.mask(content)  # a key told in passing is not remembered
        item = turn_work(tenant_id=tenant, user_id=user, msg_id=said.get("msg_id") or m.new_id("msg"),
                         content=content, reply=m.reply_text(reply))
        try:
            self._memory_store.add_work(item)
        except Exception as exc:  # the reply stands; only this turn is not remembered
            log.warning("could not keep turn %s for memory: %s", item.key, exc, extra={"tenant_id": tenant})
            return []
        return [("memory", m.memory_request(op="wake", tenant_id=tenant, user_id=user))]

    def expire(self, msg_id: str, reason: str, error_type: str = "timeout") -> list[Out]:
        """Give up on one waiting message (the back end failed on it)."""
        waiting = self.waiting.pop(msg_id, None)
        if waiting is None:
            return []
        error = m.task_error(msg_id=msg_id, error_type=error_type, retryable=True, message=reason,
                             task_id=waiting.task_id or None)
        return [("reply", self._kept(waiting, in_their_language(error, waiting.content)))]

    def _recorded(self, msg: dict, conversation: str, reply: dict) -> dict:
        if self._log is not None and _worth_keeping(msg):
            with spans.span("conversation_log"):
                self._log.record(msg["tenant_id"], msg["user_id"], conversation, msg, reply)
        return reply

    def _kept(self, waiting: Waiting, reply: dict) -> dict:
        if self._log is not None and waiting.conversation_id and waiting.said and _worth_keeping(waiting.said):
            with spans.span("conversation_log"):
                self._log.record(waiting.tenant_id, waiting.user_id, waiting.conversation_id, waiting.said, reply)
        return reply

    def expire_tenant(self, tenant_id: str, reason: str) -> list[Out]:
        """Give up on every message waiting for the tenant's AgentActor (it died with them)."""
        lost = [msg_id for msg_id, w in self.waiting.items() if w.tenant_id == tenant_id]
        return [out for msg_id in lost for out in self.expire(msg_id, reason, "unavailable")]

    def expire_overdue(self, now: float | None = None) -> list[Out]:
        """Tell every user whose reply is overdue; the task itself goes on in the store."""
        now = time.monotonic() if now is None else now
        outs: list[Out] = []
        for request_id in [r for r, w in self.recalling.items() if w.task is not None and w.deadline <= now]:
            log.warning("no memories for msg_id=%s within %.0f s; going on without", request_id, RECALL_WAIT_S)
            outs.append(("agent", self.recalling.pop(request_id).task))
        late = [msg_id for msg_id, w in self.waiting.items() if w.deadline <= now]
        for msg_id in late:  # the person is told it took too long; new work still waiting for its memories goes on without
            recalling = self.recalling.pop(msg_id, None)
            if recalling is not None and recalling.task is not None:
                outs.append(("agent", recalling.task))
        for msg_id in late:
            self._expect_late(msg_id)
        return outs + [out for msg_id in late for out in self.expire(
            msg_id, "Flora did not finish in time; the task goes on, and its result will come as a notification "
                    "and stay under its task id.")]

    def _expect_late(self, msg_id: str) -> None:
        """Keep the timed-out work's waiting entry, so its reply is kept when it comes."""
        waiting = self.waiting.get(msg_id)
        if waiting is None or not waiting.task_id or self._store is None:
            return
        self.late[msg_id] = waiting
        while len(self.late) > LATE_KEPT:  # the oldest first: dicts keep their order
            self.late.pop(next(iter(self.late)))

    def _kept_late(self, waiting: Waiting, reply: dict) -> list[Out]:
        """A reply that came after its person was told it took too long: kept as the task's result
        (a task of its own when the work was a chat answer, which has none) and as a notification."""
        assert self._store is not None
        reply = in_their_language(reply, waiting.content)
        kind = reply.get("message_type")
        if kind == "task_queued":  # it waits in the queue, which notifies its person when it ends
            return []
        text = m.reply_text(reply)
        try:
            if self._store.get_task(waiting.tenant_id, waiting.task_id) is None:
                failed = kind == "task_error"
                self._store.create_task(TaskRecord(
                    task_id=waiting.task_id, tenant_id=waiting.tenant_id, user_id=waiting.user_id,
                    content=waiting.content, msg_id=reply.get("msg_id", ""), intent=reply.get("intent") or "chat",
                    state=FAILED if failed else COMPLETED, error=reply.get("message", "") if failed else "",
                    result=None if failed else {"message": reply.get("message", ""), "reply": reply},
                    meta={"late": True}))
            what = waiting.content if len(waiting.content) <= 80 else waiting.content[:80] + "…"
            key = {"task_error": "queued_failed", "task_paused": "queued_waiting"}.get(kind, "queued_finished")
            note = self._store.add_notification(Notification(
                notification_id=m.new_id("note"), tenant_id=waiting.tenant_id, user_id=waiting.user_id,
                message=say(language_of(waiting.content), key, task_id=waiting.task_id, what=what, text=text),
                kind={"task_error": "task_failed", "task_paused": "task_paused"}.get(kind, "task_completed"),
                task_id=waiting.task_id, data={"result": reply.get("result"), "late": True}))
        except Exception as exc:  # the store is unreachable: the reply is lost, as it was before
            log.warning("could not keep the late reply of task %s: %s", waiting.task_id, exc,
                        extra={"tenant_id": waiting.tenant_id})
            return []
        self._kept(waiting, reply)
        return [("notify", m.notification(notification_id=note.notification_id, tenant_id=note.tenant_id,
                                          user_id=note.user_id, message=note.message, kind=note.kind,
                                          task_id=note.task_id, data=note.data))]

    def _deadline(self) -> float:
        return time.monotonic() + self._reply_timeout_s


def _worth_keeping(said: dict) -> bool:
    """A message with words, or a structured answer to a task."""
    return bool(said.get("content") or said.get("task_id"))


def memory_answer(reply: dict, language: str) -> str:
    """A ``memory_reply`` as the person reads it."""
    if reply.get("error"):
        off = "memory.enabled" in reply["error"]
        return say(language, "memory_off") if off else say(language, "memory_unavailable", reason=reply["error"])
    op = reply.get("op")
    if op == "list":
        memories = reply.get("memories") or []
        if not memories:
            return say(language, "memory_none")
        return say(language, "memory_list") + "\n" + "\n".join(f"- {r['fact']} ({r['memory_id']})" for r in memories)
    removed = reply.get("removed") or 0
    if op == "clear":
        return say(language, "memory_cleared", count=removed) if removed else say(language, "memory_none")
    return say(language, "memory_forgot", count=removed) if removed else say(language, "memory_not_found")


def in_their_language(reply: dict, said: str) -> dict:
    """A failure told to a person who wrote in Chinese, framed in Chinese: its own words (a
    capability's or a library's: "Connection refused") stay as they are inside."""
    text = reply.get("message") or ""
    if reply.get("message_type") != "task_error" or not text or language_of(said or "") != ZH or is_mostly(text, ZH):
        return reply
    return {**reply, "message": say(ZH, "task_failed", reason=text)}


def memory_owner(msg: dict) -> str:
    """Whose memory a message reads and adds to: the group's when it was said in a group chat
    (a member's own memories are not for a chat others read), else its sender's."""
    return msg.get("group") or msg["user_id"]
