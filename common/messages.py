"""The message protocol: every message Flora's actors, the CLI and the HTTP API exchange.

Each message is a plain dict with a ``message_type`` discriminator. For every type this
module holds a ``TypedDict`` (the single source of truth for its fields), a keyword-only
constructor, and a branch of :func:`validate`, which checks required fields and types from
the TypedDict itself and raises :class:`ProtocolError` naming the field.

Values are JSON only, so a message can be pickled between processes or sent over RabbitMQ.
The one exception is ``reply_to``: a Thespian address, used inside the actor system only.
A received message is never mutated: under simpleSystemBase it is the sender's own object.

Replies to ``user_input`` (the reply contract, see docs/protocol.md) are one of
``task_completed | task_paused | task_queued | chat_reply | clarification | task_error``.
"""


import functools
import json
import types
import uuid
from typing import Any, Literal, NotRequired, TypedDict, Union, get_args, get_origin, get_type_hints

from common import spans
from common.i18n import language_of, say

TaskState = Literal[
    "created", "queued", "planned", "running", "waiting_parameters", "waiting_approval",
    "completed", "failed", "cancelled",
]
ErrorType = Literal[
    "malformed_message", "unknown_message_type", "invalid_parameter", "not_found", "forbidden",
    "conflict", "cancelled", "unknown_capability", "capability_failed", "timeout", "unavailable", "internal",
    "poison_message", "too_large",
]
ERROR_TYPES = frozenset(get_args(ErrorType))
PauseKind = Literal["waiting_parameters", "waiting_approval"]


class ProtocolError(ValueError):
    """A message is not valid; ``field`` names the offending field (or None)."""

    def __init__(self, message: str, *, field: str | None = None, error_type: str = "malformed_message"):
        super().__init__(message)
        self.field = field
        self.error_type = error_type


@functools.cache
def _hints(cls: type) -> dict[str, Any]:
    return get_type_hints(cls)


def new_id(prefix: str) -> str:
    return f"{prefix}_{uuid.uuid4().hex[:16]}"


# --------------------------------------------------------------------------- shapes
class MissingParameter(TypedDict):
    """A parameter the user is asked for: its name, what it is for, its JSON schema,
    and why it is asked again when a given value was refused (``reason_in``: that reason in
    other languages, ``{"zh": …}``, as ``x-flora-description`` is for the description)."""

    name: str
    description: str
    schema: dict
    reason: NotRequired[str]
    reason_in: NotRequired[dict]


class Option(TypedDict):
    """One choice offered in a clarification: ``id`` is what the user may answer."""

    id: str
    label: str
    task_id: NotRequired[str]
    capability: NotRequired[str]
    operation: NotRequired["PointedOperation"]  # an operation on other work, as ``agent_task.operation``


class PointedOperation(TypedDict):
    """An operation on one of the person's own tasks or loop tasks, read at the front desk
    (capabilities/context/pointing.py): ``on`` ``task`` (``op``: comment_on_task, revise_result,
    re_run_task, cancel_task) or ``loop`` (list, pause, resume, delete, trigger, modify);
    ``target`` the task or loop task id when it was found; ``text`` a comment or an instruction;
    ``schedule_text`` and ``parameters`` what a loop task changes to."""

    on: Literal["task", "loop"]
    op: str
    target: NotRequired[str]
    text: NotRequired[str]
    schedule_text: NotRequired[str]
    parameters: NotRequired[dict]


class Persona(TypedDict):
    """The persona chosen for a message (docs/personas.md): its system prompt for chat
    replies, how it was chosen (``rule``, ``auto``, ``template``, ``default``), and what it may
    use (``capabilities``; absent: everything)."""

    name: str
    prompt: str
    how: Literal["rule", "auto", "template", "default"]
    capabilities: NotRequired[list[str]]
    model: NotRequired[str]
    rule: NotRequired[str]  # which rule chose it: "<persona>.rules[<i>]"
    specialty: NotRequired[str]  # a specialist composed from the template


class ReadingEvidence(TypedDict):
    """What decided a part of a message's reading: a ``rule`` (its name), the labelled
    ``examples`` (``family/kind``, with the share as ``score``) or the ``capability`` named."""

    source: Literal["rule", "examples", "capability"]
    name: str
    score: NotRequired[float]


