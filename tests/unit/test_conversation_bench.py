"""The conversation evaluation set (bench/conversation/*.jsonl) and the scoring of
bench/conversation.py, on hand-made replies: no actor system, no model."""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path

import pytest

from bench.conversation import select
from bench.conversation_score import (
    DEV_FILE, HELDOUT_FILE, INTENTS, SPLITS, admits_not_knowing, cjk_share, infer_intent, invented, load_cases,
    percentile, schedule_matches, score_case, summarise, wrong_language,
)

EXPECT_KEYS = {"intent", "capability", "parameters", "schedule", "answer_contains", "must_not_claim", "operates_on",
               "must_not_invent"}
FRESH_MARKS = {"fresh": "f", "fresh2": "g", "fresh3": "h", "fresh4": "i", "fresh5": "j", "fresh6": "k", "fresh7": "m",
               "fresh8": "n", "fresh9": "p", "fresh10": "q", "fresh11": "r", "fresh12": "s"}
# The hands and memory came into the taxonomy with the ninth fresh split; the splits before it
# (and the dev/held-out draw, kept as it was) do not have them.
HANDS_AND_MEMORY = {"task/files", "task/python", "task/shell", "task/web", "memory/tell", "memory/ask",
                    "memory/forget", "chat/about_me"}
FIRST_WITH_HANDS = "fresh9"
HAND_CAPABILITIES = {"task/files": {"file_list", "file_read", "file_write", "file_search"},
                     "task/python": {"python_exec"}, "task/shell": {"shell"}, "task/web": {"web_fetch", "web_search"}}


@pytest.fixture(scope="module")
def dev():
    return load_cases(DEV_FILE)


@pytest.fixture(scope="module")
def heldout():
    return load_cases(HELDOUT_FILE)


@pytest.fixture(scope="module")
def fresh_splits() -> dict[str, list[dict]]:
    """The fresh splits by name, in the order they were written."""
    return {name: load_cases(path) for name, path in SPLITS if name.startswith("fresh")}


@pytest.fixture(scope="module")
def waiting() -> list[dict]:
    return load_cases(dict(SPLITS)["waiting"])


@pytest.fixture(scope="module")
def every_case(dev, heldout, fresh_splits, waiting) -> list[dict]:
    return dev + heldout + [case for cases in fresh_splits.values() for case in cases] + waiting


# --------------------------------------------------------------------------- the data files
def test_every_line_of_every_file_is_one_json_object():
    for _, path in SPLITS:
        for line in Path(path).read_text(encoding="utf-8").splitlines():
            assert isinstance(json.loads(line), dict)


def test_every_fresh_split_has_its_mark():
    assert set(FRESH_MARKS) == {name for name, _ in SPLITS if name.startswith("fresh")}


def test_the_set_has_at_least_300_cases_with_ids_unique_across_the_files(dev, heldout, every_case):
    assert len(dev + heldout) >= 300
    ids = [c["id"] for c in every_case]
    assert len(ids) == len(set(ids))


def test_every_case_has_the_documented_shape(every_case):
    for case in every_case:
        assert case["lang"] in ("zh", "en"), case["id"]
        assert case["id"].startswith(f"{case['lang']}-{case['expect']['intent']}-"), case["id"]
        assert case["category"].split("/")[0] == case["expect"]["intent"], case["id"]
        assert isinstance(case["say"], str) and case["say"].strip(), case["id"]
        assert all(isinstance(s, str) and s for s in case.get("setup", [])), case["id"]
        assert set(case["expect"]) <= EXPECT_KEYS, case["id"]
        assert case["expect"]["intent"] in INTENTS, case["id"]
        expect = case["expect"]
        assert isinstance(expect.get("capability", ""), str), case["id"]
        assert isinstance(expect.get("parameters", {}), dict), case["id"]
        assert isinstance(expect.get("schedule", ""), str), case["id"]
        assert all(isinstance(a, str) and a for a in expect.get("answer_contains", [])), case["id"]
        assert isinstance(expect.get("must_not_claim", False), bool), case["id"]


