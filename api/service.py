"""FloraService: what the HTTP routes do, as a plain class the routes only call.

Messages go to the InteractionActor and loop operations to the LoopSchedulerActor, through
the :class:`~api.gateway.ActorGateway`; reads (tasks, events, sessions, notifications) go
straight to the store, scoped by the caller's tenant. Ownership is checked here once: an
id from another tenant is "not found", exactly like one that does not exist; another
user's task of the same tenant is "forbidden".
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, replace
from typing import Any, AsyncIterator, Callable

from api.auth import Principal
from api.gateway import ActorGateway
from capabilities.loop.requests import looks_like_loop_request
from capabilities.memory.whiteboard import board_of, view as whiteboard_view
from common import messages as m
from common.accounts.linking import AccountLinks, LinkRefused
from common.tasks.cancel import cancel_task_tree
from common.tasks.limits import queue_position
from common.tasks.models import QUEUED, Event, InvalidTransition, Session, TaskRecord
from common.tasks.store import TaskStore
from events.event_bus import EventBus

SOURCE = "http_api"
TITLE_LENGTH = 60


class APIError(Exception):
    """An error to answer with ``status`` and ``{"error": {"type", "message", "field"?}}``."""

    def __init__(self, status: int, error_type: str, message: str, field: str | None = None):
        super().__init__(message)
        self.status, self.error_type, self.field = status, error_type, field

    def body(self) -> dict:
        error = {"type": self.error_type, "message": str(self)}
        if self.field:
            error["field"] = self.field
        return {"error": error}

    def as_reply(self, msg_id: str) -> dict:
        """The error as a reply contract, for a stream that has already begun."""
        return m.task_error(msg_id=msg_id, error_type="timeout" if self.status == 504 else "unavailable",
                            message=str(self), retryable=True)


@dataclass(frozen=True)
class Caller:
    """A request's tenant and user, resolved from its key and what it asked to act as."""

    tenant_id: str
    user_id: str


@dataclass(frozen=True)
class Message:
    """A user message as the API accepts it (already schema-checked)."""

    content: str = ""
    task_id: str | None = None
    parameters: dict | None = None
    approve: bool | None = None
    always_allow: bool | None = None
    session_id: str | None = None
    msg_id: str | None = None


