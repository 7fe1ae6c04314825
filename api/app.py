"""The HTTP application: routes, authentication, errors, limits. What each route does lives in
:class:`~api.service.FloraService`; this module only maps HTTP onto it.

``create_app(flora)`` serves a running Flora (``main.start_flora``); ``main.py --api`` runs it
under uvicorn. The contract is docs/http_api.md; the OpenAPI spec is at ``/openapi.json``.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import time
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Annotated, Any, AsyncIterator, Literal, Mapping

from fastapi import Depends, FastAPI, Path as PathParam, Query, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import FileResponse, JSONResponse, PlainTextResponse, Response, StreamingResponse
from fastapi.security import APIKeyHeader, HTTPAuthorizationCredentials, HTTPBearer
from fastapi.staticfiles import StaticFiles
from pydantic import BaseModel, ConfigDict, Field
from starlette.exceptions import HTTPException as StarletteHTTPException

from api import openai_compat
from api.auth import AuthError, KeyRing, Principal
from api.gateway import ActorGateway
from api.metrics import HTTPMetrics
from api.service import APIError, Caller, FloraService, Message, event_view, task_view
from common.accounts.linking import AccountLinks
from common.accounts.store import open_link_store
from common.messages import channel_update
from common.status import (
    StatusCache, StatusUnavailable, channel_states, collect_status, health_report, memory_health, tools_isolation,
)
from common.status import metrics_text as status_metrics_text
from common.tasks.models import TRANSITIONS
from common.tasks.store import open_store

log = logging.getLogger("flora.http")

STATIC_DIR = Path(__file__).parent / "static"
Id = Annotated[str, PathParam(min_length=1, max_length=200)]
TaskState = Literal[tuple(TRANSITIONS)]  # type: ignore[valid-type]
MAX_EVENT_ID = 2**63 - 1  # SQLite's largest integer
STATUS_MAX_AGE_S = 1.0


# --------------------------------------------------------------------------- bodies
class _Body(BaseModel):
    model_config = ConfigDict(extra="forbid")


class MessageBody(_Body):
    content: str = Field("", max_length=100_000, description="what the user says (may be empty when answering "
                                                               "a task with parameters or approve)")
    user_id: str | None = Field(None, min_length=1, max_length=200)
    task_id: str | None = Field(None, min_length=1, max_length=200, description="the paused task this answers")
    parameters: dict[str, Any] | None = Field(None, description="values for the paused task's missing parameters")
    approve: bool | None = Field(None, description="answer to a task waiting for approval")
    always_allow: bool | None = Field(None, description="with approve=true: never ask this user again for the tool")
    session_id: str | None = Field(None, min_length=1, max_length=200, description="append to this session")
    msg_id: str | None = Field(None, min_length=1, max_length=200)
    stream: bool = Field(False, description="answer as server-sent events: the task's events, then the reply")


class LinkBody(_Body):
    code: str = Field(..., min_length=4, max_length=32, description="the code /link gave in a chat")


class AnswerBody(_Body):
    parameters: dict[str, Any] | None = None
    approve: bool | None = None
    always_allow: bool | None = None
    content: str = Field("", max_length=100_000)
    session_id: str | None = Field(None, min_length=1, max_length=200)


class SessionBody(_Body):
    title: str = Field("", max_length=200)


class LoopCreateBody(_Body):
    request: str = Field(min_length=1, max_length=10_000, description="the loop task in plain words")
    session_id: str | None = Field(None, min_length=1, max_length=200)


class LoopChangeBody(_Body):
    schedule: str | None = Field(None, min_length=1, max_length=1000, description="the new schedule, in words")
    parameters: dict[str, Any] | None = None


# --------------------------------------------------------------------------- who is asking
_bearer = HTTPBearer(auto_error=False, description="Authorization: Bearer <API key>")
_header_key = APIKeyHeader(name="X-API-Key", auto_error=False)


def principal(request: Request, credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)],
              api_key: Annotated[str | None, Depends(_header_key)]) -> Principal:
    """The tenant (and pinned user) the request's API key opens; 401 without a valid one."""
    try:
        return request.app.state.keys.authenticate(f"Bearer {credentials.credentials}" if credentials else None,
                                                   api_key)
    except AuthError as exc:
        raise APIError(401, "unauthorized", str(exc)) from None