@pytest.mark.parametrize("name", list(FRESH_MARKS))
def test_fresh_ids_are_marked_and_every_category_is_in_each_fresh_split(dev, heldout, fresh_splits, name):
    cases, mark = fresh_splits[name], FRESH_MARKS[name]
    for case in cases:
        assert re.fullmatch(rf"{case['lang']}-{case['expect']['intent']}-{mark}\d{{3}}", case["id"]), case["id"]
    marks = "".join(FRESH_MARKS.values())
    for case in dev + heldout:
        assert not re.search(rf"-[{marks}]\d+$", case["id"]), case["id"]
    assert 80 <= len(cases) <= 130
    with_hands = list(FRESH_MARKS).index(name) >= list(FRESH_MARKS).index(FIRST_WITH_HANDS)
    categories = {c["category"] for c in dev + heldout} | (HANDS_AND_MEMORY if with_hands else set())
    assert {c["category"] for c in cases} == categories
    by_language = Counter((c["expect"]["intent"], c["lang"]) for c in cases)
    for intent in {category.split("/")[0] for category in categories}:
        assert by_language[(intent, "zh")] and by_language[(intent, "en")], intent
    if with_hands:  # from the ninth on, every category in both languages
        by_language = Counter((c["category"], c["lang"]) for c in cases)
        for category in categories:
            assert by_language[(category, "zh")] and by_language[(category, "en")], category


def test_the_hands_name_their_capability_and_untold_facts_must_not_be_invented(fresh_splits):
    """A file, Python, shell or web case expects one of its tools; every question about the
    person's own untold facts, and only those, is marked must_not_invent (in every split with
    the hands)."""
    names = list(FRESH_MARKS)
    with_hands = names[names.index(FIRST_WITH_HANDS):]
    for case in (case for name in with_hands for case in fresh_splits[name]):
        if case["category"] in HAND_CAPABILITIES:
            assert case["expect"]["capability"] in HAND_CAPABILITIES[case["category"]], case["id"]
        assert case["expect"].get("must_not_invent", False) is (case["category"] == "chat/about_me"), case["id"]
        if case["category"] == "chat/about_me":
            assert not case.get("setup"), case["id"]  # nothing told: the honest answer is "you haven't told me"


def test_the_waiting_family_leaves_a_task_waiting_and_covers_every_operation_in_both_languages(waiting):
    """Operations while a task waits: every case's setup ends by pausing a task, and each
    operation on a task or a loop task is there in Chinese and in English."""
    assert len(waiting) >= 40
    for case in waiting:
        assert re.fullmatch(rf"{case['lang']}-{case['expect']['intent']}-w\d{{3}}", case["id"]), case["id"]
        assert case["setup"] and case["setup"][-1] and len(case["setup"]) >= 3, case["id"]
        if case["expect"]["intent"] in ("task_op", "loop_op"):
            assert case["expect"]["must_not_claim"] is True, case["id"]
    kinds = {(c["category"], c["lang"]) for c in waiting}
    for category in ("task_op/comment", "task_op/revise", "task_op/rerun", "task_op/cancel", "loop_op/pause",
                     "loop_op/resume", "loop_op/delete", "loop_op/trigger", "loop_op/modify", "answer/api_key",
                     "clarify/ambiguous"):
        assert (category, "zh") in kinds and (category, "en") in kinds, category
    share = sum(c["lang"] == "zh" for c in waiting) / len(waiting)
    assert 0.4 <= share <= 0.6


