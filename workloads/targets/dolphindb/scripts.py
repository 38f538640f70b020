"""Every DolphinDB script the Tickbench target sends, built from validated, quoted parts.

Each builder returns the exact text sent with ``session.run``; every name and value goes through
``ddb_quote`` first. Keeping them in one module lets them be listed, reviewed and tried on a real
cluster, and lets the test server recognise them.

DolphinDB functions used (all documented built-ins): ``version``, ``getClusterPerf`` (through
``rpc`` and ``getControllerAlias``), ``getNodeAlias``, ``truncate``, ``existsDatabase``, ``existsTable``, ``database`` (VALUE, RANGE, COMPO with
``atomic="CHUNK"`` so concurrent appends to one partition are allowed), ``table``,
``createPartitionedTable``, ``loadTable``, ``tableInsert``, ``share``, ``defined``, ``undef``,
``clear!``, ``now``, ``pnodeRun`` (with a node list: those nodes; without: every data node and
ungrouped compute node, or only the caller's compute group), ``flushOLAPCache``, ``clearAllCache``,
``clearComputeNodeCache`` (3.x compute groups), ``objs(true)`` (the node's shared variables),
``getTabletsMeta`` (``diskUsage`` column: bytes
of each tablet chunk on each node, replicas included), ``sqlDS``, ``mr``, ``olsEx``, ``append!``.
Reports 001 and 004: ``createTable`` (a dimension table), ``dropTable``, ``loadTextEx`` (appends to
an existing partitioned table, as report 001's own import script does), ``saveText`` (with SQL
metacode), ``nunique``; the suite queries are the texts of ``resources/queries/*.toml``.
"""
from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass

from workloads.targets.dolphindb import quote as q

RESULT_VAR = "tickbench_res"     # where a measured script leaves its result, before sharing it
START_VAR = "tickbench_t0"
ELAPSED_VAR = "tickbench_ns"
MAP_FUNCTION = "tickbenchSaveMinute"

# Regular trading hours filter of report 003 (seconds of day)
SESSION_OPEN = 9 * 3600 + 30 * 60
SESSION_CLOSE = 15 * 3600 + 59 * 60 + 59


@dataclass(frozen=True)
class Columns:
    """The dataset's columns as the scripts need them; all validated identifiers."""

    names: tuple[str, ...]
    types: tuple[str, ...]
    date: str
    date_type: str
    key: str
    time: str
    time_type: str
    bid: str = ""
    ask: str = ""
    size: str = ""     # a traded size: minute bars add its sum as volume

    @property
    def key_type(self) -> str:
        """The key column's DolphinDB type ("" without a key)."""
        return self.types[self.names.index(self.key)] if self.key else ""

    @property
    def partition(self) -> list[str]:
        """The partitioning columns: (day, key), or the day alone for a dataset without a key."""
        return [self.date, self.key] if self.key else [self.date]

    def __post_init__(self) -> None:
        for n in self.names:
            q.identifier(n, "column name")
        for t in self.types:
            q.type_literal(t)
        for n in (self.date, self.key, self.time, self.bid, self.ask, self.size):
            if n and n not in self.names:
                raise ValueError(f"column {n!r} is not in the table")


@dataclass(frozen=True)
class Names:
    """Where one laid-out dataset lives on the cluster."""

    db: str        # dfs:// path
    table: str     # the seed table
    append: str    # DFS scratch table for concurrent appends
    minute: str    # report 003's map-reduce output (quotes_minute)

    def __post_init__(self) -> None:
        q.db_path(self.db)
        for n in (self.table, self.append, self.minute):
            q.identifier(n, "table name")

    @property
    def imports(self) -> str:
        """Where the import workload loads CSV files: ``<table>_import``, partitioned as the seed."""
        return q.identifier(f"{self.table}_import", "table name")

    @property
    def chunk_path(self) -> str:
        """``/name/%``: every chunk of the database, for getTabletsMeta."""
        return "/" + self.db[len("dfs://"):] + "/%"


def load(names: Names, table: str) -> str:
    return f"loadTable({q.string(names.db)}, {q.string(q.identifier(table, 'table name'))})"


# --- connection and topology ------------------------------------------------------------------
def version() -> str:
    return "version()"


def cluster_perf() -> str:
    """Every node's load. DolphinDB 2.x runs getClusterPerf only on the controller; through
    ``rpc`` it works from any node of a cluster (a single node has no controller: it fails)."""
    return "rpc(getControllerAlias(), getClusterPerf, true)"


