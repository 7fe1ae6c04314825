"""Redis backend of the TaskStore, for several machines sharing one task state.

Keys, with ``{t}`` the tenant in braces (a Redis Cluster hash tag: all of one tenant's
keys share a slot)::

    <prefix>:{t}:task:<id>               string, the TaskRecord as JSON
    <prefix>:{t}:tasks:<state>           sorted set of the ids of tasks in that state, by updated_at
    <prefix>:{t}:tasks:<state>:<user>    the same, one user's tasks
    <prefix>:{t}:counts                  hash state -> how many tasks are in it
    <prefix>:{t}:event                   hash event_id -> the Event as JSON (less its id and tenant)
    <prefix>:{t}:events                  sorted set of event ids, scored by id
    <prefix>:{t}:events:task:<id>        the same, one task's events
    <prefix>:{t}:events:user:<user>      the same, one user's events
    <prefix>:{t}:draft:<id>              string, the Draft as JSON
    <prefix>:{t}:drafts:<user>           sorted set of the user's open draft ids, by created_at
    <prefix>:{t}:note:<id>               string, the Notification as JSON, less ``read``
    <prefix>:{t}:notes:all:<user>        sorted set of the user's notification ids, by created_at
    <prefix>:{t}:notes:unread:<user>     the same, unread ones only: being here is what ``read`` says
    <prefix>:{t}:session:<id>            string, the Session as JSON, less its messages
    <prefix>:{t}:session_messages:<id>   list of the session's messages (JSON each), oldest first
    <prefix>:{t}:sessions:<user>         sorted set of the user's session ids, by updated_at
    <prefix>:{t}:work:<kind>             hash key -> a pending WorkItem as JSON
    <prefix>:work:<kind>                 set of the tenants with pending work of that kind
    <prefix>:{t}:whiteboard:<task>       hash entry_id -> a WhiteboardEntry as JSON (a task's shared state)
    <prefix>:{t}:chan:<c>:msg            hash message_key -> a channel's inbound ChannelMessage as JSON
    <prefix>:{t}:chan:<c>:open           sorted set of its message keys not answered yet, by created_at
    <prefix>:{t}:chan:<c>:out            hash delivery_id -> a ChannelDelivery as JSON
    <prefix>:{t}:chan:<c>:outs           sorted set of the delivery ids, by created_at
    <prefix>:{t}:chan:<c>:outs:<state>   the same, those in that state (pending, failed, delivered)
    <prefix>:chan_states                 hash channel name -> its ChannelState as JSON
    <prefix>:{t}:allowed_tools:<user>    set of the tools the user always allows
    <prefix>:tenants                     set of the tenants that have tasks (count_by_state of all)
    <prefix>:event_seq                   counter: the newest event id, any tenant

A tenant's calls build keys from its own name only, so tenant B never reads tenant A's
keys, even knowing an id. Ids and user ids come last in a key, so they may hold ``:``; a
tenant id may not hold ``{``, ``}`` or ``|`` (ValueError), and a task is created only in a
life-cycle state (ValueError), so ``tasks:<state>:<user>`` cannot be read two ways.

A task is written by one script that compares and sets: the checks (exists, ``expect``,
the life cycle, the fields) run in Python on the value read, and the script writes the new
value only if the key still holds that one, else the change is read and checked again. Of
two resumers one wins; the other then finds the task running and gets InvalidTransition.
The same script moves the task in its state indexes and counts and appends its event, so
none of them can disagree with the task. (Merging the change in Lua instead would run the
JSON through Redis's cjson, which keeps 14 digits of a float and turns ``[]`` into ``{}``.)
Drafts, sessions and notifications are written under WATCH/MULTI. A turn pushes its messages
on the session's list in the transaction that stamps the session's record, so it costs the
same at the thousandth message as at the first. A record written before the list existed
carries its messages in a ``messages`` array: they are read first, and the next write of the
session moves them to the list in its own transaction.

Event ids come from one counter for all tenants, incremented in the script that writes
the event: ids grow in the order events become visible, so a reader paging by
``since_id`` from ``last_event_id()`` never skips one written late. That script touches
the counter and a tenant's keys, which live in different slots: the store wants one Redis
(with replicas if need be), not a Cluster.
"""

from __future__ import annotations

import json
import time
from collections import Counter
from dataclasses import asdict, replace
from typing import Any, Callable, Iterable, TypeVar

