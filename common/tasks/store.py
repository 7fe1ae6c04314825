"""TaskStore: where tasks, drafts, the event history, users' notifications, clients' sessions and tasks' whiteboards live, so no task state lives only
in an actor's memory. Every read and write is scoped by tenant.

Backends: :class:`~common.tasks.sqlite_store.SQLiteTaskStore` (embedded default, one file
shared by every actor process on the machine) and :class:`~common.tasks.redis_store.RedisTaskStore`
(one Redis shared by several machines). ``open_store(config)`` picks by config.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Iterable

from common.tasks.models import (
    ChannelDelivery, ChannelMessage, ChannelState, Draft, Event, Notification, PendingEvent, Session, Standing,
    TaskRecord, WhiteboardEntry, WorkItem,
)


class TaskStore(ABC):
    # -- tasks ---------------------------------------------------------------------
    def create_task(self, task: TaskRecord) -> TaskRecord:
        return self.create_recorded(task, None)[0]

    @abstractmethod
    def create_recorded(self, task: TaskRecord, event: PendingEvent | None) -> tuple[TaskRecord, Event | None]:
        """Insert a task and, in the same transaction, its event."""

    @abstractmethod
    def get_task(self, tenant_id: str, task_id: str) -> TaskRecord | None: ...

    def transition(self, tenant_id: str, task_id: str, state: str, *,
                   expect: Iterable[str] | None = None, unchanged_since: float | None = None,
                   **changes) -> TaskRecord:
        """Move a task to ``state`` and apply ``changes`` atomically.

        Raises TaskNotFound, or InvalidTransition when the life cycle forbids the move or
        the task is not in one of the ``expect``-ed states (two nodes resuming the same
        task: one wins, the other is told). With ``unchanged_since`` (the ``updated_at`` of
        the record the caller decided on) the move happens only if the task was not written
        since, else TaskChanged."""
        return self.transition_recorded(tenant_id, task_id, state, None, expect=expect,
                                        unchanged_since=unchanged_since, **changes)[0]

    @abstractmethod
    def transition_recorded(self, tenant_id: str, task_id: str, state: str, event: PendingEvent | None, *,
                            expect: Iterable[str] | None = None, unchanged_since: float | None = None,
                            **changes) -> tuple[TaskRecord, Event | None]:
        """``transition`` plus the event, written in the same transaction."""

    @abstractmethod
    def update_task(self, tenant_id: str, task_id: str, **changes) -> TaskRecord:
        """Change fields other than ``state`` (parameters gathered so far, capability...)."""

    @abstractmethod
    def list_tasks(self, tenant_id: str, *, user_id: str | None = None,
                   states: Iterable[str] | None = None, limit: int = 100) -> list[TaskRecord]:
        """Newest first."""

    def paused_tasks(self, tenant_id: str, user_id: str) -> list[TaskRecord]:
        from common.tasks.models import PAUSED_STATES
        return self.list_tasks(tenant_id, user_id=user_id, states=PAUSED_STATES)

    @abstractmethod
    def count_by_state(self, tenant_id: str | None = None) -> dict[str, int]: ...

    @abstractmethod
    def tenants(self) -> list[str]:
        """The tenants that have tasks, sorted (for operators' counts)."""

    @abstractmethod
    def unfinished_tasks(self, states: Iterable[str], *, updated_before: float, limit: int = 10_000) -> list[TaskRecord]:
        """Tasks of every tenant in ``states`` last changed before ``updated_before``, oldest
        first: what a restarted node looks through for work its previous life left behind."""

    # -- drafts --------------------------------------------------------------------
    @abstractmethod
    def save_draft(self, draft: Draft) -> Draft: ...

    @abstractmethod
    def open_draft(self, tenant_id: str, user_id: str) -> Draft | None:
        """The user's newest open draft."""

    @abstractmethod
    def close_draft(self, tenant_id: str, draft_id: str) -> None: ...

    # -- events --------------------------------------------------------------------
    @abstractmethod
    def append_event(self, *, event_type: str, task_id: str, tenant_id: str, user_id: str,
                     source: str, data: dict) -> Event: ...

    @abstractmethod
    def events(self, tenant_id: str, *, task_id: str | None = None, user_id: str | None = None,
               event_type: str | None = None, since_id: int = 0, limit: int = 1000) -> list[Event]:
        """Oldest first, after ``since_id``."""

    @abstractmethod
    def last_event_id(self) -> int:
        """The newest event's id (any tenant), 0 when there is none: where a live stream starts."""

    # -- notifications ----------------------------------------------------------
    @abstractmethod
    def add_notification(self, notification: Notification) -> Notification: ...

    @abstractmethod
    def notifications(self, tenant_id: str, user_id: str, *, unread_only: bool = True,
                      limit: int = 100) -> list[Notification]:
        """Oldest first."""

    @abstractmethod
    def mark_notifications_read(self, tenant_id: str, user_id: str, notification_ids: list[str]) -> int:
        """Only the user's own are touched; returns how many changed."""

    # -- sessions (conversations kept for HTTP clients) -------------------------
    @abstractmethod
    def save_session(self, session: Session) -> Session:
        """Insert or replace a whole session, its messages included."""

    @abstractmethod
    def get_session(self, tenant_id: str, session_id: str) -> Session | None:
        """The whole session, every message in order (what a client reads back, not a turn's path)."""

    @abstractmethod
    def list_sessions(self, tenant_id: str, user_id: str, *, limit: int = 100) -> list[Session]:
        """Most recently updated first, each with all its messages."""

    @abstractmethod
    def standing(self, tenant_id: str, user_id: str, session_id: str, limit: int) -> Standing:
        """What a message of ``user_id`` in ``session_id`` finds (:class:`Standing`: the session's
        owner and its last ``limit`` messages, oldest first; whether the person has an open draft
        or a paused task), in one read. Read on every message a person sends, so its cost does not
        grow with the conversation (``limit`` 0: no messages)."""

    @abstractmethod
    def append_to_session(self, tenant_id: str, session_id: str, messages: list[dict], *,
                          title: str | None = None, user_id: str | None = None) -> None:
        """Add messages at the end, stamp ``updated_at`` and take ``title`` if the session has none
        (atomically: two appends never lose one). A session that does not exist is made then,
        ``user_id``'s, in the same step; without ``user_id`` that raises SessionNotFound. Called
        for every turn, so it neither reads nor rewrites the messages already kept, and returns
        nothing."""

    @abstractmethod
    def delete_session(self, tenant_id: str, session_id: str) -> bool:
        """Remove the session and its messages; False when there was none."""

    # -- pending work (done off the reply path, kept across restarts) ------------
    @abstractmethod
    def add_work(self, item: WorkItem) -> bool:
        """Keep ``item`` until it is finished; False (and nothing changes) when an item with its
        tenant, kind and key is already kept."""

    @abstractmethod
    def pending_work(self, kind: str, *, limit: int = 100) -> list[WorkItem]:
        """The kept items of ``kind``, every tenant's, oldest first."""

    @abstractmethod
    def retry_work(self, tenant_id: str, kind: str, key: str) -> int:
        """Count one failed attempt at an item; returns its attempts so far (0: no such item)."""

    @abstractmethod
    def finish_work(self, tenant_id: str, kind: str, key: str) -> bool: ...

    # -- whiteboards (a task's shared state) -----------------------------------------
    @abstractmethod
    def put_whiteboard_entry(self, entry: WhiteboardEntry) -> tuple[WhiteboardEntry, bool]:
        """Write one line atomically; an existing line (same board and entry id) keeps its
        creation time and author. Returns the line as stored and whether it was new."""

    @abstractmethod
    def whiteboard(self, tenant_id: str, board_id: str) -> list[WhiteboardEntry]:
        """The board's lines, oldest first (empty for a board nobody wrote on)."""

    @abstractmethod
    def remove_whiteboard_entry(self, tenant_id: str, board_id: str, entry_id: str) -> bool: ...
    # -- chat channels (capabilities/channels) --------------------------------------
    @abstractmethod
    def record_channel_message(self, message: ChannelMessage) -> bool:
        """Keep an inbound channel message; False (and nothing changes) when one with its tenant,
        channel and ``message_key`` is kept already (a redelivery)."""

    @abstractmethod
    def get_channel_message(self, tenant_id: str, channel: str, message_key: str) -> ChannelMessage | None: ...

    @abstractmethod
    def update_channel_message(self, tenant_id: str, channel: str, message_key: str, state: str, *,
                               reply: dict | None = None) -> bool:
        """Move a kept message to ``state`` (with the ``reply`` when given); False when there is none."""

    @abstractmethod
    def open_channel_messages(self, tenant_id: str, channel: str, *, limit: int = 1000) -> list[ChannelMessage]:
        """The channel's messages not answered or refused yet, oldest first: what a restart picks up."""

    @abstractmethod
    def record_channel_delivery(self, delivery: ChannelDelivery) -> ChannelDelivery:
        """Insert or replace the record of one outbound send."""

    @abstractmethod
    def channel_deliveries(self, tenant_id: str, channel: str, *, ref: str | None = None,
                           limit: int = 1000) -> list[ChannelDelivery]:
        """Outbound sends of the channel (those answering ``ref`` only, when given), oldest first."""

    @abstractmethod
    def pending_channel_deliveries(self, tenant_id: str, channel: str, *,
                                   limit: int = 1000) -> list[ChannelDelivery]:
        """The channel's outbox entries still ``pending``, oldest first: what a restart sends."""

    @abstractmethod
    def count_channel_deliveries(self, tenant_id: str, channel: str) -> dict[str, int]:
        """The channel's outbox entries by state (``pending``, ``failed``, ``delivered``)."""

    @abstractmethod
    def put_channel_state(self, state: ChannelState) -> None:
        """Keep how a channel fares now (one entry per channel name, whichever node wrote it)."""

    @abstractmethod
    def channel_states(self) -> dict[str, ChannelState]:
        """Every channel's last recorded state, by channel name."""

    # -- tools a person always allows (no approval asked) ---------------------------
    @abstractmethod
    def allow_tool(self, tenant_id: str, user_id: str, tool: str) -> None:
        """Remember that this person always allows ``tool`` (idempotent)."""

    @abstractmethod
    def allowed_tools(self, tenant_id: str, user_id: str) -> set[str]:
        """The tools this person always allows."""

    def close(self) -> None:
        """Release connections."""


def open_store(config) -> TaskStore:
    """The store the configuration asks for: ``store.backend`` sqlite (``sqlite_path``) or
    redis (``redis.url``, keys under ``loops.redis_prefix`` like the loop registry's)."""
    if config.store.backend == "sqlite":
        from common.tasks.sqlite_store import SQLiteTaskStore
        return SQLiteTaskStore(config.sqlite_path)
    if config.store.backend == "redis":
        from common.tasks.redis_store import RedisTaskStore
        return RedisTaskStore(config.redis.url, prefix=config.loops.redis_prefix)
    raise ValueError(f"store.backend {config.store.backend!r} is not supported")
