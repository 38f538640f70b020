"""PostgreSQL: a user's server (or one Tickbench starts, ``workloads.local_engines.postgres``)
read through ADBC's PostgreSQL driver (``adbc-driver-postgresql``), everything else through
psycopg 3 (its binary build).

Config keys (plain data, rebuilt in every worker process): ``host`` (required), ``port`` (default
5432), ``user`` (default ``postgres``), ``password``, ``database`` (default ``tickbench``; created
by ``prepare`` when missing and the user may), ``connect_timeout`` (s, default 10),
``chunk_rows`` (rows per load batch, default 500,000), ``local_engine`` (true when Tickbench
started the server: ``describe`` says so, and a cold run may then also evict the OS page cache of
the server's data files, which are on this machine).

psycopg and ADBC's driver are imported only when a connection is made (missing: ``MissingClient``
naming the ``postgres`` extra, which installs both).

Layout, as a practitioner lays out ticks in PostgreSQL: one table per dataset and scale,
``<dataset>_<scale key>`` (a long name is shortened with a hash), declaratively ``PARTITION BY
RANGE`` of the day column (devices: of its timestamp), one partition per day
(``<table>_pYYYYMMDD``), and a B-tree index on (key, time, ``_seq``). ``_seq`` (integer) is each
row's arrival ordinal within its day: ties in (key, time) are frequent in second-resolution
quotes; it is the heap's order (below) and picks a minute's first/last quote (``(array_agg(mid
ORDER BY _seq))[1]``: PostgreSQL has no first/last aggregate; a day is generated in time order,
checked, so ``_seq`` follows (time, arrival) order). Types:
SYMBOL/STRING ``text``, DATE ``date``, SECOND/TIME/TIMESTAMP ``timestamp`` (without time zone:
naive UTC; times of day on 1970-01-01, as the datasets hold them), CHAR ``smallint`` (PostgreSQL
has no one-byte integer), SHORT ``smallint``, INT ``integer``, LONG ``bigint``, FLOAT ``real``,
DOUBLE ``double precision``, BOOL ``boolean``. A day is loaded with ``COPY ... FROM STDIN (FORMAT
csv)`` (pyarrow writes the CSV) into a table of its own, indexed on (key, time, ``_seq``) and
``CLUSTER``ed on that index (the heap rewritten in index order: a day's rows lie physically by
key, then time, then arrival, as DuckDB's and the files' do, and the index's correlation with
the heap is 1), then ``ATTACH``ed as the day's partition (the table's index adopts the
partition's) and ``ANALYZE``d; a day whose partition is missing or short (an interrupted load)
is dropped and loaded again. ``LAYOUT_FORMAT`` 2 marks clustered layouts: one of format 1 (days
in time order) is dropped and loaded again, never read as if sorted. Beside it: ``_append``,
``_import``, ``_minute`` (report 003's map-reduce), ``_info`` (devices), and the manifest table
``_tickbench_layouts``.

Meaning of the reads: ``read_day`` and ``read_slice`` return their rows in stored order, with no
``ORDER BY`` (a day partition's sequential scan, or a slice's index or bitmap scan, gives them in
(key, time, ``_seq``) order since the partition is clustered; order is not part of the answer,
``verify`` compares them order-free); ``minute_bars`` is ordered by minute (part of its answer).

Reads: through ADBC's PostgreSQL driver, ``cursor.execute(sql)`` then ``fetch_arrow_table()``:
with no bound parameter the driver runs the query as ``COPY (...) TO STDOUT (FORMAT binary)``
and decodes the stream into Arrow in C (nanoarrow), so the day and key are written into the SQL
as literals quoted by psycopg (``ClientCursor.mogrify``; a bound parameter makes the driver use
the extended protocol, 1,260 ms instead of 869 ms below). A CHAR column is then cast from
``smallint`` to int8 and ``frame_from_arrow`` makes the DataFrame (dates and microsecond
timestamps become ``datetime64[ns]`` there). Measured on one 1 M-row taq day,
clustered, local server, warm, median of 7, interleaved (2 cores, load ~1.3): ADBC into Arrow
869 ms; psycopg's ``COPY ... (FORMAT binary)`` 1,080 ms for its 92 MB alone, before any parsing
(a binary COPY parsed in Python cannot beat a driver that has already parsed it in C, so ADBC is
kept); the former CSV path 1,161 ms for its 62 MB alone, plus ~0.4 s of pyarrow CSV parsing.
Suite queries (``run_query``, small results) use a psycopg cursor's ``fetchall``.

Phases, honestly: the timed call is ADBC's fetch (libpq sends the query, the server runs it and
streams the binary COPY, the driver decodes it into Arrow as it arrives: one call, so execution,
transfer and Arrow decoding cannot be told apart) then the casts and ``to_pandas``. A measured
read has ``decode`` only (Arrow -> DataFrame). Probe operations (``probed_ops``) split the rest:
first ``EXPLAIN (ANALYZE, TIMING OFF, FORMAT JSON)`` of the same SELECT, whose ``Execution Time``
is ``server`` (the plan run on the server with its result kept there, not sent; it also warms the
cache for the read that follows), then the read as measured: ``transfer`` = the fetch's wall time
minus ``server`` (at least 0), ``decode`` the casts and ``to_pandas``. ``wire_bytes`` = the size of
the binary COPY stream, counted from the result after the call (``copy_binary_bytes``: equal to
the bytes psycopg receives for the same binary COPY).

Concurrency: each worker process has its own connections (psycopg's, and ADBC's once it reads:
two server backends each); nothing is serialised on the client side.

Cold cache (``drop_cache``, between a cold step's rounds): the layout's relations and their
indexes are evicted from the shared buffers with ``pg_buffercache_evict_relation`` (PostgreSQL 18's
``pg_buffercache``, superuser only; the extension is created if missing), and with ``local_engine``
the OS page cache of their files (``pg_relation_filepath``; ``cache.drop_file_cache``). A server
that offers neither gets nothing applied, and its operations are not called cold.

Reports 001 and 004: suite texts of dialect ``postgres`` use psycopg's named parameters
``%(name)s`` (a literal ``%`` is ``%%``) and ``{quotes}``/``{readings}``/``{info}`` for the
tables; a list parameter is an array (``= ANY(%(symbols)s)``). ``numeric`` results (avg of
integers) are read as floats. Import: ``COPY <staging> FROM STDIN (FORMAT csv, HEADER)`` of the
file's bytes into a temporary all-text table, then one ``INSERT ... SELECT`` converting DolphinDB's
text style (``2007.08.23``, ``09:30:07``, a CHAR as its letter) into ``_import``; export:
``COPY (SELECT ...) TO STDOUT (FORMAT csv, HEADER)`` streamed into the file in stored order (no
``ORDER BY``: the partition is clustered), ISO dates, times of day without their date, CHAR as
its letter, as DuckDB writes them. Footprint:
``pg_total_relation_size`` of every partition (heap + TOAST + indexes); per column
``sum(pg_column_size(col))`` (the stored datums, without tuple headers or indexes).
"""
from __future__ import annotations

