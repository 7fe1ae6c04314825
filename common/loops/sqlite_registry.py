"""SQLite backend of the LoopTaskRegistry: the embedded default.

It may share the TaskStore's database file; its tables are its own. As there, the
connection runs in WAL mode with a busy timeout, so several processes (several registry
objects) can use one file: readers never block the writer and writers wait their turn.
Claiming a run is one ``INSERT OR IGNORE`` against ``UNIQUE (tenant_id, run_key)``: the
database, not a check-then-write in Python, decides who is first.
"""

from __future__ import annotations

import json
import logging
import sqlite3
import threading
import time
from pathlib import Path
from typing import Any, Iterable

from common.loops.models import (
    Forbidden, LoopTask, LoopTaskExists, LoopTaskNotFound, RUN_RUNNING, RunNotFound, RunRecord,
    check_changes, check_finish_state,
)
from common.loops.registry import LoopTaskRegistry
from common.sqlite import immediate, open_sqlite

log = logging.getLogger("flora.loops")

SCHEMA = """
CREATE TABLE IF NOT EXISTS loop_tasks (
    tenant_id TEXT NOT NULL,
    loop_task_id TEXT NOT NULL,
    user_id TEXT NOT NULL,
    content TEXT NOT NULL,
    capability TEXT NOT NULL DEFAULT '',
    parameters TEXT NOT NULL DEFAULT '{}',
    schedule TEXT NOT NULL,
    state TEXT NOT NULL,
    overlap TEXT NOT NULL,
    missed TEXT NOT NULL,
    next_fire_at REAL,
    last_fire_at REAL,
    channel TEXT NOT NULL DEFAULT '',
    created_at REAL NOT NULL,
    updated_at REAL NOT NULL,
    PRIMARY KEY (tenant_id, loop_task_id)
);
CREATE INDEX IF NOT EXISTS loop_tasks_by_user ON loop_tasks (tenant_id, user_id, state, created_at);
CREATE INDEX IF NOT EXISTS loop_tasks_due ON loop_tasks (state, next_fire_at);
CREATE TABLE IF NOT EXISTS loop_runs (
    tenant_id TEXT NOT NULL,
    run_key TEXT NOT NULL,
    loop_task_id TEXT NOT NULL,
    scheduled_at REAL NOT NULL,
    state TEXT NOT NULL,
    task_id TEXT NOT NULL DEFAULT '',
    started_at REAL NOT NULL,
    finished_at REAL,
    UNIQUE (tenant_id, run_key)
);
CREATE INDEX IF NOT EXISTS loop_runs_by_task ON loop_runs (tenant_id, loop_task_id, state, scheduled_at);
"""

_JSON_FIELDS = ("parameters", "schedule")
_COLUMNS = ("loop_task_id", "tenant_id", "user_id", "content", "capability", "parameters", "schedule",
            "state", "overlap", "missed", "next_fire_at", "last_fire_at", "channel", "created_at", "updated_at")
_RUN_COLUMNS = ("run_key", "loop_task_id", "tenant_id", "scheduled_at", "state", "task_id",
                "started_at", "finished_at")


