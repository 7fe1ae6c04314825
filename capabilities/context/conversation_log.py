"""ConversationLog: the turns of a person's conversation, kept in the TaskStore.

A conversation is (tenant, user, channel, conversation id). A client that keeps several
conversations names one with ``session_id`` (the HTTP API's sessions); otherwise each user
has one conversation per channel, with an id derived from who they are. Each turn is stored
as two session messages — what the person said and Flora's reply, as the HTTP API and the
browser client read them — so it survives restarts and any node can read it.

``recent`` gives the last turns as ``{role, content}`` for the understanding step and chat,
within a character budget, newest kept first. Recording a turn and reading the recent ones
touch only the messages they need, so a message costs the same however long the conversation.

Secret parameters (an API key the person gave) are kept masked in the turns
(:mod:`capabilities.secrets`): the task has the real value in its record, the history does not.
"""

from __future__ import annotations

import hashlib
import logging
import time

from capabilities.secrets import SecretMasker
from common import messages as m
from common.tasks.models import Standing
from common.tasks.store import TaskStore

log = logging.getLogger("flora.conversation")

TITLE_LENGTH = 60
RECENT_MESSAGES = 8
RECENT_CHARS = 2000
REPLY_CHARS = 600  # of a long reply (a task's result), what later turns need to see


class ConversationLog:
    def __init__(self, store: TaskStore, *, recent_messages: int = RECENT_MESSAGES, recent_chars: int = RECENT_CHARS,
                 secrets: SecretMasker | None = None):
        self._store = store
        self._secrets = secrets
        self._recent_messages = recent_messages
        self._recent_chars = recent_chars

    @staticmethod
    def conversation_id(tenant_id: str, user_id: str, channel: str | None = None,
                        session_id: str | None = None) -> str:
        if session_id:
            return session_id
        key = f"{tenant_id}\x00{user_id}\x00{channel or 'direct'}".encode()
        return "conv_" + hashlib.sha256(key).hexdigest()[:20]

    def standing(self, tenant_id: str, user_id: str, conversation_id: str) -> Standing:
        """What the person's new message finds: the conversation's owner and last messages (for
        ``history``), whether they have an open draft or a paused task; one read."""
        return self._store.standing(tenant_id, user_id, conversation_id, self._recent_messages)

    def recent(self, tenant_id: str, user_id: str, conversation_id: str) -> list[dict]:
        found = self.standing(tenant_id, user_id, conversation_id)
        return self.history(user_id, found.owner, found.messages)

    def history(self, user_id: str, owner: str | None, messages: list[dict]) -> list[dict]:
        """The recent turns of a conversation with ``messages`` last, as ``user_id`` may see
        them (none of another person's conversation)."""
        if owner != user_id:
            return []
        turns: list[dict] = []
        budget = self._recent_chars
        for message in reversed(messages):
            content = str(message.get("content", ""))[:REPLY_CHARS]
            if not content or message.get("role") not in ("user", "assistant"):
                continue
            if len(content) > budget:
                break
            budget -= len(content)
            turns.append({"role": message["role"], "content": content})
        return turns[::-1]

    def mask(self, value):
        """``value`` with what looks like a secret masked (for text kept elsewhere: memories)."""
        return value if self._secrets is None else self._secrets.masked(value)

    def _masked(self, tenant_id: str, turn: list[dict], said: dict, reply: dict) -> list[dict]:
        """The turn with its secrets masked: those of the tasks it speaks of (their records hold
        the values the person gave), and those :class:`SecretMasker` finds on its own."""
        known: list[str] = []
        speaks_of = {said.get("task_id"), reply.get("task_id")} - {None, ""}
        if reply.get("task_id") != said.get("task_id") and self._secrets.keeps_none(reply.get("capability")):
            speaks_of.discard(reply.get("task_id"))  # the reply names its task's capability, which has no secrets
        for task_id in speaks_of:
            try:
                task = self._store.get_task(tenant_id, str(task_id))
            except Exception as exc:  # the turn is still masked by what it says itself
                log.warning("could not read task %s to mask its secrets: %s", task_id, exc)
                continue
            if task is not None:
                known += self._secrets.secret_values(task.capability, task.parameters)
                if said.get("task_id") == task_id:
                    known += self._secrets.secret_values(task.capability, said.get("parameters"))
        return self._secrets.masked(turn, known)

    def record(self, tenant_id: str, user_id: str, conversation_id: str, said: dict, reply: dict) -> None:
        """Keep one turn: the person's message and Flora's reply."""
        now = time.time()
        asked = {"role": "user", "content": said.get("content", ""), "at": now}
        asked.update({k: said[k] for k in ("task_id", "parameters", "approve", "always_allow")
                      if said.get(k) is not None})
        answered = {"role": "assistant", "content": m.reply_text(reply), "reply": reply, "at": time.time()}
        if self._secrets is not None:
            asked, answered = self._masked(tenant_id, [asked, answered], said, reply)
        title = (str(asked.get("content", "")).strip() or "Conversation")[:TITLE_LENGTH]
        # the conversation's first turn makes it, the person's, in the same step
        self._store.append_to_session(tenant_id, conversation_id, [asked, answered], title=title, user_id=user_id)