import datetime as dt
import hashlib
import io
import json
import re
import time
from contextlib import suppress
from dataclasses import asdict
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.csv as pacsv

from workloads.datasets.base import side_tables
from workloads.datasets.schema import DatasetInfo, Scale, Schema, StringMode
from workloads.targets.arrow_frames import arrow_schema, arrow_table, frame_from_arrow, key_value, library_versions
from workloads.targets.bars import price_columns
from workloads.targets.base import (IMPORT_TABLE, Footprint, Layout, NotSupported, OpResult,
                                    ProgressCallback, Target, TargetError)
from workloads.targets.cache import drop_file_cache
from workloads.targets.columns import column_schema
from workloads.targets.quotes import (MAX_ASK_BID_RATIO, SESSION_CLOSE, SESSION_OPEN, QuoteColumns, day_span,
                                     ols_from_sums, quote_columns)
from workloads.targets.sizes import rows_bytes
from workloads.targets.lazy import get_dataset as _get_dataset, import_client

LAYOUT_FORMAT = 2             # 2: partitions CLUSTERed in index order (1: loaded in time order)
KEYS_SAMPLE = 100
DEFAULT_PORT = 5432
DEFAULT_USER = "postgres"
DEFAULT_DATABASE = "tickbench"
DEFAULT_CHUNK_ROWS = 500_000
MANIFEST_TABLE = "_tickbench_layouts"
SEQ = "_seq"
MAX_NAME = 40                 # table names stay well under PostgreSQL's 63 bytes with their suffixes

# What describe() records of the server's configuration (asked of it: SHOW / pg_settings)
SETTINGS = ("shared_buffers", "work_mem", "effective_cache_size", "maintenance_work_mem",
            "max_parallel_workers_per_gather", "jit", "max_connections")
READ_PATH = ("ADBC's PostgreSQL driver (adbc_driver_postgresql.dbapi, nothing bound: the driver reads the result as "
             "COPY ... TO STDOUT (FORMAT binary) straight into Arrow) -> fetch_arrow_table -> pandas; the fastest "
             "client path measured, and the one workloads/practitioner/postgres_paths.py writes by hand. "
             "1 M-row taq day, local server, warm, median of 7: ADBC 869 ms into Arrow, against 1,080 ms for "
             "psycopg's binary COPY bytes alone (no parse) and 1,161 ms for the CSV COPY's bytes alone. Tickbench's "
             "read_day beside that hand-written path, interleaved, median of 21 on 2 busy cores: 1,647 vs 1,716 ms "
             "(ratio 0.96; its only extra work, the CHAR cast and to_pandas, takes 16 ms as the hand-written "
             "to_pandas does); before clustering and ADBC (ORDER BY over a time-ordered heap, CSV): 3,546 ms")
ORDER = ("read_day and read_slice: stored order, no ORDER BY (each day partition is CLUSTERed on (key, time, _seq), "
         "so that is index order); minute_bars: ORDER BY minute (part of the answer)")

_PG_TYPES = {
    "BOOL": "boolean", "CHAR": "smallint", "SHORT": "smallint", "INT": "integer", "LONG": "bigint",
    "FLOAT": "real", "DOUBLE": "double precision", "DATE": "date", "SECOND": "timestamp",
    "TIME": "timestamp", "TIMESTAMP": "timestamp", "SYMBOL": "text", "STRING": "text",
}
_TEMPORAL = frozenset({"DATE", "SECOND", "TIME", "TIMESTAMP"})
_TABLE_PLACEHOLDER = re.compile(r"\{(quotes|readings|info)\}")
_PARAMETER = re.compile(r"%\(([A-Za-z_][A-Za-z0-9_]*)\)s")


def _now() -> float:
    return time.perf_counter()