class MessageReading(TypedDict):
    """A message's one reading, made at the front desk (capabilities/cognition/reading.py) and
    carried to every later step. What it resembles among labelled examples of how people talk
    (capabilities/cognition/semantic.py), where they were read: the ``family`` of readings (chat,
    task, plan, loop, task_op, loop_op, status, command, unsupported, clarify, answer, memory), the
    ``kind`` within it, the family's ``share`` of the nearest examples' vote (0-1) and the
    ``nearest`` one's cosine. What the rules read: the ``text`` as read, ``read_as`` (what the
    examples read: a follow-up is read as the message it continues), its ``language``, the
    front-desk ``rule`` that decided it on its own, a ``memory`` command ([op, what]), the
    ``capability`` named outright, a ``command``, a yes or a no (``verdict``, ``always``), an
    operation on a task (``task_operation``: kind, task_ref, text), the flags (``loop_words``,
    ``only_a_time``, ``asks_for_something``, ``new_request``, ``asks``, ``needs_the_world``,
    ``states_about_self``, ``names_own_records``, ``asks_about_self``: absent for false), the
    ``values`` spotted
    (urls, times, task_ids, loop_ids, numbers) and the ``evidence``."""

    family: NotRequired[str]
    kind: NotRequired[str]
    share: NotRequired[float]
    nearest: NotRequired[float]
    text: NotRequired[str]
    read_as: NotRequired[str]
    language: NotRequired[str]
    rule: NotRequired[str]
    memory: NotRequired[list[str]]
    capability: NotRequired[str]
    command: NotRequired[str]
    verdict: NotRequired[bool]
    always: NotRequired[bool]
    task_operation: NotRequired[dict]
    loop_words: NotRequired[bool]
    only_a_time: NotRequired[bool]
    asks_for_something: NotRequired[bool]
    new_request: NotRequired[bool]
    asks: NotRequired[bool]
    needs_the_world: NotRequired[bool]
    states_about_self: NotRequired[bool]
    names_own_records: NotRequired[bool]
    asks_about_self: NotRequired[bool]
    values: NotRequired[dict]
    evidence: NotRequired[list[ReadingEvidence]]


# --------------------------------------------------------------------------- user side
class UserInput(TypedDict):
    """Person/program → InteractionActor. ``content`` is free text; a structured answer to a
    paused task may instead give ``task_id`` with ``parameters`` (or ``approve``)."""

    message_type: Literal["user_input"]
    user_id: str
    content: str
    msg_id: NotRequired[str]
    tenant_id: NotRequired[str]
    task_id: NotRequired[str]
    parameters: NotRequired[dict]
    approve: NotRequired[bool]
    always_allow: NotRequired[bool]  # with approve: never ask again for this tool (per tenant and user)
    channel: NotRequired[str]
    session_id: NotRequired[str]  # the conversation this message belongs to (default: one per user and channel)
    # said in a group chat (``<channel>:<chat id>``): what is remembered and recalled is the
    # group's, not the sender's (the task, its approvals and the conversation stay the sender's)
    group: NotRequired[str]
    stream: NotRequired[bool]  # send the reply's text as reply_chunk messages while it is written, then the reply


class TaskCompleted(TypedDict):
    """Reply to the user (and AgentActor → InteractionActor): the task finished."""

    message_type: Literal["task_completed"]
    msg_id: str
    task_id: str
    message: str
    result: Any
    capability: NotRequired[str]
    persona: NotRequired[str]  # the persona that answered (docs/personas.md)


class TaskPaused(TypedDict):
    """Reply to the user (ExecutionActor → AgentActor → InteractionActor → user): the task
    waits for the listed parameters or for an approval."""

    message_type: Literal["task_paused"]
    msg_id: str
    task_id: str
    message: str
    missing_parameters: list[MissingParameter]
    pause_kind: PauseKind
    capability: NotRequired[str]
    persona: NotRequired[str]  # the persona that answered (docs/personas.md)
    tool_call: NotRequired[dict]  # waiting_approval of one tool call (the agent's): {call_id, tool, arguments}


class TaskQueued(TypedDict):
    """Reply to the user (AgentActor → InteractionActor → user): the task is accepted but waits
    for a free slot under the concurrency limits. It starts by itself, oldest first; its result
    comes as a notification. ``position`` is 1 for the next to start; ``scope`` is the limit
    that is full (``user``, ``capability`` or ``tenant``)."""

    message_type: Literal["task_queued"]
    msg_id: str
    task_id: str
    message: str
    position: int
    scope: NotRequired[str]
    limit: NotRequired[int]
    capability: NotRequired[str]
    persona: NotRequired[str]  # the persona that answered (docs/personas.md)


class ChatReply(TypedDict):
    """Reply to the user: no task involved. ``intent`` says what Flora understood: ``chat``
    (conversation), ``status`` (about Flora's work for this person, read from the store),
    ``command`` (a system command), ``unsupported`` (nothing installed can do it);
    ``timing`` has ``understand_ms`` when the message had to be understood by the model."""

    message_type: Literal["chat_reply"]
    msg_id: str
    message: str
    intent: NotRequired[str]
    timing: NotRequired[dict]
    persona: NotRequired[str]  # the persona that answered (docs/personas.md)


class Clarification(TypedDict):
    """Reply to the user: Flora needs a choice before it can go on."""

    message_type: Literal["clarification"]
    msg_id: str
    message: str
    options: list[Option]
    intent: NotRequired[str]
    persona: NotRequired[str]  # the persona that answered (docs/personas.md)


class TaskError(TypedDict):
    """Reply to the user, or between actors: something went wrong, said for a person."""

    message_type: Literal["task_error"]
    msg_id: str
    error_type: ErrorType
    message: str
    retryable: bool
    task_id: NotRequired[str]
    field: NotRequired[str]
    persona: NotRequired[str]  # the persona that answered (docs/personas.md)


