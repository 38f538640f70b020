"""ClickHouse: embedded chDB (a data folder on this machine) or a user's ClickHouse server through
``clickhouse-connect``: the same target, a server profile instead of a folder.

Config keys (plain data, rebuilt in every worker process):

- embedded (no ``host``): ``path``, the chDB data folder (default
  ``workloads.paths.default_datasets_dir() / "clickhouse"``); ``session``: ``auto`` (default) or
  ``per_operation`` (see Concurrency); ``lock_timeout_s`` (default 120); ``threads``
  (``max_threads`` of the session; default: chDB's).
- server (``host`` set): ``host``, ``port`` (the HTTP interface, default 8123), ``user`` (default
  ``default``), ``password``, ``database`` (default ``tickbench``), ``secure`` (bool: HTTPS);
  ``timeout`` (connect, s, default 10), ``query_timeout`` (one reply, s, default 3600),
  ``compress`` (clickhouse-connect's compression of inserts and replies, default true).
- both: ``chunk_rows`` (rows per load batch, default 1,000,000), ``drop_caches`` (a cold run may
  also write ``/proc/sys/vm/drop_caches``, default false). Embedded uses the database
  ``tickbench`` inside its folder (``database`` also applies).

chDB and clickhouse-connect are imported only inside the backend that needs them (a missing one
raises ``MissingClient`` naming the ``clickhouse`` extra).

Layout, as a practitioner lays out ticks in ClickHouse: one MergeTree table per dataset and scale,
``<database>.<dataset>_<scale key>``, ``PARTITION BY`` the day (the DATE column, or ``toDate`` of
the timestamp for devices), ``ORDER BY (key, time, _seq)``. ``_seq`` (UInt32) is each row's
arrival ordinal within its day (the generator's row order): ties in (key, time) are frequent in
second-resolution quotes, and ``_seq`` makes the stored order, the first/last quote of a minute
(``argMin``/``argMax`` of the mid by ``_seq``: a day is loaded in time order, checked, so ``_seq``
follows (time, arrival) order) and a day read back
(``ORDER BY key, time, _seq``, read in order from the sorting key) well defined and equal to
DuckDB's and pandas'. Reads select the schema's columns only; ``_seq`` shows in the footprint
as the column it is. Types: SYMBOL ``LowCardinality(String)``, STRING ``String``, DATE ``Date``,
SECOND ``DateTime64(0, 'UTC')``, TIME/TIMESTAMP ``DateTime64(3, 'UTC')`` (times of day on
1970-01-01, as the datasets hold them), CHAR ``Int8``, INT ``Int32``, LONG ``Int64``, DOUBLE
``Float64``..., default codecs (LZ4), wide parts at every scale (as a real day's size gets them:
per-column sizes are then known). Each day is loaded in batches (Arrow, with explicit UTC
times and dates, so the machine's time zone never shifts a value), then ``OPTIMIZE ... PARTITION
... FINAL`` leaves one part per day; a day whose row count is short (an interrupted load) has its
partition dropped and loaded again. Beside it: ``_append`` (appends), ``_import`` (CSV imports),
``_minute`` (report 003's map-reduce), ``_info`` (devices' side table), and the manifest table
``_tickbench_layouts``.

Phases, honestly:
- embedded: the timed call is ``session.query(sql, "Arrow")`` read as Arrow (uncompressed:
  in-process there is no wire) then ``to_pandas``:
  ``query`` = getting the folder's turn (see below) + the query into Arrow, in-process (no
  transfer), ``decode`` = Arrow to DataFrame. ``extra``: ``lock_wait_s``, ``open_s``,
  ``close_s``, ``session`` ("held" or "opened").
- server: the timed call is ``client.query_arrow(sql, parameters)`` then ``to_pandas``. The first
  is one clickhouse-connect call in which the server's execution, the transfer and the Arrow read
  cannot be told apart, so a measured operation has only ``decode``. Probe operations
  (``probed_ops``) split it: the same query as one HTTP request with ``wait_end_of_query=1``;
  ``server`` = the ``elapsed_ns`` the server reports in ``X-ClickHouse-Summary`` (or, when it
  reports none, the time to the reply's headers), ``transfer`` = the rest of the exchange up to
  the reply's last byte (request, round trips, the bytes), ``decode`` = Arrow read + to_pandas;
  ``wire_bytes`` = the reply's size.

Concurrency of embedded chDB: only ONE process can hold a chDB session on a data folder. Tickbench
processes take turns on a kernel lock (``flock`` on ``<folder>.tickbench-turn.lock`` beside the
folder, POSIX) rather than by retrying chDB's open (a refused open is an error, not a queue), and
retry with backoff only when another program holds the folder, up to ``lock_timeout_s``. With
``session = "auto"`` a process keeps its session between operations as long as no other process
asks for the folder: a waiting process says so (a shared ``flock`` on
``<folder>.tickbench-waiters.lock``), and the holder hands over at the end of its operation, or
within ~2 ms when it is idle (a watcher thread), so a single user pays no open per operation and
several users take turns. ``per_operation`` opens and closes around every operation. As for
DuckDB's writers, the wait and the open are part of the timed span (``query`` phase): they are
what using one chDB folder from several processes costs; the close when handing over is too. The
parent's work (prepare, footprint, clear_table, describe) always closes its session before
returning, so workers never wait for it; ``open`` in a worker only loads chDB and checks the
folder (taking the folder there would block the other workers at the start barrier).

Cold cache: embedded, before each operation (outside timing): ``SYSTEM DROP MARK CACHE``,
``UNCOMPRESSED CACHE``, index/primary-index/mmap/query/query-condition/page caches (each listed
when it succeeded), then the OS page cache of every file in the folder (``cache.drop_file_cache``).
Server: the same ``SYSTEM DROP ...`` once per step before the release (``drop_cache_for_step``:
they need the SYSTEM privilege; those refused are not listed); a server's OS page cache cannot be
dropped from a client.

Reports 001 and 004. Suite queries run their ``clickhouse`` text with ``{quotes}``,
``{readings}`` and ``{info}`` replaced by this layout's tables (a regex on those three names only:
ClickHouse's own ``{name:Type}`` query parameters stay as they are) and parameters bound by the
engine (chDB ``params``, clickhouse-connect server-side binding). Import: ClickHouse's own CSV
reader converting DolphinDB's text style (2007.08.23, 09:30:07, a CHAR as its letter): embedded
``INSERT ... SELECT <conversions> FROM file(path, CSVWithNames, <text columns>)``; server the same
SELECT over ``input(<text columns>)`` with the file's bytes as the request body
(``client.command(..., data=...)``). Export: ClickHouse's own writer, ``SELECT ... INTO OUTFILE
... FORMAT CSVWithNames`` (embedded) or the ``CSVWithNames`` reply streamed to the file (server):
ISO dates and timestamps, times of day and CHAR letters as DuckDB writes them (ClickHouse quotes
every string field; a CSV reader reads both alike). Footprint: ``system.parts`` bytes on disk of
the active parts, per column ``system.columns`` compressed bytes; one replica.
"""
from __future__ import annotations

import atexit
import base64
import datetime as dt
import json
import logging
import os
import random
import re
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa

from workloads.datasets.base import side_tables
from workloads.datasets.schema import DatasetInfo, Scale, Schema, StringMode
from workloads.targets.arrow_frames import arrow_schema, arrow_table, frame_from_arrow, key_value, library_versions
from workloads.targets.bars import price_columns
from workloads.targets.base import (IMPORT_TABLE, Footprint, Layout, NotSupported, OpResult,
                                    ProgressCallback, Target, TargetError)
from workloads.targets.cache import drop_file_cache, system_wide_drop
from workloads.targets.columns import column_schema
from workloads.targets.quotes import (MAX_ASK_BID_RATIO, SESSION_CLOSE, SESSION_OPEN, QuoteColumns, day_span,
                                     ols_from_sums, quote_columns)
from workloads.targets.sizes import rows_bytes
from workloads.targets.storage import disk_full_error
from workloads.targets.turns import can_queue, others_waiting, take_turn
from workloads.targets.lazy import get_dataset as _get_dataset

