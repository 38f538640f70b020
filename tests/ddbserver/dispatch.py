"""What the test server answers: the Tickbench target's fixed script templates, a few functions,
the target's reads sent as plain scripts, the suite queries' DolphinDB subset (suites.py: scripts
of ``select``/``exec`` statements, one per line), loadTextEx/saveText (textio.py), and nothing
else ("Syntax Error" for any other script).

Each template is recognised by a regular expression written independently of the target's
builders, so a change on either side that breaks the contract fails the tests. Queries run in
DuckDB over the stored raw encodings (see store.py, queries.py). Shared tables are looked up in
the namespace of the node the session is connected to. Reads go through the node caches
(caches.py); ``pnodeRun(clearAllCache[, nodes])`` and ``pnodeRun(clearComputeNodeCache{db}, nodes)``
empty them where DolphinDB's docs say those calls run.
"""
from __future__ import annotations

import bisect
import json
import re
import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from tests.ddbserver import codec as c
from tests.ddbserver import syntax
from tests.ddbserver.caches import Caches
from tests.ddbserver.jobs import Jobs
from tests.ddbserver.partition_limit import PartitionLimit
from tests.ddbserver.queries import MAPREDUCE, OLS, RESULT, Queries, date_expr  # noqa: F401
from tests.ddbserver.store import Database, Store, TableMeta
from tests.ddbserver.suites import DfsHandle, SuiteQueries
from tests.ddbserver.textio import load_text, save_text
from tests.ddbserver.transactions import Transactions
from tests.ddbserver.syntax import (DATE_LIT, IDENT, LOAD, QS, STR, ScriptError,  # noqa: F401
                                    not_recognised, parse_date, schema, split_conditions, unquote)
from tests.ddbserver.topology import Node, Topology  # noqa: F401  (Node: re-exported)


@dataclass
class Session:
    node: Node
    variables: dict[str, Any] = field(default_factory=dict)
    user: str = ""                     # "" until a login succeeds (an anonymous connection)


