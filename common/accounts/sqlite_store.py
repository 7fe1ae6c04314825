"""SQLite backend of the LinkStore: tables beside the TaskStore's, in the same file."""

from __future__ import annotations

import json
import threading
from pathlib import Path

from common.accounts.store import Conversation, LinkStore
from common.sqlite import immediate, open_sqlite

SCHEMA = """
CREATE TABLE IF NOT EXISTS account_links (
    tenant_id TEXT NOT NULL,
    account TEXT NOT NULL,
    user_id TEXT NOT NULL,
    PRIMARY KEY (tenant_id, account)
);
CREATE INDEX IF NOT EXISTS account_links_by_user ON account_links (tenant_id, user_id);
CREATE TABLE IF NOT EXISTS link_codes (
    tenant_id TEXT NOT NULL,
    code_hash TEXT NOT NULL,
    data TEXT NOT NULL,
    expires_at REAL NOT NULL,
    PRIMARY KEY (tenant_id, code_hash)
);
CREATE TABLE IF NOT EXISTS link_failures (
    tenant_id TEXT NOT NULL,
    key TEXT NOT NULL,
    at REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS link_failures_by_key ON link_failures (tenant_id, key, at);
CREATE TABLE IF NOT EXISTS conversations_seen (
    tenant_id TEXT NOT NULL,
    conversation TEXT NOT NULL,
    data TEXT NOT NULL,
    PRIMARY KEY (tenant_id, conversation)
);
CREATE TABLE IF NOT EXISTS last_conversation (
    tenant_id TEXT NOT NULL,
    user_id TEXT NOT NULL,
    data TEXT NOT NULL,
    PRIMARY KEY (tenant_id, user_id)
);
"""


class SQLiteLinkStore(LinkStore):
    def __init__(self, path: str | Path):
        self._lock = threading.Lock()
        self._db = open_sqlite(path)
        with self._lock:
            self._db.executescript(SCHEMA)

    def linked_user(self, tenant_id: str, account: str) -> str | None:
        with self._lock:
            row = self._db.execute("SELECT user_id FROM account_links WHERE tenant_id=? AND account=?",
                                   (tenant_id, account)).fetchone()
        return row[0] if row else None

    def link(self, tenant_id: str, account: str, user_id: str) -> str:
        with self._lock, immediate(self._db):
            self._db.execute("INSERT OR IGNORE INTO account_links (tenant_id, account, user_id) VALUES (?, ?, ?)",
                             (tenant_id, account, user_id))
            return self._db.execute("SELECT user_id FROM account_links WHERE tenant_id=? AND account=?",
                                    (tenant_id, account)).fetchone()[0]

    def unlink(self, tenant_id: str, account: str) -> str | None:
        with self._lock:
            row = self._db.execute("DELETE FROM account_links WHERE tenant_id=? AND account=? RETURNING user_id",
                                   (tenant_id, account)).fetchone()
        return row[0] if row else None

    def accounts_of(self, tenant_id: str, user_id: str) -> list[str]:
        with self._lock:
            rows = self._db.execute("SELECT account FROM account_links WHERE tenant_id=? AND user_id=? "
                                    "ORDER BY account", (tenant_id, user_id)).fetchall()
        return [r[0] for r in rows]

    def put_code(self, tenant_id: str, code_hash: str, data: dict, expires_at: float) -> None:
        with self._lock:
            self._db.execute("INSERT OR REPLACE INTO link_codes (tenant_id, code_hash, data, expires_at) "
                             "VALUES (?, ?, ?, ?)", (tenant_id, code_hash, json.dumps(data), expires_at))

    def take_code(self, tenant_id: str, code_hash: str, now: float) -> dict | None:
        with self._lock:
            self._db.execute("DELETE FROM link_codes WHERE expires_at<=?", (now,))
            row = self._db.execute("DELETE FROM link_codes WHERE tenant_id=? AND code_hash=? RETURNING data",
                                   (tenant_id, code_hash)).fetchone()
        return json.loads(row[0]) if row else None

    def count_failure(self, tenant_id: str, key: str, window_s: float, now: float) -> int:
        with self._lock, immediate(self._db):
            self._db.execute("DELETE FROM link_failures WHERE at<=?", (now - window_s,))
            self._db.execute("INSERT INTO link_failures (tenant_id, key, at) VALUES (?, ?, ?)", (tenant_id, key, now))
            return self._count(tenant_id, key, window_s, now)

    def failures(self, tenant_id: str, key: str, window_s: float, now: float) -> int:
        with self._lock:
            return self._count(tenant_id, key, window_s, now)

    def _count(self, tenant_id: str, key: str, window_s: float, now: float) -> int:
        return self._db.execute("SELECT COUNT(*) FROM link_failures WHERE tenant_id=? AND key=? AND at>?",
                                (tenant_id, key, now - window_s)).fetchone()[0]

    def seen(self, tenant_id: str, record: Conversation) -> None:
        data = json.dumps(record.to_dict())
        with self._lock, immediate(self._db):
            self._db.execute("INSERT OR REPLACE INTO conversations_seen (tenant_id, conversation, data) "
                             "VALUES (?, ?, ?)", (tenant_id, record.conversation, data))
            if not record.group:
                self._db.execute("INSERT OR REPLACE INTO last_conversation (tenant_id, user_id, data) "
                                 "VALUES (?, ?, ?)", (tenant_id, record.user, data))

    def conversation(self, tenant_id: str, conversation: str) -> Conversation | None:
        with self._lock:
            row = self._db.execute("SELECT data FROM conversations_seen WHERE tenant_id=? AND conversation=?",
                                   (tenant_id, conversation)).fetchone()
        return Conversation.from_dict(json.loads(row[0])) if row else None

    def last_conversation(self, tenant_id: str, user_id: str) -> Conversation | None:
        with self._lock:
            row = self._db.execute("SELECT data FROM last_conversation WHERE tenant_id=? AND user_id=?",
                                   (tenant_id, user_id)).fetchone()
        return Conversation.from_dict(json.loads(row[0])) if row else None

    def close(self) -> None:
        with self._lock:
            self._db.close()