def controller_alias() -> str:
    return "getControllerAlias()"


def node_alias() -> str:
    return "getNodeAlias()"


def engine_type(names: Names) -> str:
    """The storage engine of the table's database: OLAP or TSDB."""
    return f"schema({load(names, names.table)}).engineType"


def key_scheme(names: Names) -> str:
    """The live RANGE boundaries of the table's key level (its COMPO scheme's second), as the
    database holds them: a database built by another version may cut other ranges."""
    return f"schema({load(names, names.table)}).partitionSchema[1]"


def shared_objects() -> str:
    """The names in this node's shared namespace (a STRING vector)."""
    return "exec name from objs(true) where shared = true"


# --- preparation -----------------------------------------------------------------------------
def exists_database(names: Names) -> str:
    return f"existsDatabase({q.string(names.db)})"


def exists_table(names: Names, table: str) -> str:
    return f"existsTable({q.string(names.db)}, {q.string(q.identifier(table, 'table name'))})"


# RANGE boundaries are of the key column's own type (DolphinDB partitions a column only by a
# scheme of a compatible type): a SYMBOL vector for text keys, an integer vector for integer keys
INTEGER_KEY_TYPES = ("CHAR", "SHORT", "INT", "LONG")


def create_database(names: Names, first_day: dt.date, last_day: dt.date,
                    key_bounds: list, key_type: str = "SYMBOL") -> str:
    """Composite partitions: VALUE by day (with a month of room for appends) x RANGE by key, its
    boundaries of ``key_type``; no ``key_bounds`` (a dataset without a key): VALUE by day alone."""
    if not key_bounds:
        return (f"db = database({q.string(names.db)}, VALUE, {q.date(first_day)}..{q.date(last_day)}, "
                f"engine=\"OLAP\", atomic=\"CHUNK\")")
    if len(key_bounds) < 2:
        raise ValueError("a RANGE partition needs at least two boundaries")
    return "\n".join([
        f"dbDate = database(\"\", VALUE, {q.date(first_day)}..{q.date(last_day)})",
        f"dbKey = database(\"\", RANGE, {range_vector(key_bounds, key_type)})",
        f"db = database({q.string(names.db)}, COMPO, [dbDate, dbKey], engine=\"OLAP\", atomic=\"CHUNK\")",
    ])


def range_vector(bounds: list, key_type: str) -> str:
    """``symbol(["A", "B"])`` or ``long([1, 5])``: RANGE boundaries as a vector of ``key_type``."""
    if key_type in INTEGER_KEY_TYPES:
        if not all(isinstance(b, int) and not isinstance(b, bool) for b in bounds):
            raise ValueError(f"RANGE boundaries of a {key_type} key must be whole numbers")
        return f"{key_type.lower()}([{', '.join(q.number(b) for b in bounds)}])"
    if key_type in ("SYMBOL", "STRING"):
        return f"symbol({q.string_vector(bounds)})"
    raise ValueError(f"a {key_type} key column cannot be RANGE-partitioned by Tickbench: use a text or integer key")


def key_literal(cols: Columns, key: str | int) -> str:
    """The slice key as a literal the key column compares with: a number for an integer key
    (DolphinDB refuses to compare it with text), a quoted string otherwise."""
    if cols.key_type in INTEGER_KEY_TYPES:
        try:
            return q.number(int(key) if isinstance(key, str) and not isinstance(key, bool) else key)
        except ValueError:
            raise ValueError(f"key {key!r} is not a whole number for the {cols.key_type} column {cols.key}") from None
    return q.string(str(key))


def create_table(names: Names, table: str, columns: list[tuple[str, str]],
                 partition_columns: list[str]) -> str:
    col_names = [q.identifier(c, "column name") for c, _ in columns]
    col_types = [q.type_literal(t) for _, t in columns]
    for p in partition_columns:
        if p not in col_names:
            raise ValueError(f"partition column {p!r} is not in the table")
    return "\n".join([
        f"db = database({q.string(names.db)})",
        f"schemaTable = table(1:0, {q.string_vector(col_names)}, [{', '.join(col_types)}])",
        f"pt = db.createPartitionedTable(schemaTable, {q.string(q.identifier(table, 'table name'))}, "
        f"{q.string_vector(partition_columns)})",
    ])


def rows_per_day(names: Names, cols: Columns, first: dt.date, last: dt.date) -> str:
    """Rows per day of the days ``first``..``last`` (a window under the partition limit)."""
    return (f"select count(*) as n from {load(names, names.table)} "
            f"where {days_filter(cols, first, last)} group by date({cols.date}) as day")


