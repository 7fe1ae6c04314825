"""Real test databases: a SQLite file and a table of its own on the local PostgreSQL.

Both hold the same ``orders`` rows. Each offers a read-write ``count()`` that goes around
Flora, so a test can check that a refused write really left the table as it was.
"""

from __future__ import annotations

import os
import sqlite3
import uuid
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterator

import psycopg
import pytest

POSTGRES_URL = os.environ.get("FLORA_TEST_POSTGRES_URL", "postgresql://postgres@127.0.0.1:5432/test")

ORDERS = [
    (1, "alice", "12.50", "2024-05-01"),
    (2, "bob", "3.10", "2024-05-02"),
    (3, "carol", "100.00", "2024-05-03"),
]


@dataclass
class SampleDatabase:
    name: str  # as configured for the DataAccessor
    url: str
    table: str
    placeholder: str  # positional placeholder of the dialect
    count: Callable[[], int]  # rows in the table, read outside Flora

    def named(self, key: str) -> str:
        return f":{key}" if self.placeholder == "?" else f"%({key})s"


def sqlite_database(directory: Path) -> SampleDatabase:
    path = directory / "shop.db"
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE orders (id INTEGER PRIMARY KEY, customer TEXT, amount TEXT, placed TEXT,"
                     " receipt BLOB)")
        conn.executemany("INSERT INTO orders VALUES (?, ?, ?, ?, NULL)", ORDERS)
        conn.execute("UPDATE orders SET receipt = ? WHERE id = 1", (b"\x00\xffok",))
    conn.close()

    def count() -> int:
        with sqlite3.connect(path) as check:
            return check.execute("SELECT count(*) FROM orders").fetchone()[0]

    return SampleDatabase("shop", f"sqlite:///{path}", "orders", "?", count)


def connect_postgres(**kwargs) -> psycopg.Connection:
    """A read-write admin connection, or a test failure that says what is missing."""
    try:
        return psycopg.connect(POSTGRES_URL, connect_timeout=5, **kwargs)
    except psycopg.OperationalError as exc:
        reason = " ".join(str(exc).split())
    pytest.fail(f"PostgreSQL is not reachable at {POSTGRES_URL} (start it, or set FLORA_TEST_POSTGRES_URL "
                f"to another server): {reason}", pytrace=False)


@contextmanager
def postgres_database() -> Iterator[SampleDatabase]:
    table = f"flora_tools_orders_{uuid.uuid4().hex[:10]}"
    admin = connect_postgres(autocommit=True)
    admin.execute(f"CREATE TABLE {table} (id int PRIMARY KEY, customer text, amount numeric(10, 2), placed date,"
                  " receipt bytea, created timestamptz DEFAULT '2024-05-01 12:00:00+00', meta jsonb)")
    with admin.cursor() as cursor:
        cursor.executemany(f"INSERT INTO {table} (id, customer, amount, placed) VALUES (%s, %s, %s, %s)", ORDERS)
    admin.execute(f"UPDATE {table} SET receipt = %s, meta = %s WHERE id = 1", [b"\x00\xffok", '{"gift": true}'])
    # A function that writes, so that a plain SELECT can attempt a write.
    admin.execute(f"CREATE FUNCTION {table}_sneak() RETURNS int LANGUAGE sql AS "
                  f"$$ INSERT INTO {table} (id, customer) VALUES (99, 'mallory') RETURNING id $$")

    def count() -> int:
        return admin.execute(f"SELECT count(*) FROM {table}").fetchone()[0]

    try:
        yield SampleDatabase("warehouse", POSTGRES_URL, table, "%s", count)
    finally:
        admin.execute(f"DROP FUNCTION IF EXISTS {table}_sneak()")
        admin.execute(f"DROP TABLE IF EXISTS {table}")
        admin.close()
