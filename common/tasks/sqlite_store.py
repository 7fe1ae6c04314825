"""SQLite backend of the TaskStore: the embedded default.

One database file is shared by all actor processes on a machine, so the connection runs in
WAL mode with a busy timeout: readers never block the writer and concurrent writers wait
instead of failing. Each process (each store object) has its own connection.

A session's messages are rows of ``session_messages``, numbered by ``seq`` within the session,
so a turn inserts two rows and reads only the last few, whatever the conversation's length.
Files written before kept them as one JSON list in ``sessions.messages``; opening such a file
moves them to the table (``_move_session_messages``). The column stays, empty, for those files.
"""

from __future__ import annotations

import json
import logging
import sqlite3
import threading
import time
from dataclasses import replace
from itertools import groupby
from pathlib import Path
from typing import Any, Iterable

from common.sqlite import immediate, open_sqlite
from common.tasks.models import (
    CHANNEL_OPEN_STATES, DELIVERY_PENDING, MUTABLE_FIELDS, PAUSED_STATES, TRANSITIONS, can_move, ChannelDelivery,
    ChannelMessage, ChannelState, Draft, Event,
    InvalidTransition, Notification, PendingEvent, Session, SessionNotFound, Standing, TaskChanged, TaskNotFound,
    TaskRecord, WhiteboardEntry, WorkItem,
)
from common.tasks.store import TaskStore

log = logging.getLogger("flora.store")

