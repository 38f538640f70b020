"""The test server's data: DFS databases and tables, shared tables, held in an in-process DuckDB.

DFS databases and tables form one catalog for the whole cluster; shared tables live in one
namespace per node, as in DolphinDB (``share`` makes a table visible on its own node only).

Values are stored in DolphinDB's raw encodings (DATE = days since epoch, SECOND = seconds of day,
TIME = ms of day, TIMESTAMP = ms since epoch...), so queries are answered with the same integers the
wire carries; DolphinDB null sentinels become SQL NULLs on the way in and come back on the way out.
"""
from __future__ import annotations

import itertools
import threading
from dataclasses import dataclass, field

import duckdb
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from tests.ddbserver import codec as c

DUCK_TYPES = {
    c.BOOL: "BOOLEAN", c.CHAR: "TINYINT", c.SHORT: "SMALLINT", c.INT: "INTEGER", c.LONG: "BIGINT",
    c.DATE: "INTEGER", c.MONTH: "INTEGER", c.TIME: "INTEGER", c.MINUTE: "INTEGER",
    c.SECOND: "INTEGER", c.DATETIME: "INTEGER", c.TIMESTAMP: "BIGINT", c.NANOTIME: "BIGINT",
    c.NANOTIMESTAMP: "BIGINT", c.FLOAT: "FLOAT", c.DOUBLE: "DOUBLE", c.SYMBOL: "VARCHAR",
    c.STRING: "VARCHAR",
}
ARROW_RAW = {
    c.BOOL: pa.bool_(), c.CHAR: pa.int8(), c.SHORT: pa.int16(), c.INT: pa.int32(), c.LONG: pa.int64(),
    c.DATE: pa.int32(), c.MONTH: pa.int32(), c.TIME: pa.int32(), c.MINUTE: pa.int32(),
    c.SECOND: pa.int32(), c.DATETIME: pa.int32(), c.TIMESTAMP: pa.int64(), c.NANOTIME: pa.int64(),
    c.NANOTIMESTAMP: pa.int64(), c.FLOAT: pa.float32(), c.DOUBLE: pa.float64(),
    c.SYMBOL: pa.string(), c.STRING: pa.string(),
}


class StoreError(RuntimeError):
    """A request the server answers with an error message."""


@dataclass
class TableMeta:
    duck: str                              # DuckDB table name
    columns: list[tuple[str, int]]         # (name, DolphinDB type)
    partition_columns: list[str] = field(default_factory=list)

    def type_of(self, name: str) -> int:
        for n, t in self.columns:
            if n == name:
                return t
        raise StoreError(f"Unrecognized column name {name}")


@dataclass
class Database:
    path: str
    date_lo: int                           # VALUE domain, days since epoch (inclusive)
    date_hi: int
    key_bounds: list                       # RANGE boundaries of the second level ([]: by day only)
    key_type: int = c.SYMBOL               # the RANGE scheme's type: SYMBOL, or an integer type
    atomic: str = "CHUNK"                  # database(..., atomic=): what a write does on a locked chunk
    engine: str = "OLAP"                   # database(..., engine=): OLAP or TSDB (whose tables need sortColumns)