import redis

from common.tasks.models import (
    CHANNEL_OPEN_STATES, MUTABLE_FIELDS, PAUSED_STATES, TRANSITIONS, can_move, ChannelDelivery, ChannelMessage,
    ChannelState, DELIVERY_PENDING, DELIVERY_STATES, Draft, Event,
    InvalidTransition, Notification, PendingEvent, Session, SessionNotFound, Standing, StoreError, TaskChanged,
    TaskNotFound, TaskRecord, WhiteboardEntry, WorkItem,
)
from common.tasks.store import TaskStore

T = TypeVar("T")

# Numbering an event and writing it in one step: ids then grow in the order events become visible.
_EVENT_LUA = """
local function append_event(seq, hash, all, task, user, body)
  local id = redis.call('INCR', seq)
  redis.call('HSET', hash, id, body)
  for _, index in ipairs({all, task, user}) do redis.call('ZADD', index, id, id) end
  return id
end
"""
# KEYS: the counter, the tenant's event hash, the tenant's, the task's and the user's index; ARGV: the JSON.
_APPEND_EVENT = _EVENT_LUA + "return append_event(KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], ARGV[1])"
# Writing a task only over the value its checks read (compare and set), with its indexes, counts and event.
# KEYS: task, counts, tenants, the state indexes before (tenant's, user's) and after, then the event's five.
# ARGV: the value read ('': none, a create), the new value, state before ('' on create), state after,
# task id, updated_at, tenant id, the event's JSON ('': no event).
# Returns the event id, 0 without an event, _EXISTS or _CHANGED.
_PUT_TASK = _EVENT_LUA + """
local current = redis.call('GET', KEYS[1])
if ARGV[1] == '' then
  if current then return -1 end
  redis.call('SADD', KEYS[3], ARGV[7])
elseif current ~= ARGV[1] then
  return -2
end
redis.call('SET', KEYS[1], ARGV[2])
if ARGV[3] ~= ARGV[4] then
  if ARGV[3] ~= '' then
    redis.call('ZREM', KEYS[4], ARGV[5])
    redis.call('ZREM', KEYS[5], ARGV[5])
    redis.call('HINCRBY', KEYS[2], ARGV[3], -1)
  end
  redis.call('HINCRBY', KEYS[2], ARGV[4], 1)
end
redis.call('ZADD', KEYS[6], ARGV[6], ARGV[5])
redis.call('ZADD', KEYS[7], ARGV[6], ARGV[5])
if ARGV[8] == '' then return 0 end
return append_event(KEYS[8], KEYS[9], KEYS[10], KEYS[11], KEYS[12], ARGV[8])
"""
_EXISTS, _CHANGED = -1, -2

_EVENT_PAGE = 256  # event ids read per round when a filter is applied after reading