SCHEMA_VERSION = 5
SCHEMA = """
CREATE TABLE IF NOT EXISTS tasks (
    tenant_id TEXT NOT NULL,
    task_id TEXT NOT NULL,
    user_id TEXT NOT NULL,
    state TEXT NOT NULL,
    content TEXT NOT NULL,
    msg_id TEXT NOT NULL DEFAULT '',
    intent TEXT NOT NULL DEFAULT '',
    capability TEXT NOT NULL DEFAULT '',
    parameters TEXT NOT NULL DEFAULT '{}',
    missing TEXT NOT NULL DEFAULT '[]',
    result TEXT NOT NULL DEFAULT 'null',
    error TEXT NOT NULL DEFAULT '',
    approved INTEGER NOT NULL DEFAULT 0,
    meta TEXT NOT NULL DEFAULT '{}',
    created_at REAL NOT NULL,
    updated_at REAL NOT NULL,
    PRIMARY KEY (tenant_id, task_id)
);
CREATE INDEX IF NOT EXISTS tasks_by_user ON tasks (tenant_id, user_id, state, updated_at);
CREATE INDEX IF NOT EXISTS tasks_by_state ON tasks (state, updated_at);
CREATE TABLE IF NOT EXISTS drafts (
    tenant_id TEXT NOT NULL,
    draft_id TEXT NOT NULL,
    user_id TEXT NOT NULL,
    kind TEXT NOT NULL,
    content TEXT NOT NULL,
    options TEXT NOT NULL DEFAULT '[]',
    pending_answer TEXT NOT NULL DEFAULT '',
    open INTEGER NOT NULL DEFAULT 1,
    created_at REAL NOT NULL,
    PRIMARY KEY (tenant_id, draft_id)
);
CREATE INDEX IF NOT EXISTS drafts_by_user ON drafts (tenant_id, user_id, open, created_at);
CREATE TABLE IF NOT EXISTS events (
    event_id INTEGER PRIMARY KEY AUTOINCREMENT,
    event_type TEXT NOT NULL,
    task_id TEXT NOT NULL,
    tenant_id TEXT NOT NULL,
    user_id TEXT NOT NULL,
    source TEXT NOT NULL,
    data TEXT NOT NULL,
    created_at REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS events_by_task ON events (tenant_id, task_id, event_id);
CREATE INDEX IF NOT EXISTS events_by_user ON events (tenant_id, user_id, event_id);
CREATE TABLE IF NOT EXISTS notifications (
    tenant_id TEXT NOT NULL,
    notification_id TEXT NOT NULL,
    user_id TEXT NOT NULL,
    message TEXT NOT NULL,
    kind TEXT NOT NULL,
    task_id TEXT NOT NULL DEFAULT '',
    loop_task_id TEXT NOT NULL DEFAULT '',
    channel TEXT NOT NULL DEFAULT '',
    data TEXT NOT NULL DEFAULT '{}',
    read INTEGER NOT NULL DEFAULT 0,
    created_at REAL NOT NULL,
    PRIMARY KEY (tenant_id, notification_id)
);
CREATE INDEX IF NOT EXISTS notifications_by_user ON notifications (tenant_id, user_id, read, created_at);
CREATE TABLE IF NOT EXISTS sessions (
    tenant_id TEXT NOT NULL,
    session_id TEXT NOT NULL,
    user_id TEXT NOT NULL,
    title TEXT NOT NULL DEFAULT '',
    messages TEXT NOT NULL DEFAULT '[]',
    created_at REAL NOT NULL,
    updated_at REAL NOT NULL,
    PRIMARY KEY (tenant_id, session_id)
);
CREATE INDEX IF NOT EXISTS sessions_by_user ON sessions (tenant_id, user_id, updated_at);
CREATE TABLE IF NOT EXISTS session_messages (
    tenant_id TEXT NOT NULL,
    session_id TEXT NOT NULL,
    seq INTEGER NOT NULL,
    body TEXT NOT NULL,
    PRIMARY KEY (tenant_id, session_id, seq)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS work (
    tenant_id TEXT NOT NULL,
    kind TEXT NOT NULL,
    key TEXT NOT NULL,
    payload TEXT NOT NULL,
    created_at REAL NOT NULL,
    attempts INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (tenant_id, kind, key)
);
CREATE INDEX IF NOT EXISTS work_by_kind ON work (kind, created_at);
CREATE TABLE IF NOT EXISTS whiteboard (
    tenant_id TEXT NOT NULL,
    board_id TEXT NOT NULL,
    entry_id TEXT NOT NULL,
    section TEXT NOT NULL,
    text TEXT NOT NULL,
    done INTEGER NOT NULL DEFAULT 0,
    author TEXT NOT NULL DEFAULT '',
    created_at REAL NOT NULL,
    updated_at REAL NOT NULL,
    PRIMARY KEY (tenant_id, board_id, entry_id)
);
CREATE TABLE IF NOT EXISTS channel_messages (
    tenant_id TEXT NOT NULL,
    channel TEXT NOT NULL,
    message_key TEXT NOT NULL,
    payload TEXT NOT NULL,
    state TEXT NOT NULL,
    reply TEXT NOT NULL DEFAULT 'null',
    created_at REAL NOT NULL,
    updated_at REAL NOT NULL,
    PRIMARY KEY (tenant_id, channel, message_key)
);
CREATE INDEX IF NOT EXISTS channel_messages_open ON channel_messages (tenant_id, channel, state, created_at);
CREATE TABLE IF NOT EXISTS channel_deliveries (
    tenant_id TEXT NOT NULL,
    channel TEXT NOT NULL,
    delivery_id TEXT NOT NULL,
    target TEXT NOT NULL,
    kind TEXT NOT NULL,
    state TEXT NOT NULL,
    ref TEXT NOT NULL DEFAULT '',
    attempts INTEGER NOT NULL DEFAULT 0,
    error TEXT NOT NULL DEFAULT '',
    created_at REAL NOT NULL,
    payload TEXT NOT NULL DEFAULT '{}',
    pieces_sent INTEGER NOT NULL DEFAULT 0,
    next_attempt_at REAL NOT NULL DEFAULT 0,
    updated_at REAL NOT NULL DEFAULT 0,
    PRIMARY KEY (tenant_id, channel, delivery_id)
);
CREATE INDEX IF NOT EXISTS channel_deliveries_by_ref ON channel_deliveries (tenant_id, channel, ref, created_at);
CREATE TABLE IF NOT EXISTS channel_states (
    channel TEXT PRIMARY KEY,
    state TEXT NOT NULL,
    detail TEXT NOT NULL DEFAULT '',
    node TEXT NOT NULL DEFAULT '',
    updated_at REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS allowed_tools (
    tenant_id TEXT NOT NULL,
    user_id TEXT NOT NULL,
    tool TEXT NOT NULL,
    created_at REAL NOT NULL,
    PRIMARY KEY (tenant_id, user_id, tool)
);
"""
# Columns added after a file was first created, applied to older files on open.
MIGRATIONS = (("tasks", "meta", "TEXT NOT NULL DEFAULT '{}'"),
              # the outbox: what to send, kept with the record of sending it
              ("channel_deliveries", "payload", "TEXT NOT NULL DEFAULT '{}'"),
              ("channel_deliveries", "pieces_sent", "INTEGER NOT NULL DEFAULT 0"),
              ("channel_deliveries", "next_attempt_at", "REAL NOT NULL DEFAULT 0"),
              ("channel_deliveries", "updated_at", "REAL NOT NULL DEFAULT 0"))

_JSON_FIELDS = ("parameters", "missing", "result", "meta")
_TASK_COLUMNS = ("task_id", "tenant_id", "user_id", "state", "content", "msg_id", "intent", "capability",
                 "parameters", "missing", "result", "error", "approved", "meta", "created_at", "updated_at")
