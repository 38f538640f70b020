"""The suite queries (reports 001 and 004, the tick pack), answered in DuckDB over the stored raw
encodings.

A script of queries, one statement per line (``[name =] select ...`` / ``exec ...``), is parsed by
``dsql`` and each statement translated to DuckDB SQL with DolphinDB's meaning, as its manual
documents it: ``group by`` keys come first in the result, ``pivot by a, b`` makes one column per
value of ``b`` (string values only here) in ascending order, ``bar(x, n)`` is ``x - x % n`` of x's
own type (n a constant in x's unit, or a DURATION), ``int()``/``long()`` of a temporal value its
count of units, ``wavg`` the weighted mean, ``last`` of a group its last row in the table's order,
``context by`` (``csort``) with the tm-functions, ``aj`` the as-of join (both: ``timeseries``), a
``(select ...)`` in ``from`` its result, ``hour``/``minute`` of a time, ``std`` the sample
deviation, ``iif`` with both branches of one type, ``int()``/``double()`` typed NULLs,
``ffill``/``bfill``/``lfill``/``nullFill`` over the table's row order (``lfill`` fills only between
two values, by position), ``ej`` an equi join,
``top``/``limit`` after ``order by``, ``exec`` of one aggregate a scalar. An assignment keeps the
result as a session variable (an in-memory table) for the next statement. Comparisons must be
between values of one kind (a SECOND column with a SECOND literal...), integer ``/`` and pivots by
numbers are refused rather than guessed.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import pyarrow as pa

from tests.ddbserver import codec as c
from tests.ddbserver.dsql import Select, parse_statement, split_statements
from tests.ddbserver.queries import date_expr, minute_expr
from tests.ddbserver.store import Store, TableMeta, from_arrow
from tests.ddbserver.sqlparts import (BOOL_TYPE, INTEGRAL, TEMPORAL, Expr, comparable, constant, dedupe,
                                      default_name, exec_value, numeric, q, sql_string)
from tests.ddbserver.syntax import ScriptError
from tests.ddbserver import timeseries as ts

LITERAL_TYPES = {"int": c.INT, "float": c.DOUBLE, "str": c.STRING, "date": c.DATE, "second": c.SECOND,
                 "time": c.TIME, "datetime": c.DATETIME, "timestamp": c.TIMESTAMP,
                 "nanotimestamp": c.NANOTIMESTAMP}
AGGREGATES = {"count", "avg", "sum", "max", "min", "std"}
TM_FUNCTIONS = {"tmsum"}
CASTS = {"int": (c.INT, "INTEGER"), "long": (c.LONG, "BIGINT"), "short": (c.SHORT, "SMALLINT"),
         "double": (c.DOUBLE, "DOUBLE"), "float": (c.FLOAT, "FLOAT")}
HOUR_OF = {c.SECOND: "({x} // 3600)", c.TIME: "({x} // 3600000)", c.MINUTE: "({x} // 60)",
           c.TIMESTAMP: "(({x} % 86400000) // 3600000)", c.DATETIME: "(({x} % 86400) // 3600)"}
# second(X): a time of day cut (never rounded) to its second, as DolphinDB's SECOND holds it
SECOND_OF = {c.SECOND: "{x}", c.TIME: "({x} // 1000)", c.TIMESTAMP: "(({x} % 86400000) // 1000)",
             c.NANOTIMESTAMP: "(({x} % 86400000000000) // 1000000000)", c.DATETIME: "({x} % 86400)"}
# time(X): a time of day in milliseconds (a SECOND's exact, finer times cut)
TIME_OF = {c.SECOND: "({x} * 1000)", c.TIME: "{x}", c.TIMESTAMP: "({x} % 86400000)",
           c.NANOTIMESTAMP: "(({x} % 86400000000000) // 1000000)", c.DATETIME: "(({x} % 86400) * 1000)"}


@dataclass(frozen=True)
class DfsHandle:
    """A session variable holding a DFS table (what loadTable / loadTextEx return)."""
    db: str
    table: str


@dataclass
class Relation:
    sql: str                       # the FROM clause
    types: dict[str, int]
    order_key: str | None          # keeps the source's row order
    temps: list[TableMeta]
    dfs: bool = False              # a DFS table (loadTable), not an in-memory one
    partitions: tuple = ()         # its partitioning columns
    name: str | None = None        # the variable holding it (aj names the right's columns by it)
    window: tuple | None = None    # context by: (PARTITION BY keys, ORDER BY position) SQL
    checks: list = field(default_factory=list)   # tm-functions' T to check: (T sql, what)


class SuiteQueries:
    def __init__(self, store: Store):
        self.store = store

    def run(self, variables: dict, script: str) -> list | None:
        """The reply objects of a query script; None when the script is not one."""
        statements = split_statements(script)
        if statements is None:
            return None
        value = None
        for index, text in enumerate(statements, start=1):
            try:
                target, query = parse_statement(text)
            except ScriptError as exc:
                raise ScriptError(str(exc).replace("[line #1]", f"[line #{index}]")) from None
            value = self.evaluate(variables, query)
            if target is not None:
                variables[target] = value
                value = None
        return [] if value is None else [value]

    # --- one statement --------------------------------------------------------------------------
    def evaluate(self, variables: dict, query: Select):
        rel = self.relation(variables, query.source)
        try:
            if query.pivot:
                return self._pivot(rel, query)
            if query.context:
                return self._context(rel, query)
            return self._select(rel, query)
        finally:
            for meta in rel.temps:
                self.store.drop(meta)

    def relation(self, variables: dict, source: tuple) -> Relation:
        kind = source[0]
        if kind == "load":
            meta = self.store.dfs_table(source[1], source[2])
            return Relation(f"{meta.duck} AS src", dict(meta.columns), "src.rowid", [], dfs=True,
                            partitions=tuple(meta.partition_columns))
        if kind == "var":
            value = variables.get(source[1])
            if isinstance(value, DfsHandle):
                return self.relation(variables, ("load", value.db, value.table))
            if not isinstance(value, c.Table):
                raise ScriptError(f"Syntax Error: [line #1] Cannot recognize the token {source[1]}")
            meta = self.store.temp_table(value)
            return Relation(f"{meta.duck} AS src", dict(meta.columns), "src.rowid", [meta], name=source[1])
        if kind == "select":                         # a subquery: its result, an in-memory table
            value = self.evaluate(variables, source[1])
            if not isinstance(value, c.Table):
                raise ScriptError("A subquery in from must give a table (select, not exec)")
            return self._in_memory(value)
        left, right = (self.relation(variables, s) for s in source[1:3])
        if kind == "aj":
            try:
                sql, columns = ts.asof_join(self.store, left, right, source[3], right.name)
                return self._in_memory(self.store.query(sql, [t for _, t in columns]))
            finally:
                for meta in left.temps + right.temps:
                    self.store.drop(meta)
        if left.temps or right.temps or not left.sql.endswith(" AS src") or not right.sql.endswith(" AS src"):
            raise ScriptError("The test server joins two DFS tables only")
        for col in source[3]:
            if col not in left.types or col not in right.types:
                raise ScriptError(f"ej: the matching column {col} is not in both tables")
        using = ", ".join(q(col) for col in source[3])
        types = {**left.types, **{k: v for k, v in right.types.items() if k not in left.types}}
        sql = (f"{left.sql[:-len(' AS src')]} AS l JOIN {right.sql[:-len(' AS src')]} AS r "
               f"USING ({using})")
        return Relation(sql, types, None, [])

    def _in_memory(self, table: c.Table) -> Relation:
        meta = self.store.temp_table(table)
        return Relation(f"{meta.duck} AS src", dict(meta.columns), "src.rowid", [meta])

    def _select(self, rel: Relation, query: Select):
        if [e for e, _ in query.items] == [("star",)]:            # select *: every column, in order
            query.items = [(("col", name), None) for name in rel.types]
        keys = [(self.compile(rel, e), a or default_name(e, i)) for i, (e, a) in enumerate(query.group)]
        items = [(self.compile(rel, e), a or default_name(e, i)) for i, (e, a) in enumerate(query.items)]
        aggregated = bool(keys) or any(x.agg for x, _ in items)
        if any(x.window for x, _ in items) and aggregated:
            raise ScriptError("The test server does not mix order-sensitive and aggregate functions")
        if aggregated and any(not x.agg for x, _ in items):
            raise ScriptError("Every select item of a grouped query must be an aggregate")
        for t_sql, what in rel.checks:                # tm-functions over the whole table
            ts.check_increasing(self.store, rel.sql, self._where(rel, query), t_sql, "", rel.order_key, what)
        outputs = keys + items
        names = dedupe([n for _, n in outputs])
        select = ", ".join(f"{x.sql} AS {q(n)}" for (x, _), n in zip(outputs, names))
        sql = f"SELECT {select} FROM {rel.sql}{self._where(rel, query)}"
        if keys:
            sql += " GROUP BY " + ", ".join(str(i + 1) for i in range(len(keys)))
            sql += self._having(rel, query)
        order = self._order(rel, query, names, aggregated)
        if order:
            sql += " ORDER BY " + order
        elif keys:
            sql += " ORDER BY " + ", ".join(str(i + 1) for i in range(len(keys)))
        elif not aggregated and rel.order_key:
            sql += f" ORDER BY {rel.order_key}"
        if query.limit is not None:
            sql += f" LIMIT {int(query.limit)}"
        table = self.store.query(sql, [x.type for x, _ in outputs])
        if query.exec:
            return exec_value(table, aggregated and not keys)
        return table

    def _context(self, rel: Relation, query: Select) -> c.Table:
        """``context by`` keys [``csort`` ...]: every row kept, tm-functions over each group in
        the csort order (then the source's); groups one after another, in key order."""
        if query.group or query.having or query.exec or query.limit is not None or rel.order_key is None:
            raise ScriptError("The test server takes select ... [where] context by [csort] [order by] only, "
                              "over an ordered table")
        keys = [self.compile(rel, e) for e, _ in query.context]
        if any(k.agg or k.window for k in keys):
            raise ScriptError("context by takes columns of the table")
        partition = ", ".join(k.sql for k in keys)
        sort = [self.compile(rel, e).sql + (" DESC" if desc else "") for e, desc in query.csort]
        position = ", ".join(sort + [rel.order_key])
        rel.window = (partition, position)
        if [e for e, _ in query.items] == [("star",)]:
            query.items = [(("col", name), None) for name in rel.types]
        items = [(self.compile(rel, e), a or default_name(e, i)) for i, (e, a) in enumerate(query.items)]
        if any(x.agg for x, _ in items):
            raise ScriptError("The test server's context by takes columns and tm-functions (no aggregates)")
        where = self._where(rel, query)
        for t_sql, what in rel.checks:
            ts.check_increasing(self.store, rel.sql, where, t_sql, partition, position, what)
        names = dedupe([n for _, n in items])
        select = ", ".join(f"{x.sql} AS {q(n)}" for (x, _), n in zip(items, names))
        order = self._order(rel, query, names, False) or f"{partition}, {position}"
        sql = f"SELECT {select} FROM {rel.sql}{where} ORDER BY {order}"
        return self.store.query(sql, [x.type for x, _ in items])

    def _where(self, rel: Relation, query: Select) -> str:
        if not query.where:
            return ""
        conditions = []
        for cond in query.where:
            x = self.compile(rel, cond)
            if x.type != BOOL_TYPE or x.agg or x.window:
                raise ScriptError("A where condition must be a comparison of the table's values")
            conditions.append(x.sql)
        return " WHERE " + " AND ".join(conditions)

    def _having(self, rel: Relation, query: Select) -> str:
        conditions = []
        for cond in query.having:
            x = self.compile(rel, cond)
            if x.type != BOOL_TYPE or not x.agg:
                raise ScriptError("A having condition must compare aggregates of the group")
            conditions.append(x.sql)
        return " HAVING " + " AND ".join(conditions) if conditions else ""

    def _order(self, rel: Relation, query: Select, names: list[str], aggregated: bool) -> str:
        parts = []
        for expr, desc in query.order:
            if expr[0] == "col" and expr[1] in names:
                sql = q(expr[1])
            elif aggregated:
                raise ScriptError("order by of a grouped query takes its result's columns")
            else:
                sql = self.compile(rel, expr).sql
            # DolphinDB sorts NULL as the smallest value
            parts.append(sql + (" DESC NULLS LAST" if desc else " ASC NULLS FIRST"))
        return ", ".join(parts)

    def _pivot(self, rel: Relation, query: Select) -> c.Table:
        if query.group or query.order or query.limit is not None or query.exec:
            raise ScriptError("The test server pivots plain select ... pivot by queries only")
        if len(query.items) != 1 or len(query.pivot) < 2:
            raise ScriptError("The test server pivots one aggregate by row keys and one column key")
        value = self.compile(rel, query.items[0][0])
        if not value.agg:
            raise ScriptError("The test server pivots an aggregate only")
        keys = [(self.compile(rel, e), a or default_name(e, i)) for i, (e, a) in enumerate(query.pivot)]
        column_key = keys[-1][0]
        if column_key.type not in c.STRINGISH:
            raise ScriptError("The test server pivots by a string column only (column names)")
        row_names = dedupe([n for _, n in keys[:-1]])
        select = ", ".join([f"{x.sql} AS {q(n)}" for (x, _), n in zip(keys[:-1], row_names)]
                           + [f"{column_key.sql} AS __pivot", f"{value.sql} AS __value"])
        groups = ", ".join(str(i + 1) for i in range(len(keys)))
        sql = f"SELECT {select} FROM {rel.sql}{self._where(rel, query)} GROUP BY {groups}"
        with self.store.lock:
            long = self.store.con.sql(sql).to_arrow_table().to_pandas()
        wide = long.pivot(index=row_names, columns="__pivot", values="__value")
        wide = wide.reindex(columns=sorted(c for c in wide.columns if c is not None)).reset_index()
        value_names = [str(name) for name in wide.columns[len(row_names):]]
        wide.columns = row_names + value_names
        arrow = pa.Table.from_pandas(wide.sort_values(row_names), preserve_index=False)
        types = [x.type for x, _ in keys[:-1]] + [value.type] * len(value_names)
        return from_arrow(arrow, types)

    # --- expressions ----------------------------------------------------------------------------
    def compile(self, rel: Relation, node) -> Expr:
        kind = node[0]
        if kind == "col":
            if node[1] not in rel.types:
                raise ScriptError(f"Unrecognized column name {node[1]}")
            return Expr(q(node[1]), rel.types[node[1]])
        if kind == "lit":
            lit_type = LITERAL_TYPES[node[1]]
            if node[1] == "str":
                return Expr(sql_string(node[2]), c.STRING)
            if node[1] == "int" and not -2**31 < node[2] < 2**31:
                lit_type = c.LONG
            return Expr(repr(node[2]), lit_type)
        if kind == "neg":
            x = self.compile(rel, node[1])
            numeric(x, "-")
            return Expr(f"(-{x.sql})", x.type, x.agg, x.window)
        if kind == "bin":
            return self._binary(rel, node[1], self.compile(rel, node[2]), self.compile(rel, node[3]))
        if kind == "between":
            x, lo, hi = (self.compile(rel, n) for n in node[1:4])
            comparable(x, lo)
            comparable(x, hi)
            return Expr(f"({x.sql} BETWEEN {lo.sql} AND {hi.sql})", BOOL_TYPE, x.agg, x.window)
        if kind == "in":
            x = self.compile(rel, node[1])
            if node[2][0] != "vec":
                raise ScriptError("The test server takes in [...] with a vector literal only")
            values = [self.compile(rel, v) for v in node[2][1]]
            for v in values:
                comparable(x, v)
            return Expr(f"({x.sql} IN ({', '.join(v.sql for v in values)}))", BOOL_TYPE, x.agg, x.window)
        if kind == "like":
            return self._like(self.compile(rel, node[1]), node[2], node[3])
        if kind == "call":
            return self._call(rel, node[1], node[2])
        if kind == "star":
            raise ScriptError("* is allowed in count(*) only")
        raise ScriptError(f"The test server cannot evaluate {kind} expressions")

    def _binary(self, rel: Relation, op: str, a: Expr, b: Expr) -> Expr:
        agg, window = a.agg or b.agg, a.window or b.window
        if op in ("and", "or"):
            if a.type != BOOL_TYPE or b.type != BOOL_TYPE:
                raise ScriptError(f"{op} takes two conditions")
            return Expr(f"({a.sql} {op.upper()} {b.sql})", BOOL_TYPE, agg, window)
        if op in ("==", "!=", "<", ">", "<=", ">="):
            comparable(a, b)
            sql_op = {"==": "=", "!=": "<>"}.get(op, op)
            return Expr(f"({a.sql} {sql_op} {b.sql})", BOOL_TYPE, agg, window)
        if op == "+" and a.type in c.STRINGISH and b.type in c.STRINGISH:
            return Expr(f"({a.sql} || {b.sql})", c.STRING, agg, window)
        numeric(a, op)
        numeric(b, op)
        floats = a.type in (c.FLOAT, c.DOUBLE) or b.type in (c.FLOAT, c.DOUBLE)
        if op == "/" and not floats:
            raise ScriptError("The test server refuses / of two integers (DolphinDB divides them "
                              "as integers); make one side DOUBLE")
        if op == "%" and floats:
            raise ScriptError("The test server takes % of integers only")
        result = c.DOUBLE if floats else (c.LONG if c.LONG in (a.type, b.type) else c.INT)
        sql = f"(CAST({a.sql} AS DOUBLE) / {b.sql})" if op == "/" else f"({a.sql} {op} {b.sql})"
        return Expr(sql, result, agg, window)

    @staticmethod
    def _like(x: Expr, pattern_node, negated: bool) -> Expr:
        if x.type not in c.STRINGISH or pattern_node[:2] != ("lit", "str"):
            raise ScriptError("like takes a string column and a string pattern")
        pattern = "".join({"%": "%", "?": "_", "_": "\\_", "\\": "\\\\"}.get(ch, ch) for ch in pattern_node[2])
        return Expr(f"({x.sql} {'NOT ' if negated else ''}LIKE {sql_string(pattern)} ESCAPE '\\')",
                    BOOL_TYPE, x.agg, x.window)

    def _call(self, rel: Relation, name: str, args: list) -> Expr:
        if name == "count" and len(args) == 1 and args[0] == ("star",):
            return Expr("count(*)", c.INT, agg=True)
        if name in CASTS and not args:
            ddb_type, duck = CASTS[name]
            return Expr(f"CAST(NULL AS {duck})", ddb_type)
        if name == "like" and len(args) == 2:
            return self._like(self.compile(rel, args[0]), args[1], False)
        if name in TM_FUNCTIONS or name == "bar":
            return self._timed(rel, name, args)
        values = [self.compile(rel, a) for a in args]
        agg = any(v.agg for v in values)
        window = any(v.window for v in values)
        if name in AGGREGATES:
            return self._aggregate(name, values)
        if name == "wavg" and len(values) == 2 and not agg:
            x, w = values
            numeric(x, name)
            numeric(w, name)
            weight = f"CASE WHEN {x.sql} IS NOT NULL THEN CAST({w.sql} AS DOUBLE) END"
            return Expr(f"(sum(CAST({x.sql} AS DOUBLE) * {w.sql}) / sum({weight}))", c.DOUBLE, agg=True)
        if name == "last" and len(values) == 1 and not agg:
            if rel.order_key is None:
                raise ScriptError("last needs an ordered table")
            return Expr(f"last({values[0].sql} ORDER BY {rel.order_key})", values[0].type, agg=True)
        if name in CASTS and len(values) == 1:
            ddb_type, duck = CASTS[name]
            if not (values[0].type in TEMPORAL and name in ("int", "long")
                    and (name == "long" or values[0].type not in (c.TIMESTAMP, c.NANOTIMESTAMP))):
                numeric(values[0], name)           # a temporal's int()/long(): its count of units
            return Expr(f"CAST({values[0].sql} AS {duck})", ddb_type, agg, window)
        if name == "iif" and len(values) == 3:
            cond, yes, no = values
            if cond.type != BOOL_TYPE or yes.type != no.type:
                raise ScriptError("iif takes a condition and two results of one type")
            return Expr(f"(CASE WHEN {cond.sql} THEN {yes.sql} ELSE {no.sql} END)", yes.type, agg, window)
        if name == "hour" and len(values) == 1 and values[0].type in HOUR_OF:
            return Expr(HOUR_OF[values[0].type].format(x=values[0].sql), c.INT, agg, window)
        if name == "time" and len(values) == 1 and values[0].type in TIME_OF:
            return Expr(TIME_OF[values[0].type].format(x=values[0].sql), c.TIME, agg, window)
        if name == "second" and len(values) == 1 and values[0].type in SECOND_OF:
            return Expr(SECOND_OF[values[0].type].format(x=values[0].sql), c.SECOND, agg, window)
        if name == "minute" and len(values) == 1 and values[0].type in (c.SECOND, c.TIME, c.TIMESTAMP, c.NANOTIMESTAMP):
            return Expr(minute_expr("__x", values[0].type).replace('"__x"', values[0].sql), c.MINUTE, agg, window)
        if name == "date" and len(values) == 1 and values[0].type in (c.DATE, c.TIMESTAMP):
            return Expr(date_expr("__x", values[0].type).replace('"__x"', values[0].sql), c.DATE, agg, window)
        if name == "string" and len(values) == 1 and values[0].type in INTEGRAL + c.STRINGISH:
            return Expr(f"CAST({values[0].sql} AS VARCHAR)", c.STRING, agg, window)
        if name == "lpad" and len(values) == 3 and values[0].type in c.STRINGISH:
            return Expr(f"lpad({values[0].sql}, {values[1].sql}, {values[2].sql})", c.STRING, agg, window)
        if name == "nullFill" and len(values) == 2:
            numeric(values[1], name)
            return Expr(f"coalesce({values[0].sql}, {values[1].sql})", values[0].type, agg, window)
        if name in ("ffill", "bfill", "lfill") and len(values) == 1:
            return self._fill(rel, name, values[0])
        raise ScriptError(f"The test server does not evaluate {name}() with these arguments")

    def _timed(self, rel: Relation, name: str, args: list) -> Expr:
        """``bar(X, interval)``: X - X % interval, of X's own type (a SECOND stays a SECOND);
        ``tmsum(T, X, window)`` (module ``timeseries``). Intervals and windows: a constant integer
        in X's (T's) unit, or a DURATION."""
        if len(args) != (2 if name == "bar" else 3) or not constant(args[-1]):
            raise ScriptError(f"{name} takes {'X, interval' if name == 'bar' else 'T, X, window'} "
                              f"with a constant {'interval' if name == 'bar' else 'window'}")
        values = [self.compile(rel, a) for a in args[:-1]]
        x = values[0]
        if x.type not in TEMPORAL + INTEGRAL:
            raise ScriptError(f"{name} takes a temporal or integral {'X' if name == 'bar' else 'T'}")
        size = args[-1]
        size_sql = None if size[:2] == ("lit", "duration") else self.compile(rel, size).sql
        steps = ts.steps(size, x.type, self.store, size_sql)
        if name == "bar":
            return Expr(f"({x.sql} - {x.sql} % {steps})", x.type, x.agg, x.window)
        numeric(values[1], name)
        partition, position = rel.window or ("", rel.order_key)
        if position is None or x.agg or values[1].agg:
            raise ScriptError(f"{name} needs an ordered table and columns of it")
        rel.checks.append((x.sql, name))
        sql, result = ts.tm_sum(x.sql, values[1].sql, values[1].type, steps, partition, position)
        return Expr(sql, result, window=True)

    @staticmethod
    def _aggregate(name: str, values: list[Expr]) -> Expr:
        if len(values) != 1 or values[0].agg:
            raise ScriptError(f"{name} takes one column")
        x = values[0]
        if name == "count":
            return Expr(f"count({x.sql})", c.INT, agg=True)
        if name in ("max", "min"):
            return Expr(f"{name}({x.sql})", x.type, agg=True)
        numeric(x, name)
        if name == "avg":
            return Expr(f"avg({x.sql})", c.DOUBLE, agg=True)
        if name == "std":
            return Expr(f"stddev_samp({x.sql})", c.DOUBLE, agg=True)
        if x.type in INTEGRAL:
            return Expr(f"CAST(sum({x.sql}) AS BIGINT)", c.LONG, agg=True)
        return Expr(f"sum({x.sql})", c.DOUBLE, agg=True)

    @staticmethod
    def _fill(rel: Relation, name: str, x: Expr) -> Expr:
        if rel.order_key is None or x.agg:
            raise ScriptError(f"{name} needs an ordered table")
        numeric(x, name)
        key = rel.order_key
        before = f"OVER (ORDER BY {key} ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW)"
        after = f"OVER (ORDER BY {key} ROWS BETWEEN CURRENT ROW AND UNBOUNDED FOLLOWING)"
        if name == "ffill":
            return Expr(f"last_value({x.sql} IGNORE NULLS) {before}", x.type, window=True)
        if name == "bfill":
            return Expr(f"first_value({x.sql} IGNORE NULLS) {after}", x.type, window=True)
        prev_i = f"last_value(CASE WHEN {x.sql} IS NOT NULL THEN {key} END IGNORE NULLS) {before}"
        next_i = f"first_value(CASE WHEN {x.sql} IS NOT NULL THEN {key} END IGNORE NULLS) {after}"
        prev_v = f"last_value({x.sql} IGNORE NULLS) {before}"
        next_v = f"first_value({x.sql} IGNORE NULLS) {after}"
        line = (f"({prev_v} + ({next_v} - {prev_v}) * CAST({key} - {prev_i} AS DOUBLE) / ({next_i} - {prev_i}))")
        if x.type in INTEGRAL:                     # lfill keeps an integral vector integral
            line = f"CAST(round({line}) AS BIGINT)"
        sql = f"(CASE WHEN {x.sql} IS NOT NULL THEN {x.sql} ELSE {line} END)"
        return Expr(sql, x.type, window=True)