class Dispatcher:
    """Answers one request for one session; returns a list of reply objects."""

    def __init__(self, store: Store, topology: Topology, faults):
        self.store = store
        self.topology = topology
        self.caches = Caches(topology)
        self.queries = Queries(store, self.caches)
        self.suites = SuiteQueries(store)
        self.faults = faults
        self.transactions = Transactions(store, self.caches, faults)   # chunk locks, creates, OLAP cache
        self.caches.engines = [self.transactions.olap, self.transactions.tsdb]
        self.queries.write_dfs = self.transactions.insert
        self.sessions = None           # the server's session registry, for testServerStats
        self.jobs = Jobs()             # console jobs: priority, parallelism, getConsoleJobs, cancels
        self.partition_limit = PartitionLimit(store, self.queries._condition)   # S02039

    # --- entry points ----------------------------------------------------------------------
    def function(self, session: Session, name: str, args: list) -> list:
        if name == "getRequiredAPIVersion":
            raise ScriptError("Can't recognize function name getRequiredAPIVersion")
        if name == "isNodeInitialized":
            return [c.Scalar(c.BOOL, not self.faults.not_initialised)]
        if name == "testServerControl":
            return [c.Scalar(c.STRING, self.faults.control(args[0].value))]
        if name == "testServerStats":      # what the server saw, for tests (JSON object)
            return [c.Scalar(c.STRING, json.dumps(self.stats()))]
        m = re.fullmatch(rf"tableInsert\{{{LOAD}\}}", name)
        if m:
            return [c.Scalar(c.INT, self._insert_dfs(unquote(m.group(1)), unquote(m.group(2)), args))]
        m = re.fullmatch(rf"tableInsert\{{({IDENT})\}}", name)
        if m:
            meta = self._shared(session, m.group(1))
            return [c.Scalar(c.INT, self.store.insert(meta, self._one_table(args)))]
        raise ScriptError(f"Can't recognize function name {name}")

    def upload(self, session: Session, names: list[str], objects: list) -> list:
        for n, obj in zip(names, objects):
            session.variables[n] = obj
        return []

    def script(self, session: Session, text: str) -> list:
        text = text.strip()
        self.partition_limit.check(text)
        for pattern, handler in self._templates():
            m = re.fullmatch(pattern, text, flags=re.S)
            if m:
                result = handler(session, m)
                return [] if result is None else [result]
        plain = self._plain(session, text)
        if plain is not None:
            return [plain]
        answered = self.suites.run(session.variables, text)
        if answered is not None:
            return answered
        raise not_recognised(text.split("\n", 1)[0][:80])

    # --- templates -------------------------------------------------------------------------
    def _templates(self):
        topo = self.topology
        return [
            (r"version\(\)", lambda s, m: c.Scalar(c.STRING, topo.version)),
            (r"getNodeAlias\(\)", lambda s, m: c.Scalar(c.STRING, s.node.name)),
            (r"getControllerAlias\(\)", lambda s, m: c.Scalar(c.STRING, topo.controller_alias())),
            (r"getClusterPerf\(true\)",
             lambda s, m: topo.cluster_perf(s.node, self.faults.connections)),
            (r"rpc\(getControllerAlias\(\), getClusterPerf, true\)",
             lambda s, m: topo.rpc_cluster_perf(self.faults.connections)),
            (r"pnodeRun\(clearAllCache\)", self._clear_cache),
            (r"pnodeRun\(clearAllCache, (\[[^\]]*\])\)", self._clear_cache_on),
            (r"pnodeRun\(flushOLAPCache\)",
             lambda s, m: self._flush_olap(s, self.caches.default_pnode_targets(s.node))),
            (r"pnodeRun\(flushOLAPCache, (\[[^\]]*\])\)",
             lambda s, m: self._flush_olap(s, [self.topology.node(unquote(a)) for a in re.findall(STR, m.group(1))])),
            (r"flushOLAPCache\(\)", lambda s, m: self._flush_olap(s, [s.node])),
            (r"pnodeRun\(flushTSDBCache\)",
             lambda s, m: self._flush_tsdb(s, self.caches.default_pnode_targets(s.node))),
            (r"pnodeRun\(flushTSDBCache, (\[[^\]]*\])\)",
             lambda s, m: self._flush_tsdb(s, [self.topology.node(unquote(a)) for a in re.findall(STR, m.group(1))])),
            (r"flushTSDBCache\(\)", lambda s, m: self._flush_tsdb(s, [s.node])),
            (rf"pnodeRun\(clearComputeNodeCache\{{{STR}\}}, (\[[^\]]*\])\)", self._clear_compute_on),
            (rf"clearComputeNodeCache\({STR}\)",
             lambda s, m: self.caches.clear_compute([s.node], unquote(m.group(1)), s.node)),
            *self.jobs.templates(),
            (r"objs\(true\)", lambda s, m: self._objs(s)),
            (r"exec name from objs\(true\) where shared = true",
             lambda s, m: c.Vector(c.STRING, np.array(self.store.shared_names(s.node.name), dtype=object))),
            (rf"schema\({LOAD}\)\.colDefs", self._col_defs),
            (rf"schema\({LOAD}\)\.engineType", self._engine_type),
            (rf"schema\({LOAD}\)\.partitionSchema\[1\]", self._key_scheme),
            (rf"schema\({LOAD}\)\.(partitionColumnName|partitionType|partitionSchema)", self._scheme_part),
            (r"getClusterDFSDatabases\(\)",
             lambda s, m: c.Vector(c.STRING, np.array(sorted(self.store.databases), dtype=object))),
            (rf"getTables\(database\({STR}\)\)", lambda s, m: c.Vector(c.STRING, np.array(
                sorted(t for d, t in self.store.tables if d == unquote(m.group(1))), dtype=object))),
            (rf"dropDatabase\({STR}\)", lambda s, m: self.store.drop_database(unquote(m.group(1)))),
            (rf"existsDatabase\({STR}\)",
             lambda s, m: c.Scalar(c.BOOL, unquote(m.group(1)) in self.store.databases)),
            (rf"existsTable\({STR}, {STR}\)",
             lambda s, m: c.Scalar(c.BOOL, (unquote(m.group(1)), unquote(m.group(2))) in self.store.tables)),
            (CREATE_DATABASE, self._create_database),
            (CREATE_DAY_DATABASE, self._create_day_database),
            (CREATE_TABLE, self._create_table),
            (rf"truncate\({STR}, {STR}\)", self._truncate),
            (CREATE_DIMENSION, self._create_dimension),
            (rf"dropTable\(database\({STR}\), {STR}\)",
             lambda s, m: self.store.drop_table(unquote(m.group(1)), unquote(m.group(2)))),
            (LOAD_TEXT, self._load_text),
            (SAVE_TEXT, self._save_text),
            (FOOTPRINT_DETAIL, self._footprint_detail),
            (rf"select count\(\*\) as n from {LOAD} where (.+) group by date\(({IDENT})\) as day",
             self._rows_per_day),
            (rf"tickbenchPt = {LOAD}\ndelete from tickbenchPt where (.+)", self._delete),
            (rf"exec sum\(diskUsage\) from pnodeRun\(getTabletsMeta\{{{STR}, {STR}, true, -1\}}\)",
             self._footprint),
            (rf"defined\({STR}, SHARED\)",
             lambda s, m: c.Scalar(c.BOOL, self.store.shared_table(s.node.name, unquote(m.group(1))) is not None)),
            (rf"share table\(1:0, (\[[^\]]*\]), \[([A-Z, ]*)\]\) as ({IDENT})", self._share_empty),
            (rf"clear!\(({IDENT})\)", lambda s, m: self.store.clear(self._shared(s, m.group(1)))),
            (rf"undef\({STR}, SHARED\)", lambda s, m: self.store.unshare(s.node.name, unquote(m.group(1)))),
            (MEASURED, self._measured),
            (r"(\d+)\s*([-+*])\s*(\d+)", self._arith),
            (rf"({IDENT})", self._variable),
        ]

    def _col_defs(self, s, m) -> c.Table:
        """``schema(t).colDefs``: a DFS table's column names and type names, in its order."""
        meta = self.store.dfs_table(unquote(m.group(1)), unquote(m.group(2)))
        return c.Table("", {
            "name": c.Vector(c.STRING, np.array([n for n, _ in meta.columns], dtype=object)),
            "typeString": c.Vector(c.STRING, np.array([c.TYPE_NAMES[t] for _, t in meta.columns], dtype=object)),
            "typeInt": c.Vector(c.INT, np.array([t for _, t in meta.columns], dtype="i4"))})

    def _key_scheme(self, s, m) -> c.Vector:
        """``schema(t).partitionSchema[1]``: the RANGE boundaries of a COMPO table's key level."""
        path = unquote(m.group(1))
        self.store.dfs_table(path, unquote(m.group(2)))
        db = self.store.databases[path]
        if not db.key_bounds:
            raise ScriptError("Index out of range.")         # a VALUE scheme by day alone has one level
        if db.key_type == c.SYMBOL:
            return c.Vector(c.STRING, np.array(db.key_bounds, dtype=object))
        return c.Vector(db.key_type, np.array(db.key_bounds, dtype={c.INT: "i4", c.LONG: "i8", c.SHORT: "i2",
                                                                     c.CHAR: "i1"}[db.key_type]))

    def _engine_type(self, s, m) -> c.Scalar:
        path = unquote(m.group(1))
        self.store.dfs_table(path, unquote(m.group(2)))
        return c.Scalar(c.STRING, self.store.databases[path].engine)

    def _scheme_part(self, s, m):
        """``schema(t).partitionColumnName``, ``.partitionType``, ``.partitionSchema``: a COMPO
        table's as a vector or tuple of its two levels (VALUE by day, RANGE by key), a table by
        day alone's as a scalar and the day vector."""
        path = unquote(m.group(1))
        meta, db = self.store.dfs_table(path, unquote(m.group(2))), self.store.databases[path]
        days = c.Vector(c.DATE, np.arange(db.date_lo, db.date_hi + 1, dtype="i4"))
        compo = len(meta.partition_columns) > 1
        if not meta.partition_columns:
            raise ScriptError(f"A dimension table has no partitioning column ({m.group(3)}).")
        if m.group(3) == "partitionColumnName":
            names = np.array(meta.partition_columns, dtype=object)
            return c.Vector(c.STRING, names) if compo else c.Scalar(c.STRING, names[0])
        if m.group(3) == "partitionType":
            return c.Vector(c.INT, np.array([1, 2], dtype="i4")) if compo else c.Scalar(c.INT, 1)
        return c.AnyVector([days, self._key_scheme(s, m)]) if compo else days

    def _clear_cache(self, s, m):
        self.store.cache_clears += 1
        self.caches.clear_all_cache(self.caches.default_pnode_targets(s.node), s.node)
        return c.Scalar(c.VOID, None)

    def _clear_cache_on(self, s, m):
        nodes = [self.topology.reachable(unquote(a)) for a in re.findall(STR, m.group(1))]
        self.store.cache_clears += 1
        self.caches.clear_all_cache(nodes, s.node)
        return c.Scalar(c.VOID, None)

    def _flush_olap(self, s, nodes):
        self.transactions.olap.flush(nodes, s.node)
        return c.Scalar(c.VOID, None)

    def _flush_tsdb(self, s, nodes):
        self.transactions.tsdb.flush(nodes, s.node)
        return c.Scalar(c.VOID, None)

    def _clear_compute_on(self, s, m):
        nodes = [self.topology.reachable(unquote(a)) for a in re.findall(STR, m.group(2))]
        self.caches.clear_compute(nodes, unquote(m.group(1)), s.node)
        return c.Scalar(c.VOID, None)

    def _objs(self, s) -> c.Table:
        """objs(true): the session's variables and the node's shared tables, in DolphinDB's
        columns (bytes are not measured here: 0; owner is not tracked: "")."""
        rows = []
        for name, obj in s.variables.items():
            form = "TABLE" if isinstance(obj, c.Table) else "VECTOR" if isinstance(obj, c.Vector) else "SCALAR"
            size = obj.rows if isinstance(obj, c.Table) else len(obj) if isinstance(obj, c.Vector) else 1
            rows.append((name, "BASIC" if form == "TABLE" else c.TYPE_NAMES.get(getattr(obj, "type", 0), "ANY"),
                         form, size, False))
        for name in self.store.shared_names(s.node.name):
            rows.append((name, "BASIC", "TABLE", self.store.shared_rows(s.node.name, name), True))
        strings = lambda values: c.Vector(c.STRING, np.array(values, dtype=object))  # noqa: E731
        ints = lambda values: c.Vector(c.INT, np.array(values, dtype="i4"))  # noqa: E731
        return c.Table("", {
            "name": strings([r[0] for r in rows]), "type": strings([r[1] for r in rows]),
            "form": strings([r[2] for r in rows]), "rows": ints([r[3] for r in rows]),
            "columns": ints([1] * len(rows)), "bytes": c.Vector(c.LONG, np.zeros(len(rows), dtype="i8")),
            "shared": c.Vector(c.BOOL, np.array([r[4] for r in rows], dtype="i1")),
            "extra": strings([""] * len(rows)), "owner": strings([""] * len(rows)),
        })

    def stats(self) -> dict:
        """What the server saw, for tests: cache clears, the read log, the shared namespace of
        every node, and each node's sessions (see server.py)."""
        return {"cache_clears": self.store.cache_clears, "reads": list(self.caches.reads),
                "clears": list(self.caches.clears),
                "shared": {n.name: self.store.shared_names(n.name) for n in self.topology.nodes},
                "sessions": self.sessions.snapshot() if self.sessions is not None else {},
                "jobs": self.jobs.snapshot(),
                **self.transactions.snapshot()}

    def _create_database(self, s, m):
        lo, hi = parse_date(m.group(1)), parse_date(m.group(2))
        scheme_type = syntax.TYPE_WORDS[m.group(3).upper()]
        if scheme_type == c.SYMBOL:
            bounds = [unquote(b) for b in re.findall(STR, m.group(4))]
        elif re.fullmatch(r"\[-?\d+(?:, -?\d+)*\]", m.group(4)):
            bounds = [int(b) for b in re.findall(r"-?\d+", m.group(4))]
        else:
            raise ScriptError(f"Failed to convert {m.group(4)[:40]} to {m.group(3).upper()}")
        if lo > hi:
            raise ScriptError("The VALUE partition scheme is empty.")
        if len(bounds) < 2 or bounds != sorted(bounds) or len(set(bounds)) != len(bounds):
            raise ScriptError("The RANGE partition scheme must be increasing with at least 2 elements.")
        self.store.create_database(Database(unquote(m.group(5)), lo, hi, bounds, scheme_type, m.group(7),
                                            m.group(6)))
        return None

    def _create_day_database(self, s, m):
        """A database partitioned by day only (VALUE): a dataset without a key."""
        lo, hi = parse_date(m.group(2)), parse_date(m.group(3))
        if lo > hi:
            raise ScriptError("The VALUE partition scheme is empty.")
        self.store.create_database(Database(unquote(m.group(1)), lo, hi, [], atomic=m.group(5), engine=m.group(4)))
        return None

    def _create_table(self, s, m):
        path = unquote(m.group(1))
        columns = schema(m.group(2), m.group(3))
        table = unquote(m.group(4))
        parts = [unquote(p) for p in re.findall(STR, m.group(5))]
        if path in self.store.databases and self.store.databases[path].engine == "TSDB" and not m.group(6):
            raise ScriptError("sortColumns must be specified to create a partitioned table in a TSDB database.")
        self.transactions.create_table(path, table, columns, parts)
        return None

    def _truncate(self, s, m):
        self.store.clear(self.store.dfs_table(unquote(m.group(1)), unquote(m.group(2))))
        return None

    def _rows_per_day(self, s, m):
        meta = self.store.dfs_table(unquote(m.group(1)), unquote(m.group(2)))
        col = m.group(4)
        d = date_expr(col, meta.type_of(col))
        return self.store.query(f"select {d} as day, count(*) as n from {meta.duck} "
                                f"where {self.queries.where(meta, m.group(3))} group by 1 order by 1",
                                [c.DATE, c.LONG])

    def _delete(self, s, m):
        meta = self.store.dfs_table(unquote(m.group(1)), unquote(m.group(2)))
        where = self.queries.where(meta, m.group(3))
        self.store.execute(f"delete from {meta.duck} where {where}")
        return None

    def _footprint(self, s, m):
        meta = self._tablets_of(m.group(1), m.group(2))
        if not self._reaches_tablets(s):          # sum over no tablets: NULL
            return c.Scalar(c.LONG, c.LONG_NULL)
        return c.Scalar(c.LONG, self._stand_in_bytes(meta) * self.topology.replicas)

    def _reaches_tablets(self, s) -> bool:
        """pnodeRun without a node list from this node reaches a data node (from a compute node
        of a compute group it runs on the group alone, which holds no tablets)."""
        return any(n.stores for n in self.caches.default_pnode_targets(s.node))

    def _footprint_detail(self, s, m):
        """getTabletsMeta on every node, summed: one tablet per partition with rows, per replica."""
        meta = self._tablets_of(m.group(1), m.group(2))
        chunks = self._chunks(m.group(1), meta) if self._reaches_tablets(s) else 0
        copies = chunks * self.topology.replicas
        used = self._stand_in_bytes(meta) * self.topology.replicas if chunks else None
        return c.Table("", {"copies": c.Vector(c.INT, np.array([copies], "i4")),
                            "chunks": c.Vector(c.INT, np.array([chunks], "i4")),
                            "bytes": c.Vector(c.LONG, np.array([c.LONG_NULL if used is None else used], "i8"))})

    def _tablets_of(self, chunk_text: str, table_text: str) -> TableMeta:
        chunk, table = unquote(chunk_text), unquote(table_text)
        hit = re.fullmatch(r"/([A-Za-z0-9_/]+)/%", chunk)
        if not hit:
            raise ScriptError(f"Invalid chunk path {chunk}")
        return self.store.dfs_table("dfs://" + hit.group(1), table)

    def _stand_in_bytes(self, meta: TableMeta) -> int:
        """Bytes of the stored rows in DolphinDB's encoding: this server's stand-in for disk usage."""
        widths = []
        for name, t in meta.columns:
            widths.append(f'coalesce(sum(strlen("{name}") + 1), 0)' if t in c.STRINGISH
                          else f"count(*) * {np.dtype(c.NUMPY_OF[t]).itemsize}")
        return int(self.store.scalar(f"select {' + '.join(widths)} from {meta.duck}") or 0)

    def _chunks(self, chunk_text: str, meta: TableMeta) -> int:
        """Partitions holding rows: (day, key range) pairs, or one for a dimension table."""
        if not meta.partition_columns:
            return 1 if self.store.scalar(f"select count(*) from {meta.duck}") else 0
        db = self.store.databases["dfs://" + unquote(chunk_text)[1:-2]]
        day_col = meta.partition_columns[0]
        day = date_expr(day_col, meta.type_of(day_col))
        key = f'"{meta.partition_columns[1]}"' if len(meta.partition_columns) > 1 else "''"   # day-only: one per day
        with self.store.lock:
            pairs = self.store.con.execute(f"select distinct {day}, {key} from {meta.duck}").fetchall()
        return len({(d, bisect.bisect_right(db.key_bounds, k)) for d, k in pairs})

    def _create_dimension(self, s, m):
        self.store.create_table(unquote(m.group(1)), unquote(m.group(4)), schema(m.group(2), m.group(3)), [])
        return None

    def _load_text(self, s, m):
        g = m.groupdict()
        db_path = unquote(g["db"])
        names = [unquote(n) for n in re.findall(STR, g["names"])]
        types = [unquote(t) for t in re.findall(STR, g["types"])]
        if len(names) != len(types) or not all(t in c.TYPE_BY_NAME for t in types):
            raise ScriptError("The schema table of loadTextEx needs a name and a type per column")
        parts = [unquote(p) for p in re.findall(STR, g["parts"])]
        table = unquote(g["table"])
        if db_path in self.store.databases and (db_path, table) not in self.store.tables:
            # loadTextEx creates a missing table: a create like any other (two first loads race)
            self.transactions.create_table(db_path, table, [(n, c.TYPE_BY_NAME[t]) for n, t in zip(names, types)],
                                           parts)
        load_text(self.store, db_path, table, parts, unquote(g["path"]), unquote(g["delim"]),
                  [(n, c.TYPE_BY_NAME[t]) for n, t in zip(names, types)])
        s.variables[g["var"]] = DfsHandle(db_path, table)
        return self._rest(s, g["rest"])

    def _save_text(self, s, m):
        table = self.suites.run(s.variables, m.group(1))
        if not table or not isinstance(table[0], c.Table):
            raise ScriptError("saveText: the metacode is not a query")
        save_text(table[0], unquote(m.group(2)))
        return self._rest(s, m.group(3))

    def _rest(self, session: Session, rest: str | None):
        """The statements after a template's own lines (a count), answered as queries."""
        if not rest:
            return None
        answered = self.suites.run(session.variables, rest)
        if answered is None:
            raise not_recognised(rest.split("\n", 1)[0][:80], line=4)
        return answered[0] if answered else None

    def _share_empty(self, s, m):
        self.store.share(s.node.name, m.group(3), schema(m.group(1), m.group(2)))
        return None

    def _shared(self, session: Session, name: str) -> TableMeta:
        meta = self.store.shared_table(session.node.name, name)
        if meta is None:
            raise not_recognised(name)
        return meta

    def _arith(self, s, m):
        a, op, b = int(m.group(1)), m.group(2), int(m.group(3))
        return c.Scalar(c.INT, {"+": a + b, "-": a - b, "*": a * b}[op])

    def _variable(self, s, m):
        name = m.group(1)
        if name in s.variables:
            return s.variables[name]
        return self.store.table_contents(self._shared(s, name))

    # --- inserts -------------------------------------------------------------------------------
    @staticmethod
    def _one_table(args: list) -> c.Table:
        if len(args) != 1 or not isinstance(args[0], c.Table):
            raise ScriptError("tableInsert expects one table argument")
        return args[0]

    def _insert_dfs(self, path: str, table: str, args: list) -> int:
        return self.transactions.insert(path, table, self._one_table(args))

    # --- reads ------------------------------------------------------------------------------------
    def _measured(self, session: Session, m) -> c.Scalar:
        body, share_name = m.group(1), m.group(2)
        start = time.perf_counter_ns()
        result = self.queries.run(body.strip(), session.node, "measured")
        if result is None:
            raise not_recognised(body.strip().split("\n")[0][:60], line=2)
        elapsed = time.perf_counter_ns() - start
        columns = [(n, v.type) for n, v in result.columns.items()]
        self.store.share(session.node.name, share_name, columns, result)
        return c.Scalar(c.LONG, elapsed)

    def _plain(self, session: Session, text: str) -> c.Table | None:
        """A read sent the way a user calls ``s.run(query)``: the measured body whose last line
        does not assign the result. Answered directly, nothing shared."""
        head, _, last = text.rpartition("\n")
        body = (head + "\n" if head else "") + f"{RESULT} = {last}"
        return self.queries.run(body, session.node, "plain")