_NOTE_COLUMNS = ("notification_id", "tenant_id", "user_id", "message", "kind", "task_id", "loop_task_id",
                 "channel", "data", "read", "created_at")


class SQLiteTaskStore(TaskStore):
    def __init__(self, path: str | Path):
        self.path = Path(path)
        self._lock = threading.Lock()
        self._db = open_sqlite(path)
        with self._lock:
            self._db.executescript(SCHEMA)
            for table, column, declaration in MIGRATIONS:
                have = {row["name"] for row in self._db.execute(f"PRAGMA table_info({table})")}
                if column not in have:
                    self._db.execute(f"ALTER TABLE {table} ADD COLUMN {column} {declaration}")
            _move_session_messages(self._db)
            self._db.execute(f"PRAGMA user_version={SCHEMA_VERSION}")

    # -- tasks ---------------------------------------------------------------------
    def create_recorded(self, task: TaskRecord, event: PendingEvent | None) -> tuple[TaskRecord, Event | None]:
        row = _encode(task.to_dict())
        cols = ", ".join(_TASK_COLUMNS)
        marks = ", ".join("?" for _ in _TASK_COLUMNS)
        with self._lock, immediate(self._db):
            self._db.execute(f"INSERT INTO tasks ({cols}) VALUES ({marks})", [row[c] for c in _TASK_COLUMNS])
            written = self._insert_event(task, event) if event else None
        return task, written

    def get_task(self, tenant_id: str, task_id: str) -> TaskRecord | None:
        with self._lock:
            row = self._db.execute("SELECT * FROM tasks WHERE tenant_id=? AND task_id=?",
                                   (tenant_id, task_id)).fetchone()
        return _task(row) if row else None

    def transition_recorded(self, tenant_id: str, task_id: str, state: str, event: PendingEvent | None, *,
                            expect: Iterable[str] | None = None, unchanged_since: float | None = None,
                            **changes: Any) -> tuple[TaskRecord, Event | None]:
        # the move is one UPDATE that only a task in a state it may leave from (and, with
        # unchanged_since, not written since) matches, returning the task as written: the change
        # and its event are two statements in one transaction
        allowed = set(expect) if expect is not None else None
        sources = [s for s in TRANSITIONS if can_move(s, state) and (allowed is None or s in allowed)]
        with self._lock, immediate(self._db):
            row = self._write(tenant_id, task_id, {**changes, "state": state}, states=sources,
                              unchanged_since=unchanged_since)
            if row is None:
                current = self._db.execute("SELECT state, updated_at FROM tasks WHERE tenant_id=? AND task_id=?",
                                           (tenant_id, task_id)).fetchone()
                if current is None:
                    raise TaskNotFound(task_id)
                if unchanged_since is not None and current["state"] in sources:  # written since: only that held it
                    raise TaskChanged(task_id, current["state"], state)
                raise InvalidTransition(task_id, current["state"], state)
            task = _task(row)
            written = self._insert_event(task, event) if event else None
        return task, written

    def _insert_event(self, task: TaskRecord, event: PendingEvent) -> Event:
        now = time.time()
        cur = self._db.execute(
            "INSERT INTO events (event_type, task_id, tenant_id, user_id, source, data, created_at)"
            " VALUES (?, ?, ?, ?, ?, ?, ?)",
            (event.event_type, task.task_id, task.tenant_id, task.user_id, event.source,
             json.dumps(event.data, default=str), now))
        return Event(cur.lastrowid, event.event_type, task.task_id, task.tenant_id, task.user_id, event.source,
                     dict(event.data), now)

    def update_task(self, tenant_id: str, task_id: str, **changes: Any) -> TaskRecord:
        if "state" in changes:
            raise ValueError("use transition() to change a task's state")
        with self._lock:
            row = self._write(tenant_id, task_id, changes)
        if row is None:
            raise TaskNotFound(task_id)
        return _task(row)

    def _write(self, tenant_id: str, task_id: str, changes: dict, states: list[str] | None = None,
               unchanged_since: float | None = None) -> sqlite3.Row | None:
        """Apply ``changes`` in one statement (to a task in one of ``states``, last written at
        ``unchanged_since``, when given); the task as written, None if no such task (so)."""
        unknown = set(changes) - MUTABLE_FIELDS - {"state"}
        if unknown:
            raise ValueError(f"unknown task fields: {sorted(unknown)}")
        encoded = _encode({**changes, "updated_at": time.time()})
        assignments = ", ".join(f"{k}=?" for k in encoded)
        where, args = "tenant_id=? AND task_id=?", [tenant_id, task_id]
        if states is not None:
            where += f" AND state IN ({', '.join('?' for _ in states)})" if states else " AND 0"
            args += states
        if unchanged_since is not None:
            where += " AND updated_at=?"
            args.append(unchanged_since)
        return self._db.execute(f"UPDATE tasks SET {assignments} WHERE {where} RETURNING *",
                                [*encoded.values(), *args]).fetchone()

    def list_tasks(self, tenant_id: str, *, user_id: str | None = None,
                   states: Iterable[str] | None = None, limit: int = 100) -> list[TaskRecord]:
        sql, args = "SELECT * FROM tasks WHERE tenant_id=?", [tenant_id]
        if user_id is not None:
            sql += " AND user_id=?"
            args.append(user_id)
        if states is not None:
            states = list(states)
            sql += f" AND state IN ({', '.join('?' for _ in states)})"
            args += states
        sql += " ORDER BY updated_at DESC, rowid DESC LIMIT ?"
        args.append(limit)
        with self._lock:
            rows = self._db.execute(sql, args).fetchall()
        return [_task(r) for r in rows]

    def count_by_state(self, tenant_id: str | None = None) -> dict[str, int]:
        sql, args = "SELECT state, COUNT(*) FROM tasks", []
        if tenant_id is not None:
            sql, args = sql + " WHERE tenant_id=?", [tenant_id]
        with self._lock:
            rows = self._db.execute(sql + " GROUP BY state", args).fetchall()
        return {state: n for state, n in rows}

    def tenants(self) -> list[str]:
        with self._lock:
            return [row[0] for row in self._db.execute("SELECT DISTINCT tenant_id FROM tasks ORDER BY tenant_id")]

    # -- drafts --------------------------------------------------------------------
    def unfinished_tasks(self, states: Iterable[str], *, updated_before: float, limit: int = 10_000) -> list[TaskRecord]:
        states = list(states)
        with self._lock:
            rows = self._db.execute(f"SELECT * FROM tasks WHERE state IN ({', '.join('?' for _ in states)}) "
                                    "AND updated_at < ? ORDER BY updated_at LIMIT ?",
                                    [*states, updated_before, limit]).fetchall()
        return [_task(r) for r in rows]

    def save_draft(self, draft: Draft) -> Draft:
        with self._lock:
            self._db.execute(
                "INSERT OR REPLACE INTO drafts (tenant_id, draft_id, user_id, kind, content, options,"
                " pending_answer, open, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (draft.tenant_id, draft.draft_id, draft.user_id, draft.kind, draft.content,
                 json.dumps(draft.options), draft.pending_answer, int(draft.open), draft.created_at))
        return draft

    def open_draft(self, tenant_id: str, user_id: str) -> Draft | None:
        with self._lock:
            row = self._db.execute(
                "SELECT * FROM drafts WHERE tenant_id=? AND user_id=? AND open=1"
                " ORDER BY created_at DESC, rowid DESC LIMIT 1", (tenant_id, user_id)).fetchone()
        if row is None:
            return None
        return Draft(draft_id=row["draft_id"], tenant_id=row["tenant_id"], user_id=row["user_id"],
                     kind=row["kind"], content=row["content"], options=json.loads(row["options"]),
                     pending_answer=row["pending_answer"], open=bool(row["open"]), created_at=row["created_at"])

    def close_draft(self, tenant_id: str, draft_id: str) -> None:
        with self._lock:
            self._db.execute("UPDATE drafts SET open=0 WHERE tenant_id=? AND draft_id=?", (tenant_id, draft_id))

    # -- events --------------------------------------------------------------------
    def append_event(self, *, event_type: str, task_id: str, tenant_id: str, user_id: str,
                     source: str, data: dict) -> Event:
        now = time.time()
        with self._lock:
            cur = self._db.execute(
                "INSERT INTO events (event_type, task_id, tenant_id, user_id, source, data, created_at)"
                " VALUES (?, ?, ?, ?, ?, ?, ?)",
                (event_type, task_id, tenant_id, user_id, source, json.dumps(data, default=str), now))
        return Event(cur.lastrowid, event_type, task_id, tenant_id, user_id, source, data, now)

    def events(self, tenant_id: str, *, task_id: str | None = None, user_id: str | None = None,
               event_type: str | None = None, since_id: int = 0, limit: int = 1000) -> list[Event]:
        sql, args = "SELECT * FROM events WHERE tenant_id=? AND event_id>?", [tenant_id, since_id]
        for column, value in (("task_id", task_id), ("user_id", user_id), ("event_type", event_type)):
            if value is not None:
                sql += f" AND {column}=?"
                args.append(value)
        with self._lock:
            rows = self._db.execute(sql + " ORDER BY event_id LIMIT ?", [*args, limit]).fetchall()
        return [Event(r["event_id"], r["event_type"], r["task_id"], r["tenant_id"], r["user_id"],
                      r["source"], json.loads(r["data"]), r["created_at"]) for r in rows]

    def last_event_id(self) -> int:
        with self._lock:
            return self._db.execute("SELECT COALESCE(MAX(event_id), 0) FROM events").fetchone()[0]

    # -- notifications ----------------------------------------------------------
    def add_notification(self, notification: Notification) -> Notification:
        row = {**notification.to_dict(), "data": json.dumps(notification.data, default=str),
               "read": int(notification.read)}
        with self._lock, immediate(self._db):
            self._db.execute(f"INSERT INTO notifications ({', '.join(_NOTE_COLUMNS)}) VALUES "
                             f"({', '.join('?' for _ in _NOTE_COLUMNS)})", [row[c] for c in _NOTE_COLUMNS])
        return notification

    def notifications(self, tenant_id: str, user_id: str, *, unread_only: bool = True,
                      limit: int = 100) -> list[Notification]:
        sql = "SELECT * FROM notifications WHERE tenant_id=? AND user_id=?"
        if unread_only:
            sql += " AND read=0"
        with self._lock:
            rows = self._db.execute(sql + " ORDER BY created_at, rowid LIMIT ?", (tenant_id, user_id, limit)).fetchall()
        return [Notification(**{**{c: r[c] for c in _NOTE_COLUMNS}, "data": json.loads(r["data"]),
                                "read": bool(r["read"])}) for r in rows]

    def mark_notifications_read(self, tenant_id: str, user_id: str, notification_ids: list[str]) -> int:
        if not notification_ids:
            return 0
        marks = ", ".join("?" for _ in notification_ids)
        with self._lock, immediate(self._db):
            cur = self._db.execute(f"UPDATE notifications SET read=1 WHERE tenant_id=? AND user_id=? AND read=0 "
                                   f"AND notification_id IN ({marks})", [tenant_id, user_id, *notification_ids])
        return cur.rowcount

    # -- sessions -----------------------------------------------------------------
    def save_session(self, session: Session) -> Session:
        with self._lock, immediate(self._db):
            self._db.execute("INSERT OR REPLACE INTO sessions (tenant_id, session_id, user_id, title, created_at, "
                             "updated_at) VALUES (?, ?, ?, ?, ?, ?)",
                             (session.tenant_id, session.session_id, session.user_id, session.title,
                              session.created_at, session.updated_at))
            self._db.execute("DELETE FROM session_messages WHERE tenant_id=? AND session_id=?",
                             (session.tenant_id, session.session_id))
            _add_messages(self._db, session.tenant_id, session.session_id, session.messages)
        return session

    def get_session(self, tenant_id: str, session_id: str) -> Session | None:
        # one statement: the session and its messages as of one moment
        with self._lock:
            rows = self._db.execute("SELECT s.*, m.body FROM sessions s LEFT JOIN session_messages m "
                                    "ON m.tenant_id=s.tenant_id AND m.session_id=s.session_id "
                                    "WHERE s.tenant_id=? AND s.session_id=? ORDER BY m.seq",
                                    (tenant_id, session_id)).fetchall()
        return _session(rows) if rows else None

    def list_sessions(self, tenant_id: str, user_id: str, *, limit: int = 100) -> list[Session]:
        with self._lock:
            rows = self._db.execute("WITH chosen AS (SELECT * FROM sessions WHERE tenant_id=? AND user_id=? "
                                    "ORDER BY updated_at DESC LIMIT ?) "
                                    "SELECT s.*, m.body FROM chosen s LEFT JOIN session_messages m "
                                    "ON m.tenant_id=s.tenant_id AND m.session_id=s.session_id "
                                    "ORDER BY s.updated_at DESC, s.session_id, m.seq",
                                    (tenant_id, user_id, limit)).fetchall()
        return [_session(list(group)) for _, group in groupby(rows, key=lambda r: r["session_id"])]

    def standing(self, tenant_id: str, user_id: str, session_id: str, limit: int) -> Standing:
        # one statement, on every message: one row without a session (owner NULL), else one per
        # message newest first (none: one, body NULL), each with the person's two flags
        paused = sorted(PAUSED_STATES)
        marks = ", ".join("?" for _ in paused)
        with self._lock:
            rows = self._db.execute(
                "SELECT s.user_id, m.body, "
                "EXISTS(SELECT 1 FROM drafts WHERE tenant_id=? AND user_id=? AND open=1) AS open_draft, "
                f"EXISTS(SELECT 1 FROM tasks WHERE tenant_id=? AND user_id=? AND state IN ({marks})) AS paused "
                "FROM (SELECT 1) LEFT JOIN sessions s ON s.tenant_id=? AND s.session_id=? LEFT JOIN "
                "(SELECT seq, body FROM session_messages WHERE tenant_id=? AND session_id=? ORDER BY seq DESC LIMIT ?) m "
                "ON s.user_id IS NOT NULL ORDER BY m.seq DESC",
                (tenant_id, user_id, tenant_id, user_id, *paused, tenant_id, session_id, tenant_id, session_id,
                 max(limit, 0))).fetchall()
        first = rows[0]
        return Standing(owner=first["user_id"],
                         messages=[json.loads(r["body"]) for r in reversed(rows) if r["body"] is not None],
                         open_draft=bool(first["open_draft"]), paused=bool(first["paused"]))

    def append_to_session(self, tenant_id: str, session_id: str, messages: list[dict], *,
                          title: str | None = None, user_id: str | None = None) -> None:
        now = time.time()
        with self._lock, immediate(self._db):
            if user_id is None:
                cur = self._db.execute("UPDATE sessions SET updated_at=?, title=CASE WHEN title='' THEN ? ELSE title "
                                       "END WHERE tenant_id=? AND session_id=?",
                                       (now, title or "", tenant_id, session_id))
                if cur.rowcount == 0:
                    raise SessionNotFound(session_id)
            else:
                self._db.execute("INSERT INTO sessions (tenant_id, session_id, user_id, title, created_at, updated_at) "
                                 "VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (tenant_id, session_id) DO UPDATE SET "
                                 "updated_at=excluded.updated_at, title=CASE WHEN title='' THEN excluded.title "
                                 "ELSE title END", (tenant_id, session_id, user_id, title or "", now, now))
            _add_messages(self._db, tenant_id, session_id, messages)

    def delete_session(self, tenant_id: str, session_id: str) -> bool:
        with self._lock, immediate(self._db):
            cur = self._db.execute("DELETE FROM sessions WHERE tenant_id=? AND session_id=?", (tenant_id, session_id))
            self._db.execute("DELETE FROM session_messages WHERE tenant_id=? AND session_id=?",
                             (tenant_id, session_id))
        return cur.rowcount > 0

    # -- pending work -----------------------------------------------------------------
    def add_work(self, item: WorkItem) -> bool:
        with self._lock, immediate(self._db):
            cur = self._db.execute("INSERT OR IGNORE INTO work (tenant_id, kind, key, payload, created_at, attempts) "
                                   "VALUES (?, ?, ?, ?, ?, ?)", (item.tenant_id, item.kind, item.key,
                                                                 json.dumps(item.payload, default=str),
                                                                 item.created_at, item.attempts))
        return cur.rowcount > 0

    def pending_work(self, kind: str, *, limit: int = 100) -> list[WorkItem]:
        with self._lock:
            rows = self._db.execute("SELECT * FROM work WHERE kind=? ORDER BY created_at, rowid LIMIT ?",
                                    (kind, limit)).fetchall()
        return [WorkItem(r["tenant_id"], r["kind"], r["key"], json.loads(r["payload"]), r["created_at"],
                         r["attempts"]) for r in rows]

    def retry_work(self, tenant_id: str, kind: str, key: str) -> int:
        with self._lock, immediate(self._db):
            self._db.execute("UPDATE work SET attempts=attempts+1 WHERE tenant_id=? AND kind=? AND key=?",
                             (tenant_id, kind, key))
            row = self._db.execute("SELECT attempts FROM work WHERE tenant_id=? AND kind=? AND key=?",
                                   (tenant_id, kind, key)).fetchone()
        return row["attempts"] if row else 0

    def finish_work(self, tenant_id: str, kind: str, key: str) -> bool:
        with self._lock, immediate(self._db):
            cur = self._db.execute("DELETE FROM work WHERE tenant_id=? AND kind=? AND key=?", (tenant_id, kind, key))
        return cur.rowcount > 0

    # -- whiteboards ----------------------------------------------------------------
    def put_whiteboard_entry(self, entry: WhiteboardEntry) -> tuple[WhiteboardEntry, bool]:
        with self._lock, immediate(self._db):
            old = self._db.execute("SELECT * FROM whiteboard WHERE tenant_id=? AND board_id=? AND entry_id=?",
                                   (entry.tenant_id, entry.board_id, entry.entry_id)).fetchone()
            if old is not None:
                entry = replace(entry, created_at=old["created_at"], author=old["author"] or entry.author)
            self._db.execute("INSERT OR REPLACE INTO whiteboard (tenant_id, board_id, entry_id, section, text, done, "
                             "author, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                             (entry.tenant_id, entry.board_id, entry.entry_id, entry.section, entry.text,
                              int(entry.done), entry.author, entry.created_at, entry.updated_at))
        return entry, old is None

    def whiteboard(self, tenant_id: str, board_id: str) -> list[WhiteboardEntry]:
        with self._lock:
            rows = self._db.execute("SELECT * FROM whiteboard WHERE tenant_id=? AND board_id=? "
                                    "ORDER BY created_at, rowid", (tenant_id, board_id)).fetchall()
        return [WhiteboardEntry(**{**{k: r[k] for k in r.keys()}, "done": bool(r["done"])}) for r in rows]

    def remove_whiteboard_entry(self, tenant_id: str, board_id: str, entry_id: str) -> bool:
        with self._lock, immediate(self._db):
            cur = self._db.execute("DELETE FROM whiteboard WHERE tenant_id=? AND board_id=? AND entry_id=?",
                                   (tenant_id, board_id, entry_id))
        return cur.rowcount > 0

    # -- chat channels ----------------------------------------------------------------
    def record_channel_message(self, message: ChannelMessage) -> bool:
        with self._lock, immediate(self._db):
            cur = self._db.execute(
                "INSERT OR IGNORE INTO channel_messages (tenant_id, channel, message_key, payload, state, reply, "
                "created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (message.tenant_id, message.channel, message.message_key, json.dumps(message.payload, default=str),
                 message.state, json.dumps(message.reply, default=str), message.created_at, message.updated_at))
        return cur.rowcount > 0

    def get_channel_message(self, tenant_id: str, channel: str, message_key: str) -> ChannelMessage | None:
        with self._lock:
            row = self._db.execute("SELECT * FROM channel_messages WHERE tenant_id=? AND channel=? AND message_key=?",
                                   (tenant_id, channel, message_key)).fetchone()
        return _channel_message(row) if row else None

    def update_channel_message(self, tenant_id: str, channel: str, message_key: str, state: str, *,
                               reply: dict | None = None) -> bool:
        with self._lock, immediate(self._db):
            if reply is None:
                cur = self._db.execute("UPDATE channel_messages SET state=?, updated_at=? WHERE tenant_id=? AND "
                                       "channel=? AND message_key=?", (state, time.time(), tenant_id, channel, message_key))
            else:
                cur = self._db.execute("UPDATE channel_messages SET state=?, reply=?, updated_at=? WHERE tenant_id=? "
                                       "AND channel=? AND message_key=?",
                                       (state, json.dumps(reply, default=str), time.time(), tenant_id, channel,
                                        message_key))
        return cur.rowcount > 0

    def open_channel_messages(self, tenant_id: str, channel: str, *, limit: int = 1000) -> list[ChannelMessage]:
        states = sorted(CHANNEL_OPEN_STATES)
        with self._lock:
            rows = self._db.execute(
                f"SELECT * FROM channel_messages WHERE tenant_id=? AND channel=? AND state IN "
                f"({', '.join('?' for _ in states)}) ORDER BY created_at, rowid LIMIT ?",
                (tenant_id, channel, *states, limit)).fetchall()
        return [_channel_message(r) for r in rows]

    def record_channel_delivery(self, delivery: ChannelDelivery) -> ChannelDelivery:
        row = {**delivery.to_dict(), "payload": json.dumps(delivery.payload, default=str)}
        with self._lock, immediate(self._db):
            self._db.execute(f"INSERT OR REPLACE INTO channel_deliveries ({', '.join(row)}) "
                             f"VALUES ({', '.join('?' for _ in row)})", tuple(row.values()))
        return delivery

    def channel_deliveries(self, tenant_id: str, channel: str, *, ref: str | None = None,
                           limit: int = 1000) -> list[ChannelDelivery]:
        query = "SELECT * FROM channel_deliveries WHERE tenant_id=? AND channel=?"
        args: tuple = (tenant_id, channel)
        if ref is not None:
            query, args = query + " AND ref=?", args + (ref,)
        with self._lock:
            rows = self._db.execute(query + " ORDER BY created_at, rowid LIMIT ?", (*args, limit)).fetchall()
        return [_channel_delivery(r) for r in rows]

    def pending_channel_deliveries(self, tenant_id: str, channel: str, *,
                                   limit: int = 1000) -> list[ChannelDelivery]:
        with self._lock:
            rows = self._db.execute("SELECT * FROM channel_deliveries WHERE tenant_id=? AND channel=? AND state=? "
                                    "ORDER BY created_at, rowid LIMIT ?",
                                    (tenant_id, channel, DELIVERY_PENDING, limit)).fetchall()
        return [_channel_delivery(r) for r in rows]

    def count_channel_deliveries(self, tenant_id: str, channel: str) -> dict[str, int]:
        with self._lock:
            rows = self._db.execute("SELECT state, COUNT(*) AS n FROM channel_deliveries WHERE tenant_id=? AND "
                                    "channel=? GROUP BY state", (tenant_id, channel)).fetchall()
        return {r["state"]: r["n"] for r in rows}

    def put_channel_state(self, state: ChannelState) -> None:
        row = state.to_dict()
        with self._lock, immediate(self._db):
            self._db.execute(f"INSERT OR REPLACE INTO channel_states ({', '.join(row)}) "
                             f"VALUES ({', '.join('?' for _ in row)})", tuple(row.values()))

    def channel_states(self) -> dict[str, ChannelState]:
        with self._lock:
            rows = self._db.execute("SELECT * FROM channel_states ORDER BY channel").fetchall()
        return {r["channel"]: ChannelState(**{k: r[k] for k in r.keys()}) for r in rows}

    # -- tools a person always allows ---------------------------------------------------
    def allow_tool(self, tenant_id: str, user_id: str, tool: str) -> None:
        with self._lock, immediate(self._db):
            self._db.execute("INSERT OR IGNORE INTO allowed_tools (tenant_id, user_id, tool, created_at) "
                             "VALUES (?, ?, ?, ?)", (tenant_id, user_id, tool, time.time()))

    def allowed_tools(self, tenant_id: str, user_id: str) -> set[str]:
        with self._lock:
            rows = self._db.execute("SELECT tool FROM allowed_tools WHERE tenant_id=? AND user_id=?",
                                    (tenant_id, user_id)).fetchall()
        return {row["tool"] for row in rows}

    def close(self) -> None:
        with self._lock:
            self._db.close()


