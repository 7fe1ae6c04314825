"""Schedules: validation, JSON, next fires (with daylight saving), owed runs, run keys."""

from __future__ import annotations

import json
import pickle
from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest

from capabilities.loop.schedule import (
    Schedule,
    ScheduleError,
    due_runs,
    next_fire,
    previous_fire,
    resolve_wall_time,
    run_key,
)

SH = ZoneInfo("Asia/Shanghai")
NY = ZoneInfo("America/New_York")


def utc(*args) -> datetime:
    return datetime(*args, tzinfo=UTC)


def daily_9_shanghai() -> Schedule:
    return Schedule.on_cron("0 9 * * *", timezone="Asia/Shanghai")


def fires(schedule: Schedule, after: datetime, count: int) -> list[datetime]:
    out = []
    for _ in range(count):
        after = next_fire(schedule, after)
        out.append(after)
    return out


# --- construction ----------------------------------------------------------------------

@pytest.mark.parametrize("fields, culprit", [
    ({"kind": "weekly", "timezone": "UTC"}, "kind"),
    ({"kind": "cron", "cron": "61 * * * *", "timezone": "UTC"}, "cron"),
    ({"kind": "cron", "cron": "0 9 * * * 5", "timezone": "UTC"}, "cron"),
    ({"kind": "cron", "cron": "@daily", "timezone": "UTC"}, "cron"),
    ({"kind": "cron", "cron": "0 0 30 2 *", "timezone": "UTC"}, "cron"),
    ({"kind": "cron", "timezone": "UTC"}, "cron"),
    ({"kind": "interval", "every_s": 0, "timezone": "UTC"}, "every_s"),
    ({"kind": "interval", "every_s": 0.5, "timezone": "UTC"}, "every_s"),
    ({"kind": "interval", "every_s": True, "timezone": "UTC"}, "every_s"),
    ({"kind": "interval", "every_s": 60, "timezone": "Mars/Olympus"}, "timezone"),
    ({"kind": "interval", "every_s": 60, "timezone": "America"}, "timezone"),
    ({"kind": "interval", "every_s": 60, "timezone": ""}, "timezone"),
    ({"kind": "interval", "every_s": 60, "timezone": "UTC", "start_at": "2026-03-01T09:00"}, "start_at"),
    ({"kind": "interval", "every_s": 60, "timezone": "UTC", "cron": "0 9 * * *"}, "cron"),
    ({"kind": "once", "timezone": "UTC"}, "at"),
    ({"kind": "once", "at": "2026-03-01T09:00:00", "timezone": "UTC"}, "at"),
    ({"kind": "once", "at": "next tuesday", "timezone": "UTC"}, "at"),
    ({"kind": "once", "at": "2026-03-01T09:00:00+08:00", "every_s": 60, "timezone": "UTC"}, "every_s"),
])
def test_an_impossible_schedule_is_refused_naming_the_field(fields, culprit):
    with pytest.raises(ScheduleError) as caught:
        Schedule(**fields)
    assert caught.value.field == culprit
    assert str(caught.value).startswith(f"{culprit}: ")


def test_schedule_error_survives_pickling_between_actor_processes():
    error = pickle.loads(pickle.dumps(ScheduleError("cron", "bad")))
    assert (error.field, error.message) == ("cron", "bad")


@pytest.mark.parametrize("data, culprit", [
    ({"kind": "cron", "cron": "0 9 * * *", "timezone": "UTC", "every": 3}, "every"),
    ({"cron": "0 9 * * *", "timezone": "UTC"}, "kind"),
    ({"kind": "cron", "cron": "0 9 * * *"}, "timezone"),
    (["cron"], "schedule"),
])
def test_from_dict_refuses_unknown_and_missing_fields_by_name(data, culprit):
    with pytest.raises(ScheduleError) as caught:
        Schedule.from_dict(data)
    assert caught.value.field == culprit


@pytest.mark.parametrize("schedule", [
    Schedule.every(7200, timezone="Asia/Shanghai", start_at=datetime(2026, 3, 6, 12, 7, tzinfo=SH)),
    Schedule.every(60, timezone="UTC"),
    Schedule.on_cron("30 18 * * 1,4", timezone="America/New_York"),
    Schedule.once(datetime(2026, 12, 1, 9, 0, tzinfo=SH), timezone="Asia/Shanghai"),
])
def test_a_schedule_round_trips_through_json(schedule):
    text = json.dumps(schedule.to_dict())
    assert Schedule.from_dict(json.loads(text)) == schedule