LAYOUT_FORMAT = 1
KEYS_SAMPLE = 100
DEFAULT_CHUNK_ROWS = 1_000_000
DEFAULT_DATABASE = "tickbench"
DEFAULT_PORT = 8123
DEFAULT_USER = "default"
DEFAULT_LOCK_TIMEOUT_S = 120.0
MANIFEST_TABLE = "_tickbench_layouts"
SEQ = "_seq"                   # arrival ordinal within the day: ties in (key, time) keep their order
IDLE_POLL_S = 0.002            # how often an idle held session looks for a waiting process
SESSION_MODES = ("auto", "per_operation")

_CH_TYPES = {
    "BOOL": "Bool", "CHAR": "Int8", "SHORT": "Int16", "INT": "Int32", "LONG": "Int64",
    "FLOAT": "Float32", "DOUBLE": "Float64", "DATE": "Date", "SECOND": "DateTime64(0, 'UTC')",
    "TIME": "DateTime64(3, 'UTC')", "TIMESTAMP": "DateTime64(3, 'UTC')",
    "SYMBOL": "LowCardinality(String)", "STRING": "String",
}
_TEMPORAL = frozenset({"SECOND", "TIME", "TIMESTAMP"})
_INT_PARAM = {"CHAR": "Int8", "SHORT": "Int16", "INT": "Int32", "LONG": "Int64"}

# The caches a cold operation drops, in this order; those the engine refuses are left out
CACHE_COMMANDS = (
    "SYSTEM DROP MARK CACHE", "SYSTEM DROP UNCOMPRESSED CACHE", "SYSTEM DROP INDEX MARK CACHE",
    "SYSTEM DROP INDEX UNCOMPRESSED CACHE", "SYSTEM DROP PRIMARY INDEX CACHE", "SYSTEM DROP MMAP CACHE",
    "SYSTEM DROP QUERY CACHE", "SYSTEM DROP QUERY CONDITION CACHE", "SYSTEM DROP PAGE CACHE",
)

# Suite texts name tables as {quotes}/{readings}/{info}; ClickHouse's {name:Type} are parameters
_TABLE_PLACEHOLDER = re.compile(r"\{(quotes|readings|info)\}")
_PARAMETER = re.compile(r"\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*:")
_SETTINGS = re.compile(r"\bSETTINGS\b", re.IGNORECASE)


def _now() -> float:
    return time.perf_counter()


def quote(name: str) -> str:
    """A ClickHouse identifier, quoted (names come from schemas and callers, never from SQL text)."""
    return "`" + name.replace("\\", "\\\\").replace("`", "\\`") + "`"


def literal(text: str) -> str:
    """A ClickHouse string literal."""
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


_PLACEHOLDER = re.compile(r"\{(\w+):([^{}]+)\}")
_INTEGER_TYPES = frozenset(_INT_PARAM.values())


def with_literals(sql: str, params: dict[str, Any]) -> str | None:
    """``sql`` with its ``{name:Type}`` placeholders written as the literals a user types (text
    quoted, integers as they are, a date as its ISO text: this module compares ``Date``
    placeholders with Date columns only, where ClickHouse converts the text); None when a
    placeholder is of another kind (chDB then binds it). chDB's bound parameters, and a
    ``CAST('2007-08-23' AS Date)`` alike, cost ~2 % of a 6 ms slice beside the plain literals
    (measured interleaved in one process)."""
    def written(match: re.Match) -> str:
        value, kind = params[match.group(1)], match.group(2)
        if kind == "String" and isinstance(value, str) and "\0" not in value:
            return literal(value)
        if kind in _INTEGER_TYPES and isinstance(value, (int, np.integer)) and not isinstance(value, bool):
            return str(int(value))
        if kind == "Date" and isinstance(value, dt.date) and not isinstance(value, dt.datetime):
            return f"'{value.isoformat()}'"
        raise LookupError(kind)
    try:
        return _PLACEHOLDER.sub(written, sql)
    except (LookupError, KeyError):
        return None


def table_name(dataset: str, scale: Scale) -> str:
    return f"{dataset}_{scale.key()}"


def _escape(text: str) -> str:
    """ClickHouse's escaped-text form of a query parameter's value (as HTTP ``param_`` sends it)."""
    return (text.replace("\\", "\\\\").replace("\t", "\\t").replace("\n", "\\n")
            .replace("\r", "\\r").replace("\0", "\\0"))


def _value_text(value: Any) -> str:
    """A parameter value as ClickHouse parses it: ISO dates, times with milliseconds."""
    if isinstance(value, (pd.Timestamp, np.datetime64)):
        value = pd.Timestamp(value).to_pydatetime()
    if isinstance(value, dt.datetime):
        return value.isoformat(sep=" ", timespec="milliseconds")
    if isinstance(value, (dt.date, dt.time)):
        return value.isoformat()
    if isinstance(value, (bool, np.bool_)):
        return "true" if value else "false"
    return str(value)


def _element(value: Any) -> str:
    if isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, bool):
        return str(value)
    return literal(_value_text(value))


def param_text(value: Any) -> str:
    """A Python value as the text of a ClickHouse query parameter (chDB ``params``, HTTP ``param_``)."""
    if isinstance(value, (list, tuple)):
        return _escape("[" + ", ".join(_element(v) for v in value) + "]")
    return _escape(_value_text(value))


def _server_value(value: Any) -> Any:
    """A value for clickhouse-connect's server-side binding (it formats and escapes itself; a
    datetime would lose its fraction there, so it goes as text)."""
    if isinstance(value, (pd.Timestamp, np.datetime64)):
        value = pd.Timestamp(value).to_pydatetime()
    if isinstance(value, dt.datetime):
        return _value_text(value)
    return value


def _first_line(text: str) -> str:
    lines = str(text).strip().splitlines()
    return lines[0] if lines else ""



def _columns_ddl(schema: Schema, seq: bool = False) -> str:
    parts = [f"{quote(c.name)} {_CH_TYPES[c.ddb_type]}" for c in schema.columns]
    if seq:
        parts.append(f"{quote(SEQ)} UInt32")
    return ", ".join(parts)


def _engine_ddl(info: DatasetInfo, seq: bool = False) -> str:
    day = info.schema.column(info.date_column)
    partition = quote(day.name) if day.ddb_type == "DATE" else f"toDate({quote(day.name)})"
    order = [quote(info.key_column)]
    if info.time_column != info.key_column:
        order.append(quote(info.time_column))
    if seq:
        order.append(quote(SEQ))
    # wide parts at every scale (a real day's size gets them anyway): per-column sizes are known
    return (f"ENGINE = MergeTree PARTITION BY {partition} ORDER BY ({', '.join(order)}) "
            "SETTINGS min_bytes_for_wide_part = 0, min_rows_for_wide_part = 0")


def insert_arrow(frame: pd.DataFrame, schema: Schema, seq_start: int | None = None) -> pa.Table:
    """A frame as the Arrow table ClickHouse loads: dates as date32, times as UTC timestamps (so
    no time zone, the machine's or the server's, shifts them), ``_seq`` from ``seq_start``."""
    table = arrow_table(frame, arrow_schema(schema))
    columns, fields = [], []
    for column, values in zip(schema.columns, table.columns):
        if column.ddb_type == "DATE":
            values = values.cast(pa.date32())
        elif column.ddb_type in _TEMPORAL:
            values = values.cast(pa.timestamp("ns", tz="UTC"))
        columns.append(values)
        fields.append(pa.field(column.name, values.type))
    if seq_start is not None:
        columns.append(pa.array(np.arange(seq_start, seq_start + len(table), dtype=np.uint32)))
        fields.append(pa.field(SEQ, pa.uint32()))
    return pa.Table.from_arrays(columns, schema=pa.schema(fields))


def naive_times(table: pa.Table) -> pa.Table:
    """ClickHouse's timestamps come back tz-aware (UTC): the datasets' convention is naive UTC."""
    fields, changed = [], False
    for field in table.schema:
        if pa.types.is_timestamp(field.type) and field.type.tz is not None:
            fields.append(pa.field(field.name, pa.timestamp(field.type.unit), field.nullable))
            changed = True
        else:
            fields.append(field)
    return table.cast(pa.schema(fields)) if changed else table


