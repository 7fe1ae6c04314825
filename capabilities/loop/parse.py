"""Finding a loop-task schedule in what a user wrote, in Chinese or English.

"每天早上9点提醒我复习GRPO" gives a cron schedule at 09:00 and the task "提醒我复习GRPO";
"in 20 minutes check the build" a one-shot and "check the build". The time is always
injected (``now``), so the same words give the same schedule in a test and in production.

Recognisers run from the most specific to the least: intervals ("every 2 hours",
"每隔2小时"), calendar recurrences (daily, weekdays, weekly, monthly), relative one-shots
("in 20 minutes", "两小时后"), dates ("2026-12-01 09:00", "12月1日"), day words ("tomorrow",
"明天"), weekdays ("下周一", "on Thursday at 2pm", "next friday"), other English dates
through ``dateparser`` ("on March 3rd at 9am"), and last a bare clock time, today or tomorrow ("at 15:30", "下午3点半").

Numbers in ordinary requests ("add numbers a=2 b=3", "convert 30 degrees") must not become
schedules, so a match without a clock time is weak: it counts only when the user asks to be
reminded, or, for a recurrence or a relative time, when the text is not a question ("每天喝
多少水合适？" is a question about water, not a schedule). A bare date or day word ("what's
the weather tomorrow") needs a reminder verb.

Nothing is raised for text without a schedule (the result is None). Text that names an
impossible one ("every 0 minutes") raises the ``ScheduleError`` of ``schedule.py``.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta
from zoneinfo import ZoneInfo

from capabilities.loop.schedule import Schedule, ScheduleError, resolve_wall_time
from capabilities.loop.vocabulary import (
    DEFAULT_HOUR, _CN_DAYS, _CN_PERIOD, _CN_UNIT, _DAY_NAMES, _EN_DATE_CUE, _EN_DAY, _EN_DAYS,
    _EN_NUM, _EN_UNIT, _EN_UNITS, _F, _MONTHS, _NUM, _PERIOD, _PERIOD_HOUR, _REMIND,
    _WEEKDAY_NAMES, _EN_LATE_PERIOD, _apply_period, _int, _normalise, _unit_seconds, asks_now,
)


@dataclass(frozen=True)
class ParsedSchedule:
    schedule: Schedule
    remainder: str  # the text without the schedule words: the task itself
    description: str  # short English phrase for the confirmation reply


def has_schedule(text: str) -> bool:
    """A cheap pre-check: False means ``parse_schedule`` surely finds nothing. It asks
    whether any recogniser's opening pattern occurs, so it cannot hide a schedule."""
    text = _normalise(text)
    return any(pattern.search(text) for pattern in _TRIGGERS)


def parse_schedule(text: str, *, now: datetime, timezone: str) -> ParsedSchedule | None:
    """The schedule in ``text`` read at ``now`` in ``timezone``, or None when there is none."""
    if now.utcoffset() is None:
        raise ValueError("now must be a timezone-aware datetime")
    try:
        zone = ZoneInfo(timezone)
    except (KeyError, ValueError, OSError):
        raise ScheduleError("timezone", f"unknown timezone {timezone!r}") from None
    if not has_schedule(text):
        return None
    text = _normalise(text)
    ctx = _Context(now=now.astimezone(zone).replace(microsecond=0), timezone=timezone,
                   remind=bool(_REMIND.search(text)), question=asks_now(text))
    for recognise in _RECOGNISERS:
        scan = _Scan(text)
        found = recognise(scan, ctx)
        if found is not None and ctx.accepts(found.strength):
            return ParsedSchedule(found.schedule, scan.remainder(), found.description)
    return None


# --- the text being read ----------------------------------------------------------------

_BOUND_ZAI = set("现存正实所好自")  # 现在, 存在, 正在...: a word, not a preposition


