"""Task records and their life cycle.

``created → planned → running → (waiting_parameters | waiting_approval) → running →
completed | failed | cancelled``. The allowed moves are listed once, here; the stores
refuse any other (a resumed task that is no longer paused, a completed task re-run).

``queued`` is a task waiting for a free slot under the concurrency limits
(``common.tasks.limits``): a new one (from ``created``), a resumed one (from a pause) or
one whose execution process died and waits to be retried (from ``running``). It leaves
only by starting, or by being failed or cancelled.
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass, field
from typing import Any

CREATED, PLANNED, RUNNING = "created", "planned", "running"
WAITING_PARAMETERS, WAITING_APPROVAL = "waiting_parameters", "waiting_approval"
COMPLETED, FAILED, CANCELLED = "completed", "failed", "cancelled"
QUEUED = "queued"

PAUSED_STATES = frozenset({WAITING_PARAMETERS, WAITING_APPROVAL})
FINAL_STATES = frozenset({COMPLETED, FAILED, CANCELLED})
UNFINISHED_STATES = frozenset({CREATED, QUEUED, PLANNED, RUNNING, WAITING_PARAMETERS, WAITING_APPROVAL})

TRANSITIONS: dict[str, frozenset[str]] = {
    CREATED: frozenset({PLANNED, QUEUED, RUNNING, WAITING_PARAMETERS, WAITING_APPROVAL, COMPLETED, FAILED,
                        CANCELLED}),
    QUEUED: frozenset({RUNNING, FAILED, CANCELLED}),
    PLANNED: frozenset({RUNNING, WAITING_PARAMETERS, WAITING_APPROVAL, FAILED, CANCELLED}),
    RUNNING: frozenset({QUEUED, WAITING_PARAMETERS, WAITING_APPROVAL, COMPLETED, FAILED, CANCELLED}),
    WAITING_PARAMETERS: frozenset({QUEUED, RUNNING, WAITING_PARAMETERS, WAITING_APPROVAL, FAILED, CANCELLED}),
    WAITING_APPROVAL: frozenset({QUEUED, RUNNING, WAITING_PARAMETERS, FAILED, CANCELLED}),
    COMPLETED: frozenset(),
    FAILED: frozenset(),
    CANCELLED: frozenset(),
}


class StoreError(Exception):
    """Base of the store's errors."""


class TaskNotFound(StoreError):
    def __init__(self, task_id: str):
        super().__init__(f"no task {task_id!r}")
        self.task_id = task_id


class InvalidTransition(StoreError):
    def __init__(self, task_id: str, current: str, wanted: str):
        super().__init__(f"task {task_id} is {current}; it cannot become {wanted}")
        self.task_id, self.current, self.wanted = task_id, current, wanted


class TaskChanged(StoreError):
    """The task was written again since the record a decision was taken on (``unchanged_since``):
    read it again and decide on what it is now."""

    def __init__(self, task_id: str, current: str, wanted: str):
        super().__init__(f"task {task_id} was written since it was read; it is {current}, not {wanted} yet")
        self.task_id, self.current, self.wanted = task_id, current, wanted


def can_move(current: str, wanted: str) -> bool:
    return wanted in TRANSITIONS.get(current, frozenset())


@dataclass
class TaskRecord:
    """One task as stored. ``parameters`` are the values gathered so far; ``missing`` the
    parameters the user was asked for (MissingParameter dicts) while paused."""

    task_id: str
    tenant_id: str
    user_id: str
    content: str
    state: str = CREATED
    msg_id: str = ""
    intent: str = ""
    capability: str = ""
    parameters: dict = field(default_factory=dict)
    missing: list = field(default_factory=list)
    result: Any = None
    error: str = ""
    approved: bool = False
    meta: dict = field(default_factory=dict)  # e.g. {"loop": ...} to register, {"run": ...} for a loop run
    created_at: float = field(default_factory=time.time)
    updated_at: float = field(default_factory=time.time)

    @property
    def paused(self) -> bool:
        return self.state in PAUSED_STATES

    def to_dict(self) -> dict:
        return asdict(self)


