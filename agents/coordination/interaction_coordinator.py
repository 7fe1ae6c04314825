"""InteractionCoordinator: what the InteractionActor decides, as a plain class.

It checks a ``user_input`` against the protocol, lets the ConversationManager decide what
the message is, and turns that decision into either an immediate reply or a message for
the AgentActor. Replies coming back from the AgentActor are matched to the waiting user
message by ``msg_id``. Returns ``(destination, message)`` pairs: ``"reply"`` (to the user
who sent ``msg_id``) or ``"agent"``.

Every turn — the message and the reply that answers it — is kept in the person's
conversation (``ConversationLog``), and the recent turns travel with new work, so the
understanding step and chat read a message in its context ("and tomorrow?").
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass

from capabilities.context.conversation_log import ConversationLog
from capabilities.context.conversation_manager import ConversationManager, Decision
from common import messages as m

log = logging.getLogger("flora.interaction")

Out = tuple[str, dict]


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


class InteractionCoordinator:
    def __init__(self, conversation: ConversationManager, *, default_tenant: str = "default",
                 reply_timeout_s: float = 120.0, log: ConversationLog | None = None):
        self._conversation = conversation
        self._log = log
        self._default_tenant = default_tenant
        self._reply_timeout_s = reply_timeout_s
        self.waiting: dict[str, Waiting] = {}

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
        if msg.get("session_id") and self._log is not None and self._log.owner_conflict(tenant, user,
                                                                                         msg["session_id"]):
            return [("reply", m.task_error(msg_id=msg_id, error_type="forbidden", field="session_id",
                                           message=f"Conversation {msg['session_id']} belongs to another user."))]
        conversation = ConversationLog.conversation_id(tenant, user, msg.get("channel"), msg.get("session_id"))
        decision = self._conversation.handle_user_input(msg)
        log.info("user input msg_id=%s user=%s action=%s task_id=%s", msg_id, user, decision.action,
                 decision.task_id, extra={"tenant_id": tenant, "task_id": decision.task_id})
        return [(to, self._recorded(msg, conversation, out) if to == "reply" else out)
                for to, out in self._act(msg, decision, conversation)]

    def _act(self, msg: dict, d: Decision, conversation: str) -> list[Out]:
        msg_id, tenant, user = msg["msg_id"], msg["tenant_id"], msg["user_id"]
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
        said = {k: msg.get(k) for k in ("content", "task_id", "parameters", "approve")}
        if d.action in ("parameter_completion", "resume_draft"):
            self.waiting[msg_id] = Waiting(tenant, user, msg["content"], d.task_id, self._deadline(),
                                           conversation, said)
            return [("agent", m.resume_task(task_id=d.task_id, msg_id=msg_id, tenant_id=tenant, user_id=user))]
        task_id = m.new_id("task")
        self.waiting[msg_id] = Waiting(tenant, user, d.content, task_id, self._deadline(), conversation, said)
        history = self._log.recent(tenant, user, conversation) if self._log is not None else []
        return [("agent", m.agent_task(task_id=task_id, msg_id=msg_id, tenant_id=tenant, user_id=user,
                                       content=d.content, intent=d.intent, capability=d.capability,
                                       channel=msg.get("channel"), history=history or None,
                                       pending_task_id=d.pending_task_id, stream=msg.get("stream") or None))]

    def is_waiting(self, msg_id: str) -> bool:
        return msg_id in self.waiting

    def on_backend_reply(self, msg: dict) -> list[Out]:
        """A reply from the AgentActor for a waiting user message."""
        waiting = self.waiting.pop(msg.get("msg_id", ""), None)
        if waiting is None:
            log.info("reply for msg_id=%s has no waiting user (answered elsewhere or timed out)", msg.get("msg_id"))
            return []
        if msg["message_type"] == "clarification" and msg.get("options"):
            self._conversation.record_clarification(tenant_id=waiting.tenant_id, user_id=waiting.user_id,
                                                    content=waiting.content, options=msg["options"])
        return [("reply", self._kept(waiting, msg))]

    def expire(self, msg_id: str, reason: str, error_type: str = "timeout") -> list[Out]:
        """Give up on one waiting message (the back end failed on it)."""
        waiting = self.waiting.pop(msg_id, None)
        if waiting is None:
            return []
        return [("reply", self._kept(waiting, m.task_error(msg_id=msg_id, error_type=error_type, retryable=True,
                                                           message=reason, task_id=waiting.task_id)))]

    def _recorded(self, msg: dict, conversation: str, reply: dict) -> dict:
        if self._log is not None and _worth_keeping(msg):
            self._log.record(msg["tenant_id"], msg["user_id"], conversation, msg, reply)
        return reply

    def _kept(self, waiting: Waiting, reply: dict) -> dict:
        if self._log is not None and waiting.conversation_id and waiting.said and _worth_keeping(waiting.said):
            self._log.record(waiting.tenant_id, waiting.user_id, waiting.conversation_id, waiting.said, reply)
        return reply

    def expire_tenant(self, tenant_id: str, reason: str) -> list[Out]:
        """Give up on every message waiting for the tenant's AgentActor (it died with them)."""
        lost = [msg_id for msg_id, w in self.waiting.items() if w.tenant_id == tenant_id]
        return [out for msg_id in lost for out in self.expire(msg_id, reason, "unavailable")]

    def expire_overdue(self, now: float | None = None) -> list[Out]:
        """Tell every user whose reply is overdue; the task itself goes on in the store."""
        now = time.monotonic() if now is None else now
        late = [msg_id for msg_id, w in self.waiting.items() if w.deadline <= now]
        return [out for msg_id in late for out in self.expire(
            msg_id, "Flora did not finish in time; the task goes on and its result is kept.")]

    def _deadline(self) -> float:
        return time.monotonic() + self._reply_timeout_s


def _worth_keeping(said: dict) -> bool:
    """A message with words, or a structured answer to a task."""
    return bool(said.get("content") or said.get("task_id"))