class _Scan:
    """The text with the parts already read blanked out, so a later search cannot reuse them."""

    def __init__(self, text: str):
        self.text = text
        self.work = text
        self.spans: list[tuple[int, int]] = []

    def search(self, pattern: re.Pattern) -> re.Match | None:
        return pattern.search(self.work)

    def take(self, start: int, end: int) -> None:
        self.work = self.work[:start] + " " * (end - start) + self.work[end:]
        self.spans.append((start, end))

    def remainder(self) -> str:
        out, pos = [], 0
        for start, end in sorted(self.spans):
            before = self.text[start - 2:start - 1]
            if start and self.text[start - 1] in "在于" and before not in _BOUND_ZAI:
                start -= 1  # "在下午3点提醒我": the preposition goes with the time
            out += [self.text[pos:start], " "]
            pos = end
        out.append(self.text[pos:])
        text = " ".join("".join(out).split())
        text = re.sub(r"(?<=[\u3000-\u9fff\uff00-\uffef]) (?=[\u3000-\u9fff\uff00-\uffef])", "", text)
        text = re.sub(r"\s+(?=[,，。.;；!！?？、])", "", text)
        text = re.sub(r"([,，、])(?:\s*[,，、])+", r"\1", text)
        return text.strip(" ,，。.;；:、!！-")


@dataclass(frozen=True)
class _Context:
    now: datetime  # in the caller's timezone, whole seconds
    timezone: str
    remind: bool
    question: bool

    def accepts(self, strength: str) -> bool:
        if strength == "clock" or self.remind:
            return True
        return strength in ("recurring", "relative") and not self.question

    def at(self, day: date, hour: int, minute: int) -> datetime:
        return resolve_wall_time(datetime.combine(day, time(hour, minute)), self.timezone)

    def once(self, day: date, hour: int, minute: int) -> tuple[Schedule, str]:
        return self.once_at(self.at(day, hour, minute))

    def once_at(self, instant: datetime) -> tuple[Schedule, str]:
        local = instant.astimezone(ZoneInfo(self.timezone))
        return (Schedule.once(local, timezone=self.timezone),
                f"once at {local:%Y-%m-%d %H:%M} ({self.timezone})")

    def next_clock(self, hour: int, minute: int) -> datetime:
        """Today at this time, or tomorrow if it has passed."""
        today = self.now.date()
        instant = self.at(today, hour, minute)
        return instant if instant > self.now else self.at(today + timedelta(days=1), hour, minute)


@dataclass(frozen=True)
class _Found:
    schedule: Schedule
    description: str
    strength: str  # "clock" | "recurring" | "relative" | "date"


# --- clock times ------------------------------------------------------------------------

_CN_CLOCK = re.compile(
    rf"(?:(?P<period>{_CN_PERIOD})\s*(?:吧|呢|啊|嘛)?\s*[,，]?\s*(?:大概|大约|差不多|就)?\s*)?(?:(?<![\d:])(?P<hh>\d{{1,2}}):(?P<mm>[0-5]\d)(?![\d:])"
    rf"|(?<![第了涨跌\d])(?P<h>{_NUM})\s*[点點时時](?P<zhong>钟|鐘)?"
    rf"(?:\s*(?P<half>半)|\s*(?P<quarter>一刻|三刻)|\s*(?P<m>{_NUM})\s*分|(?P<m2>\d{{2}})(?!\d))?)", _F)
_EN_CLOCK = re.compile(
    rf"(?:\b(?P<pre>{_EN_LATE_PERIOD})\s*,?\s*)?"  # "after work at 6"
    r"(?:\b(?:at|around)\s+)?"
    r"(?:(?<![\d:.])(?P<h>\d{1,2})(?:[:.](?P<m>[0-5]\d))?\s*(?P<ampm>[ap])\.?\s?m\b\.?"
    r"|(?<![\d:.])(?P<h2>[01]?\d|2[0-3]):(?P<m2>[0-5]\d)(?![\d:])"
    r"|(?<![\d:.])(?P<h3>\d{1,2})\s*o'?clock\b|\b(?P<word>noon|midday|midnight)\b"
    r"|\bat\s+(?P<h4>\d{1,2})(?![\d:.%]))"
    rf"(?:\s+(?:in\s+the\s+)?(?P<period>morning|afternoon|evening|night|{_EN_LATE_PERIOD})\b"
    r"|\s+at\s+(?P<night>night)\b)?", _F)
