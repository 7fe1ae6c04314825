"""Reading loop requests in plain words: operations on loop tasks, new loop tasks, and the
ordinary requests that must stay ordinary."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from capabilities.loop.parse import parse_schedule
from capabilities.loop.requests import LoopOperation, NewLoop, looks_like_loop_request, read_loop_request, schedule_words

NOW = datetime(2026, 3, 2, 0, 0, tzinfo=UTC)


def read(text: str):
    return read_loop_request(text, lambda t: parse_schedule(t, now=NOW, timezone="Asia/Shanghai"))


@pytest.mark.parametrize("text, op", [
    ("list my loop tasks", "list"), ("show my reminders", "list"), ("我有哪些定时任务", "list"),
    ("列出我的提醒", "list"), ("pause the GRPO reminder", "pause"), ("暂停GRPO提醒", "pause"),
    ("resume loop_0123456789ab", "resume"), ("恢复GRPO提醒", "resume"),
    ("turn the standup reminder back on", "resume"), ("switch my reminders off", "pause"), ("把早会提醒关掉", "pause"),
    ("delete the plants reminder", "delete"),
    ("把GRPO提醒删掉", "delete"), ("stop reminding me about GRPO", "delete"), ("cancel my 9am reminder", "delete"),
    ("run the GRPO reminder now", "trigger"), ("立即执行GRPO提醒", "trigger"),
    ("喝水提醒手动跑一下", "trigger"), ("把喝水提醒再开起来", "resume"),
    ("change loop_0123456789ab to every day at 10:00", "modify"), ("把GRPO提醒改成每天10点", "modify"),
])
def test_operations(text, op):
    found = read(text)
    assert isinstance(found, LoopOperation) and found.op == op


@pytest.mark.parametrize("text, op", [
    # switched on again; the object first, said as no longer wanted, with a reason after it
    ("I'm back from holiday, turn the water reminder on again", "resume"),
    ("flip the stretching reminder on again please", "resume"), ("re-enable the plants reminder", "resume"),
    ("把站会提醒重新开启", "resume"), ("继续提醒我喝水", "resume"),
    ("喝水那个提醒删了吧，没用了", "delete"), ("GRPO的提醒不需要了", "delete"),
    ("那个站会提醒给我删掉吧，不开会了", "delete"), ("那个提醒不用继续了", "delete"),
    ("the plants reminder - get rid of it", "delete"), ("reminder about stretching, scrap it", "delete"),
    ("I don't need the plants reminder anymore", "delete"), ("别再提醒我喝水了", "delete"),
    ("把喝水提醒停了", "pause"),
])
def test_operations_said_object_first_or_as_no_longer_wanted(text, op):
    found = read(text)
    assert isinstance(found, LoopOperation) and found.op == op


@pytest.mark.parametrize("text", [
    "remind me to switch the heater on again at 7", "set a reminder to turn the lights back on at 6",
    "cancel the subscription, then remind me tomorrow", "把旧文件删了，明天提醒我检查一下",
    "明天提醒我把不要的照片删了", "提醒小王把旧文件删掉", "每天定时删掉旧日志",
])
def test_an_operation_word_on_something_else_leaves_a_new_loop_task(text):
    assert isinstance(read(text), NewLoop)


def test_modify_keeps_the_new_schedule_text_and_parameters():
    found = read("change loop_0123456789ab to every day at 10:00")
    assert found.schedule_text.strip().endswith("to every day at 10:00")
    assert read("update loop_0123456789ab limit=5").parameters == {"limit": "5"}


@pytest.mark.parametrize("text, task, reminder, kind", [
    ("每天早上9点提醒我复习GRPO", "复习GRPO", True, "cron"),
    ("every Monday at 10:00 fetch the sales report", "fetch the sales report", False, "cron"),
    ("remind me at 15:30 to call Li", "call Li", True, "once"),
    ("in 20 minutes check the build", "check the build", False, "once"),
    ("remind me to cancel the subscription tomorrow", "cancel the subscription", True, "once"),
    ("明天早上8点叫我起床", "起床", True, "once"), ("明天记得带伞", "带伞", True, "once"),
    ("明天9点记得提醒我交报告", "交报告", True, "once"),
    ("每天8点告诉我天气", "告诉我天气", False, "cron"),  # a loop running the request, not a reminder
    # other words for "remind me": a shout, a nudge; "喊我" as "叫我"
    ("give me a shout in fifteen minutes to take the bread out", "take the bread out", True, "once"),
    ("nudge me at 4pm to stretch", "stretch", True, "once"), ("半小时后喊我一声收衣服", "收衣服", True, "once"),
])
def test_new_loop_tasks(text, task, reminder, kind):
    found = read(text)
    assert isinstance(found, NewLoop) and found.task_text == task and found.reminder is reminder
    assert found.parsed.schedule.kind == kind


def test_can_or_not_with_no_one_named_is_a_request_not_a_question():
    found = read("can check https://x.example.sg/health every 5 minutes or not?")  # Singapore English
    assert isinstance(found, NewLoop) and "https://x.example.sg/health" in found.task_text
    assert found.parsed.schedule.kind == "interval" and found.parsed.schedule.every_s == 300
    assert read("can dogs eat grapes every day or not?") is None  # someone named: a question


def test_a_reminder_without_a_time_is_still_a_loop_request_and_auto_continue_is_read():
    found = read("remind me to call Li")
    assert isinstance(found, NewLoop) and found.parsed is None and found.task_text == "call Li"
    assert read("every day at 9 remind me to study, and follow up").auto_continue


@pytest.mark.parametrize("text", [
    "add numbers a=2 b=3", "what's the weather tomorrow", "每天喝多少水合适？", "执行Dify工作流",
    "15:30", "show the train schedule", "hi",
])
def test_ordinary_requests_and_bare_times_are_not_loop_requests(text):
    assert read(text) is None
    assert not looks_like_loop_request(text)


@pytest.mark.parametrize("text", [
    "告诉我一个笑话", "告诉我今天星期几", "告诉我怎么煮饭",  # "tell me": something now
    "你还记得我叫什么吗？", "你记得我住在哪吗", "我记得他叫小王", "记得吗", "你记得明天几点开会吗",  # memory
    "叫我小明就行",  # a name
])
def test_tell_me_call_me_and_remember_are_not_reminders_unless_they_ask_for_one(text):
    assert read(text) is None


def test_the_words_that_say_when_are_what_is_left_of_the_task():
    said = "book a room on Thursday at 9"
    assert schedule_words(said, read(said)) == "on Thursday at 9"
    said = "明天早上9点帮我查一下订单"
    assert schedule_words(said, read(said)) == "明天早上9点"


@pytest.mark.parametrize("text, task", [("三刻钟后叫我把洗衣机里的衣服晾了", "把洗衣机里的衣服晾了"),
                                        ("一刻钟后提醒我关火", "关火"), ("半小时后叫我去接孩子", "接孩子")])
def test_a_quarter_of_an_hour_and_call_me_after_a_time_ask_for_a_reminder(text, task):
    found = read(text)
    assert isinstance(found, NewLoop) and found.reminder and found.task_text == task
    assert found.parsed is not None and found.parsed.schedule.kind == "once"


@pytest.mark.parametrize("text", ["老板叫我把报告改一下", "叫我小明就行"])
def test_call_me_without_a_time_before_it_is_no_reminder(text):
    assert read(text) is None


@pytest.mark.parametrize("text", ["帮我给小区物业写个投诉，楼上装修天天早上七点就开钻，措辞正式一点",
                                  "write a note to my neighbour asking them to keep the music down after 11 every night"])
def test_a_time_inside_what_is_to_be_written_is_no_schedule(text):
    assert read(text) is None


@pytest.mark.parametrize("text", ["create notes/desk.txt containing 'the courier comes at 4pm on Fridays'",
                                  "新建一个 todo.md，内容是“明天早上8点交报告”",
                                  'save "back at 9:30" as my away message in status.txt'])
def test_a_time_said_only_inside_quotes_is_what_is_written_not_a_schedule(text):
    assert read(text) is None


@pytest.mark.parametrize("text", ["remind me at 5pm to text 'running late, there by 6'",
                                  "every Monday at 9 post 'standup in 5 minutes' to the team"])
def test_a_time_outside_the_quotes_still_says_when(text):
    found = read(text)
    assert isinstance(found, NewLoop) and found.parsed is not None and "'" in found.task_text


@pytest.mark.parametrize("text", ["每天早上8点帮我写一份日报", "every friday at 5pm draft the weekly summary"])
def test_a_time_before_the_writing_says_when_to_write(text):
    found = read(text)
    assert isinstance(found, NewLoop) and found.parsed is not None and found.parsed.schedule.kind == "cron"


@pytest.mark.parametrize("text", ["gave up on Spanish 😅 you can bin the daily practice reminder",
                                  "axe the plants reminder", "nix my 9am reminder"])
def test_other_words_for_deleting_a_loop_task(text):
    found = read(text)
    assert isinstance(found, LoopOperation) and found.op == "delete"


def test_the_bins_in_a_reminders_name_are_no_word_for_deleting_it():
    found = read("every Tuesday at 8pm remind me to take the bins out")
    assert isinstance(found, NewLoop) and found.reminder


def test_a_question_for_what_flora_reminds_or_checks_on_a_schedule_lists_them():
    found = read("which things are you checking or reminding me about on a schedule?")
    assert isinstance(found, LoopOperation) and found.op == "list"


def test_a_thing_named_by_the_part_of_the_day_it_comes_is_no_schedule():
    assert read("库存那个每天早上的查询不要了，我换了个进销存软件，删掉吧") is None
    found = read("每天早上8点查一下库存")
    assert isinstance(found, NewLoop) and found.parsed.schedule.cron == "0 8 * * *"
