"""Reading schedules out of Chinese and English text, at a fixed ``now``."""

from __future__ import annotations

import socket
from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest

from capabilities.loop.parse import has_schedule, parse_schedule
from capabilities.loop.schedule import Schedule, ScheduleError, next_fire

SH = "Asia/Shanghai"
NY = "America/New_York"
NOW = datetime(2026, 3, 6, 10, 7, 33, tzinfo=ZoneInfo(SH))  # a Friday morning


def utc(*args) -> datetime:
    return datetime(*args, tzinfo=UTC)


def local(zone: str, *args) -> datetime:
    return datetime(*args, tzinfo=ZoneInfo(zone))


def read(text: str, now: datetime = NOW, timezone: str = SH):
    parsed = parse_schedule(text, now=now, timezone=timezone)
    assert parsed is not None, f"no schedule found in {text!r}"
    return parsed


def fire_time(schedule: Schedule):
    """What a schedule pins down: the cron, the one-shot instant, or (every_s, first fire)."""
    if schedule.kind == "cron":
        return schedule.cron
    if schedule.kind == "once":
        return datetime.fromisoformat(schedule.at).astimezone(UTC)
    return schedule.every_s, datetime.fromisoformat(schedule.start_at).astimezone(UTC)


RECURRING = [
    ("每天早上9点提醒我复习GRPO", "0 9 * * *", "提醒我复习GRPO"),
    ("每日晚上8点写日记", "0 20 * * *", "写日记"),
    ("every day at 09:00 stand up", "0 9 * * *", "stand up"),
    ("daily at 6pm back up the database", "0 18 * * *", "back up the database"),
    ("每天下午3点半喝茶", "30 15 * * *", "喝茶"),
    ("每天8点30分打卡", "30 8 * * *", "打卡"),
    ("每天两点提醒我吃药", "0 2 * * *", "提醒我吃药"),
    ("每晚10点提醒我睡觉", "0 22 * * *", "提醒我睡觉"),
    ("every evening at 7 call home", "0 19 * * *", "call home"),
    ("every Monday at 10:00 fetch the sales report", "0 10 * * 1", "fetch the sales report"),
    ("每周一 10:00 拉取销售报表", "0 10 * * 1", "拉取销售报表"),
    ("每个星期五下午5点写周报", "0 17 * * 5", "写周报"),
    ("每周一、三、五早上8点跑步", "0 8 * * 1,3,5", "跑步"),
    ("every Monday and Thursday at 18:30 go to the gym", "30 18 * * 1,4", "go to the gym"),
    ("on Sundays at 8pm plan the week", "0 20 * * 0", "plan the week"),
    ("every weekday at 9am post the stand-up", "0 9 * * 1-5", "post the stand-up"),
    ("工作日早上9点提醒我打卡", "0 9 * * 1-5", "提醒我打卡"),
    ("每周一到周五 9点 开晨会", "0 9 * * 1-5", "开晨会"),
    ("every weekend at 10am call mom", "0 10 * * 0,6", "call mom"),
    ("每月1号上午10点交房租", "0 10 1 * *", "交房租"),
    ("every month on the 15th at 9am pay the card", "0 9 15 * *", "pay the card"),
    ("every morning review the inbox", "0 9 * * *", "review the inbox"),
    ("每天提醒我喝水", "0 9 * * *", "提醒我喝水"),
]


@pytest.mark.parametrize("text, cron, remainder", RECURRING)
def test_calendar_recurrences_become_cron_in_the_callers_timezone(text, cron, remainder):
    parsed = read(text)
    assert (parsed.schedule.kind, parsed.schedule.cron, parsed.schedule.timezone) == ("cron", cron, SH)
    assert parsed.remainder == remainder