_CN_PERIOD_ONLY = re.compile(_CN_PERIOD)
_EN_PERIOD_ONLY = re.compile(rf"\b(?:in\s+the\s+)?(?P<period>morning|afternoon|evening|night|noon|{_EN_LATE_PERIOD})\b", _F)


def _take_clock(scan: _Scan, lenient: bool, period: str | None = None) -> tuple[int, int] | None:
    """The first clock time in the text, taken out of it. ``lenient`` (after a day word or a
    recurrence) also accepts "at 9" and "一点"; ``period`` is one the context already gave."""
    found = []
    for pattern, read in ((_CN_CLOCK, _read_cn_clock), (_EN_CLOCK, _read_en_clock)):
        for match in pattern.finditer(scan.work):
            clock = read(match, scan, lenient, period)
            if clock is not None:
                text = match.group(0)
                found.append((match.start() + len(text) - len(text.lstrip()), match.end(), clock))
                break
    if not found:
        return None
    start, end, clock = min(found, key=lambda f: (f[0], -f[1]))  # the first, and the longest there: "7:15pm", not "7:15"
    scan.take(start, end)
    return clock


def _follows_taken(scan: _Scan, pos: int) -> bool:
    while pos > 0 and scan.text[pos - 1].isspace():
        pos -= 1
    return pos > 0 and scan.work[pos - 1] == " "


def _read_cn_clock(m: re.Match, scan: _Scan, lenient: bool, period: str | None):
    period = _PERIOD.get(m["period"] or "", period)
    if m["hh"] is not None:
        hour, minute = int(m["hh"]), int(m["mm"])
    else:
        hour = _int(m["h"])
        minute = (30 if m["half"] else 15 if m["quarter"] == "一刻" else 45 if m["quarter"]
                  else _int(m["m"]) if m["m"] else int(m["m2"]) if m["m2"] else 0)
        bare = not (m["h"].isdigit() or m["period"] or m["zhong"] or m["half"] or m["quarter"]
                    or m["m"] or m["m2"])
        # "一点" is also "a little", "两点" also "two points": a clock only right after a day
        # word or a recurrence ("明天一点", "每天两点"), never in "多喝一点水"
        expected = lenient and _follows_taken(scan, m.start("h"))
        if bare and not (expected and scan.work[m.end():m.end() + 1] != "儿"):
            return None
    return _valid(_apply_period(hour, period), minute)


def _read_en_clock(m: re.Match, scan: _Scan, lenient: bool, period: str | None):
    said = _words(m["period"] or m["night"] or m["pre"] or "")
    period = _PERIOD.get(said, said) or period
    if m["h"] is not None:
        hour, minute = int(m["h"]), int(m["m"] or 0)
        if not 1 <= hour <= 12:
            return None
        hour = hour % 12 + (12 if m["ampm"].lower() == "p" else 0)
        return _valid(hour, minute)
    if m["word"] is not None:
        return (0, 0) if m["word"].lower() == "midnight" else (12, 0)
    if m["h4"] is not None and not lenient and not said:  # "at 6" alone may be anything; "at 6 after work" is a time
        return None
    hour = int(m["h2"] or m["h3"] or m["h4"])
    return _valid(_apply_period(hour, period), int(m["m2"] or 0))


def _words(text: str) -> str:
    return " ".join(text.lower().split())


def _valid(hour: int, minute: int) -> tuple[int, int] | None:
    return (hour, minute) if 0 <= hour <= 23 and 0 <= minute <= 59 else None


