"""How recall ranks a person's memories: by its fact and by the nearest of its questions.

A memory's score is ``(fact + QUESTION_WEIGHT × nearest question) / (1 + QUESTION_WEIGHT)``, a
weighted mean of cosines: the fact is what was said, a question only the model's guess at how
it will be asked; a memory without questions ranks by its fact alone. Measured in
bench/memory.py (docs/memory.md).

Recall asks Chroma for the ``CANDIDATES × k`` nearest facts and nearest questions, ids and
distances only, and :func:`shortlist` ranks every memory either names. A part that one query
did not bring counts as the lowest score that query did bring, which its own is not above
(when the query brought everything there is, a missing fact means the memory is gone and a
missing question that it has none). The store then fetches the shortlist with the facts'
vectors and scores each exactly by its fact (:meth:`Shortlist.score`).
"""

from __future__ import annotations

from dataclasses import dataclass

QUESTION_WEIGHT = 0.5
CANDIDATES = 4  # recall asks for this many times k facts and k questions
FETCH_SPARE = 3  # the shortlist holds k + this many: the exact fact scores may reorder them, a memory may be gone


@dataclass(frozen=True)
class Shortlist:
    memory_ids: list[str]  # best first, by the scores the two queries allow
    question_scores: dict[str, float]  # memory id -> its nearest question's cosine, where the query brought one
    question_floor: float | None  # what any other memory's nearest question scores at most; None: it has none

    def score(self, memory_id: str, fact: float) -> float:
        """The memory's score, given its fact's cosine to the query."""
        return fused(fact, self.question_scores.get(memory_id, self.question_floor))


def shortlist(fact_ids: list[str], fact_distances: list[float], question_memory_ids: list[str],
              question_distances: list[float], *, asked_for: int, size: int) -> Shortlist:
    """The ``size`` memories to fetch, from the facts query's hits and the questions query's
    (each question named by its memory's id), both made with ``n_results=asked_for``."""
    facts = _best_per_id(fact_ids, fact_distances)
    questions = _best_per_id(question_memory_ids, question_distances)
    fact_floor = _floor(fact_distances, asked_for)
    question_floor = _floor(question_distances, asked_for)
    candidates = facts if fact_floor is None else {**questions, **facts}
    ranked = sorted(candidates, key=lambda i: fused(facts.get(i, fact_floor), questions.get(i, question_floor)),
                    reverse=True)
    return Shortlist(ranked[:size], questions, question_floor)


def fused(fact: float, question: float | None) -> float:
    """A memory's recall score: its fact's cosine, moved towards its nearest question's."""
    if question is None:
        return fact
    return (fact + QUESTION_WEIGHT * question) / (1.0 + QUESTION_WEIGHT)


def _best_per_id(ids: list[str], distances: list[float]) -> dict[str, float]:
    """Each id's best cosine among a query's hits (one memory's questions may come back several times)."""
    best: dict[str, float] = {}
    for i, dist in zip(ids, distances):
        best[i] = max(best.get(i, -1.0), 1.0 - dist)
    return best


def _floor(distances: list[float], asked_for: int) -> float | None:
    """What an entry a query did not bring scores at most: the lowest score it brought, when it
    brought as many as asked for; None when it brought everything there is."""
    return 1.0 - max(distances) if len(distances) >= asked_for else None