# --------------------------------------------------------------------------- backend
class AgentTask(TypedDict):
    """InteractionActor → AgentActor: a new task to understand, route and run.
    ``capability``/``parameters`` are set when the user already chose (clarification)."""

    message_type: Literal["agent_task"]
    task_id: str
    msg_id: str
    tenant_id: str
    user_id: str
    content: str
    intent: NotRequired[str]
    capability: NotRequired[str]
    parameters: NotRequired[dict]
    channel: NotRequired[str]
    reply_to: NotRequired[Any]
    history: NotRequired[list]  # the conversation's recent turns, {role, content}, oldest first
    memories: NotRequired[list]  # what Flora remembers of the person that bears on it, {memory_id, fact}
    pending_task_id: NotRequired[str]  # a paused task this message may be answering
    stream: NotRequired[bool]
    persona: NotRequired[Persona]  # the persona chosen for the message
    pick_persona: NotRequired[bool]  # no rule chose one: the understanding step picks it (personas.auto)
    reading: NotRequired[MessageReading]  # what the message resembles, read once at the front desk
    operation: NotRequired[PointedOperation]  # an operation on other work the front desk read in it


class ResumeTask(TypedDict):
    """InteractionActor → AgentActor: the user answered; the new values are already
    recorded in the store with the task."""

    message_type: Literal["resume_task"]
    task_id: str
    msg_id: str
    tenant_id: str
    user_id: str
    reply_to: NotRequired[Any]


class Analyze(TypedDict):
    """AgentActor → ExecutionActor: classify the intent and pick a capability (an LLM call,
    so it runs where blocking holds up nobody). For chat the worker also writes the reply.
    ``capability`` is set when the user already chose one."""

    message_type: Literal["analyze"]
    task_id: str
    tenant_id: str
    user_id: str
    content: str
    intent: NotRequired[str]
    capability: NotRequired[str]
    instruction: NotRequired[str]  # a revision's added instruction, for the planner
    history: NotRequired[list]
    memories: NotRequired[list]
    pending_task_id: NotRequired[str]
    stream: NotRequired[bool]
    persona: NotRequired[Persona]  # as on agent_task
    pick_persona: NotRequired[bool]
    reading: NotRequired[MessageReading]  # as on agent_task


class ReplyChunk(TypedDict):
    """A piece of a reply while it is being written, for a ``user_input`` sent with ``stream``:
    ExecutionActor → AgentActor (by ``task_id``) → InteractionActor (with ``msg_id``) → whoever
    asked. ``text`` follows the pieces before it (``seq`` counts from 0); the whole reply still
    comes afterwards as the usual reply message, which ends the stream."""

    message_type: Literal["reply_chunk"]
    task_id: str
    text: str
    seq: int
    msg_id: NotRequired[str]


class AnalysisResult(TypedDict):
    """ExecutionActor → AgentActor: what the request means. ``plan`` (a Plan as JSON, with
    ``capability`` "plan") when the request takes several steps; ``message`` the reply already
    written for chat, status, command, unsupported and clarify; for ``answer``, the message
    answered the paused task ``answered_task_id``, whose values are recorded (or, with
    ``missing``, refused and asked again)."""

    message_type: Literal["analysis_result"]
    task_id: str
    intent: Literal["task", "query", "chat", "system", "clarify", "status", "command", "unsupported", "answer"]
    capability: NotRequired[str]
    parameters: NotRequired[dict]
    options: NotRequired[list[Option]]
    message: NotRequired[str]
    plan: NotRequired[dict]
    timing: NotRequired[dict]
    answered_task_id: NotRequired[str]
    missing: NotRequired[list[MissingParameter]]
    persona: NotRequired[Persona]  # the persona the understanding step picked (pick_persona)


class Execute(TypedDict):
    """AgentActor → ExecutionActor: run a capability for a task."""

    message_type: Literal["execute"]
    task_id: str
    tenant_id: str
    user_id: str
    capability: str
    parameters: dict
    # the task as its sender last wrote or read it (TaskRecord.to_dict()): the worker decides on
    # it without reading the task again, and starts it only if nobody wrote the task since
    task: NotRequired[dict]


class ResumeExecution(TypedDict):
    """AgentActor → ExecutionActor: continue a paused task from the store."""

    message_type: Literal["resume_execution"]
    task_id: str
    tenant_id: str
    user_id: str


class SubtaskResult(TypedDict):
    """ExecutionActor → AgentActor: a capability ran; ``ok`` false carries the error."""

    message_type: Literal["subtask_result"]
    task_id: str
    tenant_id: str
    capability: str
    ok: bool
    result: NotRequired[Any]
    error_type: NotRequired[ErrorType]
    error: NotRequired[str]
    retryable: NotRequired[bool]
    message: NotRequired[str]


# --------------------------------------------------------------------------- plans
class RunPlan(TypedDict):
    """AgentActor → TaskGroupAggregatorActor: run the plan recorded with task ``task_id``
    (``meta.plan``), or, with ``resume``, continue it after the user answered its paused
    step. Answered with ``plan_result`` or a ``task_paused`` for the plan's task."""

    message_type: Literal["run_plan"]
    task_id: str
    tenant_id: str
    user_id: str
    resume: NotRequired[bool]