class SQLiteLoopRegistry(LoopTaskRegistry):
    def __init__(self, path: str | Path):
        self.path = Path(path)
        self._lock = threading.Lock()
        self._db = open_sqlite(path)
        with self._lock:
            self._db.executescript(SCHEMA)

    # -- loop tasks ----------------------------------------------------------------
    def add(self, task: LoopTask) -> LoopTask:
        row = _encode(task.to_dict())
        cols, marks = ", ".join(_COLUMNS), ", ".join("?" for _ in _COLUMNS)
        try:
            with self._lock:
                self._db.execute(f"INSERT INTO loop_tasks ({cols}) VALUES ({marks})", [row[c] for c in _COLUMNS])
        except sqlite3.IntegrityError:
            raise LoopTaskExists(task.loop_task_id) from None
        return task

    def get(self, tenant_id: str, loop_task_id: str) -> LoopTask | None:
        with self._lock:
            row = self._db.execute("SELECT * FROM loop_tasks WHERE tenant_id=? AND loop_task_id=?",
                                   (tenant_id, loop_task_id)).fetchone()
        return _task(row) if row else None

    def tenants(self) -> list[str]:
        with self._lock:
            return [row[0] for row in self._db.execute("SELECT DISTINCT tenant_id FROM loop_tasks ORDER BY tenant_id")]

    def list(self, tenant_id: str, *, user_id: str | None = None,
             states: Iterable[str] | None = None) -> list[LoopTask]:
        sql, args = "SELECT * FROM loop_tasks WHERE tenant_id=?", [tenant_id]
        if user_id is not None:
            sql += " AND user_id=?"
            args.append(user_id)
        if states is not None:
            states = [*states]
            sql += f" AND state IN ({', '.join('?' for _ in states)})"
            args += states
        with self._lock:
            rows = self._db.execute(sql + " ORDER BY created_at, loop_task_id", args).fetchall()
        return [_task(r) for r in rows]

    def update(self, tenant_id: str, loop_task_id: str, *, user_id: str, **changes: Any) -> LoopTask:
        check_changes(changes)
        encoded = _encode({**changes, "updated_at": time.time()})
        assignments = ", ".join(f"{k}=?" for k in encoded)
        with self._lock, immediate(self._db):
            self._owned(tenant_id, loop_task_id, user_id)
            self._db.execute(f"UPDATE loop_tasks SET {assignments} WHERE tenant_id=? AND loop_task_id=?",
                             [*encoded.values(), tenant_id, loop_task_id])
            row = self._db.execute("SELECT * FROM loop_tasks WHERE tenant_id=? AND loop_task_id=?",
                                   (tenant_id, loop_task_id)).fetchone()
        return _task(row)

    def _owned(self, tenant_id: str, loop_task_id: str, user_id: str) -> None:
        row = self._db.execute("SELECT user_id FROM loop_tasks WHERE tenant_id=? AND loop_task_id=?",
                               (tenant_id, loop_task_id)).fetchone()
        if row is None:
            raise LoopTaskNotFound(loop_task_id)
        if row["user_id"] != user_id:
            raise Forbidden(loop_task_id, user_id)

    def due(self, now: float, limit: int = 100) -> list[LoopTask]:
        with self._lock:
            rows = self._db.execute(
                "SELECT * FROM loop_tasks WHERE state='active' AND next_fire_at IS NOT NULL AND next_fire_at<=?"
                " ORDER BY next_fire_at, tenant_id, loop_task_id LIMIT ?", (now, limit)).fetchall()
        return [_task(r) for r in rows]

    # -- runs ----------------------------------------------------------------------
    def claim_run(self, tenant_id: str, loop_task_id: str, run_key: str, scheduled_at: float) -> bool:
        with self._lock, immediate(self._db):
            exists = self._db.execute("SELECT 1 FROM loop_tasks WHERE tenant_id=? AND loop_task_id=?",
                                      (tenant_id, loop_task_id)).fetchone()
            if exists is None:
                raise LoopTaskNotFound(loop_task_id)
            cur = self._db.execute(
                "INSERT OR IGNORE INTO loop_runs (tenant_id, run_key, loop_task_id, scheduled_at, state, started_at)"
                " VALUES (?, ?, ?, ?, ?, ?)", (tenant_id, run_key, loop_task_id, scheduled_at, RUN_RUNNING, time.time()))
        claimed = cur.rowcount == 1
        if not claimed:
            log.info("run %s of loop task %s already claimed; not running it again", run_key, loop_task_id)
        return claimed

    def finish_run(self, tenant_id: str, run_key: str, state: str, task_id: str = "") -> RunRecord:
        check_finish_state(state)
        with self._lock, immediate(self._db):
            self._db.execute("UPDATE loop_runs SET state=?, task_id=?, finished_at=?"
                             " WHERE tenant_id=? AND run_key=? AND state=?",
                             (state, task_id, time.time(), tenant_id, run_key, RUN_RUNNING))
            row = self._db.execute("SELECT * FROM loop_runs WHERE tenant_id=? AND run_key=?",
                                   (tenant_id, run_key)).fetchone()
        if row is None:
            raise RunNotFound(run_key)
        return _run(row)

    def runs(self, tenant_id: str, loop_task_id: str, limit: int = 100) -> list[RunRecord]:
        with self._lock:
            rows = self._db.execute("SELECT * FROM loop_runs WHERE tenant_id=? AND loop_task_id=?"
                                    " ORDER BY scheduled_at DESC, run_key DESC LIMIT ?",
                                    (tenant_id, loop_task_id, limit)).fetchall()
        return [_run(r) for r in rows]

    def running(self, tenant_id: str, loop_task_id: str) -> list[RunRecord]:
        with self._lock:
            rows = self._db.execute("SELECT * FROM loop_runs WHERE tenant_id=? AND loop_task_id=? AND state=?"
                                    " ORDER BY scheduled_at, run_key",
                                    (tenant_id, loop_task_id, RUN_RUNNING)).fetchall()
        return [_run(r) for r in rows]

    def close(self) -> None:
        with self._lock:
            self._db.close()


def _encode(values: dict) -> dict:
    # ensure_ascii=False: content and parameters are often Chinese; keep the file readable
    return {k: (json.dumps(v, ensure_ascii=False) if k in _JSON_FIELDS else v) for k, v in values.items()}


def _task(row: sqlite3.Row) -> LoopTask:
    data = {k: row[k] for k in _COLUMNS}
    for k in _JSON_FIELDS:
        data[k] = json.loads(data[k])
    return LoopTask(**data)


def _run(row: sqlite3.Row) -> RunRecord:
    return RunRecord(**{k: row[k] for k in _RUN_COLUMNS})