def _encode(values: dict) -> dict:
    return {k: (json.dumps(v, default=str) if k in _JSON_FIELDS else v) for k, v in values.items()}


def _task(row: sqlite3.Row) -> TaskRecord:
    data = {k: row[k] for k in _TASK_COLUMNS}
    for k in _JSON_FIELDS:
        data[k] = json.loads(data[k])
    data["approved"] = bool(data["approved"])
    return TaskRecord(**data)


def _channel_message(row: sqlite3.Row) -> ChannelMessage:
    return ChannelMessage(tenant_id=row["tenant_id"], channel=row["channel"], message_key=row["message_key"],
                          payload=json.loads(row["payload"]), state=row["state"], reply=json.loads(row["reply"]),
                          created_at=row["created_at"], updated_at=row["updated_at"])


def _session(rows: list[sqlite3.Row]) -> Session:
    """One session from its rows joined with its messages (one row, body NULL, when it has none)."""
    row = rows[0]
    return Session(session_id=row["session_id"], tenant_id=row["tenant_id"], user_id=row["user_id"], title=row["title"],
                   messages=[json.loads(r["body"]) for r in rows if r["body"] is not None],
                   created_at=row["created_at"], updated_at=row["updated_at"])


def _add_messages(db: sqlite3.Connection, tenant_id: str, session_id: str, messages: list[dict]) -> None:
    """Insert ``messages`` after the session's last one (inside the caller's transaction), in one
    statement: each message's JSON is an element of one array, numbered from the session's
    MAX(seq), which the primary key's index answers without reading the other rows."""
    if not messages:
        return
    bodies = json.dumps([json.dumps(message, default=str) for message in messages])
    db.execute("INSERT INTO session_messages (tenant_id, session_id, seq, body) "
               "SELECT ?, ?, last.seq + kept.key + 1, kept.value FROM "
               "(SELECT COALESCE(MAX(seq), 0) AS seq FROM session_messages WHERE tenant_id=? AND session_id=?) last, "
               "json_each(?) kept", (tenant_id, session_id, tenant_id, session_id, bodies))


def _move_session_messages(db: sqlite3.Connection) -> None:
    """Move the messages a file written before ``session_messages`` existed keeps inside
    ``sessions.messages`` into that table, after any already there, and empty the column: all
    in one transaction, and nothing to do once done (each process opening the file checks)."""
    if db.execute("SELECT 1 FROM sessions WHERE messages != '[]' LIMIT 1").fetchone() is None:
        return
    with immediate(db):
        rows = db.execute("SELECT tenant_id, session_id, messages FROM sessions WHERE messages != '[]'").fetchall()
        for row in rows:
            _add_messages(db, row["tenant_id"], row["session_id"], json.loads(row["messages"]))
        db.execute("UPDATE sessions SET messages='[]' WHERE messages != '[]'")
    log.info("moved the messages of %d sessions to their own table", len(rows))


def _channel_delivery(row) -> ChannelDelivery:
    fields = {k: row[k] for k in ChannelDelivery.__dataclass_fields__}
    return ChannelDelivery(**{**fields, "payload": json.loads(fields["payload"] or "{}")})