# DolphinDB's text style (workloads.datasets.csv_files) to the table's types, column by column
_FROM_TEXT = {
    "DATE": "toDate(replaceAll({c}, '.', '-'))",
    "SECOND": "toDateTime64(concat('1970-01-01 ', {c}), 0, 'UTC')",
    "TIME": "toDateTime64(concat('1970-01-01 ', {c}), 3, 'UTC')",
    "TIMESTAMP": "toDateTime64(concat(replaceAll(substring({c}, 1, 10), '.', '-'), ' ', substring({c}, 12)), 3, 'UTC')",
    "CHAR": "toInt8(ascii({c}))",
    "BOOL": "toBool({c})",
    "SYMBOL": "{c}",
    "STRING": "{c}",
}


def _text_structure(schema: Schema) -> str:
    return ", ".join(f"{quote(c.name)} String" for c in schema.columns)


def _from_text_sql(schema: Schema) -> str:
    parts = []
    for c in schema.columns:
        expr = _FROM_TEXT.get(c.ddb_type, f"CAST({{c}} AS {_CH_TYPES[c.ddb_type]})")
        parts.append(expr.format(c=quote(c.name)) + f" AS {quote(c.name)}")
    return ", ".join(parts)


# The table's types as DuckDB's COPY writes them: a time of day without its 1970-01-01, a CHAR as
# its letter, timestamps with their milliseconds
_TO_TEXT = {
    "SECOND": "formatDateTime({c}, '%H:%i:%S')",
    "TIME": "substring(toString({c}), 12)",
    "TIMESTAMP": "toString({c})",
    "CHAR": "char({c})",
}


def _to_text_sql(schema: Schema, qualifier: str = "") -> str:
    return ", ".join(_TO_TEXT.get(c.ddb_type, "{c}").format(c=qualifier + quote(c.name)) + f" AS {quote(c.name)}"
                     for c in schema.columns)


# --- embedded: a chDB data folder, one process at a time -------------------------------------------
_ACTIVE: "_Folder | None" = None        # chDB allows one session per process: whose it is


def _is_busy(exc: BaseException) -> bool:
    text = str(exc).lower()
    return "lock" in text or "embeddedserver" in text or "already running" in text


def arrow_of(result) -> pa.Table:
    """chDB's Arrow result as a table whose buffers keep ``result`` alive.

    chDB's own "ArrowTable" output (chDB 4.4: ``RecordBatchFileReader(res.get_memview().view())``)
    reads the result's memory without copying but keeps no reference to the result, which is freed
    once the call returns: uncompressed (see ``arrow``), the table's buffers then point at freed
    memory, and a frame kept from one read showed other bytes (or failed to decode) after the next
    reads (20 of 20 times in a check of 20 further reads). The same zero-copy read, over a buffer
    whose base is the result, costs nothing more and stays valid as long as the table does.
    """
    if len(result) == 0:                 # as chDB's own conversion: an empty table, no columns
        return pa.Table.from_batches([], schema=pa.schema([]))
    raw = pa.py_buffer(result.get_memview().view())
    return pa.ipc.open_file(pa.foreign_buffer(raw.address, raw.size, base=result)).read_all()


class _ChdbConn:
    """Statements on an open chDB session; chDB's errors as TargetError."""

    def __init__(self, session, path: Path):
        self.session, self.path = session, path

    def _query(self, sql: str, fmt: str, params: dict[str, Any] | None):
        try:
            if params and (written := with_literals(sql, params)) is not None:
                sql, params = written, None
            if params:
                return self.session.query(sql, fmt, params={k: param_text(v) for k, v in params.items()})
            return self.session.query(sql, fmt)
        except TargetError:
            raise
        except Exception as exc:
            raise disk_full_error(exc, self.path) or TargetError(f"chDB: {_first_line(exc)}") from exc

    def arrow(self, sql: str, params: dict[str, Any] | None = None) -> pa.Table:
        # In-process there is no wire: chDB's default lz4 framing of its Arrow output (~55 ms of a
        # 1M-row day's ~145) would compress only to decompress at once. A SET in the session does
        # not reach the Arrow path; the query's own SETTINGS does.
        if not _SETTINGS.search(sql):
            sql += "\nSETTINGS output_format_arrow_compression_method = 'none'"
        return arrow_of(self._query(sql, "Arrow", params))

    def execute(self, sql: str, params: dict[str, Any] | None = None) -> int:
        """Run a statement; the rows it wrote."""
        return int(self._query(sql, "CSV", params).rows_written())

    def rows(self, sql: str, params: dict[str, Any] | None = None) -> list[dict[str, Any]]:
        return self.arrow(sql, params).to_pylist()

    def insert(self, table: str, data: pa.Table) -> int:
        _tb_insert = data  # noqa: F841 (chDB's Python() table function finds it by name)
        names = ", ".join(quote(n) for n in data.column_names)
        return self.execute(f"INSERT INTO {table} ({names}) SELECT * FROM Python(_tb_insert)")


