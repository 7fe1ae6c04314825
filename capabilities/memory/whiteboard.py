"""The whiteboard: the shared state of one task or plan (memory's second layer).

Facts found so far, a to-do list and decisions, written by a plan's steps, the expert panel
and the model (through the ``update_whiteboard`` capability), read by the same. A plan's
steps share their plan's board; any other task has its own. Lines live in the TaskStore
(``put_whiteboard_entry``), one row or hash field each, so two steps writing at once in
different processes never lose each other's lines; a line's id comes from its section and
text, so the same fact written twice is one line. Every change is a ``WHITEBOARD_UPDATED``
event of the board's task; the board is in the finished task's ``result`` (``whiteboard``,
see :mod:`capabilities.memory.results`) and in ``GET /v1/tasks/{id}``.

Exceptions::

    WhiteboardError     a line that cannot go on the board (empty, unknown section, board full)
"""

from __future__ import annotations

import hashlib
import time
from dataclasses import dataclass, field
from typing import Any, Iterable

from capabilities.base import CapabilityError, ExecutionContext, capability
from common.tasks.models import WHITEBOARD_SECTIONS, TaskRecord, WhiteboardEntry
from common.tasks.store import TaskStore
from events.event_bus import EventBus
from events.event_types import EventType

MAX_ENTRIES = 200  # lines on one board
MAX_TEXT_CHARS = 1000  # one line; longer text is cut with a mark
SOURCE = "whiteboard"
_HEADINGS = {
    "en": {"fact": "Facts found so far:", "todo": "To do:", "decision": "Decisions:", "note": "Notes:",
           "intro": "Shared notes of this task (its whiteboard):"},
    "zh": {"fact": "已知事实：", "todo": "待办：", "decision": "决定：", "note": "备注：",
           "intro": "本任务的共享笔记（白板）："},
}


class WhiteboardError(ValueError):
    """A line that cannot be written; the message says why."""


def entry_id(section: str, text: str) -> str:
    """The id of a line: the same section and text (ignoring case and spacing) is the same line."""
    normal = " ".join(text.split()).casefold()
    return "wb_" + hashlib.sha1(f"{section}\n{normal}".encode()).hexdigest()[:16]


def board_of(task: TaskRecord) -> str:
    """Whose board a task writes on: its plan's, for a plan's step; its own otherwise."""
    return task.meta.get("parent") or task.task_id


def task_board(store: TaskStore, tenant_id: str, task_id: str) -> str:
    """The board of a stored task (its own id when the task is not found)."""
    task = store.get_task(tenant_id, task_id)
    return board_of(task) if task is not None else task_id


@dataclass
class BoardChange:
    """What one write did, as the ``WHITEBOARD_UPDATED`` event records it."""

    added: list[dict] = field(default_factory=list)
    done: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    unknown: list[str] = field(default_factory=list)  # ids or to-dos named that are not on the board

    def __bool__(self) -> bool:
        return bool(self.added or self.done or self.removed)

    def to_dict(self) -> dict:
        return {"added": self.added, "done": self.done, "removed": self.removed, "unknown": self.unknown}


class Whiteboard:
    """Reads and writes boards in the store and records each change as an event."""

    def __init__(self, store: TaskStore, events: EventBus | None = None, *, max_entries: int = MAX_ENTRIES,
                 clock=time.time):
        self._store = store
        self._events = events or EventBus(store)
        self._max_entries = max_entries
        self._clock = clock

    def read(self, tenant_id: str, board_id: str) -> list[WhiteboardEntry]:
        return self._store.whiteboard(tenant_id, board_id)

    def write(self, tenant_id: str, board_id: str, *, facts: Iterable[str] = (), todo: Iterable[str] = (),
              decisions: Iterable[str] = (), notes: Iterable[str] = (), done: Iterable[str] = (),
              remove: Iterable[str] = (), author: str = "", user_id: str = "") -> BoardChange:
        """Add lines, tick to-dos off and remove lines (by id, or a to-do by its text); record
        the change as one event. Raises WhiteboardError before writing anything when a line is
        empty or the board would hold more than ``max_entries`` lines."""
        new = [(section, _bounded(text)) for section, texts in
               (("fact", facts), ("todo", todo), ("decision", decisions), ("note", notes)) for text in texts]
        if any(not text for _, text in new):
            raise WhiteboardError("A whiteboard line cannot be empty.")
        board = {entry.entry_id: entry for entry in self.read(tenant_id, board_id)}
        fresh = {entry_id(section, text) for section, text in new} - set(board)
        if len(board) + len(fresh) > self._max_entries:
            raise WhiteboardError(f"The whiteboard holds at most {self._max_entries} lines; "
                                  f"it has {len(board)}. Remove some first.")
        change, now = BoardChange(), self._clock()
        for i, (section, text) in enumerate(new):  # a microsecond apart: the board keeps the order they came in
            line = WhiteboardEntry(tenant_id, board_id, entry_id(section, text), section, text, author=author,
                                   created_at=now + i / 1e6, updated_at=now)
            stored, added = self._store.put_whiteboard_entry(line)
            if added:
                change.added.append({"entry_id": stored.entry_id, "section": section, "text": text})
                board[stored.entry_id] = stored
        for named in done:
            line = _find(board, named, section="todo")
            if line is None:
                change.unknown.append(named)
            elif not line.done:
                self._store.put_whiteboard_entry(WhiteboardEntry(**{**line.to_dict(), "done": True, "updated_at": now}))
                change.done.append(line.entry_id)
        for named in remove:
            line = _find(board, named)
            if line is not None and self._store.remove_whiteboard_entry(tenant_id, board_id, line.entry_id):
                change.removed.append(line.entry_id)
            else:
                change.unknown.append(named)
        if change:
            self._events.publish_task_event(task_id=board_id, event_type=EventType.WHITEBOARD_UPDATED, source=SOURCE,
                                            tenant_id=tenant_id, user_id=user_id,
                                            data={"author": author, **change.to_dict()})
        return change

    def view(self, tenant_id: str, board_id: str) -> dict:
        return view(self.read(tenant_id, board_id))