def test_factories_write_iso_times_with_their_offset():
    once = Schedule.once(datetime(2026, 12, 1, 9, 0, tzinfo=SH), timezone="Asia/Shanghai")
    assert once.at == "2026-12-01T09:00:00+08:00"
    with pytest.raises(ValueError):
        Schedule.once(datetime(2026, 12, 1, 9, 0), timezone="Asia/Shanghai")


# --- next_fire -----------------------------------------------------------------------------

def test_once_fires_only_strictly_after_and_then_never():
    once = Schedule.once(utc(2026, 3, 6, 8, 0), timezone="UTC")
    assert next_fire(once, utc(2026, 3, 6, 7, 59)) == utc(2026, 3, 6, 8, 0)
    assert next_fire(once, utc(2026, 3, 6, 8, 0)) is None
    assert next_fire(once, utc(2026, 3, 7)) is None


def test_next_fire_answers_in_utc_whatever_the_input_offset():
    after = datetime(2026, 3, 6, 10, 0, tzinfo=SH)
    fire = next_fire(daily_9_shanghai(), after)
    assert fire == utc(2026, 3, 7, 1, 0) and fire.tzinfo is UTC


def test_next_fire_refuses_a_naive_datetime():
    with pytest.raises(ValueError, match="after"):
        next_fire(daily_9_shanghai(), datetime(2026, 3, 6, 10, 0))


def test_interval_counts_from_start_at_so_a_late_wakeup_does_not_drift():
    every_hour = Schedule.every(3600, timezone="UTC", start_at=utc(2026, 3, 6, 10, 0))
    assert next_fire(every_hour, utc(2026, 3, 1)) == utc(2026, 3, 6, 10, 0)  # start_at is the first fire
    assert next_fire(every_hour, utc(2026, 3, 6, 10, 0)) == utc(2026, 3, 6, 11, 0)
    assert next_fire(every_hour, utc(2026, 3, 6, 11, 0, 7)) == utc(2026, 3, 6, 12, 0)


def test_interval_without_start_at_is_anchored_at_the_epoch():
    every_15_min = Schedule.every(900, timezone="UTC")
    assert next_fire(every_15_min, utc(2026, 3, 6, 10, 7, 33)) == utc(2026, 3, 6, 10, 15)


def test_interval_counts_elapsed_time_across_daylight_saving():
    every_day = Schedule.every(86400, timezone="America/New_York",
                               start_at=datetime(2026, 3, 7, 9, 0, tzinfo=NY))
    fire = next_fire(every_day, datetime(2026, 3, 7, 9, 0, tzinfo=NY))
    assert fire == utc(2026, 3, 8, 14, 0)  # 24 h later: 10:00 on the wall clock after the jump


@pytest.mark.parametrize("expression, zone, after, expected", [
    ("0 9 * * *", "Asia/Shanghai", datetime(2026, 3, 6, 8, 59, tzinfo=SH),
     [utc(2026, 3, 6, 1), utc(2026, 3, 7, 1)]),
    ("0 10 * * 1", "Asia/Shanghai", datetime(2026, 3, 6, 10, 7, tzinfo=SH),
     [utc(2026, 3, 9, 2), utc(2026, 3, 16, 2)]),
    ("0 9 1 * *", "Asia/Shanghai", datetime(2026, 12, 15, tzinfo=SH),  # into the next year
     [utc(2027, 1, 1, 1), utc(2027, 2, 1, 1)]),
    ("0 0 29 2 *", "UTC", utc(2026, 3, 1), [utc(2028, 2, 29), utc(2032, 2, 29)]),
    ("0 9 * * 1-5", "Europe/London", utc(2026, 3, 6, 12), [utc(2026, 3, 9, 9), utc(2026, 3, 10, 9)]),
])
def test_cron_fires_on_the_wall_clock_of_its_timezone(expression, zone, after, expected):
    assert fires(Schedule.on_cron(expression, timezone=zone), after, 2) == expected