class PlanResult(TypedDict):
    """TaskGroupAggregatorActor → AgentActor: a plan's task ended (the group already
    recorded its state); ``result`` holds the aggregate and the plan, or ``ok`` false the
    error. The AgentActor turns it into the user's reply."""

    message_type: Literal["plan_result"]
    task_id: str
    tenant_id: str
    ok: bool
    result: NotRequired[Any]
    message: NotRequired[str]
    error_type: NotRequired[ErrorType]
    error: NotRequired[str]
    retryable: NotRequired[bool]


class AggregatePlan(TypedDict):
    """TaskGroupAggregatorActor → ResultAggregatorActor: every step of the plan of task
    ``task_id`` has ended; combine the results of its leaf and workflow steps by the plan's
    ``aggregation``. ``results`` and ``errors`` are keyed by step id, ``children`` maps a step id
    to its task id. Answered with ``plan_aggregated``."""

    message_type: Literal["aggregate_plan"]
    task_id: str
    tenant_id: str
    plan: dict
    results: dict
    errors: dict
    children: dict
    min_ok: NotRequired[int]


class PlanAggregated(TypedDict):
    """ResultAggregatorActor → TaskGroupAggregatorActor: the combined result of a plan
    (``result``: value, strategy, detail, failed, plan, steps; ``message``: the summary for the
    user), or ``ok`` false with why the results could not be combined."""

    message_type: Literal["plan_aggregated"]
    task_id: str
    tenant_id: str
    ok: bool
    result: NotRequired[Any]
    message: NotRequired[str]
    error_type: NotRequired[ErrorType]
    error: NotRequired[str]


# --------------------------------------------------------------------------- loop tasks
LoopOp = Literal["list", "trigger", "pause", "resume", "delete", "modify"]


class LoopCommand(TypedDict):
    """AgentActor → LoopSchedulerActor: a user's operation on their loop tasks, read from
    plain words. ``reference`` is the user's text (a loop id or words of the task's content);
    ``schedule_text``/``parameters`` are what ``modify`` changes. Answered like any
    ``user_input``: ``task_completed`` or ``task_error``."""

    message_type: Literal["loop_command"]
    msg_id: str
    tenant_id: str
    user_id: str
    op: LoopOp
    reference: NotRequired[str]
    loop_task_id: NotRequired[str]
    schedule_text: NotRequired[str]
    parameters: NotRequired[dict]
    language: NotRequired[str]  # of the person's words: the reply's language (zh, en)
    reply_to: NotRequired[Any]


class LoopFire(TypedDict):
    """Trigger intake (the RabbitMQ bridge) → LoopSchedulerActor: a run is recorded (its
    task exists, state created); hand it to the tenant's AgentActor."""

    message_type: Literal["loop_fire"]
    tenant_id: str
    user_id: str
    loop_task_id: str
    run_key: str
    task_id: str


class RunTask(TypedDict):
    """LoopSchedulerActor → AgentActor: run this recorded task (a loop run) now. The reply
    (``task_completed``/``task_paused``/``task_error``, by ``msg_id``) goes to the sender."""

    message_type: Literal["run_task"]
    task_id: str
    msg_id: str
    tenant_id: str
    user_id: str


class Notification(TypedDict):
    """LoopSchedulerActor → InteractionActor → subscribed clients: something Flora tells a
    user unasked (a loop run's result). Also kept in the store until fetched."""

    message_type: Literal["notification"]
    notification_id: str
    tenant_id: str
    user_id: str
    message: str
    kind: str
    task_id: NotRequired[str]
    loop_task_id: NotRequired[str]
    channel: NotRequired[str]
    data: NotRequired[dict]


class Subscribe(TypedDict):
    """Client → InteractionActor: push this user's notifications to the sender from now on
    (answered with ``notifications_reply`` holding those not read yet)."""

    message_type: Literal["subscribe"]
    user_id: str
    tenant_id: NotRequired[str]


class NotificationsRequest(TypedDict):
    """Client → InteractionActor: this user's notifications (unread only unless ``all``);
    ``mark_read`` (default true) marks the returned ones read."""

    message_type: Literal["notifications_request"]
    user_id: str
    tenant_id: NotRequired[str]
    all: NotRequired[bool]
    mark_read: NotRequired[bool]


class NotificationsReply(TypedDict):
    """InteractionActor → client: notifications, oldest first."""

    message_type: Literal["notifications_reply"]
    user_id: str
    notifications: list[dict]


# --------------------------------------------------------------------------- memory
class MemoryRequest(TypedDict):
    """InteractionActor (for a user, the HTTP API, before new work) → MemoryActor: ``op`` is
    ``recall`` (the memories bearing on ``query``, for a prompt: those above the embedding
    model's floor), ``search`` (the memories nearest ``query``, best first, whatever they
    score: a person looking through what is remembered), ``list``, ``forget`` (one
    ``memory_id``, or those matching ``query``), ``clear`` (all of the person's), or ``wake``
    (distil the conversation turns waiting in the store). Always one person's: tenant and user."""

    message_type: Literal["memory_request"]
    op: Literal["recall", "search", "list", "forget", "clear", "wake"]
    tenant_id: str
    user_id: str
    request_id: NotRequired[str]
    query: NotRequired[str]
    memory_id: NotRequired[str]
    limit: NotRequired[int]