def _take_clock_or_period(scan: _Scan, period: str | None = None) -> tuple[tuple[int, int], bool]:
    """A clock time (explicit: True), else the default hour of a named period, else 09:00."""
    clock = _take_clock(scan, lenient=True, period=period)
    if clock is not None:
        return clock, True
    for pattern in (_CN_PERIOD_ONLY, _EN_PERIOD_ONLY):
        match = scan.search(pattern)
        if match:
            scan.take(match.start(), match.end())
            period = _PERIOD[_words(match["period"] if pattern is _EN_PERIOD_ONLY else match.group(0))]
            break
    return (_PERIOD_HOUR.get(period, DEFAULT_HOUR), 0), False


# --- recognisers ----------------------------------------------------------------------

# "the weekly summary", "my daily practice reminder": a thing already there, named by how often it
# comes, not a schedule asked for ("send me a weekly summary" still asks for one)
_NAMED_THING = "".join(rf"(?<!\b{w}\s)" for w in ("the", "my", "our", "your", "this", "that", "these", "those"))
_EVERY_N_EN = re.compile(rf"\bevery\s+(?P<n>{_EN_NUM})\s*{_EN_UNIT}", _F)
_EVERY_ONE_EN = re.compile(r"\bevery\s+(?P<unit>hour|minute|week|other\s+(?:hour|minute|day|week)|couple\s+(?:of\s+)?hours"
                           r"|half\s+(?:an\s+)?hour)\b"
                           rf"|{_NAMED_THING}\b(?P<ly>hourly|weekly)\b(?!-\w)", _F)
# "每一天" is every day, "每隔一天" an interval
_EVERY_N_CN = re.compile(rf"每(?:隔|(?!一\s*个?\s*(?:天|日|周|星期|礼拜)))\s*(?P<n>{_NUM}|半)\s*个?\s*"
                         rf"(?P<half>半)?\s*{_CN_UNIT}")
_EVERY_ONE_CN = re.compile(r"每(?:个|一)?\s*(?P<unit>小时|钟头|分钟|周|星期|礼拜)(?![一二三四五六日天末1-7]|的)")
_EVERY_ONE = {"hour": 3600, "minute": 60, "week": 604800, "other hour": 7200, "other minute": 120,
              "other day": 172800, "other week": 1209600, "couple hours": 7200, "couple of hours": 7200,
              "hourly": 3600, "weekly": 604800}


def _interval(scan: _Scan, ctx: _Context) -> _Found | None:
    seconds = None
    if m := scan.search(_EVERY_N_EN):
        seconds = _int(m["n"]) * _unit_seconds(m["unit"])
    elif m := scan.search(_EVERY_ONE_EN):
        word = " ".join((m["unit"] or m["ly"]).lower().split())
        seconds = 1800 if word.startswith("half") else _EVERY_ONE[word]
    elif m := scan.search(_EVERY_N_CN):
        unit = _unit_seconds(m["unit"])
        count = 0.5 if m["n"] == "半" else _int(m["n"]) + (0.5 if m["half"] else 0)
        seconds = int(count * unit)
    elif m := scan.search(_EVERY_ONE_CN):
        seconds = _unit_seconds(m["unit"])
    if seconds is None:
        return None
    scan.take(m.start(), m.end())
    clock = _take_clock(scan, lenient=True) if seconds % 86400 == 0 else None
    first = ctx.next_clock(*clock) if clock else ctx.now + timedelta(seconds=seconds)
    schedule = Schedule.every(seconds, timezone=ctx.timezone, start_at=first)
    local = first.astimezone(ZoneInfo(ctx.timezone))
    return _Found(schedule, f"every {_span(seconds)}, first at {local:%Y-%m-%d %H:%M} ({ctx.timezone})",
                  "clock" if clock else "recurring")


