"""DataAccessor: read-only SQL over the databases named in Flora's config.

The seed's ``data_access`` service. Each configured database gets one connection per
process, opened on first use and reopened when it breaks. Read-only is enforced by the
database engine itself; the SQL inspection done here is only a fence in front of it:

- SQLite is opened through a ``file:...?mode=ro`` URI with ``PRAGMA query_only=ON`` and
  an authorizer that lets a statement read tables and call functions and nothing else,
  so that ``PRAGMA query_only=OFF`` or ``ATTACH`` cannot undo the other two;
- PostgreSQL runs every call in its own ``READ ONLY`` transaction with a local
  ``statement_timeout``, always rolled back.

The fence: a call holds exactly one statement, which starts with a reading keyword
(``SELECT``, ``WITH``, ``EXPLAIN`` ...); values are always bound, never formatted in.

Errors are the capability errors of :mod:`capabilities.base`::

    CapabilityError
    ├── error_type="forbidden"         the statement would write or change state
    ├── error_type="timeout"           it ran past the statement time limit
    ├── error_type="unavailable"       the database could not be reached (retryable)
    ├── error_type="misconfigured"     no databases, or a file that cannot be opened
    └── CapabilityInputError           "database": no such name; "sql" / "params":
                                       the database refused the query as written
"""

from __future__ import annotations

import base64
import datetime as dt
import decimal
import logging
import math
import re
import sqlite3
import threading
import time
import urllib.parse
from pathlib import Path
from typing import Any, Mapping

import psycopg
from psycopg import errors as pg_errors

from capabilities.base import CapabilityError, CapabilityInputError

log = logging.getLogger("flora.capability.data_access")

DEFAULT_MAX_ROWS = 100
MAX_ROWS_LIMIT = 10_000
DEFAULT_STATEMENT_TIMEOUT_S = 30.0
DEFAULT_CONNECT_TIMEOUT_S = 10.0
SETTINGS_KEY = "capabilities.settings.data_access"

READING_KEYWORDS = {
    "sqlite": ("select", "with", "values", "explain", "pragma"),
    "postgresql": ("select", "with", "values", "table", "explain", "show"),
}
# PRAGMAs that only describe the schema; every other PRAGMA may change the connection.
_SQLITE_PRAGMAS = {"table_info", "table_xinfo", "table_list", "index_list", "index_info",
                   "index_xinfo", "foreign_key_list", "database_list", "collation_list"}
_SQLITE_READ_ACTIONS = {sqlite3.SQLITE_SELECT, sqlite3.SQLITE_READ, sqlite3.SQLITE_FUNCTION,
                        sqlite3.SQLITE_RECURSIVE}
_DOLLAR_QUOTE = re.compile(r"\$(?:[A-Za-z_][A-Za-z0-9_]*)?\$")