def test_an_operation_that_lands_on_the_waiting_task_is_the_waiting_task_again():
    """A re-run of the task the setup left waiting asks its question again: that is the
    message falling into the waiting task, however the reply is stored."""
    case = {"id": "en-task_op-w001", "lang": "en", "category": "task_op/rerun", "say": "re-run the last task",
            "expect": {"intent": "task_op", "operates_on": "http_request", "must_not_claim": True}}
    fell_in = score_case(case, {"message_type": "task_paused", "task_id": "task_2", "capability": "dify_workflow"},
                         record={"capability": "dify_workflow", "meta": {"rerun_of": "task_1"}},
                         setup_paused=("task_1",))
    assert (fell_in.got, fell_in.intent_ok, fell_in.target_ok) == ("answer", False, False)
    wrong_task = score_case(case, {"message_type": "task_paused", "task_id": "task_3", "capability": "dify_workflow"},
                            record={"capability": "dify_workflow", "meta": {"rerun_of": "task_0"}},
                            setup_paused=("task_1",))
    assert (wrong_task.intent_ok, wrong_task.target_ok) == (True, False)
    right = score_case(case, {"message_type": "task_error", "task_id": "task_4", "error_type": "unavailable"},
                       record={"capability": "http_request", "meta": {"rerun_of": "task_0"}}, setup_paused=("task_1",))
    assert (right.intent_ok, right.target_ok) == (True, True)
    claimed = score_case(case, {"message_type": "chat_reply", "message": "OK, running it now."})
    assert claimed.hallucination and claimed.target_ok is False
    assert summarise([fell_in, right])["splits"]["dev"]["checks"]["target"] == [1, 2]


def test_fresh_cases_are_new_messages(dev, heldout, fresh_splits):
    """No fresh case says what the dev and held-out cases or an earlier fresh split said."""
    seen = {c["say"].strip().casefold() for c in dev + heldout}
    for name, cases in fresh_splits.items():
        assert not [c["id"] for c in cases if c["say"].strip().casefold() in seen], name
        seen |= {c["say"].strip().casefold() for c in cases}


def test_every_intent_is_covered_in_both_languages_and_both_splits(dev, heldout):
    older = set(INTENTS) - {c.split("/")[0] for c in HANDS_AND_MEMORY} | {"chat", "task"}
    for cases in (dev, heldout):
        assert {c["expect"]["intent"] for c in cases} == older
    by_language = Counter((c["expect"]["intent"], c["lang"]) for c in dev + heldout)
    for intent in older:
        assert by_language[(intent, "zh")] and by_language[(intent, "en")], intent


def test_about_half_the_cases_are_chinese(dev, heldout, fresh_splits):
    for cases in (dev + heldout, *fresh_splits.values()):
        share = sum(c["lang"] == "zh" for c in cases) / len(cases)
        assert 0.4 <= share <= 0.6


def test_about_a_fifth_is_held_out_and_every_category_has_held_out_cases(dev, heldout):
    share = len(heldout) / (len(dev) + len(heldout))
    assert 0.15 <= share <= 0.25
    assert not {c["id"] for c in dev} & {c["id"] for c in heldout}
    assert {c["category"] for c in heldout} == {c["category"] for c in dev + heldout}


def test_cases_that_need_an_earlier_task_bring_their_setup(every_case):
    for case in every_case:
        if case["expect"]["intent"] in ("task_op", "answer") or case["category"].startswith("loop_op/"):
            assert case.get("setup"), case["id"]


def test_unsupported_cases_must_not_be_answered_by_invention(every_case):
    for case in every_case:
        if case["expect"]["intent"] == "unsupported":
            assert case["expect"].get("must_not_claim") is True, case["id"]


def test_select_keeps_one_split_a_category_prefix_and_n_per_category():
    chosen = select("dev", "chat/", 2)
    assert chosen and all(split == "dev" and case["category"].startswith("chat/") for split, case in chosen)
    assert max(Counter(case["category"] for _, case in chosen).values()) == 2
    assert {split for split, _ in select(None, "loop", None)} == {"dev", "heldout", "fresh", "fresh2", "fresh3", "fresh4", "fresh5", "fresh6", "fresh7", "fresh8", "fresh9", "fresh10", "fresh11", "fresh12", "waiting"}
    fresh = select("fresh", None, None)
    assert fresh and all(split == "fresh" and "-f" in case["id"] for split, case in fresh)
    both = {case["category"].split("/")[0] for _, case in select("dev", ["answer/", "clarify/"], 1)}
    assert [case["id"] for _, case in select(None, None, None, ["en-chat-k001", "zh-task-k002"])] == [
        "en-chat-k001", "zh-task-k002"]
    assert both == {"answer", "clarify"}