def _span(seconds: int) -> str:
    for size, name in ((604800, "week"), (86400, "day"), (3600, "hour"), (60, "minute"), (1, "second")):
        if seconds % size == 0:
            count = seconds // size
            return name if count == 1 else f"{count} {name}s"
    raise AssertionError("every whole number of seconds has a span")


# "每天的订单数" (each day's orders) and "the weekly-report workflow" name a thing, not a schedule
# "那个每天早上的查询": a thing named by when it comes, as "the daily X" is
_DAILY = re.compile(r"(?:每天|每日|每一天)(?!(?:早上|早晨|上午|中午|下午|傍晚|晚上|夜里)?的)|(?<![今明昨后前])天天|每(?P<cn>晚|早)(?!上?的)"
                    rf"|\b(?:every\s*day|{_NAMED_THING}daily(?!-\w)|each\s+day)\b"
                    r"|\b(?:every|each)\s+(?P<en>morning|afternoon|evening|night)\b", _F)
_CN_DAY = "[一二三四五六日天七1-7]"
_WEEKLY_CN = re.compile(rf"每个?(?:周|星期|礼拜|禮拜)(?P<days>{_CN_DAY}(?:\s*(?:[、,，和及与到至~-])\s*"
                        rf"(?:周|星期|礼拜)?{_CN_DAY})*)")
_AND = r"\s*(?:,\s*and|,|and|&)\s*"
_WEEKLY_EN = re.compile(rf"\b(?:every|each)\s+(?P<days>{_EN_DAY}(?:{_AND}{_EN_DAY})*)\b"
                        rf"|\bon\s+(?P<plural>{_EN_DAY}s(?:{_AND}{_EN_DAY}s)*)\b", _F)
_WORKDAYS = re.compile(r"(?:每个?)?工作日|\b(?:every|each)\s+week\s?days?\b|\bon\s+week\s?days\b", _F)
_WEEKENDS = re.compile(r"每个?(?:周末|星期末)|\b(?:every|each)\s+weekend(?:\s+day)?\b|\bon\s+weekends\b", _F)
_MONTHLY = re.compile(rf"每个?月\s*(?P<cn>{_NUM})\s*[号號日]"
                      r"|\b(?:every|each)\s+month\s+on\s+the\s+(?P<en>\d{1,2})(?:st|nd|rd|th)?\b"
                      r"|\bon\s+the\s+(?P<en2>\d{1,2})(?:st|nd|rd|th)?\s+of\s+(?:every|each)\s+month\b"
                      r"|\bmonthly\s+on\s+the\s+(?P<en3>\d{1,2})(?:st|nd|rd|th)?\b", _F)


def _calendar(scan: _Scan, ctx: _Context) -> _Found | None:
    dom, dow, period, phrase = "*", "*", None, "every day"
    if m := scan.search(_MONTHLY):
        day = _int(m["cn"] or m["en"] or m["en2"] or m["en3"])
        if not 1 <= day <= 31:
            return None
        dom, phrase = str(day), f"on day {day} of every month"
    elif m := scan.search(_WORKDAYS):
        dow, phrase = "1-5", "every weekday"
    elif m := scan.search(_WEEKENDS):
        dow, phrase = "0,6", "every Saturday and Sunday"
    elif m := scan.search(_WEEKLY_CN):
        dow, phrase = _weekly(_cn_weekdays(m["days"]))
    elif m := scan.search(_WEEKLY_EN):
        names = re.findall(_EN_DAY, (m["days"] or m["plural"]).lower())
        dow, phrase = _weekly(sorted({_EN_DAYS[name] for name in names}))
    elif m := scan.search(_DAILY):
        period = {"晚": "evening", "早": "morning"}.get(m["cn"]) or _PERIOD.get((m["en"] or "").lower())
    else:
        return None
    scan.take(m.start(), m.end())
    (hour, minute), explicit = _take_clock_or_period(scan, period)
    schedule = Schedule.on_cron(f"{minute} {hour} {dom} * {dow}", timezone=ctx.timezone)
    return _Found(schedule, f"{phrase} at {hour:02d}:{minute:02d} ({ctx.timezone})",
                  "clock" if explicit else "recurring")


