"""Loop requests and times in the words people use: asking what they have scheduled, an
interval whose task carries its own question, "every other hour", and a part of the day
("下班前", "after work", "晚上") that makes an hour up to 12 afternoon or evening."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from capabilities.loop.parse import parse_schedule
from capabilities.loop.requests import LoopOperation, NewLoop, only_a_time, read_loop_request

NOW = datetime(2026, 3, 2, 1, 0, tzinfo=UTC)  # 09:00 in Shanghai, a Monday
SH = "Asia/Shanghai"


def read(text: str):
    return read_loop_request(text, lambda t: parse_schedule(t, now=NOW, timezone=SH))


def clock(text: str) -> str:
    parsed = parse_schedule(text, now=NOW, timezone=SH)
    assert parsed is not None, text
    return parsed.description


@pytest.mark.parametrize("text", [
    "我之前都设了哪些提醒啊", "我现在一共有几个定时任务？", "提醒都有些什么来着", "我建了多少个循环任务",
    "could I see all my reminders?", "what have I got scheduled?", "let me see everything we've scheduled",
    "is there anything scheduled for me?", "what's scheduled?",
])
def test_asking_what_is_scheduled_lists_the_loop_tasks(text):
    found = read(text)
    assert isinstance(found, LoopOperation) and found.op == "list"


@pytest.mark.parametrize("text", [
    "提醒我晚上问问老婆想吃什么",  # what to be reminded of asks something: a new reminder
    "加个提醒，周五问我这周学了什么",
    "remind me at 6pm to see what's on TV",
])
def test_a_new_reminder_whose_text_asks_something_is_not_a_listing(text):
    assert isinstance(read(text), NewLoop)


@pytest.mark.parametrize("text", [
    "what's scheduled for the product launch?",  # a question about something else
    "这个提醒是什么意思",
])
def test_a_question_about_something_scheduled_is_not_a_listing(text):
    assert not isinstance(read(text), LoopOperation)


@pytest.mark.parametrize("text, every, task", [
    ("每隔三小时统计一下今天新注册的用户有多少", 3 * 3600, "统计一下今天新注册的用户有多少"),
    ("每隔30分钟看看队列里还有多少条消息", 1800, "看看队列里还有多少条消息"),
    ("every 4 hours check how many tickets are still open?", 4 * 3600, "check how many tickets are still open?"),
    ("every other hour count the failed logins", 7200, "count the failed logins"),
    ("every couple of hours ping the status page", 7200, "ping the status page"),
    ("every other minute look up the queue length", 120, "look up the queue length"),
])
def test_an_interval_is_a_loop_even_when_its_task_asks_something(text, every, task):
    found = read(text)
    assert isinstance(found, NewLoop) and found.parsed is not None
    assert found.parsed.schedule.every_s == every and found.task_text == task


@pytest.mark.parametrize("text", ["每天喝多少水合适？", "每隔多久换一次牙刷比较好？", "how many hours a day should I sleep?"])
def test_a_question_about_how_often_stays_a_question(text):
    assert read(text) is None


@pytest.mark.parametrize("text, at", [
    ("下班前，5点半", "17:30"),
    ("收工后吧，7点", "19:00"),
    ("睡前10点", "22:00"),
    ("晚上，8点", "20:00"),
    ("after work at 7", "19:00"),
    ("at 6 after work", "18:00"),
    ("明天下班后提醒我交报告", "18:00"),
])
def test_a_part_of_the_day_makes_an_hour_up_to_12_afternoon_or_evening(text, at):
    assert at in clock(text)


@pytest.mark.parametrize("text, at", [
    ("明天9点提醒我晚上去健身", "09:00"),  # the evening is the task's, not the clock's
    ("下班前提醒我，早上8点先开会", "08:00"),
    ("6点", "06:00"),
])
def test_a_part_of_the_day_elsewhere_or_a_morning_one_leaves_the_hour_alone(text, at):
    assert at in clock(text)


@pytest.mark.parametrize("text", ["下班前吧，6点", "晚上 7点吧", "7点", "after work at 6 please", "提醒我明天9点"])
def test_a_time_alone_with_filler_or_a_part_of_the_day_is_only_a_time(text):
    assert only_a_time(text)


@pytest.mark.parametrize("text", ["下班前6点提醒我交周报", "after work at 6 call the plumber", "list my reminders",
                                  "每隔两小时查一下订单"])
def test_a_time_with_something_to_do_is_not_only_a_time(text):
    assert not only_a_time(text)
