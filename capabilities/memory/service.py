"""MemoryCapability: the registry's ``memory`` service — recall for prompts, facts from turns.

It joins the parts of long-term memory: the embedder (embedding.py), the Chroma store
(store.py), the distiller (distill.py) and the question writer (questions.py: each new or
changed fact is stored with the questions it answers, in English and Chinese, which recall
matches against). Every call names the tenant and the user; the
store works only in that person's collection.

``remember_turn`` is idempotent per source message: a message already distilled (whether
it gave facts, none, or a refused answer) writes nothing and does not call the model again.
A refused answer raises :class:`DistillationFailed` once, after the message is marked, so
the caller reports it once and a retry finds nothing to do.

Exceptions::

    MemoryError_ (store.py)
    ├── MemoryUnavailable      Chroma unreachable: reply without memory (``health`` says degraded)
    └── DistillationFailed     the model's answer for a turn was refused; reported once
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from capabilities.memory.distill import FactDistiller
from capabilities.memory.embedding import get_embedder
from capabilities.memory.questions import QuestionWriter
from capabilities.memory.store import MemoryError_, MemoryRecord, MemoryStore, MemoryUnavailable, Recalled

log = logging.getLogger("flora.memory")


class DistillationFailed(MemoryError_):
    def __init__(self, message_id: str, error: str):
        super().__init__(f"facts of message {message_id} could not be distilled: {error}")
        self.message_id = message_id
        self.error = error


@dataclass(frozen=True)
class Turn:
    """One exchange: what the person said and what Flora replied, with their message ids."""

    message: str
    reply: str = ""
    message_id: str = ""
    reply_id: str = ""


class MemoryCapability:
    def __init__(self, store: MemoryStore, distiller: FactDistiller | None = None, *, top_k: int = 5,
                 min_score: float | None = None, questions: QuestionWriter | None = None):
        self.store = store
        self._distiller = distiller
        self._questions = questions
        self.top_k = top_k
        # None: the embedding model's own floor, below which a memory has nothing to do with the message
        self.min_score = store.bears_on if min_score is None else min_score

    @classmethod
    def from_config(cls, config, llm=None) -> "MemoryCapability":
        """From a FloraConfig's ``memory`` section; ``llm`` distils facts (None: recall only)."""
        section = config.memory
        store = MemoryStore(get_embedder(section.embedding_model), backend=section.backend,
                            path=config.memory_path, url=section.chroma_url, max_fact_chars=section.max_fact_chars,
                            dedup_threshold=section.dedup_threshold)
        writer = QuestionWriter(llm, per_language=section.questions_per_language) \
            if llm is not None and section.questions_per_language else None
        return cls(store, FactDistiller(llm) if llm is not None else None, top_k=section.top_k,
                   min_score=section.min_score, questions=writer)

    # -- reading ---------------------------------------------------------------------
    def recall(self, tenant_id: str, user_id: str, query: str, k: int | None = None, *,
               floor: bool = True) -> list[Recalled]:
        """The person's ``k`` memories nearest ``query``, best first: for a prompt (``floor``),
        only those scoring at least ``min_score``; for a person searching, whatever they score."""
        return self.store.recall(tenant_id, user_id, query, k or self.top_k,
                                 min_score=self.min_score if floor else -1.0)

    def list(self, tenant_id: str, user_id: str) -> list[MemoryRecord]:
        return self.store.list(tenant_id, user_id)

    def get(self, tenant_id: str, user_id: str, memory_id: str) -> MemoryRecord | None:
        return self.store.get(tenant_id, user_id, memory_id)

    def count(self, tenant_id: str, user_id: str) -> int:
        return self.store.count(tenant_id, user_id)

    # -- writing ---------------------------------------------------------------------
    def remember_turn(self, tenant_id: str, user_id: str, turn: Turn, *,
                      questions: bool = True) -> list[MemoryRecord]:
        """Distil the turn and store its facts; the records written (created, merged or updated).
        ``questions``: write each new fact's questions now (False: the caller has them written
        later, with ``write_questions``, when someone waits for the facts)."""
        if self._distiller is None:
            raise RuntimeError("this memory service has no model to distil facts with")
        if not turn.message_id:
            raise ValueError("a turn needs the id of the person's message (distillation is idempotent per message)")
        if self.store.seen_sources(tenant_id, user_id, [turn.message_id]):
            log.debug("message %s of %s/%s was distilled before", turn.message_id, tenant_id, user_id)
            return []
        distilled = self._distiller.distill(turn.message, turn.reply, message_id=turn.message_id,
                                            reply_id=turn.reply_id)
        written: dict[str, MemoryRecord] = {}
        for fact in distilled.facts:
            done = self.store.remember(tenant_id, user_id, fact.fact, subject=fact.subject, kind=fact.kind,
                                       confidence=fact.confidence, source_message_ids=fact.source_message_ids)
            written[done.record.memory_id] = done.record
            if questions and self._questions is not None and self._needs_questions(tenant_id, user_id, done):
                self.store.set_questions(tenant_id, user_id, done.record.memory_id,
                                         self._questions.questions(done.record.fact))
        self.store.mark_sources(tenant_id, user_id, [turn.message_id])
        if distilled.error:
            raise DistillationFailed(turn.message_id, distilled.error)
        return list(written.values())

    def write_questions(self, tenant_id: str, user_id: str, memory_id: str) -> int:
        """Write the questions of a memory stored without them; how many were stored (0 when it is
        gone, has them already, or questions are off)."""
        record = self.store.get(tenant_id, user_id, memory_id)
        if self._questions is None or record is None or self.store.questions(tenant_id, user_id, memory_id):
            return 0
        return self.store.set_questions(tenant_id, user_id, memory_id, self._questions.questions(record.fact))

    def _needs_questions(self, tenant_id: str, user_id: str, done) -> bool:
        """A new or changed text needs its questions; a merge keeps the text it had, and its
        questions unless it has none (a stop came between the fact and its questions)."""
        return done.action != "merged" or not self.store.questions(tenant_id, user_id, done.record.memory_id)

    # -- forgetting ------------------------------------------------------------------
    def forget(self, tenant_id: str, user_id: str, memory_id: str) -> bool:
        return self.store.forget(tenant_id, user_id, memory_id)

    def forget_matching(self, tenant_id: str, user_id: str, text: str) -> list[MemoryRecord]:
        return self.store.forget_matching(tenant_id, user_id, text)

    def clear(self, tenant_id: str, user_id: str) -> int:
        return self.store.clear(tenant_id, user_id)

    # -- health ----------------------------------------------------------------------
    def health(self) -> str:
        """"ok", or "degraded: <why>" while Chroma cannot be reached."""
        try:
            self.store.ping()
        except MemoryUnavailable as exc:
            return f"degraded: {exc}"
        return "ok"