def delete_day(names: Names, cols: Columns, day: dt.date) -> str:
    # SQL delete wants a table variable, not a function call, as its target
    return (f"tickbenchPt = {load(names, names.table)}\n"
            f"delete from tickbenchPt where {day_filter(cols, day)}")


def insert_function(names: Names, table: str) -> str:
    """Called as ``session.run(text, frame)``: appends the uploaded table, returns the row count."""
    return f"tableInsert{{{load(names, table)}}}"


def footprint(names: Names) -> str:
    return (f"exec sum(diskUsage) from pnodeRun(getTabletsMeta{{{q.string(names.chunk_path)}, "
            f"{q.string(names.table)}, true, -1}})")


def create_memory_table(name: str, columns: list[tuple[str, str]]) -> str:
    """A shared in-memory table (the upload sweep's, report 002 §3) named ``name``."""
    col_names = [q.identifier(c, "column name") for c, _ in columns]
    col_types = [q.type_literal(t) for _, t in columns]
    return (f"share table(1:0, {q.string_vector(col_names)}, [{', '.join(col_types)}]) "
            f"as {q.identifier(name, 'shared table name')}")


def memory_insert_function(name: str) -> str:
    return f"tableInsert{{{q.identifier(name, 'shared table name')}}}"


def clear_memory_table(name: str) -> str:
    """Every row of a shared in-memory table removed, the table kept."""
    return f"clear!({q.identifier(name, 'shared table name')})"


def truncate(names: Names, table: str) -> str:
    """Every row of a DFS table removed, its schema kept (a write workload's scratch table)."""
    return f"truncate({q.string(names.db)}, {q.string(q.identifier(table, 'table name'))})"


# --- filters ---------------------------------------------------------------------------------
def day_filter(cols: Columns, day: dt.date) -> str:
    if cols.date_type == "DATE":
        return f"{cols.date} = {q.date(day)}"
    lo, hi = q.nanotimestamp_bounds(day) if cols.date_type == "NANOTIMESTAMP" else q.timestamp_bounds(day)
    if cols.date_type == "DATETIME":
        lo, hi = lo[:-4], hi[:-4]
    return f"{cols.date} between {lo} : {hi}"


def days_filter(cols: Columns, first: dt.date, last: dt.date) -> str:
    if cols.date_type == "DATE":
        return f"{cols.date} between {q.date(first)} : {q.date(last)}"
    bounds = q.nanotimestamp_bounds if cols.date_type == "NANOTIMESTAMP" else q.timestamp_bounds
    lo, _ = bounds(first)
    _, hi = bounds(last)
    return f"{cols.date} between {lo} : {hi}"


def session_filter(cols: Columns) -> str:
    return (f"{cols.time} between {q.time_of_day(SESSION_OPEN, cols.time_type)} : "
            f"{q.time_of_day(SESSION_CLOSE, cols.time_type)}")


def _needs_prices(cols: Columns) -> None:
    if not (cols.bid and cols.ask):
        raise ValueError("this dataset has no bid/ask price columns")


# --- measured reads ----------------------------------------------------------------------------
def measured(share_name: str, body: list[str]) -> str:
    """Run ``body`` (which sets RESULT_VAR) between two clock readings on the server, keep the
    result there as a shared table, and return the elapsed nanoseconds (LONG)."""
    q.identifier(share_name, "shared table name")
    return "\n".join([
        f"{START_VAR} = now(true)",
        *body,
        f"{ELAPSED_VAR} = long(now(true) - {START_VAR})",
        f"share {RESULT_VAR} as {share_name}",
        f"undef(\"{RESULT_VAR}\")",
        ELAPSED_VAR,
    ])


def plain(body: list[str]) -> str:
    """The query as a user sends it with ``session.run``: the body, its last statement's value
    returned instead of kept in ``RESULT_VAR``."""
    prefix = f"{RESULT_VAR} = "
    if not body or not body[-1].startswith(prefix):
        raise ValueError("a measured body ends by assigning its result")
    return "\n".join([*body[:-1], body[-1][len(prefix):]])


def fetch(share_name: str) -> str:
    return q.identifier(share_name, "shared table name")


def drop_shared(share_name: str) -> str:
    return f"undef({q.string(q.identifier(share_name, 'shared table name'))}, SHARED)"


