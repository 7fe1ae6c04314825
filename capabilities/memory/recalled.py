"""Recalled memories as the model reads them, in every prompt that gets them.

Before new work, the InteractionCoordinator asks the MemoryActor for the person's memories
that bear on the message; they travel with the work as ``memories`` (``[{"memory_id",
"fact"}]``) and are read by the understanding step (which capability, or chat), the planner
(values a step may take from what is known), chat, and the agent loop (a task records them
in ``meta["memories"]``, so a pause or a restart keeps them). One form for all of them:
at most ``MAX_MEMORIES`` facts of at most ``MAX_FACT_CHARS`` characters each, one per line,
under an introduction that says what they are and that they are all that is known.
"""

from __future__ import annotations

MAX_MEMORIES = 8
MAX_FACT_CHARS = 300  # a long fact is cut for a prompt (the stored fact keeps its text)
# a small model reads "which team do I support?" as asked of itself and answers "I" for "我是做什么
# 工作的？": the introduction says whose "I" it is, and that the facts count for advice too
INTRO = ("What you remember about the person you are talking to (\"the person\" is them), from earlier "
         "conversations; it is all you know of them. In their message \"I\", \"me\" and \"my\" (我) mean them, "
         "not you: when they ask about themselves, answer from these facts and call them \"you\" (你); when the "
         "facts bear on what they ask for, take them into account:")
SHORT_INTRO = "Known about the person:"


def facts(memories) -> list[dict]:
    """The recalled memories worth showing: ``{"memory_id", "fact"}``, at most ``MAX_MEMORIES``,
    each fact cut to ``MAX_FACT_CHARS``. Anything that is not such a record is left out."""
    kept = []
    for record in memories or []:
        if not isinstance(record, dict):
            continue
        fact = " ".join(str(record.get("fact") or "").split())
        if not fact:
            continue
        if len(fact) > MAX_FACT_CHARS:
            fact = fact[:MAX_FACT_CHARS - 1] + "…"
        kept.append({"memory_id": str(record.get("memory_id") or ""), "fact": fact})
        if len(kept) == MAX_MEMORIES:
            break
    return kept


def block(memories, intro: str = INTRO) -> str:
    """The facts under ``intro``, one per line; "" when there are none."""
    lines = [f"- {r['fact']}" for r in facts(memories)]
    return intro + "\n" + "\n".join(lines) if lines else ""