class DataAccessor:
    """Named read-only databases; ``query`` returns rows as JSON-friendly lists."""

    def __init__(self, databases: Mapping[str, str], *,
                 statement_timeout_s: float = DEFAULT_STATEMENT_TIMEOUT_S,
                 connect_timeout_s: float = DEFAULT_CONNECT_TIMEOUT_S) -> None:
        self._databases: dict[str, _SQLite | _Postgres] = {}
        for name, url in databases.items():
            if url.startswith("sqlite:///"):
                self._databases[name] = _SQLite(url.removeprefix("sqlite:///"), statement_timeout_s)
            elif url.startswith(("postgresql://", "postgres://")):
                self._databases[name] = _Postgres(url, statement_timeout_s, connect_timeout_s)
            else:
                raise ValueError(f"{SETTINGS_KEY}.databases.{name}: unsupported URL; "
                                 "use sqlite:///path/to.db or postgresql://...")

    @classmethod
    def from_settings(cls, settings: Mapping[str, Any]) -> DataAccessor:
        """Build from the ``data_access`` settings section; a bad value names its key."""
        databases = settings.get("databases", {})
        if not isinstance(databases, Mapping) or not all(
                isinstance(k, str) and k and isinstance(v, str) for k, v in databases.items()):
            raise ValueError(f"{SETTINGS_KEY}.databases must map database names to URLs")
        timeouts = {}
        for key, default in (("statement_timeout_s", DEFAULT_STATEMENT_TIMEOUT_S),
                             ("connect_timeout_s", DEFAULT_CONNECT_TIMEOUT_S)):
            value = settings.get(key, default)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0:
                raise ValueError(f"{SETTINGS_KEY}.{key} must be a positive number of seconds")
            timeouts[key] = float(value)
        return cls(databases, **timeouts)

    @property
    def databases(self) -> list[str]:
        return list(self._databases)

    @property
    def default_database(self) -> str | None:
        """The first configured database, used when a query names none."""
        return next(iter(self._databases), None)

    def query(self, database: str, sql: str, params: list | tuple | Mapping | None = None,
              max_rows: int = DEFAULT_MAX_ROWS, *, task_id: str | None = None) -> dict:
        """Run one reading statement; return ``{"columns", "rows", "row_count", "truncated"}``.

        ``truncated`` says that more than ``max_rows`` rows existed. ``task_id`` only
        labels the log line.
        """
        if not 1 <= max_rows <= MAX_ROWS_LIMIT:
            raise ValueError(f"max_rows must be between 1 and {MAX_ROWS_LIMIT}, not {max_rows}")
        if params is not None and not isinstance(params, (list, tuple, Mapping)):
            raise ValueError("params must be a list, a tuple, a mapping or None")
        db = self._database(database)
        statement, keyword = single_statement(sql, db.dialect)
        started = time.monotonic()
        try:
            columns, rows = db.run(statement, keyword, params or None, max_rows + 1)
        except CapabilityError as exc:
            log.warning("query on %s (%s) failed after %d ms: %s: %s task_id=%s", database,
                        db.dialect, _ms_since(started), exc.error_type, exc, task_id)
            raise
        truncated = len(rows) > max_rows
        rows = [[to_json_value(v) for v in row] for row in rows[:max_rows]]
        log.info("query on %s (%s): %d rows, truncated=%s, %d ms, task_id=%s", database,
                 db.dialect, len(rows), truncated, _ms_since(started), task_id)
        return {"columns": columns, "rows": rows, "row_count": len(rows), "truncated": truncated}

    def close(self) -> None:
        for db in self._databases.values():
            db.close()

    def _database(self, name: str) -> _SQLite | _Postgres:
        if not self._databases:
            raise CapabilityError("No databases are configured for queries; add them under "
                                  f"{SETTINGS_KEY}.databases.", error_type="misconfigured")
        try:
            return self._databases[name]
        except KeyError:
            raise CapabilityInputError("database", f"There is no database named {name!r}; "
                                       f"known: {', '.join(self._databases)}.") from None


# -- the fence: one statement, starting with a reading keyword -------------------------

def single_statement(sql: str, dialect: str) -> tuple[str, str]:
    """The statement in ``sql`` without a trailing ';', and its lower-cased first keyword.

    Refuses batches and statements that do not start with a reading keyword. Literals,
    quoted names and comments are blanked out first, so a ';' inside them is not a break.
    """
    masked = _mask_literals(sql, postgres=dialect == "postgresql")
    end = masked.find(";")
    if end >= 0 and masked[end + 1:].replace(";", "").strip():
        raise CapabilityInputError(
            "sql", "Only one SQL statement can run per query; send the statements one at a time.")
    text = sql if end < 0 else sql[:end]
    if not masked[:len(text)].strip():
        raise CapabilityInputError("sql", "The SQL statement is empty.")
    keyword = re.match(r"[\s(]*([A-Za-z]*)", masked).group(1).lower()
    if keyword not in READING_KEYWORDS[dialect]:
        allowed = ", ".join(k.upper() for k in READING_KEYWORDS[dialect])
        raise CapabilityError(f"Only reading queries may run here (they start with {allowed}); "
                              f"{(keyword or 'this statement').upper()} was refused.", error_type="forbidden")
    return text.strip(), keyword


def _mask_literals(sql: str, *, postgres: bool) -> str:
    """``sql`` with comments turned to spaces and quoted text to '_' (same length)."""
    out, i, n = list(sql), 0, len(sql)
    while i < n:
        c = sql[i]
        if sql.startswith("--", i):
            newline = sql.find("\n", i)
            end, fill = (n if newline < 0 else newline), " "
        elif sql.startswith("/*", i):
            close = sql.find("*/", i + 2)
            end, fill = (n if close < 0 else close + 2), " "
        elif c in "'\"" or (not postgres and c in "`["):
            escapes = postgres and c == "'" and i > 0 and sql[i - 1] in "eE" and not _is_name_char(sql, i - 2)
            end, fill = _end_of_quoted(sql, i, "]" if c == "[" else c, escapes), "_"
        elif postgres and c == "$" and not _is_name_char(sql, i - 1) and (tag := _DOLLAR_QUOTE.match(sql, i)):
            close = sql.find(tag.group(), tag.end())
            end, fill = (n if close < 0 else close + len(tag.group())), "_"
        else:
            i += 1
            continue
        out[i:end] = fill * (end - i)
        i = end
    return "".join(out)


