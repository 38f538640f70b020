"""The test server's time-series SQL: ``aj`` (as-of join), the tm-functions (``tmsum``) of a
``context by`` query, and the durations they take, with DolphinDB's documented meaning.

``aj(left, right, matchingCols)`` (DolphinDB manual, "asof join"): for each left row, among the
right rows that match every matching column but the last, the row at the left row's value of the
last one (time), or else the last row before it; of several at one time, the last. Left rows keep
their order; one without a match gets NULLs. Result columns: the left table's, then the right
table's last matching column named ``<right table>_<column>``, then the right's other columns (one
whose name the left has also gets the prefix; the other matching columns are not repeated). The
server knows that name only for a right table held in a variable: from a subquery it leaves such
columns out, so a text selecting them fails here rather than guessing. What the manual requires is
refused, not worked around: a right table that is not sorted by the last matching column within
each group (DolphinDB assumes it is and "unexpected results may be returned"), a DFS right table
with an in-memory left one, and a partitioned table whose partitioning columns are not all among
the matching columns before the last.

``tmsum(T, X, window)`` (manual, "tm-functions"): for each row, the sum of X over the rows of its
group up to and including it whose T lies in (T - window, T]; ``window`` an integer in T's unit
or a DURATION; T must be non-decreasing in the rows' order (after ``csort``) and without NULLs, or
the query is refused. An integral X sums to a LONG, a floating one to a DOUBLE; NULLs are skipped
and a window of NULLs only is NULL.
"""
from __future__ import annotations

from tests.ddbserver import codec as c
from tests.ddbserver.sqlparts import INTEGRAL, q
from tests.ddbserver.syntax import ScriptError

MS_OF_UNIT = {"ns": 1e-6, "us": 1e-3, "ms": 1, "s": 1000, "m": 60_000, "H": 3_600_000, "d": 86_400_000,
              "w": 7 * 86_400_000}
MS_OF_TYPE = {c.SECOND: 1000, c.TIME: 1, c.MINUTE: 60_000, c.DATE: 86_400_000, c.DATETIME: 1000,
              c.TIMESTAMP: 1, c.NANOTIMESTAMP: 1e-6}


def steps(window, t_type: int, store, compiled_sql: str | None = None) -> int:
    """A window or bar interval in the unit of a column of ``t_type``: an integer (already in that
    unit) or a duration (converted; it must be a whole number of the column's unit)."""
    if window[0] == "lit" and window[1] == "duration":
        count, unit = window[2]
        if unit not in MS_OF_UNIT or t_type not in MS_OF_TYPE:
            raise ScriptError(f"The test server takes no {count}{unit} duration on a "
                              f"{c.TYPE_NAMES.get(t_type, t_type)} column")
        value = count * MS_OF_UNIT[unit] / MS_OF_TYPE[t_type]
        if value != int(value):
            raise ScriptError(f"The duration {count}{unit} is not a whole number of the column's unit")
        value = int(value)
    else:
        if compiled_sql is None:
            raise ScriptError("The window must be a positive integer or a DURATION")
        value = store.scalar(f"SELECT {compiled_sql}")
        if not isinstance(value, int):
            raise ScriptError("The window must be a positive integer or a DURATION")
    if value <= 0:
        raise ScriptError("The window must be positive")
    return value


def tm_sum(t_sql: str, x_sql: str, x_type: int, window: int, partition: str, position: str) -> tuple[str, int]:
    """The SQL of ``tmsum`` over (T - window, T], up to the current row in ``position`` order:
    the running sum to this row less the sum of the group's rows at or before T - window (T
    non-decreasing in that order, checked by ``check_increasing``)."""
    part = f"PARTITION BY {partition} " if partition else ""
    upto = f"OVER ({part}ORDER BY {position} ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW)"
    gone = f"OVER ({part}ORDER BY {t_sql} RANGE BETWEEN UNBOUNDED PRECEDING AND {window} PRECEDING)"
    total = f"(sum({x_sql}) {upto} - coalesce(sum({x_sql}) {gone}, 0))"
    count = f"(count({x_sql}) {upto} - coalesce(count({x_sql}) {gone}, 0))"
    if x_type in INTEGRAL:
        return f"(CASE WHEN {count} = 0 THEN NULL ELSE CAST({total} AS BIGINT) END)", c.LONG
    return f"(CASE WHEN {count} = 0 THEN NULL ELSE CAST({total} AS DOUBLE) END)", c.DOUBLE