class Store:
    """All server state; every DuckDB call holds the lock (one connection, many threads)."""

    def __init__(self):
        self.lock = threading.RLock()
        self.con = duckdb.connect(":memory:")
        self.databases: dict[str, Database] = {}
        self.tables: dict[tuple[str, str], TableMeta] = {}
        self.shared: dict[str, dict[str, TableMeta]] = {}     # node alias -> name -> table
        self.cache_clears = 0
        self._ids = itertools.count(1)

    # --- catalog ---------------------------------------------------------------------------
    def _new_table(self, columns: list[tuple[str, int]]) -> str:
        name = f"t{next(self._ids)}"
        cols = ", ".join(f'"{n}" {DUCK_TYPES[t]}' for n, t in columns)
        self.execute(f"create table {name} ({cols})")
        return name

    def create_database(self, db: Database) -> None:
        with self.lock:
            if db.path in self.databases:
                raise StoreError(f"The database [{db.path}] already exists.")
            self.databases[db.path] = db

    def create_table(self, path: str, name: str, columns: list[tuple[str, int]],
                     partition_columns: list[str]) -> None:
        with self.lock:
            if path not in self.databases:
                raise StoreError(f"The database [{path}] does not exist.")
            if (path, name) in self.tables:
                raise StoreError(f"The table [{name}] already exists in database [{path}].")
            names = [n for n, _ in columns]
            levels = 2 if self.databases[path].key_bounds else 1   # COMPO (day, key) or VALUE (day)
            if partition_columns and len(partition_columns) != levels:
                raise StoreError(f"The number of partitioning columns ({len(partition_columns)}) must match "
                                 f"the partition scheme of [{path}] ({levels}).")
            for p in partition_columns:
                if p not in names:
                    raise StoreError(f"The partitioning column {p} does not exist in the table.")
            if levels == 2 and partition_columns:
                self._check_scheme_type(self.databases[path], dict(columns), partition_columns[1])
            self.tables[(path, name)] = TableMeta(self._new_table(columns), columns, partition_columns)

    @staticmethod
    def _check_scheme_type(db: Database, types: dict[str, int], column: str) -> None:
        """DolphinDB partitions a column only by a scheme of a compatible type: text by a SYMBOL
        scheme, an integer column by an integer one (so a scheme of text refuses a numeric key)."""
        integers = (c.CHAR, c.SHORT, c.INT, c.LONG)
        kind = types[column]
        if not ((db.key_type == c.SYMBOL and kind in c.STRINGISH) or (db.key_type in integers and kind in integers)):
            raise StoreError(f"The data type of the partitioning column {column} ({c.TYPE_NAMES.get(kind, kind)}) "
                             f"is incompatible with the partition scheme ({c.TYPE_NAMES.get(db.key_type)}).")

    def drop_database(self, path: str) -> None:
        """dropDatabase: the database, its tables and their rows go."""
        with self.lock:
            if path not in self.databases:
                raise StoreError(f"The database [{path}] does not exist.")
            for _, name in [k for k in self.tables if k[0] == path]:
                self.drop_table(path, name)
            del self.databases[path]

    def drop_table(self, path: str, name: str) -> None:
        """dropTable: the table and its rows go, the database stays."""
        with self.lock:
            meta = self.dfs_table(path, name)
            del self.tables[(path, name)]
            self.execute(f"drop table {meta.duck}")

    def temp_table(self, table: c.Table) -> TableMeta:
        """An in-memory table (a session variable) as a DuckDB table in its row order; ``drop`` it."""
        columns = [(name, vec.type) for name, vec in table.columns.items()]
        with self.lock:
            meta = TableMeta(self._new_table(columns), columns)
            if table.rows:
                self.insert(meta, table)
        return meta

    def drop(self, meta: TableMeta) -> None:
        self.execute(f"drop table if exists {meta.duck}")

    def dfs_table(self, path: str, name: str) -> TableMeta:
        if path not in self.databases:
            raise StoreError(f"The database [{path}] does not exist.")
        meta = self.tables.get((path, name))
        if meta is None:
            raise StoreError(f"Can't find the table [{name}] in database [{path}].")
        return meta

    def share(self, node: str, name: str, columns: list[tuple[str, int]],
              table: c.Table | None = None) -> None:
        with self.lock:
            space = self.shared.setdefault(node, {})
            if name in space:
                raise StoreError(f"The shared table {name} already exists.")
            meta = TableMeta(self._new_table(columns), columns)
            space[name] = meta
            if table is not None and table.rows:
                self.insert(meta, table)

    def shared_table(self, node: str, name: str) -> TableMeta | None:
        with self.lock:
            return self.shared.get(node, {}).get(name)

    def shared_names(self, node: str) -> list[str]:
        """Every table shared on ``node``, sorted: its shared namespace, as a test lists it."""
        with self.lock:
            return sorted(self.shared.get(node, {}))

    def shared_rows(self, node: str, name: str) -> int:
        meta = self.shared_table(node, name)
        return int(self.scalar(f"select count(*) from {meta.duck}") or 0) if meta is not None else 0

    def unshare(self, node: str, name: str) -> None:
        with self.lock:
            meta = self.shared.get(node, {}).pop(name, None)
            if meta is None:
                raise StoreError(f"The shared variable {name} does not exist.")
            self.execute(f"drop table {meta.duck}")

    # --- data ------------------------------------------------------------------------------
    def insert(self, meta: TableMeta, table: c.Table, database: Database | None = None) -> int:
        """tableInsert: columns by position, types must match (STRING into SYMBOL is fine)."""
        if len(table.columns) != len(meta.columns):
            raise StoreError(f"The number of columns of the table to insert ({len(table.columns)}) "
                             f"does not match the target table ({len(meta.columns)}).")
        arrays, names = [], []
        for (col_name, col_type), vec in zip(meta.columns, table.columns.values()):
            if vec.type != col_type and {vec.type, col_type} != {c.SYMBOL, c.STRING}:
                raise StoreError(
                    f"The data type of column {col_name} should be {c.TYPE_NAMES.get(col_type)}, "
                    f"not {c.TYPE_NAMES.get(vec.type, vec.type)}.")
            arrays.append(to_arrow(vec.values, col_type))
            names.append(col_name)
        if database is not None:
            self._check_partitions(meta, dict(zip(names, arrays)), database)
        batch = pa.table(arrays, names=names)
        with self.lock:
            self.con.register("incoming", batch)
            try:
                self.execute(f"insert into {meta.duck} select * from incoming")
            finally:
                self.con.unregister("incoming")
        return table.rows

    @staticmethod
    def _check_partitions(meta: TableMeta, cols: dict, db: Database) -> None:
        if not meta.partition_columns:
            return
        first = cols[meta.partition_columns[0]]
        days = pc.cast(first, pa.int64()).to_numpy(zero_copy_only=False)
        kind = meta.type_of(meta.partition_columns[0])
        if kind == c.TIMESTAMP:
            days = days // 86_400_000
        elif kind == c.NANOTIMESTAMP:          # a DATE domain takes a NANOTIMESTAMP's day, as DolphinDB does
            days = days // 86_400_000_000_000
        if len(days) and (days.min() < db.date_lo or days.max() > db.date_hi):
            raise StoreError("New data falls outside the VALUE partition domain of "
                             f"{db.path} (newValuePartitionPolicy=skip).")

    def query(self, sql: str, types: list[int]) -> c.Table:
        with self.lock:
            result = self.con.sql(sql).to_arrow_table()
        return from_arrow(result, types)

    def scalar(self, sql: str):
        with self.lock:
            rows = self.con.execute(sql).fetchall()
        return rows[0][0] if rows else None

    def execute(self, sql: str) -> None:
        """A statement without a result set (DuckDB wants every result consumed)."""
        with self.lock:
            self.con.execute(sql).fetchall()

    def table_contents(self, meta: TableMeta) -> c.Table:
        t = self.query(f"select * from {meta.duck} order by rowid", [t for _, t in meta.columns])
        return t

    def clear(self, meta: TableMeta) -> None:
        """Delete every row, keep the schema (``clear!`` of a shared table, ``truncate`` of a DFS one)."""
        with self.lock:
            self.execute(f"delete from {meta.duck}")