def _weekly(days: list[int]) -> tuple[str, str]:
    if days == [1, 2, 3, 4, 5]:
        return "1-5", "every weekday"
    return ",".join(map(str, days)), "every " + _join(_DAY_NAMES[d] for d in days)


def _cn_weekdays(text: str) -> list[int]:
    days: list[int] = []
    for m in re.finditer(r"(?P<to>到|至|~|-)?\s*(?:周|星期|礼拜)?(?P<d>[一二三四五六日天七1-7])", text):
        day = _CN_DAYS[m["d"]]
        if m["to"] and days:  # a range "一到五"; Sunday (0) ends the week, so count it as 7
            days += range(days[-1] + 1, (day or 7) + 1)
        else:
            days.append(day)
    return sorted({d % 7 for d in days})


def _join(names) -> str:
    names = list(names)
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


_IN_EN = re.compile(rf"\bin\s+(?:(?P<half>half\s+an?)|(?P<n>{_EN_NUM}))\s*{_EN_UNIT}"
                    r"(?P<and_half>\s+and\s+a\s+half)?"
                    rf"|\b(?P<n2>{_EN_NUM})\s*(?P<unit2>{_EN_UNITS})\s+(?:from\s+now|later)\b", _F)
# "20分钟后", "过20分钟": one of 过 / 后 is required (checked by the caller), not both
_LATER_CN = re.compile(rf"(?:(?<![超经通错不])(?P<guo>过)\s*)?"
                       rf"(?:(?P<n>{_NUM})\s*个?\s*(?P<half>半)?|(?P<only_half>半)\s*个?)"
                       rf"\s*{_CN_UNIT}\s*(?P<after>之后|以后|后|後)?")


def _first(scan: _Scan, pattern: re.Pattern, ok: Callable[[re.Match], object]) -> re.Match | None:
    return next((m for m in pattern.finditer(scan.work) if ok(m)), None)