INTERVALS = [
    ("每隔2小时检查一下服务器", 7200, "检查一下服务器"),
    ("每2小时同步一次", 7200, "同步一次"),
    ("每两个小时喝水", 7200, "喝水"),
    ("每隔十五分钟刷新缓存", 900, "刷新缓存"),
    ("每隔半小时看一眼", 1800, "看一眼"),
    ("every 30 minutes poll the queue", 1800, "poll the queue"),
    ("every two hours rotate the logs", 7200, "rotate the logs"),
    ("every half hour stretch", 1800, "stretch"),
    ("hourly check the mail", 3600, "check the mail"),
    ("每小时检查一次", 3600, "检查一次"),
    ("每周备份一次", 604800, "备份一次"),
]


@pytest.mark.parametrize("text, every_s, remainder", INTERVALS)
def test_intervals_first_fire_one_interval_after_now(text, every_s, remainder):
    parsed = read(text)
    assert fire_time(parsed.schedule) == (every_s, NOW.astimezone(UTC) + timedelta(seconds=every_s))
    assert parsed.remainder == remainder


def test_an_interval_of_days_with_a_time_first_fires_at_the_next_such_time():
    parsed = read("每隔3天早上7点跑步")  # 07:00 today has passed, so tomorrow's 07:00
    assert fire_time(parsed.schedule) == (3 * 86400, utc(2026, 3, 6, 23, 0))
    assert parsed.remainder == "跑步"