# --------------------------------------------------------------------------- language
@pytest.mark.parametrize("lang, message, wrong", [
    ("zh", "今天心情不好的话，可以出去走走。", False),
    ("zh", "Sorry to hear that. Maybe take a walk?", True),
    ("en", "Sorry to hear that. Maybe take a walk?", False),
    ("en", "听到这个很难过，出去走走吧。", True),
    ("zh", "请提供 api_key：以 app- 开头的密钥", False),  # ids and names are not prose
    ("zh", "已取消任务 task_3f9a2b。", False),
    ("zh", "Cancelled task task_3f9a2b.", True),
    ("en", "Fetched https://例子.com/数据 fine", False),  # an address is not prose
    ("zh", "391", False),  # nothing to judge
    # what a capability returned is data, not prose: the sentence around it is judged
    ("zh", 'http_request 已完成。 {"status": 404, "reason": "Not Found", "headers": {"server": "keryx"}}', False),
    ("zh", 'Request finished. {"status": 200, "body": "ok"}', True),
    ("en", "Here it is:\n```\n今天 天气 很好 数据\n```", False),
    ("en", "", False),
    # a quotation (a translation) is in its own language; the words around it are judged
    ("zh", "德语是：“Bis morgen, wir sehen uns am Bahnhof.”", False),
    ("en", 'In Japanese: "また明日、駅で会いましょう"', False),
    ("zh", "Sure! In German it is “Bis morgen”.", True),
    ("zh", "“Bis morgen”", True),  # nothing but the quotation: it is the reply's prose
])
def test_wrong_language_judges_the_prose_a_person_reads(lang, message, wrong):
    assert wrong_language(lang, message) is wrong


def test_cjk_share_counts_a_chinese_character_like_an_english_word():
    assert cjk_share("你好 hello") == pytest.approx(2 / 3)
    assert cjk_share("https://a.b/c task_1") is None


# --------------------------------------------------------------------------- intent
def test_a_reply_that_names_its_intent_is_taken_at_its_word():
    assert infer_intent({"message_type": "chat_reply", "message": "x", "intent": "status"}) == "status"


@pytest.mark.parametrize("reply, record, paused, intent", [
    ({"message_type": "chat_reply", "message": "hi"}, None, (), "chat"),
    ({"message_type": "clarification", "message": "which?", "options": []}, None, (), "clarify"),
    ({"message_type": "task_paused", "task_id": "task_1", "capability": "dify_workflow",
      "missing_parameters": [{"name": "api_key"}]}, None, (), "task"),
    ({"message_type": "task_completed", "task_id": "task_1", "capability": "http_request", "result": {}},
     None, (), "task"),
    ({"message_type": "task_error", "task_id": "task_1", "error_type": "unavailable"},
     {"capability": "data_query", "meta": {}}, (), "task"),
    ({"message_type": "task_completed", "task_id": "task_1", "capability": "plan", "result": {}}, None, (), "plan"),
    ({"message_type": "task_error", "task_id": "task_1", "error_type": "unavailable"},
     {"capability": "plan", "meta": {"plan": {}}}, (), "plan"),
    ({"message_type": "task_completed", "task_id": "task_1", "capability": "remind",
      "result": {"loop_task_id": "loop_1"}}, None, (), "loop"),
    ({"message_type": "task_paused", "task_id": "task_1", "capability": "remind",
      "missing_parameters": [{"name": "time"}]}, None, (), "loop"),
    ({"message_type": "task_error", "error_type": "invalid_parameter", "field": "time"}, None, (), "loop"),
    ({"message_type": "task_completed", "task_id": "loop_tasks", "capability": "loop_tasks", "result": []},
     None, (), "loop_op"),
    ({"message_type": "task_completed", "task_id": "task_9", "capability": "remind", "result": {}},
     {"capability": "remind", "meta": {"run": {"loop_task_id": "loop_1"}}}, (), "loop_op"),
    ({"message_type": "task_completed", "task_id": "task_1", "capability": "dify_workflow",
      "result": {"task_id": "task_1", "state": "cancelled", "steps_cancelled": []}}, None, ("task_1",), "task_op"),
    ({"message_type": "task_completed", "task_id": "task_1", "capability": "http_request",
      "result": {"task_id": "task_1", "comment": "ok", "comments": 1}}, None, (), "task_op"),
    ({"message_type": "task_error", "task_id": "task_2", "error_type": "unavailable"},
     {"capability": "http_request", "meta": {"rerun_of": "task_1"}}, (), "task_op"),
    ({"message_type": "task_completed", "task_id": "task_1", "capability": "dify_workflow", "result": {}},
     None, ("task_1",), "answer"),
    ({"message_type": "task_error", "task_id": "task_1", "error_type": "unavailable"},
     {"capability": "dify_workflow", "meta": {}}, ("task_1",), "answer"),
    ({"message_type": "task_error", "error_type": "timeout"}, None, (), None),
    (None, None, (), None),
])
def test_infer_intent_reads_the_reply_and_its_task(reply, record, paused, intent):
    assert infer_intent(reply, record=record, setup_paused=paused) == intent