class RedisTaskStore(TaskStore):
    def __init__(self, url: str, prefix: str = "flora"):
        self._redis = redis.Redis.from_url(url, decode_responses=True)
        self._prefix = prefix
        self._append_event = self._redis.register_script(_APPEND_EVENT)
        self._put_task = self._redis.register_script(_PUT_TASK)

    # -- keys ----------------------------------------------------------------------
    def _key(self, tenant_id: str, *parts: str) -> str:
        if not isinstance(tenant_id, str) or not tenant_id or any(c in tenant_id for c in "{}|"):
            raise ValueError(f"tenant id must be non-empty without '{{', '}}' or '|'; got {tenant_id!r}")
        return ":".join((f"{self._prefix}:{{{tenant_id}}}", *parts))

    def _state_keys(self, task: TaskRecord) -> tuple[str, str]:
        return (self._key(task.tenant_id, "tasks", task.state),
                self._key(task.tenant_id, "tasks", task.state, task.user_id))

    # -- tasks ---------------------------------------------------------------------
    def create_recorded(self, task: TaskRecord, event: PendingEvent | None) -> tuple[TaskRecord, Event | None]:
        if task.state not in TRANSITIONS:
            raise ValueError(f"unknown task state {task.state!r}")
        pending = _pending(task, event, time.time()) if event else None
        event_id = self._put(task, None, "", pending)
        if event_id == _EXISTS:
            raise StoreError(f"task {task.task_id!r} already exists")
        return task, (replace(pending, event_id=event_id) if pending else None)

    def get_task(self, tenant_id: str, task_id: str) -> TaskRecord | None:
        raw = self._redis.get(self._key(tenant_id, "task", task_id))
        return TaskRecord(**json.loads(raw)) if raw is not None else None

    def transition_recorded(self, tenant_id: str, task_id: str, state: str, event: PendingEvent | None, *,
                            expect: Iterable[str] | None = None, unchanged_since: float | None = None,
                            **changes: Any) -> tuple[TaskRecord, Event | None]:
        allowed = set(expect) if expect is not None else None

        def check(current: TaskRecord) -> None:
            if (allowed is not None and current.state not in allowed) or not can_move(current.state, state):
                raise InvalidTransition(task_id, current.state, state)
            if unchanged_since is not None and current.updated_at != unchanged_since:
                raise TaskChanged(task_id, current.state, state)

        return self._change(tenant_id, task_id, {**changes, "state": state}, event, check)

    def update_task(self, tenant_id: str, task_id: str, **changes: Any) -> TaskRecord:
        if "state" in changes:
            raise ValueError("use transition() to change a task's state")
        return self._change(tenant_id, task_id, changes, None)[0]

    def _change(self, tenant_id: str, task_id: str, changes: dict, event: PendingEvent | None,
                check: Callable[[TaskRecord], None] | None = None) -> tuple[TaskRecord, Event | None]:
        """Check the task, apply ``changes`` (stamping ``updated_at``) and append ``event`` in one step; read
        and check again when another writer changed the task in between."""
        unknown = set(changes) - MUTABLE_FIELDS - {"state"}
        if unknown:
            raise ValueError(f"unknown task fields: {sorted(unknown)}")
        key = self._key(tenant_id, "task", task_id)
        while True:
            raw = self._redis.get(key)
            if raw is None:
                raise TaskNotFound(task_id)
            before = TaskRecord(**json.loads(raw))
            if check:
                check(before)
            now = time.time()
            task = replace(before, **{**changes, "updated_at": now})
            pending = _pending(task, event, now) if event else None
            event_id = self._put(task, before, raw, pending)
            if event_id != _CHANGED:
                return task, (replace(pending, event_id=event_id) if pending else None)

    def _put(self, task: TaskRecord, before: TaskRecord | None, read: str, pending: Event | None) -> int:
        """Write ``task`` if its key still holds ``read`` ('' : nothing), moving it in the state indexes and
        counts and appending ``pending``: the event id, 0 without an event, or _EXISTS / _CHANGED."""
        keys = [self._key(task.tenant_id, "task", task.task_id), self._key(task.tenant_id, "counts"),
                f"{self._prefix}:tenants", *self._state_keys(before or task), *self._state_keys(task)]
        args = [read, _dumps(task.to_dict()), before.state if before else "", task.state, task.task_id,
                repr(task.updated_at), task.tenant_id, ""]
        if pending:
            keys += self._event_keys(pending)
            args[-1] = _event_body(pending)
        return self._put_task(keys=keys, args=args)

    def list_tasks(self, tenant_id: str, *, user_id: str | None = None,
                   states: Iterable[str] | None = None, limit: int = 100) -> list[TaskRecord]:
        wanted = set(TRANSITIONS if states is None else states)
        if limit <= 0 or not wanted:
            return []
        user = (user_id,) if user_id is not None else ()
        pipe = self._redis.pipeline(transaction=False)
        for state in wanted:
            pipe.zrevrange(self._key(tenant_id, "tasks", state, *user), 0, limit - 1, withscores=True)
        # the newest of each state's newest, as SQLite's ORDER BY updated_at DESC
        ranked = sorted((entry for page in pipe.execute() for entry in page), key=lambda e: (e[1], e[0]),
                        reverse=True)[:limit]
        return self._tasks([(tenant_id, task_id) for task_id, _ in ranked], lambda t: t.state in wanted)

    def count_by_state(self, tenant_id: str | None = None) -> dict[str, int]:
        tenants = [tenant_id] if tenant_id is not None else self._redis.smembers(f"{self._prefix}:tenants")
        pipe = self._redis.pipeline(transaction=False)
        for tenant in tenants:
            pipe.hgetall(self._key(tenant, "counts"))
        total: Counter[str] = Counter()
        for counts in pipe.execute():
            total.update({state: int(n) for state, n in counts.items()})
        return {state: n for state, n in total.items() if n > 0}

    def tenants(self) -> list[str]:
        return sorted(self._redis.smembers(f"{self._prefix}:tenants"))

    def unfinished_tasks(self, states: Iterable[str], *, updated_before: float,
                         limit: int = 10_000) -> list[TaskRecord]:
        wanted = set(states)
        if limit <= 0 or not wanted:
            return []
        indexes = [(tenant, state) for tenant in self._redis.smembers(f"{self._prefix}:tenants") for state in wanted]
        pipe = self._redis.pipeline(transaction=False)
        for tenant, state in indexes:
            pipe.zrangebyscore(self._key(tenant, "tasks", state), "-inf", f"({updated_before!r}", start=0, num=limit,
                               withscores=True)
        # the oldest of each index's oldest, as SQLite's ORDER BY updated_at
        ranked = sorted((score, tenant, task_id) for (tenant, _), page in zip(indexes, pipe.execute())
                        for task_id, score in page)[:limit]
        return self._tasks([(tenant, task_id) for _, tenant, task_id in ranked],
                           lambda t: t.state in wanted and t.updated_at < updated_before)

    def _tasks(self, refs: list[tuple[str, str]], keep: Callable[[TaskRecord], bool]) -> list[TaskRecord]:
        """The tasks ``refs`` (tenant, id) name, in that order, less those ``keep`` refuses: a task that
        changed between the reading of its index and of the task itself is left out."""
        raws = self._redis.mget([self._key(tenant, "task", task_id) for tenant, task_id in refs]) if refs else []
        return [task for task in (TaskRecord(**json.loads(raw)) for raw in raws if raw is not None) if keep(task)]

    # -- drafts --------------------------------------------------------------------
    def save_draft(self, draft: Draft) -> Draft:
        self._rewrite(self._key(draft.tenant_id, "draft", draft.draft_id), draft.draft_id,
                      lambda _: asdict(draft), self._draft_index)
        return draft

    def open_draft(self, tenant_id: str, user_id: str) -> Draft | None:
        newest = self._redis.zrevrange(self._key(tenant_id, "drafts", user_id), 0, 0)
        raw = self._redis.get(self._key(tenant_id, "draft", newest[0])) if newest else None
        return Draft(**json.loads(raw)) if raw is not None else None

    def close_draft(self, tenant_id: str, draft_id: str) -> None:
        self._rewrite(self._key(tenant_id, "draft", draft_id), draft_id,
                      lambda draft: draft and {**draft, "open": False}, self._draft_index)

    def _draft_index(self, draft: dict) -> dict[str, float]:
        return {self._key(draft["tenant_id"], "drafts", draft["user_id"]): draft["created_at"]} if draft["open"] else {}

    # -- events --------------------------------------------------------------------
    def append_event(self, *, event_type: str, task_id: str, tenant_id: str, user_id: str,
                     source: str, data: dict) -> Event:
        event = Event(0, event_type, task_id, tenant_id, user_id, source, data, time.time())
        return replace(event, event_id=self._append_event(keys=self._event_keys(event), args=[_event_body(event)]))

    def _event_keys(self, event: Event) -> list[str]:
        return [f"{self._prefix}:event_seq", self._key(event.tenant_id, "event"), self._key(event.tenant_id, "events"),
                self._key(event.tenant_id, "events", "task", event.task_id),
                self._key(event.tenant_id, "events", "user", event.user_id)]

    def events(self, tenant_id: str, *, task_id: str | None = None, user_id: str | None = None,
               event_type: str | None = None, since_id: int = 0, limit: int = 1000) -> list[Event]:
        wanted = {k: v for k, v in (("task_id", task_id), ("user_id", user_id), ("event_type", event_type))
                  if v is not None}
        if task_id is not None:
            index = self._key(tenant_id, "events", "task", task_id)
        elif user_id is not None:
            index = self._key(tenant_id, "events", "user", user_id)
        else:
            index = self._key(tenant_id, "events")
        # the index answers task_id or user_id; another filter is applied to what is read, in bigger pages
        answered = event_type is None and (task_id is None or user_id is None)
        page = limit if answered else max(limit, _EVENT_PAGE)
        found: list[Event] = []
        cursor = since_id
        while len(found) < limit:
            ids = self._redis.zrangebyscore(index, f"({cursor}", "+inf", start=0, num=page)
            if not ids:
                break
            for event_id, raw in zip(ids, self._redis.hmget(self._key(tenant_id, "event"), ids)):
                event = Event(event_id=int(event_id), tenant_id=tenant_id, **json.loads(raw))
                if all(getattr(event, k) == v for k, v in wanted.items()):
                    found.append(event)
            cursor = ids[-1]
            if len(ids) < page:
                break
        return found[:limit]

    def last_event_id(self) -> int:
        return int(self._redis.get(f"{self._prefix}:event_seq") or 0)

    # -- notifications ----------------------------------------------------------
    def add_notification(self, notification: Notification) -> Notification:
        note = notification
        key = self._key(note.tenant_id, "note", note.notification_id)

        def write(pipe: redis.client.Pipeline, raw: str | None) -> None:
            if raw is not None:
                raise StoreError(f"notification {note.notification_id!r} already exists")
            pipe.multi()
            pipe.set(key, _dumps({k: v for k, v in note.to_dict().items() if k != "read"}))
            for listing in ("all", "unread") if not note.read else ("all",):
                pipe.zadd(self._key(note.tenant_id, "notes", listing, note.user_id),
                          {note.notification_id: note.created_at})

        self._watched(key, write)
        return notification

    def notifications(self, tenant_id: str, user_id: str, *, unread_only: bool = True,
                      limit: int = 100) -> list[Notification]:
        unread = self._key(tenant_id, "notes", "unread", user_id)
        ids = self._redis.zrange(unread if unread_only else self._key(tenant_id, "notes", "all", user_id),
                                 0, limit - 1) if limit > 0 else []
        if not ids:
            return []
        pipe = self._redis.pipeline(transaction=False)
        pipe.mget([self._key(tenant_id, "note", i) for i in ids])
        pipe.zmscore(unread, ids)
        raws, scores = pipe.execute()
        return [Notification(**json.loads(raw), read=score is None) for raw, score in zip(raws, scores)
                if raw is not None]

    def mark_notifications_read(self, tenant_id: str, user_id: str, notification_ids: list[str]) -> int:
        if not notification_ids:
            return 0
        return self._redis.zrem(self._key(tenant_id, "notes", "unread", user_id), *notification_ids)

    # -- sessions -----------------------------------------------------------------
    def save_session(self, session: Session) -> Session:
        messages = self._key(session.tenant_id, "session_messages", session.session_id)

        def replace_messages(pipe: redis.client.Pipeline, before: dict | None, after: dict | None) -> None:
            pipe.delete(messages)
            if session.messages:
                pipe.rpush(messages, *(_dumps(m) for m in session.messages))

        self._rewrite(self._key(session.tenant_id, "session", session.session_id), session.session_id,
                      lambda _: _session_record(session.to_dict()), self._session_index, replace_messages)
        return session

    def get_session(self, tenant_id: str, session_id: str) -> Session | None:
        return next(iter(self._sessions(tenant_id, [session_id])), None)

    def list_sessions(self, tenant_id: str, user_id: str, *, limit: int = 100) -> list[Session]:
        ids = self._redis.zrevrange(self._key(tenant_id, "sessions", user_id), 0, limit - 1) if limit > 0 else []
        return self._sessions(tenant_id, ids)

    def _sessions(self, tenant_id: str, ids: list[str]) -> list[Session]:
        """The sessions ``ids`` name that exist, in that order, each read with its messages in one transaction."""
        if not ids:
            return []
        pipe = self._redis.pipeline()
        pipe.mget([self._key(tenant_id, "session", i) for i in ids])
        for i in ids:
            pipe.lrange(self._key(tenant_id, "session_messages", i), 0, -1)
        raws, *lists = pipe.execute()
        return [_session(json.loads(raw), kept) for raw, kept in zip(raws, lists) if raw is not None]

    def standing(self, tenant_id: str, user_id: str, session_id: str, limit: int) -> Standing:
        pipe = self._redis.pipeline()
        pipe.get(self._key(tenant_id, "session", session_id))
        # at least the last one: LRANGE -0 -1 would be the whole list
        pipe.lrange(self._key(tenant_id, "session_messages", session_id), -max(limit, 1), -1)
        pipe.zcard(self._key(tenant_id, "drafts", user_id))
        for state in sorted(PAUSED_STATES):
            pipe.zcard(self._key(tenant_id, "tasks", state, user_id))
        raw, tail, drafts, *paused = pipe.execute()
        record = json.loads(raw) if raw is not None else None
        return Standing(owner=record["user_id"] if record else None,
                         messages=_messages(record, tail)[-limit:] if record and limit > 0 else [],
                         open_draft=drafts > 0, paused=any(paused))

    def append_to_session(self, tenant_id: str, session_id: str, messages: list[dict], *,
                          title: str | None = None, user_id: str | None = None) -> None:
        kept = self._key(tenant_id, "session_messages", session_id)

        def stamp(session: dict | None) -> dict:
            now = time.time()
            if session is None:
                if user_id is None:
                    raise SessionNotFound(session_id)
                return _session_record(Session(session_id=session_id, tenant_id=tenant_id, user_id=user_id,
                                               title=title or "", created_at=now, updated_at=now).to_dict())
            return {**_session_record(session), "updated_at": now, "title": session["title"] or title or ""}

        def push(pipe: redis.client.Pipeline, before: dict | None, after: dict | None) -> None:
            if before and before.get("messages"):  # a record written before the list: its messages go first
                pipe.lpush(kept, *(_dumps(m) for m in reversed(before["messages"])))
            if messages:
                pipe.rpush(kept, *(_dumps(m) for m in messages))

        self._rewrite(self._key(tenant_id, "session", session_id), session_id, stamp, self._session_index, push)

    def delete_session(self, tenant_id: str, session_id: str) -> bool:
        kept = self._key(tenant_id, "session_messages", session_id)
        before, _ = self._rewrite(self._key(tenant_id, "session", session_id), session_id, lambda _: None,
                                  self._session_index, lambda pipe, before, after: pipe.delete(kept))
        return before is not None

    def _session_index(self, session: dict) -> dict[str, float]:
        return {self._key(session["tenant_id"], "sessions", session["user_id"]): session["updated_at"]}

    # -- atomic writes --------------------------------------------------------------
    def _watched(self, key: str, write: Callable[[redis.client.Pipeline, str | None], T]) -> T:
        """``write(pipe, value at key)`` under WATCH of ``key``: it checks, calls ``pipe.multi()`` and queues
        its writes (or none); if ``key`` changed before EXEC it runs again, so its checks held for what it wrote."""
        with self._redis.pipeline() as pipe:
            while True:
                try:
                    pipe.watch(key)
                    value = write(pipe, pipe.get(key))
                    if pipe.explicit_transaction:
                        pipe.execute()
                    return value
                except redis.WatchError:
                    continue

    def _rewrite(self, key: str, member: str, change: Callable[[dict | None], dict | None],
                 index: Callable[[dict], dict[str, float]],
                 also: Callable[[redis.client.Pipeline, dict | None, dict | None], Any] | None = None,
                 ) -> tuple[dict | None, dict | None]:
        """Replace the record at ``key`` by ``change(record)`` (None: delete it) and move ``member`` from the
        sorted sets ``index`` gives for the old record to those it gives for the new, atomically; ``also(pipe,
        before, after)`` queues more writes into the same transaction (a session's messages)."""
        def write(pipe: redis.client.Pipeline, raw: str | None) -> tuple[dict | None, dict | None]:
            before = json.loads(raw) if raw is not None else None
            after = change(before)
            if before is None and after is None:
                return None, None
            pipe.multi()
            for old in index(before) if before is not None else ():
                pipe.zrem(old, member)
            if after is None:
                pipe.delete(key)
            else:
                pipe.set(key, _dumps(after))
                for new, score in index(after).items():
                    pipe.zadd(new, {member: score})
            if also is not None:
                also(pipe, before, after)
            return before, after

        return self._watched(key, write)

    # -- pending work -----------------------------------------------------------------
    def add_work(self, item: WorkItem) -> bool:
        added = self._redis.hsetnx(self._key(item.tenant_id, "work", item.kind), item.key,
                                   json.dumps(item.to_dict(), default=str))
        if added:
            self._redis.sadd(f"{self._prefix}:work:{item.kind}", item.tenant_id)
        return bool(added)

    def pending_work(self, kind: str, *, limit: int = 100) -> list[WorkItem]:
        items: list[WorkItem] = []
        for tenant in self._redis.smembers(f"{self._prefix}:work:{kind}"):
            items += [WorkItem(**json.loads(raw)) for raw in self._redis.hvals(self._key(tenant, "work", kind))]
        return sorted(items, key=lambda item: item.created_at)[:limit]

    def retry_work(self, tenant_id: str, kind: str, key: str) -> int:
        work = self._key(tenant_id, "work", kind)
        with self._redis.pipeline() as pipe:
            while True:
                try:
                    pipe.watch(work)
                    raw = pipe.hget(work, key)
                    if raw is None:
                        return 0
                    item = json.loads(raw)
                    item["attempts"] += 1
                    pipe.multi()
                    pipe.hset(work, key, json.dumps(item, default=str))
                    pipe.execute()
                    return item["attempts"]
                except redis.WatchError:
                    continue

    def finish_work(self, tenant_id: str, kind: str, key: str) -> bool:
        return bool(self._redis.hdel(self._key(tenant_id, "work", kind), key))

    # -- whiteboards ----------------------------------------------------------------
    def put_whiteboard_entry(self, entry: WhiteboardEntry) -> tuple[WhiteboardEntry, bool]:
        board = self._key(entry.tenant_id, "whiteboard", entry.board_id)
        with self._redis.pipeline() as pipe:
            while True:
                try:
                    pipe.watch(board)
                    raw = pipe.hget(board, entry.entry_id)
                    stored = entry
                    if raw is not None:
                        old = json.loads(raw)
                        stored = replace(entry, created_at=old["created_at"], author=old["author"] or entry.author)
                    pipe.multi()
                    pipe.hset(board, entry.entry_id, json.dumps(stored.to_dict()))
                    pipe.execute()
                    return stored, raw is None
                except redis.WatchError:
                    continue

    def whiteboard(self, tenant_id: str, board_id: str) -> list[WhiteboardEntry]:
        raw = self._redis.hvals(self._key(tenant_id, "whiteboard", board_id))
        return sorted((WhiteboardEntry(**json.loads(r)) for r in raw), key=lambda e: (e.created_at, e.entry_id))

    def remove_whiteboard_entry(self, tenant_id: str, board_id: str, entry_id: str) -> bool:
        return bool(self._redis.hdel(self._key(tenant_id, "whiteboard", board_id), entry_id))
    # -- chat channels ----------------------------------------------------------------
    def record_channel_message(self, message: ChannelMessage) -> bool:
        keys = self._channel_keys(message.tenant_id, message.channel)
        if not self._redis.hsetnx(keys["msg"], message.message_key, _dumps(message.to_dict())):
            return False
        if message.state in CHANNEL_OPEN_STATES:
            self._redis.zadd(keys["open"], {message.message_key: message.created_at})
        return True

    def get_channel_message(self, tenant_id: str, channel: str, message_key: str) -> ChannelMessage | None:
        raw = self._redis.hget(self._channel_keys(tenant_id, channel)["msg"], message_key)
        return ChannelMessage(**json.loads(raw)) if raw is not None else None

    def update_channel_message(self, tenant_id: str, channel: str, message_key: str, state: str, *,
                               reply: dict | None = None) -> bool:
        keys = self._channel_keys(tenant_id, channel)
        with self._redis.pipeline() as pipe:
            while True:
                try:
                    pipe.watch(keys["msg"])
                    raw = pipe.hget(keys["msg"], message_key)
                    if raw is None:
                        pipe.unwatch()
                        return False
                    kept = json.loads(raw)
                    kept.update(state=state, updated_at=time.time())
                    if reply is not None:
                        kept["reply"] = reply
                    pipe.multi()
                    pipe.hset(keys["msg"], message_key, _dumps(kept))
                    if state in CHANNEL_OPEN_STATES:
                        pipe.zadd(keys["open"], {message_key: kept["created_at"]})
                    else:
                        pipe.zrem(keys["open"], message_key)
                    pipe.execute()
                    return True
                except redis.WatchError:
                    continue

    def open_channel_messages(self, tenant_id: str, channel: str, *, limit: int = 1000) -> list[ChannelMessage]:
        keys = self._channel_keys(tenant_id, channel)
        ids = self._redis.zrange(keys["open"], 0, limit - 1) if limit > 0 else []
        raws = self._redis.hmget(keys["msg"], ids) if ids else []
        return [ChannelMessage(**json.loads(raw)) for raw in raws if raw is not None]

    def record_channel_delivery(self, delivery: ChannelDelivery) -> ChannelDelivery:
        keys = self._channel_keys(delivery.tenant_id, delivery.channel)
        pipe = self._redis.pipeline()
        pipe.hset(keys["out"], delivery.delivery_id, _dumps(delivery.to_dict()))
        pipe.zadd(keys["outs"], {delivery.delivery_id: delivery.created_at})
        for state in DELIVERY_STATES:  # one entry is in its state's set only
            pipe.zrem(f"{keys['outs']}:{state}", delivery.delivery_id)
        pipe.zadd(f"{keys['outs']}:{delivery.state}", {delivery.delivery_id: delivery.created_at})
        pipe.execute()
        return delivery

    def pending_channel_deliveries(self, tenant_id: str, channel: str, *,
                                   limit: int = 1000) -> list[ChannelDelivery]:
        keys = self._channel_keys(tenant_id, channel)
        ids = self._redis.zrange(f"{keys['outs']}:{DELIVERY_PENDING}", 0, limit - 1) if limit > 0 else []
        raws = self._redis.hmget(keys["out"], ids) if ids else []
        return [ChannelDelivery(**json.loads(raw)) for raw in raws if raw is not None]

    def count_channel_deliveries(self, tenant_id: str, channel: str) -> dict[str, int]:
        keys = self._channel_keys(tenant_id, channel)
        pipe = self._redis.pipeline()
        for state in DELIVERY_STATES:
            pipe.zcard(f"{keys['outs']}:{state}")
        return {state: n for state, n in zip(DELIVERY_STATES, pipe.execute()) if n}

    def put_channel_state(self, state: ChannelState) -> None:
        self._redis.hset(f"{self._prefix}:chan_states", state.channel, _dumps(state.to_dict()))

    def channel_states(self) -> dict[str, ChannelState]:
        raws = self._redis.hgetall(f"{self._prefix}:chan_states")
        return {name: ChannelState(**json.loads(raw)) for name, raw in sorted(raws.items())}

    def channel_deliveries(self, tenant_id: str, channel: str, *, ref: str | None = None,
                           limit: int = 1000) -> list[ChannelDelivery]:
        keys = self._channel_keys(tenant_id, channel)
        ids = self._redis.zrange(keys["outs"], 0, -1)
        raws = self._redis.hmget(keys["out"], ids) if ids else []
        found = [ChannelDelivery(**json.loads(raw)) for raw in raws if raw is not None]
        return [d for d in found if ref is None or d.ref == ref][:limit]

    def _channel_keys(self, tenant_id: str, channel: str) -> dict[str, str]:
        return {part: self._key(tenant_id, "chan", channel, part) for part in ("msg", "open", "out", "outs")}

    # -- tools a person always allows ---------------------------------------------------
    def allow_tool(self, tenant_id: str, user_id: str, tool: str) -> None:
        self._redis.sadd(self._key(tenant_id, "allowed_tools", user_id), tool)

    def allowed_tools(self, tenant_id: str, user_id: str) -> set[str]:
        return set(self._redis.smembers(self._key(tenant_id, "allowed_tools", user_id)))

    def close(self) -> None:
        self._redis.close()


def _pending(task: TaskRecord, event: PendingEvent, now: float) -> Event:
    """The event to write with ``task``; its id is given when it is written."""
    return Event(0, event.event_type, task.task_id, task.tenant_id, task.user_id, event.source, dict(event.data), now)


def _event_body(event: Event) -> str:
    """An event as kept: its id is the hash field, its tenant in the key."""
    return _dumps({k: v for k, v in asdict(event).items() if k not in ("event_id", "tenant_id")})


def _session_record(session: dict) -> dict:
    """A session as its record keeps it: without its messages, which are in their own list."""
    return {k: v for k, v in session.items() if k != "messages"}


def _session(record: dict, kept: list[str]) -> Session:
    return Session(**{**record, "messages": _messages(record, kept)})


def _messages(record: dict, kept: list[str]) -> list[dict]:
    """A session's messages from its record and (part of) its list: a record written before the list
    existed carries messages of its own, older than any in the list."""
    return [*record.get("messages", ()), *(json.loads(m) for m in kept)]


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)