CREATE_DATABASE = (
    rf'dbDate = database\("", VALUE, ({DATE_LIT})\.\.({DATE_LIT})\)\n'
    rf'dbKey = database\("", RANGE, (symbol|char|short|int|long)\((\[.*?\])\)\)\n'
    rf'db = database\({STR}, COMPO, \[dbDate, dbKey\], engine="(OLAP|TSDB)", atomic="(CHUNK|TRANS)"\)')
CREATE_DAY_DATABASE = (
    rf'db = database\({STR}, VALUE, ({DATE_LIT})\.\.({DATE_LIT}), engine="(OLAP|TSDB)", atomic="(CHUNK|TRANS)"\)')
CREATE_TABLE = (
    rf"db = database\({STR}\)\n"
    rf"schemaTable = table\(1:0, (\[[^\]]*\]), \[([A-Z, ]*)\]\)\n"
    rf"pt = db\.createPartitionedTable\(schemaTable, {STR}, (\[[^\]]*\])(?:, sortColumns=(\[[^\]]*\]))?\)")
CREATE_DIMENSION = (
    rf"db = database\({STR}\)\n"
    rf"schemaTable = table\(1:0, (\[[^\]]*\]), \[([A-Z, ]*)\]\)\n"
    rf"db\.createTable\(schemaTable, {STR}\)")
LOAD_TEXT = (
    rf'db = database\("(?P<db>{QS})"\)\n'
    r"schemaTable = table\((?P<names>\[[^\]]*\]) as name, (?P<types>\[[^\]]*\]) as type\)\n"
    rf'(?P<var>{IDENT}) = loadTextEx\(db, "(?P<table>{QS})", (?P<parts>\[[^\]]*\]), "(?P<path>{QS})", '
    rf'"(?P<delim>{QS})", schemaTable\)'
    r"(?:\n(?P<rest>.*))?")
SAVE_TEXT = rf'saveText\(<(select [^\n]+)>, {STR}\)(?:\n(.*))?'
FOOTPRINT_DETAIL = (
    r"select count\(\*\) as copies, nunique\(chunkId\) as chunks, sum\(diskUsage\) as bytes "
    rf"from pnodeRun\(getTabletsMeta\{{{STR}, {STR}, true, -1\}}\)")
MEASURED = (
    r"tickbench_t0 = now\(true\)\n(.+)\n"
    r"tickbench_ns = long\(now\(true\) - tickbench_t0\)\n"
    rf"share tickbench_res as ({IDENT})\n"
    r'undef\("tickbench_res"\)\n'
    r"tickbench_ns")
