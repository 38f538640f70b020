"""What the test server answers: the Tickbench target's fixed script templates, a few functions,
and nothing else ("Syntax Error" for any other script).

Each template is recognised by a regular expression written independently of the target's
builders, so a change on either side that breaks the contract fails the tests. Queries run in
DuckDB over the stored raw encodings (see store.py).
"""
from __future__ import annotations

import datetime as dt
import json
import re
import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from tests.ddbserver import codec as c
from tests.ddbserver.store import Database, Store, StoreError, TableMeta

EPOCH = dt.date(1970, 1, 1)
QS = r'(?:[^"\\]|\\.)*'                        # the inside of a double-quoted DolphinDB string
STR = rf'"({QS})"'                              # a double-quoted string literal, captured
IDENT = r"[A-Za-z][A-Za-z0-9_]*"
DATE_LIT = r"\d{4}\.\d{2}\.\d{2}"
TS_LIT = r"\d{4}\.\d{2}\.\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d{3})?"
TIME_LIT = r"\d{2}:\d{2}:\d{2}(?:\.\d{3})?"
LOAD = rf"loadTable\({STR}, {STR}\)"


class ScriptError(RuntimeError):
    """Answered as an error reply with this message."""


@dataclass
class Node:
    name: str
    mode: int          # 0 data node, 2 controller, 3 single
    port: int


@dataclass
class Session:
    node: Node
    variables: dict[str, Any] = field(default_factory=dict)


def unquote(text: str) -> str:
    return re.sub(r"\\(.)", lambda m: {"n": "\n", "r": "\r", "t": "\t"}.get(m.group(1), m.group(1)), text)


def parse_date(text: str) -> int:
    y, m, d = (int(p) for p in text.split("."))
    return (dt.date(y, m, d) - EPOCH).days


def parse_timestamp_ms(text: str) -> int:
    day, _, clock = text.partition("T")
    return parse_date(day) * 86_400_000 + parse_time_ms(clock)


def parse_time_ms(text: str) -> int:
    hms, _, ms = text.partition(".")
    h, m, s = (int(p) for p in hms.split(":"))
    return ((h * 60 + m) * 60 + s) * 1000 + (int(ms) if ms else 0)