def check_increasing(store, source: str, where: str, t_sql: str, partition: str, position: str,
                     what: str) -> None:
    """Refuse a T that goes back (or is NULL) within a group, in the rows' order."""
    part = f"PARTITION BY {partition} " if partition else ""
    sql = (f"SELECT count(*) FROM (SELECT {t_sql} AS __t, lag({t_sql}) OVER ({part}ORDER BY {position}) AS __before "
           f"FROM {source}{where}) WHERE __t IS NULL OR __t < __before")
    if store.scalar(sql):
        raise ScriptError(f"{what}: T must be a non-strictly increasing vector without NULLs in each group "
                          f"(sort it, e.g. with csort)")


def asof_join(store, left, right, cols: list[str], right_name: str | None) -> tuple[str, list[tuple[str, int]]]:
    """The SQL of ``aj`` over two relations (``suites.Relation``, each a DuckDB table ``AS src``
    with its partitioning columns in ``partitions``) and the result's (name, type) columns, in
    the left table's row order. Checks what the manual requires first."""
    if not cols:
        raise ScriptError("aj: matchingCols is empty")
    for col in cols:
        if col not in left.types or col not in right.types:
            raise ScriptError(f"aj: the matching column {col} is not in both tables")
    if right.dfs and not left.dfs:
        raise ScriptError("aj: if the left table of asof join is not a DFS table, its right table cannot be "
                          "a DFS table either")
    for side in (left, right):
        missing = [p for p in side.partitions if p not in cols[:-1]]
        if missing:
            raise ScriptError(f"aj: the matching columns before the last must include every partitioning "
                              f"column of a partitioned table ({', '.join(missing)} is not)")
    keys, last = cols[:-1], cols[-1]
    if left.types[last] != right.types[last] and not (left.types[last] in INTEGRAL and right.types[last] in INTEGRAL):
        raise ScriptError(f"aj: the last matching column {last} has different types in the two tables")
    l_table, r_table = left.sql[:-len(" AS src")], right.sql[:-len(" AS src")]
    check_increasing(store, r_table, "", q(last), ", ".join(q(k) for k in keys), "rowid",
                     f"aj: the right table is not sorted by {last} within each group; DolphinDB's aj "
                     "assumes it is and may return unexpected results, so the test server refuses:")
    out = [(f"l.{q(n)}", n, t) for n, t in left.types.items()]
    for name, typ in right.types.items():
        if name in keys:
            continue
        if name == last or name in left.types:
            if right_name is None:
                continue                  # DolphinDB's name for it is not known here: left out
            out.append((f"r.{q(name)}", f"{right_name}_{name}", typ))
        else:
            out.append((f"r.{q(name)}", name, typ))
    partition = ", ".join(q(k) for k in keys + [last])
    latest = (f"(SELECT * FROM {r_table} QUALIFY row_number() OVER (PARTITION BY {partition} "
              f"ORDER BY rowid DESC) = 1)")
    on = " AND ".join([f"l.{q(k)} = r.{q(k)}" for k in keys] + [f"l.{q(last)} >= r.{q(last)}"])
    select = ", ".join(f"{expr} AS {q(name)}" for expr, name, _ in out)
    sql = (f"SELECT {select} FROM (SELECT *, rowid AS __row FROM {l_table}) AS l "
           f"ASOF LEFT JOIN {latest} AS r ON {on} ORDER BY l.__row")
    return sql, [(name, typ) for _, name, typ in out]
