"""One way to open Flora's SQLite files, shared by every SQLite backend.

Several actor processes use the same file, so each connection runs in WAL mode (readers
never block the writer) with a busy timeout (concurrent writers wait instead of failing),
in autocommit mode so that ``immediate`` can take the write lock at the start of a
read-check-write sequence: two processes resuming or claiming the same thing cannot both win.
"""

from __future__ import annotations

import sqlite3
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

from common import spans

BUSY_TIMEOUT_MS = 10_000


def open_sqlite(path: str | Path) -> sqlite3.Connection:
    """A connection to ``path`` (its folder is created), rows as ``sqlite3.Row``."""
    if str(path) != ":memory:":
        Path(path).parent.mkdir(parents=True, exist_ok=True)
    db = sqlite3.connect(str(path), timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None, check_same_thread=False)
    db.row_factory = sqlite3.Row
    _use_wal(db, memory=str(path) == ":memory:")
    db.execute("PRAGMA synchronous=NORMAL")
    db.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
    spans.count_statements(db)
    return db


def _use_wal(db: sqlite3.Connection, *, memory: bool) -> None:
    """Switch a new file to WAL. The switch needs the file to itself and does not wait for the
    busy timeout: processes opening a new data directory at once (a node starting its actors)
    would fail with "database is locked", so it is tried again until the timeout has passed."""
    deadline = time.monotonic() + BUSY_TIMEOUT_MS / 1000
    while True:
        try:
            mode = db.execute("PRAGMA journal_mode=WAL").fetchone()[0]
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or time.monotonic() > deadline:
                raise
        else:
            if memory or str(mode).lower() == "wal":
                return
            if time.monotonic() > deadline:
                raise sqlite3.OperationalError(f"could not switch the database to WAL (it stayed {mode})")
        time.sleep(0.01)


@contextmanager
def immediate(db: sqlite3.Connection) -> Iterator[None]:
    """A write transaction that holds the lock from its first statement; rolled back on error."""
    db.execute("BEGIN IMMEDIATE")
    try:
        yield
    except BaseException:
        db.execute("ROLLBACK")
        raise
    db.execute("COMMIT")