def _end_of_quoted(sql: str, start: int, closer: str, backslash_escapes: bool) -> int:
    j, n = start + 1, len(sql)
    while j < n:
        if backslash_escapes and sql[j] == "\\":
            j += 2
        elif sql[j] == closer:
            if closer != "]" and sql.startswith(closer * 2, j):  # a doubled quote is a quote
                j += 2
            else:
                return j + 1
        else:
            j += 1
    return n


def _is_name_char(sql: str, i: int) -> bool:
    return 0 <= i < len(sql) and (sql[i].isalnum() or sql[i] in "_$")


# -- JSON-friendly values ---------------------------------------------------------------

def to_json_value(value: Any) -> Any:
    """A value a JSON encoder accepts and a person reads the same way."""
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else str(value)
    if isinstance(value, decimal.Decimal):
        if not value.is_finite():
            return str(value)
        if value == value.to_integral_value():
            return int(value)
        as_float = float(value)
        return as_float if decimal.Decimal(repr(as_float)) == value else str(value)
    if isinstance(value, (dt.datetime, dt.date, dt.time)):
        return value.isoformat()
    if isinstance(value, dt.timedelta):
        return value.total_seconds()
    if isinstance(value, (bytes, bytearray, memoryview)):
        return base64.b64encode(bytes(value)).decode("ascii")
    if isinstance(value, Mapping):
        return {str(k): to_json_value(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [to_json_value(v) for v in value]
    return str(value)  # UUID, network addresses, ranges ...


# -- engines ----------------------------------------------------------------------------

class _SQLite:
    """One read-only SQLite connection, shared under a lock."""

    dialect = "sqlite"

    def __init__(self, path: str, statement_timeout_s: float) -> None:
        self._path = Path(path).expanduser().resolve()
        self._timeout_s = statement_timeout_s
        self._lock = threading.Lock()
        self._conn: sqlite3.Connection | None = None

    def run(self, sql: str, keyword: str, params: Any, limit: int) -> tuple[list[str], list[tuple]]:
        deadline = time.monotonic() + self._timeout_s
        with self._lock:
            try:
                conn = self._connection()
                # SQLite has no statement timeout; the progress handler interrupts it.
                conn.set_progress_handler(lambda: time.monotonic() > deadline, 10_000)
                try:
                    cursor = conn.execute(sql, params if params is not None else ())
                    rows = cursor.fetchmany(limit)
                    columns = [d[0] for d in cursor.description or ()]
                    cursor.close()
                finally:
                    conn.set_progress_handler(None, 0)
            except sqlite3.Error as exc:
                raise self._translate(exc) from exc
        return columns, rows

    def close(self) -> None:
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None

    def _connection(self) -> sqlite3.Connection:
        if self._conn is None:
            uri = f"file:{urllib.parse.quote(str(self._path))}?mode=ro"
            conn = sqlite3.connect(uri, uri=True, isolation_level=None, check_same_thread=False)
            conn.execute("PRAGMA query_only=ON")
            conn.set_authorizer(_sqlite_authorizer)
            self._conn = conn
        return self._conn

    def _translate(self, exc: sqlite3.Error) -> CapabilityError:
        code = (getattr(exc, "sqlite_errorcode", None) or 0) & 0xFF
        detail = _detail(str(exc))
        if code in (sqlite3.SQLITE_READONLY, sqlite3.SQLITE_AUTH):
            return _forbidden(detail)
        if code == sqlite3.SQLITE_INTERRUPT:
            return _timed_out(self._timeout_s)
        if code in (sqlite3.SQLITE_CANTOPEN, sqlite3.SQLITE_NOTADB, sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_IOERR):
            if self._conn is not None:
                self._conn.close()
            self._conn = None  # reopened on the next call
            return CapabilityError(f"The SQLite database {self._path} cannot be read: {detail}.",
                                   error_type="misconfigured")
        if code in (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED):
            return CapabilityError(f"The SQLite database is busy: {detail}.", retryable=True, error_type="unavailable")
        if isinstance(exc, sqlite3.ProgrammingError) and "binding" in str(exc).lower():
            return CapabilityInputError("params", f"The values do not match the query's placeholders: {detail}.")
        return CapabilityInputError("sql", f"SQLite refused the query: {detail}.")


def _sqlite_authorizer(action: int, arg1: str | None, arg2: str | None, db: str | None, source: str | None) -> int:
    if action in _SQLITE_READ_ACTIONS:
        return sqlite3.SQLITE_OK
    if action == sqlite3.SQLITE_PRAGMA and (arg1 or "").lower() in _SQLITE_PRAGMAS:
        return sqlite3.SQLITE_OK
    return sqlite3.SQLITE_DENY


class _Postgres:
    """One PostgreSQL connection; every call is its own READ ONLY transaction."""

    dialect = "postgresql"

    def __init__(self, url: str, statement_timeout_s: float, connect_timeout_s: float) -> None:
        self._url = url
        self._timeout_s = statement_timeout_s
        self._connect_timeout_s = connect_timeout_s
        self._lock = threading.Lock()
        self._conn: psycopg.Connection | None = None

    def run(self, sql: str, keyword: str, params: Any, limit: int) -> tuple[list[str], list[tuple]]:
        with self._lock:
            while True:
                reused = self._conn is not None
                try:
                    return self._run(self._connection(), sql, keyword, params, limit)
                except psycopg.Error as exc:
                    lost = self._conn is None or self._conn.broken or self._conn.closed
                    if lost:
                        self._drop()
                        if reused:
                            continue  # an old connection died; reading again on a new one is harmless
                    raise self._translate(exc, lost) from exc

    def close(self) -> None:
        with self._lock:
            self._drop()

    def _run(self, conn: psycopg.Connection, sql: str, keyword: str, params: Any,
             limit: int) -> tuple[list[str], list[tuple]]:
        if keyword in ("select", "values", "table", "with"):
            try:
                return self._in_transaction(conn, lambda: _fetch_with_cursor(conn, sql, params, limit))
            except (pg_errors.SyntaxError, pg_errors.FeatureNotSupported):
                pass  # not every query fits a cursor (SELECT INTO, writes in WITH): stream it for the real verdict
        return self._in_transaction(conn, lambda: _fetch_streamed(conn, sql, params, limit))

    def _in_transaction(self, conn: psycopg.Connection, fetch):
        try:
            # A SELECT first also takes the snapshot, after which the transaction's
            # read-only mode can no longer be switched off.
            conn.execute("SELECT set_config('statement_timeout', %s, true)", [f"{int(self._timeout_s * 1000)}ms"])
            return fetch()
        finally:
            if not conn.broken and not conn.closed:
                conn.rollback()

    def _connection(self) -> psycopg.Connection:
        if self._conn is None or self._conn.closed or self._conn.broken:
            self._drop()
            conn = psycopg.connect(self._url, connect_timeout=max(1, round(self._connect_timeout_s)),
                                   application_name="flora-data-access")
            conn.read_only = True
            self._conn = conn
        return self._conn

    def _drop(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None

    def _translate(self, exc: psycopg.Error, lost: bool) -> CapabilityError:
        message = _detail(exc.diag.message_primary or str(exc))
        if isinstance(exc, (pg_errors.ReadOnlySqlTransaction, pg_errors.InsufficientPrivilege)):
            return _forbidden(message)
        if isinstance(exc, pg_errors.QueryCanceled):
            return _timed_out(self._timeout_s)
        if lost or isinstance(exc, psycopg.OperationalError):
            return CapabilityError(f"The PostgreSQL database could not be reached: {message}.",
                                   retryable=True, error_type="unavailable")
        if isinstance(exc, psycopg.ProgrammingError) and exc.sqlstate is None:
            return CapabilityInputError("params", f"The values do not match the query's placeholders: {message}.")
        return CapabilityInputError("sql", f"PostgreSQL refused the query: {message}.")


def _fetch_with_cursor(conn: psycopg.Connection, sql: str, params: Any, limit: int):
    # A server-side cursor keeps a huge result on the server and still names the
    # columns of an empty one.
    with conn.cursor(name="flora_data_access") as cursor:
        cursor.execute(sql, params)
        rows = cursor.fetchmany(limit)
        return [c.name for c in cursor.description or ()], rows


def _fetch_streamed(conn: psycopg.Connection, sql: str, params: Any, limit: int):
    cursor = conn.cursor()
    rows = []
    for row in cursor.stream(sql, params):  # leaving early cancels the rest on the server
        rows.append(row)
        if len(rows) >= limit:
            break
    return [c.name for c in cursor.description or ()], rows


def _forbidden(detail: str) -> CapabilityError:
    return CapabilityError(f"The database refused to run this query because it would change data "
                           f"or settings, and queries here are read-only ({detail}).", error_type="forbidden")


def _timed_out(timeout_s: float) -> CapabilityError:
    return CapabilityError(f"The query took longer than {timeout_s:g} s and was stopped.", error_type="timeout")


def _detail(text: str) -> str:
    """A driver's message as a clause: one line, no final full stop."""
    return " ".join(text.split()).rstrip(".")


def _ms_since(started: float) -> int:
    return int((time.monotonic() - started) * 1000)