class MemoryReply(TypedDict):
    """MemoryActor → asker: the memories (``{memory_id, fact, kind, subject, ...}``), how many
    were removed, or ``error`` (memory is off or degraded: the asker goes on without it)."""

    message_type: Literal["memory_reply"]
    op: str
    request_id: NotRequired[str]
    memories: NotRequired[list]
    removed: NotRequired[int]
    error: NotRequired[str]


# --------------------------------------------------------------------------- chat channels
class ChannelUpdate(TypedDict):
    """HTTP API → ChannelActor: a chat service called the channel's webhook. ``body`` is the
    request body as received (its signature covers those bytes), ``headers`` the request's
    headers with lowercase names. Answered with ``channel_ack``, once what came in is recorded."""

    message_type: Literal["channel_update"]
    channel: str
    body: str
    headers: dict
    method: NotRequired[str]  # GET for a service's verification handshake; POST when absent
    query: NotRequired[dict]  # the call's query parameters (a handshake's challenge, a signature)


class ChannelAck(TypedDict):
    """ChannelActor → HTTP API: what the webhook answers the chat service: ``status`` (200;
    401 for a bad secret or signature; 400 for a body that is no update) and the JSON ``body``
    (a challenge, an interaction response, or ``{}``); a str body is answered as plain text
    (the echoed challenge of a GET handshake)."""

    message_type: Literal["channel_ack"]
    channel: str
    status: int
    body: dict | str


# --------------------------------------------------------------------------- wiring
class Configure(TypedDict):
    """main/parent → any actor: the configuration (as JSON) and the addresses to talk to."""

    message_type: Literal["configure"]
    config: dict
    router: NotRequired[Any]
    agent: NotRequired[Any]
    scheduler: NotRequired[Any]
    interaction: NotRequired[Any]
    memory: NotRequired[Any]  # the node's MemoryActor, when long-term memory is on
    role: NotRequired[str]
    channel: NotRequired[str]  # a ChannelActor's channel: its name under ``channels`` in the config
    channels: NotRequired[dict]  # InteractionActor: channel name -> its ChannelActor (notifications go there)


class Configured(TypedDict):
    """Actor → whoever configured it: ready."""

    message_type: Literal["configured"]
    role: str
    node: NotRequired[str]  # the node the actor runs on (where Thespian placed it)


class RouteRequest(TypedDict):
    """InteractionActor → RouterActor: which AgentActor serves this tenant on this node?"""

    message_type: Literal["route_request"]
    tenant_id: str
    node: NotRequired[str]
    watch: NotRequired[bool]  # also send a route_reply whenever that AgentActor is replaced


class RouteReply(TypedDict):
    """RouterActor → asker: the AgentActor's address."""

    message_type: Literal["route_reply"]
    tenant_id: str
    node: str
    agent: Any


class Heartbeat(TypedDict):
    """RouterActor → AgentActor (and back, as ``heartbeat_ack``): still alive?"""

    message_type: Literal["heartbeat"]
    seq: int
    nodes: NotRequired[list[str]]  # the nodes alive in the node registry now (their entries not expired)


class HeartbeatAck(TypedDict):
    """AgentActor → RouterActor: alive; answers the heartbeat with the same ``seq``."""

    message_type: Literal["heartbeat_ack"]
    seq: int
    role: str


class AgentChildren(TypedDict):
    """AgentActor → RouterActor: the actors it created (ExecutionActors, the task group), sent
    whenever they change, so that the RouterActor ends them if the AgentActor dies."""

    message_type: Literal["agent_children"]
    children: list[Any]  # actor addresses


class StatusRequest(TypedDict):
    """Anyone → RouterActor / AgentActor: live counts, for operators."""

    message_type: Literal["status_request"]


class StatusReply(TypedDict):
    """RouterActor / AgentActor → asker: counts (tasks by state, agents, workers)."""

    message_type: Literal["status_reply"]
    status: dict


MESSAGE_TYPES: dict[str, type] = {
    get_args(_hints(cls)["message_type"])[0]: cls
    for cls in (UserInput, TaskCompleted, TaskPaused, TaskQueued, ChatReply, Clarification, TaskError,
                AgentTask, ResumeTask, Analyze, ReplyChunk, AnalysisResult, Execute, ResumeExecution,
                SubtaskResult, RunPlan, PlanResult, AggregatePlan, PlanAggregated, LoopCommand, LoopFire, RunTask, Notification, Subscribe,
                NotificationsRequest, NotificationsReply, MemoryRequest, MemoryReply, Configure, Configured, RouteRequest,
                RouteReply, Heartbeat, HeartbeatAck, AgentChildren, StatusRequest, StatusReply,
                ChannelUpdate, ChannelAck)
}
REPLY_TYPES = frozenset({"task_completed", "task_paused", "task_queued", "chat_reply", "clarification",
                         "task_error"})


def preview(value: Any, limit: int = 500) -> str:
    """A result as short text for a reply's ``message`` (JSON unless it is text already)."""
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= limit else text[:limit] + "…"


