"""One reading of a message, made once at the front desk and carried to every later step.

``read(text, situation)`` is the one place the person's words are matched, outside the value
parsers (times, numbers, addresses, keys): the front desk's rules (a memory command, "continue",
thanks, help, a yes or a no, an operation on a task, loop-task words, a time alone, a statement
about the person), the capability the words name outright, the values spotted in them, the
language, and what the message resembles among the labelled examples (semantic.py). The
:class:`Reading` carries it all with the evidence that decided, and travels in ``agent_task``
and ``analyze`` messages (``to_dict``/``from_dict``, ``common.messages.MessageReading``):
ConversationManager decides with it, TaskCoordinator, its loop reader and PlanDesk take the
language, the loop words and the task operation from it, TaskExecutionService whether a chat
message asks about the person, and IntentRouter the examples' part.

The examples' part costs an embedding, so it is not read where a front-desk rule already decides
on its own (``rule``) or the words name a capability outright (nothing to weigh). A message that
arrives without a reading (sent straight to the AgentActor) is read by the same rules where it
is taken (``carried``), without the examples.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import Any, Callable

from capabilities.arguments import numbers_in
from capabilities.cognition import cues, semantic, world
from capabilities.cognition.rule_tables import table
from capabilities.context import answers
from capabilities.loop.parse import parse_schedule
from capabilities.loop.requests import looks_like_loop_request, only_a_time
from capabilities.loop.schedule import ScheduleError
from capabilities.routing.task_operations import TaskOperation, read_operation, task_ids
from common.i18n import language_of

# the rules that decide a message on their own at the front desk, in the order it applies them
# (an open clarification's pick comes between a memory command and "continue")
MEMORY, CONTINUE, CONVERSATION, HELP = "memory", "continue", "conversation_only", "help"
DECIDING = (MEMORY, CONTINUE, CONVERSATION, HELP)

_LOOP_ID = table("loop_requests")["loop_id"]
_APPROVE = {"yes", "y", "approve", "approved", "ok", "okay", "go", "go ahead", "do it", "同意", "批准", "是", "好", "可以", "确认"}
# yes, and never ask again for this tool (per tenant and user)
_ALWAYS = {"always", "always allow", "always allow it", "always yes", "yes always", "yes, always", "allow always",
           "总是允许", "始终允许", "一直允许", "永远允许", "以后都允许", "总是同意", "总是"}
_REJECT = {"no", "n", "reject", "deny", "stop", "cancel", "don't", "不", "不要", "拒绝", "取消", "否"}


@dataclass(frozen=True)
class Situation:
    """What the person's situation tells the reading: whether a question of theirs waits (a paused
    task: the message may answer it), whether they have tasks and loop tasks to operate on, the
    conversation's recent turns (a follow-up is read with the message it continues) and the
    installed capabilities (``capabilities``: a TaskRouter; None: none read). The persona is
    chosen after the reading, by its own rules (personas.py), so it is no part of it."""

    waiting: bool = False
    has_tasks: bool | Callable[[], bool] = True  # or how to find out: asked only when the examples are read
    has_loops: bool | Callable[[], bool] = True
    history: tuple[dict, ...] = ()
    capabilities: Any = None

    def impossible(self) -> list[str]:
        """The families of readings this situation rules out."""
        return [family for family, ruled_out in (("answer", not self.waiting), ("task_op", not _known(self.has_tasks)),
                                                  ("loop_op", not _known(self.has_loops))) if ruled_out]


def _known(fact: bool | Callable[[], bool]) -> bool:
    return fact() if callable(fact) else fact


@dataclass(frozen=True)
class Values:
    """The values spotted in a message by the value parsers: addresses, times (the loop parser's
    description of each), task and loop-task ids, numbers."""

    urls: tuple[str, ...] = ()
    times: tuple[str, ...] = ()
    task_ids: tuple[str, ...] = ()
    loop_ids: tuple[str, ...] = ()
    numbers: tuple[float, ...] = ()

    def to_dict(self) -> dict:
        return {name: list(value) for name, value in self.__dict__.items() if value}

    @classmethod
    def from_dict(cls, data: Any) -> "Values":
        data = data if isinstance(data, dict) else {}
        return cls(**{name: tuple(data.get(name) or ()) for name in cls.__dataclass_fields__})


@dataclass(frozen=True)
class Evidence:
    """What decided a part of the reading: a rule (its name), the labelled examples (the family
    and kind, with the share) or the capability named outright."""

    source: str  # "rule" | "examples" | "capability"
    name: str
    score: float | None = None

    def to_dict(self) -> dict:
        return {"source": self.source, "name": self.name, **({"score": self.score} if self.score is not None else {})}


@dataclass(frozen=True)
class Reading:
    """The one reading of a message. ``text``: the words as read (simplified, corrected);
    ``read_as``: what the examples read (a follow-up is read as the message it continues);
    ``rule``: the front-desk rule that decides it on its own (:data:`DECIDING`), if any;
    ``examples``: what it resembles among the labelled examples (None: not read)."""

    text: str
    read_as: str
    language: str
    rule: str | None = None
    memory: tuple[str, str] | None = None  # (op, what): list, clear, forget
    capability: str | None = None  # named outright
    command: str | None = None  # a command it gives ("clear_history")
    verdict: bool | None = None  # a bare yes (True) or no (False)
    always: bool = False  # "always allow": yes, and never ask again
    task_operation: TaskOperation | None = None  # an operation on a task, by the rules
    loop_words: bool = False  # asks for or about a loop task
    only_a_time: bool = False  # a time and nothing to do ("明天早上9点吧")
    asks_for_something: bool = False  # a request's words, rather than a value given
    new_request: bool = False  # a question or a request
    asks: bool = False  # asks something, anywhere in it
    needs_the_world: bool = False  # what only the person's records or the live world answer
    states_about_self: bool = False  # a plain statement about the person
    names_own_records: bool = False  # ...that names one of their records ("我的银行卡被冻结了")
    asks_about_self: bool = False  # a question only what they told Flora answers
    values: Values = field(default_factory=Values)
    examples: semantic.Reading | None = None
    evidence: tuple[Evidence, ...] = ()

    @property
    def family(self) -> str | None:
        return self.examples.family if self.examples is not None else None

    @property
    def kind(self) -> str | None:
        return self.examples.kind if self.examples is not None else None

    @property
    def confidence(self) -> float:
        """1 where a rule decided; else the examples' share (0 when they were not read)."""
        if self.rule is not None:
            return 1.0
        return self.examples.share if self.examples is not None else 0.0

    def to_dict(self) -> dict:
        """The examples' part at the top (``family``, ``kind``, ``share``, ``nearest``: what
        ``semantic.Reading.from_dict`` takes), the rest beside it."""
        flags = ("always", "loop_words", "only_a_time", "asks_for_something", "new_request", "asks",
                 "needs_the_world", "states_about_self", "names_own_records", "asks_about_self")
        out: dict = {**(self.examples.to_dict() if self.examples is not None else {}),
                     "text": self.text, "read_as": self.read_as, "language": self.language,
                     "values": self.values.to_dict(), "evidence": [e.to_dict() for e in self.evidence]}
        out.update({name: getattr(self, name) for name in ("rule", "capability", "command", "verdict")
                    if getattr(self, name) is not None})
        out.update({name: True for name in flags if getattr(self, name)})
        if self.memory is not None:
            out["memory"] = list(self.memory)
        if self.task_operation is not None:
            out["task_operation"] = self.task_operation.__dict__.copy()
        return out

    @classmethod
    def from_dict(cls, data: Any) -> "Reading | None":
        """A reading carried in a message; None for none, or for one that carries only the
        examples' part."""
        if not isinstance(data, dict) or not isinstance(data.get("text"), str) or "language" not in data:
            return None
        operation = data.get("task_operation")
        return cls(
            text=data["text"], read_as=str(data.get("read_as", data["text"])), language=str(data["language"]),
            rule=data.get("rule"), memory=tuple(data["memory"]) if data.get("memory") else None,
            capability=data.get("capability"), command=data.get("command"), verdict=data.get("verdict"),
            always=bool(data.get("always")),
            task_operation=TaskOperation(**operation) if isinstance(operation, dict) else None,
            loop_words=bool(data.get("loop_words")), only_a_time=bool(data.get("only_a_time")),
            asks_for_something=bool(data.get("asks_for_something")), new_request=bool(data.get("new_request")),
            asks=bool(data.get("asks")), needs_the_world=bool(data.get("needs_the_world")),
            states_about_self=bool(data.get("states_about_self")),
            names_own_records=bool(data.get("names_own_records")), asks_about_self=bool(data.get("asks_about_self")),
            values=Values.from_dict(data.get("values")), examples=semantic.Reading.from_dict(data),
            evidence=tuple(Evidence(e["source"], e["name"], e.get("score")) for e in data.get("evidence") or ()))


