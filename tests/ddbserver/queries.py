"""The Tickbench target's read bodies, answered in DuckDB over the stored raw encodings.

A body is the lines a read runs, the last one assigning ``tickbench_res``: a day/slice select
(``select *`` or a select list of columns),
minute bars, spread by minute, the map-reduce and the OLS. The same body arrives inside the
MEASURED template or, with the assignment dropped, as a plain script (see dispatch.py).

Each read also goes through the node caches (caches.py) when the dispatcher says which node it
came through: the partitions it touches are those its conditions on the partitioning columns
(day, key) select, as DolphinDB prunes partitions, whatever its other conditions.
"""
from __future__ import annotations

import bisect
import re
import threading

import numpy as np

from tests.ddbserver import codec as c
from tests.ddbserver.store import Store, TableMeta
from tests.ddbserver.syntax import (DATE_LIT, IDENT, LOAD, QS, STR, TIME_LIT, TS_LIT, ScriptError,
                                    parse_date, same_temporal_type, split_conditions, temporal_literal,
                                    time_value, unquote)

RESULT = "tickbench_res"


def minute_expr(col: str, ddb_type: int) -> str:
    return {
        c.SECOND: f'("{col}" // 60)',
        c.TIME: f'("{col}" // 60000)',
        c.TIMESTAMP: f'(("{col}" % 86400000) // 60000)',
        c.NANOTIMESTAMP: f'(("{col}" % 86400000000000) // 60000000000)',
        c.DATETIME: f'(("{col}" % 86400) // 60)',
        c.MINUTE: f'"{col}"',
    }[ddb_type]


def sum_type(col: str, ddb_type: int) -> int:
    """The type of DolphinDB's ``sum`` of a column: LONG of an integral one, DOUBLE of a floating one."""
    if ddb_type in (c.BOOL, c.CHAR, c.SHORT, c.INT, c.LONG):
        return c.LONG
    if ddb_type in (c.FLOAT, c.DOUBLE):
        return c.DOUBLE
    raise ScriptError(f"sum({col}): {c.TYPE_NAMES.get(ddb_type, ddb_type)} is not a number")


def date_expr(col: str, ddb_type: int) -> str:
    return {
        c.DATE: f'"{col}"',
        c.TIMESTAMP: f'("{col}" // 86400000)',
        c.DATETIME: f'("{col}" // 86400)',
        c.NANOTIMESTAMP: f'("{col}" // 86400000000000)',
    }[ddb_type]