def reply_text(reply: dict) -> str:
    """A reply contract as plain text for a person (the CLI, an OpenAI-compatible chat); a
    persona other than Flora's own voice is shown as a tag in front (``[coder] ...``)."""
    kind = reply.get("message_type")
    text = reply.get("message", "")
    persona = reply.get("persona")
    if isinstance(persona, str) and persona and persona != "flora":
        text = f"[{persona}] {text}"
    if kind == "task_error":
        return f"[error: {reply.get('error_type')}] {text}"
    if kind in ("task_paused", "task_queued"):  # the hint in the language the reply speaks
        hint = "waiting_hint" if kind == "task_paused" else "queued_hint"
        return f"{text}\n{say(language_of(text), hint, task_id=reply.get('task_id'))}"
    return text


# --------------------------------------------------------------------------- validation
def validate(msg: Any) -> dict:
    """Return ``msg`` if it is a well-formed message, else raise :class:`ProtocolError`."""
    if not isinstance(msg, dict):
        raise ProtocolError(f"a message must be a JSON object (dict), not {type(msg).__name__}")
    kind = msg.get("message_type")
    if not isinstance(kind, str) or not kind:
        raise ProtocolError("the message has no 'message_type'", field="message_type")
    cls = MESSAGE_TYPES.get(kind)
    if cls is None:
        raise ProtocolError(
            f"unknown message_type {kind[:80]!r}{'…' if len(kind) > 80 else ''}; "
            f"expected one of: {', '.join(sorted(MESSAGE_TYPES))}",
            field="message_type", error_type="unknown_message_type",
        )
    with spans.span("protocol"):
        _check_fields(cls, msg, prefix="")
    content = msg.get("content")
    if kind in _BOUNDED_CONTENT and isinstance(content, str) and len(content) > MAX_CONTENT_CHARS:
        raise ProtocolError(f"'content' is {len(content):,} characters; a message may hold at most "
                            f"{MAX_CONTENT_CHARS:,} (send a long document as a file or in parts)",
                            field="content", error_type="too_large")
    return msg


# what a person writes in one message; the HTTP API refuses longer bodies the same way
MAX_CONTENT_CHARS = 100_000
_BOUNDED_CONTENT = frozenset({"user_input", "agent_task", "resume_task", "loop_command"})


def _check_fields(cls: type, msg: dict, prefix: str) -> None:
    hints = _hints(cls)
    for name in cls.__required_keys__:  # type: ignore[attr-defined]
        if name not in msg:
            raise ProtocolError(f"missing required field '{prefix}{name}'", field=prefix + name)
    for name, value in msg.items():
        if name not in hints:
            continue  # tolerate extra fields from newer senders
        if not _matches(value, hints[name]):
            raise ProtocolError(
                f"field '{prefix}{name}' must be {_describe(hints[name])}, got {type(value).__name__}",
                field=prefix + name,
            )
        if name in ("user_id", "task_id", "msg_id", "tenant_id", "capability") and value == "":
            raise ProtocolError(f"field '{prefix}{name}' must not be empty", field=prefix + name)


def _matches(value: Any, hint: Any) -> bool:
    origin = get_origin(hint)
    if hint is Any:
        return True
    if origin is NotRequired:
        return _matches(value, get_args(hint)[0])
    if origin is Literal:
        return value in get_args(hint)
    if origin in (Union, types.UnionType):
        return any(_matches(value, arg) for arg in get_args(hint))
    if origin is list:
        (item,) = get_args(hint) or (Any,)
        return isinstance(value, list) and all(_matches(v, item) for v in value)
    if isinstance(hint, type) and issubclass(hint, dict) and hasattr(hint, "__required_keys__"):
        if not isinstance(value, dict):
            return False
        try:
            _check_fields(hint, value, prefix="")
        except ProtocolError:
            return False
        return True
    if hint is bool:
        return isinstance(value, bool)
    if hint is int:
        return isinstance(value, int) and not isinstance(value, bool)
    if hint is float:
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if isinstance(hint, type):
        return isinstance(value, hint)
    return True


def _describe(hint: Any) -> str:
    origin = get_origin(hint)
    if origin is Literal:
        return "one of " + ", ".join(repr(a) for a in get_args(hint))
    if origin is list:
        (item,) = get_args(hint) or (Any,)
        return "a list" if item is Any else f"a list of {_describe(item)}"
    if isinstance(hint, type) and issubclass(hint, dict) and hasattr(hint, "__required_keys__"):
        return "objects with " + ", ".join(f"'{k}'" for k in sorted(hint.__required_keys__))
    if hint is dict:
        return "an object"
    return {str: "a string", int: "an integer", float: "a number", bool: "true or false"}.get(hint, str(hint))


def _build(cls: type, **fields: Any) -> dict:
    msg = {"message_type": get_args(_hints(cls)["message_type"])[0]}
    # None means "not given" for optional fields only: a required ``result`` may be None.
    required = cls.__required_keys__  # type: ignore[attr-defined]
    msg.update({k: v for k, v in fields.items() if v is not None or k in required})
    _check_fields(cls, msg, prefix="")
    return msg


# --------------------------------------------------------------------------- constructors
def user_input(*, user_id: str, content: str, msg_id: str | None = None, tenant_id: str | None = None,
               task_id: str | None = None, parameters: dict | None = None, approve: bool | None = None,
               channel: str | None = None, session_id: str | None = None, stream: bool | None = None,
               always_allow: bool | None = None, group: str | None = None) -> UserInput:
    return _build(UserInput, user_id=user_id, content=content, msg_id=msg_id or new_id("msg"),
                  tenant_id=tenant_id, task_id=task_id, parameters=parameters, approve=approve,
                  always_allow=always_allow,
                  channel=channel, session_id=session_id, stream=stream, group=group)  # type: ignore[return-value]


