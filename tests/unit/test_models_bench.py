"""The scoring of bench/models.py: reply language, routes, the probe file."""

from __future__ import annotations

import json

from bench.models import CAPABILITIES, INTENTS, PROBES, Pair, Route, routed_right, wrong_language


def test_a_reply_to_a_chinese_prompt_must_be_mostly_chinese():
    assert wrong_language("zh", "Flora is very grateful for your help today!")
    assert not wrong_language("zh", "不客气，很高兴能帮到你！Flora 随时在。")


def test_a_reply_to_an_english_prompt_must_be_mostly_not_chinese():
    assert not wrong_language("en", "The capital of Canada is Ottawa.")
    assert wrong_language("en", "加拿大的首都是渥太华。")


def test_the_capability_counts_only_when_a_task_is_expected():
    chat = {"intent": "chat", "capability": "none"}
    assert routed_right({**chat, "got_intent": "chat", "got_capability": "http_request"})
    task = {"intent": "task", "capability": "data_query"}
    assert not routed_right({**task, "got_intent": "task", "got_capability": "http_request"})
    assert not routed_right({**task, "got_intent": "chat", "got_capability": "data_query"})


def test_one_field_routes_decode_to_intent_and_capability():
    assert Route.decode({"route": "data_query"}) == ("task", "data_query")
    assert Route.decode({"route": "reminder"}) == ("task", "none")
    assert Route.decode({"route": "unsupported"}) == ("unsupported", "none")
    assert Pair.decode({"intent": "chat", "capability": "none"}) == ("chat", "none")


def test_the_probe_file_uses_only_known_labels_in_both_languages():
    probes = json.loads(PROBES.read_text(encoding="utf-8"))
    understanding = probes["understanding"]
    assert {p["intent"] for p in understanding} == set(INTENTS)
    assert {p["capability"] for p in understanding} <= set(CAPABILITIES)
    assert {p["lang"] for p in understanding} == {p["lang"] for p in probes["chat"]} == {"en", "zh"}
    assert len(understanding) >= 40 and len(probes["chat"]) >= 20
