"""The reading of a message by its nearest labelled examples (capabilities/cognition/semantic.py),
and where Flora lets it decide: a paused question's answer, the loop reader, operations on a
task, a keyword rule, the understanding model."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agents.coordination.loop_reading import second_look
from capabilities.cognition import semantic
from capabilities.cognition.intent_router import Intent, IntentRouter, Pending
from capabilities.cognition.semantic import BankError, Reading, SemanticReader, Utterance, load_bank
from capabilities.loop.requests import LoopOperation, NewLoop, operation_read_as as loop_operation_read_as
from capabilities.routing.task_operations import TaskOperation, operation_read_as
from capabilities.routing.task_router import TaskRouter
from config import FloraConfig
from init_plugins import build_registry
from tests.support.words_embedder import WordsEmbedder


BANK = [Utterance("pause the gym reminder", "loop_op", "pause"),
        Utterance("pause my water reminder", "loop_op", "pause"),
        Utterance("delete the gym reminder", "loop_op", "delete"),
        Utterance("what is a reminder anyway", "chat", "knowledge"),
        Utterance("thanks a lot", "chat", "thanks"),
        Utterance("where is my parcel", "unsupported", "delivery"),
        Utterance("is my parcel here yet", "unsupported", "delivery")]


@pytest.fixture()
def reader(tmp_path):
    semantic._memo.clear()
    return SemanticReader(WordsEmbedder(), BANK, k=3, cache_dir=tmp_path)


# -- the bank ------------------------------------------------------------------------------------

def test_a_bank_is_json_lines_of_text_and_family_slash_kind(tmp_path):
    file = tmp_path / "ours.jsonl"
    file.write_text('{"text": "mute  the gym reminder", "reading": "loop_op/pause"}\n\n', encoding="utf-8")
    assert load_bank([tmp_path]) == [Utterance("mute the gym reminder", "loop_op", "pause")]


@pytest.mark.parametrize("line, why", [
    ("not json", ":1: not a labelled utterance"),
    ('{"text": "hi"}', ":1: not a labelled utterance"),
    ('{"text": "hi", "reading": "smalltalk/hi"}', "reading 'smalltalk/hi' is not one of chat"),
    ('{"text": "  ", "reading": "chat/greeting"}', "the text is empty"),
])
def test_a_bad_line_is_refused_naming_the_file_and_line(tmp_path, line, why):
    file = tmp_path / "bad.jsonl"
    file.write_text(line + "\n", encoding="utf-8")
    with pytest.raises(BankError) as caught:
        load_bank([file])
    assert why in str(caught.value) and "bad.jsonl" in str(caught.value)


def test_the_shipped_bank_covers_every_family_in_both_languages():
    bank = load_bank([semantic.SHIPPED])
    assert len(bank) >= 1000
    for family in semantic.FAMILIES:
        texts = [u.text for u in bank if u.family == family]
        assert any(any("\u4e00" <= ch <= "\u9fff" for ch in t) for t in texts), family
        assert any(t.isascii() for t in texts), family


def test_a_configured_file_that_is_not_a_bank_stops_start_up_naming_the_key(tmp_path):
    from config import ConfigError, load_config

    bad = tmp_path / "ours.jsonl"
    bad.write_text('{"text": "x", "reading": "nonsense"}\n', encoding="utf-8")
    with pytest.raises(ConfigError, match=r"understanding\.examples_files.*ours\.jsonl:1"):
        load_config({"understanding": {"examples_files": [str(bad)]}})


# -- reading ---------------------------------------------------------------------------------------

def test_the_nearest_examples_vote_for_a_family_and_a_kind(reader):
    reading = reader.read("could you pause the gym reminder")
    assert (reading.family, reading.kind) == ("loop_op", "pause")
    assert reading.sure() and 0 < reading.share <= 1 and reading.nearest > 0.5
    assert reader.read("my parcel is late, where is it").family == "unsupported"
    assert reader.read("   ") is None


def test_what_the_persons_situation_rules_out_does_not_vote(reader):
    assert reader.read("pause the gym reminder").family == "loop_op"
    assert reader.read("pause the gym reminder", impossible=["loop_op"]).family == "chat"


def test_a_split_vote_is_not_sure(tmp_path):
    semantic._memo.clear()
    torn = SemanticReader(WordsEmbedder(), [Utterance("is it done", "status", "state"),
                                            Utterance("is it done", "unsupported", "orders")], k=2, cache_dir=tmp_path)
    reading = torn.read("is it done")
    assert reading.share == pytest.approx(0.5) and not reading.sure()


def test_a_reading_travels_as_json_and_a_malformed_one_is_none():
    reading = Reading("loop_op", "pause", 0.8123, 0.91)
    assert Reading.from_dict(json.loads(json.dumps(reading.to_dict()))) == Reading("loop_op", "pause", 0.812, 0.91)
    for bad in (None, {}, {"family": "nonsense", "share": 1}, {"family": "chat"}, {"family": "chat", "share": "x"}):
        assert Reading.from_dict(bad) is None


def test_the_bank_vectors_are_kept_on_disk_and_read_back(tmp_path):
    semantic._memo.clear()
    SemanticReader(WordsEmbedder(), BANK, cache_dir=tmp_path)
    files = list(tmp_path.glob("words.npz"))
    assert len(files) == 1
    semantic._memo.clear()

    class Refuses(WordsEmbedder):
        def embed_queries(self, texts):
            if len(texts) > 1:
                raise AssertionError("the bank was embedded again instead of read from the cache")
            return super().embed_queries(texts)

    again = SemanticReader(Refuses(), BANK, cache_dir=tmp_path)
    assert again.read("pause the gym reminder").family == "loop_op"


def test_an_unwritable_cache_only_costs_the_embedding(tmp_path):
    semantic._memo.clear()
    blocked = tmp_path / "file"
    blocked.write_text("not a folder")
    assert SemanticReader(WordsEmbedder(), BANK, cache_dir=blocked / "sub").read("thanks a lot").family == "chat"


# -- where a sure reading decides ----------------------------------------------------------------

def sure(family: str, kind: str = "", share: float = 0.86) -> Reading:
    return Reading(family, kind, share, 0.93)


@pytest.fixture(scope="module")
def intents():
    registry = build_registry(FloraConfig(), llm=None)  # the examples known; no reader is built here
    return IntentRouter(TaskRouter(registry))


@pytest.mark.parametrize("text, intent, reading, expected", [
    # the small model's chat, where the examples read the person's own world or Flora's state
    ("我工资到账了没？", Intent("chat", source="llm"), sure("unsupported", "bank", 0.93), "unsupported"),
    # making conversation a refusal takes a sure reading, not a leaning one
    ("终于还完最后一期房贷了，感觉整个人都轻了！！", Intent("chat", source="llm"), sure("unsupported", "bank", 0.59), "chat"),
    # a task the rules read gives way to a sure reading; one the model chose only to a near-certain one
    ("HTTP请求里GET和POST到底有啥区别", Intent("task", "http_request"), sure("chat", "knowledge", 0.75), "chat"),
    ("what were the sales last month?", Intent("task", "data_query", source="llm"), sure("unsupported", "bank", 0.73),
     "task"),
    # ...unless nothing in the words points at the capability the model chose
    ("一支足球队上场比赛是几个人", Intent("task", "data_query", source="llm"), sure("chat", "knowledge", 0.75), "chat"),
    ("一支足球队上场比赛是几个人", Intent("task", "data_query", source="llm"), sure("chat", "knowledge", 0.55), "task"),
    ("how many users are in the database?", Intent("task", "data_query", source="llm"),
     sure("chat", "knowledge", 0.75), "task"),
    ("is there a list somewhere of the things you can do?", Intent("unsupported", source="llm"),
     sure("status", "abilities", 0.72), "status"),
    # clearing cannot be undone: without words that name it, only a near-certain reading clears
    ("记录太多了看着乱，全部清空", Intent("chat", source="llm"), sure("command", "clear", 0.57), "chat"),
    ("记录太多了看着乱，全部清空", Intent("chat", source="llm"), sure("command", "clear", 0.95), "command"),
    ("flora, stop yourself for the upgrade", Intent("chat", source="llm"), sure("command", "shutdown", 0.57), "command"),
    # a question for the loop tasks' list is answered by the status answer, which lists them
    ("wait, what have I got running on a schedule?", Intent("chat", source="llm"), sure("loop_op", "list", 0.6), "status"),
    # a task the rules read that the examples read as several steps is planned
    ("hit https://a.example.com/x, and once you've got it, send a summary to https://hooks.example.com/y",
     Intent("task", "http_request"), sure("plan", "multi_step", 0.64), "plan"),
    # a rule's reading gives way only to a surer one
    ("我名下还有几个没关的工单？", Intent("status"), sure("unsupported", "tickets", 0.72), "unsupported"),
    ("我名下还有几个没关的工单？", Intent("status"), sure("unsupported", "tickets", 0.5), "status"),
    # a question about the person themselves is answered from what they told, not refused
    ("is there any food I must avoid?", Intent("unsupported", source="llm"), sure("chat", "about_me", 0.72), "chat"),
    ("is there any food I must avoid?", Intent("unsupported", source="llm"), sure("chat", "about_me", 0.55),
     "unsupported"),
    # advice about the person's own records is not only conversation
    ("my bank card got blocked, any tips on getting my account balance?", Intent("chat", source="llm"),
     sure("unsupported", "bank", 0.8), "unsupported"),
    # a question of general knowledge the small model refused is answered; one about the
    # person's own things stays refused
    ("请问您，黄河流经几个省？", Intent("unsupported", source="llm"), sure("chat", "knowledge", 0.8), "chat"),
    ("请问您，黄河流经几个省？", Intent("unsupported", source="llm"), sure("chat", "knowledge", 0.55), "unsupported"),
    ("how far is my flight from Oslo to Rome?", Intent("unsupported", source="llm"), sure("chat", "knowledge", 0.8),
     "unsupported"),
    # an address only told of is conversation
    ("came across https://free-gift.example.org in a spam text, the nerve of these people",
     Intent("clarify", source="llm"), sure("chat", "smalltalk", 0.8), "chat"),
])
def test_a_sure_reading_decides_where_the_rules_or_the_model_read_otherwise(intents, text, intent, reading, expected):
    assert intents.second_opinion(text, intent, reading).kind == expected


def test_a_command_read_by_the_examples_names_which(intents):
    decided = intents.second_opinion("I'd rather you ran on mistral-7b, ok?", Intent("clarify", source="llm"),
                                     sure("command", "switch_model"))
    assert (decided.kind, decided.command) == ("command", "switch_model")
    abilities = intents.second_opinion("我刚开始用你，你能干啥", Intent("chat", source="llm"), sure("status", "abilities"))
    assert (abilities.kind, abilities.command) == ("status", "help")


@pytest.mark.parametrize("text, intent, reading", [
    ("thanks, that was great", Intent("chat"), sure("task_op", "comment", 0.9)),  # thanks are certain
    ("/status", Intent("status"), sure("chat", "smalltalk", 0.9)),  # a slash command is certain
    ("what's the weather in Oslo right now?", Intent("unsupported", source="llm"), sure("chat", "knowledge", 0.9)),
    ("where's the parcel I ordered?", Intent("unsupported", source="llm"), sure("chat", "about_me", 0.9)),  # their records
    # advice is conversation, whatever it lies near
    ("有什么练习建议吗", Intent("chat", source="llm"), sure("status", "abilities", 0.51)),
    ("any tips for my first marathon?", Intent("chat", source="llm"), sure("unsupported", "calendar", 0.8)),
    ("is https://example.com up?", Intent("task", "http_request", source="llm"), sure("chat", "knowledge", 0.9)),
    ("do it the other way", Intent("chat", source="llm"), sure("answer", "value", 0.9)),  # no question waits
    ("fetch the report", Intent("task", "http_request", source="llm"), sure("plan", "multi_step", 0.9)),
    # a tool the person named as the means is their choice, whatever the words resemble
    ("run some python to work out how many days are left until new year", Intent("task", "python_exec"),
     sure("chat", "arithmetic", 0.9)),
    ("写段python算一下从这里开车到成都要多久", Intent("plan", "python_exec"), sure("chat", "knowledge", 0.9)),
])
def test_what_a_reading_never_overrules(intents, text, intent, reading):
    assert intents.second_opinion(text, intent, reading) is intent


def test_an_answer_read_by_the_examples_answers_the_waiting_question(intents):
    waiting = Pending("task_1", "remind", ("time",))
    decided = intents.second_opinion("周五上午吧，十点左右", Intent("chat", source="llm"), sure("answer", "value"), waiting)
    assert (decided.kind, decided.capability) == ("answer", "remind")


def test_a_plan_the_rules_would_make_one_task_of_is_that_task_when_the_examples_read_one(intents):
    text = "帮我调下 http://127.0.0.1:8000/api/v1/orders?status=pending ，看看返回了几条"
    decided = intents.second_opinion(text, Intent("plan", source="llm"), sure("task", "http_request", 0.6))
    assert (decided.kind, decided.capability) in (("task", "http_request"), ("query", "http_request"))
    assert decided.parameters["url"] == "http://127.0.0.1:8000/api/v1/orders?status=pending"


def test_without_a_reading_the_understanding_step_is_unchanged(intents):
    intent = Intent("chat", source="llm")
    assert intents.second_opinion("hello", intent, None) is intent


# -- the operations a reading names --------------------------------------------------------------

@pytest.mark.parametrize("kind, text, expected", [
    ("cancel", "ugh, wrong button. please cancel whatever you just started", TaskOperation("cancel_task", "last", "")),
    ("rerun", "那边数据刚更新过，再拉一次看看", TaskOperation("re_run_task", "last", "")),
    # the words say which, where the nearest examples said another
    ("revise", "same request again please, I want to see if the numbers changed", TaskOperation("re_run_task", "last", "")),
    ("rerun", "scrap that job, wrong input", TaskOperation("cancel_task", "last", "")),
    ("revise", "can you rework that result into plain English?",
     TaskOperation("revise_result", "last", "can you rework that result into plain English?")),
    ("comment", 'attach a note to that last task — "sent to legal on Tuesday"',
     TaskOperation("comment_on_task", "last", "sent to legal on Tuesday")),
    ("comment", "在刚才那条任务上记一笔：数据来源已确认", TaskOperation("comment_on_task", "last", "数据来源已确认")),
    ("cancel", "kill task_9f3 please", TaskOperation("cancel_task", "task_9f3", "")),
    ("nonsense", "cancel it", None),
])
def test_a_task_operation_is_made_from_the_reading_kind(kind, text, expected):
    assert operation_read_as(kind, text) == expected


def test_a_loop_operation_is_made_from_the_reading_kind():
    assert loop_operation_read_as("pause", "mute the bins reminder") == LoopOperation("pause", "mute the bins reminder")
    assert loop_operation_read_as("modify", "make it 8pm") is None


def agent_task(content: str, reading: Reading | None, pending: str | None = None) -> dict:
    return {"content": content, "reading": reading.to_dict() if reading else None, "pending_task_id": pending}


def test_a_new_reminder_gives_way_only_to_a_reading_that_is_all_but_certain():
    said = "remind me what reminders I have lol"
    new = NewLoop(None, "what reminders I have lol", reminder=True)
    assert second_look(new, agent_task(said, None), sure("loop_op", "list", 0.97)) == LoopOperation("list", said)
    # "remind me to renew my passport" lies near "resume my gym reminders": a surely-read
    # operation that is not certain leaves the new reminder be
    passport = NewLoop(None, "renew my passport", reminder=True)
    assert second_look(passport, agent_task("remind me to renew my passport", None),
                        sure("loop_op", "resume", 0.83)) is passport


@pytest.mark.parametrize("said, reading", [("晚上八点半，她那会儿才下班", sure("loop", "once", 0.7)),
                                           ("tomorrow, 5:30pm, once I've finished at the shop", None)])
def test_a_time_while_a_paused_task_waits_for_one_answers_it_whatever_the_words_around_it(said, reading):
    from capabilities.loop.parse import ParsedSchedule

    timed = NewLoop(ParsedSchedule(None, said[-12:], "once"), said[-12:], reminder=False)  # type: ignore[arg-type]
    assert second_look(timed, agent_task(said, reading, "task_rm"), reading, awaits_a_time=lambda: True) is None
    # with no question for a time waiting it stays a new loop task; "remind me" with its own time is a new one
    assert second_look(timed, agent_task(said, reading, "task_rm"), reading, awaits_a_time=lambda: False) is timed
    own = NewLoop(ParsedSchedule(None, "交水费", "once"), "交水费", reminder=True)  # type: ignore[arg-type]
    assert second_look(own, agent_task("明天8点提醒我交水费", reading, "task_rm"), reading,
                        awaits_a_time=lambda: True) is own


def test_with_no_time_a_loop_operation_the_examples_read_beats_a_reminder_word():
    # a question about reminders that asks for none, read leaning to the list: the list
    said = "hey what reminders have I set up with you, I can't keep track"
    new = NewLoop(None, said, reminder=True)
    assert second_look(new, agent_task(said, None), sure("loop_op", "list", 0.54)) == LoopOperation("list", said)
    # one reminder pointed at, surely read as resumed: resumed
    said = "我回来了，拿药那个提醒接着响吧"
    assert second_look(NewLoop(None, said, reminder=True), agent_task(said, None),
                        sure("loop_op", "resume", 0.69)).op == "resume"
    # asking for a reminder, or a reading that only leans without a question: a new reminder
    for said, share in (("remind me to check the reminders app", 0.6), ("water plants reminder", 0.55)):
        new = NewLoop(None, said, reminder=True)
        assert second_look(new, agent_task(said, None), sure("loop_op", "list", share)) is new, said


def test_reminders_only_told_of_ask_for_none_where_the_reading_is_surely_conversation():
    said = "my dad has phone reminders for every pill he takes now, cute but chaotic"
    told = NewLoop(None, said, reminder=True)
    assert second_look(told, agent_task(said, None), sure("chat", "feelings", 0.9)) is None
    assert second_look(told, agent_task(said, None), sure("chat", "feelings", 0.5)) is told  # not sure: it stands
    for asked in ("set a reminder to call the plumber", "can I get a reminder for the dentist",
                  "remind me to water the ferns", "记得提醒我交电费"):
        new = NewLoop(None, asked, reminder=True)
        assert second_look(new, agent_task(asked, None), sure("chat", "smalltalk", 0.9)) is new, asked


def test_a_new_reminder_that_names_a_loop_task_the_person_has_gives_way_to_a_sure_reading():
    said = "send me the bins reminder now instead of waiting till Tuesday"
    new = NewLoop(None, said, reminder=True)
    assert second_look(new, agent_task(said, None), sure("loop_op", "pause", 0.78),
                        names_one=lambda: True) == LoopOperation("trigger", said)
    assert second_look(new, agent_task(said, None), sure("loop_op", "pause", 0.78),
                        names_one=lambda: False) is new


def test_an_operation_the_loop_reader_missed_is_read_with_the_words_that_say_which():
    none_read = None
    assert second_look(none_read, agent_task("can you mute the bins reminder for a couple of weeks?", None),
                        sure("loop_op", "list", 0.86)).op == "pause"
    assert second_look(none_read, agent_task("浇花那个提醒，你现在立马给我发一次", None),
                        sure("loop_op", "pause", 0.8)).op == "trigger"
    # a question for the list no rule read is a status question, whose answer lists them
    assert second_look(none_read, agent_task("the plants one, what's its schedule", None),
                        sure("loop_op", "list", 0.8)) is None
    assert second_look(none_read, agent_task("x", None), sure("loop_op", "list", 0.43)) is None


def test_a_reading_that_only_leans_to_an_operation_is_taken_where_the_message_names_a_loop_task_of_theirs():
    said = "退货单数那个每天的查询不用再跑了，直接删掉"
    assert second_look(None, agent_task(said, None), sure("loop_op", "delete", 0.54),
                        names_one=lambda: True) == LoopOperation("delete", said)
    assert second_look(None, agent_task(said, None), sure("loop_op", "delete", 0.54),
                        names_one=lambda: False) is None
    unpointed = "退货单数的查询不用再跑了"
    assert second_look(None, agent_task(unpointed, None), sure("loop_op", "delete", 0.45),
                        names_one=lambda: True) is None


@pytest.mark.parametrize("said, op", [("今天要提前进货，库存不足那个查询现在就跑一下，别等明早了", "trigger"),
                                      ("库存那个查询不用再跑了，删掉吧", "delete")])
def test_one_of_their_loop_tasks_pointed_at_by_what_it_does_is_operated_on_whatever_the_reading(said, op):
    assert second_look(None, agent_task(said, None), sure("task", "data_query", 0.3),
                        names_one=lambda: True) == LoopOperation(op, said)
    assert second_look(None, agent_task(said, None), sure("task", "data_query", 0.3),
                        names_one=lambda: False) is None


def test_a_note_on_a_task_that_says_remember_is_no_new_reminder():
    said = "这个任务记个备忘：下次请求记得带上token"
    assert second_look(NewLoop(None, said, reminder=True), agent_task(said, None), None) is None
    asked = "记得帮我把报告发给老板"
    new = NewLoop(None, asked, reminder=True)
    assert second_look(new, agent_task(asked, None), None) is new


def test_a_time_said_in_passing_is_no_new_loop_when_the_message_reads_surely_as_conversation():
    said = "got any coffee jokes? need one before my 8am"
    passing = NewLoop(None, said, reminder=False)
    assert second_look(passing, agent_task(said, None), sure("chat", "joke", 0.76)) is None
    asked = NewLoop(None, "stretch", reminder=True)  # "remind me at 8am to stretch" stays a reminder
    assert second_look(asked, agent_task("remind me at 8am to stretch", None), sure("chat", "joke", 0.76)) is asked


def test_a_time_while_a_question_waits_is_left_to_understanding():
    answer = agent_task("周五上午吧，十点左右", None, pending="task_1")
    assert second_look(NewLoop(None, "左右", reminder=True), answer, sure("answer", "value", 0.65)) is None
    # without a question waiting, a time is a new reminder; an unsure reading changes nothing
    new = NewLoop(None, "stretch", reminder=True)
    assert second_look(new, agent_task("x", None), sure("answer", "value")) is new
    kept = LoopOperation("pause", "pause the gym reminder")
    assert second_look(kept, agent_task("x", None), sure("chat")) is kept


def test_the_bench_reads_the_bank_by_itself_and_times_a_reading_beside_the_embedding(capsys):
    from bench import semantic_reading

    result = semantic_reading.main(["--quick"])
    loo = result["vote"]["bank, leave-one-out"]
    assert loo["n"] == result["bank"] >= 1000
    vote, mixed = result["vote"]["bank, by folds"], result["mixed"]["bank, by folds"]
    assert mixed["n"] == vote["n"] == result["bank"]
    # the thresholds Flora uses are set by these figures: a sure reading is right far more often
    # than the family is on average, and a near-certain one almost always; the head mixed into
    # the vote reads better, and at each threshold at least as precisely as the vote alone did
    sure, certain = f"{semantic.SURE:.2f}", f"{semantic.CERTAIN:.2f}"
    assert mixed["at"][sure]["right"] > mixed["accuracy"] > vote["accuracy"] > 0.6
    assert mixed["at"][certain]["right"] >= 0.95
    for name, figures in result["calibration"].items():
        assert figures["mixed_folds"]["right"] >= figures["vote_loo"]["right"], name
    assert result["cost"]["mixed_p50_ms"] > 0 and result["cost"]["embed_p50_ms"] > 0
    assert result["cost"]["head_p99_ms"] < 1.0
    assert "leave-one-out" in capsys.readouterr().out


def test_a_reading_that_only_leans_makes_an_operation_only_with_a_word_that_names_it():
    assert operation_read_as("comment", "use your tools: the total of 4 plus 5, said back", needs_word=True) is None
    assert operation_read_as("rerun", "same request again please", needs_word=True) == TaskOperation(
        "re_run_task", "last", "")


def test_a_capability_the_examples_do_not_know_is_never_overruled(intents):
    unknown = Intent("task", "crash_the_model")  # a plugin's: no example of it in the bank
    assert intents.second_opinion("crash the model, please", unknown, sure("command", "switch_model", 0.95)) is unknown
    assert intents.examples_know("http_request") and not intents.examples_know("crash_the_model")
    assert intents.examples_know(None)


def test_installed_capabilities_add_their_declared_examples_to_the_bank():
    registry = build_registry(FloraConfig(), llm=None)
    bank = registry.get_capability("semantic_examples")
    declared = {u.text for u in bank.utterances if u.kind == "dify_workflow"}
    assert set(registry.get_executable("dify_workflow").examples) <= declared
    assert "dify_workflow" in bank.known


def test_a_question_only_the_persons_world_answers_is_no_reminder_without_a_time():
    said = "帮我看一下我邮箱里面有没有学校发过来的家长会通知我记得是这周但是忘了具体哪天"
    assert second_look(NewLoop(None, said, reminder=True), agent_task(said, None), None) is None
