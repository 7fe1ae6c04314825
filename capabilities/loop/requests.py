"""Reading loop-task requests in plain words, Chinese or English, before any model is asked.

``read_loop_request`` sorts a message into one of:

- ``LoopOperation``: the user acts on loop tasks they have ("list my reminders", "pause
  loop_3f2a…", "把GRPO提醒删掉", "run the sales report task now", "change loop_… to every day
  at 10:00");
- ``NewLoop``: the user asks for something to happen at a time or on a schedule ("每天早上9点
  提醒我复习GRPO", "every Monday at 10:00 fetch the sales report", "remind me to call Li"
  with no time yet: the time is then asked for);
- ``None``: an ordinary request.

An operation needs both an operation word and a reference to loop tasks (a ``loop_…`` id, or
"loop task", "reminder", "schedule", "提醒", "定时任务"...), and the operation word must not
come after "remind me": "remind me to cancel the subscription" asks for a reminder.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import UTC, datetime

from capabilities.context.answers import named_values
from capabilities.loop.parse import ParsedSchedule, parse_schedule
from capabilities.loop.schedule import ScheduleError
from capabilities.loop.vocabulary import NUDGE_ME, _REMIND

_F = re.IGNORECASE
# words for loop tasks. "提醒" is a thing ("站会那个提醒", "GRPO提醒") unless it asks someone to be
# reminded ("提醒我…", "提醒他把…"); "remind me", "reminding" ask for a reminder (see _REMIND_VERB);
# "定时" is one after "个/的/把" ("把定时关了"), not in "每天定时删掉旧日志" (on a schedule)
# what the person has on a schedule: "everything I've got scheduled", "what's scheduled"
_HAVE_SCHEDULED = (r"\b(?:(?:i|we)(?:'ve|\s+have)?\s+(?:got\s+)?(?:set\s+up\s+|already\s+)?"
                   r"|(?:anything|everything|ev\w{1,3}thing|all|stuff)\s+)scheduled\b"
                   # "what's scheduled?" alone is the person's; "what's scheduled for the offsite?" is not
                   r"|\b(?:what'?s|what\s+is|what\s+are|is\s+there\s+anything)\s+scheduled"
                   r"(?=(?:\s+for\s+(?:me|today|tomorrow|this\s+week))?\s*[?？.!]*\s*$)")
_REFERENCE = re.compile(r"\bloop_[0-9a-f]{6,32}\b|\bloop\s*tasks?\b|\breminders?\b|\bremind\w*|\bscheduled\s+(?:tasks?|jobs?|runs?)\b"
                        rf"|\bschedules\b|\brecurring\b|循环任务|定时任务|(?<=[个的把将])定时|提醒|计划任务|{_HAVE_SCHEDULED}", _F)
# a reference that asks to be reminded rather than names a loop task: an operation word counts for it
# only just before it ("stop reminding me", "不要再提醒我喝水了"), never elsewhere ("cancel the
# subscription, then remind me tomorrow", "删了这个文件再提醒我": a new reminder)
_REMIND_VERB = re.compile(r"(?:remind(?!ers?\b)\w*|提醒(?=\s*(?:我|你|您|他|她|咱|大家|一下|一声|把|将|让|去|要|记得)))", _F)
# a reminder being asked for, not one the user has: "set a reminder", "I need a reminder to…", "加个提醒"
_NEW_REFERENCE = re.compile(r"(?:\b(?:set|add|create|make|schedule|need|want|give\s+me|get\s+me)\s+(?:up\s+)?(?:me\s+)?"
                            r"(?:an?|another|one\s+more|new)\s+(?:[\w-]+\s+){0,2}"
                            r"|(?:设置|设定|添加|新建|新增|创建)(?:一)?(?:个|条)?|(?:设|加|建|定|弄|搞|来)(?:一)?(?:个|条|下))$", _F)
# between a loop task's word and an operation word after it: what makes the operation the thing to
# be reminded of ("提醒小王把文件删了", "a reminder to turn the heater on")
_ASKS_SOMEONE = re.compile(r"把|将|让|叫|去|\bto\b", _F)
_OPS = (  # first match wins: "stop" before "run" so "stop running..." deletes; "resume the paused one" resumes
    ("list", re.compile(r"^\s*(?:please\s+)?(?:list|show|display|what\s+are|which\s+are|view)\b"
                        r"|^\s*(?:what|which)\s+(?:loop\s*tasks?|reminders?|schedules?|scheduled\s+\w+)\b"
                        # "which things are you checking or reminding me about on a schedule?"
                        r"|^\s*(?:what|which)\b[^.?!]{0,40}\b(?:remind(?:ing)?\s+me\s+(?:about|of)|on\s+a\s+schedule)\b"
                        # asked to be shown: "can I see …", "let me see …", "what have I got scheduled?"
                        r"|^\s*(?:(?:can|could|may)\s+i\s+(?:see|view|get\s+a\s+list\s+of|have\s+a\s+look\s+at|look\s+at)"
                        r"|let\s+me\s+see|what(?:'s|\s+is|\s+have\s+i\s+got|\s+do\s+i\s+have|\s+did\s+i\s+(?:set|schedule))"
                        r"|is\s+there\s+anything)\b"
                        r"|列出|查看|看看|显示|有哪些|列表"
                        # asked which or how many: "我都定了些啥提醒", "提醒一共有几个", "设了多少个定时任务"
                        r"|(?:什么|啥|哪些|哪几个|几个|几条|多少个?)(?:样的?)?(?:个|条|些)?\s*(?=提醒|定时|循环任务|计划任务)"
                        r"|(?:提醒|定时任务|循环任务|计划任务)(?:都|一共|总共|现在|目前)*"
                        r"(?:有(?:些)?(?:什么|啥|哪些|几个|几条|多少)|是哪些|都是(?:些)?(?:什么|啥|哪些))", _F)),
    ("modify", re.compile(r"\b(?:change|modify|reschedule|move|update|edit)\b|修改|改成|改为|改到|调整|更改", _F)),
    # "switch the standup reminder on again", "turn it back on", "re-enable", "把提醒重新开启", "继续提醒我"
    ("resume", re.compile(r"\b(?:resume|unpause|reactivate|re-?activate|re-?enable|enable|unmute)\b"
                          r"|\b(?:turn|switch|flip)\s+(?:(?!off\b)[\w'-]+\s+){0,5}?(?:back\s+)?on\b(?!\s+hold)"
                          r"|\bput\s+(?:\w+\s+){0,5}back\s+on\b"
                          r"|\bstart\s+(?:\w+\s+){0,5}again\b|\bbring\s+(?:\w+\s+){0,5}back\b"
                          r"|恢复|重新开始|(?<!不)(?<!别)(?<!不用)(?<!不要)(?<!不必)继续|重新打开|再打开|打开|重新启用|启用|(?:重新|再)?开起来|重新开|开回来|(?:重新)?开启", _F)),
    ("pause", re.compile(r"\b(?:pause|suspend|hold)\b|\b(?:turn|switch)\s+(?:\w+\s+){0,5}off\b"
                         r"|暂停|停一下|停一停|先停|停几天|先别|关掉|关了|关一下|关上|停掉|停了", _F)),
    # "站会那个提醒删了吧", "那个提醒不要了", "reminder for standup, kill it", "I don't need the standup reminder anymore"
    ("delete", re.compile(r"\b(?:delete|remove|cancel|stop|drop|disable|kill|scrap|ditch|trash|axe|nix|get\s+rid\s+of)\b"
                          r"|\bbin\s+(?=(?:it|that|this|the|my|those|these)\b)"  # "bin the daily reminder", not "the bins reminder"
                          r"|\b(?:don'?t|do\s+not|no\s+longer)\s+(?:need|want)\b|\bnot\s+needed\b"
                          r"|删除|删掉|删了|删去|删一下|删吧|去掉|取消|停止|不要再|别再|不用再|不必再"
                          r"|(?:不用|不必|别|不要)(?=\s*提醒)|(?:不用|不必|别|不要)再?继续|不要了|不用了|不需要了|用不着了?|没用了", _F)),
    ("trigger", re.compile(r"\b(?:run|trigger|fire|execute|start)\b.*\bnow\b|\bnow\b.*\b(?:run|trigger|fire)\b"
                           r"|立即|立刻|马上|现在(?:就)?(?:运行|执行|触发|跑)|手动(?:运行|执行|触发|跑)", _F)),
)
_AUTO_CONTINUE = re.compile(r"\bauto[\s_-]?continue\b|\bfollow[\s-]?up\b|\bkeep\s+reminding\b|\bdecide\s+(?:the\s+)?next\b"
                            r"|智能提醒|自动续|决定下次|跟进|督促", _F)
_REMIND_LEAD = re.compile(r"^\s*(?:请|帮我|麻烦)?\s*(?:提醒我|叫我|喊我|通知我|记得|提醒)\s*(?:一下|一声|去|要)?\s*"
                          rf"|^\s*(?:please\s+)?(?:(?:remind|alert|notify|ping)\s+me|{NUDGE_ME})\s*(?:to|that|about|of)?\s*", _F)
_TRIM = " \t,，。.!！;；:：、"
# asked to write something: a time after it is what the text is about ("给物业写个投诉，楼上天天早上七点
#就开钻"), a time before it when to write it ("每天早上8点帮我写一份日报")
_WRITE = re.compile(r"(?:写|起草|草拟|拟)(?:一)?(?:个|封|段|篇|份|条|下)|\b(?:write|draft|compose)\b", _F)


@dataclass(frozen=True)
class LoopOperation:
    op: str  # list | trigger | pause | resume | delete | modify
    reference: str  # the text, to find the loop task by id or words
    schedule_text: str = ""  # modify: the text after the loop task's name, to read a new schedule from
    parameters: dict = field(default_factory=dict)


@dataclass(frozen=True)
class NewLoop:
    parsed: ParsedSchedule | None  # None: the time is still to be asked for
    task_text: str  # what to do each time, without the schedule words
    reminder: bool  # a reminder ("remind me to..."): the run tells the user ``task_text``
    auto_continue: bool = False


def read_loop_request(text: str, parse) -> LoopOperation | NewLoop | None:
    """``parse(text)`` reads a schedule (``LoopService.parse``: time and zone injected)."""
    operation = _operation(text)
    if operation is not None:
        return operation
    parsed = parse(text)
    remind = _REMIND.search(text)
    if parsed is None and not remind:
        return None
    if parsed is not None and not remind and _written_about(text, parsed.remainder):
        return None
    rest = parsed.remainder if parsed is not None else text
    reminder = bool(_REMIND.search(rest)) or remind is not None
    task_text = reminder_text(rest) if reminder else rest.strip(_TRIM)
    if not task_text:
        return None
    return NewLoop(parsed, task_text, reminder, bool(_AUTO_CONTINUE.search(text)))


# "reminder apps", "she sets reminders for everything": the noun alone tells of reminders; with a
# verb of making one before it ("set a reminder", "can I get a reminder") it asks for one
_REMINDER_NOUN = re.compile(r"\breminders?\b", _F)
_MAKES_A_REMINDER = re.compile(r"\b(?:set|add|create|make|put|schedule|give|get|need|want)\b(?:\s+\S+){0,3}?\s+reminders?\b", _F)


def asks_to_be_reminded(text: str) -> bool:
    """Whether the words ask for a reminder ("remind me…", "set a reminder…", "提醒我…"), not only
    tell of reminders ("my nan just discovered reminder apps")."""
    return bool(_REMIND.search(_REMINDER_NOUN.sub(" ", text)) or _MAKES_A_REMINDER.search(text))


def _written_about(text: str, remainder: str) -> bool:
    """Whether the schedule words come after a request to write something: what it is about."""
    written = _WRITE.search(text)
    if written is None:
        return False
    said_at = next((i for i, (a, b) in enumerate(zip(text, remainder)) if a != b), len(remainder))
    return written.start() < said_at


READ_OPS = ("list", "pause", "resume", "delete", "trigger")  # a reading's loop_op/<kind> that names one


# once a message is known to be about the person's loop tasks, more words say which operation
_MORE_OP_WORDS = (
    ("pause", re.compile(r"\b(?:mute|silence|snooze|hold\s+off)\b|静音|别响|先不要提醒", _F)),
    ("trigger", re.compile(r"\bnow\b|\bright\s+away\b|立马|立即|马上|现在", _F)),
)


_POINTED = re.compile(r"那个|这个|那条|这条|\bthat\s+(?!is\b)|\bthe\s+\w+\s+one\b", _F)


def pointed_operation(text: str) -> LoopOperation | None:
    """An operation said of a thing pointed at without a word for loop tasks ("库存不足那个查询现在就
    跑一下"): the operation, to be taken only where the words name one of the person's loop tasks."""
    if not _POINTED.search(text):
        return None
    said = next((op for op, pattern in _OPS if op in READ_OPS and op != "list" and pattern.search(text)), None)
    return LoopOperation(said, text) if said else None


def named_operation(text: str) -> LoopOperation | None:
    """An operation on a loop task said with no word for loop tasks at all ("pause the weekly sales
    report task", "销售周报改成每周五下午5点"): the operation its words say, to be taken only where
    the words name one of the person's loop tasks (the caller checks, ``LoopService.named_in``).
    Never for a message that asks to be reminded ("remind me to stop the heating")."""
    if asks_to_be_reminded(text):
        return None
    for op, pattern in (*_OPS, *_MORE_OP_WORDS):
        found = pattern.search(text) if op != "list" else None
        if found is not None:
            return LoopOperation(op, text, schedule_text=text[found.end():] if op == "modify" else "")
    return None


def operation_read_as(kind: str, text: str) -> LoopOperation | None:
    """The operation on the person's loop tasks that a semantic reading of ``text`` names
    (loop_op/<kind>), when the rules read none. Nearest examples tell the topic better than the
    verb ("mute the bins reminder" lies near "what's the bins reminder?"), so an operation word
    in the text decides which, and the reading's kind only where there is none. The loop task is
    found by the words of ``text`` (or is the person's only one)."""
    if kind not in READ_OPS or not text.strip():
        return None
    said = next((op for op, pattern in (*_OPS, *_MORE_OP_WORDS) if op in READ_OPS and pattern.search(text)), kind)
    return LoopOperation(said, text)


def looks_like_loop_request(text: str) -> bool:
    """A cheap check for the front desk: does ``text`` ask for or about a loop task? (Then it
    is a new request, not an answer to a paused task's question.)"""
    try:
        return read_loop_request(text, lambda t: parse_schedule(t, now=datetime.now(UTC), timezone="UTC")) is not None
    except ScheduleError:
        return True


_FILLER = re.compile(r"^(?:(?:hmm+|h?mm+|uh+|um+|er+|well|ok(?:ay)?|so|oh|嗯+|呃+|额+|哦+)\s*[,，.。…]*\s*)*"
                     r"(?:(?:make\s+it|let'?s\s+(?:say|do)|how\s+about|say|maybe|那就|就定|定在|改成|改到)\s*)*"
                     r"(?:吧|呢|啊|呀|哦|就|好了|可以|行|吧好了|please|pls|then|ok(?:ay)?|thanks?)?$", re.I)


def only_a_time(text: str) -> bool:
    """Whether ``text`` says a time and nothing to do ("明天早上9点吧", "in 20 minutes please"):
    the answer to a question for a time, not a new loop task."""
    if _operation(text) is not None:
        return False
    try:
        parsed = parse_schedule(text, now=datetime.now(UTC), timezone="UTC")
    except ScheduleError:
        return False
    if parsed is None:
        return False
    rest = reminder_text(parsed.remainder) if _REMIND.search(text) else parsed.remainder
    return bool(_FILLER.match(rest.strip(_TRIM + "?？").strip()))  # nothing left, or "吧", "please"


def schedule_words(text: str, request: NewLoop) -> str:
    """The words of ``text`` that say when ("book a room on Thursday at 9" → "on Thursday at
    9"), or "" when the task's words are not found whole in it."""
    if request.task_text not in text:
        return ""
    return " ".join(text.replace(request.task_text, " ").split()).strip(_TRIM)


def reminder_text(text: str) -> str:
    """"提醒我复习GRPO" → "复习GRPO"; "remind me to call Li" → "call Li"."""
    stripped = text.strip(_TRIM)
    for _ in range(2):  # "记得提醒我喝水": both leads
        stripped = _REMIND_LEAD.sub("", stripped, count=1).strip(_TRIM)
    stripped = _AUTO_CONTINUE.sub("", stripped)
    return re.sub(r"\s{2,}", " ", stripped).strip(_TRIM)


def _operation(text: str) -> LoopOperation | None:
    references = [r for r in _REFERENCE.finditer(text) if not _NEW_REFERENCE.search(text[:r.start()])]
    if not references:
        return None
    remind = _REMIND.search(text)
    for op, pattern in _OPS:
        found = pattern.search(text)
        if found is None:
            continue
        if remind is not None and found.start() > remind.start() and op != "list" \
                and re.match(r"(?:remind|alert|notify|ping)\s+me\b|提醒我|叫我|通知我", text[remind.start():], _F):
            return None  # "remind me to cancel...": a new reminder, not an operation
        if not any(_said_of(text, found, reference) for reference in references):
            return None  # "cancel the subscription, then remind me": the operation is on something else
        if op == "modify":
            after = text[found.end():]
            parameters = named_values(after, _parameter_names(after)) if "=" in after else {}
            return LoopOperation(op, text, schedule_text=after, parameters=parameters)
        return LoopOperation(op, text)
    return None


def _said_of(text: str, found: re.Match, reference: re.Match) -> bool:
    """Whether the operation word ``found`` is said of the loop task ``reference`` names."""
    if found.start() <= reference.start() < found.end():  # "which things are you reminding me about?"
        return True
    if _REMIND_VERB.match(text, reference.start()):  # "stop reminding me", "不要再提醒我", "don't want to be reminded"
        return found.end() <= reference.start() and \
            bool(re.fullmatch(r"\s*(?:to\s+be\s+)?(?:再|again|ever)?\s*", text[found.end():reference.start()], _F))
    if found.start() >= reference.end():  # "站会那个提醒删了吧", not "提醒小王把文件删了"
        return not _ASKS_SOMEONE.search(text[reference.end():found.start()])
    return True  # "delete the plants reminder", "turn the standup reminder back on"


def _parameter_names(text: str) -> list[str]:
    return re.findall(r"([A-Za-z_][A-Za-z0-9_]*)\s*=", text)
