"""The agent's transcript: what the loop has done for a task, kept with the task.

The transcript is the loop's only memory. It lives in the task record (``meta["agent"]``),
so the handler is re-entrant: after a pause for approval or an answer, after a restart, on
any node, it reads the transcript and goes on from the last entry. A call is written down
as ``started`` before its tool runs and ``done`` after, so a call that was under way when
its process died is never run again (the model is told its outcome is unknown).

Entries, in order::

    {"kind": "call", "call_id", "tool", "arguments", "status", "ok", "result", "error", "elapsed_ms"}
        status: proposed → (awaiting_approval → approved) → started → done
    {"kind": "invalid", "reply", "error"}      a model reply that was not a usable call
    {"kind": "ask", "question", "answer"}      a question put to the person (answer: None until given)
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

META_KEY = "agent"

PROPOSED, AWAITING_APPROVAL, APPROVED, STARTED, DONE = "proposed", "awaiting_approval", "approved", "started", "done"


@dataclass
class Transcript:
    request: str = ""
    entries: list[dict] = field(default_factory=list)
    seconds: float = 0.0  # running time spent so far, over every run of the handler
    tokens: int = 0  # model tokens spent so far
    final: str | None = None
    stopped: str | None = None  # why the loop ended before an answer: steps, seconds, tokens, invalid, context
    tools: list[str] | None = None  # the tools offered for this request, chosen once (selection.py)

    @classmethod
    def from_meta(cls, meta: dict, request: str) -> "Transcript":
        kept = (meta or {}).get(META_KEY)
        if not isinstance(kept, dict):
            return cls(request=request)
        return cls(request=kept.get("request", request), entries=list(kept.get("entries", [])),
                   seconds=float(kept.get("seconds", 0.0)), tokens=int(kept.get("tokens", 0)),
                   final=kept.get("final"), stopped=kept.get("stopped"),
                   tools=list(kept["tools"]) if isinstance(kept.get("tools"), list) else None)

    def to_dict(self) -> dict:
        return asdict(self)

    # -- reading -------------------------------------------------------------------------
    @property
    def calls(self) -> list[dict]:
        return [e for e in self.entries if e["kind"] == "call"]

    @property
    def steps(self) -> int:
        """Tool calls made or under way: what ``max_steps`` counts."""
        return len(self.calls)

    def invalid_in_a_row(self) -> int:
        count = 0
        for entry in reversed(self.entries):
            if entry["kind"] != "invalid":
                break
            count += 1
        return count

    @property
    def last(self) -> dict | None:
        return self.entries[-1] if self.entries else None

    def next_call_id(self) -> str:
        return f"call_{self.steps + 1}"

    # -- writing -------------------------------------------------------------------------
    def add_call(self, tool: str, arguments: dict) -> dict:
        entry = {"kind": "call", "call_id": self.next_call_id(), "tool": tool, "arguments": arguments,
                 "status": PROPOSED, "ok": None, "result": None, "error": None, "elapsed_ms": None}
        self.entries.append(entry)
        return entry

    def add_invalid(self, reply: str, error: str) -> None:
        self.entries.append({"kind": "invalid", "reply": reply[:500], "error": error[:500]})

    def add_ask(self, question: str) -> None:
        self.entries.append({"kind": "ask", "question": question, "answer": None})


class TranscriptKeeper:
    """Reads and writes a task's transcript in the TaskStore (or keeps it in memory when
    there is no store, as in a unit test of the loop alone)."""

    def __init__(self, store: Any, tenant_id: str, task_id: str):
        self._store, self._tenant, self._task = store, tenant_id, task_id
        self._kept: dict = {}

    def load(self, request: str) -> Transcript:
        if self._store is None:
            return Transcript.from_meta(self._kept, request)
        task = self._store.get_task(self._tenant, self._task)
        return Transcript.from_meta(task.meta if task is not None else {}, request)

    def save(self, transcript: Transcript) -> None:
        if self._store is None:
            self._kept = {META_KEY: transcript.to_dict()}
            return
        task = self._store.get_task(self._tenant, self._task)
        if task is None:
            return  # the task was deleted meanwhile: nothing to keep the transcript with
        self._store.update_task(self._tenant, self._task, meta={**task.meta, META_KEY: transcript.to_dict()})