def task_completed(*, msg_id: str, task_id: str, message: str, result: Any,
                   capability: str | None = None, persona: str | None = None) -> TaskCompleted:
    return _build(TaskCompleted, **locals())  # type: ignore[return-value]


def task_paused(*, msg_id: str, task_id: str, message: str, missing_parameters: list[MissingParameter],
                pause_kind: str = "waiting_parameters", capability: str | None = None,
                persona: str | None = None, tool_call: dict | None = None) -> TaskPaused:
    return _build(TaskPaused, **locals())  # type: ignore[return-value]


def task_queued(*, msg_id: str, task_id: str, message: str, position: int, scope: str | None = None,
                limit: int | None = None, capability: str | None = None, persona: str | None = None) -> TaskQueued:
    return _build(TaskQueued, **locals())  # type: ignore[return-value]


def chat_reply(*, msg_id: str, message: str, intent: str | None = None, timing: dict | None = None,
               persona: str | None = None) -> ChatReply:
    return _build(ChatReply, **locals())  # type: ignore[return-value]


def clarification(*, msg_id: str, message: str, options: list[Option], intent: str | None = None,
                  persona: str | None = None) -> Clarification:
    return _build(Clarification, **locals())  # type: ignore[return-value]


def task_error(*, msg_id: str, error_type: str, message: str, retryable: bool = False,
               task_id: str | None = None, field: str | None = None, persona: str | None = None) -> TaskError:
    return _build(TaskError, **locals())  # type: ignore[return-value]


def agent_task(*, task_id: str, msg_id: str, tenant_id: str, user_id: str, content: str,
               intent: str | None = None, capability: str | None = None, parameters: dict | None = None,
               channel: str | None = None, reply_to: Any = None, history: list | None = None,
               memories: list | None = None, pending_task_id: str | None = None,
               stream: bool | None = None, persona: dict | None = None, pick_persona: bool | None = None,
               reading: dict | None = None, operation: dict | None = None) -> AgentTask:
    return _build(AgentTask, **locals())  # type: ignore[return-value]


def resume_task(*, task_id: str, msg_id: str, tenant_id: str, user_id: str, reply_to: Any = None) -> ResumeTask:
    return _build(ResumeTask, **locals())  # type: ignore[return-value]


def analyze(*, task_id: str, tenant_id: str, user_id: str, content: str, intent: str | None = None,
            capability: str | None = None, instruction: str | None = None, history: list | None = None,
            memories: list | None = None, pending_task_id: str | None = None,
            stream: bool | None = None, persona: dict | None = None, pick_persona: bool | None = None,
            reading: dict | None = None) -> Analyze:
    return _build(Analyze, **locals())  # type: ignore[return-value]


def memory_request(*, op: str, tenant_id: str, user_id: str, request_id: str | None = None,
                   query: str | None = None, memory_id: str | None = None, limit: int | None = None) -> MemoryRequest:
    return _build(MemoryRequest, **locals())  # type: ignore[return-value]


def memory_reply(*, op: str, request_id: str | None = None, memories: list | None = None,
                 removed: int | None = None, error: str | None = None) -> MemoryReply:
    return _build(MemoryReply, **locals())  # type: ignore[return-value]


def reply_chunk(*, task_id: str, text: str, seq: int, msg_id: str | None = None) -> ReplyChunk:
    return _build(ReplyChunk, **locals())  # type: ignore[return-value]


def analysis_result(*, task_id: str, intent: str, capability: str | None = None, parameters: dict | None = None,
                    options: list[Option] | None = None, message: str | None = None,
                    plan: dict | None = None, timing: dict | None = None, answered_task_id: str | None = None,
                    missing: list[MissingParameter] | None = None, persona: dict | None = None) -> AnalysisResult:
    return _build(AnalysisResult, **locals())  # type: ignore[return-value]


def execute(*, task_id: str, tenant_id: str, user_id: str, capability: str, parameters: dict,
            task: dict | None = None) -> Execute:
    return _build(Execute, **locals())  # type: ignore[return-value]


def resume_execution(*, task_id: str, tenant_id: str, user_id: str) -> ResumeExecution:
    return _build(ResumeExecution, **locals())  # type: ignore[return-value]


def subtask_result(*, task_id: str, tenant_id: str, capability: str, ok: bool, result: Any = None, error_type: str | None = None,
                   error: str | None = None, retryable: bool | None = None, message: str | None = None) -> SubtaskResult:
    return _build(SubtaskResult, **locals())  # type: ignore[return-value]


def run_plan(*, task_id: str, tenant_id: str, user_id: str, resume: bool | None = None) -> RunPlan:
    return _build(RunPlan, **locals())  # type: ignore[return-value]


def plan_result(*, task_id: str, tenant_id: str, ok: bool, result: Any = None, message: str | None = None,
                error_type: str | None = None, error: str | None = None,
                retryable: bool | None = None) -> PlanResult:
    return _build(PlanResult, **locals())  # type: ignore[return-value]