def select_day(names: Names, cols: Columns, day: dt.date, columns: tuple[str, ...] | None = None) -> list[str]:
    """The day's rows: every column (``select *``) or only ``columns`` (a select list)."""
    return [f"{RESULT_VAR} = select {select_list(cols, columns)} from {load(names, names.table)} "
            f"where {day_filter(cols, day)}"]


def select_list(cols: Columns, columns: tuple[str, ...] | None) -> str:
    if columns is None:
        return "*"
    unknown = [n for n in columns if n not in cols.names]
    if unknown or not columns:
        raise ValueError(f"no column {', '.join(unknown) or '(none given)'} in the table; it has {', '.join(cols.names)}")
    return ", ".join(columns)


def select_slice(names: Names, cols: Columns, day: dt.date, key: str | int) -> list[str]:
    return [f"{RESULT_VAR} = select * from {load(names, names.table)} "
            f"where {day_filter(cols, day)}, {cols.key} = {key_literal(cols, key)}"]


def minute_bars(names: Names, cols: Columns, day: dt.date, key: str | int) -> list[str]:
    """One key-day's OHLC of the mid price by minute (and the size's sum as volume), computed on the server."""
    _needs_prices(cols)
    mid = f"({cols.bid} + {cols.ask}) / 2"
    volume = f", sum({cols.size}) as volume" if cols.size else ""
    return [f"{RESULT_VAR} = select first({mid}) as open, max({mid}) as high, min({mid}) as low, "
            f"last({mid}) as close{volume} from {load(names, names.table)} "
            f"where {day_filter(cols, day)}, {cols.key} = {key_literal(cols, key)} "
            f"group by minute({cols.time}) as minute"]


def spread_by_minute(names: Names, cols: Columns, first: dt.date, last: dt.date) -> list[str]:
    """Report 003 (a): filter plus group by minute over several days."""
    _needs_prices(cols)
    b, a = cols.bid, cols.ask
    return [f"{RESULT_VAR} = select avg(({a}-{b})/({a}+{b})*2) as avgSpread "
            f"from {load(names, names.table)} where {days_filter(cols, first, last)}, "
            f"{session_filter(cols)}, {a}>{b}, {b}>0, {a}/{b}<1.2 "
            f"group by minute({cols.time}) as minute"]


def mapreduce_minute_bars(names: Names, cols: Columns, first: dt.date, last: dt.date) -> list[str]:
    """Report 003 (b): map-reduce minute quotes; each map appends its bars to the minute table."""
    _needs_prices(cols)
    k, d, t, b, a = cols.key, cols.date, cols.time, cols.bid, cols.ask
    return [
        f"def {MAP_FUNCTION}(t) {{",
        f"    m = select avg({b}) as {b}, avg({a}) as {a} from t group by {k}, date({d}) as {d}, "
        f"minute({t}) as minute",
        f"    {load(names, names.minute)}.append!(m)",
        "    return m.size()",
        "}",
        f"tickbenchDs = sqlDS(<select {k}, {d}, {t}, {b}, {a} from {load(names, names.table)} "
        f"where {days_filter(cols, first, last)}>)",
        f"{RESULT_VAR} = table([long(mr(tickbenchDs, {MAP_FUNCTION}, +))] as bars)",
    ]


def minute_table_columns(cols: Columns) -> list[tuple[str, str]]:
    """The minute-bars table, partitioned as the table is: its key of the key's own type (a SYMBOL
    key cannot live in an INT scheme)."""
    return [(cols.key, cols.key_type), (cols.date, "DATE"), ("minute", "MINUTE"),
            (cols.bid, "DOUBLE"), (cols.ask, "DOUBLE")]


def ols_spread(names: Names, cols: Columns, first: dt.date, last: dt.date,
               bid_size: str, ask_size: str) -> list[str]:
    """Report 003 (c): distributed OLS of relative spread on quote size (coefficient table kept)."""
    _needs_prices(cols)
    b, a = cols.bid, cols.ask
    bs, az = q.identifier(bid_size, "column name"), q.identifier(ask_size, "column name")
    return [
        f"tickbenchDs = sqlDS(<select {a}/{b}-1 as spread, ({bs}+{az})*({a}+{b})\\2 as quoteSize "
        f"from {load(names, names.table)} where {days_filter(cols, first, last)}, "
        f"{session_filter(cols)}, {a}>{b}, {a}>0, {b}>0, {a}/{b}<1.2>)",
        f"{RESULT_VAR} = olsEx(tickbenchDs, `spread, `quoteSize, true, 2)[\"Coefficient\"]",
    ]