class FloraService:
    def __init__(self, *, gateway: ActorGateway, store: TaskStore, interaction: Any, scheduler: Any, router: Any,
                 default_user: str, ask_timeout_s: float, poll_s: float = 0.1, links: AccountLinks | None = None):
        self.gateway = gateway
        self.store = store
        self.events = EventBus(store)
        self.interaction, self.scheduler, self.router = interaction, scheduler, router
        self.default_user = default_user
        self.links = links
        self.ask_timeout_s = ask_timeout_s
        self.poll_s = poll_s

    # -- who is asking --------------------------------------------------------------
    def caller(self, principal: Principal, requested_user: str | None) -> Caller:
        if principal.user_id is not None:
            if requested_user and requested_user != principal.user_id:
                raise APIError(403, "forbidden", f"this API key acts for user {principal.user_id!r} only",
                               field="user_id")
            return Caller(principal.tenant_id, principal.user_id)
        return Caller(principal.tenant_id, requested_user or self.default_user)

    # -- messages ---------------------------------------------------------------------
    async def send(self, caller: Caller, message: Message) -> dict:
        """One user message through the InteractionActor; the reply contract back."""
        return await self.answer(caller, message, await self.accept(caller, message))

    async def accept(self, caller: Caller, message: Message) -> dict:
        """The protocol message for ``message``; APIError (404, 403, 422) before anything reaches the actors."""
        return await asyncio.to_thread(self._user_input, caller, message)

    async def answer(self, caller: Caller, message: Message, msg: dict) -> dict:
        """Ask the InteractionActor ``msg`` (from :meth:`accept`); the InteractionActor keeps the
        turn in the conversation (the session, if one is named)."""
        return await self._ask(self.interaction, msg)

    async def answer_streaming(self, msg: dict, on_chunk: Callable[[dict], None]) -> dict:
        """Ask with ``stream``: the reply's pieces go to ``on_chunk`` while it is written."""
        try:
            return await self.gateway.ask_streaming(self.interaction, {**msg, "stream": True},
                                                    self.ask_timeout_s + 5, on_chunk)
        except TimeoutError as exc:
            raise APIError(504, "timeout", f"Flora did not answer in time: {exc}") from None

    async def stream(self, caller: Caller, message: Message, msg: dict) -> AsyncIterator[tuple[str, dict, int | None]]:
        """``(kind, data, id)``: the user's task events and the reply's pieces (``reply_chunk``)
        while ``msg`` is answered, then the reply."""
        since = await asyncio.to_thread(self.store.last_event_id)
        chunks: asyncio.Queue[dict] = asyncio.Queue()
        answer = asyncio.ensure_future(self.answer_streaming(msg, chunks.put_nowait))
        try:
            while True:
                done = answer.done()
                while not chunks.empty():
                    yield "reply_chunk", chunks.get_nowait(), None
                events = await asyncio.to_thread(self.store.events, caller.tenant_id, user_id=caller.user_id,
                                                 since_id=since, limit=500)
                for event in events:
                    since = event.event_id
                    yield "flora_event", event_view(event), event.event_id
                if done:
                    break
                waiter = asyncio.ensure_future(chunks.get())
                finished, _ = await asyncio.wait([answer, waiter], timeout=self.poll_s,
                                                 return_when=asyncio.FIRST_COMPLETED)
                if waiter in finished:
                    yield "reply_chunk", waiter.result(), None
                else:
                    waiter.cancel()
            reply = answer.result()
        except APIError as exc:
            reply = exc.as_reply(msg["msg_id"])
        finally:
            answer.cancel()
        yield "reply", reply, None

    def _user_input(self, caller: Caller, message: Message) -> dict:
        if message.session_id:
            self._session_for(caller, message.session_id)
        if not message.content.strip() and message.task_id is None:
            raise APIError(422, "invalid_request", "say something: 'content' is empty and no 'task_id' is answered",
                           field="content")
        if message.task_id is not None:
            self.task(caller, message.task_id)
        fields = {k: v for k, v in (("task_id", message.task_id), ("parameters", message.parameters),
                                    ("approve", message.approve), ("always_allow", message.always_allow),
                                    ("msg_id", message.msg_id),
                                    ("session_id", message.session_id)) if v is not None}
        return m.user_input(user_id=caller.user_id, tenant_id=caller.tenant_id, content=message.content,
                            channel="http", **fields)

    async def _ask(self, target: Any, msg: dict) -> dict:
        try:
            return await self.gateway.ask(target, msg, self.ask_timeout_s + 5)
        except TimeoutError as exc:
            raise APIError(504, "timeout", f"Flora did not answer in time: {exc}") from None

    # -- tasks --------------------------------------------------------------------------
    def task(self, caller: Caller, task_id: str) -> TaskRecord:
        task = self.store.get_task(caller.tenant_id, task_id)
        if task is None:
            raise APIError(404, "not_found", f"no task {task_id!r}")
        if task.user_id != caller.user_id:
            raise APIError(403, "forbidden", f"task {task_id} belongs to another user")
        return self._placed(task)

    def task_with_board(self, caller: Caller, task_id: str) -> tuple[TaskRecord, dict]:
        """The task and its whiteboard (its plan's, for a plan's step), as ``whiteboard.view``."""
        task = self.task(caller, task_id)
        return task, whiteboard_view(self.store.whiteboard(caller.tenant_id, board_of(task)))

    def tasks(self, caller: Caller, *, states: list[str] | None, limit: int) -> list[TaskRecord]:
        return [self._placed(t) for t in
                self.store.list_tasks(caller.tenant_id, user_id=caller.user_id, states=states, limit=limit)]

    def _placed(self, task: TaskRecord) -> TaskRecord:
        """A queued task with its place in line as it is now (``meta["queue"]["position"]``,
        which ``task_view`` shows as ``queue_position``); a copy, the store is not written."""
        if task.state != QUEUED:
            return task
        queue = {**(task.meta.get("queue") or {}), "position": queue_position(self.store, task)}
        return replace(task, meta={**task.meta, "queue": queue})

    def cancel(self, caller: Caller, task_id: str) -> TaskRecord:
        """Cancel an unfinished task, and each unfinished step of a plan task. A run in progress
        finds it cancelled when it ends, and its result is not reported as done."""
        self.task(caller, task_id)
        try:
            return cancel_task_tree(self.events, self.store, caller.tenant_id, task_id, source=SOURCE,
                                    by=caller.user_id).task
        except InvalidTransition as exc:  # it had finished
            raise APIError(409, "conflict", str(exc)) from None

    # -- events --------------------------------------------------------------------------
    def history(self, caller: Caller, *, task_id: str | None, since_id: int, limit: int) -> list[Event]:
        if task_id is not None:
            self.task(caller, task_id)
        return self.store.events(caller.tenant_id, task_id=task_id, user_id=caller.user_id, since_id=since_id,
                                 limit=limit)

    async def follow(self, caller: Caller, *, task_id: str | None, since_id: int | None,
                     keepalive_s: float = 15.0) -> AsyncIterator[Event | None]:
        """Events as they are recorded (None now and then: time for a keep-alive). Runs until
        the consumer stops iterating."""
        if task_id is not None:
            await asyncio.to_thread(self.task, caller, task_id)
        since = since_id if since_id is not None else await asyncio.to_thread(self.store.last_event_id)
        quiet_since = time.monotonic()
        while True:
            events = await asyncio.to_thread(self.store.events, caller.tenant_id, task_id=task_id,
                                             user_id=caller.user_id, since_id=since, limit=500)
            for event in events:
                since = event.event_id
                yield event
            if events:
                quiet_since = time.monotonic()
                continue
            if time.monotonic() - quiet_since >= keepalive_s:
                quiet_since = time.monotonic()
                yield None
            await asyncio.sleep(self.poll_s)

    def notifications(self, caller: Caller, *, all: bool, mark_read: bool) -> list[dict]:
        notes = self.store.notifications(caller.tenant_id, caller.user_id, unread_only=not all)
        if mark_read:
            self.store.mark_notifications_read(caller.tenant_id, caller.user_id,
                                               [n.notification_id for n in notes if not n.read])
        return [n.to_dict() for n in notes]

    # -- long-term memory --------------------------------------------------------------------
    async def memories(self, caller: Caller, op: str, *, memory_id: str | None = None,
                       query: str | None = None) -> dict:
        """One person's memories through the MemoryActor: ``list``, ``search`` (``query``),
        ``forget`` (``memory_id``) or ``clear``; a memory of someone else is not found."""
        reply = await self._ask(self.interaction, m.memory_request(
            op=op, tenant_id=caller.tenant_id, user_id=caller.user_id, memory_id=memory_id, query=query))
        if reply.get("message_type") != "memory_reply":
            raise APIError(502, "internal", f"unexpected answer from Flora: {reply.get('message_type')}")
        if reply.get("error"):
            off = "memory.enabled" in reply["error"]
            raise APIError(404 if off else 503, "unavailable", reply["error"])
        return reply

    # -- loop tasks ------------------------------------------------------------------------
    async def loop_command(self, caller: Caller, op: str, loop_task_id: str | None = None, **fields: Any) -> dict:
        msg = m.loop_command(msg_id=m.new_id("msg"), tenant_id=caller.tenant_id, user_id=caller.user_id, op=op,
                             loop_task_id=loop_task_id, **fields)
        reply = await self._ask(self.scheduler, msg)
        if reply.get("message_type") == "task_error":
            status = {"not_found": 404, "forbidden": 403, "conflict": 409, "invalid_parameter": 422}.get(
                reply.get("error_type"), 400)
            raise APIError(status, reply.get("error_type", "invalid_request"), reply.get("message", ""),
                           field=reply.get("field"))
        return reply

    async def create_loop(self, caller: Caller, request: str, session_id: str | None) -> dict:
        """A loop task from plain words, the way a chat message makes one (it may pause to
        ask for a time it could not read)."""
        if not looks_like_loop_request(request):
            raise APIError(422, "invalid_request", "that does not read as a repeating or scheduled task; say when, "
                           "e.g. 'every day at 9:00 remind me to stretch'", field="request")
        return await self.send(caller, Message(content=request, session_id=session_id))

    # -- sessions --------------------------------------------------------------------------
    def create_session(self, caller: Caller, title: str) -> Session:
        return self.store.save_session(Session(session_id=m.new_id("ses"), tenant_id=caller.tenant_id,
                                               user_id=caller.user_id, title=title))

    def session(self, caller: Caller, session_id: str) -> Session:
        return self._session_for(caller, session_id)

    def sessions(self, caller: Caller, limit: int) -> list[Session]:
        return self.store.list_sessions(caller.tenant_id, caller.user_id, limit=limit)

    def delete_session(self, caller: Caller, session_id: str) -> None:
        self._session_for(caller, session_id)
        self.store.delete_session(caller.tenant_id, session_id)

    def _session_for(self, caller: Caller, session_id: str) -> Session:
        session = self.store.get_session(caller.tenant_id, session_id)
        if session is None:
            raise APIError(404, "not_found", f"no session {session_id!r}", field="session_id")
        if session.user_id != caller.user_id:
            raise APIError(403, "forbidden", f"session {session_id} belongs to another user", field="session_id")
        return session

    # -- health ---------------------------------------------------------------------------
    # -- linked accounts (docs/channels.md) -------------------------------------------
    def _linking(self) -> AccountLinks:
        if self.links is None:
            raise APIError(503, "unavailable", "account linking is not set up on this server")
        return self.links

    def link_code(self, caller: Caller) -> dict:
        """A one-time code that links the chat account sending ``/link <code>`` to the caller."""
        return {"code": self._linking().issue(caller.tenant_id, caller.user_id), "user_id": caller.user_id}

    def link(self, caller: Caller, code: str) -> dict:
        """Link the chat account that asked for ``code`` (``/link`` there) to the caller."""
        try:
            account = self._linking().redeem_in_browser(caller.tenant_id, code, caller.user_id)
        except LinkRefused as exc:
            raise APIError(429 if exc.reason == "too_many" else 409 if exc.reason in ("taken", "fixed", "same")
                           else 400, exc.reason, str(exc), field="code") from None
        return {"account": account, **self.linked(caller)}

    def linked(self, caller: Caller) -> dict:
        return {"user_id": caller.user_id, "accounts": self._linking().accounts(caller.tenant_id, caller.user_id)}

    def unlink(self, caller: Caller, account: str) -> dict:
        try:
            self._linking().unlink_for(caller.tenant_id, caller.user_id, account)
        except LinkRefused as exc:
            raise APIError(404, "not_found", str(exc)) from None
        return self.linked(caller)

    async def ready(self, timeout: float = 5.0) -> dict:
        """The RouterActor's live counts, or APIError 503 when it does not answer."""
        try:
            reply = await self.gateway.ask(self.router, m.status_request(), timeout)
        except TimeoutError:
            raise APIError(503, "unavailable", "Flora's actors do not answer") from None
        return reply.get("status", {})


def event_view(event: Event) -> dict:
    return {"event_id": event.event_id, "event_type": event.event_type, "task_id": event.task_id,
            "source": event.source, "data": event.data, "created_at": event.created_at}


def task_view(task: TaskRecord) -> dict:
    view = task.to_dict()
    view.pop("tenant_id", None)
    # 1: next to start; None when the task is not waiting for a slot
    view["queue_position"] = (task.meta.get("queue") or {}).get("position") if task.state == QUEUED else None
    return view
