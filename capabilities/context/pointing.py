"""What a message points at among the person's own work: one of their tasks or loop tasks.

While a task waits for an answer, what the person says next may answer it, or may be about
their other work ("pause the weekly sales report task", "重新执行上一个任务"). ``point`` reads
the second: the operation and the task or loop task it acts on, from the readers Flora already
has, in this order:

1. the loop reader, where the words name loop tasks ("pause my standup reminder");
2. the task-operation reader ("re-run the last task", "取消它", "comment on task_…: …");
3. an operation word of the loop reader's table said of a loop task the person has, named by
   the words of what it does ("run the sales report task now", "销售周报改成每周五下午5点"), or
   an operation word of the task-operation reader's said of a task named by its words or its
   address ("https://example.com/report.json 再请求一次");
4. the reading by examples (``semantic.Reading``), leaning towards an operation on a task or
   on a loop task the words name.

The task an operation acts on is the one its id names, or among the person's tasks the latest
named by the words of what it did ("the report.json one"), or the latest of all; a comment, a
revision or a re-run wants a task that has run, so a task still waiting for an answer is not
"the last one" for them. Nothing here decides whether the message answers the waiting
question instead: ``ConversationManager`` weighs both.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterable

from capabilities.cognition.reading import Reading as MessageReading
from capabilities.cognition.semantic import LEANS, Reading
from capabilities.context.answers import urls
from capabilities.context.naming import content_words
from capabilities.loop.requests import LoopOperation, named_operation, read_loop_request
from capabilities.loop.requests import operation_read_as as loop_operation_read_as
from capabilities.routing.task_operations import LAST, TaskOperation, operation_read_as, said_operation
from common.tasks.models import PAUSED_STATES, UNFINISHED_STATES, TaskRecord

TASK, LOOP = "task", "loop"
NEEDS_A_RUN = ("comment_on_task", "revise_result", "re_run_task")  # what acts on a task that has run


@dataclass(frozen=True)
class Pointed:
    """An operation on the person's own work: ``on`` a task (``op``: comment_on_task,
    revise_result, re_run_task, cancel_task) or a loop task (list, pause, resume, delete,
    trigger, modify); ``target`` the task or loop task id ("" where none was found: the one who
    acts asks, or lists); ``text`` a comment or a revision's instruction; ``schedule_text`` and
    ``parameters`` what a loop task is to change to."""

    on: str
    op: str
    target: str = ""
    text: str = ""
    schedule_text: str = ""
    parameters: dict = field(default_factory=dict)

    def to_dict(self) -> dict:
        out: dict[str, Any] = {"on": self.on, "op": self.op}
        for name in ("target", "text", "schedule_text", "parameters"):
            if getattr(self, name):
                out[name] = getattr(self, name)
        return out

    @classmethod
    def from_dict(cls, data: Any) -> "Pointed | None":
        if not isinstance(data, dict) or data.get("on") not in (TASK, LOOP) or not isinstance(data.get("op"), str):
            return None
        return cls(data["on"], data["op"], str(data.get("target") or ""), str(data.get("text") or ""),
                   str(data.get("schedule_text") or ""), dict(data.get("parameters") or {}))

    def task_operation(self) -> TaskOperation:
        return TaskOperation(self.op, self.target or LAST, self.text)

    def loop_operation(self, fallback_text: str) -> LoopOperation:
        """As the loop scheduler takes it: the loop task found by its id when one was found."""
        return LoopOperation(self.op, self.target or fallback_text, self.schedule_text, self.parameters)


def point(message: MessageReading, *, tasks: list[TaskRecord], loops=None, tenant: str = "",
          user: str = "") -> Pointed | None:
    """The operation the message read as ``message`` asks for on one of the person's ``tasks``
    (newest first) or loop tasks (``loops``: the LoopService), or None."""
    text, reading = message.text, message.examples
    mine = loops.list(tenant, user) if loops is not None else []
    if mine and message.loop_words:  # the schedule, if any, read in Flora's timezone
        said = read_loop_request(text, loops.parse)
        if isinstance(said, LoopOperation):
            return _on_loop(said, text, loops, tenant, user)
    operation = weighed(message.task_operation, reading, text) if tasks else None
    if operation is not None:
        return _on_task(operation, text, tasks)
    named = _names_loop(text, mine)
    if named:
        said = named_operation(text)
        if said is not None:
            return _on_loop(said, text, loops, tenant, user)
    names_task = bool(_named_tasks(text, tasks))
    if names_task:
        operation = said_operation(text)
        if operation is not None:
            return _on_task(operation, text, tasks)
    if reading is None or not reading.sure(LEANS):
        return None
    if reading.family == "task_op" and tasks:  # leaning so is enough where the words name one of the tasks
        operation = operation_read_as(reading.kind, text, needs_word=not (reading.sure() or names_task))
        return _on_task(operation, text, tasks) if operation is not None else None
    if reading.family == "loop_op" and mine and (named or reading.sure() and len(mine) == 1):
        said = loop_operation_read_as(reading.kind, text)
        return _on_loop(said, text, loops, tenant, user) if said is not None else None
    return None


def weighed(operation: TaskOperation | None, reading: Reading | None, text: str) -> TaskOperation | None:
    """The rules' operation held against the reading by examples: a re-run whose other clauses
    say what should have been different ("the numbers were in dollars, they should be in euros,
    run it again") reads surely as a revision, and is one, told the whole message; a reason
    around a re-run ("the server was down, run it again") reads as the re-run it is."""
    if operation is not None and operation.kind == "re_run_task" and not operation.text and reading is not None \
            and reading.family == "task_op" and reading.kind == "revise" and reading.sure():
        return TaskOperation("revise_result", operation.task_ref, text.strip())
    return operation


def _on_loop(said: LoopOperation, text: str, loops, tenant: str, user: str) -> Pointed:
    target = ""
    if said.op != "list":
        try:
            target = loops.find(tenant, user, _without_addresses(text)).loop_task_id
        except ValueError:  # LoopRequestError: none or several fit, and the scheduler says which it has
            target = ""
    return Pointed(LOOP, said.op, target, schedule_text=said.schedule_text, parameters=dict(said.parameters))


def _on_task(operation: TaskOperation, text: str, tasks: list[TaskRecord]) -> Pointed | None:
    target = operation.task_ref if operation.task_ref != LAST else target_of(operation.kind, text, tasks)
    return Pointed(TASK, operation.kind, target or "", operation.text)


def target_of(kind: str, text: str, tasks: Iterable[TaskRecord]) -> str | None:
    """The task "it", "the last one" or "the report one" means for an operation of ``kind``: a
    cancel wants one unfinished, a comment, revision or re-run one that has run (not one waiting
    for an answer); among those the newest that the words of ``text`` name, else the newest."""
    pool = [t for t in tasks if not t.meta.get("parent")]
    if kind == "cancel_task":
        pool = [t for t in pool if t.state in UNFINISHED_STATES] or pool
    elif kind in NEEDS_A_RUN:
        pool = [t for t in pool if t.state not in PAUSED_STATES] or pool
    chosen = _named_tasks(text, pool) or pool
    return chosen[0].task_id if chosen else None


def _named_tasks(text: str, tasks: Iterable[TaskRecord]) -> list[TaskRecord]:
    """The tasks the message names by the words of what they did, or by an address they used."""
    words = content_words(_without_addresses(text))
    said = set(urls(text))
    return [t for t in tasks if words & content_words(t.content)
            or said & ({str(v) for v in t.parameters.values() if isinstance(v, str)} | set(urls(t.content)))]


def _names_loop(text: str, loops: list) -> bool:
    words = content_words(_without_addresses(text))
    return bool(words) and any(words & content_words(t.content) for t in loops)


def _without_addresses(text: str) -> str:
    """The words of ``text`` that may name a task: an address is what a request is for, and
    every address of a site shares its scheme and host with the others."""
    for address in urls(text):
        text = text.replace(address, " ")
    return text