def quote(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def table_name(dataset: str, scale: Scale) -> str:
    name = f"{dataset}_{scale.key()}"
    if len(name) > MAX_NAME:
        name = f"{name[:MAX_NAME - 9]}_{hashlib.sha1(name.encode()).hexdigest()[:8]}"
    return name


def _first_line(text: Any) -> str:
    lines = str(text).strip().splitlines()
    return lines[0] if lines else ""



def _psycopg():
    return import_client("postgres", "psycopg")


def _adbc():
    return import_client("postgres", "adbc_driver_postgresql.dbapi")


def _columns_ddl(schema: Schema, seq: bool = False) -> str:
    parts = [f"{quote(c.name)} {_PG_TYPES[c.ddb_type]}" for c in schema.columns]
    if seq:
        parts.append(f"{quote(SEQ)} integer NOT NULL")
    return ", ".join(parts)


def copy_csv(frame: pd.DataFrame, schema: Schema, seq_start: int | None = None) -> bytes:
    """A frame as the CSV ``COPY ... FROM STDIN (FORMAT csv)`` loads (pyarrow's writer: ISO
    timestamps, empty unquoted fields as NULL), ``_seq`` from ``seq_start``."""
    table = arrow_table(frame, arrow_schema(schema))
    columns = []
    for column, values in zip(schema.columns, table.columns):
        if column.ddb_type == "DATE":
            values = values.cast(pa.date32())
        elif column.ddb_type in _TEMPORAL:
            values = values.cast(pa.timestamp("us"))
        columns.append(values)
    names = list(schema.names)
    if seq_start is not None:
        columns.append(pa.array(np.arange(seq_start, seq_start + len(table), dtype=np.int32)))
        names.append(SEQ)
    out = io.BytesIO()
    pacsv.write_csv(pa.Table.from_arrays(columns, names=names), out,
                    pacsv.WriteOptions(include_header=False, quoting_style="needed"))
    return out.getvalue()


_READ_TYPES = {"BOOL": pa.bool_(), "CHAR": pa.int8(), "SHORT": pa.int16(), "INT": pa.int32(), "LONG": pa.int64(),
               "FLOAT": pa.float32(), "DOUBLE": pa.float64(), "SYMBOL": pa.large_string(),
               "STRING": pa.large_string()}


def _arrow_read_type(ddb_type: str) -> pa.DataType:
    """The Arrow type a column is parsed into (temporal: datetime64[ns], as the datasets hold them)."""
    return pa.timestamp("ns") if ddb_type in _TEMPORAL else _READ_TYPES[ddb_type]


def sql_literal(value: Any) -> str | None:
    """``value`` as a plain SQL literal (``DATE '2007-08-23'``, ``'AAPL'``, ``42``), as a user
    writes one into a query; None for a value it leaves to psycopg (a backslash in text, which
    ``standard_conforming_strings`` decides; a type not listed). A psycopg cursor made to quote each
    operation's two values cost ~0.15 ms of a 4 ms slice (measured against the practitioner's
    literal SQL, interleaved in one process)."""
    if value is None:
        return "NULL"
    if isinstance(value, (bool, np.bool_)):
        return "true" if value else "false"
    if isinstance(value, (int, np.integer)):
        return str(int(value))
    if isinstance(value, str):
        return None if "\\" in value or "\x00" in value else "'" + value.replace("'", "''") + "'"
    if isinstance(value, dt.datetime) and value.tzinfo is None:
        return f"TIMESTAMP '{value.isoformat(sep=' ')}'"
    if isinstance(value, dt.date) and not isinstance(value, dt.datetime):
        return f"DATE '{value.isoformat()}'"
    return None


COPY_BINARY_HEADER = 19          # PGCOPY signature (11), flags (4), header extension length (4)
COPY_BINARY_TRAILER = 2          # the field count -1


def copy_binary_bytes(table: pa.Table) -> int:
    """The size of the ``COPY ... TO STDOUT (FORMAT binary)`` stream that carried ``table`` (as
    ADBC received it, before any cast): the header, per row a 16-bit field count, per field a
    32-bit length then the value (text: its UTF-8 bytes; NULL: nothing; a boolean: one byte)."""
    import pyarrow.compute as pc
    size = COPY_BINARY_HEADER + COPY_BINARY_TRAILER + table.num_rows * (2 + 4 * table.num_columns)
    for column in table.columns:
        kind = column.type
        valid = len(column) - column.null_count
        if pa.types.is_string(kind) or pa.types.is_large_string(kind) or pa.types.is_binary(kind):
            size += int(pc.sum(pc.binary_length(column)).as_py() or 0)
        elif pa.types.is_boolean(kind):
            size += valid
        else:
            size += valid * (kind.bit_width // 8)
    return size


def read_types(table: pa.Table, types: list[pa.DataType]) -> pa.Table:
    """ADBC's columns in the dataset's read types, cast only where pandas would otherwise differ
    (a CHAR's ``smallint`` to int8): text stays as it came, and dates and microsecond timestamps
    are left to ``frame_from_arrow``, whose ``to_pandas`` gives them as ``datetime64[ns]``."""
    for index, (field, want) in enumerate(zip(table.schema, types)):
        same = (field.type == want or (pa.types.is_string(field.type) and pa.types.is_large_string(want))
                or (pa.types.is_temporal(field.type) and pa.types.is_timestamp(want)))
        if not same:
            table = table.set_column(index, pa.field(field.name, want), table.column(index).cast(want))
    return table


# DolphinDB's text style (workloads.datasets.csv_files) to the table's types
_FROM_TEXT = {
    "DATE": "to_date({c}, 'YYYY.MM.DD')",
    "SECOND": "('1970-01-01 ' || {c})::timestamp",
    "TIME": "('1970-01-01 ' || {c})::timestamp",
    "TIMESTAMP": "(replace(substr({c}, 1, 10), '.', '-') || ' ' || substr({c}, 12))::timestamp",
    "CHAR": "ascii({c})::smallint",
}
# ... and back as DuckDB's COPY writes them
_TO_TEXT = {
    "DATE": "to_char({c}, 'YYYY-MM-DD')",
    "SECOND": "to_char({c}, 'HH24:MI:SS')",
    "TIME": "to_char({c}, 'HH24:MI:SS.MS')",
    "TIMESTAMP": "to_char({c}, 'YYYY-MM-DD HH24:MI:SS.MS')",
    "CHAR": "chr({c})",
}


class _Server:
    """One psycopg connection (autocommit) and its errors as TargetError naming the server."""

    def __init__(self, config: dict[str, Any]):
        self.host = str(config.get("host") or "").strip()
        if not self.host:
            raise TargetError("PostgreSQL needs a host (the server's address)")
        try:
            self.port = int(config.get("port") or DEFAULT_PORT)
        except (TypeError, ValueError):
            raise TargetError(f"PostgreSQL port {config.get('port')!r} is not a number") from None
        self.user = str(config.get("user") or DEFAULT_USER)
        self.password = str(config.get("password") or "")
        self.database = str(config.get("database") or DEFAULT_DATABASE)
        self.timeout = float(config.get("connect_timeout") or 10.0)
        self.address = f"{self.host}:{self.port}"
        self._conn = None
        self._arrow = None          # the ADBC connection reads go through (opened on first read)

    def _connect(self, database: str):
        psycopg = _psycopg()
        try:
            conn = psycopg.connect(host=self.host, port=self.port, user=self.user, password=self.password,
                                   dbname=database, connect_timeout=max(1, int(self.timeout)), autocommit=True,
                                   application_name="tickbench")
        except psycopg.Error as exc:
            raise self.error(exc) from None
        from psycopg.types.numeric import FloatLoader
        conn.adapters.register_loader("numeric", FloatLoader)     # avg() of integers: a float, as elsewhere
        return conn

    def conn(self, create: bool = False):
        if self._conn is None or self._conn.closed:
            try:
                self._conn = self._connect(self.database)
            except TargetError as exc:
                if not (create and "does not exist" in str(exc)):
                    raise
                with self._connect("postgres") as admin:
                    self.call(admin.execute, f"CREATE DATABASE {quote(self.database)}")
                self._conn = self._connect(self.database)
        return self._conn

    def uri(self) -> str:
        """The libpq URI of this server and database (ADBC connects with one)."""
        from urllib.parse import quote as escape
        host = f"[{self.host}]" if ":" in self.host else self.host
        return (f"postgresql://{escape(self.user, safe='')}:{escape(self.password, safe='')}@{host}:{self.port}/"
                f"{escape(self.database, safe='')}?connect_timeout={max(1, int(self.timeout))}"
                "&application_name=tickbench")

    def inline(self, sql: str, params: Any = None) -> str:
        """The statement with its parameters written in as literals (module doc: Reads: ADBC reads
        through COPY only when nothing is bound): the literals a practitioner types
        (``sql_literal``); a value those do not cover is quoted by psycopg for this connection."""
        if not params:
            return sql
        if isinstance(params, dict):
            literals = {name: sql_literal(value) for name, value in params.items()}
            if None not in literals.values():
                return sql % literals
        psycopg = _psycopg()
        return self.call(lambda: psycopg.ClientCursor(self.conn()).mogrify(sql, params))

    def arrow(self, sql: str) -> pa.Table:
        """The statement's result as Arrow through ADBC's PostgreSQL driver (``fetch_arrow_table``)."""
        dbapi = _adbc()
        try:
            if self._arrow is None:
                self._arrow = dbapi.connect(self.uri(), autocommit=True)
            with self._arrow.cursor() as cur:
                cur.execute(sql)
                return cur.fetch_arrow_table()
        except dbapi.Error as exc:
            raise self.error(exc) from None

    def error(self, exc: BaseException) -> TargetError:
        text = str(exc)
        low = text.lower()
        where = f"PostgreSQL at {self.address}"
        if "password authentication failed" in low or "no password supplied" in low:
            return TargetError(f"{where}: authentication failed for user {self.user!r} (wrong password, or no such user)")
        if "refused" in low:
            return TargetError(f"{where}: connection refused (no server listening there)")
        if "timeout" in low or "timed out" in low:
            return TargetError(f"{where}: no answer within {self.timeout:g} s")
        if "could not translate host name" in low:
            return TargetError(f"{where}: cannot resolve host {self.host!r}")
        if "no space left" in low or "could not extend file" in low:
            return TargetError(f"{where}: the server's disk is full ({_first_line(text)})")
        if "no pg_hba.conf entry" in low:
            return TargetError(f"{where}: the server refuses this client (pg_hba.conf): {_first_line(text)}")
        return TargetError(f"{where}: {_first_line(text)}")

    def call(self, fn, *args, **kwargs):
        psycopg = _psycopg()
        try:
            return fn(*args, **kwargs)
        except psycopg.Error as exc:
            raise self.error(exc) from None

    def execute(self, sql: str, params: Any = None) -> int:
        cur = self.call(self.conn().execute, sql, params)
        return max(int(cur.rowcount), 0)

    def rows(self, sql: str, params: Any = None) -> list[dict[str, Any]]:
        def fetch():
            cur = self.conn().execute(sql, params)
            names = [d.name for d in cur.description]
            return [dict(zip(names, row)) for row in cur.fetchall()]
        return self.call(fetch)

    def copy_in(self, sql: str, data: bytes) -> None:
        def run():
            with self.conn().cursor() as cur, cur.copy(sql) as copy:
                copy.write(data)
        self.call(run)

    def copy_out(self, sql: str, params: Any = None, into=None) -> bytearray | int:
        """COPY ... TO STDOUT: the bytes (or, with ``into``, written there: the byte count)."""
        def run():
            buffer, size = bytearray(), 0
            with self.conn().cursor() as cur, cur.copy(sql, params) as copy:
                for block in copy:
                    if into is None:
                        buffer += block
                    else:
                        into.write(block)
                        size += len(block)
            return buffer if into is None else size
        return self.call(run)

    def close(self) -> None:
        for conn in (self._conn, self._arrow):
            if conn is not None:
                with suppress(Exception):   # closing must not hide why the run ended
                    conn.close()
        self._conn = self._arrow = None


class PostgresTarget(Target):
    kind = "postgres"
    read_phases = ("server", "transfer", "decode")
    probed_ops = frozenset({"read_day", "read_slice", "minute_bars", "spread_by_minute"})
    query_dialect = "postgres"

    def __init__(self, config: dict[str, Any]):
        super().__init__(config)
        self.db = _Server(self.config)
        self._info: DatasetInfo | None = None

    # --- names ---------------------------------------------------------------------------
    def table(self, layout: Layout) -> str:
        return table_name(layout.dataset, layout.scale)

    def import_table(self, layout: Layout) -> str:
        return self.table(layout) + "_import"

    def minute_table(self, layout: Layout) -> str:
        return self.table(layout) + "_minute"

    @staticmethod
    def partition(table: str, day: dt.date) -> str:
        return f"{table}_p{day.strftime('%Y%m%d')}"

    @property
    def node(self) -> str:
        return self.db.address

    def _dataset_info(self, layout: Layout) -> DatasetInfo:
        if self._info is None or self._info.name != layout.dataset:
            self._info = _get_dataset(layout.dataset).info
        return self._info

    # --- parent side -----------------------------------------------------------------------
    def prepare(self, dataset: str, scale: Scale, strings: StringMode,
                progress: ProgressCallback | None = None) -> Layout:
        strings = StringMode.parse(strings)
        ds = _get_dataset(dataset)
        info: DatasetInfo = ds.info
        table = table_name(dataset, scale)
        days = list(ds.trading_days(scale))
        scale_json = json.dumps({**asdict(scale), "content": ds.content_id}, sort_keys=True)
        db = self.db
        db.conn(create=True)
        db.execute(f"CREATE TABLE IF NOT EXISTS {quote(MANIFEST_TABLE)} (table_name text PRIMARY KEY, "
                   "format integer, dataset text, scale text, days text, keys_sample text, schema text, "
                   "versions text, complete boolean, created timestamptz)")
        found = db.rows(f"SELECT format, scale, days, keys_sample, complete FROM {quote(MANIFEST_TABLE)} "
                        "WHERE table_name = %s", (table,))
        row = found[0] if found else None
        compatible = row is not None and row["format"] == LAYOUT_FORMAT and row["scale"] == scale_json
        entries = {e["date"]: e for e in json.loads(row["days"])} if compatible else {}
        main = quote(table)
        if not compatible:
            db.execute(f"DROP TABLE IF EXISTS {main} CASCADE")
        day_col = quote(info.date_column)
        db.execute(f"CREATE TABLE IF NOT EXISTS {main} ({_columns_ddl(info.schema, seq=True)}) "
                   f"PARTITION BY RANGE ({day_col})")
        db.execute(f"CREATE INDEX IF NOT EXISTS {quote(table + '_key_time')} ON {main} ({self._index_columns(info)})")
        for scratch in (table + "_append", table + "_import"):
            self._ensure_table(info, scratch)
        self._ensure_side_tables(ds, scale, table)
        keys = [str(k) for k in ds.keys(scale)[:KEYS_SAMPLE]]
        if compatible and row["complete"] and sorted(entries) == [d.isoformat() for d in days] and \
                all(self._partition_rows(table, d) == entries[d.isoformat()]["rows"] for d in days):
            return self._layout(dataset, scale, strings, entries, json.loads(row["keys_sample"]), table, True)
        manifest = {"dataset": dataset, "scale": scale_json, "keys_sample": json.dumps(keys),
                    "schema": json.dumps([[c.name, c.ddb_type] for c in info.schema.columns]),
                    "versions": json.dumps(library_versions())}
        expected = dict(zip(days, ds.day_rows(scale)))
        total, done = sum(expected.values()), 0
        for index, day in enumerate(days):
            entry = entries.get(day.isoformat())
            if entry and self._partition_rows(table, day) == entry["rows"] == expected[day]:
                done += entry["rows"]
                continue
            rows = self._load_day(ds, index, day, scale, table, done, total, progress)
            entries[day.isoformat()] = {"date": day.isoformat(), "rows": rows}
            self._write_manifest(table, manifest, entries, complete=False)
            done += rows
            if progress is not None:
                progress(min(done, total), total, f"{day.isoformat()} loaded into {table}")
        wanted = {d.isoformat() for d in days}
        entries = {k: v for k, v in entries.items() if k in wanted}
        self._write_manifest(table, manifest, entries, complete=True)
        return self._layout(dataset, scale, strings, entries, keys, table, False)

    @staticmethod
    def _index_columns(info: DatasetInfo) -> str:
        return ", ".join(quote(c) for c in dict.fromkeys((info.key_column, info.time_column, SEQ)))

    def _partition_rows(self, table: str, day: dt.date) -> int | None:
        part = self.partition(table, day)
        if not self.db.rows("SELECT 1 FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid "
                            "WHERE c.relname = %s AND c.relnamespace = current_schema()::regnamespace", (part,)):
            return None
        return int(self.db.rows(f"SELECT count(*) AS n FROM {quote(part)}")[0]["n"])

    def _load_day(self, ds, index: int, day: dt.date, scale: Scale, table: str, rows_done: int, total: int,
                  progress: ProgressCallback | None) -> int:
        """The day into a table of its own, attached as its partition once loaded (index built then)."""
        info = ds.info
        part = quote(self.partition(table, day))
        db = self.db
        db.execute(f"DROP TABLE IF EXISTS {part}")
        db.execute(f"CREATE TABLE {part} ({_columns_ddl(info.schema, seq=True)})")
        names = ", ".join(quote(n) for n in [*info.schema.names, SEQ])
        chunk_rows = int(self.config.get("chunk_rows") or DEFAULT_CHUNK_ROWS)
        rows, last = 0, None
        for chunk in ds.generate_day(index, scale, StringMode.ARROW, chunk_rows):
            times = chunk[info.time_column]
            if len(chunk) and (not times.is_monotonic_increasing or (last is not None and times.iloc[0] < last)):
                raise TargetError(f"{info.name}: day {index + 1} is not in time order; the arrival ordinal "
                                  f"({SEQ}) must follow time order")
            last = times.iloc[-1] if len(chunk) else last
            db.copy_in(f"COPY {part} ({names}) FROM STDIN (FORMAT csv)", copy_csv(chunk, info.schema, rows))
            rows += len(chunk)
            if progress is not None:
                progress(min(rows_done + rows, total), total, f"loading day {index + 1} into {table}")
        # physically in index order (module doc: Layout): the index first, CLUSTER rewrites the heap
        # in its order; ATTACH then adopts this index as the partition's part of the table's index
        db.execute(f"CREATE INDEX {quote(self.partition(table, day) + '_key_time')} ON {part} "
                   f"({self._index_columns(info)})")
        db.execute(f"CLUSTER {part} USING {quote(self.partition(table, day) + '_key_time')}")
        start = dt.datetime.combine(day, dt.time())
        lo, hi = (day, day + dt.timedelta(days=1)) if info.schema.column(info.date_column).ddb_type == "DATE" \
            else (start, start + dt.timedelta(days=1))
        db.execute(f"ALTER TABLE {quote(table)} ATTACH PARTITION {part} FOR VALUES FROM "
                   f"({literal(str(lo))}) TO ({literal(str(hi))})")
        db.execute(f"ANALYZE {part}")
        return rows

    def _ensure_table(self, info: DatasetInfo, name: str) -> None:
        """A scratch table with the dataset's columns (appends, imports), with the same index."""
        self.db.execute(f"CREATE TABLE IF NOT EXISTS {quote(name)} ({_columns_ddl(info.schema)})")
        keys = ", ".join(quote(c) for c in dict.fromkeys((info.key_column, info.time_column)))
        self.db.execute(f"CREATE INDEX IF NOT EXISTS {quote(name + '_key_time')} ON {quote(name)} ({keys})")

    def _ensure_side_tables(self, ds, scale: Scale, table: str) -> None:
        for name, schema in side_tables(ds).items():
            side = quote(f"{table}_{name}")
            frame = getattr(ds, f"{name}_frame")(scale)
            self.db.execute(f"CREATE TABLE IF NOT EXISTS {side} ({_columns_ddl(schema)})")
            if int(self.db.rows(f"SELECT count(*) AS n FROM {side}")[0]["n"]) == len(frame):
                continue
            self.db.execute(f"TRUNCATE {side}")
            self.db.copy_in(f"COPY {side} FROM STDIN (FORMAT csv)", copy_csv(frame, schema))

    def _write_manifest(self, table: str, manifest: dict[str, Any], entries: dict[str, dict], complete: bool) -> None:
        days = json.dumps(sorted(entries.values(), key=lambda e: e["date"]))
        self.db.execute(
            f"INSERT INTO {quote(MANIFEST_TABLE)} VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, now()) "
            "ON CONFLICT (table_name) DO UPDATE SET format = EXCLUDED.format, dataset = EXCLUDED.dataset, "
            "scale = EXCLUDED.scale, days = EXCLUDED.days, keys_sample = EXCLUDED.keys_sample, "
            "schema = EXCLUDED.schema, versions = EXCLUDED.versions, complete = EXCLUDED.complete, "
            "created = EXCLUDED.created",
            (table, LAYOUT_FORMAT, manifest["dataset"], manifest["scale"], days, manifest["keys_sample"],
             manifest["schema"], manifest["versions"], complete))

    def _layout(self, dataset, scale, strings, entries, keys, table, reused) -> Layout:
        ordered = sorted(entries.values(), key=lambda e: e["date"])
        return Layout(dataset=dataset, scale=scale, strings=strings,
                      days=tuple(dt.date.fromisoformat(e["date"]) for e in ordered), keys_sample=tuple(keys),
                      rows=sum(e["rows"] for e in ordered),
                      footprint_bytes=self._tables_bytes([table] + self._side_names(dataset, table)),
                      reused=reused, location=f"{self.db.address}/{self.db.database}.{table}")

    @staticmethod
    def _side_names(dataset: str, table: str) -> list[str]:
        return [f"{table}_{name}" for name in side_tables(_get_dataset(dataset))]

    def _relations(self, table: str) -> list[str]:
        """The table and its partitions (a plain table: itself), those that exist."""
        return [r["name"] for r in self.db.rows(
            "SELECT c.relname AS name FROM pg_class c WHERE c.relname = %s AND c.relnamespace = "
            "current_schema()::regnamespace UNION ALL SELECT c.relname FROM pg_inherits i "
            "JOIN pg_class c ON c.oid = i.inhrelid JOIN pg_class p ON p.oid = i.inhparent "
            "WHERE p.relname = %s AND p.relnamespace = current_schema()::regnamespace", (table, table))]

    def _tables_bytes(self, tables: list[str]) -> int:
        total = 0
        for table in tables:
            for name in self._relations(table):
                total += int(self.db.rows("SELECT pg_total_relation_size(%s::regclass) AS b", (quote(name),))[0]["b"])
        return total

    def footprint(self, layout: Layout) -> int:
        table = self.table(layout)
        return self._tables_bytes([table] + self._side_names(layout.dataset, table))

    def footprint_detail(self, layout: Layout, table: str = "") -> Footprint:
        """``pg_total_relation_size`` of the table's partitions (heap, TOAST, indexes); per column
        ``sum(pg_column_size(col))``: the stored datums (``_seq`` included, it is stored)."""
        name = self.import_table(layout) if table == IMPORT_TABLE else self.table(layout)
        total = self._tables_bytes([name])
        cols = [r["name"] for r in self.db.rows(
            "SELECT attname AS name FROM pg_attribute WHERE attrelid = %s::regclass AND attnum > 0 "
            "AND NOT attisdropped ORDER BY attnum", (quote(name),))]
        sums = self.db.rows("SELECT count(*) AS n, " + ", ".join(
            f"coalesce(sum(pg_column_size({quote(c)})), 0) AS {quote('c_' + c)}" for c in cols)
            + f" FROM {quote(name)}")[0]
        if not int(sums["n"]):
            return Footprint(bytes=0, method=f"{name} has no rows")
        return Footprint(bytes=total, columns={c: int(sums["c_" + c]) for c in cols}, replicas=1,
                         method="pg_total_relation_size of each partition (heap + TOAST + indexes); "
                                "per column sum(pg_column_size(column)), stored datums only")

    def describe(self) -> dict[str, Any]:
        info: dict[str, Any] = {
            "kind": self.kind, "mode": "server", "host": self.db.host, "port": self.db.port, "user": self.db.user,
            "database": self.db.database, "local_engine": bool(self.config.get("local_engine")),
            "versions": library_versions(),
            "read_path": READ_PATH, "order": ORDER,
            "phases": "measured: decode only (the COPY is one libpq exchange); probes: server (EXPLAIN ANALYZE "
                      "Execution Time of the same SELECT, result kept on the server) / transfer (COPY wall time "
                      "minus server) / decode",
            "cold_cache": "between a cold step's rounds: the layout's relations evicted from the shared buffers "
                          "(pg_buffercache_evict_relation, PostgreSQL 18, superuser); local engine: also the OS "
                          "page cache of their files"}
        from importlib import metadata
        try:
            info["adbc_driver_postgresql"] = metadata.version("adbc-driver-postgresql")
        except metadata.PackageNotFoundError:
            info["adbc_driver_postgresql"] = "not installed (reads need it: tickbench[postgres])"
        try:
            import psycopg
            info["psycopg"] = psycopg.__version__
            info["libpq"] = psycopg.pq.version()
            info["psycopg_impl"] = psycopg.pq.__impl__
            said = self.db.rows("SELECT current_setting('server_version') AS v, version() AS full_version")[0]
            info["server_version"], info["server_version_full"] = said["v"], said["full_version"]
            info["server_settings"] = self.server_settings()
            info["shared_buffers"] = info["server_settings"]["shared_buffers"]
        except Exception as exc:  # a description must never stop a run
            info["error"] = _first_line(exc)
        return info

    def server_settings(self) -> dict[str, str]:
        """The settings in force that size the server's reads (``SHOW``'s text, e.g. ``'6026MB'``),
        asked of the server itself: stored with each run (``describe``)."""
        rows = self.db.rows("SELECT name, current_setting(name) AS value FROM pg_settings WHERE name = ANY(%s)",
                            (list(SETTINGS),))
        said = {r["name"]: r["value"] for r in rows}
        return {name: said[name] for name in SETTINGS if name in said}

    def _relation_files(self, layout: Layout) -> list[Path]:
        data = self.db.rows("SELECT current_setting('data_directory') AS d")[0]["d"]
        files: list[Path] = []
        table = self.table(layout)
        for name in self._relations(table):
            for rel in self.db.rows(
                    "SELECT pg_relation_filepath(c.oid) AS f FROM pg_class c WHERE c.oid = %s::regclass "
                    "OR c.oid IN (SELECT indexrelid FROM pg_index WHERE indrelid = %s::regclass)",
                    (quote(name), quote(name))):
                if rel["f"]:
                    base = Path(data) / rel["f"]
                    files.extend(p for p in base.parent.glob(base.name + "*") if p.is_file())
        return files

    def data_files(self, layout: Layout) -> list[Path]:
        if not self.config.get("local_engine"):
            return []
        try:
            return self._relation_files(layout)
        except TargetError:
            return []

    def drop_cache(self, layout: Layout) -> list[str]:
        """The layout's pages out of the shared buffers, and (local engine) out of the OS cache."""
        applied = self._evict_shared_buffers(layout)
        files = self.data_files(layout)
        return applied + (drop_file_cache(files, system_wide=False) if files else [])

    def _evict_shared_buffers(self, layout: Layout) -> list[str]:
        """``pg_buffercache_evict_relation`` on every relation of the layout and its indexes; [] where
        the server lacks it (before 18, no extension, not a superuser) or a buffer stayed pinned."""
        try:
            self.db.execute("CREATE EXTENSION IF NOT EXISTS pg_buffercache")
            skipped = 0
            for name in self._relations(self.table(layout)):
                for row in self.db.rows(
                        "SELECT e.buffers_skipped AS s FROM pg_class c, pg_buffercache_evict_relation(c.oid) e "
                        "WHERE c.oid = %s::regclass OR c.oid IN (SELECT indexrelid FROM pg_index "
                        "WHERE indrelid = %s::regclass)", (quote(name), quote(name))):
                    skipped += int(row["s"] or 0)
        except TargetError:
            return []
        return ["pg_buffercache_evict_relation (shared buffers)"] if skipped == 0 else []

    def clear_table(self, layout: Layout, table: str = "") -> None:
        if table == "minute":
            name = self.minute_table(layout)
        elif table == IMPORT_TABLE:
            name = self.import_table(layout)
        else:
            name = table or self.table(layout) + "_append"
        if self.db.rows("SELECT to_regclass(%s) AS r", (quote(name),))[0]["r"] is not None:
            self.db.execute(f"TRUNCATE {quote(name)}")

    # --- worker side -----------------------------------------------------------------------
    def open(self, layout: Layout, worker: int = 0) -> None:
        self._dataset_info(layout)
        self.db.conn()

    def close(self) -> None:
        self.db.close()

    def _check_day(self, layout: Layout, day: dt.date) -> None:
        if day not in layout.days:
            span = f"{layout.days[0]} .. {layout.days[-1]}" if layout.days else "none"
            raise ValueError(f"{day} is not a trading day of this layout (days: {span})")

    def _day_where(self, info: DatasetInfo, day: dt.date) -> tuple[str, dict[str, Any]]:
        column = info.schema.column(info.date_column)
        if column.ddb_type == "DATE":
            return f"{quote(column.name)} = %(day)s", {"day": day}
        start = dt.datetime.combine(day, dt.time())
        return (f"{quote(column.name)} >= %(day_start)s AND {quote(column.name)} < %(day_end)s",
                {"day_start": start, "day_end": start + dt.timedelta(days=1)})

    def _arrow_select(self, sql: str, params: dict[str, Any], names: list[str], types: list[pa.DataType],
                      strings: StringMode, schema: Schema | None = None) -> OpResult:
        """The user's call: the SELECT through ADBC into Arrow, then pandas (module doc: Reads, Phases)."""
        sql = self.db.inline(sql, params)
        server_s = None
        if self.probing:
            plan = self.db.rows(f"EXPLAIN (ANALYZE, TIMING OFF, FORMAT JSON) {sql}")[0]
            plan = list(plan.values())[0]
            plan = json.loads(plan) if isinstance(plan, str) else plan
            server_s = float(plan[0]["Execution Time"]) / 1000.0
        t0 = _now()
        table = self.db.arrow(sql)
        t1 = _now()
        frame = frame_from_arrow(read_types(table.rename_columns(names), types), strings)
        t2 = _now()
        wire = {"count_wire": lambda: copy_binary_bytes(table)}
        if server_s is None:
            return OpResult(rows=len(frame), phases={"decode": t2 - t1}, frame=frame, schema=schema,
                            node=self.node, **wire)
        fetch = t1 - t0
        on_server = min(server_s, fetch)
        return OpResult(rows=len(frame), phases={"server": on_server, "transfer": fetch - on_server,
                                                 "decode": t2 - t1},
                        frame=frame, schema=schema, node=self.node, **wire,
                        extra={"server_time": "EXPLAIN (ANALYZE, TIMING OFF) Execution Time, run just before"})

    def _schema_read(self, layout: Layout, where: str, params: dict[str, Any], schema: Schema | None = None) -> OpResult:
        """The rows in stored order (no ORDER BY: each partition is CLUSTERed on its index), every
        column of the schema or of ``schema`` (a part of it)."""
        info = self._dataset_info(layout)
        schema = schema or info.schema
        cols = ", ".join(quote(n) for n in schema.names)
        sql = f"SELECT {cols} FROM {quote(self.table(layout))} WHERE {where}"
        return self._arrow_select(sql, params, list(schema.names),
                                  [_arrow_read_type(c.ddb_type) for c in schema.columns], layout.strings, schema)

    def read_day(self, layout: Layout, day: dt.date, columns: tuple[str, ...] | None = None) -> OpResult:
        self._check_day(layout, day)
        info = self._dataset_info(layout)
        where, params = self._day_where(info, day)
        return self._schema_read(layout, where, params, column_schema(info.schema, columns, layout.dataset))

    def read_slice(self, layout: Layout, day: dt.date, key: str) -> OpResult:
        self._check_day(layout, day)
        info = self._dataset_info(layout)
        where, params = self._day_where(info, day)
        params["key"] = key_value(info.schema.column(info.key_column), key)
        return self._schema_read(layout, f"{where} AND {quote(info.key_column)} = %(key)s", params)

    def minute_bars(self, layout: Layout, day: dt.date, key: str) -> OpResult:
        self._check_day(layout, day)
        info = self._dataset_info(layout)
        bid, ask = price_columns(info)
        where, params = self._day_where(info, day)
        params["key"] = key_value(info.schema.column(info.key_column), key)
        t = quote(info.time_column)
        mid = f"({quote(bid)} + {quote(ask)}) / 2"
        # first/last quote of a minute by arrival (module doc): ordered array_agg, PostgreSQL's
        # idiom where other engines have first/last aggregates
        sql = (f"SELECT date_trunc('minute', {t}) AS minute, (array_agg({mid} ORDER BY {quote(SEQ)}))[1] AS open, "
               f"max({mid}) AS high, min({mid}) AS low, (array_agg({mid} ORDER BY {quote(SEQ)} DESC))[1] AS close "
               f"FROM {quote(self.table(layout))} WHERE {where} AND {quote(info.key_column)} = %(key)s "
               "GROUP BY 1 ORDER BY 1")
        return self._arrow_select(sql, params, ["minute", "open", "high", "low", "close"],
                                 [pa.timestamp("ns")] + [pa.float64()] * 4, StringMode.ARROW)

    def append(self, layout: Layout, frame: pd.DataFrame, table: str = "") -> OpResult:
        """Rows into ``<table>_append`` (or ``table``, created on first use) with ``COPY FROM
        STDIN (FORMAT csv)``: ``decode`` = DataFrame -> CSV bytes, ``query`` = the COPY."""
        info = self._dataset_info(layout)
        target = table or self.table(layout) + "_append"
        if table:
            self._ensure_table(info, target)
        t0 = _now()
        data = copy_csv(frame, info.schema)
        t1 = _now()
        self.db.copy_in(f"COPY {quote(target)} FROM STDIN (FORMAT csv)", data)
        t2 = _now()
        return OpResult(rows=len(frame), nbytes=rows_bytes(len(frame), info.schema),
                        phases={"decode": t1 - t0, "query": t2 - t1}, wire_bytes=len(data), node=self.node)

    def row_count(self, layout: Layout, table: str = "") -> int:
        return int(self.db.rows(f"SELECT count(*) AS n FROM {quote(table or self.table(layout))}")[0]["n"])

    def sql_rows(self, sql: str, params: Any = None) -> list[dict[str, Any]]:
        return self.db.rows(sql, params)

    def appended_rows(self, layout: Layout, table: str = "") -> int:
        return self.row_count(layout, table or self.table(layout) + "_append")

    # --- reports 001 and 004 -----------------------------------------------------------------
    def import_csv(self, layout: Layout, path: Path, day: dt.date) -> OpResult:
        """PostgreSQL's COPY of the file's bytes into a temporary all-text table, then one INSERT
        converting DolphinDB's text style into ``<table>_import`` (module doc)."""
        info = self._dataset_info(layout)
        staging = quote("_tickbench_csv")
        text_cols = ", ".join(f"{quote(c.name)} text" for c in info.schema.columns)
        convert = ", ".join(_FROM_TEXT.get(c.ddb_type, "{c}::" + _PG_TYPES[c.ddb_type]).format(c=quote(c.name))
                            for c in info.schema.columns)
        conn = self.db.conn()
        data = Path(path).read_bytes()

        def load() -> int:
            with conn.transaction():
                conn.execute(f"CREATE TEMP TABLE IF NOT EXISTS {staging} ({text_cols}) ON COMMIT DELETE ROWS")
                with conn.cursor() as cur, cur.copy(f"COPY {staging} FROM STDIN (FORMAT csv, HEADER)") as copy:
                    copy.write(data)
                cur = conn.execute(f"INSERT INTO {quote(self.import_table(layout))} SELECT {convert} FROM {staging}")
                return int(cur.rowcount)
        t0 = _now()
        rows = self.db.call(load)
        t1 = _now()
        return OpResult(rows=rows, nbytes=rows_bytes(rows, info.schema), wire_bytes=len(data),
                        phases={"query": t1 - t0}, extra={"queryable_s": 0.0}, node=self.node)

    def export_csv(self, layout: Layout, day: dt.date, path: Path) -> OpResult:
        """``COPY (SELECT ...) TO STDOUT (FORMAT csv, HEADER)`` streamed into ``path``."""
        self._check_day(layout, day)
        info = self._dataset_info(layout)
        where, params = self._day_where(info, day)
        cols = ", ".join(_TO_TEXT.get(c.ddb_type, "{c}").format(c=quote(c.name)) + f" AS {quote(c.name)}"
                         for c in info.schema.columns)
        table = quote(self.table(layout))
        sql = f"COPY (SELECT {cols} FROM {table} WHERE {where}) TO STDOUT (FORMAT csv, HEADER)"  # stored order
        path = Path(path)
        from workloads.targets.storage import raising_disk_full
        with raising_disk_full(path.parent), open(path, "wb") as out:
            size = self.db.copy_out(sql, params, into=out)

        def count() -> int:
            return int(self.db.rows(f"SELECT count(*) AS n FROM {table} WHERE {where}", params)[0]["n"])
        return OpResult(rows=None, count_rows=count, schema=info.schema, wire_bytes=size, node=self.node)

    def run_query(self, layout: Layout, query, values: dict[str, Any]) -> OpResult:
        """The suite's ``postgres`` text, tables substituted, parameters bound by psycopg; the
        result fetched by a cursor (``decode``: rows -> DataFrame)."""
        text = query.text(self.query_dialect)
        if text is None:
            raise NotSupported(f"query {query.id} has no PostgreSQL text")
        table = self.table(layout)
        tables = {"quotes": quote(table), "readings": quote(table), "info": quote(f"{table}_info")}
        sql = _TABLE_PLACEHOLDER.sub(lambda m: tables[m.group(1)], text)
        used = set(_PARAMETER.findall(sql))
        params = {k: v for k, v in values.items() if k in used}

        def fetch():
            cur = self.db.conn().execute(sql, params)
            return [d.name for d in cur.description], cur.fetchall()
        t0 = _now()
        names, rows = self.db.call(fetch)
        t1 = _now()
        frame = pd.DataFrame.from_records(rows, columns=names, coerce_float=True)
        for name in names:          # dates and timestamps as datetime64, as the other targets give them
            if frame[name].dtype == object and len(frame) and isinstance(frame[name].dropna().iloc[0]
                                                                          if frame[name].notna().any() else None,
                                                                          (dt.date, dt.datetime)):
                frame[name] = pd.to_datetime(frame[name])
        t2 = _now()
        return OpResult(rows=len(frame), phases={"decode": t2 - t1}, frame=frame, node=self.node,
                        extra={"fetch_s": t1 - t0})

    # --- report 003's computations, in SQL (definitions: workloads/targets/quotes.py) -----------
    def _quote_sql(self, layout: Layout, days) -> tuple[QuoteColumns, str, dict[str, Any]]:
        try:
            cols = quote_columns(self._dataset_info(layout))
            first, last = day_span(layout.days, days)
        except ValueError as exc:
            raise TargetError(f"{layout.dataset}: {exc}") from None
        return cols, f"{quote(cols.date)} BETWEEN %(first)s AND %(last)s", {"first": first, "last": last}

    @staticmethod
    def _seed_filter(cols: QuoteColumns) -> str:
        t, b, a = quote(cols.time), quote(cols.bid), quote(cols.ask)
        lo = SESSION_OPEN.strftime("%H:%M:%S")
        hi = SESSION_CLOSE.strftime("%H:%M:%S")
        return (f"date_trunc('second', {t})::time BETWEEN '{lo}' AND '{hi}' AND {a} > {b} AND {b} > 0 "
                f"AND {a} > 0 AND {a} / {b} < {MAX_ASK_BID_RATIO}")

    def spread_by_minute(self, layout: Layout, days=()) -> OpResult:
        cols, where, params = self._quote_sql(layout, days)
        t, b, a = quote(cols.time), quote(cols.bid), quote(cols.ask)
        sql = (f"SELECT date_trunc('minute', {t}) AS minute, avg(({a} - {b}) / ({a} + {b}) * 2) AS \"avgSpread\" "
               f"FROM {quote(self.table(layout))} WHERE {where} AND {self._seed_filter(cols)} GROUP BY 1 ORDER BY 1")
        return self._arrow_select(sql, params, ["minute", "avgSpread"], [pa.timestamp("ns"), pa.float64()],
                                 StringMode.ARROW)

    def ols_spread(self, layout: Layout, days=()) -> OpResult:
        cols, where, params = self._quote_sql(layout, days)
        b, a = quote(cols.bid), quote(cols.ask)
        size = f"({quote(cols.bid_size)}::float8 + {quote(cols.ask_size)})"
        sql = ("SELECT count(*) AS n, avg(x) AS ax, avg(y) AS ay, var_pop(x) * count(*) AS sxx, "
               "var_pop(y) * count(*) AS syy, covar_pop(x, y) * count(*) AS sxy "
               f"FROM (SELECT {a} / {b} - 1 AS y, {size} * ({a} + {b}) / 2 AS x "
               f"FROM {quote(self.table(layout))} WHERE {where} AND {self._seed_filter(cols)}) s")
        t0 = _now()
        sums = list(self.db.rows(sql, params)[0].values())
        t1 = _now()
        try:
            frame = ols_from_sums(*sums)
        except ValueError as exc:
            raise TargetError(f"{layout.dataset}: {exc}") from None
        return OpResult(rows=len(frame), phases={"decode": _now() - t1}, frame=frame, node=self.node,
                        extra={"observations": int(sums[0] or 0), "fetch_s": t1 - t0})

    def mapreduce_minute_bars(self, layout: Layout, days=()) -> OpResult:
        """Report 003 (b): minute quotes of the span INSERTed into the layout's minute table; the
        answer is the number of bars written (the INSERT's row count)."""
        cols, where, params = self._quote_sql(layout, days)
        k, d, t, b, a = (quote(c) for c in (cols.key, cols.date, cols.time, cols.bid, cols.ask))
        minute = quote(self.minute_table(layout))
        self.db.execute(f"CREATE TABLE IF NOT EXISTS {minute} ({k} text, {d} date, minute timestamp, "
                        f"{b} double precision, {a} double precision)")
        t0 = _now()
        bars = self.db.execute(f"INSERT INTO {minute} SELECT {k}, {d}, date_trunc('minute', {t}), avg({b}), avg({a}) "
                               f"FROM {quote(self.table(layout))} WHERE {where} GROUP BY 1, 2, 3", params)
        t1 = _now()
        frame = pd.DataFrame({"bars": [int(bars)]})
        return OpResult(rows=1, phases={"query": t1 - t0, "decode": _now() - t1}, frame=frame, node=self.node,
                        extra={"bars": int(bars)})
