"""Loop-task schedules: what a schedule is, when it fires, and which runs are owed.

A loop task ("every day at 09:00 remind me to review GRPO") carries a ``Schedule``. The
scheduler actor keeps time with ``wakeupAfter`` and asks this module which runs are due;
nothing here reads the clock, so after a restart the same questions give the same answers
and the runs missed while Flora was down can be counted exactly.

Three kinds:

- ``interval``: every ``every_s`` seconds of elapsed time, counted from ``start_at`` (the
  first fire) or, without one, from the Unix epoch. Fires are computed from the anchor,
  never from the previous fire, so a late wakeup does not push every later run back.
- ``cron``: a five-field expression read in the wall clock of ``timezone``.
- ``once``: the instant ``at``.

Daylight saving changes the wall clock, so a cron schedule needs two rules:

- a wall-clock time that does not exist that day (clocks jump forward) fires once, at the
  moment of the jump: a 02:30 reminder fires at 03:00 rather than not at all;
- a wall-clock time that happens twice (clocks fall back) fires once, the first time,
  unless the hour field is ``*``: an every-hour job fires in each real hour.

Exceptions::

    ValueError
     └── ScheduleError   a schedule that cannot be; ``field`` names the culprit

Naive datetimes, an unknown policy or a missing ``last_fire`` are caller bugs and raise a
plain ``ValueError``.
"""

from __future__ import annotations

import heapq
from collections.abc import Iterator
from dataclasses import asdict, dataclass, fields
from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from croniter import CroniterBadDateError, croniter

KINDS = ("interval", "cron", "once")
POLICIES = ("catch_up", "skip", "latest")
MIN_INTERVAL_S = 1
DEFAULT_GRACE_S = 60
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
# Wider than any daylight-saving or zone shift in use, so a search window that starts
# this far before ``after`` sees every wall-clock time that can map past it.
_SHIFT_MARGIN = timedelta(hours=3)
_OWN_FIELDS = {"interval": {"every_s", "start_at"}, "cron": {"cron"}, "once": {"at"}}


class ScheduleError(ValueError):
    """A schedule that cannot be; ``field`` is the offending field's name."""

    def __init__(self, field: str, message: str):
        super().__init__(field, message)  # both in args, so the error survives pickling
        self.field = field
        self.message = message

    def __str__(self) -> str:
        return f"{self.field}: {self.message}"


@dataclass(frozen=True, kw_only=True)
class Schedule:
    """When a loop task fires. Validated on construction; JSON via ``to_dict``."""

    kind: str  # "interval" | "cron" | "once"
    timezone: str  # IANA name; the wall clock a cron reads and descriptions use
    every_s: int | None = None  # interval: seconds between fires
    cron: str | None = None  # cron: "minute hour day-of-month month day-of-week"
    at: str | None = None  # once: ISO-8601 with a UTC offset
    start_at: str | None = None  # interval: ISO-8601 with offset; the first fire

    def __post_init__(self) -> None:
        _validate(self)

    @classmethod
    def every(cls, seconds: int, *, timezone: str, start_at: datetime | None = None) -> Schedule:
        return cls(kind="interval", every_s=seconds, timezone=timezone,
                   start_at=None if start_at is None else _checked("start_at", start_at).isoformat())

    @classmethod
    def on_cron(cls, expression: str, *, timezone: str) -> Schedule:
        return cls(kind="cron", cron=expression, timezone=timezone)

    @classmethod
    def once(cls, at: datetime, *, timezone: str) -> Schedule:
        return cls(kind="once", at=_checked("at", at).isoformat(), timezone=timezone)

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict) -> Schedule:
        if not isinstance(data, dict):
            raise ScheduleError("schedule", f"must be an object, got {type(data).__name__}")
        known = {f.name for f in fields(cls)}
        for name in data:
            if name not in known:
                raise ScheduleError(str(name), "is not a schedule field")
        for name in ("kind", "timezone"):
            if data.get(name) is None:
                raise ScheduleError(name, "is required")
        return cls(**data)

    @property
    def zone(self) -> ZoneInfo:
        return ZoneInfo(self.timezone)


def next_fire(schedule: Schedule, after: datetime) -> datetime | None:
    """The first fire strictly after ``after``, in UTC; None once a one-shot is past."""
    return next(_fires_after(schedule, _aware("after", after)), None)


def previous_fire(schedule: Schedule, at_or_before: datetime) -> datetime | None:
    """The latest fire at or before ``at_or_before``, in UTC; None if there is none."""
    limit = _aware("at_or_before", at_or_before)
    if schedule.kind == "once":
        at = _iso_utc(schedule.at)
        return at if at <= limit else None
    if schedule.kind == "interval":
        anchor, step = _interval_anchor(schedule)
        k = (limit - anchor) // step
        if schedule.start_at is not None and k < 0:
            return None
        return anchor + k * step
    return _cron_at_or_before(schedule, limit)