ONE_SHOTS = [
    ("remind me at 15:30 to call Li", utc(2026, 3, 6, 7, 30), "remind me to call Li"),
    ("15:30 call Li", utc(2026, 3, 6, 7, 30), "call Li"),
    ("下午3点半开会", utc(2026, 3, 6, 7, 30), "开会"),
    ("晚上8点提醒我吃药", utc(2026, 3, 6, 12, 0), "提醒我吃药"),
    ("at 9am email the team", utc(2026, 3, 7, 1, 0), "email the team"),
    ("3 p.m. call mom", utc(2026, 3, 6, 7, 0), "call mom"),
    ("remind me at noon to eat", utc(2026, 3, 6, 4, 0), "remind me to eat"),
    ("at 8 o'clock in the evening lock the door", utc(2026, 3, 6, 12, 0), "lock the door"),
    ("中午1点吃饭", utc(2026, 3, 6, 5, 0), "吃饭"),
    ("8点一刻开会", utc(2026, 3, 7, 0, 15), "开会"),
    ("晚上12点关灯", utc(2026, 3, 6, 16, 0), "关灯"),
    ("在下午3点提醒我", utc(2026, 3, 6, 7, 0), "提醒我"),
    ("in 20 minutes check the build", utc(2026, 3, 6, 2, 27, 33), "check the build"),
    ("20分钟后提醒我喝水", utc(2026, 3, 6, 2, 27, 33), "提醒我喝水"),
    ("两小时后看一下日志", utc(2026, 3, 6, 4, 7, 33), "看一下日志"),
    ("二十分钟后关火", utc(2026, 3, 6, 2, 27, 33), "关火"),
    ("半小时后提醒我", utc(2026, 3, 6, 2, 37, 33), "提醒我"),
    ("一个半小时后开会", utc(2026, 3, 6, 3, 37, 33), "开会"),
    ("过20分钟提醒我", utc(2026, 3, 6, 2, 27, 33), "提醒我"),
    ("in an hour ping me", utc(2026, 3, 6, 3, 7, 33), "ping me"),
    ("30 minutes from now restart it", utc(2026, 3, 6, 2, 37, 33), "restart it"),
    ("tomorrow at 8am send the report", utc(2026, 3, 7, 0, 0), "send the report"),
    ("明天早上8点叫我起床", utc(2026, 3, 7, 0, 0), "叫我起床"),
    ("后天下午两点开会", utc(2026, 3, 8, 6, 0), "开会"),
    ("今晚8点看球", utc(2026, 3, 6, 12, 0), "看球"),
    ("3天后上午10点复查", utc(2026, 3, 9, 2, 0), "复查"),
    ("2026-12-01 09:00 开会提醒", utc(2026, 12, 1, 1, 0), "开会提醒"),
    ("12月1日 9点 交报告", utc(2026, 12, 1, 1, 0), "交报告"),
    ("2026年12月1日上午9点开会", utc(2026, 12, 1, 1, 0), "开会"),
    ("下周一上午10点开会", utc(2026, 3, 9, 2, 0), "开会"),
    ("周五下午3点开会", utc(2026, 3, 6, 7, 0), "开会"),
    ("周五上午9点开会", utc(2026, 3, 13, 1, 0), "开会"),  # this Friday's 09:00 is gone
    ("这周三下午5点半交作业", utc(2026, 3, 11, 9, 30), "交作业"),  # this week's Wednesday is gone: the coming one
    ("这周六上午10点剪头发", utc(2026, 3, 7, 2, 0), "剪头发"),  # still ahead this week
    ("明天提醒我交报告", utc(2026, 3, 7, 1, 0), "提醒我交报告"),  # no time: 09:00
    ("remind me on March 3rd at 9am to pay rent", utc(2027, 3, 3, 1, 0), "remind me to pay rent"),
    ("next friday at 10am call bob", utc(2026, 3, 13, 2, 0), "call bob"),
    ("next monday at 10 send the invoice", utc(2026, 3, 9, 2, 0), "send the invoice"),
    # a weekday and a bare hour: that weekday at that hour, never a month and day
    ("book a room on Thursday at 9", utc(2026, 3, 12, 1, 0), "book a room"),
    ("Tuesday at 14:00 call the bank", utc(2026, 3, 10, 6, 0), "call the bank"),
    ("remind me this sunday at 8pm to plan the week", utc(2026, 3, 8, 12, 0), "remind me to plan the week"),
    ("on Friday at 11am demo day", utc(2026, 3, 6, 3, 0), "demo day"),  # today's 11:00 is ahead
    ("on friday at 9am standup", utc(2026, 3, 13, 1, 0), "standup"),  # today's 09:00 is gone
    ("tomorrow 7:15pm call mum", utc(2026, 3, 7, 11, 15), "call mum"),  # "7:15pm" whole, not "7:15" and "pm"
    ("Dec 24 at 18:30 dinner with the team", utc(2026, 12, 24, 10, 30), "dinner with the team"),
    ("remind me on the 5th of April", utc(2026, 4, 5, 1, 0), "remind me"),
    # a day with its part of the day: one phrase, which sets the clock's half of the day
    ("tomorrow evening at 7:45 water the plants", utc(2026, 3, 7, 11, 45), "water the plants"),
    ("6:15 tomorrow morning go running", utc(2026, 3, 6, 22, 15), "go running"),
    ("at 10 tomorrow night check the backups", utc(2026, 3, 7, 14, 0), "check the backups"),
    ("today in the afternoon at 4 feed the cat", utc(2026, 3, 6, 8, 0), "feed the cat"),
]


@pytest.mark.parametrize("text, at, remainder", ONE_SHOTS)
def test_one_shots_resolve_to_one_instant(text, at, remainder):
    parsed = read(text)
    assert parsed.schedule.kind == "once"
    assert fire_time(parsed.schedule) == at
    assert parsed.remainder == remainder


@pytest.mark.parametrize("text, description", [
    ("每天早上9点提醒我复习GRPO", "every day at 09:00 (Asia/Shanghai)"),
    ("every Monday at 10:00 fetch the sales report", "every Monday at 10:00 (Asia/Shanghai)"),
    ("工作日早上9点提醒我打卡", "every weekday at 09:00 (Asia/Shanghai)"),
    ("每周一、三、五早上8点跑步", "every Monday, Wednesday and Friday at 08:00 (Asia/Shanghai)"),
    ("每隔2小时检查一下服务器", "every 2 hours, first at 2026-03-06 12:07 (Asia/Shanghai)"),
    ("in 20 minutes check the build", "once at 2026-03-06 10:27 (Asia/Shanghai)"),
    ("每月1号上午10点交房租", "on day 1 of every month at 10:00 (Asia/Shanghai)"),
])
def test_the_description_says_what_was_registered(text, description):
    assert read(text).description == description


