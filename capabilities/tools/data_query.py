"""The ``data_query`` capability: one read-only SQL query against a configured database.

The work is done by the process's ``data_access`` service (a
:class:`~capabilities.tools.data_access.DataAccessor`); this module only declares what a
query needs from the user and picks the default database.
"""

from __future__ import annotations

from capabilities.base import CapabilityError, ExecutionContext, capability
from capabilities.tools.data_access import DEFAULT_MAX_ROWS, MAX_ROWS_LIMIT, DataAccessor

# a statement written out in a request ("run this against the db: SELECT region, SUM(amount) FROM
# orders …"): SQL keywords in capitals, or a lower-case select that reads as SQL (select *, a
# column list, an aggregate), up to the end or to Chinese text after it
SQL_IN_TEXT = (r"(?:\b(?:SELECT|WITH|EXPLAIN)\b|(?i:\bselect\s+(?:\*|distinct\b|(?:count|sum|avg|min|max)\s*\(|"
               r"[\w.]+\s*,\s*[\w.]+)))[^\u3000-\u303f\u4e00-\u9fff\uff00-\uffef]*")
_SCALAR = {"type": ["string", "number", "integer", "boolean", "null"]}

PARAMETERS = {
    "x-flora-description": {"zh": "在配置好的数据库（SQLite 或 PostgreSQL）上执行一条只读 SQL 查询，返回结果行"},
    "type": "object",
    "properties": {
        "sql": {
            "type": "string",
            "minLength": 1,
            "description": "The single read-only SQL statement to run (SELECT, WITH, VALUES, EXPLAIN ...). "
                           "Leave values out of the text and use placeholders: ? or :name for SQLite, "
                           "%s or %(name)s for PostgreSQL.",
            "x-flora-description": {"zh": "要执行的一条只读 SQL 语句（SELECT、WITH 等）"},
            "x-flora-value-pattern": SQL_IN_TEXT,
        },
        "params": {
            "type": ["array", "object"],
            "items": _SCALAR,
            "additionalProperties": _SCALAR,
            "default": [],
            "description": "The values for the placeholders in the SQL: a list in placeholder order, "
                           "or an object keyed by placeholder name. Empty when the query has none.",
        },
        "database": {
            "type": "string",
            "minLength": 1,
            "description": "Name of the database to query, as configured by the administrator. "
                           "Leave it out to use the first configured database.",
        },
        "max_rows": {
            "type": "integer",
            "minimum": 1,
            "maximum": MAX_ROWS_LIMIT,
            "default": DEFAULT_MAX_ROWS,
            "description": f"The most rows to return (1 to {MAX_ROWS_LIMIT}); the result says when "
                           "there were more.",
        },
    },
    "required": ["sql"],
    "additionalProperties": False,
}


@capability(
    name="data_query",
    description="Answer questions about the organisation's own figures (sales, revenue, sign-ups, statistics) "
                "with one read-only SQL query on a configured database (SQLite or PostgreSQL); returns the "
                "columns and rows. Writes are refused by the database.",
    parameters=PARAMETERS,
    keywords=("sql", "query", "database", "db", "select", "table", "rows", "data", "revenue",
              # never "表" alone: it is in 表格, 代表, 表达, 发表 too
              "查询", "数据库", "数据", "数据表", "表里", "表中", "这张表", "哪张表", "报表", "统计", "销售额", "营收",
              "注册用户"),
    examples=("how much revenue did we make in March?", "上个月有多少新用户注册"),
)
def data_query(sql: str, context: ExecutionContext, params: list | dict | None = None,
               database: str | None = None, max_rows: int = DEFAULT_MAX_ROWS) -> dict:
    accessor: DataAccessor | None = (context.registry.get_capability("data_access", None)
                                     if context.registry is not None else None)
    if accessor is None:
        raise CapabilityError("Data queries are not set up in this Flora (no data_access service).",
                              error_type="misconfigured")
    name = database or accessor.default_database
    result = accessor.query(name or "", sql, params, max_rows, task_id=context.task_id)
    return {"database": name, **result}