@pytest.mark.parametrize("expression, after, expected", [
    # 9:00 every day keeps 9:00 on the wall: 14:00 UTC before the jump, 13:00 after
    ("0 9 * * *", datetime(2026, 3, 7, 0, 0, tzinfo=NY), [utc(2026, 3, 7, 14), utc(2026, 3, 8, 13)]),
    # 02:30 does not exist on 8 March: it fires at the jump (03:00 EDT), then normally
    ("30 2 * * *", datetime(2026, 3, 7, 12, 0, tzinfo=NY), [utc(2026, 3, 8, 7), utc(2026, 3, 9, 6, 30)]),
    # every hour: 02:00 is skipped, so 01:00 EST is followed by 03:00 EDT, one hour later
    ("0 * * * *", datetime(2026, 3, 8, 0, 30, tzinfo=NY),
     [utc(2026, 3, 8, 6), utc(2026, 3, 8, 7), utc(2026, 3, 8, 8)]),
    # several skipped times share the jump and fire once
    ("*/15 * * * *", datetime(2026, 3, 8, 1, 50, tzinfo=NY),
     [utc(2026, 3, 8, 7), utc(2026, 3, 8, 7, 15)]),
])
def test_cron_on_a_spring_forward_day_in_new_york(expression, after, expected):
    schedule = Schedule.on_cron(expression, timezone="America/New_York")
    assert fires(schedule, after, len(expected)) == expected


@pytest.mark.parametrize("expression, after, expected", [
    # 01:30 happens twice on 1 November: a fixed-hour job fires at the first one only
    ("30 1 * * *", datetime(2026, 10, 31, 12, 0, tzinfo=NY),
     [utc(2026, 11, 1, 5, 30), utc(2026, 11, 2, 6, 30)]),
    ("*/20 1 * * *", datetime(2026, 11, 1, 0, 50, tzinfo=NY),
     [utc(2026, 11, 1, 5), utc(2026, 11, 1, 5, 20), utc(2026, 11, 1, 5, 40), utc(2026, 11, 2, 6)]),
    # an every-hour job fires in each real hour, so 01:00 twice
    ("0 * * * *", datetime(2026, 11, 1, 0, 30, tzinfo=NY),
     [utc(2026, 11, 1, 5), utc(2026, 11, 1, 6), utc(2026, 11, 1, 7)]),
    ("*/30 * * * *", datetime(2026, 11, 1, 1, 10, tzinfo=NY),
     [utc(2026, 11, 1, 5, 30), utc(2026, 11, 1, 6), utc(2026, 11, 1, 6, 30), utc(2026, 11, 1, 7)]),
])
def test_cron_on_a_fall_back_day_in_new_york(expression, after, expected):
    schedule = Schedule.on_cron(expression, timezone="America/New_York")
    assert fires(schedule, after, len(expected)) == expected


def test_cron_on_a_spring_forward_day_in_london():
    at_0130 = Schedule.on_cron("30 1 * * *", timezone="Europe/London")
    assert fires(at_0130, utc(2026, 3, 28, 12), 2) == [utc(2026, 3, 29, 1), utc(2026, 3, 30, 0, 30)]


@pytest.mark.parametrize("expression, before, expected", [
    ("30 2 * * *", utc(2026, 3, 8, 12), utc(2026, 3, 8, 7)),
    ("30 1 * * *", utc(2026, 11, 1, 12), utc(2026, 11, 1, 5, 30)),
    ("0 * * * *", utc(2026, 11, 1, 6, 30), utc(2026, 11, 1, 6)),
    ("0 9 * * *", utc(2026, 3, 8, 13), utc(2026, 3, 8, 13)),
])
def test_previous_fire_follows_the_same_daylight_saving_rules(expression, before, expected):
    assert previous_fire(Schedule.on_cron(expression, timezone="America/New_York"), before) == expected


def test_resolve_wall_time_maps_a_skipped_time_to_the_jump_and_a_repeated_one_to_its_first_pass():
    assert resolve_wall_time(datetime(2026, 3, 8, 2, 30), "America/New_York") == utc(2026, 3, 8, 7)
    assert resolve_wall_time(datetime(2026, 11, 1, 1, 30), "America/New_York") == utc(2026, 11, 1, 5, 30)
    assert resolve_wall_time(datetime(2026, 3, 6, 9, 0), "Asia/Shanghai") == utc(2026, 3, 6, 1)


# --- due_runs ------------------------------------------------------------------------------

LAST = datetime(2026, 3, 2, 9, 0, tzinfo=SH)  # the daily 09:00 run before three days down
MISSED = [utc(2026, 3, 3, 1), utc(2026, 3, 4, 1), utc(2026, 3, 5, 1)]


@pytest.mark.parametrize("policy, expected", [
    ("catch_up", MISSED),
    ("latest", MISSED[-1:]),
    ("skip", []),
])
def test_after_three_days_down_the_policy_decides_the_missed_daily_runs(policy, expected):
    now = datetime(2026, 3, 5, 10, 0, tzinfo=SH)
    assert due_runs(daily_9_shanghai(), LAST, now, policy) == expected


