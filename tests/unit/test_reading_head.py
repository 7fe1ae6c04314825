"""The head trained on the example bank (capabilities/cognition/reading_head.py) and its part in
the reading (SemanticReader's ``mix``)."""

from __future__ import annotations

import numpy as np
import pytest

from capabilities.cognition import reading_head, semantic
from capabilities.cognition.reading_head import ReadingHead
from capabilities.cognition.semantic import SemanticReader, Utterance
from tests.support.words_embedder import WordsEmbedder


def blobs(per_label: int = 12, dim: int = 16, seed: int = 3) -> tuple[np.ndarray, list[str]]:
    """Unit vectors in three clusters, one per reading: a bank a linear head must read right."""
    rng = np.random.default_rng(seed)
    centres = np.eye(dim)[:3] * 3
    vectors, labels = [], []
    for centre, label in zip(centres, ("chat/greeting", "loop_op/pause", "unsupported/delivery")):
        points = centre + rng.normal(size=(per_label, dim))
        vectors.append(points / np.linalg.norm(points, axis=1, keepdims=True))
        labels += [label] * per_label
    return np.concatenate(vectors).astype(np.float32), labels


def test_a_small_bank_is_read_right_and_each_reading_has_a_probability():
    vectors, labels = blobs()
    head = reading_head.train(vectors, labels)
    assert head.labels == ("chat/greeting", "loop_op/pause", "unsupported/delivery")
    p = head.probabilities(vectors)
    assert p.shape == (len(labels), 3)
    np.testing.assert_allclose(p.sum(axis=1), 1.0, rtol=1e-5)
    assert [head.labels[i] for i in p.argmax(axis=1)] == labels
    unseen, _ = blobs(per_label=5, seed=11)  # the same clusters, new points
    assert [head.labels[i] for i in head.probabilities(unseen).argmax(axis=1)] == \
        ["chat/greeting"] * 5 + ["loop_op/pause"] * 5 + ["unsupported/delivery"] * 5


def test_training_is_deterministic():
    vectors, labels = blobs()
    first, second = reading_head.train(vectors, labels), reading_head.train(vectors, labels)
    np.testing.assert_array_equal(first.weights, second.weights)
    np.testing.assert_array_equal(first.bias, second.bias)


def test_a_temperature_softens_the_probabilities_without_changing_their_order():
    vectors, labels = blobs()
    head = reading_head.train(vectors, labels)
    sharp, soft = head.probabilities(vectors[:1]), head.probabilities(vectors[:1], temperature=2.0)
    assert soft.max() < sharp.max() and soft.argmax() == sharp.argmax()


def test_a_bank_of_one_reading_reads_everything_as_it():
    head = reading_head.train(np.eye(4, dtype=np.float32), ["chat/thanks"] * 4)
    assert head.labels == ("chat/thanks",) and head.probabilities(np.ones(4) / 2).tolist() == [[1.0]]


def test_the_head_is_kept_on_disk_and_a_changed_bank_trains_a_new_one(tmp_path, monkeypatch):
    vectors, labels = blobs()
    texts = [f"sentence {i}" for i in range(len(labels))]
    trained = []
    real = reading_head.train
    monkeypatch.setattr(reading_head, "train", lambda *a, **k: trained.append(1) or real(*a, **k))

    first = reading_head.cached("words", texts, labels, vectors, tmp_path)
    again = reading_head.cached("words", texts, labels, vectors, tmp_path)
    assert len(trained) == 1  # the second start read it back
    np.testing.assert_array_equal(first.weights, again.weights)
    assert len(list(tmp_path.glob("words.head-*.npz"))) == 1

    relabelled = labels[:-1] + ["chat/greeting"]
    reading_head.cached("words", texts, relabelled, vectors, tmp_path)
    reading_head.cached("words", texts[:-1] + ["another sentence"], labels, vectors, tmp_path)
    reading_head.cached("words", texts, labels, vectors, tmp_path, l2=0.1)
    assert len(trained) == 4  # a reading, a text or a setting changed: trained anew each time