class Queries:
    def __init__(self, store: Store, caches=None):
        self.store = store
        self.caches = caches
        # a map's append! into a DFS table; the dispatcher makes it a transaction (transactions.py)
        self.write_dfs = lambda path, table, rows: self.store.insert(self.store.dfs_table(path, table), rows)
        self._local = threading.local()   # (node, kind) of the read each connection's thread answers

    def run(self, body: str, node=None, kind: str = "plain") -> c.Table | None:
        """The result table of ``body``; None when it is none of the read shapes. ``node``: the
        node the session is on, whose caches the read goes through (None: no cache involved)."""
        self._local.via = (node, kind) if node is not None and self.caches is not None else None
        try:
            return self._run(body)
        finally:
            self._local.via = None

    def _touch(self, path: str, meta: TableMeta, where_text: str) -> None:
        via = getattr(self._local, "via", None)
        if via is not None:
            node, kind = via
            self.caches.read(node, self.partitions(path, meta, where_text), kind)

    def partitions(self, path: str, meta: TableMeta, where_text: str) -> list[tuple[str, str, int, int]]:
        """(database, table, day, key bucket) of every partition holding rows that the conditions
        on the partitioning columns select (the other conditions prune nothing)."""
        if not meta.partition_columns or path not in self.store.databases:
            return []
        db = self.store.databases[path]
        table = next(name for (p, name), m in self.store.tables.items() if p == path and m is meta)
        day_col, *key_cols = meta.partition_columns[:2]      # a database by day only has no key level
        conds = [cond for cond in split_conditions(where_text)
                 if re.match(rf"({'|'.join(re.escape(col) for col in (day_col, *key_cols))})\b", cond)]
        where = " and ".join(self._condition(meta, cond) for cond in conds) or "true"
        day = date_expr(day_col, meta.type_of(day_col))
        key = f'"{key_cols[0]}"' if key_cols else "''"
        with self.store.lock:
            pairs = self.store.con.execute(
                f"select distinct {day}, {key} from {meta.duck} where {where}").fetchall()
        return sorted({(path, table, int(d), bisect.bisect_right(db.key_bounds, k)) for d, k in pairs})

    def _run(self, body: str) -> c.Table | None:
        m = re.fullmatch(rf"{RESULT} = select (\*|{IDENT}(?:, {IDENT})*) from {LOAD} where (.+)", body)
        # a select list is a read-day only with a read's day filter: a suite query that selects
        # columns with other conditions is answered by the suite's own handling further on
        if m and m.group(1) != "*" and not self._day_filter(m.group(4)):
            m = None
        if m:
            meta = self.store.dfs_table(unquote(m.group(2)), unquote(m.group(3)))
            where = self.where(meta, m.group(4))
            self._touch(unquote(m.group(2)), meta, m.group(4))
            if m.group(1) == "*":
                return self.store.query(f"select * from {meta.duck} where {where} order by rowid",
                                        [t for _, t in meta.columns])
            names = m.group(1).split(", ")      # a select list of columns, in its own order
            types = [meta.type_of(n) for n in names]
            select = ", ".join(f'"{n}"' for n in names)
            return self.store.query(f"select {select} from {meta.duck} where {where} order by rowid", types)
        m = re.fullmatch(
            rf"{RESULT} = select first\(\(({IDENT}) \+ ({IDENT})\) / 2\) as open, "
            rf"max\(\(\1 \+ \2\) / 2\) as high, min\(\(\1 \+ \2\) / 2\) as low, "
            rf"last\(\(\1 \+ \2\) / 2\) as close(?:, sum\(({IDENT})\) as volume)? from {LOAD} where (.+) "
            rf"group by minute\(({IDENT})\) as minute", body)
        if m:
            bid, ask, size, db, table, where, time = m.groups()
            meta = self.store.dfs_table(unquote(db), unquote(table))
            self._touch(unquote(db), meta, where)
            mid = f'("{bid}" + "{ask}") / 2'
            minute = minute_expr(time, meta.type_of(time))
            types = [c.MINUTE, c.DOUBLE, c.DOUBLE, c.DOUBLE, c.DOUBLE]
            volume = ""
            if size:      # DolphinDB's sum: LONG of an integral column, DOUBLE of a floating one
                types.append(sum_type(size, meta.type_of(size)))
                volume = f', sum("{size}") as volume'
            sql = (f"select {minute} as minute, first({mid} order by rowid) as open, max({mid}) as high, "
                   f"min({mid}) as low, last({mid} order by rowid) as close{volume} from {meta.duck} "
                   f"where {self.where(meta, where)} group by 1 order by 1")
            return self.store.query(sql, types)
        m = re.fullmatch(
            rf"{RESULT} = select avg\(\(({IDENT})-({IDENT})\)/\(\1\+\2\)\*2\) as avgSpread "
            rf"from {LOAD} where (.+) group by minute\(({IDENT})\) as minute", body)
        if m:
            a, b = m.group(1), m.group(2)
            meta = self.store.dfs_table(unquote(m.group(3)), unquote(m.group(4)))
            self._touch(unquote(m.group(3)), meta, m.group(5))
            minute = minute_expr(m.group(6), meta.type_of(m.group(6)))
            sql = (f'select {minute} as minute, avg(("{a}"-"{b}")/("{a}"+"{b}")*2) as avgSpread '
                   f"from {meta.duck} where {self.where(meta, m.group(5))} group by 1 order by 1")
            return self.store.query(sql, [c.MINUTE, c.DOUBLE])
        m = re.fullmatch(MAPREDUCE, body, flags=re.S)
        if m:
            return self._mapreduce(m)
        m = re.fullmatch(OLS, body, flags=re.S)
        if m:
            return self._ols(m)
        return None

    def _mapreduce(self, m) -> c.Table:
        g = m.groupdict()
        src = self.store.dfs_table(unquote(g["db2"]), unquote(g["src"]))
        self.store.dfs_table(unquote(g["db1"]), unquote(g["dst"]))      # the output table must exist
        self._touch(unquote(g["db2"]), src, g["where"])
        k, d, t, b, a = g["k"], g["d"], g["t"], g["b"], g["a"]
        minute = minute_expr(t, src.type_of(t))
        day = date_expr(d, src.type_of(d))
        sql = (f'select "{k}", {day} as "{d}", {minute} as minute, avg("{b}") as "{b}", avg("{a}") as "{a}" '
               f"from {src.duck} where {self.where(src, g['where'])} group by 1, 2, 3 order by 2, 1, 3")
        bars = self.store.query(sql, [c.SYMBOL, c.DATE, c.MINUTE, c.DOUBLE, c.DOUBLE])
        if bars.rows:
            self.write_dfs(unquote(g["db1"]), unquote(g["dst"]), bars)
        return c.Table("", {"bars": c.Vector(c.LONG, np.array([bars.rows], dtype="i8"))})

    def _ols(self, m) -> c.Table:
        g = m.groupdict()
        meta = self.store.dfs_table(unquote(g["db"]), unquote(g["tb"]))
        self._touch(unquote(g["db"]), meta, g["where"])
        a, b, bs, az = g["a"], g["b"], g["bs"], g["az"]
        where = self.where(meta, g["where"])
        sql = (f'select "{a}"/"{b}"-1 as y, ("{bs}"+"{az}")*("{a}"+"{b}")/2 as x '
               f"from {meta.duck} where {where}")
        with self.store.lock:
            rows = self.store.con.execute(sql).fetchnumpy()
        y, x = np.asarray(rows["y"], float), np.asarray(rows["x"], float)
        if len(y) < 3:
            raise ScriptError("olsEx: not enough observations")
        design = np.column_stack([np.ones_like(x), x])
        beta, *_ = np.linalg.lstsq(design, y, rcond=None)
        resid = y - design @ beta
        dof = len(y) - 2
        sigma2 = float(resid @ resid) / dof
        cov = sigma2 * np.linalg.inv(design.T @ design)
        se = np.sqrt(np.diag(cov))
        tstat = beta / se
        return c.Table("", {
            "factor": c.Vector(c.STRING, np.array(["intercept", "quoteSize"], dtype=object)),
            "beta": c.Vector(c.DOUBLE, beta.astype(float)),
            "stdError": c.Vector(c.DOUBLE, se.astype(float)),
            "tstat": c.Vector(c.DOUBLE, tstat.astype(float)),
        })

    # --- filters ---------------------------------------------------------------------------------
    @staticmethod
    def _day_filter(text: str) -> bool:
        """Whether ``text`` is the target's filter of one day (a date, or a day's time range)."""
        forms = (rf"{IDENT} = {DATE_LIT}", rf"{IDENT} between {DATE_LIT} : {DATE_LIT}",
                 rf"{IDENT} between {TS_LIT} : {TS_LIT}")
        return all(any(re.fullmatch(f, cond) for f in forms) for cond in split_conditions(text))

    def where(self, meta: TableMeta, text: str) -> str:
        """Translate the target's comma-separated conditions into DuckDB SQL on raw values."""
        return " and ".join(self._condition(meta, cond) for cond in split_conditions(text))

    def _condition(self, meta: TableMeta, cond: str) -> str:
        m = re.fullmatch(rf"({IDENT}) = ({DATE_LIT})", cond)
        if m and meta.type_of(m.group(1)) == c.DATE:
            return f'"{m.group(1)}" = {parse_date(m.group(2))}'
        m = re.fullmatch(rf"({IDENT}) between ({DATE_LIT}) : ({DATE_LIT})", cond)
        if m and meta.type_of(m.group(1)) == c.DATE:
            return f'"{m.group(1)}" between {parse_date(m.group(2))} and {parse_date(m.group(3))}'
        m = re.fullmatch(rf"({IDENT}) between ({TS_LIT}) : ({TS_LIT})", cond)
        if m:
            column, column_type = m.group(1), meta.type_of(m.group(1))
            (lo_type, lo), (hi_type, hi) = temporal_literal(m.group(2)), temporal_literal(m.group(3))
            same_temporal_type(column, column_type, lo_type)
            same_temporal_type(column, column_type, hi_type)
            return f'"{column}" between {lo} and {hi}'
        m = re.fullmatch(rf"({IDENT}) between ({TIME_LIT}) : ({TIME_LIT})", cond)
        if m:
            t = meta.type_of(m.group(1))
            if t not in (c.SECOND, c.TIME):
                raise ScriptError(f"Incompatible time literal for column {m.group(1)}")
            return f'"{m.group(1)}" between {time_value(m.group(2), t)} and {time_value(m.group(3), t)}'
        m = re.fullmatch(rf"({IDENT}) = {STR}", cond)
        if m:
            if meta.type_of(m.group(1)) not in c.STRINGISH:
                raise ScriptError(f"Incompatible string literal for column {m.group(1)}")
            value = unquote(m.group(2)).replace("'", "''")
            return f"\"{m.group(1)}\" = '{value}'"
        m = re.fullmatch(rf"({IDENT}) = (-?\d+)", cond)
        if m:      # a key equal to a whole number: an integer column only (DolphinDB refuses text = number)
            if meta.type_of(m.group(1)) not in (c.CHAR, c.SHORT, c.INT, c.LONG):
                raise ScriptError(f"Incompatible integer literal for column {m.group(1)}")
            return f'"{m.group(1)}" = {int(m.group(2))}'
        m = re.fullmatch(rf"({IDENT})\s*([<>]=?)\s*(\d+(?:\.\d+)?)", cond)
        if m:
            meta.type_of(m.group(1))
            return f'"{m.group(1)}" {m.group(2)} {m.group(3)}'
        m = re.fullmatch(rf"({IDENT})\s*>\s*({IDENT})", cond)
        if m:
            meta.type_of(m.group(1)), meta.type_of(m.group(2))
            return f'"{m.group(1)}" > "{m.group(2)}"'
        m = re.fullmatch(rf"({IDENT})/({IDENT})\s*<\s*(\d+(?:\.\d+)?)", cond)
        if m:
            meta.type_of(m.group(1)), meta.type_of(m.group(2))
            return f'"{m.group(1)}" / "{m.group(2)}" < {m.group(3)}'
        raise ScriptError(f"Syntax Error: [line #1] Cannot recognize the condition {cond[:60]}")


