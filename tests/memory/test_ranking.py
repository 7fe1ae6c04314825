"""ranking.shortlist: which memories recall fetches, from two queries' ids and distances."""

import pytest

from capabilities.memory.ranking import QUESTION_WEIGHT, fused, shortlist


def test_a_memory_each_query_found_ranks_by_both_parts():
    ranked = shortlist(["a", "b"], [0.1, 0.2], ["b", "b", "a"], [0.05, 0.3, 0.4], asked_for=10, size=2)
    assert ranked.memory_ids == ["b", "a"]  # b: its question is nearest
    assert ranked.score("b", 0.8) == pytest.approx((0.8 + QUESTION_WEIGHT * 0.95) / (1 + QUESTION_WEIGHT))
    assert ranked.score("a", 0.9) == pytest.approx(fused(0.9, 0.6))


def test_a_part_a_full_query_did_not_bring_counts_as_its_lowest_score():
    # both queries brought as many as asked: "q" was found by its question only, "f" by its fact only
    ranked = shortlist(["f", "x"], [0.1, 0.5], ["q", "x"], [0.0, 0.4], asked_for=2, size=3)
    assert ranked.question_floor == pytest.approx(0.6)
    assert ranked.score("f", 0.9) == pytest.approx(fused(0.9, 0.6))  # its question is not above the lowest brought
    assert set(ranked.memory_ids) == {"f", "q", "x"}
    assert ranked.memory_ids.index("q") < ranked.memory_ids.index("x")  # q: 1.0 and at most 0.5; x: 0.5 and 0.6


def test_when_a_query_brought_everything_a_missing_part_means_none_or_gone():
    # four asked for, two facts and one question there: "gone" has a question but no fact any more
    ranked = shortlist(["a", "b"], [0.1, 0.2], ["gone"], [0.0], asked_for=4, size=5)
    assert ranked.memory_ids == ["a", "b"]
    assert ranked.question_floor is None and ranked.score("b", 0.8) == 0.8  # no questions: the fact alone


def test_the_shortlist_is_cut_to_its_size_and_an_empty_person_has_none():
    ranked = shortlist([f"m{i}" for i in range(10)], [i / 10 for i in range(10)], [], [], asked_for=20, size=3)
    assert ranked.memory_ids == ["m0", "m1", "m2"]
    assert shortlist([], [], [], [], asked_for=20, size=8).memory_ids == []