# --------------------------------------------------------------------------- one case's score
def _case(**expect):
    intent = expect.pop("intent")
    return {"id": f"en-{intent}-0001", "lang": "en", "category": f"{intent}/x", "say": "...",
            "expect": {"intent": intent, **expect}}


def test_score_checks_capability_and_stated_parameters_from_the_stored_task():
    case = _case(intent="task", capability="http_request", parameters={"url": "https://a.example/x"})
    reply = {"message_type": "task_error", "task_id": "task_1", "error_type": "unavailable",
             "message": "Could not reach a.example"}
    right = score_case(case, reply, record={"capability": "http_request", "parameters": {"url": "https://a.example/x/"}})
    assert (right.intent_ok, right.capability_ok, right.parameters_ok) == (True, True, True)
    wrong = score_case(case, reply, record={"capability": "http_request", "parameters": {"url": "https://b.example"}})
    assert wrong.parameters_ok is False


def test_score_finds_one_of_the_expected_answers_in_the_message():
    case = _case(intent="chat", answer_contains=["391"])
    assert score_case(case, {"message_type": "chat_reply", "message": "17 × 23 = 391"}).answer_ok is True
    assert score_case(case, {"message_type": "chat_reply", "message": "about 400"}).answer_ok is False
    assert score_case(_case(intent="chat"), {"message_type": "chat_reply", "message": "hi"}).answer_ok is None


def test_a_must_not_claim_case_answered_as_chat_is_a_hallucination():
    case = _case(intent="unsupported", must_not_claim=True)
    invented = score_case(case, {"message_type": "chat_reply", "message": "Your order arrives tomorrow."})
    assert invented.hallucination and not invented.intent_ok
    honest = score_case(case, {"message_type": "chat_reply", "intent": "unsupported",
                               "message": "I can't see your orders."})
    assert honest.intent_ok and not honest.hallucination


def test_telling_about_oneself_is_right_as_conversation_and_wrong_as_a_task():
    case = {**_case(intent="memory"), "category": "memory/tell"}
    assert score_case(case, {"message_type": "chat_reply", "message": "Noted, a vegetarian."}).intent_ok
    assert score_case(case, {"message_type": "chat_reply", "intent": "memory", "message": "Noted."}).intent_ok
    task = score_case(case, {"message_type": "task_completed", "task_id": "t", "capability": "file_write"})
    assert task.got == "task" and not task.intent_ok
    asked = {**_case(intent="memory"), "category": "memory/ask"}
    assert not score_case(asked, {"message_type": "chat_reply", "message": "I'm Flora."}).intent_ok


@pytest.mark.parametrize("message, admits", [
    ("You haven't told me your blood type yet.", True),
    ("I don't know — you never mentioned your boss's name to me.", True),
    ("I'm not sure, I have no record of that.", True),
    ("你还没告诉过我你女儿的生日哦。", True),
    ("我这里没有关于你家狗名字的记录。", True),
    ("这个我不清楚呢，你可以告诉我。", True),
    ("Your blood type is O+.", False),
    ("No problem! Your boss is called Mr Hall.", False),
    ("你的狗叫小黑。", False),
    ("没问题！你女儿的生日是三月十四号。", False),
])
def test_admitting_not_knowing_is_read_in_both_languages(message, admits):
    assert admits_not_knowing(message) is admits