def test_skipping_leaves_the_next_future_fire_to_next_fire():
    now = datetime(2026, 3, 5, 10, 0, tzinfo=SH)
    assert due_runs(daily_9_shanghai(), LAST, now, "skip") == []
    assert next_fire(daily_9_shanghai(), now) == utc(2026, 3, 6, 1)


def test_skip_still_starts_a_run_that_is_due_now_rather_than_missed():
    now = datetime(2026, 3, 5, 9, 0, 20, tzinfo=SH)  # the wakeup arrived 20 s late
    assert due_runs(daily_9_shanghai(), LAST, now, "skip") == [utc(2026, 3, 5, 1)]
    assert due_runs(daily_9_shanghai(), LAST, now, "skip", grace_s=10) == []


def test_catch_up_returns_the_oldest_runs_up_to_limit_and_the_rest_on_the_next_call():
    now = datetime(2026, 3, 5, 10, 0, tzinfo=SH)
    first = due_runs(daily_9_shanghai(), LAST, now, "catch_up", limit=2)
    assert first == MISSED[:2]
    assert due_runs(daily_9_shanghai(), first[-1], now, "catch_up", limit=2) == MISSED[2:]


def test_catch_up_of_an_every_minute_cron_is_capped_by_limit():
    every_minute = Schedule.on_cron("* * * * *", timezone="UTC")
    runs = due_runs(every_minute, utc(2026, 3, 2), utc(2026, 3, 5), "catch_up")
    assert len(runs) == 100 and runs[0] == utc(2026, 3, 2, 0, 1) and runs[-1] == utc(2026, 3, 2, 1, 40)
    assert due_runs(every_minute, utc(2026, 3, 2), utc(2026, 3, 5), "latest") == [utc(2026, 3, 5)]


@pytest.mark.parametrize("policy", ["catch_up", "skip", "latest"])
def test_nothing_is_due_when_nothing_was_scheduled_since_the_last_fire(policy):
    now = datetime(2026, 3, 2, 18, 0, tzinfo=SH)
    assert due_runs(daily_9_shanghai(), LAST, now, policy) == []


def test_a_one_shot_that_never_ran_is_owed_once_then_never_again():
    once = Schedule.once(utc(2026, 3, 6, 8), timezone="UTC")
    assert due_runs(once, None, utc(2026, 3, 6, 9), "catch_up") == [utc(2026, 3, 6, 8)]
    assert due_runs(once, None, utc(2026, 3, 6, 9), "latest") == [utc(2026, 3, 6, 8)]
    assert due_runs(once, utc(2026, 3, 6, 8), utc(2026, 3, 9), "catch_up") == []
    assert due_runs(once, None, utc(2026, 3, 6, 7), "catch_up") == []


def test_an_interval_that_never_ran_owes_runs_from_its_start():
    every_hour = Schedule.every(3600, timezone="UTC", start_at=utc(2026, 3, 6, 8))
    assert due_runs(every_hour, None, utc(2026, 3, 6, 10, 30), "catch_up") == [
        utc(2026, 3, 6, 8), utc(2026, 3, 6, 9), utc(2026, 3, 6, 10)]


def test_a_cron_that_never_ran_needs_its_registration_time():
    with pytest.raises(ValueError, match="last_fire"):
        due_runs(daily_9_shanghai(), None, utc(2026, 3, 6), "catch_up")


@pytest.mark.parametrize("kwargs, word", [({"policy": "all"}, "policy"), ({"limit": 0}, "limit")])
def test_due_runs_refuses_a_bad_policy_or_limit(kwargs, word):
    args = {"policy": "catch_up", "limit": 100, **kwargs}
    with pytest.raises(ValueError, match=word):
        due_runs(daily_9_shanghai(), LAST, utc(2026, 3, 6), args["policy"], args["limit"])


# --- run keys -----------------------------------------------------------------------------

def test_run_key_is_the_id_and_the_utc_time_whatever_the_offset():
    in_shanghai = run_key("loop-7", datetime(2026, 3, 5, 9, 0, tzinfo=SH))
    in_utc = run_key("loop-7", utc(2026, 3, 5, 1, 0))
    assert in_shanghai == in_utc == "loop-7:2026-03-05T01:00:00Z"
    assert run_key("loop-7", utc(2026, 3, 5, 1, 0) + timedelta(minutes=1)) != in_utc


@pytest.mark.parametrize("task_id, when", [("", utc(2026, 3, 5)), ("loop-7", datetime(2026, 3, 5))])
def test_run_key_refuses_an_empty_id_or_a_naive_time(task_id, when):
    with pytest.raises(ValueError):
        run_key(task_id, when)