def late_by(schedule: Schedule, scheduled_at: datetime, now: datetime) -> float | None:
    """The seconds since a run's time when they exceed the schedule's own period (the next run
    was due before this one's result came: it is no longer news); None otherwise, and for a
    one-shot, which has no period."""
    scheduled_at, now = _aware("scheduled_at", scheduled_at), _aware("now", now)
    following = next_fire(schedule, scheduled_at)
    if following is None:
        return None
    lag = now - scheduled_at
    return lag.total_seconds() if lag > following - scheduled_at else None


def due_runs(schedule: Schedule, last_fire: datetime | None, now: datetime, policy: str,
             limit: int = 100, *, grace_s: float = DEFAULT_GRACE_S) -> list[datetime]:
    """The runs to start now: scheduled times in (``last_fire``, ``now``], oldest first, UTC.

    ``last_fire`` is the scheduled time of the last run started; None means the task never
    ran, which is only meaningful where the schedule has a beginning (``once``, or an
    ``interval`` with ``start_at``). For a cron schedule pass the registration time instead.

    A run is on time when it is at most ``grace_s`` old (the ordinary case: the wakeup
    arrives a little after the due time); older ones were missed, and ``policy`` decides:

    - ``"catch_up"``: every owed run, but at most ``limit``: the *oldest* ``limit``, so the
      caller starts them, records the last as ``last_fire`` and asks again for the rest;
      nothing is dropped, only spread over calls;
    - ``"skip"``: no missed run, only an on-time one if there is one; ``next_fire(now)``
      then gives the next future time;
    - ``"latest"``: only the most recent owed run, missed or not.
    """
    if policy not in POLICIES:
        raise ValueError(f"policy must be one of {', '.join(POLICIES)}; got {policy!r}")
    if limit < 1:
        raise ValueError(f"limit must be at least 1; got {limit}")
    now = _aware("now", now)
    after = _window_start(schedule, last_fire)
    if policy == "catch_up":
        runs: list[datetime] = []
        for fire in _fires_after(schedule, after):
            if fire > now or len(runs) == limit:
                break
            runs.append(fire)
        return runs
    latest = previous_fire(schedule, now)
    if latest is None or latest <= after:
        return []
    if policy == "latest" or now - latest <= timedelta(seconds=grace_s):
        return [latest]
    return []


def run_key(loop_task_id: str, scheduled_at: datetime) -> str:
    """A stable key for one run, ``"<id>:<UTC ISO time>"``: the same run always gets the same
    key whatever timezone its time is expressed in, so a store can refuse a second start."""
    if not isinstance(loop_task_id, str) or not loop_task_id:
        raise ValueError("loop_task_id must be a non-empty string")
    when = _aware("scheduled_at", scheduled_at).astimezone(UTC)
    return f"{loop_task_id}:{when.isoformat().replace('+00:00', 'Z')}"


def resolve_wall_time(wall: datetime, timezone: str) -> datetime:
    """The UTC instant of a naive wall-clock time in ``timezone``, by the daylight-saving rules
    above: a time skipped by the clocks maps to the jump, a repeated one to its first pass."""
    return _instants(wall.replace(tzinfo=None), ZoneInfo(timezone), repeat=False)[0]


# --- validation -----------------------------------------------------------------------

def _validate(s: Schedule) -> None:
    if s.kind not in KINDS:
        raise ScheduleError("kind", f"must be one of {', '.join(KINDS)}; got {s.kind!r}")
    _check_timezone(s.timezone)
    for name in ("every_s", "cron", "at", "start_at"):
        if name not in _OWN_FIELDS[s.kind] and getattr(s, name) is not None:
            raise ScheduleError(name, f"does not belong to a {s.kind} schedule")
    if s.kind == "interval":
        if isinstance(s.every_s, bool) or not isinstance(s.every_s, int):
            raise ScheduleError("every_s", f"must be a whole number of seconds; got {s.every_s!r}")
        if s.every_s < MIN_INTERVAL_S:
            raise ScheduleError("every_s", f"must be at least {MIN_INTERVAL_S} s; got {s.every_s}")
        if s.start_at is not None:
            _iso_utc(s.start_at, "start_at")
    elif s.kind == "cron":
        _check_cron(s.cron)
    else:
        if s.at is None:
            raise ScheduleError("at", "is required for a once schedule")
        _iso_utc(s.at, "at")


def _check_timezone(name: object) -> None:
    if not isinstance(name, str) or not name:
        raise ScheduleError("timezone", f"must be an IANA name such as 'Asia/Shanghai'; got {name!r}")
    try:
        ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError, OSError):
        raise ScheduleError("timezone", f"unknown timezone {name!r}") from None


def _check_cron(expression: object) -> None:
    if not isinstance(expression, str) or len(expression.split()) != 5:
        raise ScheduleError("cron", "needs five fields: minute hour day-of-month month day-of-week; "
                                    f"got {expression!r}")
    if not croniter.is_valid(expression):
        raise ScheduleError("cron", f"is not a valid cron expression: {expression!r}")
    try:  # "0 0 30 2 *" parses but never fires; better refused now than looping later
        croniter(expression, datetime(2000, 1, 1)).get_next(datetime)
    except CroniterBadDateError:
        raise ScheduleError("cron", f"never matches a date: {expression!r}") from None