class _Folder:
    """A chDB data folder taken in turns by Tickbench processes (module doc: Concurrency)."""

    def __init__(self, path: Path, hold: bool, timeout: float, threads: int | None):
        self.path, self.hold, self.timeout, self.threads = path, hold and can_queue(), timeout, threads
        self._session = None
        self._turn: int | None = None
        self._waiters: int | None = None
        self._depth = 0
        self._guard = threading.RLock()
        self._watcher: threading.Thread | None = None
        self.address = str(path)

    def ready(self) -> None:
        """Load chDB and check the folder (outside timing); the folder itself is not taken."""
        _chdb_session_module()
        if not self.path.is_dir():
            raise TargetError(f"chDB folder {self.path} does not exist: prepare the target first")

    def _lock_path(self, what: str) -> Path:
        return self.path.with_name(f"{self.path.name}.tickbench-{what}.lock")

    @contextmanager
    def session(self, hold: bool | None = None) -> Iterator[tuple[_ChdbConn, dict[str, Any]]]:
        """The folder's session for the block, and the facts of getting it (wait, open, close)."""
        with self._guard:
            facts: dict[str, Any] = {}
            if self._depth == 0:
                facts = self._acquire() if self._session is None else \
                    {"lock_wait_s": 0.0, "open_s": 0.0, "session": "held", "serialised": True}
            self._depth += 1
            try:
                yield _ChdbConn(self._session, self.path), facts
            finally:
                self._depth -= 1
                if self._depth == 0:
                    keep = self.hold if hold is None else hold and self.hold
                    if keep and not self._others_waiting():
                        self._watch()
                    else:
                        start = _now()
                        self.release(facts)
                        facts["close_s"] = _now() - start

    def _acquire(self) -> dict[str, Any]:
        global _ACTIVE
        if _ACTIVE is not None and _ACTIVE is not self:
            _ACTIVE.release()        # another folder (or target) of this process has chDB's one session
        asked = time.monotonic()
        turn, polls = self._queue()
        taken = time.monotonic()
        try:
            start = _now()
            session, waited, retries = self._open()
            open_s = _now() - start - waited
        except BaseException:
            if turn is not None:
                os.close(turn)
            raise
        self._session, self._turn = session, turn
        _ACTIVE = self
        return {"lock_wait_s": (taken - asked) + waited, "open_s": open_s, "lock_retries": retries, "queue_polls": polls,
                "session": "opened", "serialised": True, "turn_asked": asked, "turn_taken": taken}

    def _queue(self) -> tuple[int | None, int]:
        """Wait for the folder's turn among Tickbench processes: (fd, polls). A waiting
        process holds a shared lock on the waiters file, so an idle holder hands over."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        return take_turn(self._lock_path("turn"), self.timeout,
                         f"no turn on chDB folder {self.path} within {self.timeout:g} s: other Tickbench "
                         "processes kept it (chDB allows one process per folder)", self._lock_path("waiters"))

    def _others_waiting(self) -> bool:
        if not can_queue():
            return True
        if self._waiters is None:
            self._waiters = os.open(self._lock_path("waiters"), os.O_CREAT | os.O_RDWR, 0o644)
        return others_waiting(self._waiters)

    def _watch(self) -> None:
        """Hand an idle held session over within ~IDLE_POLL_S of another process asking."""
        if self._watcher is not None and self._watcher.is_alive():
            return
        self._watcher = threading.Thread(target=self._watch_loop, name="tickbench-chdb-handover", daemon=True)
        self._watcher.start()

    def _watch_loop(self) -> None:
        while self._session is not None:
            time.sleep(IDLE_POLL_S)
            if self._session is None or not self._others_waiting():
                continue
            if self._guard.acquire(blocking=False):       # never while an operation runs
                try:
                    if self._depth == 0:
                        self.release()
                finally:
                    self._guard.release()

    def _open(self):
        """chDB's session on the folder, retrying while another program holds it:
        (session, seconds waited, refused opens)."""
        module = _chdb_session_module()
        self.path.mkdir(parents=True, exist_ok=True)
        start, retries, delay = _now(), 0, 0.001
        while True:
            attempt = _now()
            try:
                session = module.Session(str(self.path))
            except Exception as exc:
                if not _is_busy(exc):
                    raise disk_full_error(exc, self.path) or \
                        TargetError(f"cannot open chDB folder {self.path}: {_first_line(exc)}") from exc
                if _now() - start > self.timeout:
                    raise TargetError(f"chDB folder {self.path} stayed locked by another process for "
                                      f"{self.timeout:g} s (chDB allows one process per folder): "
                                      f"{_first_line(exc)}") from exc
                retries += 1
                time.sleep(delay * (1 + random.random()))
                delay = min(delay * 2, 0.05)
                continue
            if self.threads:
                session.query(f"SET max_threads = {int(self.threads)}")
            return session, attempt - start, retries

    def release(self, facts: dict[str, Any] | None = None) -> None:
        """Close the session and give the folder's turn back (``facts["turn_released"]``: when,
        stamped before the turn passes on, so turns of several processes never seem to overlap)."""
        global _ACTIVE
        with self._guard:
            session, self._session = self._session, None
            try:
                if session is not None:
                    session.close()
            finally:
                if facts is not None:
                    facts["turn_released"] = time.monotonic()
                if self._turn is not None:
                    os.close(self._turn)
                    self._turn = None
                if _ACTIVE is self:
                    _ACTIVE = None

    def close(self) -> None:
        self.release()
        if self._waiters is not None:
            os.close(self._waiters)
            self._waiters = None


def _chdb_session_module():
    try:
        from chdb import session
    except ImportError as exc:
        from workloads.targets import MissingClient
        raise MissingClient("clickhouse", "chdb") from exc
    return session


@atexit.register
def _release_at_exit() -> None:
    if _ACTIVE is not None:
        try:
            _ACTIVE.release()
        except Exception:
            pass


# --- server: clickhouse-connect over HTTP(S) -------------------------------------------------------
class _ServerConn:
    """Statements through clickhouse-connect; its errors as TargetError naming the server."""

    def __init__(self, server: "_Server"):
        self.server = server

    def _call(self, fn, *args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except TargetError:
            raise
        except Exception as exc:
            raise self.server.error(exc) from None

    @staticmethod
    def _params(params):
        return {k: _server_value(v) for k, v in params.items()} if params else None

    def arrow(self, sql: str, params: dict[str, Any] | None = None) -> pa.Table:
        client = self.server.client()
        return self._call(client.query_arrow, sql, parameters=self._params(params))

    def execute(self, sql: str, params: dict[str, Any] | None = None, data: bytes | None = None) -> int:
        client = self.server.client()
        summary = self._call(client.command, sql, parameters=self._params(params), data=data)
        return int(getattr(summary, "written_rows", 0) or 0)

    def rows(self, sql: str, params: dict[str, Any] | None = None) -> list[dict[str, Any]]:
        return self.arrow(sql, params).to_pylist()

    def insert(self, table: str, data: pa.Table) -> int:
        client = self.server.client()
        summary = self._call(client.insert_arrow, table, data)
        return int(getattr(summary, "written_rows", 0) or 0)

    def stream_to(self, sql: str, params: dict[str, Any] | None, fmt: str, path: Path) -> None:
        client = self.server.client()
        stream = self._call(client.raw_stream, sql, parameters=self._params(params), fmt=fmt)
        try:
            with open(path, "wb") as out:
                for chunk in stream:
                    out.write(chunk)
        except OSError:
            raise
        except Exception as exc:
            raise self.server.error(exc) from None


class _Server:
    def __init__(self, config: dict[str, Any]):
        self.host = str(config["host"]).strip()
        try:
            self.port = int(config.get("port") or DEFAULT_PORT)
        except (TypeError, ValueError):
            raise TargetError(f"ClickHouse port {config.get('port')!r} is not a number") from None
        self.user = str(config.get("user") or DEFAULT_USER)
        self.password = str(config.get("password") or "")
        self.secure = bool(config.get("secure", False))
        self.timeout = float(config.get("timeout") or 10.0)
        self.query_timeout = float(config.get("query_timeout") or 3600.0)
        self.compress = config.get("compress", True)
        self.address = f"{self.host}:{self.port}"
        self._client = None
        self._http = None

    def client(self):
        if self._client is None:
            try:
                import clickhouse_connect
            except ImportError as exc:
                from workloads.targets import MissingClient
                raise MissingClient("clickhouse", "clickhouse_connect") from exc
            quiet = logging.getLogger("clickhouse_connect")   # it logs a refused connection as well
            level = quiet.level
            quiet.setLevel(logging.ERROR)
            try:
                self._client = clickhouse_connect.get_client(
                    host=self.host, port=self.port, username=self.user, password=self.password,
                    secure=self.secure, connect_timeout=self.timeout, send_receive_timeout=self.query_timeout,
                    compress=self.compress, autogenerate_session_id=False, query_retries=0)
            except Exception as exc:
                raise self.error(exc) from None
            finally:
                quiet.setLevel(level)
        return self._client

    def error(self, exc: BaseException) -> TargetError:
        """A client error as one line a user can act on."""
        text = str(exc)
        low = text.lower()
        if getattr(exc, "code", None) == 516 or "AUTHENTICATION_FAILED" in text or "code: 516" in low:
            return TargetError(f"ClickHouse at {self.address}: authentication failed for user {self.user!r} "
                               "(wrong password, or no such user)")
        if "refused" in low:
            return TargetError(f"ClickHouse at {self.address}: connection refused (no server listening there; "
                               f"is {self.port} its HTTP port?)")
        if "timed out" in low or "timeout" in low:
            return TargetError(f"ClickHouse at {self.address}: no answer in time (connect {self.timeout:g} s, "
                               f"reply {self.query_timeout:g} s)")
        if "name or service not known" in low or "failed to resolve" in low or "nodename nor servname" in low:
            return TargetError(f"ClickHouse at {self.address}: cannot resolve host {self.host!r}")
        answer = text.split("server response: ", 1)[-1].split(" (for url", 1)[0]
        return TargetError(f"ClickHouse at {self.address} answered: {_first_line(answer)}")

    def http_request(self, sql: str, params: dict[str, Any], fmt: str, database: str):
        """The query as one HTTP request with ``wait_end_of_query=1`` (probes): (reply bytes,
        server-reported seconds or None, seconds to the reply's headers, response headers)."""
        import http.client
        import urllib.parse

        query = {"database": database, "wait_end_of_query": "1", "output_format_arrow_string_as_string": "1",
                 **{f"param_{k}": param_text(v) for k, v in (params or {}).items()}}
        token = base64.b64encode(f"{self.user}:{self.password}".encode()).decode()
        headers = {"Authorization": f"Basic {token}", "Content-Type": "text/plain; charset=utf-8"}
        body = f"{sql}\nFORMAT {fmt}".encode()
        for attempt in (0, 1):           # a kept-alive connection the server closed: once more, afresh
            if self._http is None:
                cls = http.client.HTTPSConnection if self.secure else http.client.HTTPConnection
                self._http = cls(self.host, self.port, timeout=self.query_timeout)
            try:
                start = _now()
                self._http.request("POST", "/?" + urllib.parse.urlencode(query), body, headers)
                response = self._http.getresponse()
                headed = _now()
                data = response.read()
                break
            except (http.client.HTTPException, OSError) as exc:
                self._http.close()
                self._http = None
                if attempt:
                    raise self.error(exc) from None
        if response.status != 200 or response.getheader("X-ClickHouse-Exception-Code"):
            raise TargetError(f"ClickHouse at {self.address} answered: "
                              f"{_first_line(data.decode(errors='replace'))}")
        try:
            elapsed = json.loads(response.getheader("X-ClickHouse-Summary") or "{}").get("elapsed_ns")
        except ValueError:
            elapsed = None
        server_s = int(elapsed) / 1e9 if elapsed not in (None, "") else None
        return data, server_s, headed - start, dict(response.getheaders())

    def ping_headers(self) -> dict[str, str]:
        """The headers of ``GET /ping`` (a server names itself in X-ClickHouse-Server-Display-Name)."""
        import http.client

        cls = http.client.HTTPSConnection if self.secure else http.client.HTTPConnection
        conn = cls(self.host, self.port, timeout=self.timeout)
        try:
            conn.request("GET", "/ping")
            response = conn.getresponse()
            response.read()
            return dict(response.getheaders())
        finally:
            conn.close()

    def close(self) -> None:
        if self._client is not None:
            try:
                self._client.close()
            except Exception:
                pass
            self._client = None
        if self._http is not None:
            self._http.close()
            self._http = None


# --- the target -----------------------------------------------------------------------------------
class ClickHouseTarget(Target):
    kind = "clickhouse"
    read_phases = ("query", "decode")
    query_dialect = "clickhouse"

    def __init__(self, config: dict[str, Any]):
        super().__init__(config)
        self.server = bool(str(self.config.get("host") or "").strip())
        self.database = str(self.config.get("database") or DEFAULT_DATABASE)
        mode = str(self.config.get("session") or "auto")
        if mode not in SESSION_MODES:
            raise TargetError(f"chDB session mode {mode!r}: choose one of {', '.join(SESSION_MODES)}")
        self.session_mode = mode
        self._backend: _Folder | _Server | None = None
        self._info: DatasetInfo | None = None
        if self.server:
            self._backend = _Server(self.config)
            # a server's read is one client call: its split comes from probe operations
            self.read_phases = ("server", "transfer", "decode")
            self.probed_ops = frozenset({"read_day", "read_slice", "minute_bars", "spread_by_minute", "ols_spread"})

    # --- configuration ---------------------------------------------------------------------
    @property
    def path(self) -> Path:
        path = self.config.get("path")
        if not path:
            from workloads.paths import default_datasets_dir
            return default_datasets_dir() / "clickhouse"
        return Path(path)

    def _db(self) -> "_Folder | _Server":
        if self._backend is None:
            self._backend = _Folder(self.path, hold=self.session_mode == "auto",
                                    timeout=float(self.config.get("lock_timeout_s") or DEFAULT_LOCK_TIMEOUT_S),
                                    threads=self.config.get("threads"))
        return self._backend

    @contextmanager
    def _conn(self, hold: bool | None = None) -> Iterator[tuple["_ChdbConn | _ServerConn", dict[str, Any]]]:
        """Statements on the engine, with the facts of getting it (embedded: the folder's turn;
        ``hold=False``: close the session after the block, as the parent always does)."""
        db = self._db()
        if isinstance(db, _Server):
            yield _ServerConn(db), {}
            return
        with db.session(hold) as (con, facts):
            yield con, facts

    def _dataset_info(self, layout: Layout) -> DatasetInfo:
        if self._info is None or self._info.name != layout.dataset:
            self._info = _get_dataset(layout.dataset).info
        return self._info

    def fq(self, table: str) -> str:
        return f"{quote(self.database)}.{quote(table)}"

    def table(self, layout: Layout) -> str:
        return table_name(layout.dataset, layout.scale)

    def import_table(self, layout: Layout) -> str:
        return self.table(layout) + "_import"

    def minute_table(self, layout: Layout) -> str:
        """Where the map-reduce writes its minute quotes (DolphinDB: ``quotes_minute``)."""
        return self.table(layout) + "_minute"

    @property
    def node(self) -> str:
        return self._backend.address if isinstance(self._backend, _Server) else ""

    # --- parent side -----------------------------------------------------------------------
    def prepare(self, dataset: str, scale: Scale, strings: StringMode,
                progress: ProgressCallback | None = None) -> Layout:
        strings = StringMode.parse(strings)
        ds = _get_dataset(dataset)
        table = table_name(dataset, scale)
        days = list(ds.trading_days(scale))
        scale_json = json.dumps({**asdict(scale), "content": ds.content_id}, sort_keys=True)
        with self._conn(hold=False) as (con, _):     # the parent never keeps the folder
            return self._prepare(con, ds, dataset, scale, strings, table, days, scale_json, progress)

    def _prepare(self, con, ds, dataset, scale, strings, table, days, scale_json, progress) -> Layout:
        info: DatasetInfo = ds.info
        manifest_table = self.fq(MANIFEST_TABLE)
        con.execute(f"CREATE DATABASE IF NOT EXISTS {quote(self.database)}")
        con.execute(f"CREATE TABLE IF NOT EXISTS {manifest_table} (table_name String, format UInt32, "
                    "dataset String, scale String, days String, keys_sample String, schema String, "
                    "versions String, complete UInt8, created DateTime64(6, 'UTC')) "
                    "ENGINE = MergeTree ORDER BY (table_name, created)")
        found = con.rows(f"SELECT format, scale, days, keys_sample, complete FROM {manifest_table} "
                         "WHERE table_name = {t:String} ORDER BY created DESC LIMIT 1", {"t": table})
        row = found[0] if found else None
        compatible = row is not None and row["format"] == LAYOUT_FORMAT and row["scale"] == scale_json
        entries = {e["date"]: e for e in json.loads(row["days"])} if compatible else {}
        main = self.fq(table)
        if not compatible:       # a different format or scale under this name: start over
            con.execute(f"DROP TABLE IF EXISTS {main}")
        con.execute(f"CREATE TABLE IF NOT EXISTS {main} ({_columns_ddl(info.schema, seq=True)}) "
                    f"{_engine_ddl(info, seq=True)}")
        for scratch in (table + "_append", table + "_import"):
            self._ensure_table(con, info, scratch)
        self._ensure_side_tables(con, ds, scale, table)
        keys = [str(k) for k in ds.keys(scale)[:KEYS_SAMPLE]]
        if compatible and row["complete"] and sorted(entries) == [d.isoformat() for d in days]:
            return self._layout(con, dataset, scale, strings, entries, json.loads(row["keys_sample"]), table,
                                reused=True)
        manifest = {"dataset": dataset, "scale": scale_json, "keys_sample": json.dumps(keys),
                    "schema": json.dumps([[c.name, c.ddb_type] for c in info.schema.columns]),
                    "versions": json.dumps(library_versions())}
        day_expr = quote(info.date_column) if info.schema.column(info.date_column).ddb_type == "DATE" \
            else f"toDate({quote(info.date_column)})"
        counts = {r["day"]: int(r["n"]) for r in
                  con.rows(f"SELECT {day_expr} AS day, count() AS n FROM {main} GROUP BY day")}
        expected = dict(zip(days, ds.day_rows(scale)))
        total = sum(expected.values())
        rows_done = 0
        for index, day in enumerate(days):
            entry = entries.get(day.isoformat())
            if entry and counts.get(day) == entry["rows"] == expected[day]:
                rows_done += entry["rows"]
                continue
            if counts.get(day):      # an interrupted day: drop what it left, load it again
                con.execute(f"ALTER TABLE {main} DROP PARTITION ID {literal(day.strftime('%Y%m%d'))}")
            rows = self._load_day(con, ds, index, scale, main, rows_done, total, progress)
            con.execute(f"OPTIMIZE TABLE {main} PARTITION ID {literal(day.strftime('%Y%m%d'))} FINAL")
            entries[day.isoformat()] = {"date": day.isoformat(), "rows": rows}
            self._write_manifest(con, table, manifest, entries, complete=False)
            rows_done += rows
            if progress is not None:
                progress(min(rows_done, total), total, f"{day.isoformat()} loaded into {table}")
        wanted = {d.isoformat() for d in days}
        entries = {k: v for k, v in entries.items() if k in wanted}
        self._write_manifest(con, table, manifest, entries, complete=True)
        return self._layout(con, dataset, scale, strings, entries, keys, table, reused=False)

    def _load_day(self, con, ds, index: int, scale: Scale, main: str, rows_done: int, total: int,
                  progress: ProgressCallback | None) -> int:
        rows = 0
        chunk_rows = int(self.config.get("chunk_rows") or DEFAULT_CHUNK_ROWS)
        time_column, last = ds.info.time_column, None
        for chunk in ds.generate_day(index, scale, StringMode.ARROW, chunk_rows):
            times = chunk[time_column]
            if len(chunk) and (not times.is_monotonic_increasing or (last is not None and times.iloc[0] < last)):
                raise TargetError(f"{ds.info.name}: day {index + 1} is not in time order; the arrival ordinal "
                                  f"({SEQ}) must follow time order")
            last = times.iloc[-1] if len(chunk) else last
            con.insert(main, insert_arrow(chunk, ds.info.schema, seq_start=rows))
            rows += len(chunk)
            if progress is not None:
                progress(min(rows_done + rows, total), total, f"loading day {index + 1} into {main}")
        return rows

    def _ensure_table(self, con, info: DatasetInfo, name: str) -> None:
        """A scratch table with the dataset's columns (appends, imports), laid out as the main one."""
        con.execute(f"CREATE TABLE IF NOT EXISTS {self.fq(name)} ({_columns_ddl(info.schema)}) {_engine_ddl(info)}")

    def _ensure_side_tables(self, con, ds, scale: Scale, table: str) -> None:
        """A dataset's side tables (devices: ``info``) as ``<table>_<name>``, loaded once."""
        for name, schema in side_tables(ds).items():
            side = self.fq(f"{table}_{name}")
            frame = getattr(ds, f"{name}_frame")(scale)
            con.execute(f"CREATE TABLE IF NOT EXISTS {side} ({_columns_ddl(schema)}) "
                        f"ENGINE = MergeTree ORDER BY {quote(schema.columns[0].name)}")
            have = int(con.rows(f"SELECT count() AS n FROM {side}")[0]["n"])
            if have == len(frame):
                continue
            con.execute(f"TRUNCATE TABLE {side}")
            con.insert(side, insert_arrow(frame, schema))

    def _write_manifest(self, con, table: str, manifest: dict[str, Any], entries: dict[str, dict],
                        complete: bool) -> None:
        days = json.dumps(sorted(entries.values(), key=lambda e: e["date"]))
        con.execute(f"INSERT INTO {self.fq(MANIFEST_TABLE)} SELECT {{t:String}}, {LAYOUT_FORMAT}, {{ds:String}}, "
                    "{scale:String}, {days:String}, {keys:String}, {schema:String}, {versions:String}, "
                    "{complete:UInt8}, {created:DateTime64(6, 'UTC')}",
                    {"t": table, "ds": manifest["dataset"], "scale": manifest["scale"], "days": days,
                     "keys": manifest["keys_sample"], "schema": manifest["schema"],
                     "versions": manifest["versions"], "complete": int(complete),
                     "created": dt.datetime.now(dt.timezone.utc).replace(tzinfo=None).isoformat(sep=" ")})

    def _layout(self, con, dataset, scale, strings, entries, keys, table, reused) -> Layout:
        ordered = sorted(entries.values(), key=lambda e: e["date"])
        where = f"{self.path}:{self.database}.{table}" if not self.server else \
            f"{self._backend.address}/{self.database}.{table}"
        return Layout(dataset=dataset, scale=scale, strings=strings,
                      days=tuple(dt.date.fromisoformat(e["date"]) for e in ordered),
                      keys_sample=tuple(keys), rows=sum(e["rows"] for e in ordered),
                      footprint_bytes=self._parts_bytes(con, [table] + self._side_names(dataset, table)),
                      reused=reused, location=where)

    @staticmethod
    def _side_names(dataset: str, table: str) -> list[str]:
        return [f"{table}_{name}" for name in side_tables(_get_dataset(dataset))]

    def _parts_bytes(self, con, tables: list[str]) -> int:
        found = con.rows("SELECT sum(bytes_on_disk) AS b FROM system.parts WHERE active AND database = {db:String} "
                         "AND has({tables:Array(String)}, table)", {"db": self.database, "tables": tables})
        return int(found[0]["b"] or 0) if found else 0

    def footprint(self, layout: Layout) -> int:
        """Bytes on disk of the layout's active parts (its table and side tables)."""
        table = self.table(layout)
        with self._conn(hold=False) as (con, _):
            return self._parts_bytes(con, [table] + self._side_names(layout.dataset, table))

    def describe(self) -> dict[str, Any]:
        info: dict[str, Any] = {"kind": self.kind, "database": self.database, "versions": library_versions()}
        if self.server:
            server: _Server = self._backend
            info.update({"mode": "server", "host": server.host, "port": server.port, "user": server.user,
                         "secure": server.secure, "phases": "measured: decode only (query_arrow is one call); "
                         "probes: server (X-ClickHouse-Summary elapsed_ns) / transfer / decode",
                         "cold_cache": "SYSTEM DROP ... caches once per step where the server allows; "
                                       "the server's OS page cache is not controlled"})
            try:
                import clickhouse_connect
                info["clickhouse_connect"] = clickhouse_connect.__version__
                with self._conn() as (con, _):
                    said = con.rows("SELECT version() AS version, timezone() AS timezone")[0]
                info["server_version"], info["server_timezone"] = said["version"], said["timezone"]
                display = {k.lower(): v for k, v in server.ping_headers().items()}.get(
                    "x-clickhouse-server-display-name")
                if display:
                    info["server_display_name"] = display
            except Exception as exc:  # a description must never stop a run
                info["error"] = _first_line(exc)
            return info
        info.update({"mode": "embedded", "engine": "chDB", "path": str(self.path), "session": self.session_mode,
                     "phases": "query (folder turn + execution into Arrow, in-process) / decode",
                     "cold_cache": "SYSTEM DROP ... caches, then the OS cache of the folder's files"})
        try:
            import chdb
            info["chdb"] = chdb.__version__
            with self._conn(hold=False) as (con, _):
                info["clickhouse_engine"] = con.rows("SELECT version() AS v")[0]["v"]
        except Exception as exc:
            info["error"] = _first_line(exc)
        return info

    def _drop_engine_caches(self, con) -> list[str]:
        applied = []
        for command in CACHE_COMMANDS:
            try:
                con.execute(command)
                applied.append(command)
            except TargetError:
                continue
        return applied

    def drop_cache(self, layout: Layout) -> list[str]:
        """Server: its caches (``SYSTEM DROP ... CACHE``). Embedded: the OS cache of the folder's
        files (the engine's own caches live in each process: ``drop_process_cache``)."""
        if self.server:
            with self._conn() as (con, _):
                return self._drop_engine_caches(con)
        return drop_file_cache(self.data_files(layout), system_wide=system_wide_drop(self.config))

    def data_files(self, layout: Layout) -> list[Path]:
        if self.server:
            return []
        return [Path(root) / name for root, _, names in os.walk(self.path) for name in names]

    def drop_process_cache(self, layout: Layout) -> list[str]:
        if self.server:
            return []
        with self._conn() as (con, _):
            return self._drop_engine_caches(con)

    def clear_table(self, layout: Layout, table: str = "") -> None:
        if table == "minute":
            name = self.minute_table(layout)
        elif table == IMPORT_TABLE:
            name = self.import_table(layout)
        else:
            name = table or self.table(layout) + "_append"
        with self._conn(hold=False) as (con, _):
            con.execute(f"TRUNCATE TABLE IF EXISTS {self.fq(name)}")

    # --- worker side -----------------------------------------------------------------------
    def open(self, layout: Layout, worker: int = 0) -> None:
        self._dataset_info(layout)
        db = self._db()
        if isinstance(db, _Server):
            db.client()                     # connect and log in, outside timing
        else:
            db.ready()                      # load chDB; the folder is taken per operation

    def close(self) -> None:
        if self._backend is not None:
            self._backend.close()

    def _check_day(self, layout: Layout, day: dt.date) -> None:
        if day not in layout.days:
            span = f"{layout.days[0]} .. {layout.days[-1]}" if layout.days else "none"
            raise ValueError(f"{day} is not a trading day of this layout (days: {span})")

    def _day_where(self, info: DatasetInfo, day: dt.date, qualifier: str = "") -> tuple[str, dict[str, Any]]:
        """The day's condition (``qualifier``: a table alias, where the SELECT's aliases would
        otherwise shadow the columns) and its parameters."""
        column = info.schema.column(info.date_column)
        name = qualifier + quote(column.name)
        if column.ddb_type == "DATE":
            return f"{name} = {{day:Date}}", {"day": day}
        # the day comes from a timestamp (devices): a range on the sorting key's partition
        start = dt.datetime.combine(day, dt.time())
        typ = _CH_TYPES[column.ddb_type]
        return (f"{name} >= {{day_start:{typ}}} AND {name} < {{day_end:{typ}}}",
                {"day_start": start, "day_end": start + dt.timedelta(days=1)})

    @staticmethod
    def _key_param(info: DatasetInfo) -> str:
        return _INT_PARAM.get(info.schema.column(info.key_column).ddb_type, "String")

    def _select(self, layout: Layout, sql: str, params: dict[str, Any], strings: StringMode | None,
                schema: Schema | None = None) -> OpResult:
        """The user's call: the query into Arrow, then to pandas (module doc: Phases)."""
        strings = strings or layout.strings
        if self.server:
            if self.probing:
                return self._probe(sql, params, strings, schema)
            with self._conn() as (con, _):
                arrow = con.arrow(sql, params)
                t1 = _now()
            frame = frame_from_arrow(naive_times(arrow), strings)
            return OpResult(rows=len(frame), phases={"decode": _now() - t1}, frame=frame, schema=schema,
                            node=self.node)
        t0 = _now()
        with self._conn() as (con, facts):
            arrow = con.arrow(sql, params)
        t1 = _now()                          # the turn is handed back before decoding
        frame = frame_from_arrow(naive_times(arrow), strings)
        t2 = _now()
        return OpResult(rows=len(frame), phases={"query": t1 - t0, "decode": t2 - t1}, frame=frame,
                        schema=schema, extra=facts)

    def _probe(self, sql: str, params: dict[str, Any], strings: StringMode, schema: Schema | None) -> OpResult:
        server: _Server = self._backend
        t0 = _now()
        data, server_s, headers_s, _ = server.http_request(sql, params, "ArrowStream", self.database)
        t1 = _now()
        frame = frame_from_arrow(naive_times(pa.ipc.open_stream(data).read_all()), strings)
        t2 = _now()
        fetch = t1 - t0
        told = server_s is not None
        on_server = min(server_s if told else headers_s, fetch)
        return OpResult(rows=len(frame), phases={"server": on_server, "transfer": fetch - on_server, "decode": t2 - t1},
                        frame=frame, schema=schema, wire_bytes=len(data), node=self.node,
                        extra={"server_time": "X-ClickHouse-Summary elapsed_ns" if told else "time to the reply's headers"})

    def _columns(self, info: DatasetInfo, schema: Schema | None = None) -> str:
        return ", ".join(quote(n) for n in (schema or info.schema).names)

    def _stored_order(self, info: DatasetInfo, qualifier: str = "") -> str:
        return ", ".join(qualifier + quote(c) for c in dict.fromkeys((info.key_column, info.time_column, SEQ)))

    def read_day(self, layout: Layout, day: dt.date, columns: tuple[str, ...] | None = None) -> OpResult:
        self._check_day(layout, day)
        info = self._dataset_info(layout)
        schema = column_schema(info.schema, columns, layout.dataset)
        where, params = self._day_where(info, day)
        # no ORDER BY: a day read promises no order (README: one meaning per operation), as its users read it
        sql = f"SELECT {self._columns(info, schema)} FROM {self.fq(self.table(layout))} WHERE {where}"
        return self._select(layout, sql, params, None, schema)

    def read_slice(self, layout: Layout, day: dt.date, key: str) -> OpResult:
        self._check_day(layout, day)
        info = self._dataset_info(layout)
        where, params = self._day_where(info, day)
        params["key"] = key_value(info.schema.column(info.key_column), key)
        sql = (f"SELECT {self._columns(info)} FROM {self.fq(self.table(layout))} WHERE {where} "
               f"AND {quote(info.key_column)} = {{key:{self._key_param(info)}}}")
        return self._select(layout, sql, params, None, info.schema)

    def minute_bars(self, layout: Layout, day: dt.date, key: str) -> OpResult:
        self._check_day(layout, day)
        info = self._dataset_info(layout)
        bid, ask = price_columns(info)
        where, params = self._day_where(info, day)
        params["key"] = key_value(info.schema.column(info.key_column), key)
        t = quote(info.time_column)
        # first/last quote of a minute: the mid at the least/greatest arrival ordinal, which follows
        # (time, arrival) order: a day is loaded in time order (checked by _load_day)
        sql = (f"SELECT toDateTime64(toStartOfMinute({t}), 0, 'UTC') AS minute, argMin(mid, {SEQ}) AS open, "
               f"max(mid) AS high, min(mid) AS low, argMax(mid, {SEQ}) AS close "
               f"FROM (SELECT {t}, {SEQ}, ({quote(bid)} + {quote(ask)}) / 2 AS mid FROM {self.fq(self.table(layout))} "
               f"WHERE {where} AND {quote(info.key_column)} = {{key:{self._key_param(info)}}}) "
               "GROUP BY minute ORDER BY minute")
        return self._select(layout, sql, params, StringMode.ARROW)

    def append(self, layout: Layout, frame: pd.DataFrame, table: str = "") -> OpResult:
        """Rows into ``<table>_append`` (or ``table``, created on first use): an Arrow insert
        (embedded: ``INSERT ... SELECT * FROM Python(arrow)`` in the folder's turn; server:
        ``client.insert_arrow``, sending included). ``decode`` is DataFrame -> Arrow."""
        info = self._dataset_info(layout)
        target = table or self.table(layout) + "_append"
        t0 = _now()
        arrow = insert_arrow(frame, info.schema)
        t1 = _now()
        with self._conn() as (con, facts):
            if table:
                self._ensure_table(con, info, target)
            con.insert(self.fq(target), arrow)
        t2 = _now()
        return OpResult(rows=len(frame), nbytes=rows_bytes(len(frame), info.schema),
                        phases={"decode": t1 - t0, "query": t2 - t1}, extra=facts, node=self.node)

    def row_count(self, layout: Layout, table: str = "") -> int:
        """Rows in ``table`` (default: the layout's main table), for checks and reports."""
        with self._conn(hold=False) as (con, _):
            return int(con.rows(f"SELECT count() AS n FROM {self.fq(table or self.table(layout))}")[0]["n"])

    def sql_rows(self, sql: str, params: dict[str, Any] | None = None) -> list[dict[str, Any]]:
        """Rows of a statement on the engine, as dicts (checks and reports; never timed)."""
        with self._conn(hold=False) as (con, _):
            return con.rows(sql, params)

    def appended_rows(self, layout: Layout, table: str = "") -> int:
        return self.row_count(layout, table or self.table(layout) + "_append")

    # --- reports 001 and 004 -----------------------------------------------------------------
    def import_csv(self, layout: Layout, path: Path, day: dt.date) -> OpResult:
        """ClickHouse's own CSV reader into ``<table>_import``, every column read as text and
        converted from DolphinDB's text style (module doc)."""
        info = self._dataset_info(layout)
        target = self.fq(self.import_table(layout))
        select = f"INSERT INTO {target} SELECT {_from_text_sql(info.schema)} FROM "
        structure = literal(_text_structure(info.schema))
        with self._conn() as (con, facts):
            if self.server:
                rows = con.execute(select + f"input({structure}) FORMAT CSVWithNames", data=Path(path).read_bytes())
            else:
                rows = con.execute(select + f"file({literal(str(Path(path).resolve()))}, 'CSVWithNames', {structure})")
        return OpResult(rows=int(rows), nbytes=rows_bytes(int(rows), info.schema), wire_path=path,
                        extra={**facts, "queryable_s": 0.0}, node=self.node)

    def export_csv(self, layout: Layout, day: dt.date, path: Path) -> OpResult:
        """ClickHouse's own CSV writer (``CSVWithNames``), one day in stored order; the rows are
        counted after the timed span."""
        self._check_day(layout, day)
        info = self._dataset_info(layout)
        # the text columns keep the columns' names: the condition and order name the table's own
        where, params = self._day_where(info, day, "src.")
        table = self.fq(self.table(layout))
        sql = (f"SELECT {_to_text_sql(info.schema, 'src.')} FROM {table} AS src WHERE {where} "
               f"ORDER BY {self._stored_order(info, 'src.')}")
        path = Path(path)
        with self._conn() as (con, facts):
            if self.server:
                con.stream_to(sql, params, "CSVWithNames", path)
            else:
                con.execute(f"{sql} INTO OUTFILE {literal(str(path.resolve()))} TRUNCATE FORMAT CSVWithNames", params)

        def count() -> int:
            with self._conn() as (counter, _):
                return int(counter.rows(f"SELECT count() AS n FROM {table} AS src WHERE {where}", params)[0]["n"])
        return OpResult(rows=None, count_rows=count, schema=info.schema, wire_path=path, extra=facts, node=self.node)

    def footprint_detail(self, layout: Layout, table: str = "") -> Footprint:
        """``system.parts`` bytes on disk of the active parts; per column ``system.columns``
        compressed bytes (``_seq``, the arrival ordinal, included: it is stored)."""
        name = self.import_table(layout) if table == IMPORT_TABLE else self.table(layout)
        with self._conn(hold=False) as (con, _):
            total = con.rows("SELECT count() AS parts, sum(bytes_on_disk) AS b FROM system.parts "
                             "WHERE active AND database = {db:String} AND table = {t:String}",
                             {"db": self.database, "t": name})[0]
            if not int(total["parts"] or 0):
                return Footprint(bytes=0, method=f"{name} has no data yet")
            columns = {r["name"]: int(r["b"]) for r in con.rows(
                "SELECT name, data_compressed_bytes AS b FROM system.columns "
                "WHERE database = {db:String} AND table = {t:String}", {"db": self.database, "t": name})}
        return Footprint(bytes=int(total["b"] or 0), columns=columns, replicas=1,
                         method="system.parts bytes_on_disk; system.columns data_compressed_bytes per column")

    def run_query(self, layout: Layout, query, values: dict[str, Any]) -> OpResult:
        """The suite's ClickHouse SQL with ``{quotes}``/``{readings}``/``{info}`` as this layout's
        tables and its ``{name:Type}`` parameters bound by the engine."""
        text = query.text(self.query_dialect)
        if text is None:
            raise NotSupported(f"query {query.id} has no ClickHouse text")
        table = self.table(layout)
        tables = {"quotes": self.fq(table), "readings": self.fq(table), "info": self.fq(f"{table}_info")}
        sql = _TABLE_PLACEHOLDER.sub(lambda m: tables[m.group(1)], text)
        used = set(_PARAMETER.findall(sql))
        return self._select(layout, sql, {k: v for k, v in values.items() if k in used}, StringMode.ARROW)

    # --- report 003's computations, in SQL (definitions: workloads/targets/quotes.py) -----------
    def _quote_sql(self, layout: Layout, days) -> tuple[QuoteColumns, str, dict[str, Any]]:
        try:
            cols = quote_columns(self._dataset_info(layout))
            first, last = day_span(layout.days, days)
        except ValueError as exc:
            raise TargetError(f"{layout.dataset}: {exc}") from None
        return cols, f"{quote(cols.date)} BETWEEN {{first:Date}} AND {{last:Date}}", {"first": first, "last": last}

    @staticmethod
    def _seed_filter(cols: QuoteColumns) -> str:
        """Report 003's filters: regular hours (whole seconds of the day), ask > bid > 0, ask/bid < 1.2."""
        t, b, a = quote(cols.time), quote(cols.bid), quote(cols.ask)
        second = f"(toHour({t}) * 3600 + toMinute({t}) * 60 + toSecond({t}))"
        lo = SESSION_OPEN.hour * 3600 + SESSION_OPEN.minute * 60 + SESSION_OPEN.second
        hi = SESSION_CLOSE.hour * 3600 + SESSION_CLOSE.minute * 60 + SESSION_CLOSE.second
        return f"{second} BETWEEN {lo} AND {hi} AND {a} > {b} AND {b} > 0 AND {a} > 0 AND {a} / {b} < {MAX_ASK_BID_RATIO}"

    def spread_by_minute(self, layout: Layout, days=()) -> OpResult:
        cols, where, params = self._quote_sql(layout, days)
        t, b, a = quote(cols.time), quote(cols.bid), quote(cols.ask)
        sql = (f"SELECT toDateTime64(toStartOfMinute({t}), 0, 'UTC') AS minute, "
               f"avg(({a} - {b}) / ({a} + {b}) * 2) AS avgSpread FROM {self.fq(self.table(layout))} "
               f"WHERE {where} AND {self._seed_filter(cols)} GROUP BY minute ORDER BY minute")
        return self._select(layout, sql, params, StringMode.ARROW)

    def ols_spread(self, layout: Layout, days=()) -> OpResult:
        cols, where, params = self._quote_sql(layout, days)
        b, a = quote(cols.bid), quote(cols.ask)
        size = f"(toFloat64({quote(cols.bid_size)}) + {quote(cols.ask_size)})"
        sql = ("SELECT count() AS n, avg(x) AS ax, avg(y) AS ay, varPopStable(x) * count() AS sxx, "
               "varPopStable(y) * count() AS syy, covarPopStable(x, y) * count() AS sxy "
               f"FROM (SELECT {a} / {b} - 1 AS y, {size} * ({a} + {b}) / 2 AS x "
               f"FROM {self.fq(self.table(layout))} WHERE {where} AND {self._seed_filter(cols)})")
        if self.server and self.probing:
            probe = self._probe(sql, params, StringMode.ARROW, None)
            sums = probe.frame.iloc[0].tolist()
        else:
            t0 = _now()
            with self._conn() as (con, facts):
                sums = list(con.rows(sql, params)[0].values())
            t1 = _now()
        start = _now()
        try:
            frame = ols_from_sums(*sums)     # two rows from six sums: the decode of this query
        except ValueError as exc:
            raise TargetError(f"{layout.dataset}: {exc}") from None
        if self.server and self.probing:
            probe.phases["decode"] += _now() - start
            probe.frame = frame
            probe.rows = len(frame)
            probe.extra["observations"] = int(sums[0] or 0)
            return probe
        phases = {"query": t1 - t0, "decode": _now() - start} if not self.server else {"decode": _now() - start}
        return OpResult(rows=len(frame), phases=phases, frame=frame, node=self.node,
                        extra={**facts, "observations": int(sums[0] or 0)})

    def mapreduce_minute_bars(self, layout: Layout, days=()) -> OpResult:
        """Report 003 (b): minute quotes of the span INSERTed into the layout's minute table; the
        answer is the number of bars written (the engine's written-rows count)."""
        cols, where, params = self._quote_sql(layout, days)
        k, d, t, b, a = (quote(c) for c in (cols.key, cols.date, cols.time, cols.bid, cols.ask))
        minute = self.fq(self.minute_table(layout))
        t0 = _now()
        with self._conn() as (con, facts):
            con.execute(f"CREATE TABLE IF NOT EXISTS {minute} ({k} LowCardinality(String), {d} Date, "
                        f"minute DateTime64(0, 'UTC'), {b} Float64, {a} Float64) "
                        f"ENGINE = MergeTree PARTITION BY {d} ORDER BY ({k}, minute)")
            bars = con.execute(
                f"INSERT INTO {minute} SELECT {k}, {d}, toDateTime64(toStartOfMinute({t}), 0, 'UTC') AS minute, "
                f"avg({b}), avg({a}) FROM {self.fq(self.table(layout))} WHERE {where} GROUP BY {k}, {d}, minute",
                params)
        t1 = _now()
        frame = pd.DataFrame({"bars": [int(bars)]})
        return OpResult(rows=len(frame), phases={"query": t1 - t0, "decode": _now() - t1}, frame=frame,
                        extra={"bars": int(bars), **facts}, node=self.node)