@pytest.mark.parametrize("now, at", [
    (local(SH, 2026, 3, 6, 15, 0), utc(2026, 3, 6, 7, 30)),  # still ahead today
    (local(SH, 2026, 3, 6, 15, 30), utc(2026, 3, 7, 7, 30)),  # exactly now: tomorrow
    (local(SH, 2026, 3, 6, 16, 0), utc(2026, 3, 7, 7, 30)),  # passed: tomorrow
    (local(SH, 2026, 3, 31, 16, 0), utc(2026, 4, 1, 7, 30)),  # and into the next month
    (local(SH, 2026, 12, 31, 16, 0), utc(2027, 1, 1, 7, 30)),  # and the next year
])
def test_a_bare_time_is_today_or_else_tomorrow(now, at):
    assert fire_time(read("at 15:30 call Li", now=now).schedule) == at
    assert fire_time(read("下午3点半给老李打电话", now=now).schedule) == at


@pytest.mark.parametrize("text, now, at", [
    ("in 20 minutes check the build", local(SH, 2026, 12, 31, 23, 50), utc(2026, 12, 31, 16, 10)),
    ("tomorrow at 8am send the report", local(SH, 2026, 12, 31, 20, 0), utc(2027, 1, 1, 0, 0)),
    ("明天早上8点叫我起床", local(SH, 2026, 2, 28, 20, 0), utc(2026, 3, 1, 0, 0)),
    ("12月1日 9点 交报告", local(SH, 2026, 12, 15, 10, 0), utc(2027, 12, 1, 1, 0)),  # gone this year
    ("12月1日 9点 交报告", local(SH, 2026, 12, 1, 8, 0), utc(2026, 12, 1, 1, 0)),  # still ahead today
    ("2026-01-05 09:00 开会", local(SH, 2026, 3, 6, 10, 0), utc(2026, 1, 5, 1, 0)),  # a past year is kept
])
def test_dates_roll_over_months_and_years(text, now, at):
    assert fire_time(read(text, now=now).schedule) == at


def test_a_past_one_shot_with_an_explicit_year_never_fires():
    parsed = read("2026-01-05 09:00 开会", now=NOW)
    assert next_fire(parsed.schedule, NOW) is None  # the caller says so instead of registering


@pytest.mark.parametrize("text, now, timezone, expected", [
    ("every day at 9am water the plants", local(NY, 2026, 3, 6, 10, 0), NY, "0 9 * * *"),
    # 02:30 is skipped on 8 March: the jump, 03:00 EDT
    ("tomorrow at 2:30am run the backup", local(NY, 2026, 3, 7, 10, 0), NY, utc(2026, 3, 8, 7, 0)),
    ("tomorrow at 1:30am run the backup", local(NY, 2026, 10, 31, 10, 0), NY, utc(2026, 11, 1, 5, 30)),
    ("in 20 minutes check the oven", local("Europe/London", 2026, 3, 29, 0, 50), "Europe/London",
     utc(2026, 3, 29, 1, 10)),  # elapsed time, across the jump
    ("at 15:30 call Li", utc(2026, 3, 6, 10, 0), "UTC", utc(2026, 3, 6, 15, 30)),
])
def test_times_are_read_in_the_given_timezone(text, now, timezone, expected):
    parsed = read(text, now=now, timezone=timezone)
    assert parsed.schedule.timezone == timezone
    assert fire_time(parsed.schedule) == expected


def test_a_daily_reminder_in_new_york_keeps_its_wall_clock_time_across_the_jump():
    parsed = read("every day at 9am water the plants", now=local(NY, 2026, 3, 7, 10, 0), timezone=NY)
    assert next_fire(parsed.schedule, local(NY, 2026, 3, 7, 10, 0)) == utc(2026, 3, 8, 13, 0)


