"""bench/memory.py runs end to end on a small slice: real model, real embedded Chroma."""

from __future__ import annotations

import json
import re

import pytest

from bench import memory as bench


def test_bm25_tokens_split_chinese_into_characters_and_bigrams():
    assert bench.tokens("I am allergic to 花生酱") == ["allergic", "花", "生", "酱", "花生", "生酱"]


def test_bm25_ranks_the_document_sharing_rare_words_first():
    scores = bench.BM25(["I have a cat named Mochi", "I work on the billing team", "我对花生过敏"]).scores("花生")
    assert scores.argmax() == 2 and scores[0] == scores[1] == 0


def test_the_data_set_has_enough_facts_in_both_languages_with_paraphrased_questions():
    facts = bench.load_facts()
    assert len(facts) >= 200 and len({f["id"] for f in facts}) == len(facts)
    langs = [f["fact_lang"] for f in facts]
    assert langs.count("zh") >= 90 and langs.count("en") >= 90
    assert any(f["fact_lang"] != f["question_lang"] for f in facts)
    assert all(f["fact"] != f["question"] for f in facts)


@pytest.mark.chroma_here  # embedded Chroma in this process (tests/conftest.py)
@pytest.mark.slow
def test_quick_run_reports_recall_latency_size_and_throughput(tmp_path, capsys):
    out = tmp_path / "memory.json"
    result = bench.main(["--quick", "--json", str(out)])
    assert json.loads(out.read_text(encoding="utf-8"))["quick"] is True
    figures = result["recall"]["multilingual-e5-small+use"]
    assert 0.0 <= figures["recall@5"] <= 1.0 and "bm25" in result["recall"]
    row = result["latency"][0]
    assert row["memories"] == 100 and row["recall_p99_ms"] >= row["recall_p50_ms"] > 0
    assert row["chroma_p50_ms"] > 0 and row["bytes_per_memory"] > 0
    assert result["throughput"]["multilingual-e5-small+use"]["batch32_per_s"] > 0
    dedup = result["calibration"]["multilingual-e5-small+use"]["dedup"]
    assert dedup["pairs"] >= 10 and dedup["same_min"] > dedup["other_max"]  # the pairs part cleanly
    bearing = result["bearing"]["multilingual-e5-small+use"]
    assert bearing["floor"] == 0.70 and bearing["related"] == len(bench.load_facts()[::9])
    assert bearing["related_kept"] > 0.9 and bearing["unrelated_left_out"] > 0.5  # most chat leaves memories out
    printed = capsys.readouterr().out
    assert "recall@5" in printed and "bytes/mem" in printed and "targets" in printed and "calibration" in printed
    assert "unrelated left out" in printed


def test_the_labelled_pairs_cover_both_uses_both_answers_and_both_languages():
    pairs = [json.loads(line) for line in bench.PAIRS_FILE.read_text(encoding="utf-8").splitlines() if line.strip()]
    for use in ("dedup", "forget"):
        chosen = [p for p in pairs if p["use"] == use]
        assert {p["same"] for p in chosen} == {True, False} and len(chosen) >= 15
        assert any(re.search(r"[\u4e00-\u9fff]", p["a"]) for p in chosen)


def test_an_answer_tied_with_other_facts_is_ranked_in_the_middle_of_them():
    import numpy as np

    from bench.memory import ranks_of_answers

    no_shared_word = np.zeros((1, 11))  # a keyword method that finds nothing: every fact scores 0
    assert ranks_of_answers(no_shared_word)[0] == 5  # not "found first"
    assert list(ranks_of_answers(np.array([[0.9, 0.5, 0.1], [0.9, 0.5, 0.1], [0.2, 0.2, 0.2]]))) == [0, 1, 1]


def test_the_memory_dialogs_are_thirty_or_more_in_both_languages_each_with_what_counts_as_right():
    from bench.memory_dialogs import load_dialogs

    dialogs = load_dialogs()
    assert len(dialogs) >= 30 and len({d["id"] for d in dialogs}) == len(dialogs)
    assert 0.4 <= sum(d["lang"] == "zh" for d in dialogs) / len(dialogs) <= 0.6
    for d in dialogs:
        assert d["tell"] and d["ask"] and d["chat"] and d["expect"], d["id"]


def test_a_dialog_is_answered_when_one_alternative_is_in_the_reply_whole():
    from bench.memory_dialogs import answered

    assert answered("Your birthday is on March 3rd.", ["march&3"])
    assert not answered("Your birthday is in March.", ["march&3"])
    assert answered("你住在成都。", ["成都"]) and answered("You live in HANGZHOU", ["hangzhou"])
    assert not answered("I don't know where you live yet.", ["hangzhou"])