def test_an_unreadable_kept_head_is_trained_again_and_an_unwritable_cache_only_costs_the_training(tmp_path):
    vectors, labels = blobs()
    texts = [str(i) for i in range(len(labels))]
    file = tmp_path / f"words.head-{reading_head.key('words', texts, labels)}.npz"
    file.write_bytes(b"not a head")
    assert reading_head.cached("words", texts, labels, vectors, tmp_path).labels == tuple(dict.fromkeys(labels))
    blocked = tmp_path / "file"
    blocked.write_text("not a folder")
    assert isinstance(reading_head.cached("words", texts, labels, vectors, blocked / "sub"), ReadingHead)


def test_only_the_newest_heads_of_a_model_are_kept(tmp_path):
    vectors, labels = blobs(per_label=3)
    for i in range(reading_head.KEPT + 3):
        reading_head.cached("words", [f"{i} {j}" for j in range(len(labels))], labels, vectors, tmp_path)
    assert len(list(tmp_path.glob("words.head-*.npz"))) == reading_head.KEPT


# -- in the reader -------------------------------------------------------------------------------

BANK = [Utterance("pause the gym reminder", "loop_op", "pause"),
        Utterance("pause my water reminder", "loop_op", "pause"),
        Utterance("hold the water reminder for now", "loop_op", "pause"),
        Utterance("delete the gym reminder", "loop_op", "delete"),
        Utterance("delete my water reminder", "loop_op", "delete"),
        Utterance("what is a reminder anyway", "chat", "knowledge"),
        Utterance("thanks a lot", "chat", "thanks"),
        Utterance("thanks so much", "chat", "thanks"),
        Utterance("where is my parcel", "unsupported", "delivery"),
        Utterance("is my parcel here yet", "unsupported", "delivery")]


@pytest.fixture()
def fresh(tmp_path):
    semantic._memo.clear()
    return tmp_path


def test_the_reader_mixes_the_head_into_the_vote_and_names_a_kind(fresh):
    mixed = SemanticReader(WordsEmbedder(), BANK, k=3, cache_dir=fresh)
    assert mixed.head is not None and set(mixed.head.labels) == {f"{u.family}/{u.kind}" for u in BANK}
    reading = mixed.read("please delete the gym reminder")
    assert (reading.family, reading.kind) == ("loop_op", "delete") and reading.sure()
    assert mixed.read("thanks").family == "chat"
    vote = SemanticReader(WordsEmbedder(), BANK, k=3, cache_dir=fresh, mix=0.0)
    assert vote.head is None and vote.read("please delete the gym reminder").family == "loop_op"
    assert 0 < reading.share <= 1


def test_a_family_the_situation_rules_out_gets_nothing_from_the_head_either(fresh):
    reader = SemanticReader(WordsEmbedder(), BANK, k=3, cache_dir=fresh, mix=1.0)
    assert reader.read("pause the gym reminder").family == "loop_op"
    ruled_out = reader.read("pause the gym reminder", impossible=["loop_op"])
    assert ruled_out.family != "loop_op" and ruled_out.share <= 1 + 1e-9


def test_a_capability_declared_at_start_is_part_of_the_bank_the_head_is_kept_by(fresh):
    """init_plugins adds each installed capability's examples to the bank (task/<name>): a new
    plugin's examples train a new head, the same plugins read the kept one."""
    declared = [Utterance("feed the cat now", "task", "cat_feeder"), Utterance("give the cat food", "task", "cat_feeder")]
    SemanticReader(WordsEmbedder(), BANK, cache_dir=fresh)
    SemanticReader(WordsEmbedder(), BANK + declared, cache_dir=fresh)
    assert len(list(fresh.glob("words.head-*.npz"))) == 2
    with_plugin = SemanticReader(WordsEmbedder(), BANK + declared, cache_dir=fresh)
    assert len(list(fresh.glob("words.head-*.npz"))) == 2
    assert "task/cat_feeder" in with_plugin.head.labels
    # two examples are not enough for a reading to overrule a task of it (covered)
    assert "cat_feeder" not in semantic.covered(BANK + declared)
