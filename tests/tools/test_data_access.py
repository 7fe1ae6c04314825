"""DataAccessor itself: the SQL fence, the engines' own read-only guards, timeouts, reconnects."""

from __future__ import annotations

import decimal

import pytest

from capabilities.base import CapabilityError, CapabilityInputError
from capabilities.tools.data_access import DataAccessor, single_statement, to_json_value
from tests.tools.databases import connect_postgres

# -- the fence ---------------------------------------------------------------------------


@pytest.mark.parametrize("sql, expected", [
    ("SELECT 1", ("SELECT 1", "select")),
    ("  (select 1) ;  ", ("(select 1)", "select")),
    ("/* why */ WITH a AS (SELECT 1) SELECT * FROM a; -- done", ("/* why */ WITH a AS (SELECT 1) SELECT * FROM a", "with")),
    ("SELECT 'a;b', \"odd;name\" FROM t", ("SELECT 'a;b', \"odd;name\" FROM t", "select")),
])
def test_one_statement_passes_without_its_final_semicolon(sql, expected):
    assert single_statement(sql, "sqlite") == expected


@pytest.mark.parametrize("sql, dialect", [
    ("SELECT 1; SELECT 2", "sqlite"),
    ("SELECT 1;; DROP TABLE t", "postgresql"),
    ("SELECT 'x'; DELETE FROM t", "postgresql"),
    # A backslash escapes the quote in E'...', so the string ends earlier than it seems.
    ("SELECT E'\\''; DROP TABLE t; --'", "postgresql"),
    ("SELECT $q$;$q$; DROP TABLE t", "postgresql"),
])
def test_a_second_statement_is_refused(sql, dialect):
    with pytest.raises(CapabilityInputError) as caught:
        single_statement(sql, dialect)
    assert caught.value.parameter == "sql"


def test_semicolons_in_dollar_quotes_and_comments_do_not_split():
    assert single_statement("SELECT $$a;b$$ /* ; */ -- ;\n", "postgresql")[1] == "select"


@pytest.mark.parametrize("sql", ["INSERT INTO t VALUES (1)", "COPY t TO PROGRAM 'sh'", "SET statement_timeout = 0",
                                 "BEGIN", "ATTACH 'x.db' AS x", "'text'"])
def test_statements_that_do_not_start_by_reading_are_forbidden(sql):
    with pytest.raises(CapabilityError) as caught:
        single_statement(sql, "postgresql" if "COPY" in sql or "SET" in sql else "sqlite")
    assert caught.value.error_type == "forbidden"


@pytest.mark.parametrize("sql", ["", "   ", "-- nothing\n", ";"])
def test_an_empty_statement_asks_for_sql(sql):
    with pytest.raises(CapabilityInputError):
        single_statement(sql, "sqlite")


# -- engines -----------------------------------------------------------------------------


def test_sqlite_cannot_switch_its_read_only_guard_off(sqlite_db):
    accessor = DataAccessor({"shop": sqlite_db.url})
    with pytest.raises(CapabilityError) as caught:
        accessor.query("shop", "PRAGMA query_only = OFF")
    assert caught.value.error_type == "forbidden"
    with pytest.raises(CapabilityError):
        accessor.query("shop", "WITH c AS (SELECT 1) DELETE FROM orders")
    assert sqlite_db.count() == 3
    assert accessor.query("shop", "PRAGMA table_info(orders)")["row_count"] == 5  # introspection still works


def test_postgres_refuses_a_write_done_by_a_function_or_explain_analyze(postgres_db):
    accessor = DataAccessor({"pg": postgres_db.url})
    for sql in (f"SELECT {postgres_db.table}_sneak()", f"EXPLAIN ANALYZE DELETE FROM {postgres_db.table}",
                f"SELECT id INTO copy_of_orders FROM {postgres_db.table}"):
        with pytest.raises(CapabilityError) as caught:
            accessor.query("pg", sql)
        assert caught.value.error_type == "forbidden", sql
    assert postgres_db.count() == 3
    accessor.close()


def test_postgres_show_explain_and_percent_signs_work(postgres_db):
    accessor = DataAccessor({"pg": postgres_db.url})
    assert accessor.query("pg", "SHOW transaction_read_only")["rows"] == [["on"]]
    assert accessor.query("pg", "EXPLAIN SELECT 1")["columns"] == ["QUERY PLAN"]
    assert accessor.query("pg", "SELECT 'a%' LIKE 'a%'")["rows"] == [[True]]
    accessor.close()