# What update_task / transition may change; ``state`` only through transition.
MUTABLE_FIELDS = frozenset(TaskRecord.__dataclass_fields__) - {"task_id", "tenant_id", "user_id", "created_at",
                                                                 "state"}


@dataclass
class Draft:
    """Conversation state that is not a task yet: a clarification waiting for the user's
    choice. ``pending_answer`` is the text that prompted it (re-applied once the user
    picks); ``options`` the choices offered."""

    draft_id: str
    tenant_id: str
    user_id: str
    kind: str  # "task_choice" | "capability_choice"
    content: str
    options: list = field(default_factory=list)
    pending_answer: str = ""
    open: bool = True
    created_at: float = field(default_factory=time.time)


@dataclass
class Notification:
    """Something Flora tells a user without being asked (a loop run's result, a reminder),
    kept until fetched. ``channel`` is where it came from, for pushing."""

    notification_id: str
    tenant_id: str
    user_id: str
    message: str
    kind: str = "loop_run"
    task_id: str = ""
    loop_task_id: str = ""
    channel: str = ""
    data: dict = field(default_factory=dict)
    read: bool = False
    created_at: float = field(default_factory=time.time)

    def to_dict(self) -> dict:
        return asdict(self)


def origin_channel(task: "TaskRecord") -> str:
    """The chat a task was asked in (``<channel>:<chat id>``, ``meta["channel"]``), "" when it
    came from elsewhere: where its later news (a queued task's result, an "interrupted"
    notice) is sent."""
    return str(task.meta.get("channel") or "")


@dataclass
class Session:
    """A conversation kept for a client (the browser's chat list): its messages in order,
    each ``{role, content, reply?, at}``."""

    session_id: str
    tenant_id: str
    user_id: str
    title: str = ""
    messages: list = field(default_factory=list)
    created_at: float = field(default_factory=time.time)
    updated_at: float = field(default_factory=time.time)

    def to_dict(self) -> dict:
        return asdict(self)

    def summary(self) -> dict:
        """Everything but the messages, and how many there are."""
        return {k: v for k, v in self.to_dict().items() if k != "messages"} | {"message_count": len(self.messages)}


@dataclass(frozen=True)
class Standing:
    """What a person's new message finds, read in one go: the conversation's owner (None: no
    such conversation yet) and its last messages, oldest first; and whether the person has an
    open draft or a paused task, so that the front desk reads those only when there are some."""

    owner: str | None
    messages: list
    open_draft: bool
    paused: bool


class SessionNotFound(StoreError):
    def __init__(self, session_id: str):
        super().__init__(f"no session {session_id!r}")
        self.session_id = session_id


@dataclass(frozen=True)
class PendingEvent:
    """A lifecycle event to record in the same transaction as a task change, so the
    history and the task's state can never disagree."""

    event_type: str
    source: str
    data: dict = field(default_factory=dict)


@dataclass
class Event:
    """A lifecycle event as kept in the history."""

    event_id: int
    event_type: str
    task_id: str
    tenant_id: str
    user_id: str
    source: str
    data: dict
    created_at: float


@dataclass
class WorkItem:
    """Work to do off the reply path that must survive a restart (distilling a conversation
    turn into memories): added where the work arises, done by whoever serves ``kind``, removed
    when done. ``key`` makes adding idempotent (the same turn twice is one item)."""

    tenant_id: str
    kind: str
    key: str
    payload: dict = field(default_factory=dict)
    created_at: float = field(default_factory=time.time)
    attempts: int = 0

    def to_dict(self) -> dict:
        return asdict(self)


WHITEBOARD_SECTIONS = ("fact", "todo", "decision", "note")