def _relative(scan: _Scan, ctx: _Context) -> _Found | None:
    if m := scan.search(_IN_EN):
        unit = _unit_seconds(m["unit"] or m["unit2"])
        count = 0.5 if m["half"] else _int(m["n"] or m["n2"]) + (0.5 if m["and_half"] else 0)
    elif (m := _first(scan, _LATER_CN, lambda m: m["guo"] or m["after"])) is not None:
        unit = _unit_seconds(m["unit"])
        count = 0.5 if m["only_half"] else _int(m["n"]) + (0.5 if m["half"] else 0)
    else:
        return None
    scan.take(m.start(), m.end())
    seconds = int(count * unit)
    if seconds % 86400 == 0:  # "in 3 days": a calendar day, the same wall-clock time
        day = ctx.now.date() + timedelta(days=seconds // 86400)
        clock = _take_clock(scan, lenient=True)
        hour, minute = clock or (ctx.now.hour, ctx.now.minute)
        schedule, description = ctx.once(day, hour, minute)
        return _Found(schedule, description, "clock" if clock else "relative")
    schedule, description = ctx.once_at(ctx.now + timedelta(seconds=seconds))
    return _Found(schedule, description, "relative")


_ISO_DATE = re.compile(r"(?<![\d.])(?P<y>\d{4})[-/.](?P<mo>\d{1,2})[-/.](?P<d>\d{1,2})"
                       r"(?:(?:T|\s+)(?P<h>\d{1,2}):(?P<mi>[0-5]\d)(?::[0-5]\d)?)?(?![\d.])")
_CN_DATE = re.compile(rf"(?:(?P<y>\d{{4}}|[零〇一二三四五六七八九]{{4}})\s*年\s*)?(?P<mo>{_NUM})\s*月\s*"
                      rf"(?P<d>{_NUM})\s*[日号號]")


def _date(scan: _Scan, ctx: _Context) -> _Found | None:
    m = scan.search(_ISO_DATE) or scan.search(_CN_DATE)
    if m is None:
        return None
    year = _int(m["y"]) if m["y"] else ctx.now.year
    try:
        day = date(year, _int(m["mo"]), _int(m["d"]))
    except ValueError:
        return None
    scan.take(m.start(), m.end())
    if "h" in m.re.groupindex and m["h"] is not None:
        clock, explicit = _valid(int(m["h"]), int(m["mi"])), True
        if clock is None:
            return None
    else:
        clock, explicit = _take_clock_or_period(scan)
    if not m["y"] and ctx.at(day, *clock) <= ctx.now:  # "12月1日" in late December: next year's
        try:
            day = day.replace(year=year + 1)
        except ValueError:  # 2月29日 with no leap year next
            return None
    schedule, description = ctx.once(day, *clock)
    return _Found(schedule, description, "clock" if explicit else "date")


# a day with its part ("tomorrow evening", "today afternoon") is one phrase: the part is the
# clock's ("tomorrow evening at 8:30" is 20:30), never words left over for a task
_DAY_WORD = re.compile(r"大后天|大後天|后天|後天|明天|明日|今天|今日|今晚|今夜|今早|明早|明晚|明夜"
                       r"|\b(?:(?:the\s+)?day\s+after\s+tomorrow|tomorrow|today)"
                       r"(?:\s+(?:in\s+the\s+)?(?:morning|afternoon|evening|night))?\b|\btonight\b"
                       r"|\bthis\s+(?:morning|afternoon|evening)\b", _F)
_DAY_OFFSET = {"今": 0, "明": 1, "后": 2, "後": 2, "大": 3, "today": 0, "tonight": 0, "this": 0,
               "tomorrow": 1, "the": 2, "day": 2}
_WEEKDAY_CN = re.compile(r"(?<!每)(?<!每个)(?P<rel>下下个?|下个?|这个?|本)?(?:周|星期|礼拜|禮拜)(?P<d>[一二三四五六日天])")


def _day_word(scan: _Scan, ctx: _Context) -> _Found | None:
    m = scan.search(_DAY_WORD)
    if m is None:
        return None
    word = m.group(0).lower()
    offset = _DAY_OFFSET[word.split()[0] if word.isascii() else word[0]]
    period = ("evening" if word == "tonight" or word.endswith(("evening", "night")) or word[-1] in "晚夜"
              else "morning" if word.endswith("morning") or word.endswith("早")
              else "afternoon" if word.endswith("afternoon") else None)
    scan.take(m.start(), m.end())
    return _on_day(scan, ctx, ctx.now.date() + timedelta(days=offset), period)


def _cn_weekday(scan: _Scan, ctx: _Context) -> _Found | None:
    m = scan.search(_WEEKDAY_CN)
    if m is None:
        return None
    scan.take(m.start(), m.end())
    weeks = {"": None, "这": 0, "本": 0, "下": 1, "下下": 2}[(m["rel"] or "").rstrip("个")]
    return _on_weekday(scan, ctx, (_CN_DAYS[m["d"]] - 1) % 7, weeks)


# "on Thursday at 2", "this Friday 3pm", "next Monday"; "on Mondays" is weekly (read before)
_WEEKDAY_EN = re.compile(rf"(?:\b(?P<rel>on|this|next|coming|this\s+coming)\s+)?\b(?P<d>{_WEEKDAY_NAMES})\b(?!s\b)", _F)


def _en_weekday(scan: _Scan, ctx: _Context) -> _Found | None:
    m = scan.search(_WEEKDAY_EN)
    if m is None:
        return None
    scan.take(m.start(), m.end())
    rel = (m["rel"] or "").lower()
    # "next Monday" said on a Friday is the coming Monday, said on a Monday the one a week on
    return _on_weekday(scan, ctx, (_EN_DAYS[m["d"].lower()] - 1) % 7, None, later_than_today=rel == "next")


def _on_weekday(scan: _Scan, ctx: _Context, target: int, weeks: int | None, *,
                later_than_today: bool = False) -> _Found:
    """That weekday (Monday 0 .. Sunday 6) ``weeks`` weeks on (0: this week, or the next one where
    this week's has gone by); None: the next one at the time said, today's if still ahead (not
    today's with ``later_than_today``)."""
    (hour, minute), explicit = _take_clock_or_period(scan)
    today = ctx.now.date()
    if weeks is None:
        day = today + timedelta(days=(target - today.weekday()) % 7)
        if later_than_today and day == today or ctx.at(day, hour, minute) <= ctx.now:
            day += timedelta(days=7)
    else:
        day = today + timedelta(days=7 * weeks + target - today.weekday())
        if weeks == 0 and ctx.at(day, hour, minute) <= ctx.now:
            day += timedelta(days=7)  # "这周五" said on a Sunday: the Friday to come, not one gone by
    schedule, description = ctx.once(day, hour, minute)
    return _Found(schedule, description, "clock" if explicit else "date")


def _on_day(scan: _Scan, ctx: _Context, day: date, period: str | None) -> _Found:
    (hour, minute), explicit = _take_clock_or_period(scan, period)
    schedule, description = ctx.once(day, hour, minute)
    return _Found(schedule, description, "clock" if explicit else "date")


_EN_DATE_WORD = re.compile(rf"\b(?:{_MONTHS}|{_WEEKDAY_NAMES}|week|month)\b", _F)


def _english_date(scan: _Scan, ctx: _Context) -> _Found | None:
    """Other English dates, read by dateparser with the given languages (so it never
    guesses one) and the injected ``now`` as its base."""
    if not scan.search(_EN_DATE_CUE):
        return None
    from dateparser.search import search_dates  # slow to import; only the rare message needs it

    settings = {"PREFER_DATES_FROM": "future", "TIMEZONE": ctx.timezone,
                "RETURN_AS_TIMEZONE_AWARE": True, "RELATIVE_BASE": ctx.now.replace(tzinfo=None)}
    for phrase, when in search_dates(scan.work, languages=["en", "zh"], settings=settings) or []:
        start = scan.work.find(phrase)
        if start < 0 or not _EN_DATE_WORD.search(phrase):
            continue
        scan.take(start, start + len(phrase))
        if _take_clock(_Scan(phrase), lenient=True) is not None:
            schedule, description = ctx.once(when.date(), when.hour, when.minute)
            return _Found(schedule, description, "clock")
        return _on_day(scan, ctx, when.date(), None)
    return None


def _clock_only(scan: _Scan, ctx: _Context) -> _Found | None:
    clock = _take_clock(scan, lenient=False)
    if clock is None:
        return None
    schedule, description = ctx.once_at(ctx.next_clock(*clock))
    return _Found(schedule, description, "clock")


# what each recogniser searches first; has_schedule looks for any of them
_TRIGGERS = (_EVERY_N_EN, _EVERY_ONE_EN, _EVERY_N_CN, _EVERY_ONE_CN, _DAILY, _WEEKLY_CN, _WEEKLY_EN,
             _WORKDAYS, _WEEKENDS, _MONTHLY, _IN_EN, _LATER_CN, _ISO_DATE, _CN_DATE, _DAY_WORD,
             _WEEKDAY_CN, _WEEKDAY_EN, _EN_DATE_CUE, _CN_CLOCK, _EN_CLOCK)
_RECOGNISERS: list[Callable[[_Scan, _Context], _Found | None]] = [
    _interval, _calendar, _relative, _date, _day_word, _cn_weekday, _en_weekday, _english_date, _clock_only]