def view(entries: Iterable[WhiteboardEntry]) -> dict:
    """A board as the API and a task's result show it; empty sections left out."""
    shown: dict[str, list] = {}
    for entry in entries:
        line: dict[str, Any] = {"id": entry.entry_id, "text": entry.text}
        if entry.section == "todo":
            line["done"] = entry.done
        if entry.author:
            line["by"] = entry.author
        shown.setdefault(_plural(entry.section), []).append(line)
    return shown


def render(entries: Iterable[WhiteboardEntry], language: str = "en") -> str:
    """The board as a prompt section ("" when empty), headed in ``language``."""
    words = _HEADINGS.get(language, _HEADINGS["en"])
    lines: list[str] = []
    for section in WHITEBOARD_SECTIONS:
        picked = [e for e in entries if e.section == section]
        if picked:
            lines.append(words[section])
            lines += [f"- [{'x' if e.done else ' '}] {e.text}" if section == "todo" else f"- {e.text}" for e in picked]
    return "\n".join([words["intro"], *lines]) if lines else ""


def _bounded(text: Any) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= MAX_TEXT_CHARS else text[:MAX_TEXT_CHARS - 1] + "…"


def _find(board: dict[str, WhiteboardEntry], named: str, section: str | None = None) -> WhiteboardEntry | None:
    """A line by its id, or by its text (any section, or ``section``)."""
    if named in board:
        return board[named]
    sections = [section] if section else list(WHITEBOARD_SECTIONS)
    for candidate in sections:
        found = board.get(entry_id(candidate, named))
        if found is not None:
            return found
    return None


def _plural(section: str) -> str:
    return section if section == "todo" else section + "s"


# --------------------------------------------------------------------------- the capability
_LINES = {"type": "array", "items": {"type": "string", "minLength": 1, "maxLength": 4000}, "maxItems": 50,
          "default": []}

PARAMETERS = {
    "x-flora-description": {"zh": "在当前任务（或计划）的白板上记下事实、待办和决定，勾掉或删除条目"},
    "type": "object",
    "properties": {
        "facts": {**_LINES, "description": "Facts found so far, one per item."},
        "todo": {**_LINES, "description": "Things still to do, one per item."},
        "decisions": {**_LINES, "description": "Decisions taken, one per item."},
        "notes": {**_LINES, "description": "Anything else worth keeping for the later steps."},
        "done": {**_LINES, "description": "To-dos that are done: their ids or their exact text."},
        "remove": {**_LINES, "description": "Lines to take off the board: their ids or their exact text."},
    },
    "additionalProperties": False,
}


@capability(
    name="update_whiteboard",
    description="Write on the current task's (or plan's) whiteboard: facts found, to-dos, decisions, notes; "
                "tick to-dos off or remove lines. Returns the whole board.",
    parameters=PARAMETERS,
    keywords=("whiteboard", "白板"),
    routable=False,  # written by a task's steps and the model, not asked for as a task of its own
    agent_tool=True,  # the agent loop keeps its notes on the board
)
def update_whiteboard(context: ExecutionContext, facts: list | None = None, todo: list | None = None,
                      decisions: list | None = None, notes: list | None = None, done: list | None = None,
                      remove: list | None = None) -> dict:
    if context.store is None:
        raise CapabilityError("The whiteboard needs Flora's task store, and this run has none.",
                              error_type="unavailable")
    board_id = task_board(context.store, context.tenant_id, context.task_id)
    board = Whiteboard(context.store, context.events)
    try:
        change = board.write(context.tenant_id, board_id, facts=facts or (), todo=todo or (),
                             decisions=decisions or (), notes=notes or (), done=done or (), remove=remove or (),
                             author=f"update_whiteboard:{context.task_id}", user_id=context.user_id)
    except WhiteboardError as exc:
        raise CapabilityError(str(exc), error_type="invalid_parameter") from exc
    summary = f"Whiteboard: {len(change.added)} added, {len(change.done)} done, {len(change.removed)} removed"
    if change.unknown:
        summary += f"; not on the board: {', '.join(change.unknown)}"
    return {"message": summary + ".", "board_id": board_id, "change": change.to_dict(),
            "whiteboard": board.view(context.tenant_id, board_id)}