def test_a_question_about_untold_facts_is_right_only_when_the_reply_says_it_does_not_know():
    case = {**_case(intent="chat", must_not_invent=True), "category": "chat/about_me", "say": "what's my plate?"}
    honest = score_case(case, {"message_type": "chat_reply", "message": "You haven't told me your plate number."})
    assert honest.intent_ok and not honest.invented and honest.must_not_invent
    made_up = score_case(case, {"message_type": "chat_reply", "message": "Your plate number is 12345678."})
    assert made_up.invented and not made_up.intent_ok
    hedged = score_case(case, {"message_type": "chat_reply", "message": "I'm not sure, you never told me. Maybe 1234?"})
    assert hedged.invented  # a number the question did not carry: a guess all the same
    reminder = score_case(case, {"message_type": "task_paused", "task_id": "t", "capability": "reminder",
                                 "field": "time", "message": "When should I remind you?"})
    assert not reminder.intent_ok and not reminder.invented  # a misreading, but no fact made up
    from_memory = score_case(case, {"message_type": "chat_reply", "intent": "memory",
                                    "message": "I have nothing saved about your plate."})
    assert from_memory.intent_ok
    assert invented("my flat is 4B, what floor is 4?", "I don't know which floor 4 is, you haven't said.") is False
    summary = summarise([honest, made_up])["splits"]["dev"]
    assert (summary["invented"], summary["must_not_invent"]) == (1, 2)


def test_a_case_without_a_reply_scores_wrong_and_counts_as_no_reply():
    score = score_case(_case(intent="chat"), None)
    assert score.got is None and not score.intent_ok and score.reply_type is None
    assert summarise([score])["splits"]["dev"]["no_reply"] == 1


def test_timing_in_a_reply_is_kept():
    reply = {"message_type": "chat_reply", "message": "hi", "timing": {"understand_ms": 12.5}}
    assert score_case(_case(intent="chat"), reply).understand_ms == 12.5


@pytest.mark.parametrize("expected, described, ok", [
    ("every day at 09:00", "every day at 9:00 (UTC)", True),
    ("every day at 09:00", "once at 2026-11-24 09:00 (UTC)", False),
    ("today at 15:30", "once at 2026-11-24 15:30 (UTC)", True),
    ("today at 15:30", "once at 2026-11-24 15:00 (UTC)", False),
    ("in 20 minutes", "once at 2026-11-24 06:43 (UTC)", True),
    ("every Monday at 10:00", "", False),
])
def test_schedules_are_compared_loosely(expected, described, ok):
    assert schedule_matches(expected, described) is ok


def test_summary_keeps_splits_apart_and_gives_latency_per_intent():
    chat = _case(intent="chat")
    scores = [score_case(chat, {"message_type": "chat_reply", "message": "hi"}, split="dev", seconds=0.1),
              score_case(chat, {"message_type": "clarification", "message": "which?"}, split="dev", seconds=0.3),
              score_case(chat, {"message_type": "chat_reply", "message": "你好"}, split="heldout", seconds=0.2)]
    summary = summarise(scores)
    assert summary["splits"]["dev"]["intent_right"] == 1 and summary["splits"]["dev"]["cases"] == 2
    assert summary["splits"]["heldout"]["wrong_language"] == 1
    assert summary["splits"]["dev"]["categories"] == {"chat/x": [1, 2]}
    assert summary["latency"]["chat"]["n"] == 3 and summary["latency"]["chat"]["p99_ms"] == pytest.approx(300)


def test_summary_reports_dev_then_heldout_then_fresh():
    chat = _case(intent="chat")
    reply = {"message_type": "chat_reply", "message": "hi"}
    scores = [score_case(chat, reply, split=split) for split in ("fresh", "heldout", "dev")]
    assert list(summarise(scores)["splits"]) == ["dev", "heldout", "fresh"]


def test_percentile_is_nearest_rank():
    assert percentile([], 50) is None
    assert percentile([1, 2, 3, 4], 50) == 2
    assert percentile(list(range(1, 101)), 99) == 99
