"""The words and numbers schedules are written in: Chinese and English numerals, units,
weekdays, parts of the day, and the cues for reminders and questions. Shared by the
recognisers in ``parse.py``."""

from __future__ import annotations

import re

from common.numerals import zh_number

DEFAULT_HOUR = 9  # when a day is named but no time ("明天提醒我交报告")
_F = re.ASCII | re.IGNORECASE

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

# Words that ask for a reminder. "叫我" (call me) and "记得" (remember) only where they are the
# request: "叫我起床", "8点叫我", "记得交报告", "明天记得带伞" — not "叫我小明吧" (a name), "你还记得我
#叫什么吗" or "我记得他姓王" (memory). "告诉我" (tell me) is never one: "告诉我一个笑话" asks for
# something now; with a time ("每天8点告诉我天气") it is a loop task that runs the request.
# other words for "remind me", shared with the lead a reminder's text drops (requests.py)
NUDGE_ME = r"(?:nudge|poke|bug)\s+me|give\s+me\s+a\s+(?:shout|buzz|nudge|heads[- ]up|ring|call)"
_REMIND = re.compile(
    # "叫我" asks to be called right after a time ("三刻钟后叫我把衣服晾了"): "老板叫我把报告改一下"
    # tells what someone asked, "叫我小明就行" a name
    r"提醒|叫醒|通知我|[叫喊]我(?=起床|起来|醒|一声|\s*$|[，,。.!！])|(?<=[后前点分半候])[叫喊]我"
    r"|(?<![你我他她它还都也不得的])记得(?!\s*(?:吗|么|嘛|不))"
    # "remind me what I'm allergic to" asks what Flora remembers: a question word after "remind me"
    rf"|\b(?:remind(?!\s+me\s*[,，:]?\s+(?:again\s*[,，]?\s+)?(?:what|who|whom|where|which|how|why|whether)\b)"
    rf"|alert me|notify me|ping me|wake me|shout at me|{NUDGE_ME})", _F)
# "could you … every 6 hours?" is a request put politely, not a question: can/could/would/will
# before "you" start no question here
_QUESTION = re.compile(r"[?？]|吗|呢\s*$|多少|什么|怎么|怎样|几点|为什么|哪|^\s*(?:what|how|why|when|which"
                       r"|who|whose|is|are|was|were|do|does|did|should|(?:can|could|would|will)(?!\s+(?:you|u)\b))\b", _F)
# "can check https://… every 10 minutes or not?": can or could with no one named, asking whether
# it can be done, is a request put in Singapore English
_CAN_OR_NOT = re.compile(r"^\s*(?:(?:hey|hi|eh|oi)\b[^,，]*[,，]\s*)?(?:can|could)\s+(?:help\s+(?:me\s+)?)?"
                         r"(?:check|run|send|remind|fetch|get|look|monitor|ping|watch|tell|do|make|set|call|hit|query"
                         r"|pull|book|find|show|give|track|keep|see)\b.*\bor\s+not\b", _F)
# a request to find something out carries its own question: "每隔两小时查一下订单有多少" asks for a
# check every two hours, not how many hours
_FIND_OUT = re.compile(r"查一下|查查|查询|查看|查|看一下|看看|统计|数一下|检查|告诉我|汇报|报告"
                       r"|\b(?:check|see|find\s+out|tell\s+me|report|count|show\s+me|let\s+me\s+know|look\s+up)\b", _F)
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