MAPREDUCE = (
    rf"def tickbenchSaveMinute\(t\) \{{\n"
    rf"    m = select avg\((?P<b>{IDENT})\) as (?P=b), avg\((?P<a>{IDENT})\) as (?P=a) from t "
    rf"group by (?P<k>{IDENT}), date\((?P<d>{IDENT})\) as (?P=d), minute\((?P<t>{IDENT})\) as minute\n"
    rf'    loadTable\("(?P<db1>{QS})", "(?P<dst>{QS})"\)\.append!\(m\)\n'
    r"    return m\.size\(\)\n"
    r"\}\n"
    rf"tickbenchDs = sqlDS\(<select (?P=k), (?P=d), (?P=t), (?P=b), (?P=a) from "
    rf'loadTable\("(?P<db2>{QS})", "(?P<src>{QS})"\) where (?P<where>.+)>\)\n'
    rf"{RESULT} = table\(\[long\(mr\(tickbenchDs, tickbenchSaveMinute, \+\)\)\] as bars\)")
OLS = (
    rf"tickbenchDs = sqlDS\(<select (?P<a>{IDENT})/(?P<b>{IDENT})-1 as spread, "
    rf"\((?P<bs>{IDENT})\+(?P<az>{IDENT})\)\*\((?P=a)\+(?P=b)\)\\2 as quoteSize "
    rf'from loadTable\("(?P<db>{QS})", "(?P<tb>{QS})"\) '
    rf"where (?P<where>.+)>\)\n"
    rf'{RESULT} = olsEx\(tickbenchDs, `spread, `quoteSize, true, 2\)\["Coefficient"\]')
