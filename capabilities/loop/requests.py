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

The words these rules read (for loop tasks, for each operation, for asking to be reminded) live
in the table ``capabilities/cognition/tables/loop_requests.json`` (``rule_tables``), each rule with
the messages that prove it; the time itself is read in code by ``parse.py``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import UTC, datetime

from capabilities.cognition.rule_tables import table
from capabilities.cognition.world import unquoted
from capabilities.context.answers import named_values
from capabilities.loop.parse import ParsedSchedule, parse_schedule
from capabilities.loop.schedule import ScheduleError
from capabilities.loop.vocabulary import _REMIND

_RULES = table("loop_requests")
# words for loop tasks ("loop_…", "reminder", "定时任务", "what's scheduled"); "提醒" is a thing
# ("站会那个提醒") unless it asks someone to be reminded (_REMIND_VERB: "提醒我…", "remind me")
_REFERENCE = _RULES["reference"]
# a reference that asks to be reminded rather than names a loop task: an operation word counts for it
# only just before it ("stop reminding me", "不要再提醒我喝水了"), never elsewhere ("cancel the
# subscription, then remind me tomorrow", "删了这个文件再提醒我": a new reminder)
_REMIND_VERB = _RULES["remind_verb"]
_NEW_REFERENCE = _RULES["new_reference"]  # a reminder being asked for, not one the user has: "set a reminder"
# between a loop task's word and an operation word after it: what makes the operation the thing to
# be reminded of ("提醒小王把文件删了", "a reminder to turn the heater on")
_ASKS_SOMEONE = _RULES["asks_someone"]
# first match wins: "stop" before "run" so "stop running..." deletes; "resume the paused one" resumes
_OPS = tuple((op, _RULES[f"op_{op}"]) for op in ("list", "modify", "resume", "pause", "delete", "trigger"))
_AUTO_CONTINUE = _RULES["auto_continue"]
_REMIND_LEAD = _RULES["remind_lead"]
_REMIND_ME = _RULES["remind_me"]  # "remind me to cancel…": the words after it are what to be reminded of
_AGAIN = _RULES["again_before_remind_verb"]  # "stop reminding me", "don't want to be reminded", "不要再提醒我"
_TRIM = " \t,，。.!！;；:：、"
# asked to write something: a time after it is what the text is about ("给物业写个投诉，楼上天天早上七点
#就开钻"), a time before it when to write it ("每天早上8点帮我写一份日报")
_WRITE = _RULES["write"]


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
    if parsed is not None and unquoted(text) != text and parse(unquoted(text)) is None:
        parsed = None  # "put 'room 12 wants a 5am call' in a file": a time quoted is what is written, no schedule
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
_REMINDER_NOUN = _RULES["reminder_noun"]
_MAKES_A_REMINDER = _RULES["makes_a_reminder"]


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
_MORE_OP_WORDS = (("pause", _RULES["more_op_pause"]), ("trigger", _RULES["more_op_trigger"]))


_POINTED = _RULES["pointed"]  # "那个查询", "that report", "the sales one"


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


def _parse_now(text: str) -> ParsedSchedule | None:
    return parse_schedule(text, now=datetime.now(UTC), timezone="UTC")


def looks_like_loop_request(text: str, parse=_parse_now) -> bool:
    """A cheap check for the front desk: does ``text`` ask for or about a loop task? (Then it
    is a new request, not an answer to a paused task's question.) ``parse``: how a schedule is
    read (one the caller already read, kept)."""
    try:
        return read_loop_request(text, parse) is not None
    except ScheduleError:
        return True


_FILLER = _RULES["filler"]  # what may be left beside a time: nothing, "吧", "please", "hmm, make it"


def only_a_time(text: str, parse=_parse_now) -> bool:
    """Whether ``text`` says a time and nothing to do ("明天早上9点吧", "in 20 minutes please"):
    the answer to a question for a time, not a new loop task."""
    if _operation(text) is not None:
        return False
    try:
        parsed = parse(text)
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
                and _REMIND_ME.match(text[remind.start():]):
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
            bool(_AGAIN.fullmatch(text[found.end():reference.start()]))
    if found.start() >= reference.end():  # "站会那个提醒删了吧", not "提醒小王把文件删了"
        return not _ASKS_SOMEONE.search(text[reference.end():found.start()])
    return True  # "delete the plants reminder", "turn the standup reminder back on"


def _parameter_names(text: str) -> list[str]:
    return re.findall(r"([A-Za-z_][A-Za-z0-9_]*)\s*=", text)