def read(text: str, situation: Situation = Situation(), reader=None) -> Reading:
    """The reading of ``text`` (already simplified and corrected) in ``situation``; ``reader``:
    the SemanticReader whose labelled examples weigh it (None: not weighed)."""
    evidence: list[Evidence] = []
    memory = cues.memory_command(text)
    operation = read_operation(text)
    if memory is not None and memory[0] == "forget" and operation is not None:
        memory = None  # "forget the dify one, cancel it": an operation on a task, not on memories
    rule = _deciding_rule(text, memory)
    if rule is not None:
        evidence.append(Evidence("rule", rule))
    if operation is not None:
        evidence.append(Evidence("rule", f"task_operations.{operation.kind}"))
    # while a question waits, "how about 3pm?" may be its answer: read as it is
    read_as = text if situation.waiting else in_context(text, situation.history)
    named = situation.capabilities.named(read_as) if situation.capabilities is not None else None
    if named is not None:
        evidence.append(Evidence("capability", named.name))
    examples = None
    if reader is not None and rule is None and named is None:
        examples = reader.read(read_as, impossible=situation.impossible())
        if examples is not None:
            evidence.append(Evidence("examples", f"{examples.family}/{examples.kind}", round(examples.share, 3)))
    about_self = cues.states_about_self(text)
    parse = _parsed_once()
    return Reading(
        text=text, read_as=read_as, language=language_of(text), rule=rule, memory=memory,
        capability=named.name if named is not None else None, command=cues.command(text),
        verdict=_verdict(text), always=_key(text) in _ALWAYS, task_operation=operation,
        loop_words=looks_like_loop_request(text, parse), only_a_time=only_a_time(text, parse),
        asks_for_something=answers.sounds_like_request(text), new_request=cues.reads_as_new_request(text),
        asks=cues.asks(text), needs_the_world=world.needs_the_world(text),
        states_about_self=about_self, names_own_records=about_self and world.names_own_records(text),
        asks_about_self=cues.asks_about_self(text), values=values_in(text, parse), examples=examples,
        evidence=tuple(evidence))