def to_arrow(values: np.ndarray, ddb_type: int) -> pa.Array:
    """Raw DolphinDB values to an Arrow array, nulls marked."""
    if ddb_type in c.STRINGISH:
        return pa.array([None if v == "" else v for v in values], pa.string())
    arr = np.asarray(values)
    if ddb_type in (c.FLOAT, c.DOUBLE):
        mask = np.isnan(arr) | (arr == c.NULLS[ddb_type])
    elif ddb_type == c.BOOL:
        mask = arr == -128
        arr = arr.astype(bool)
    else:
        mask = arr == c.NULLS[ddb_type]
    return pa.array(arr, type=ARROW_RAW[ddb_type], mask=mask if mask.any() else None)


def from_arrow(table: pa.Table, types: list[int]) -> c.Table:
    """A query result back into raw DolphinDB vectors, NULLs as sentinels."""
    if len(types) != table.num_columns:
        raise StoreError(f"internal: {table.num_columns} result columns, {len(types)} types")
    out = c.Table("", {})
    for name, col, ddb_type in zip(table.column_names, table.columns, types):
        if ddb_type in c.STRINGISH:
            values = np.array(pc.fill_null(pc.cast(col, pa.string()), "").to_pylist(), dtype=object)
        elif ddb_type == c.BOOL:
            values = np.where(pc.is_null(col).to_numpy(zero_copy_only=False), -128,
                              pc.fill_null(col, False).to_numpy(zero_copy_only=False)).astype("i1")
        else:
            target = ARROW_RAW[ddb_type]
            filled = pc.fill_null(pc.cast(col, target, safe=False), c.NULLS[ddb_type])
            values = filled.to_numpy(zero_copy_only=False).astype(c.NUMPY_OF[ddb_type])
        out.columns[name] = c.Vector(ddb_type, values)
    return out
