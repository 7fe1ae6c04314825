"""The loop reader's reading of a message held against the reading by examples, for the
AgentActor's TaskCoordinator: a new loop task, an operation on the person's loop tasks, or
neither (a time that answers a paused question, a reminder only told of)."""

from __future__ import annotations

from capabilities.cognition.reading import Reading as MessageReading, carried
from capabilities.cognition.rule_tables import table
from capabilities.cognition.semantic import CERTAIN, LEANS, Reading
from capabilities.loop.requests import LoopOperation, NewLoop, asks_to_be_reminded, pointed_operation
from capabilities.loop.requests import operation_read_as as loop_operation_read_as
from common import messages as m

_POINTED = table("loop_requests")["pointed"]  # "that reminder", "拿药那个提醒": one thing pointed at

_NOT_NEW_LOOPS = ("loop_op", "task_op", "status", "command", "unsupported")


def second_look(request: LoopOperation | NewLoop | None, msg: m.AgentTask, reading: Reading | None,
                 names_one=lambda: False, awaits_a_time=lambda: False) -> LoopOperation | NewLoop | None:
    """The loop reader's reading held against the semantic one. Not a new loop task: an
    operation on the person's loop tasks it missed ("can you mute the bins reminder for a couple
    of weeks?", "remind me what reminders I have"), a time that answers a paused question
    ("周五上午吧，十点左右"), a time said in passing ("got any coffee jokes? need one before my 8am"),
    a "remember" without a time that asks for no reminder (``_asks_no_reminder``). An operation
    it missed: one said of a loop task pointed at by what it does ("库存不足那个查询现在就跑一下").
    ``names_one()``: whether the message names one of the person's loop tasks by its words;
    ``awaits_a_time()``: whether a paused task this message may answer waits for a time."""
    if isinstance(request, NewLoop) and request.parsed is None and _asks_no_reminder(carried(msg)):
        return None
    if isinstance(request, NewLoop) and request.parsed is not None and not asks_to_be_reminded(msg["content"]) \
            and awaits_a_time():
        # "晚上八点半，她那会儿才下班" while "remind me to call the bride" waits for its time: the
        # answer, not a new loop task — whatever the examples make of the words around the time
        return None
    if request is None and (pointed := pointed_operation(msg["content"])) is not None and names_one():
        return pointed
    if reading is None or isinstance(request, LoopOperation):
        return request
    if isinstance(request, NewLoop):
        return _new_loop_or_not(request, msg, reading, names_one)
    if reading.family != "loop_op" or not (reading.sure() or reading.sure(LEANS) and names_one()):
        return request  # "退货单数那个每天的查询不用再跑了，直接删掉": leaning so, and naming one of theirs
    operation = loop_operation_read_as(reading.kind, msg["content"])
    if operation is not None and operation.op == "list":
        return None  # a question for the list that no rule read is a status question: its answer lists them
    return operation


def _asks_no_reminder(said: MessageReading) -> bool:
    """A "记得"/"通知我" with no time that asks for no reminder: a note on a task ("这个任务记个备忘：
    下次请求记得带上token"), or a question only the person's world answers ("帮我看一下我邮箱里有没有
    学校发过来的家长会通知我记得是这周…")."""
    return said.task_operation is not None or said.asks and said.needs_the_world


def _new_loop_or_not(request: NewLoop, msg: m.AgentTask, reading: Reading,
                     names_one) -> LoopOperation | NewLoop | None:
    if reading.family == "answer" and msg.get("pending_task_id") and reading.sure(LEANS):
        return None  # a question waits: understanding tells its answer from a new reminder
    content = msg["content"]
    if reading.family == "loop_op" and request.parsed is None and (
            reading.sure() and _POINTED.search(content)
            or reading.sure(LEANS) and carried(msg).asks and not asks_to_be_reminded(content)):
        # no time, so nothing to schedule yet, and the examples read an operation on the person's
        # loop tasks: a question that speaks of reminders without asking for one ("what reminders
        # have I set up with you?"), or one reminder pointed at ("拿药那个提醒接着响吧")
        return loop_operation_read_as(reading.kind, content) or request
    if reading.family == "chat" and reading.sure() and not asks_to_be_reminded(msg["content"]):
        # no "remind me": a time said in passing asks for nothing, nor do reminders told of ("my nan
        # just discovered reminder apps and now she sets one for everything")
        return None
    # "remind me to …" is a new reminder nearly always: only a reading that is all but certain
    # overrules it ("remind me what reminders I have lol"), or a sure one when the message names a
    # loop task the person already has ("send me the bins reminder now")
    if reading.family == "loop_op" and (reading.sure(CERTAIN) or reading.sure() and names_one()):
        return loop_operation_read_as(reading.kind, msg["content"]) or request
    return None if reading.family in _NOT_NEW_LOOPS and reading.sure(CERTAIN) else request
