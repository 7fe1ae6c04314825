"""The words and numbers schedules are written in: Chinese and English numerals, units,
weekdays, parts of the day, and the cues for reminders and questions. Shared by the
recognisers in ``parse.py``.

The shapes of times, numbers and dates are read here in code; the cues for reminders and
questions are words people use, kept with their examples in the rule table
``capabilities/cognition/tables/loop_requests.json``."""

from __future__ import annotations

import re

from capabilities.cognition.rule_tables import table
from common.numerals import zh_number

DEFAULT_HOUR = 9  # when a day is named but no time ("明天提醒我交报告")
_F = re.ASCII | re.IGNORECASE
_RULES = table("loop_requests")

# --- vocabulary -----------------------------------------------------------------------

_FULLWIDTH = str.maketrans("０１２３４５６７８９：\u3000", "0123456789: ")
_EN_NUMBER = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6,
              "seven": 7, "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12,
              "fifteen": 15, "twenty": 20, "thirty": 30, "forty": 40, "forty-five": 45}
_NUM = r"(?:\d{1,4}|[一二两兩三四五六七八九]?十[一二三四五六七八九]?|[零〇一二两兩三四五六七八九]{1,4})"
_EN_NUM = r"(?:\d{1,4}|" + "|".join(sorted(_EN_NUMBER, key=len, reverse=True)) + ")"
_EN_UNITS = r"seconds?|secs?|minutes?|mins?|hours?|hrs?|days?|weeks?"
_EN_UNIT = rf"(?P<unit>{_EN_UNITS})\b"
_CN_UNIT = r"(?P<unit>秒钟?|分钟|刻钟|小时|钟头|天|日|星期|礼拜|周)"  # 刻钟: a quarter of an hour
_UNIT_S = {"sec": 1, "second": 1, "min": 60, "minute": 60, "hr": 3600, "hour": 3600,
           "day": 86400, "week": 604800, "秒": 1, "秒钟": 1, "分钟": 60, "刻钟": 900, "小时": 3600, "钟头": 3600,
           "天": 86400, "日": 86400, "星期": 604800, "礼拜": 604800, "周": 604800}
_EN_DAYS = {"monday": 1, "mon": 1, "tuesday": 2, "tue": 2, "tues": 2, "wednesday": 3, "wed": 3,
            "thursday": 4, "thu": 4, "thur": 4, "thurs": 4, "friday": 5, "fri": 5,
            "saturday": 6, "sat": 6, "sunday": 0, "sun": 0}
_EN_DAY = "(?:" + "|".join(sorted(_EN_DAYS, key=len, reverse=True)) + ")"
_CN_DAYS = {"一": 1, "二": 2, "三": 3, "四": 4, "五": 5, "六": 6, "日": 0, "天": 0, "七": 0,
            "1": 1, "2": 2, "3": 3, "4": 4, "5": 5, "6": 6, "7": 0}
_DAY_NAMES = ["Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"]
_PERIOD = {"凌晨": "small", "早上": "morning", "早晨": "morning", "清晨": "morning", "上午": "morning",
           "中午": "noon", "下午": "afternoon", "傍晚": "evening", "晚上": "evening", "夜里": "evening",
           "夜间": "evening", "morning": "morning", "afternoon": "afternoon", "evening": "evening",
           "night": "evening", "noon": "noon",
           # the end of the working day and bedtime are parts of the day too: "下班前6点" is 18:00
           "下班前": "after_work", "下班之前": "after_work", "下班以前": "after_work", "下班后": "after_work",
           "下班之后": "after_work", "下班以后": "after_work", "下班": "after_work", "收工后": "after_work",
           "收工前": "after_work", "放学后": "after_work", "睡前": "bedtime", "睡觉前": "bedtime",
           "after work": "after_work", "before i leave work": "after_work", "after school": "after_work",
           "before bed": "bedtime", "at bedtime": "bedtime"}
_PERIOD_HOUR = {"small": 2, "morning": DEFAULT_HOUR, "noon": 12, "afternoon": 15, "evening": 20,
                "after_work": 18, "bedtime": 22}
_LATE_PERIODS = ("afternoon", "evening", "after_work", "bedtime")  # an hour up to 12 in them is p.m.
# longest first: "下班前" before "下班"
_CN_PERIOD = "|".join(sorted((k for k in _PERIOD if not k.isascii()), key=len, reverse=True))
_EN_LATE_PERIOD = "|".join(k.replace(" ", r"\s+") for k in _PERIOD if k.isascii() and _PERIOD[k] in ("after_work", "bedtime"))
_MONTHS = ("january|february|march|april|may|june|july|august|september|october|november|december"
           "|jan|feb|mar|apr|jun|jul|aug|sept?|oct|nov|dec")

# Words that ask for a reminder ("提醒", "8点叫我", "remind me"), that put a question now ("吗",
# "what…"; "could you … every 6 hours?" is a request put politely), and that pass one on to be
# found out ("每隔两小时查一下订单有多少"): in the table, with the messages they must and must not take
_REMIND = _RULES["remind"]
_QUESTION = _RULES["question"]
_CAN_OR_NOT = _RULES["can_or_not"]  # "can check https://… every 10 minutes or not?": a request, not a question
_FIND_OUT = _RULES["find_out"]

_WEEKDAY_NAMES = "monday|tuesday|wednesday|thursday|friday|saturday|sunday"
_EN_DATE_CUE = re.compile(rf"\b(?:{_MONTHS})\b\.?\s*\d"
                          rf"|\b\d{{1,2}}(?:st|nd|rd|th)?\s+(?:of\s+)?(?:{_MONTHS})\b"
                          rf"|\b(?:next|this|on)\s+(?:{_WEEKDAY_NAMES})\b|\bnext\s+(?:week|month)\b", _F)


def asks_now(text: str) -> bool:
    """Whether ``text`` is a question put now, not one a request passes on to be found out."""
    if _CAN_OR_NOT.search(text):
        return False
    return any(not _FIND_OUT.search(text, 0, match.start()) for match in _QUESTION.finditer(text))


def _normalise(text: str) -> str:
    return text.translate(_FULLWIDTH)


def _int(token: str) -> int:
    token = token.lower()
    if token.isdigit():
        return int(token)
    if token in _EN_NUMBER:
        return _EN_NUMBER[token]
    value = zh_number(token)
    if value is None:
        raise ValueError(f"not a number: {token!r}")
    return int(value)


def _unit_seconds(unit: str) -> int:
    unit = unit.lower()
    return _UNIT_S.get(unit) or _UNIT_S[unit.rstrip("s")]


def _apply_period(hour: int, period: str | None) -> int:
    if period in _LATE_PERIODS and hour < 12 and not (period == "evening" and hour < 5):
        return hour + 12
    if period == "noon" and 1 <= hour <= 5:
        return hour + 12
    if period in ("evening", "small") and hour == 12:
        return 0
    return hour
