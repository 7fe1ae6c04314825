"""hubness: a fact near every typical question is discounted when recall orders memories."""

import numpy as np
import pytest

from capabilities.memory import hubness
from capabilities.memory.hubness import TYPICAL_QUESTIONS, Hubness, discounted


class _AxisEmbedder:
    """Each typical question on an axis of its own: a fact's cosines to them are its coordinates."""
    name = "axes"

    def __init__(self, dims: int):
        self.dims, self.calls = dims, 0

    def embed_queries(self, texts):
        self.calls += 1
        return np.eye(len(texts), self.dims, dtype=np.float32)


def test_hubness_is_the_mean_cosine_to_the_nearest_typical_questions():
    embedder = _AxisEmbedder(4)
    hub = Hubness(embedder, questions=("a", "b", "c", "d"), nearest=2)
    facts = np.array([[0.9, 0.1, 0.3, 0.0], [0.0, 0.0, 0.0, 1.0]], dtype=np.float32)
    assert hub.of(facts) == pytest.approx([0.6, 0.5])  # (0.9 + 0.3) / 2, (1.0 + 0.0) / 2
    hub.of(facts)
    assert embedder.calls == 1  # the typical questions are embedded once


def test_the_typical_questions_ask_in_both_languages():
    chinese = [q for q in TYPICAL_QUESTIONS if any("\u4e00" <= ch <= "\u9fff" for ch in q)]
    assert 0 < len(chinese) < len(TYPICAL_QUESTIONS) and len(set(TYPICAL_QUESTIONS)) == len(TYPICAL_QUESTIONS)
    assert hubness.NEAREST <= len(chinese)


def test_discounting_orders_by_score_less_weighted_hubness():
    assert discounted(0.80, 0.4) == pytest.approx(0.80 - hubness.WEIGHT * 0.4)
    assert discounted(0.80, 0.6) < discounted(0.79, 0.4)


def test_recall_puts_the_less_hub_like_of_two_equal_matches_first_and_reports_their_cosines(store, embedder, monkeypatch):
    facts = ["I keep bees on my roof", "My sister Ana lives in Lisbon"]
    vectors = embedder.embed_passages(facts)
    hive, sister = store.import_facts("acme", "li", facts, vectors=vectors)
    query = (vectors[0] + vectors[1]) / np.linalg.norm(vectors[0] + vectors[1])  # as near to one as to the other
    by_fact = {tuple(np.round(v, 5)): h for v, h in zip(vectors, (0.9, 0.2))}  # the bees a hub, the sister not
    monkeypatch.setattr(store._hubness, "of", lambda rows: np.array([by_fact[tuple(np.round(r, 5))] for r in rows]))
    hits = store.recall_vector("acme", "li", query, 2)
    assert [h.record.memory_id for h in hits] == [sister.memory_id, hive.memory_id]
    assert [h.score for h in hits] == pytest.approx([float(query @ vectors[1]), float(query @ vectors[0])], abs=1e-4)
    by_fact = {tuple(np.round(v, 5)): h for v, h in zip(vectors, (0.2, 0.9))}  # and the other way round
    assert [h.record.memory_id for h in store.recall_vector("acme", "li", query, 2)] == [hive.memory_id, sister.memory_id]


def test_recall_with_the_real_typical_questions_still_finds_a_paraphrased_fact(store):
    store.import_facts("acme", "li", ["I'm a backend engineer at a logistics startup", "我对芒果过敏",
                                      "My brother lives in Toronto", "I play the cello in a community orchestra"])
    assert store.recall("acme", "li", "哪种水果我吃不了？", 1)[0].record.fact == "我对芒果过敏"
    assert store.recall("acme", "li", "which instrument do I play?", 1)[0].record.fact.startswith("I play the cello")