def test_the_parsed_schedule_round_trips_through_json():
    schedule = read("每隔2小时检查一下服务器").schedule
    assert Schedule.from_dict(schedule.to_dict()) == schedule


NOT_SCHEDULES = [
    "run the dify workflow",
    "what is 2+2",
    "add numbers a=2 b=3",
    "convert 30 degrees",
    "convert 30 minutes to seconds",
    "list the top 10 products",
    "show me the sales for March",
    "summarise the 2024-05-01 report",
    "version 1.2.3 release notes",
    "what's the weather today",
    "book a flight tomorrow",
    "how many hours in a day",
    "what happens every day at the office?",
    "查询订单12345",
    "把30摄氏度转换成华氏度",
    "给我一点建议",
    "第3点是什么",
    "股市涨了3点",
    "明天天气怎么样",
    "每天喝多少水合适？",
    "每小时多少公里",
    "每个用户的订单数",
    # each day's (week's) numbers and a hyphenated name are things, not schedules
    "上个月每天的销售额汇总一下",
    "把每周的会议纪要整理一下",
    "open the weekly-sync notes",
    "run the daily-backup workflow",
]


@pytest.mark.parametrize("text", NOT_SCHEDULES)
def test_plain_requests_have_no_schedule(text):
    assert parse_schedule(text, now=NOW, timezone=SH) is None


@pytest.mark.parametrize("text", [t for t, *_ in RECURRING + INTERVALS + ONE_SHOTS])
def test_the_pre_check_never_hides_a_schedule(text):
    assert has_schedule(text)


@pytest.mark.parametrize("text", ["run the dify workflow", "what is 2+2", "add numbers a=2 b=3",
                                  "convert 30 degrees", "list the top 10 products",
                                  "show me the sales for March", "查询订单12345", "把30摄氏度转换成华氏度"])
def test_the_pre_check_passes_over_plain_requests(text):
    assert not has_schedule(text)


def test_full_width_digits_are_read_like_ascii_ones():
    assert fire_time(read("每天１０：３０开会").schedule) == "30 10 * * *"


def test_an_impossible_interval_is_refused_naming_the_field():
    with pytest.raises(ScheduleError) as caught:
        parse_schedule("every 0 minutes ping the server", now=NOW, timezone=SH)
    assert caught.value.field == "every_s"


def test_an_unknown_timezone_is_refused_naming_the_field():
    with pytest.raises(ScheduleError) as caught:
        parse_schedule("at 15:30 call Li", now=NOW, timezone="Nowhere/City")
    assert caught.value.field == "timezone"


def test_now_must_be_timezone_aware():
    with pytest.raises(ValueError, match="now"):
        parse_schedule("at 15:30 call Li", now=datetime(2026, 3, 6, 10, 0), timezone=SH)


def test_the_dateparser_fallback_never_touches_the_network(monkeypatch):
    def refuse(*_args, **_kwargs):
        raise AssertionError("schedule parsing opened a network connection")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    assert fire_time(read("remind me on March 3rd at 9am to pay rent").schedule) == utc(2027, 3, 3, 1, 0)


@pytest.mark.parametrize("text, description", [
    ("every friday at 5pm draft the weekly summary", "every Friday at 17:00"),
    ("send the weekly report every monday at 9", "every Monday at 09:00"),
])
def test_how_often_a_named_thing_comes_is_no_schedule_beside_the_one_asked_for(text, description):
    assert read(text).description.startswith(description)


@pytest.mark.parametrize("text", ["you can bin the daily practice reminder", "how was my weekly review?"])
def test_a_thing_named_by_how_often_it_comes_asks_for_no_schedule(text):
    assert parse_schedule(text, now=NOW, timezone=SH) is None


@pytest.mark.parametrize("text", ["send me a weekly summary", "run the report daily at 8", "check the site hourly"])
def test_how_often_said_of_what_is_asked_for_is_a_schedule(text):
    assert read(text) is not None