Who = Annotated[Principal, Depends(principal)]


def body_caller(who: Principal, request: Request, user_id: str | None) -> Caller:
    """The tenant and user a request acts for: the user named (or ``X-Flora-User``), within what the key allows."""
    return request.app.state.service.caller(who, user_id or request.headers.get("x-flora-user"))


def caller(who: Who, request: Request,
           user_id: Annotated[str | None, Query(min_length=1, max_length=200)] = None) -> Caller:
    """:func:`body_caller` with the user from the query."""
    return body_caller(who, request, user_id)


As = Annotated[Caller, Depends(caller)]


# --------------------------------------------------------------------------- the app
def create_app(flora: Any, *, env: Mapping[str, str] | None = None) -> FastAPI:
    """The FastAPI app serving ``flora`` (a running ``main.Flora``)."""
    config = flora.config
    keys = KeyRing.from_config(config, os.environ if env is None else env)
    store = open_store(config)
    gateway = ActorGateway(flora.system, workers=config.http.ask_workers,
                           private=config.actors.system_base != "simpleSystemBase")
    service = FloraService(gateway=gateway, store=store, interaction=flora.interaction, scheduler=flora.scheduler,
                           router=flora.router, default_user=config.http.default_user,
                           ask_timeout_s=config.actors.ask_timeout_s, poll_s=config.http.stream_poll_s,
                           links=AccountLinks(open_link_store(config)))
    metrics = HTTPMetrics()

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        yield
        gateway.close()
        store.close()

    app = FastAPI(title="Flora", version="1.0", lifespan=lifespan,
                  description="Durable agents on actors: send messages, answer paused tasks, follow events, "
                              "manage loop tasks; an OpenAI-compatible chat endpoint. See docs/http_api.md.")
    app.state.service, app.state.metrics, app.state.keys = service, metrics, keys
    app.add_middleware(Guard, max_body_bytes=config.http.max_body_bytes, metrics=metrics,
                       hosts=allowed_hosts(config.http))
    _add_error_handlers(app)

    # -- health --------------------------------------------------------------------------
    # whether memory can be reached, at most once a second however often /health is probed
    memory_state = StatusCache(lambda: memory_health(config), max_age_s=STATUS_MAX_AGE_S)
    channel_state = StatusCache(lambda: channel_states(config), max_age_s=STATUS_MAX_AGE_S)

    @app.get("/health", tags=["health"], summary="The process is up; whether memory answers and the model hosts are up")
    async def health() -> dict:
        """``status`` "ok", or "degraded" while long-term memory cannot be reached, a model host is
        down or the tool sandbox cannot be set up (``reasons`` says why); ``models``: each model host
        this Flora started, ``loaded`` or ``unloaded_idle`` (freed after ``llm.idle_unload_s``
        without use; the next request loads it again), or ``down`` with its ``reason`` while it died
        and is started again; ``since``, ``restarts``; ``tools``: the isolation in force; ``channels``:
        each chat channel's state (``running``, ``retrying``, ``stopped: bad credentials``) and its
        undelivered messages (``pending``, ``failed``)."""
        memory = await asyncio.to_thread(memory_state.get)
        hosts = flora.hosts() if hasattr(flora, "hosts") else []
        tools = await asyncio.to_thread(tools_isolation, config)
        try:
            channels = await asyncio.to_thread(channel_state.get)
        except StatusUnavailable:  # the store cannot be read: /metrics says so (flora_store_up 0)
            channels = None
        return health_report(memory["state"], [host.state() for host in hosts], tools, channels)

    @app.get("/ready", tags=["health"], summary="The actor system answers",
             responses={503: {"description": "not ready"}})
    async def ready() -> dict:
        status = await service.ready()
        return {"status": "ready", "agents": len(status.get("agents", []) or [])}

    # the store's counts at most once a second, however often /metrics is scraped
    store_status = StatusCache(lambda: collect_status(config), max_age_s=STATUS_MAX_AGE_S)

    @app.get("/metrics", tags=["health"], response_class=PlainTextResponse, summary="Prometheus metrics")
    async def metrics_text() -> PlainTextResponse:
        counts = await asyncio.to_thread(status_metrics_text, store_status)
        return PlainTextResponse(metrics.render(None) + counts, media_type="text/plain; version=0.0.4")

    @app.get("/v1/whoami", tags=["auth"], summary="Who the key acts for")
    async def whoami(who: As) -> dict:
        return {"tenant_id": who.tenant_id, "user_id": who.user_id, "auth": "open" if keys.open else "api_key"}

    # -- messages ------------------------------------------------------------------------
    @app.post("/v1/messages", tags=["messages"], summary="Send a user message; get the reply contract",
              responses={200: {"description": "the reply contract (or text/event-stream with stream=true)",
                               "content": {"application/json": {}, "text/event-stream": {}}}})
    async def send_message(body: MessageBody, who: Who, request: Request):
        who_ = body_caller(who, request, body.user_id)
        message = Message(content=body.content, task_id=body.task_id, parameters=body.parameters,
                          approve=body.approve, always_allow=body.always_allow, session_id=body.session_id,
                          msg_id=body.msg_id)
        msg = await service.accept(who_, message)  # bad input is refused before any stream begins
        if body.stream:
            return StreamingResponse(_sse_message(service.stream(who_, message, msg), metrics),
                                     media_type="text/event-stream",
                                     headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"})
        started = time.perf_counter()
        reply = await service.answer(who_, message, msg)
        metrics.observe_reply(time.perf_counter() - started)
        return reply

    # -- tasks ---------------------------------------------------------------------------
    @app.get("/v1/tasks", tags=["tasks"], summary="The user's tasks, newest first")
    async def list_tasks(who: As, state: Annotated[list[TaskState] | None, Query()] = None,
                         limit: Annotated[int, Query(ge=1, le=1000)] = 100) -> list[dict]:
        tasks = await asyncio.to_thread(service.tasks, who, states=state, limit=limit)
        return [task_view(t) for t in tasks]

    @app.get("/v1/tasks/{task_id}", tags=["tasks"], summary="One task, with its whiteboard")
    async def get_task(task_id: Id, who: As) -> dict:
        task, board = await asyncio.to_thread(service.task_with_board, who, task_id)
        return {**task_view(task), "whiteboard": board}

    @app.post("/v1/tasks/{task_id}/answer", tags=["tasks"], summary="Answer a paused task")
    async def answer_task(task_id: Id, body: AnswerBody, who: As) -> dict:
        if body.parameters is None and body.approve is None and not body.content.strip():
            raise APIError(422, "invalid_request", "give 'parameters', 'approve' or 'content'", field="parameters")
        return await service.send(who, Message(content=body.content, task_id=task_id, parameters=body.parameters,
                                               approve=body.approve, always_allow=body.always_allow,
                                               session_id=body.session_id))

    @app.post("/v1/tasks/{task_id}/cancel", tags=["tasks"], summary="Cancel an unfinished task")
    async def cancel_task(task_id: Id, who: As) -> dict:
        return task_view(await asyncio.to_thread(service.cancel, who, task_id))

    # -- events --------------------------------------------------------------------------
    @app.get("/v1/events", tags=["events"], summary="Event history, oldest first")
    async def list_events(who: As, task_id: Annotated[str | None, Query(min_length=1, max_length=200)] = None,
                          since_id: Annotated[int, Query(ge=0, le=MAX_EVENT_ID)] = 0,
                          limit: Annotated[int, Query(ge=1, le=5000)] = 1000) -> list[dict]:
        events = await asyncio.to_thread(service.history, who, task_id=task_id, since_id=since_id, limit=limit)
        return [event_view(e) for e in events]

    @app.get("/v1/events/stream", tags=["events"], summary="Events as server-sent events, live",
             response_class=StreamingResponse)
    async def stream_events(request: Request, who: As,
                            task_id: Annotated[str | None, Query(min_length=1, max_length=200)] = None,
                            since_id: Annotated[int | None, Query(ge=0, le=MAX_EVENT_ID)] = None) -> StreamingResponse:
        last = request.headers.get("last-event-id", "").strip()
        start = min(int(last), MAX_EVENT_ID) if last.isascii() and last.isdigit() else since_id
        if task_id is not None:
            await asyncio.to_thread(service.task, who, task_id)
        return StreamingResponse(_sse_events(service, who, task_id, start), media_type="text/event-stream",
                                 headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"})

    @app.get("/v1/notifications", tags=["events"], summary="Loop runs' results not fetched yet")
    async def notifications(who: As, all: bool = False, mark_read: bool = True) -> list[dict]:
        return await asyncio.to_thread(service.notifications, who, all=all, mark_read=mark_read)

    # -- linked accounts -----------------------------------------------------------------
    @app.get("/v1/links", tags=["accounts"], summary="The chat accounts linked to the user")
    async def linked_accounts(who: As) -> dict:
        return await asyncio.to_thread(service.linked, who)

    @app.post("/v1/links/code", tags=["accounts"], summary="A one-time code to send as /link <code> from a chat")
    async def link_code(who: As) -> dict:
        return await asyncio.to_thread(service.link_code, who)

    @app.post("/v1/links", tags=["accounts"], summary="Link the chat account that gave this code (/link there)")
    async def link_account(body: LinkBody, who: As) -> dict:
        return await asyncio.to_thread(service.link, who, body.code)

    @app.delete("/v1/links/{account}", tags=["accounts"], summary="Unlink one of the user's chat accounts")
    async def unlink_account(account: Id, who: As) -> dict:
        return await asyncio.to_thread(service.unlink, who, account)

    # -- loop tasks ----------------------------------------------------------------------
    @app.get("/v1/loops", tags=["loops"], summary="The user's loop tasks with their next run")
    async def list_loops(who: As) -> list[dict]:
        return (await service.loop_command(who, "list"))["result"]

    @app.post("/v1/loops", tags=["loops"], summary="Create a loop task from plain words; the reply contract")
    async def create_loop(body: LoopCreateBody, who: As) -> dict:
        return await service.create_loop(who, body.request, body.session_id)

    @app.patch("/v1/loops/{loop_task_id}", tags=["loops"], summary="Change a loop task's schedule or parameters")
    async def change_loop(loop_task_id: Id, body: LoopChangeBody, who: As) -> dict:
        if body.schedule is None and body.parameters is None:
            raise APIError(422, "invalid_request", "give 'schedule' or 'parameters'", field="schedule")
        fields = {k: v for k, v in (("schedule_text", body.schedule), ("parameters", body.parameters)) if v is not None}
        return (await service.loop_command(who, "modify", loop_task_id, **fields))["result"]

    def loop_op(op: str):
        async def run(loop_task_id: Id, who: As) -> dict:
            reply = await service.loop_command(who, op, loop_task_id)
            return reply["result"] if op != "trigger" else reply
        run.__name__ = f"{op}_loop"
        return run

    app.post("/v1/loops/{loop_task_id}/pause", tags=["loops"], summary="Pause a loop task")(loop_op("pause"))
    app.post("/v1/loops/{loop_task_id}/resume", tags=["loops"], summary="Resume a loop task")(loop_op("resume"))
    app.post("/v1/loops/{loop_task_id}/trigger", tags=["loops"],
             summary="Run a loop task now; the run's reply contract")(loop_op("trigger"))
    app.delete("/v1/loops/{loop_task_id}", tags=["loops"], summary="Delete a loop task")(loop_op("delete"))

    # -- sessions ------------------------------------------------------------------------
    @app.get("/v1/sessions", tags=["sessions"], summary="The user's conversations, most recent first")
    async def list_sessions(who: As, limit: Annotated[int, Query(ge=1, le=1000)] = 100) -> list[dict]:
        return [s.summary() for s in await asyncio.to_thread(service.sessions, who, limit)]

    @app.post("/v1/sessions", tags=["sessions"], summary="Start a conversation", status_code=201)
    async def create_session(who: As, body: SessionBody | None = None) -> dict:
        return (await asyncio.to_thread(service.create_session, who, body.title if body else "")).to_dict()

    @app.get("/v1/sessions/{session_id}", tags=["sessions"], summary="A conversation with its messages")
    async def get_session(session_id: Id, who: As) -> dict:
        return (await asyncio.to_thread(service.session, who, session_id)).to_dict()

    @app.delete("/v1/sessions/{session_id}", tags=["sessions"], summary="Delete a conversation", status_code=204)
    async def delete_session(session_id: Id, who: As) -> Response:
        await asyncio.to_thread(service.delete_session, who, session_id)
        return Response(status_code=204)

    # -- long-term memory ---------------------------------------------------------------
    @app.get("/v1/memories", tags=["memory"], summary="What Flora remembers about the user; with q, the nearest to it, best first")
    async def list_memories(who: As, q: Annotated[str | None, Query(min_length=1, max_length=2000)] = None) -> list[dict]:
        reply = await service.memories(who, "search" if q else "list", query=q)
        return reply.get("memories") or []

    @app.delete("/v1/memories/{memory_id}", tags=["memory"], summary="Forget one memory", status_code=204)
    async def forget_memory(memory_id: Id, who: As) -> Response:
        reply = await service.memories(who, "forget", memory_id=memory_id)
        if not reply.get("removed"):
            raise APIError(404, "not_found", f"no memory {memory_id!r}")
        return Response(status_code=204)

    @app.delete("/v1/memories", tags=["memory"], summary="Forget everything remembered about the user")
    async def clear_memories(who: As) -> dict:
        return {"removed": (await service.memories(who, "clear")).get("removed") or 0}

    # -- OpenAI-compatible ---------------------------------------------------------------
    @app.get("/v1/models", tags=["openai"], summary="OpenAI-compatible model list")
    async def models(who: Who) -> dict:
        return openai_compat.model_list()

    @app.post("/v1/chat/completions", tags=["openai"], summary="OpenAI-compatible chat completion",
              responses={200: {"description": "a chat.completion (or chat.completion.chunk events with stream=true)",
                               "content": {"application/json": {}, "text/event-stream": {}}}})
    async def chat_completions(body: openai_compat.ChatRequest, who: Who, request: Request):
        who_ = body_caller(who, request, body.user)
        message = Message(content=openai_compat.last_user_text(body))
        msg = await service.accept(who_, message)
        if body.stream:
            pieces: asyncio.Queue = asyncio.Queue()
            return StreamingResponse(openai_compat.stream(service.answer_streaming(msg, pieces.put_nowait),
                                                          body.model, pieces),
                                     media_type="text/event-stream", headers={"Cache-Control": "no-cache"})
        started = time.perf_counter()
        reply = await service.answer(who_, message, msg)
        metrics.observe_reply(time.perf_counter() - started)
        return openai_compat.completion(reply, body.model, prompt=message.content)

    # -- chat channels' webhooks (docs/channels.md) -------------------------------------------
    @app.api_route("/v1/channels/{name}/webhook", methods=["GET", "POST"], tags=["channels"],
                   summary="A chat channel's webhook: the service's events (POST) and verification handshakes (GET)",
              responses={200: {"description": "the channel's answer to its service"},
                         401: {"description": "the secret or signature does not check out"}})
    async def channel_webhook(name: Annotated[str, PathParam(min_length=1, max_length=32)], request: Request):
        # no API key: each channel checks its own service's secret or signature, in its actor
        address = (getattr(flora, "channels", None) or {}).get(name)
        if address is None:
            raise APIError(404, "not_found", f"no chat channel {name!r} is running")
        try:
            body = (await request.body()).decode("utf-8")
        except UnicodeDecodeError:
            raise APIError(400, "malformed_message", "the webhook body is not UTF-8 text") from None
        headers = {k.lower(): v for k, v in request.headers.items()}
        update = channel_update(channel=name, body=body, headers=headers, method=request.method,
                                query=dict(request.query_params))
        ack = await gateway.ask(address, update, config.actors.ask_timeout_s)
        if ack.get("message_type") != "channel_ack":
            raise APIError(500, "internal", f"channel {name} did not take the call: {ack.get('message', ack)}")
        if isinstance(ack["body"], str):
            return PlainTextResponse(ack["body"], status_code=ack["status"])
        return JSONResponse(ack["body"], status_code=ack["status"])

    # -- the browser client ----------------------------------------------------------------
    if STATIC_DIR.is_dir():
        app.mount("/static", StaticFiles(directory=STATIC_DIR), name="static")

    @app.get("/", include_in_schema=False)
    async def index() -> FileResponse:
        if not (STATIC_DIR / "index.html").is_file():
            raise APIError(404, "not_found", "the browser client is not installed")
        return FileResponse(STATIC_DIR / "index.html")

    return app


# --------------------------------------------------------------------------- streams
def _sse(kind: str, data: Any, event_id: int | None = None) -> str:
    head = f"event: {kind}\n" + (f"id: {event_id}\n" if event_id is not None else "")
    return head + f"data: {json.dumps(data, ensure_ascii=False, default=str)}\n\n"


async def _sse_message(answer: AsyncIterator[tuple[str, dict, int | None]], metrics: HTTPMetrics):
    started = time.perf_counter()
    async for kind, data, event_id in answer:
        if kind == "reply":
            metrics.observe_reply(time.perf_counter() - started)
        yield _sse(kind, data, event_id)
    yield _sse("done", {})


async def _sse_events(service: FloraService, who: Caller, task_id: str | None, since: int | None):
    yield ": connected\n\n"
    async for event in service.follow(who, task_id=task_id, since_id=since):
        yield ": keep-alive\n\n" if event is None else _sse("flora_event", event_view(event), event.event_id)


# --------------------------------------------------------------------------- errors and limits
def _error(status: int, error_type: str, message: str, field: str | None = None) -> JSONResponse:
    return JSONResponse(APIError(status, error_type, message, field).body(), status_code=status)


def _add_error_handlers(app: FastAPI) -> None:
    @app.exception_handler(APIError)
    async def api_error(request: Request, exc: APIError) -> JSONResponse:
        return JSONResponse(exc.body(), status_code=exc.status)

    @app.exception_handler(RequestValidationError)
    async def invalid(request: Request, exc: RequestValidationError) -> JSONResponse:
        errors = exc.errors()
        if any(e.get("type") == "json_invalid" for e in errors):
            return _error(400, "invalid_json", "the body is not valid JSON")
        first = errors[0] if errors else {}
        where = [str(p) for p in first.get("loc", ()) if p not in ("body", "query", "path", "header")]
        field = ".".join(where) or None
        text = first.get("msg", "invalid request")
        return _error(422, "invalid_request", f"{field}: {text}" if field else text, field)

    @app.exception_handler(StarletteHTTPException)
    async def http_error(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        kinds = {404: "not_found", 405: "method_not_allowed", 401: "unauthorized", 403: "forbidden"}
        return _error(exc.status_code, kinds.get(exc.status_code, "http_error"), str(exc.detail))

    @app.exception_handler(Exception)
    async def crashed(request: Request, exc: Exception) -> JSONResponse:
        log.exception("request %s %s failed", request.method, request.url.path)
        return _error(500, "internal", "Flora failed on this request; it is logged")


LOOPBACK_NAMES = ("localhost", "127.0.0.1", "::1")


def allowed_hosts(http) -> frozenset[str]:
    """The names a request's Host header may carry: loopback's, ``http.host`` unless it is a
    wildcard address, and ``http.allowed_hosts`` ("*": any)."""
    names = {*LOOPBACK_NAMES, *(h.strip().lower().strip("[]").rstrip(".") for h in http.allowed_hosts)}
    if http.host not in ("0.0.0.0", "::", ""):
        names.add(http.host.lower().strip("[]"))
    return frozenset(names)


def host_name(header: str) -> str:
    """The host of a Host header, without its port: ``[::1]:8000`` -> ``::1``."""
    header = header.strip().lower()
    if header.startswith("["):
        return header[1:].partition("]")[0]
    name, colon, port = header.rpartition(":")
    return (name if colon and port.isdigit() else header).rstrip(".")


class Guard:
    """ASGI middleware: refuses a Host header the API does not answer to (400: DNS rebinding,
    a web page's script calling the API through a name it controls), bodies over the limit
    (413) before any route reads them, and counts every response by route template and status."""

    def __init__(self, app, *, max_body_bytes: int, metrics: HTTPMetrics, hosts: frozenset[str] = frozenset()):
        self.app, self.limit, self.metrics, self.hosts = app, max_body_bytes, metrics, hosts

    async def __call__(self, scope, receive, send):
        if scope["type"] not in ("http", "websocket"):
            return await self.app(scope, receive, send)
        host = dict(scope.get("headers") or []).get(b"host", b"").decode("latin-1")
        if "*" not in self.hosts and host_name(host) not in self.hosts:
            log.warning("refused a request for Host %r from %s", host[:100], (scope.get("client") or ("?",))[0])
            if scope["type"] == "websocket":
                return await send({"type": "websocket.close", "code": 1008})
            return await _send_json(send, 400, APIError(
                400, "bad_host", "this server does not answer to that Host name (see http.allowed_hosts)").body())
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        status = {"code": 500}

        async def counted_send(message):
            if message["type"] == "http.response.start":
                status["code"] = message["status"]
            await send(message)

        try:
            declared = dict(scope.get("headers") or []).get(b"content-length")
            if declared is not None and (not declared.isdigit() or int(declared) > self.limit):
                return await _send_json(counted_send, 413, APIError(
                    413, "too_large", f"the body is over {self.limit} bytes").body())
            body, chunks = 0, []
            while True:  # read the whole (bounded) body first: a chunked upload may not declare its length
                message = await receive()
                if message["type"] != "http.request":
                    chunks.append(message)
                    break
                body += len(message.get("body", b""))
                if body > self.limit:
                    return await _send_json(counted_send, 413, APIError(
                        413, "too_large", f"the body is over {self.limit} bytes").body())
                chunks.append(message)
                if not message.get("more_body"):
                    break

            async def replay():
                return chunks.pop(0) if chunks else await receive()

            await self.app(scope, replay, counted_send)
        finally:
            route = scope.get("route")
            self.metrics.count(scope["method"], getattr(route, "path", "(unmatched)"), status["code"])


async def _send_json(send, status: int, body: dict) -> None:
    raw = json.dumps(body).encode()
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(raw)).encode())]})
    await send({"type": "http.response.body", "body": raw})