def test_a_large_postgres_result_is_cut_without_fetching_it_all(postgres_db):
    accessor = DataAccessor({"pg": postgres_db.url}, statement_timeout_s=5)
    result = accessor.query("pg", "SELECT g FROM generate_series(1, 2000000) AS g", max_rows=3)
    assert result["rows"] == [[1], [2], [3]] and result["truncated"] is True
    accessor.close()


def test_slow_queries_stop_at_the_statement_timeout(sqlite_db, postgres_db):
    accessor = DataAccessor({"shop": sqlite_db.url, "pg": postgres_db.url}, statement_timeout_s=0.3)
    endless = "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n) SELECT count(*) FROM n"
    for database, sql in (("shop", endless), ("pg", "SELECT pg_sleep(5)")):
        with pytest.raises(CapabilityError) as caught:
            accessor.query(database, sql)
        assert caught.value.error_type == "timeout", database
    assert accessor.query("pg", "SELECT 1")["rows"] == [[1]]  # the connection is still usable
    accessor.close()


def test_a_postgres_connection_killed_by_the_server_is_reopened(postgres_db):
    accessor = DataAccessor({"pg": postgres_db.url})
    pid = accessor.query("pg", "SELECT pg_backend_pid()")["rows"][0][0]
    with connect_postgres(autocommit=True) as admin:
        admin.execute("SELECT pg_terminate_backend(%s)", [pid])
    result = accessor.query("pg", "SELECT pg_backend_pid()")
    assert result["rows"][0][0] != pid
    accessor.close()


def test_unreachable_postgres_is_retryable():
    accessor = DataAccessor({"pg": "postgresql://postgres@127.0.0.1:1/test"}, connect_timeout_s=2)
    with pytest.raises(CapabilityError) as caught:
        accessor.query("pg", "SELECT 1")
    assert caught.value.retryable and caught.value.error_type == "unavailable"


def test_a_missing_sqlite_file_is_a_configuration_problem(tmp_path):
    accessor = DataAccessor({"gone": f"sqlite:///{tmp_path / 'missing.db'}"})
    with pytest.raises(CapabilityError) as caught:
        accessor.query("gone", "SELECT 1")
    assert caught.value.error_type == "misconfigured"
    assert not (tmp_path / "missing.db").exists()  # read-only open never creates the file


def test_no_configured_database_is_a_configuration_problem():
    with pytest.raises(CapabilityError) as caught:
        DataAccessor.from_settings({}).query("any", "SELECT 1")
    assert caught.value.error_type == "misconfigured"


# -- settings and values --------------------------------------------------------------------


@pytest.mark.parametrize("settings, key", [
    ({"databases": {"x": "mysql://host/db"}}, "databases.x"),
    ({"databases": ["sqlite:///a.db"]}, "databases"),
    ({"databases": {}, "statement_timeout_s": 0}, "statement_timeout_s"),
    ({"databases": {}, "connect_timeout_s": "soon"}, "connect_timeout_s"),
])
def test_bad_settings_fail_naming_the_key(settings, key):
    with pytest.raises(ValueError, match=f"capabilities.settings.data_access.{key}"):
        DataAccessor.from_settings(settings)


def test_the_first_configured_database_is_the_default():
    accessor = DataAccessor.from_settings({"databases": {"b": "sqlite:///b.db", "a": "sqlite:///a.db"}})
    assert accessor.databases == ["b", "a"] and accessor.default_database == "b"


@pytest.mark.parametrize("value, expected", [
    (decimal.Decimal("12.50"), 12.5),
    (decimal.Decimal("7.000"), 7),
    (decimal.Decimal("0.1000000000000000000001"), "0.1000000000000000000001"),  # a float would lose it
    (decimal.Decimal("NaN"), "NaN"),
    (float("inf"), "inf"),
    (b"\x00\xff", "AP8="),
    ([decimal.Decimal("1.5"), {"k": b"a"}], [1.5, {"k": "YQ=="}]),
])
def test_values_are_made_json_friendly(value, expected):
    assert to_json_value(value) == expected