def _iso_utc(value: object, field: str = "at") -> datetime:
    if not isinstance(value, str):
        raise ScheduleError(field, f"must be an ISO-8601 string; got {value!r}")
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError:
        raise ScheduleError(field, f"is not an ISO-8601 datetime: {value!r}") from None
    if parsed.utcoffset() is None:
        raise ScheduleError(field, f"needs a UTC offset: {value!r}")
    return parsed.astimezone(UTC)


def _checked(name: str, value: datetime) -> datetime:
    if not isinstance(value, datetime) or value.utcoffset() is None:
        raise ValueError(f"{name} must be a timezone-aware datetime; got {value!r}")
    return value


def _aware(name: str, value: datetime) -> datetime:
    return _checked(name, value).astimezone(UTC)


# --- fire times -----------------------------------------------------------------------

def _fires_after(schedule: Schedule, after: datetime) -> Iterator[datetime]:
    """Every fire strictly after ``after`` (UTC), in order."""
    if schedule.kind == "once":
        at = _iso_utc(schedule.at)
        if at > after:
            yield at
        return
    if schedule.kind == "interval":
        anchor, step = _interval_anchor(schedule)
        k = (after - anchor) // step + 1
        if schedule.start_at is not None:
            k = max(k, 0)
        while True:
            yield anchor + k * step
            k += 1
    yield from _cron_after(schedule, after)


def _window_start(schedule: Schedule, last_fire: datetime | None) -> datetime:
    if last_fire is not None:
        return _aware("last_fire", last_fire)
    tick = timedelta(microseconds=1)
    if schedule.kind == "once":
        return _iso_utc(schedule.at) - tick
    if schedule.kind == "interval" and schedule.start_at is not None:
        return _iso_utc(schedule.start_at, "start_at") - tick
    raise ValueError(f"last_fire is required for a {schedule.kind} schedule without a beginning; "
                     "pass the time the task was registered")


def _interval_anchor(schedule: Schedule) -> tuple[datetime, timedelta]:
    anchor = _EPOCH if schedule.start_at is None else _iso_utc(schedule.start_at, "start_at")
    return anchor, timedelta(seconds=schedule.every_s)


def _cron_after(schedule: Schedule, after: datetime) -> Iterator[datetime]:
    """croniter walks naive wall-clock times; each maps to one or two instants. Those maps
    are in order except for a fall-back fold's second pass, so instants wait in a heap
    until no later wall-clock time can produce an earlier one."""
    zone, repeat = schedule.zone, _repeats_in_fold(schedule.cron)
    wall = croniter(schedule.cron, after.astimezone(zone).replace(tzinfo=None) - _SHIFT_MARGIN)
    pending: list[datetime] = []
    last = None
    while True:
        instants = _instants(wall.get_next(datetime), zone, repeat)
        for instant in instants:
            heapq.heappush(pending, instant)
        while pending and pending[0] <= instants[0]:
            fire = heapq.heappop(pending)
            if fire > after and fire != last:  # several skipped times share one jump
                last = fire
                yield fire


def _cron_at_or_before(schedule: Schedule, limit: datetime) -> datetime:
    zone, repeat = schedule.zone, _repeats_in_fold(schedule.cron)
    wall = croniter(schedule.cron, limit.astimezone(zone).replace(tzinfo=None) + _SHIFT_MARGIN)
    best = None
    while True:
        instants = _instants(wall.get_prev(datetime), zone, repeat)
        for instant in instants:
            if instant <= limit and (best is None or instant > best):
                best = instant
        # earlier wall times map at most one shift later than this one's first instant
        if best is not None and instants[0] + _SHIFT_MARGIN <= best:
            return best


def _repeats_in_fold(expression: str) -> bool:
    return expression.split()[1] == "*"


def _instants(wall: datetime, zone: ZoneInfo, repeat: bool) -> list[datetime]:
    first, second = wall.replace(tzinfo=zone, fold=0), wall.replace(tzinfo=zone, fold=1)
    if first.utcoffset() == second.utcoffset():
        return [first.astimezone(UTC)]
    if second.utcoffset() > first.utcoffset():  # a gap: this wall time is skipped today
        return [_jump(second.astimezone(UTC), first.astimezone(UTC), zone)]
    both = [first.astimezone(UTC), second.astimezone(UTC)]
    return both if repeat else both[:1]


def _jump(before: datetime, after: datetime, zone: ZoneInfo) -> datetime:
    """The instant the offset changes, between two whole-second instants that straddle it."""
    old = before.astimezone(zone).utcoffset()
    second = timedelta(seconds=1)
    while after - before > second:
        middle = before + ((after - before) // second // 2) * second
        if middle.astimezone(zone).utcoffset() == old:
            before = middle
        else:
            after = middle
    return after