def carried(msg: dict) -> Reading:
    """The reading a message carries; for one that came without it, read here by the rules,
    with whatever examples' reading it carries."""
    whole = Reading.from_dict(msg.get("reading"))
    if whole is not None:
        return whole
    return replace(read(msg.get("content", "")), examples=semantic.Reading.from_dict(msg.get("reading")))


def in_context(text: str, history) -> str:
    """What the labelled examples read for a message: the message itself, or for a follow-up
    that says only what changes ("and tomorrow?", "what about Tesla?", "上海呢？") the person's
    message it continues — it asks the same of something else, so it is read as that message
    is ("那明天呢？" after a question about the news is about the news, not whatever a bare
    "那明天呢？" resembles most). Follow-ups in a row go back to the message they all continue;
    with none before it, a follow-up is read as it is."""
    if not cues.follows_up(text):
        return text
    for turn in reversed(list(history)):
        said = str(turn.get("content", "")).strip() if turn.get("role") == "user" else ""
        if said and not cues.follows_up(said):
            return said
    return text


def _parsed_once() -> Callable[[str], Any]:
    """A schedule reader that reads each text once (the loop words, "only a time" and the values
    all ask for the message's schedule), at one ``now``; a ScheduleError is kept and raised again."""
    now, seen = datetime.now(UTC), {}

    def parse(text: str):
        if text not in seen:
            try:
                seen[text] = parse_schedule(text, now=now, timezone="UTC")
            except ScheduleError as exc:
                seen[text] = exc
        if isinstance(seen[text], ScheduleError):
            raise seen[text]
        return seen[text]

    return parse


def values_in(text: str, parse: Callable[[str], Any] | None = None) -> Values:
    """The values the value parsers find in ``text`` (``parse``: the schedule reader to use)."""
    try:
        parsed = (parse or _parsed_once())(text)
    except ScheduleError:
        parsed = None
    addresses, tasks, loops = answers.urls(text), task_ids(text), _LOOP_ID.findall(text)
    rest = text
    for value in (*addresses, *tasks, *loops):  # "task_3f2a" holds no number 2
        rest = rest.replace(value, " ")
    return Values(urls=tuple(addresses), times=(parsed.description,) if parsed is not None else (),
                  task_ids=tuple(tasks), loop_ids=tuple(loops), numbers=tuple(numbers_in(rest)))


def _deciding_rule(text: str, memory) -> str | None:
    if memory is not None:  # "what do you remember about me?", "忘掉我住在上海"
        return MEMORY
    if answers.is_continue(text):
        return CONTINUE
    if cues.conversation_only(text):
        return CONVERSATION
    if answers.is_help(text):
        return HELP
    return None


def _key(text: str) -> str:
    return text.strip().strip(".!。！").lower()


def _verdict(text: str) -> bool | None:
    key = _key(text)
    if key in _APPROVE or key in _ALWAYS:
        return True
    if key in _REJECT:
        return False
    return None
