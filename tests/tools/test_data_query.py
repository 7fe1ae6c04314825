"""data_query through CapabilitySpec.invoke, on a real SQLite file and the real PostgreSQL.

Tests taking ``db`` run once per engine.
"""

from __future__ import annotations

import datetime as dt
import json

import pytest
from jsonschema import ValidationError

from capabilities.base import CapabilityError, CapabilityInputError
from capabilities.tools.data_access import DataAccessor
from tests.tools.conftest import build_registry, call


def query(registry, sql: str, **parameters):
    return call(registry, "data_query", {"sql": sql, **parameters})


def test_values_are_bound_so_an_injection_string_matches_nothing(data_registry, db):
    sql = f"SELECT id FROM {db.table} WHERE customer = {db.placeholder}"

    injected = query(data_registry, sql, params=["x' OR '1'='1"])
    honest = query(data_registry, sql, params=["bob"])

    assert injected["rows"] == [] and injected["row_count"] == 0
    assert honest["rows"] == [[2]]
    assert honest["columns"] == ["id"]


def test_named_placeholders_take_an_object(data_registry, db):
    result = query(data_registry, f"SELECT customer FROM {db.table} WHERE id = {db.named('wanted')}",
                   params={"wanted": 3})
    assert result["rows"] == [["carol"]]


@pytest.mark.parametrize("statement", [
    "INSERT INTO {table} (id, customer) VALUES (7, 'eve')",
    "UPDATE {table} SET customer = 'eve'",
    "DELETE FROM {table}",
    "DROP TABLE {table}",
])
def test_writes_are_forbidden_and_leave_the_table_as_it_was(data_registry, db, statement):
    before = db.count()
    with pytest.raises(CapabilityError) as caught:
        query(data_registry, statement.format(table=db.table))
    assert caught.value.error_type == "forbidden"
    assert "read" in str(caught.value)
    assert db.count() == before == 3


def test_a_write_hidden_behind_a_reading_keyword_is_refused_by_the_database(data_registry, db):
    if db.placeholder == "?":
        sql = f"WITH c AS (SELECT 7) INSERT INTO {db.table} (id, customer) SELECT * , 'eve' FROM c"
    else:
        sql = f"WITH gone AS (DELETE FROM {db.table} RETURNING id) SELECT count(*) FROM gone"
    with pytest.raises(CapabilityError) as caught:
        query(data_registry, sql)
    assert caught.value.error_type == "forbidden"
    assert db.count() == 3


def test_a_batch_of_statements_is_refused_before_it_runs(data_registry, db):
    with pytest.raises(CapabilityInputError) as caught:
        query(data_registry, f"SELECT 1; DROP TABLE {db.table}")
    assert caught.value.parameter == "sql"
    assert "one" in str(caught.value)
    assert db.count() == 3


def test_semicolons_inside_literals_and_a_final_semicolon_are_fine(data_registry, db):
    result = query(data_registry, "SELECT ';' AS s, 'it''s; fine' AS t; -- done")
    assert result["rows"] == [[";", "it's; fine"]]


def test_rows_beyond_max_rows_are_cut_and_flagged(data_registry, db):
    sql = f"SELECT id FROM {db.table} ORDER BY id"
    cut = query(data_registry, sql, max_rows=2)
    whole = query(data_registry, sql, max_rows=3)
    assert (cut["rows"], cut["row_count"], cut["truncated"]) == ([[1], [2]], 2, True)
    assert (whole["row_count"], whole["truncated"]) == (3, False)


def test_an_empty_result_still_names_its_columns(data_registry, db):
    result = query(data_registry, f"SELECT id, customer FROM {db.table} WHERE id < 0")
    assert result["columns"] == ["id", "customer"] and result["rows"] == []


def test_the_first_configured_database_is_the_default(data_registry, db):
    result = query(data_registry, f"SELECT count(*) AS n FROM {db.table}")
    assert result["database"] == db.name and result["rows"] == [[3]]


def test_an_unknown_database_is_asked_for_again_with_the_known_names(sqlite_db):
    registry = build_registry(DataAccessor({sqlite_db.name: sqlite_db.url, "archive": sqlite_db.url}))
    with pytest.raises(CapabilityInputError) as caught:
        query(registry, "SELECT 1", database="sales")
    assert caught.value.parameter == "database"
    assert "known: shop, archive" in str(caught.value)


def test_a_mistyped_table_asks_for_the_sql_again(data_registry, db):
    with pytest.raises(CapabilityInputError) as caught:
        query(data_registry, "SELECT * FROM no_such_table")
    assert caught.value.parameter == "sql"
    assert "no_such_table" in str(caught.value)


def test_values_that_do_not_fit_the_placeholders_ask_for_the_params_again(data_registry, db):
    with pytest.raises(CapabilityInputError) as caught:
        query(data_registry, f"SELECT id FROM {db.table} WHERE id = {db.placeholder}", params=[1, 2])
    assert caught.value.parameter == "params"


def test_postgres_decimals_dates_bytes_and_json_become_json_values(postgres_db):
    registry = build_registry(DataAccessor({postgres_db.name: postgres_db.url}))
    result = query(registry, f"SELECT amount, placed, created, receipt, meta FROM {postgres_db.table} WHERE id = 1")
    amount, placed, created, receipt, meta = result["rows"][0]
    assert (amount, placed, receipt, meta) == (12.5, "2024-05-01", "AP9vaw==", {"gift": True})
    assert dt.datetime.fromisoformat(created) == dt.datetime(2024, 5, 1, 12, tzinfo=dt.timezone.utc)
    json.dumps(result)  # nothing left that JSON cannot carry


def test_sqlite_blobs_become_base64(sqlite_db):
    registry = build_registry(DataAccessor({sqlite_db.name: sqlite_db.url}))
    assert query(registry, "SELECT receipt FROM orders WHERE id = 1")["rows"] == [["AP9vaw=="]]


def test_without_a_data_access_service_the_query_is_misconfigured(registry):
    with pytest.raises(CapabilityError) as caught:
        query(registry, "SELECT 1")
    assert caught.value.error_type == "misconfigured"


def test_schema_bounds_max_rows_and_refuses_nested_params(registry):
    for bad in ({"sql": "SELECT 1", "max_rows": 0}, {"sql": "SELECT 1", "max_rows": 10_001},
                {"sql": "SELECT 1", "params": [{"a": 1}]}, {"params": []}, {"sql": "SELECT 1", "db": "x"}):
        with pytest.raises(ValidationError):
            call(registry, "data_query", bad)