# --- reports 001 and 004: side tables, import, export, footprint, suite queries -----------------
def create_dimension_table(names: Names, table: str, columns: list[tuple[str, str]]) -> str:
    """A non-partitioned (dimension) table in the dataset's database (devices: ``info``)."""
    col_names = [q.identifier(c, "column name") for c, _ in columns]
    col_types = [q.type_literal(t) for _, t in columns]
    return "\n".join([
        f"db = database({q.string(names.db)})",
        f"schemaTable = table(1:0, {q.string_vector(col_names)}, [{', '.join(col_types)}])",
        f"db.createTable(schemaTable, {q.string(q.identifier(table, 'table name'))})",
    ])


def drop_table(names: Names, table: str) -> str:
    return f"dropTable(database({q.string(names.db)}), {q.string(q.identifier(table, 'table name'))})"


def select_all(names: Names, table: str) -> str:
    return f"select * from {load(names, table)}"


def count_rows(names: Names, table: str, where: str = "") -> str:
    """``exec count(*)``: a scalar; ``where`` is a condition made by ``day_filter``."""
    return f"exec count(*) from {load(names, table)}" + (f" where {where}" if where else "")


LOADED_VAR = "tickbenchLoaded"


def load_text(names: Names, table: str, columns: list[tuple[str, str]], partition_columns: list[str],
              server_path: str) -> str:
    """``loadTextEx`` of one CSV file (header line, comma-separated, DolphinDB's text formats)
    into an existing partitioned table (it appends, as report 001's import script relies on).
    The script's last statement is an assignment, so it returns nothing: the call a user times;
    ``count_loaded`` counts the rows afterwards through the handle it keeps."""
    col_names = [q.identifier(c, "column name") for c, _ in columns]
    col_types = [q.type_literal(t) for _, t in columns]
    return "\n".join([
        f"db = database({q.string(names.db)})",
        f"schemaTable = table({q.string_vector(col_names)} as name, {q.string_vector(col_types)} as type)",
        f"{LOADED_VAR} = loadTextEx(db, {q.string(q.identifier(table, 'table name'))}, "
        f"{q.string_vector(partition_columns)}, {q.string(server_path)}, \",\", schemaTable)",
    ])


def count_loaded(day_condition: str) -> str:
    """The day's rows in the table the last ``load_text`` of this session loaded into (each step
    loads every file once into an emptied table: the rows it loaded)."""
    return f"exec count(*) from {LOADED_VAR} where {day_condition}"


def save_text(names: Names, cols: Columns, day: dt.date, server_path: str) -> str:
    """The server writes one day of the seed table as CSV (header line, DolphinDB text formats;
    SQL metacode lets it read the partitions with several workers); returns nothing (the day's
    rows: ``count_rows`` with the same ``day_filter``, afterwards)."""
    where = day_filter(cols, day)
    return f"saveText(<select * from {load(names, names.table)} where {where}>, {q.string(server_path)})"


def footprint_detail(names: Names, table: str) -> str:
    """Bytes of one table on every data node, with its tablet copies and distinct chunks
    (copies / chunks = replicas: each replica of a chunk is a tablet with the same chunkId)."""
    return ("select count(*) as copies, nunique(chunkId) as chunks, sum(diskUsage) as bytes "
            f"from pnodeRun(getTabletsMeta{{{q.string(names.chunk_path)}, "
            f"{q.string(q.identifier(table, 'table name'))}, true, -1}})")


_PLACEHOLDER = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")


def suite_query(text: str, names: Names, tables: dict[str, str], values: dict) -> str:
    """A suite query's DolphinDB text with its placeholders filled: ``{table}`` by
    ``loadTable(db, name)`` (``tables`` maps placeholder -> table name in ``names.db``) and
    ``{param}`` by the value's literal (``ddb_quote.literal``). An unknown placeholder raises
    ``ValueError``, so a text cannot reach the server half-filled."""
    db = q.db_path(names.db)

    def fill(match: re.Match) -> str:
        name = match.group(1)
        if name in tables:
            return f"loadTable({q.string(db)}, {q.string(q.identifier(tables[name], 'table name'))})"
        if name in values:
            return q.literal(values[name])
        raise ValueError(f"the query names {{{name}}}, which is neither a table of this layout "
                         f"({', '.join(sorted(tables))}) nor one of its parameters")

    return _PLACEHOLDER.sub(fill, text)