def aggregate_plan(*, task_id: str, tenant_id: str, plan: dict, results: dict, errors: dict, children: dict,
                   min_ok: int | None = None) -> AggregatePlan:
    return _build(AggregatePlan, **locals())  # type: ignore[return-value]


def plan_aggregated(*, task_id: str, tenant_id: str, ok: bool, result: Any = None, message: str | None = None,
                    error_type: ErrorType | None = None, error: str | None = None) -> PlanAggregated:
    return _build(PlanAggregated, **locals())  # type: ignore[return-value]


def loop_command(*, msg_id: str, tenant_id: str, user_id: str, op: str, reference: str | None = None,
                 loop_task_id: str | None = None, schedule_text: str | None = None, parameters: dict | None = None,
                 reply_to: Any = None, language: str | None = None) -> LoopCommand:
    return _build(LoopCommand, **locals())  # type: ignore[return-value]


def loop_fire(*, tenant_id: str, user_id: str, loop_task_id: str, run_key: str, task_id: str) -> LoopFire:
    return _build(LoopFire, **locals())  # type: ignore[return-value]


def run_task(*, task_id: str, msg_id: str, tenant_id: str, user_id: str) -> RunTask:
    return _build(RunTask, **locals())  # type: ignore[return-value]


def notification(*, notification_id: str, tenant_id: str, user_id: str, message: str, kind: str,
                 task_id: str | None = None, loop_task_id: str | None = None, channel: str | None = None,
                 data: dict | None = None) -> Notification:
    return _build(Notification, **locals())  # type: ignore[return-value]


def subscribe(*, user_id: str, tenant_id: str | None = None) -> Subscribe:
    return _build(Subscribe, **locals())  # type: ignore[return-value]


def notifications_request(*, user_id: str, tenant_id: str | None = None, all: bool | None = None,
                          mark_read: bool | None = None) -> NotificationsRequest:
    return _build(NotificationsRequest, **locals())  # type: ignore[return-value]


def notifications_reply(*, user_id: str, notifications: list[dict]) -> NotificationsReply:
    return _build(NotificationsReply, **locals())  # type: ignore[return-value]


def channel_update(*, channel: str, body: str, headers: dict, method: str | None = None,
                   query: dict | None = None) -> ChannelUpdate:
    return _build(ChannelUpdate, **locals())  # type: ignore[return-value]


def channel_ack(*, channel: str, status: int, body: dict | str) -> ChannelAck:
    return _build(ChannelAck, **locals())  # type: ignore[return-value]


def configure(*, config: dict, router: Any = None, agent: Any = None, scheduler: Any = None,
              interaction: Any = None, memory: Any = None, role: str | None = None,
              channel: str | None = None, channels: dict | None = None) -> Configure:
    return _build(Configure, **locals())  # type: ignore[return-value]


def configured(*, role: str, node: str | None = None) -> Configured:
    return _build(Configured, **locals())  # type: ignore[return-value]


def route_request(*, tenant_id: str, node: str | None = None, watch: bool | None = None) -> RouteRequest:
    return _build(RouteRequest, **locals())  # type: ignore[return-value]


def route_reply(*, tenant_id: str, node: str, agent: Any) -> RouteReply:
    return _build(RouteReply, **locals())  # type: ignore[return-value]


def heartbeat(*, seq: int, nodes: list[str] | None = None) -> Heartbeat:
    return _build(Heartbeat, **locals())  # type: ignore[return-value]


def heartbeat_ack(*, seq: int, role: str) -> HeartbeatAck:
    return _build(HeartbeatAck, **locals())  # type: ignore[return-value]


def agent_children(*, children: list[Any]) -> AgentChildren:
    return _build(AgentChildren, **locals())  # type: ignore[return-value]


def status_request() -> StatusRequest:
    return _build(StatusRequest)  # type: ignore[return-value]


def status_reply(*, status: dict) -> StatusReply:
    return _build(StatusReply, **locals())  # type: ignore[return-value]


CONSTRUCTORS = {
    "user_input": user_input, "task_completed": task_completed, "task_paused": task_paused,
    "task_queued": task_queued,
    "chat_reply": chat_reply, "clarification": clarification, "task_error": task_error,
    "agent_task": agent_task, "resume_task": resume_task, "analyze": analyze, "reply_chunk": reply_chunk,
    "analysis_result": analysis_result, "execute": execute, "resume_execution": resume_execution,
    "subtask_result": subtask_result, "run_plan": run_plan, "plan_result": plan_result,
    "aggregate_plan": aggregate_plan, "plan_aggregated": plan_aggregated,
    "loop_command": loop_command, "loop_fire": loop_fire,
    "memory_request": memory_request, "memory_reply": memory_reply,
    "run_task": run_task, "notification": notification, "subscribe": subscribe,
    "notifications_request": notifications_request, "notifications_reply": notifications_reply,
    "configure": configure, "configured": configured,
    "route_request": route_request, "route_reply": route_reply, "heartbeat": heartbeat,
    "heartbeat_ack": heartbeat_ack, "agent_children": agent_children, "status_request": status_request, "status_reply": status_reply,
    "channel_update": channel_update, "channel_ack": channel_ack,
}