def time_value(text: str, ddb_type: int) -> int:
    """A time literal in the raw encoding of a column of ``ddb_type``."""
    ms = parse_time_ms(text)
    return {c.SECOND: ms // 1000, c.TIME: ms, c.MINUTE: ms // 60000}.get(ddb_type, ms)


def minute_expr(col: str, ddb_type: int) -> str:
    return {
        c.SECOND: f'("{col}" // 60)',
        c.TIME: f'("{col}" // 60000)',
        c.TIMESTAMP: f'(("{col}" % 86400000) // 60000)',
        c.NANOTIMESTAMP: f'(("{col}" % 86400000000000) // 60000000000)',
        c.DATETIME: f'(("{col}" % 86400) // 60)',
        c.MINUTE: f'"{col}"',
    }[ddb_type]


def date_expr(col: str, ddb_type: int) -> str:
    return {
        c.DATE: f'"{col}"',
        c.TIMESTAMP: f'("{col}" // 86400000)',
        c.DATETIME: f'("{col}" // 86400)',
        c.NANOTIMESTAMP: f'("{col}" // 86400000000000)',
    }[ddb_type]


TYPE_WORDS = {name: number for number, name in c.TYPE_NAMES.items()}


class Dispatcher:
    """Answers one request for one session; returns a list of reply objects."""

    def __init__(self, store: Store, nodes: list[Node], version: str, faults):
        self.store = store
        self.nodes = nodes
        self.version = version
        self.faults = faults

    # --- entry points ----------------------------------------------------------------------
    def function(self, session: Session, name: str, args: list) -> list:
        if name == "getRequiredAPIVersion":
            raise ScriptError("Can't recognize function name getRequiredAPIVersion")
        if name == "isNodeInitialized":
            return [c.Scalar(c.BOOL, not self.faults.not_initialised)]
        if name == "testServerControl":
            return [c.Scalar(c.STRING, self.faults.control(args[0].value))]
        m = re.fullmatch(rf"tableInsert\{{{LOAD}\}}", name)
        if m:
            return [c.Scalar(c.INT, self._insert_dfs(unquote(m.group(1)), unquote(m.group(2)), args))]
        m = re.fullmatch(rf"tableInsert\{{({IDENT})\}}", name)
        if m:
            meta = self._shared(m.group(1))
            return [c.Scalar(c.INT, self.store.insert(meta, self._one_table(args)))]
        raise ScriptError(f"Can't recognize function name {name}")

    def upload(self, session: Session, names: list[str], objects: list) -> list:
        for n, obj in zip(names, objects):
            session.variables[n] = obj
        return []

    def script(self, session: Session, text: str) -> list:
        text = text.strip()
        for pattern, handler in self._templates():
            m = re.fullmatch(pattern, text, flags=re.S)
            if m:
                result = handler(session, m)
                return [] if result is None else [result]
        first = text.split("\n", 1)[0][:80]
        raise ScriptError(f"Syntax Error: [line #1] Cannot recognize the token {first}")

    # --- templates -------------------------------------------------------------------------
    def _templates(self):
        return [
            (r"version\(\)", lambda s, m: c.Scalar(c.STRING, self.version)),
            (r"getNodeAlias\(\)", lambda s, m: c.Scalar(c.STRING, s.node.name)),
            (r"getClusterPerf\(true\)", lambda s, m: self._cluster_perf()),
            (r"pnodeRun\(clearAllCache\)", self._clear_cache),
            (rf"existsDatabase\({STR}\)",
             lambda s, m: c.Scalar(c.BOOL, unquote(m.group(1)) in self.store.databases)),
            (rf"existsTable\({STR}, {STR}\)",
             lambda s, m: c.Scalar(c.BOOL, (unquote(m.group(1)), unquote(m.group(2))) in self.store.tables)),
            (CREATE_DATABASE, self._create_database),
            (CREATE_TABLE, self._create_table),
            (rf"select count\(\*\) as n from {LOAD} group by date\(({IDENT})\) as day", self._rows_per_day),
            (rf"tickbenchPt = {LOAD}\ndelete from tickbenchPt where (.+)", self._delete),
            (rf"exec sum\(diskUsage\) from pnodeRun\(getTabletsMeta\{{{STR}, {STR}, true, -1\}}\)",
             self._footprint),
            (rf"defined\({STR}, SHARED\)", lambda s, m: c.Scalar(c.BOOL, unquote(m.group(1)) in self.store.shared)),
            (rf"share table\(1:0, (\[[^\]]*\]), \[([A-Z, ]*)\]\) as ({IDENT})", self._share_empty),
            (rf"clear!\(({IDENT})\)", lambda s, m: self.store.clear(self._shared(m.group(1)))),
            (rf"undef\({STR}, SHARED\)", lambda s, m: self.store.unshare(unquote(m.group(1)))),
            (MEASURED, self._measured),
            (r"(\d+)\s*([-+*])\s*(\d+)", self._arith),
            (rf"({IDENT})", self._variable),
        ]

    def _cluster_perf(self) -> c.Table:
        nodes = self.nodes
        cols = {
            "host": c.Vector(c.STRING, np.array(["127.0.0.1"] * len(nodes), dtype=object)),
            "port": c.Vector(c.INT, np.array([n.port for n in nodes], dtype="i4")),
            "site": c.Vector(c.STRING, np.array([f"127.0.0.1:{n.port}:{n.name}" for n in nodes], dtype=object)),
            "mode": c.Vector(c.INT, np.array([n.mode for n in nodes], dtype="i4")),
            "state": c.Vector(c.BOOL, np.ones(len(nodes), dtype="i1")),
            "name": c.Vector(c.STRING, np.array([n.name for n in nodes], dtype=object)),
            "memoryUsed": c.Vector(c.LONG, np.array([(i + 1) << 20 for i in range(len(nodes))], dtype="i8")),
            "cpuUsage": c.Vector(c.DOUBLE, np.array([1.5 * (i + 1) for i in range(len(nodes))])),
            "connectionNum": c.Vector(c.INT, np.array([self.faults.connections.get(n.port, 0) for n in nodes], dtype="i4")),
        }
        return c.Table("", cols)

    def _clear_cache(self, s, m):
        self.store.cache_clears += 1
        return c.Scalar(c.VOID, None)

    def _create_database(self, s, m):
        lo, hi = parse_date(m.group(1)), parse_date(m.group(2))
        bounds = [unquote(b) for b in re.findall(STR, m.group(3))]
        if lo > hi:
            raise ScriptError("The VALUE partition scheme is empty.")
        if len(bounds) < 2 or bounds != sorted(bounds) or len(set(bounds)) != len(bounds):
            raise ScriptError("The RANGE partition scheme must be increasing with at least 2 elements.")
        self.store.create_database(Database(unquote(m.group(4)), lo, hi, bounds))
        return None

    def _create_table(self, s, m):
        path = unquote(m.group(1))
        names = [unquote(n) for n in re.findall(STR, m.group(2))]
        types = [t.strip() for t in m.group(3).split(",")]
        if len(names) != len(types) or not all(t in TYPE_WORDS for t in types):
            raise ScriptError("The column names and types of table() do not match.")
        table = unquote(m.group(4))
        parts = [unquote(p) for p in re.findall(STR, m.group(5))]
        self.store.create_table(path, table, list(zip(names, [TYPE_WORDS[t] for t in types])), parts)
        return None

    def _rows_per_day(self, s, m):
        meta = self.store.dfs_table(unquote(m.group(1)), unquote(m.group(2)))
        col = m.group(3)
        d = date_expr(col, meta.type_of(col))
        return self.store.query(f"select {d} as day, count(*) as n from {meta.duck} group by 1 order by 1",
                                [c.DATE, c.LONG])

    def _delete(self, s, m):
        meta = self.store.dfs_table(unquote(m.group(1)), unquote(m.group(2)))
        where = self._where(meta, m.group(3))
        self.store.execute(f"delete from {meta.duck} where {where}")
        return None

    def _footprint(self, s, m):
        chunk, table = unquote(m.group(1)), unquote(m.group(2))
        hit = re.fullmatch(r"/([A-Za-z0-9_/]+)/%", chunk)
        if not hit:
            raise ScriptError(f"Invalid chunk path {chunk}")
        meta = self.store.dfs_table("dfs://" + hit.group(1), table)
        # bytes of the stored rows in DolphinDB's encoding: this server's stand-in for disk usage
        widths = []
        for name, t in meta.columns:
            widths.append(f'coalesce(sum(strlen("{name}") + 1), 0)' if t in c.STRINGISH
                          else f"count(*) * {np.dtype(c.NUMPY_OF[t]).itemsize}")
        total = self.store.scalar(f"select {' + '.join(widths)} from {meta.duck}")
        return c.Scalar(c.LONG, int(total or 0))

    def _share_empty(self, s, m):
        names = [unquote(n) for n in re.findall(STR, m.group(1))]
        types = [t.strip() for t in m.group(2).split(",")]
        if len(names) != len(types) or not all(t in TYPE_WORDS for t in types):
            raise ScriptError("The column names and types of table() do not match.")
        self.store.share(m.group(3), list(zip(names, [TYPE_WORDS[t] for t in types])))
        return None

    def _shared(self, name: str) -> TableMeta:
        meta = self.store.shared.get(name)
        if meta is None:
            raise ScriptError(f"Syntax Error: [line #1] Cannot recognize the token {name}")
        return meta

    def _arith(self, s, m):
        a, op, b = int(m.group(1)), m.group(2), int(m.group(3))
        return c.Scalar(c.INT, {"+": a + b, "-": a - b, "*": a * b}[op])

    def _variable(self, s, m):
        name = m.group(1)
        if name in s.variables:
            return s.variables[name]
        if name in self.store.shared:
            meta = self.store.shared[name]
            return self.store.table_contents(meta)
        raise ScriptError(f"Syntax Error: [line #1] Cannot recognize the token {name}")

    # --- inserts -------------------------------------------------------------------------------
    @staticmethod
    def _one_table(args: list) -> c.Table:
        if len(args) != 1 or not isinstance(args[0], c.Table):
            raise ScriptError("tableInsert expects one table argument")
        return args[0]

    def _insert_dfs(self, path: str, table: str, args: list) -> int:
        meta = self.store.dfs_table(path, table)
        return self.store.insert(meta, self._one_table(args), self.store.databases[path])

    # --- filters ---------------------------------------------------------------------------------
    def _where(self, meta: TableMeta, text: str) -> str:
        """Translate the target's comma-separated conditions into DuckDB SQL on raw values."""
        out = []
        for cond in split_conditions(text):
            out.append(self._condition(meta, cond))
        return " and ".join(out)

    def _condition(self, meta: TableMeta, cond: str) -> str:
        m = re.fullmatch(rf"({IDENT}) = ({DATE_LIT})", cond)
        if m and meta.type_of(m.group(1)) == c.DATE:
            return f'"{m.group(1)}" = {parse_date(m.group(2))}'
        m = re.fullmatch(rf"({IDENT}) between ({DATE_LIT}) : ({DATE_LIT})", cond)
        if m and meta.type_of(m.group(1)) == c.DATE:
            return f'"{m.group(1)}" between {parse_date(m.group(2))} and {parse_date(m.group(3))}'
        m = re.fullmatch(rf"({IDENT}) between ({TS_LIT}) : ({TS_LIT})", cond)
        if m and meta.type_of(m.group(1)) == c.TIMESTAMP:
            return (f'"{m.group(1)}" between {parse_timestamp_ms(m.group(2))} '
                    f"and {parse_timestamp_ms(m.group(3))}")
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

    # --- measured reads ---------------------------------------------------------------------------
    def _measured(self, session: Session, m) -> c.Scalar:
        body, share_name = m.group(1), m.group(2)
        start = time.perf_counter_ns()
        result = self._body(body.strip())
        elapsed = time.perf_counter_ns() - start
        columns = [(n, v.type) for n, v in result.columns.items()]
        self.store.share(share_name, columns, result)
        return c.Scalar(c.LONG, elapsed)

    def _body(self, body: str) -> c.Table:
        m = re.fullmatch(rf"tickbench_res = select \* from {LOAD} where (.+)", body)
        if m:
            meta = self.store.dfs_table(unquote(m.group(1)), unquote(m.group(2)))
            where = self._where(meta, m.group(3))
            return self.store.query(f"select * from {meta.duck} where {where} order by rowid",
                                    [t for _, t in meta.columns])
        m = re.fullmatch(
            rf"tickbench_res = select first\(\(({IDENT}) \+ ({IDENT})\) / 2\) as open, "
            rf"max\(\(\1 \+ \2\) / 2\) as high, min\(\(\1 \+ \2\) / 2\) as low, "
            rf"last\(\(\1 \+ \2\) / 2\) as close from {LOAD} where (.+) "
            rf"group by minute\(({IDENT})\) as minute", body)
        if m:
            meta = self.store.dfs_table(unquote(m.group(3)), unquote(m.group(4)))
            mid = f'("{m.group(1)}" + "{m.group(2)}") / 2'
            minute = minute_expr(m.group(6), meta.type_of(m.group(6)))
            sql = (f"select {minute} as minute, first({mid} order by rowid) as open, max({mid}) as high, "
                   f"min({mid}) as low, last({mid} order by rowid) as close from {meta.duck} "
                   f"where {self._where(meta, m.group(5))} group by 1 order by 1")
            return self.store.query(sql, [c.MINUTE, c.DOUBLE, c.DOUBLE, c.DOUBLE, c.DOUBLE])
        m = re.fullmatch(
            rf"tickbench_res = select avg\(\(({IDENT})-({IDENT})\)/\(\1\+\2\)\*2\) as avgSpread "
            rf"from {LOAD} where (.+) group by minute\(({IDENT})\) as minute", body)
        if m:
            a, b = m.group(1), m.group(2)
            meta = self.store.dfs_table(unquote(m.group(3)), unquote(m.group(4)))
            minute = minute_expr(m.group(6), meta.type_of(m.group(6)))
            sql = (f'select {minute} as minute, avg(("{a}"-"{b}")/("{a}"+"{b}")*2) as avgSpread '
                   f"from {meta.duck} where {self._where(meta, m.group(5))} group by 1 order by 1")
            return self.store.query(sql, [c.MINUTE, c.DOUBLE])
        m = re.fullmatch(MAPREDUCE, body, flags=re.S)
        if m:
            return self._mapreduce(m)
        m = re.fullmatch(OLS, body, flags=re.S)
        if m:
            return self._ols(m)
        raise ScriptError(f"Syntax Error: [line #2] Cannot recognize the token {body.split(chr(10))[0][:60]}")

    def _mapreduce(self, m) -> c.Table:
        g = m.groupdict()
        src = self.store.dfs_table(unquote(g["db2"]), unquote(g["src"]))
        dst = self.store.dfs_table(unquote(g["db1"]), unquote(g["dst"]))
        k, d, t, b, a = g["k"], g["d"], g["t"], g["b"], g["a"]
        minute = minute_expr(t, src.type_of(t))
        day = date_expr(d, src.type_of(d))
        sql = (f'select "{k}", {day} as "{d}", {minute} as minute, avg("{b}") as "{b}", avg("{a}") as "{a}" '
               f"from {src.duck} where {self._where(src, g['where'])} group by 1, 2, 3 order by 2, 1, 3")
        bars = self.store.query(sql, [c.SYMBOL, c.DATE, c.MINUTE, c.DOUBLE, c.DOUBLE])
        if bars.rows:
            self.store.insert(dst, bars)
        return c.Table("", {"bars": c.Vector(c.LONG, np.array([bars.rows], dtype="i8"))})

    def _ols(self, m) -> c.Table:
        g = m.groupdict()
        meta = self.store.dfs_table(unquote(g["db"]), unquote(g["tb"]))
        a, b, bs, az = g["a"], g["b"], g["bs"], g["az"]
        where = self._where(meta, g["where"])
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


def split_conditions(text: str) -> list[str]:
    """Split a DolphinDB where clause on top-level commas (not inside quotes or parentheses)."""
    parts, depth, quote, cur = [], 0, False, []
    i = 0
    while i < len(text):
        ch = text[i]
        if quote:
            cur.append(ch)
            if ch == "\\" and i + 1 < len(text):
                cur.append(text[i + 1])
                i += 1
            elif ch == '"':
                quote = False
        elif ch == '"':
            quote = True
            cur.append(ch)
        elif ch in "([":
            depth += 1
            cur.append(ch)
        elif ch in ")]":
            depth -= 1
            cur.append(ch)
        elif ch == "," and depth == 0:
            parts.append("".join(cur).strip())
            cur = []
        else:
            cur.append(ch)
        i += 1
    parts.append("".join(cur).strip())
    return [p for p in parts if p]


CREATE_DATABASE = (
    rf'dbDate = database\("", VALUE, ({DATE_LIT})\.\.({DATE_LIT})\)\n'
    rf'dbKey = database\("", RANGE, symbol\((\[.*?\])\)\)\n'
    rf'db = database\({STR}, COMPO, \[dbDate, dbKey\], engine="OLAP", atomic="CHUNK"\)')
CREATE_TABLE = (
    rf"db = database\({STR}\)\n"
    rf"schemaTable = table\(1:0, (\[[^\]]*\]), \[([A-Z, ]*)\]\)\n"
    rf"pt = db\.createPartitionedTable\(schemaTable, {STR}, (\[[^\]]*\])\)")
MEASURED = (
    r"tickbench_t0 = now\(true\)\n(.+)\n"
    r"tickbench_ns = long\(now\(true\) - tickbench_t0\)\n"
    rf"share tickbench_res as ({IDENT})\n"
    r'undef\("tickbench_res"\)\n'
    r"tickbench_ns")
MAPREDUCE = (
    rf"def tickbenchSaveMinute\(t\) \{{\n"
    rf"    m = select avg\((?P<b>{IDENT})\) as (?P=b), avg\((?P<a>{IDENT})\) as (?P=a) from t "
    rf"group by (?P<k>{IDENT}), date\((?P<d>{IDENT})\) as (?P=d), minute\((?P<t>{IDENT})\) as minute\n"
    rf'    loadTable\("(?P<db1>{QS})", "(?P<dst>{QS})"\)\.append!\(m\)\n'
    r"    return m\.size\(\)\n"
    r"\}\n"
    rf"tickbenchDs = sqlDS\(<select (?P=k), (?P=d), (?P=t), (?P=b), (?P=a) from "
    rf'loadTable\("(?P<db2>{QS})", "(?P<src>{QS})"\) where (?P<where>.+)>\)\n'
    r"tickbench_res = table\(\[long\(mr\(tickbenchDs, tickbenchSaveMinute, \+\)\)\] as bars\)")
OLS = (
    rf"tickbenchDs = sqlDS\(<select (?P<a>{IDENT})/(?P<b>{IDENT})-1 as spread, "
    rf"\((?P<bs>{IDENT})\+(?P<az>{IDENT})\)\*\((?P=a)\+(?P=b)\)\\2 as quoteSize "
    rf'from loadTable\("(?P<db>{QS})", "(?P<tb>{QS})"\) '
    rf"where (?P<where>.+)>\)\n"
    r'tickbench_res = olsEx\(tickbenchDs, `spread, `quoteSize, true, 2\)\["Coefficient"\]')