@dataclass
class WhiteboardEntry:
    """One line on a task's whiteboard: the shared state of a task or plan (facts found so far,
    a to-do list, decisions) that its steps, the expert panel and the model read and write.
    ``board_id`` is the task (a plan's own task for its steps); ``entry_id`` is derived from the
    section and text, so writing the same line twice, even from two processes, is one line."""

    tenant_id: str
    board_id: str
    entry_id: str
    section: str  # one of WHITEBOARD_SECTIONS
    text: str
    done: bool = False  # a to-do that was done
    author: str = ""  # the step or capability that wrote it
    created_at: float = field(default_factory=time.time)
    updated_at: float = field(default_factory=time.time)

    def to_dict(self) -> dict:
        return asdict(self)


CHANNEL_RECEIVED, CHANNEL_DISPATCHED, CHANNEL_REPLIED = "received", "dispatched", "replied"
CHANNEL_ANSWERED, CHANNEL_REFUSED = "answered", "refused"
CHANNEL_OPEN_STATES = frozenset({CHANNEL_RECEIVED, CHANNEL_DISPATCHED, CHANNEL_REPLIED})


@dataclass
class ChannelMessage:
    """A message that came in on a chat channel (capabilities/channels), recorded before the
    channel is told it arrived, keyed by the channel's own id for it (``message_key``): a
    redelivery finds it and is not handled twice. ``state`` is ``received`` (recorded),
    ``dispatched`` (handed to Flora), ``replied`` (the reply is in ``reply``, not sent yet),
    ``answered`` (sent) or ``refused`` (an unknown sender). The first three are open: a
    restart picks them up again."""

    tenant_id: str
    channel: str
    message_key: str
    payload: dict
    state: str = CHANNEL_RECEIVED
    reply: dict | None = None
    created_at: float = field(default_factory=time.time)
    updated_at: float = field(default_factory=time.time)

    def to_dict(self) -> dict:
        return asdict(self)


DELIVERY_PENDING, DELIVERED, DELIVERY_FAILED = "pending", "delivered", "failed"
DELIVERY_STATES = (DELIVERY_PENDING, DELIVERY_FAILED, DELIVERED)


@dataclass
class ChannelDelivery:
    """One outbound message on a chat channel: the channel's durable outbox entry. It is
    recorded ``pending`` with what to send (``payload``, an Outbound as a dict) before the
    first try, so a restart sends what a previous life could not; ``delivered`` once the
    service acknowledged every piece, ``failed`` when it refused it for good or ``attempts``
    ran out (``error`` says why). ``pieces_sent``: how many of its rendered pieces the service
    took already (a resend goes on from there); ``next_attempt_at``: when a pending one is due
    (backoff). ``ref`` is what it answers: an inbound ``message_key``, a notification id."""

    tenant_id: str
    channel: str
    delivery_id: str
    target: str
    kind: str
    state: str
    ref: str = ""
    attempts: int = 0
    error: str = ""
    created_at: float = field(default_factory=time.time)
    payload: dict = field(default_factory=dict)
    pieces_sent: int = 0
    next_attempt_at: float = 0.0
    updated_at: float = field(default_factory=time.time)

    def to_dict(self) -> dict:
        return asdict(self)


CHANNEL_RUNNING, CHANNEL_RETRYING, CHANNEL_STOPPED = "running", "retrying", "stopped"


@dataclass
class ChannelState:
    """How a chat channel fares, for operators (``--status``, ``/health``, ``/metrics``):
    ``state`` ``running``, ``retrying`` (its service fails and it backs off, or its actor
    is being started again) or ``stopped`` (``detail`` says why: bad credentials);
    ``node`` is the node that wrote it."""

    channel: str
    state: str
    detail: str = ""
    node: str = ""
    updated_at: float = field(default_factory=time.time)

    @property
    def label(self) -> str:
        return f"{self.state}: {self.detail}" if self.detail and self.state == CHANNEL_STOPPED else self.state

    def to_dict(self) -> dict:
        return asdict(self)
