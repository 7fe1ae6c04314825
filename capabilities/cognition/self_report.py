"""Answers about Flora itself, read from the store and never from the model.

``StatusReport.answer`` says what Flora is doing for one person: their tasks today by
state, what waits for their answer, what runs, their loop tasks with the next run.
``SystemCommands.run`` carries out a system command a person sent in a chat:

==============  =================================================================
clear_history   deletes the person's conversation history (their stored conversations)
status, help    the status report; what Flora can do
shutdown        refused: stopping Flora is an operator's act (a signal to the process)
switch_model    refused with how an operator does it (``llm.model``, then a restart)
==============  =================================================================

A chat user has no operator rights: what would change Flora for everyone is refused with
the reason and the way an operator does it.
"""

from __future__ import annotations

import time
from collections import Counter
from typing import Callable

from common.i18n import join, say, state_name
from common.tasks.models import PAUSED_STATES, RUNNING
from common.tasks.store import TaskStore

RECENT_TASKS = 200
SHOWN = 5


class StatusReport:
    def __init__(self, store: TaskStore, loops=None, *, model: str = ""):
        self._store = store
        self._loops = loops  # LoopService, or None where loop tasks are not configured
        self._model = model

    def answer(self, tenant_id: str, user_id: str, language: str, *, now: float | None = None) -> str:
        now = time.time() if now is None else now
        tasks = [t for t in self._store.list_tasks(tenant_id, user_id=user_id, limit=RECENT_TASKS)
                 if not t.meta.get("parent")]  # a plan's steps are counted with their plan
        lines = [say(language, "status_title")]
        if not tasks:
            lines.append(say(language, "status_no_tasks"))
        else:
            midnight = time.mktime(time.localtime(now)[:3] + (0, 0, 0, 0, 0, -1))
            today = [t for t in tasks if t.created_at >= midnight]
            lines.append(say(language, "status_tasks", today=len(today), summary=_summary(language, today)))
            if len(tasks) > len(today):
                lines.append(say(language, "status_total", total=len(tasks), summary=_summary(language, tasks)))
        waiting = [t for t in tasks if t.state in PAUSED_STATES]
        running = [t for t in tasks if t.state == RUNNING]
        if waiting:
            lines.append(say(language, "status_waiting"))
            lines += [f"- {t.task_id}: {t.capability or '?'} — {', '.join(m['name'] for m in t.missing) or '…'}"
                      for t in waiting[:SHOWN]]
        if running:
            lines.append(say(language, "status_running"))
            lines += [f"- {t.task_id}: {t.capability or '?'}" for t in running[:SHOWN]]
        if not waiting and not running:
            lines.append(say(language, "status_idle"))
        lines += self._loop_lines(tenant_id, user_id, language)
        if self._model:
            lines.append(say(language, "status_model", model=self._model))
        return "\n".join(lines)

    def _loop_lines(self, tenant_id: str, user_id: str, language: str) -> list[str]:
        if self._loops is None:
            return []
        loops = self._loops.list(tenant_id, user_id)
        active = [lt for lt in loops if lt.state == "active"]
        lines = [say(language, "status_loops")] + [f"- {lt.loop_task_id}: {self._loops.describe(lt, language)}"
                                                     for lt in active[:SHOWN]] if active else \
            [say(language, "status_no_loops")]
        paused = [lt for lt in loops if lt.state == "paused"]
        if paused:
            lines.append(say(language, "status_paused_loops", count=len(paused)))
        return lines


def _summary(language: str, tasks) -> str:
    counts = Counter(t.state for t in tasks)
    return join(language, [f"{state_name(language, state)} {n}" for state, n in counts.most_common()]) or "0"


class SystemCommands:
    def __init__(self, store: TaskStore, status: StatusReport, help_text: Callable[[str], str], *,
                 model: str = "", models: list[str] | None = None):
        self._store = store
        self._status = status
        self._help_text = help_text
        self._model = model
        self._models = models or []

    def run(self, command: str, tenant_id: str, user_id: str, language: str) -> str:
        if command == "clear_history":
            return say(language, "history_cleared", count=self.clear_history(tenant_id, user_id))
        if command == "shutdown":
            return say(language, "operator_only", what=say(language, "shutdown_what"),
                       how=say(language, "shutdown_how"))
        if command == "switch_model":
            how = say(language, "switch_model_how", current=self._model or "?",
                      models=", ".join(self._models) or "?")
            return say(language, "operator_only", what=say(language, "switch_model_what"), how=how)
        if command == "help":
            return self._help_text(language)
        return self._status.answer(tenant_id, user_id, language)

    def clear_history(self, tenant_id: str, user_id: str) -> int:
        """Delete every stored conversation of this person; how many messages went."""
        removed = 0
        for session in self._store.list_sessions(tenant_id, user_id, limit=10_000):
            if self._store.delete_session(tenant_id, session.session_id):
                removed += len(session.messages)
        return removed
