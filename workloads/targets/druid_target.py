"""Apache Druid: a user's Druid (or Tickbench's local one) over plain HTTP, as report 001 ran it.

Config keys (plain data, rebuilt in every worker process):

- ``host`` (required), ``port``: the broker's (or router's) HTTP port, default 8082: SQL
  (``/druid/v2/sql``), native queries (``/druid/v2``), ``/status``.
- ``coordinator_port`` (default 8081): the coordinator (segments, ``markUnused``);
  ``overlord_port`` (default: the coordinator's, as in the local engine where the coordinator is
  also the overlord): ingestion tasks.
- ``user``, ``password``: HTTP basic auth (Druid's basic-security extension), optional.
- ``data_folder``: where prepare writes the days' input files for native batch ingestion (the
  ``local`` input source): it must be readable by the server's indexer AT THE SAME PATH (the local
  engine's own folder; for a user's server, a shared mount). Default
  ``<datasets dir>/druid-input``. Imports read the dataset's CSV files by their path, the same rule.
- ``segment_cache``: the historical's segment-cache folder when it is on this machine (the local
  engine sets it): footprint's run-time space and the cold cache use it.
- ``drop_caches`` (bool, default false): a cold step may also write ``/proc/sys/vm/drop_caches``.
- ``timeout`` (connect/reply, s, default 600), ``task_timeout_s`` (an ingestion task, default 1800).
- ``local_engine``: true when Tickbench started the server (describe() says so).

No client library: stdlib ``http.client``; replies parsed with pyarrow's CSV reader.

Layout (report 001's): one datasource per dataset and scale, ``tickbench_<dataset>_<scale key>``,
``segmentGranularity`` DAY, ``queryGranularity`` NONE, rollup off. ``__time`` is the row's
timestamp in milliseconds: TAQ's ``date`` + ``time`` joined at ingestion (read back as DuckDB has
them: ``date`` the day, ``time`` the time of day on 1970-01-01), devices' ``time``. Strings are
string dimensions, integers ``long``, doubles ``double``; ``_seq`` (long) is each row's arrival
ordinal within its day, so the first/last quote of a minute (``EARLIEST_BY``/``LATEST_BY`` on
``MILLIS_TO_TIMESTAMP(_seq)``) equal DuckDB's (quotes are stamped to the second: ``EARLIEST`` on
``__time`` alone would pick among a second's quotes arbitrarily).
Beside it: ``_append``, ``_import``, ``_info`` (devices) and the manifest datasource
``tickbench_layouts`` (one row per prepare: format, scale with the content id, days, rows,
keys sample, schema, versions; the newest row wins).

Loading: Druid has no client insert of DataFrames. Prepare writes each missing day as a CSV file
(``__time`` in ms, then the columns) into ``data_folder``, submits ONE ``index_parallel`` task over
those files (``local`` input source, intervals = those days: a day that was half loaded is
replaced), waits for it and until the broker counts every day's rows, then deletes the files.
A second prepare finds the manifest and reuses; an interrupted one reloads only the days whose
counts are short. Side tables (devices' info) go in as ``inline`` data.

Appends (``append``): each is an ``index_parallel`` task with ``appendToExisting`` and the rows
inline (CSV), timed from the submission until the task succeeds (seconds each: Druid's cost of a
small write); ``extra["queryable_s"]`` is the time after that until the batch's rows are visible
to SQL. ``clear_table`` marks the datasource's segments unused and waits until the broker sees none.

Meaning of the reads (issue 21): ``read_day`` and ``read_slice`` return the day's (key-day's) rows
in the order Druid returns them (its segments' order; no ``ORDER BY``, no sort on the client:
order is not part of those answers, ``verify`` compares them order-free); ``minute_bars`` returns
bars ordered by minute (``ORDER BY 1``: order is part of that answer).

Read path: SQL over HTTP with ``resultFormat`` csv read by pyarrow's CSV reader, ``__time`` asked
as milliseconds. Measured for a 1 M-row TAQ day (warm, median of 3): csv 6.05 s, ``objectLines`` +
``pyarrow.json`` 8.55 s, ``array`` + ``json.loads`` 8.57 s, of which Druid's own exchange is 5.7 s;
``__time`` as ISO text instead of milliseconds 0.5 s more. The hand-written path
(``workloads/practitioner/druid_paths.py``) makes the same request: ``describe()["read_path"]``.

Phases: a measured read is ONE HTTP request/response (SQL, ``resultFormat`` csv): the server's
work and the transfer cannot be told apart there, so it has only ``decode`` (CSV to Arrow, the
day and time of day from ``__time``, to pandas). Druid reports no execution time in a SQL reply; probe
operations split it by the clock: ``server`` = time to the reply's first byte (Druid streams
results: work after the first row overlaps the transfer), ``transfer`` = the rest up to the last
byte, ``decode`` as measured. Query cache off on every query (context ``useCache=false,
populateCache=false``), as report 001 ran it.

Cold cache: Druid has no cache drop for users; its segments are memory-mapped files of the
historical's segment cache. ``drop_cache`` asks the OS to evict those files of this datasource
(``posix_fadvise``; ``drop_caches`` too when asked for) when ``segment_cache`` is a folder here (the
local engine), but the pages the historical has mapped stay: the kernel's count of them after the
clear (``workloads.cold``) then says no read was cold, which is the truth. For a remote server
nothing can be applied and nothing is listed.

Reports 001/004: suite texts in the ``druid`` dialect (``resources/queries/*.druid.toml``), with
``{quotes}``/``{readings}``/``{info}`` as datasources and ``{name}`` parameters bound as Druid SQL
``?`` parameters (a list becomes ``?, ?, ...``; a date or time a TIMESTAMP; a time of day its
milliseconds since midnight). Import: native batch ingestion of the CSV file (``local`` input
source) with transforms from DolphinDB's text style. Export: the broker's CSV reply (Druid's own
CSV writer; MSQ export needs an extension the local engine lacks), ISO text, in time order.
Report 003: spread by minute and OLS sums in SQL; the map-reduce into a table (``<table>_minute``)
is an ``INSERT ... SELECT`` run by Druid's multi-stage-query engine (``/druid/v2/sql/task``) when
the server has the ``druid-multi-stage-query`` extension, found by asking it (``/status`` lists its
loaded modules); a server without it gets the one-line verdict "this server has no
multi-stage-query extension" (``NotSupported``: the server's limit; the run goes on).
Footprint: ``sys.segments`` size of the active segments; per column the segment metadata
query's ``size`` analysis (Druid's estimate of each column's size); ``runtime_bytes`` the segment
cache's folder for the datasource (report 001's run-time space).
"""
from __future__ import annotations

import base64
import csv
import datetime as dt
import http.client
import io
import json
import re
import time
import uuid
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv

from workloads.datasets.base import side_tables
from workloads.datasets.schema import Column, DatasetInfo, Scale, Schema, StringMode
from workloads.targets.arrow_frames import arrow_schema, frame_from_arrow, key_value, library_versions
from workloads.targets.bars import price_columns
from workloads.targets.base import (IMPORT_TABLE, Footprint, Layout, NotSupported, OpResult, ProgressCallback,
                                    Target, TargetError)
from workloads.targets.cache import drop_file_cache, system_wide_drop
from workloads.targets.columns import column_schema
from workloads.targets.quotes import (MAX_ASK_BID_RATIO, SESSION_CLOSE, SESSION_OPEN, QuoteColumns, day_span,
                                      ols_from_sums, quote_columns)
from workloads.targets.sizes import rows_bytes
from workloads.targets.storage import disk_full_error
from workloads.targets.lazy import get_dataset as _get_dataset
from workloads.text import plural

LAYOUT_FORMAT = 1
KEYS_SAMPLE = 100
DEFAULT_PORT = 8082
DEFAULT_COORDINATOR_PORT = 8081
MANIFEST = "tickbench_layouts"
SEQ = "_seq"
TS = "__ts"                        # the ingestion files' timestamp column (ms), becomes __time
DAY_MS = 86_400_000
ZNODE_LIMIT = 512 * 1024       # druid.indexer.runner.maxZnodeBytes' default (the ZooKeeper task runner)
CONTEXT = {"useCache": False, "populateCache": False, "sqlTimeZone": "Etc/UTC"}
# issue 21: measured beside the hand-written path (workloads/practitioner/druid_paths.py)
READ_PATH = ("Druid's fastest documented path measured: SQL over HTTP, resultFormat csv (objectLines + pyarrow.json "
             "and array + json.loads were 1.4x slower), pyarrow CSV reader, no sort: the hand-written path's request; "
             "1 M-row TAQ day, warm, median of 7, interleaved, three runs on a shared 2-core machine: day 3.4-7.1 s, "
             "ratio 0.98-1.01 (7,655 ms before, with a client sort into key, time, arrival order), of which Druid's "
             "own exchange is ~95 %; slice 0.99-1.12 (median 1.05 over 8 runs); bars 0.90-1.16 (median 1.02 over 4)")
MSQ_ARTIFACT = "druid-multi-stage-query"
MSQ_CONTEXT = {"maxNumTasks": 2, "finalizeAggregations": True}     # a controller and one worker
NO_MSQ = ("this server has no multi-stage-query extension (its /status lists no druid-multi-stage-query "
          "module): Druid writes a table from a query only through it")
_TEMPORAL = frozenset({"DATE", "SECOND", "TIME", "TIMESTAMP"})
_OF_DAY = frozenset({"SECOND", "TIME"})
_DIM_TYPES = {"DOUBLE": "double", "FLOAT": "float", "CHAR": "long", "SHORT": "long", "INT": "long", "LONG": "long",
              "BOOL": "long"}
_PLACEHOLDER = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")
_TABLES = ("quotes", "readings", "info")


def _now() -> float:
    return time.perf_counter()


def quote(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def _ts_literal(value: dt.datetime | dt.date) -> str:
    if not isinstance(value, dt.datetime):
        value = dt.datetime.combine(value, dt.time())
    return f"TIMESTAMP '{value.isoformat(sep=' ', timespec='milliseconds')}'"


def _ts_ms(day: dt.date) -> int:
    """Milliseconds from 1970-01-01 to the day's midnight (UTC)."""
    return (day - dt.date(1970, 1, 1)).days * DAY_MS


def table_name(dataset: str, scale: Scale) -> str:
    return re.sub(r"[^A-Za-z0-9_]", "_", f"tickbench_{dataset}_{scale.key()}")


def _first_line(text: Any) -> str:
    lines = str(text).strip().splitlines()
    return lines[0] if lines else ""



# --- how a dataset's columns map to Druid's -------------------------------------------------------
class _Shape:
    """Which columns make ``__time`` and how the rest are stored."""

    def __init__(self, info: DatasetInfo, schema: Schema | None = None):
        self.schema = schema or info.schema
        self.info = info
        date = self.schema.column(info.date_column) if info.date_column in self.schema.names else None
        time_col = self.schema.column(info.time_column) if info.time_column in self.schema.names else None
        if date is not None and date.ddb_type == "DATE" and time_col is not None and time_col.ddb_type in _OF_DAY:
            self.time_parts = (date.name, time_col.name)         # taq: date + time of day
        elif date is not None and date.ddb_type in _TEMPORAL:
            self.time_parts = (date.name,)                       # devices: one timestamp
        else:
            self.time_parts = ()                                 # a side table: a constant time
        self.stored = [c for c in self.schema.columns if c.name not in self.time_parts]

    def dimensions(self, seq: bool) -> list[dict[str, str]]:
        dims = []
        for c in self.stored:
            kind = "string" if c.is_string else ("long" if c.ddb_type in _TEMPORAL else _DIM_TYPES[c.ddb_type])
            dims.append({"type": kind, "name": c.name})
        if seq:
            dims.append({"type": "long", "name": SEQ})
        return dims

    def millis(self, frame: pd.DataFrame) -> np.ndarray:
        if not self.time_parts:
            return np.full(len(frame), 946684800000, dtype=np.int64)   # 2000-01-01
        total = np.zeros(len(frame), dtype=np.int64)
        for name in self.time_parts:
            total += frame[name].to_numpy().astype("datetime64[ms]").astype(np.int64)
        return total

    def input_table(self, frame: pd.DataFrame, seq_start: int | None) -> pa.Table:
        """A frame as the ingestion file's columns: __ts (ms), the stored columns, _seq."""
        columns = {TS: pa.array(self.millis(frame))}
        for c in self.stored:
            values = frame[c.name]
            if c.ddb_type in _TEMPORAL:
                columns[c.name] = pa.array(values.to_numpy().astype("datetime64[ms]").astype(np.int64))
            elif c.is_string:
                columns[c.name] = pa.array(values.astype(object).to_numpy(), pa.string())
            else:
                columns[c.name] = pa.array(values.to_numpy())
        if seq_start is not None:
            columns[SEQ] = pa.array(np.arange(seq_start, seq_start + len(frame), dtype=np.int64))
        return pa.table(columns)

    def _read_columns(self, names: Iterable[str] | None) -> list[Column]:
        """The stored columns a read of ``names`` (None: every column) selects."""
        if names is None:
            return self.stored
        keep = set(names)
        return [c for c in self.stored if c.name in keep]

    def select_list(self, names: Iterable[str] | None = None) -> str:
        """What a read selects: the ms timestamp, then the stored columns (of ``names`` only)."""
        return ", ".join(["TIMESTAMP_TO_MILLIS(__time) AS " + quote(TS)]
                         + [quote(c.name) for c in self._read_columns(names)])

    def reply_types(self, seq: bool = False, names: Iterable[str] | None = None) -> dict[str, pa.DataType]:
        types = {TS: pa.int64()}
        for c in self._read_columns(names):
            types[c.name] = pa.string() if c.is_string else (
                pa.int64() if c.ddb_type in _TEMPORAL or _DIM_TYPES[c.ddb_type] == "long" else pa.float64())
        if seq:
            types[SEQ] = pa.int64()
        return types

    def to_schema(self, table: pa.Table, schema: Schema | None = None) -> pa.Table:
        """A reply (ms timestamp + stored columns) as the dataset schema's Arrow table, or as
        ``schema``'s (some of its columns)."""
        target = arrow_schema(schema or self.schema)
        ms = table.column(TS)
        arrays = []
        for field in target:
            name = field.name
            if name in self.time_parts:
                if len(self.time_parts) == 2:
                    day = pc.multiply(pc.divide(ms, DAY_MS), DAY_MS)
                    part = day if name == self.time_parts[0] else pc.subtract(ms, day)
                else:
                    part = ms
                arrays.append(part.cast(pa.timestamp("ms")).cast(field.type))
            elif field.type == pa.timestamp("ns"):
                arrays.append(table.column(name).cast(pa.timestamp("ms")).cast(field.type))
            else:
                arrays.append(table.column(name).cast(field.type))
        return pa.Table.from_arrays(arrays, schema=target)


def _csv_table(data: bytes, types: dict[str, pa.DataType]) -> pa.Table:
    names = list(types)
    if not data.strip():
        return pa.table({n: pa.array([], t) for n, t in types.items()})
    return pacsv.read_csv(io.BytesIO(data), read_options=pacsv.ReadOptions(column_names=names),
                          convert_options=pacsv.ConvertOptions(column_types=types, strings_can_be_null=False,
                                                               quoted_strings_can_be_null=False))


_SQL_ARROW = {"BIGINT": pa.int64(), "INTEGER": pa.int64(), "SMALLINT": pa.int64(), "TINYINT": pa.int64(),
              "DOUBLE": pa.float64(), "FLOAT": pa.float64(), "REAL": pa.float64(), "DECIMAL": pa.float64(),
              "BOOLEAN": pa.int64()}


def _typed_reply(data: bytes) -> pa.Table:
    """A CSV reply with its header, Druid type and SQL type lines, as Arrow: timestamps naive UTC."""
    lines = data.split(b"\n", 3)
    names = next(csv.reader([lines[0].decode()])) if lines[0] else []
    sql_types = lines[2].decode().strip().split(",") if len(lines) > 2 else []
    body = lines[3] if len(lines) > 3 else b""
    names = [f"c{i}_{n}" for i, n in enumerate(names)]      # unique, order kept
    types = {n: (pa.string() if t in ("TIMESTAMP", "DATE") else _SQL_ARROW.get(t, pa.string()))
             for n, t in zip(names, sql_types)}
    table = _csv_table(body, types)
    arrays = []
    for name, sql_type in zip(names, sql_types):
        column = table.column(name)
        if sql_type in ("TIMESTAMP", "DATE"):
            column = pc.strptime(pc.replace_substring(column, "Z", ""), "%Y-%m-%dT%H:%M:%S", "ms",
                                 error_is_null=True) if len(column) and not _has_fraction(column) else \
                pc.cast(pc.replace_substring(pc.replace_substring(column, "Z", ""), "T", " "), pa.timestamp("ms"))
        arrays.append(column)
    return pa.Table.from_arrays(arrays, names=names)


def _has_fraction(column) -> bool:
    return "." in str(column[0].as_py() or "")


# --- HTTP -------------------------------------------------------------------------------------------
class _Http:
    def __init__(self, config: dict[str, Any]):
        self.host = str(config.get("host") or "").strip()
        if not self.host:
            raise TargetError("Druid: no host configured (host: the broker's address)")
        try:
            self.port = int(config.get("port") or DEFAULT_PORT)
            self.coordinator_port = int(config.get("coordinator_port") or DEFAULT_COORDINATOR_PORT)
            self.overlord_port = int(config.get("overlord_port") or self.coordinator_port)
        except (TypeError, ValueError):
            raise TargetError(f"Druid port {config.get('port')!r} (or coordinator/overlord port) is not a number") \
                from None
        self.user = str(config.get("user") or "")
        self.password = str(config.get("password") or "")
        self.timeout = float(config.get("timeout") or 600.0)
        self.address = f"{self.host}:{self.port}"
        self._conns: dict[int, http.client.HTTPConnection] = {}

    def _headers(self, content_type: str = "application/json") -> dict[str, str]:
        headers = {"Content-Type": content_type}
        if self.user or self.password:
            token = base64.b64encode(f"{self.user}:{self.password}".encode()).decode()
            headers["Authorization"] = f"Basic {token}"
        return headers

    def exchange(self, method: str, path: str, body: Any = None, port: int | None = None,
                 sink=None) -> tuple[int, bytes, float, float]:
        """One request: (status, reply bytes, seconds to the first byte, seconds in all). ``sink``:
        a file the reply is streamed to instead."""
        port = port or self.port
        payload = json.dumps(body).encode() if body is not None else None
        for attempt in (0, 1):       # a kept-alive connection the server closed: once more, afresh
            conn = self._conns.get(port)
            if conn is None:
                conn = self._conns[port] = http.client.HTTPConnection(self.host, port, timeout=self.timeout)
            try:
                start = _now()
                conn.request(method, path, payload, self._headers())
                response = conn.getresponse()
                first = _now()
                if sink is not None and response.status == 200:
                    while chunk := response.read(1 << 20):
                        sink.write(chunk)
                    data = b""
                else:
                    data = response.read()
                return response.status, data, first - start, _now() - start
            except (http.client.HTTPException, OSError) as exc:
                conn.close()
                self._conns.pop(port, None)
                if attempt or isinstance(exc, ConnectionRefusedError) or sink is not None:
                    raise self.error(exc, port) from None
        raise AssertionError("unreachable")

    def error(self, exc: BaseException, port: int) -> TargetError:
        low = str(exc).lower()
        where = f"Druid at {self.host}:{port}"
        if isinstance(exc, ConnectionRefusedError) or "refused" in low:
            return TargetError(f"{where}: connection refused (no server listening there; is {port} the "
                               f"{'broker' if port == self.port else 'coordinator/overlord'}'s HTTP port?)")
        if "timed out" in low:
            return TargetError(f"{where}: no answer within {self.timeout:g} s")
        if "name or service not known" in low or "nodename nor servname" in low:
            return TargetError(f"{where}: cannot resolve host {self.host!r}")
        return TargetError(f"{where}: {_first_line(exc) or type(exc).__name__}")

    def check(self, status: int, data: bytes, port: int | None = None) -> bytes:
        if status in (200, 202):        # 202 Accepted: /druid/v2/sql/task took a multi-stage query
            return data
        where = f"Druid at {self.host}:{port or self.port}"
        if status in (401, 403):
            return _raise(TargetError(f"{where}: authentication failed for user {self.user!r} (wrong password, "
                                      "or no such user)" if status == 401 else
                                      f"{where}: user {self.user!r} is not allowed to do this (HTTP 403)"))
        text = data.decode(errors="replace")
        try:
            said = json.loads(text)
            text = said.get("errorMessage") or said.get("error") or text
        except (ValueError, AttributeError):
            pass
        raise TargetError(f"{where} answered (HTTP {status}): {_first_line(text)}")

    def json(self, method: str, path: str, body: Any = None, port: int | None = None) -> Any:
        status, data, _, _ = self.exchange(method, path, body, port)
        data = self.check(status, data, port)
        return json.loads(data) if data.strip() else None

    def sql(self, query: str, parameters: list | None = None, fmt: str = "csv", header: bool = False,
            types: bool = False, sink=None) -> tuple[bytes, float, float]:
        body = {"query": query, "resultFormat": fmt, "header": header, "context": CONTEXT}
        if types:
            body.update({"header": True, "typesHeader": True, "sqlTypesHeader": True})
        if parameters:
            body["parameters"] = parameters
        status, data, first, total = self.exchange("POST", "/druid/v2/sql", body, sink=sink)
        return self.check(status, data), first, total

    def rows(self, query: str, parameters: list | None = None) -> list[dict[str, Any]]:
        data, _, _ = self.sql(query, parameters, fmt="object")
        return json.loads(data) if data.strip() else []

    def close(self) -> None:
        for conn in self._conns.values():
            conn.close()
        self._conns.clear()


def _raise(exc: BaseException):
    raise exc


def _param(value: Any) -> list[dict[str, Any]]:
    """A suite value as Druid SQL parameters (a list: one per element)."""
    if isinstance(value, (list, tuple)):
        return [p for v in value for p in _param(v)]
    if isinstance(value, (pd.Timestamp, np.datetime64)):
        value = pd.Timestamp(value).to_pydatetime()
    if isinstance(value, dt.datetime):     # ISO with a T: Druid 33 rejects "yyyy-MM-dd HH:mm:ss.SSS" (HTTP 500)
        return [{"type": "TIMESTAMP", "value": value.isoformat(sep="T", timespec="milliseconds")}]
    if isinstance(value, dt.date):
        return [{"type": "TIMESTAMP", "value": f"{value.isoformat()} 00:00:00"}]
    if isinstance(value, dt.time):
        return [{"type": "BIGINT", "value": ((value.hour * 60 + value.minute) * 60 + value.second) * 1000
                 + value.microsecond // 1000}]
    if isinstance(value, (bool, np.bool_)):
        return [{"type": "BOOLEAN", "value": bool(value)}]
    if isinstance(value, (int, np.integer)):
        return [{"type": "BIGINT", "value": int(value)}]
    if isinstance(value, (float, np.floating)):
        return [{"type": "DOUBLE", "value": float(value)}]
    return [{"type": "VARCHAR", "value": str(value)}]


# DolphinDB's text style (workloads.datasets.csv_files) to Druid's values, as ingestion transforms
_LETTERS = [chr(c) for c in range(32, 127) if chr(c) not in "'\\"]


def _char_code(name: str) -> str:
    pairs = ", ".join(f"'{ch}', {ord(ch)}" for ch in _LETTERS)
    return f"case_simple(\"{name}\", {pairs}, null)"


def _char_letter(name: str) -> str:
    pairs = " ".join(f"WHEN {ord(ch)} THEN {literal(ch)}" for ch in _LETTERS)
    return f"CASE {quote(name)} {pairs} END"


class DruidTarget(Target):
    kind = "druid"
    query_dialect = "druid"
    read_phases = ("server", "transfer", "decode")
    probed_ops = frozenset({"read_day", "read_slice", "minute_bars", "spread_by_minute", "ols_spread", "run_query"})

    def __init__(self, config: dict[str, Any]):
        super().__init__(config)
        self.http = _Http(self.config)
        self._info: DatasetInfo | None = None
        self._msq: bool | None = None

    # --- configuration -----------------------------------------------------------------------
    @property
    def data_folder(self) -> Path:
        folder = self.config.get("data_folder")
        if not folder:
            from workloads.paths import default_datasets_dir
            return default_datasets_dir() / "druid-input"
        return Path(folder)

    @property
    def node(self) -> str:
        return self.http.address

    def _dataset_info(self, layout: Layout) -> DatasetInfo:
        if self._info is None or self._info.name != layout.dataset:
            self._info = _get_dataset(layout.dataset).info
        return self._info

    def table(self, layout: Layout) -> str:
        return table_name(layout.dataset, layout.scale)

    def import_table(self, layout: Layout) -> str:
        return self.table(layout) + "_import"

    def append_table(self, layout: Layout) -> str:
        return self.table(layout) + "_append"

    # --- the server's plumbing ----------------------------------------------------------------
    def datasources(self) -> set[str]:
        return {r["TABLE_NAME"] for r in self.http.rows(
            "SELECT TABLE_NAME FROM INFORMATION_SCHEMA.TABLES WHERE TABLE_SCHEMA = 'druid'")}

    def count(self, datasource: str, where: str = "TRUE", parameters: list | None = None) -> int:
        if datasource not in self.datasources():
            return 0
        try:
            found = self.http.rows(f"SELECT COUNT(*) AS n FROM {quote(datasource)} WHERE {where}", parameters)
        except TargetError as exc:
            # the broker can drop the datasource between the two questions (a clear under way)
            if f"Object '{datasource}' not found" in str(exc):
                return 0
            raise
        return int(found[0]["n"]) if found else 0

    def run_task(self, spec: dict[str, Any], what: str) -> str:
        """Submit an ingestion task and wait until it succeeds; its id."""
        size = len(json.dumps(spec))
        answer = self.http.json("POST", "/druid/indexer/v1/task", spec, port=self.http.overlord_port)
        return self.wait_task(answer["task"], what, size)

    def wait_task(self, task: str, what: str, size: int = 0) -> str:
        """Wait until the overlord says task ``task`` succeeded; its id (a failure: its message)."""
        deadline = time.monotonic() + float(self.config.get("task_timeout_s") or 1800)
        delay = 0.05
        while True:
            status = self.http.json("GET", f"/druid/indexer/v1/task/{task}/status", port=self.http.overlord_port)
            state = ((status or {}).get("status") or {})
            code = state.get("statusCode") or state.get("status")
            if code == "SUCCESS":
                return task
            if code == "FAILED":
                message = _first_line(state.get('errorMsg') or 'no message; see the task log')
                if "failed to assign" in message.lower() and size > ZNODE_LIMIT:       # an ingestion spec
                    message += (f" (this task's spec is {size / 1024:,.0f} KiB: an overlord with the ZooKeeper "
                                f"task runner refuses specs over {ZNODE_LIMIT // 1024} KiB; use smaller batches, "
                                "druid.indexer.runner.type=httpRemote or a larger druid.indexer.runner.maxZnodeBytes)")
                raise TargetError(f"Druid ingestion task {task} ({what}) failed: {message}")
            if time.monotonic() > deadline:
                raise TargetError(f"Druid ingestion task {task} ({what}) did not finish in time")
            time.sleep(delay)
            delay = min(delay * 1.5, 0.5)

    def wait_visible(self, ready, what: str, deadline_s: float = 300.0) -> float:
        """Poll until ``ready()``; seconds it took."""
        start = time.monotonic()
        delay = 0.05
        while not ready():
            if time.monotonic() - start > deadline_s:
                raise TargetError(f"Druid: {what} not visible to queries after {deadline_s:g} s")
            time.sleep(delay)
            delay = min(delay * 1.5, 0.5)
        return time.monotonic() - start

    @staticmethod
    def _spec(datasource: str, input_source: dict, dims: list[dict], intervals: list[str] | None,
              append: bool, input_format: dict | None = None, transforms: list | None = None,
              timestamp: dict | None = None, strict: bool = False) -> dict[str, Any]:
        granularity = {"segmentGranularity": "DAY", "queryGranularity": "NONE", "rollup": False}
        if intervals:
            granularity["intervals"] = intervals
        return {"type": "index_parallel", "spec": {
            "dataSchema": {"dataSource": datasource,
                           "timestampSpec": timestamp or {"column": TS, "format": "millis"},
                           "dimensionsSpec": {"dimensions": dims}, "granularitySpec": granularity,
                           "transformSpec": {"transforms": transforms or []}},
            "ioConfig": {"type": "index_parallel", "inputSource": input_source,
                         "inputFormat": input_format or {"type": "csv", "findColumnsFromHeader": True},
                         "appendToExisting": append},
            "tuningConfig": {"type": "index_parallel", "maxNumConcurrentSubTasks": 1,
                             "partitionsSpec": {"type": "dynamic"},
                             **({"maxParseExceptions": 0} if strict else {})}}}

    @staticmethod
    def _interval(day: dt.date) -> str:
        return f"{day.isoformat()}/{(day + dt.timedelta(days=1)).isoformat()}"

    @staticmethod
    def _day_where(day: dt.date) -> str:
        return f"__time >= {_ts_literal(day)} AND __time < {_ts_literal(day + dt.timedelta(days=1))}"

    # --- parent side ------------------------------------------------------------------------
    def prepare(self, dataset: str, scale: Scale, strings: StringMode,
                progress: ProgressCallback | None = None) -> Layout:
        strings = StringMode.parse(strings)
        ds = _get_dataset(dataset)
        info: DatasetInfo = ds.info
        table = table_name(dataset, scale)
        days = list(ds.trading_days(scale))
        scale_json = json.dumps({**scale.__dict__, "content": ds.content_id}, sort_keys=True, default=str)
        keys = [str(k) for k in ds.keys(scale)[:KEYS_SAMPLE]]
        existing = self.datasources()
        row = self._manifest_row(table) if MANIFEST in existing else None
        if (row and int(row["format"]) == LAYOUT_FORMAT and row["scale"] == scale_json and table in existing
                and json.loads(row["days"]) == [{"date": d.isoformat(), "rows": n} for d, n in
                                                zip(days, ds.day_rows(scale))]
                and self._side_tables_ready(ds, scale, table, existing)):
            return self._layout(dataset, scale, strings, days, json.loads(row["keys_sample"]), table,
                                sum(ds.day_rows(scale)), reused=True)
        expected = dict(zip(days, ds.day_rows(scale)))
        counts = self._day_counts(table) if table in existing else {}
        missing = [d for d in days if counts.get(d) != expected[d]]
        total = sum(expected.values())
        if missing:
            self._load_days(ds, scale, table, days, missing, expected, total, progress)
        self._ensure_side_tables(ds, scale, table, existing)
        manifest = {"table_name": table, "format": LAYOUT_FORMAT, "dataset": dataset, "scale": scale_json,
                    "days": json.dumps([{"date": d.isoformat(), "rows": expected[d]} for d in days]),
                    "keys_sample": json.dumps(keys),
                    "schema": json.dumps([[c.name, c.ddb_type] for c in info.schema.columns]),
                    "versions": json.dumps(library_versions()), "created": uuid.uuid4().hex}
        self._write_manifest(manifest)
        return self._layout(dataset, scale, strings, days, keys, table, total, reused=False)

    def _manifest_row(self, table: str) -> dict[str, Any] | None:
        if MANIFEST not in self.datasources():
            return None
        found = self.http.rows(f"SELECT * FROM {quote(MANIFEST)} WHERE table_name = ? ORDER BY __time DESC LIMIT 1",
                               _param(table))
        return found[0] if found else None

    def _write_manifest(self, manifest: dict[str, Any]) -> None:
        line = json.dumps({TS: int(time.time() * 1000), **{k: str(v) for k, v in manifest.items()}})
        dims = [{"type": "string", "name": k} for k in manifest]
        self.run_task(self._spec(MANIFEST, {"type": "inline", "data": line}, dims, None, True,
                                 input_format={"type": "json"}), "the layout manifest")
        created = manifest["created"]
        self.wait_visible(lambda: (self._manifest_row(manifest["table_name"]) or {}).get("created") == created,
                          "the layout manifest")

    def _day_counts(self, table: str) -> dict[dt.date, int]:
        if table not in self.datasources():
            return {}
        rows = self.http.rows(f"SELECT TIMESTAMP_TO_MILLIS(TIME_FLOOR(__time, 'P1D')) AS d, COUNT(*) AS n "
                              f"FROM {quote(table)} GROUP BY 1")
        return {dt.date(1970, 1, 1) + dt.timedelta(days=int(r["d"]) // DAY_MS): int(r["n"]) for r in rows}

    def _load_days(self, ds, scale: Scale, table: str, days: list[dt.date], missing: list[dt.date],
                   expected: dict[dt.date, int], total: int, progress: ProgressCallback | None) -> None:
        shape = _Shape(ds.info)
        folder = self.data_folder / table
        folder.mkdir(parents=True, exist_ok=True)
        files, written = [], 0
        try:
            for day in missing:
                index = days.index(day)
                path = folder / f"{day.isoformat()}.csv"
                frame = ds.day_frame(index, scale, StringMode.ARROW)
                times = shape.millis(frame)
                if len(times) and (np.diff(times) < 0).any():
                    raise TargetError(f"{ds.info.name}: day {day} is not in time order; the arrival ordinal "
                                      f"({SEQ}) must follow time order")
                try:
                    pacsv.write_csv(shape.input_table(frame, 0), path)
                except OSError as exc:
                    raise disk_full_error(exc, folder) or TargetError(f"cannot write {path}: {exc}") from exc
                files.append(str(path.resolve()))
                written += len(frame)
                if progress is not None:
                    progress(written, total, f"{day} written for Druid's ingestion")
            if progress is not None:
                progress(written, total, f"Druid ingesting {plural(len(files), 'day')} into {table}…")
            self.run_task(self._spec(table, {"type": "local", "files": files}, shape.dimensions(True),
                                     [self._interval(d) for d in missing], False), f"loading {table}")
            self.wait_visible(lambda: all(self._day_counts(table).get(d) == expected[d] for d in missing),
                              f"the days of {table}")
            if progress is not None:
                progress(total, total, f"{plural(len(missing), 'day')} queryable in {table}")
        finally:
            for path in files:
                Path(path).unlink(missing_ok=True)

    def _side_tables_ready(self, ds, scale: Scale, table: str, existing: set[str]) -> bool:
        return all(f"{table}_{name}" in existing and self.count(f"{table}_{name}") == len(getattr(ds, f"{name}_frame")(scale))
                   for name in side_tables(ds))

    def _ensure_side_tables(self, ds, scale: Scale, table: str, existing: set[str]) -> None:
        for name, schema in side_tables(ds).items():
            side = f"{table}_{name}"
            frame = getattr(ds, f"{name}_frame")(scale)
            if side in existing and self.count(side) == len(frame):
                continue
            shape = _Shape(ds.info, schema)
            buffer = io.BytesIO()
            pacsv.write_csv(shape.input_table(frame, None), buffer)
            self.run_task(self._spec(side, {"type": "inline", "data": buffer.getvalue().decode()},
                                     shape.dimensions(False), ["2000-01-01/2000-01-02"], False), f"loading {side}")
            self.wait_visible(lambda: self.count(side) == len(frame), side)

    def _layout(self, dataset, scale, strings, days, keys, table, rows, reused) -> Layout:
        return Layout(dataset=dataset, scale=scale, strings=strings, days=tuple(days), keys_sample=tuple(keys),
                      rows=rows, footprint_bytes=self._segment_bytes([table] + self._side_names(dataset, table)),
                      reused=reused, location=f"druid://{self.http.address}/{table}")

    @staticmethod
    def _side_names(dataset: str, table: str) -> list[str]:
        return [f"{table}_{name}" for name in side_tables(_get_dataset(dataset))]

    def _segment_bytes(self, datasources: list[str]) -> int:
        marks = ", ".join("?" for _ in datasources)
        found = self.http.rows(f"SELECT SUM(\"size\") AS b FROM sys.segments WHERE is_active = 1 AND "
                               f"datasource IN ({marks})", [p for d in datasources for p in _param(d)])
        return int((found[0]["b"] if found else 0) or 0)

    def footprint(self, layout: Layout) -> int:
        table = self.table(layout)
        return self._segment_bytes([table] + self._side_names(layout.dataset, table))

    def footprint_detail(self, layout: Layout, table: str = "") -> Footprint:
        name = self.import_table(layout) if table == IMPORT_TABLE else (table or self.table(layout))
        total = self._segment_bytes([name])
        if not total:
            return Footprint(bytes=0, method=f"{name} has no active segments")
        columns: dict[str, int] = {}
        answer = self.http.json("POST", "/druid/v2", {
            "queryType": "segmentMetadata", "dataSource": name, "merge": True, "analysisTypes": ["size"],
            "intervals": ["1000-01-01/3000-01-01"], "context": {"useCache": False, "populateCache": False}})
        for merged in answer or []:
            for column, facts in (merged.get("columns") or {}).items():
                columns[column] = columns.get(column, 0) + int(facts.get("size") or 0)
        return Footprint(bytes=total, columns=columns, replicas=1, runtime_bytes=self._cache_bytes(name),
                         method="sys.segments size of the active segments; per column the segmentMetadata "
                                "'size' analysis (Druid's estimate); runtime: the historical's segment cache")

    def _cache_folder(self, datasource: str) -> Path | None:
        root = self.config.get("segment_cache")
        if not root:
            return None
        folder = Path(root) / datasource
        return folder if folder.is_dir() else None

    def _cache_bytes(self, datasource: str) -> int | None:
        folder = self._cache_folder(datasource)
        if folder is None:
            return None
        return sum(f.stat().st_size for f in folder.rglob("*") if f.is_file())

    def describe(self) -> dict[str, Any]:
        info: dict[str, Any] = {
            "kind": self.kind, "mode": "server", "host": self.http.host, "port": self.http.port,
            "coordinator_port": self.http.coordinator_port, "overlord_port": self.http.overlord_port,
            "user": self.http.user, "local_engine": bool(self.config.get("local_engine")),
            "client": "HTTP (stdlib http.client), SQL /druid/v2/sql resultFormat csv",
            "reads": "day and slice in Druid's order (no ORDER BY, no client sort); bars by TIME_FLOOR(__time, "
                     "'PT1M') with EARLIEST_BY/LATEST_BY on the arrival ordinal, ordered by minute",
            "read_path": READ_PATH,
            "query_context": CONTEXT,
            "phases": "measured: decode only (one HTTP exchange); probes: server = time to the first byte, "
                      "transfer = the rest of the reply, decode",
            "cold_cache": "local engine: posix_fadvise on the datasource's segment-cache files between a cold "
                          "step's rounds, but the historical maps them, so their pages stay and no read is "
                          "called cold; a remote server's cannot be dropped",
            "versions": library_versions()}
        try:
            status = self.http.json("GET", "/status")
            info["server_version"] = status.get("version")
            self._msq = msq_loaded(status)
            info["map_reduce"] = ("multi-stage query (INSERT ... SELECT via /druid/v2/sql/task)" if self._msq
                                  else NO_MSQ)
        except Exception as exc:            # a description must never stop a run
            info["error"] = _first_line(exc)
        return info

    def data_files(self, layout: Layout) -> list[Path]:
        folder = self._cache_folder(self.table(layout))
        return [] if folder is None else [f for f in folder.rglob("*") if f.is_file()]

    def drop_cache(self, layout: Layout) -> list[str]:
        files = self.data_files(layout)
        if not files:
            return []
        applied = drop_file_cache(files, system_wide=system_wide_drop(self.config))
        return [f"{m} on the segment cache of {self.table(layout)}" for m in applied]

    def clear_table(self, layout: Layout, table: str = "") -> None:
        if table == "minute":
            name = self.minute_table(layout)
        else:
            name = self.import_table(layout) if table == IMPORT_TABLE else (table or self.append_table(layout))
        if name not in self.datasources():
            return
        # every segment of the datasource marked unused; the broker drops them within a coordinator period
        self.http.json("DELETE", f"/druid/coordinator/v1/datasources/{name}", port=self.http.coordinator_port)
        self.wait_visible(lambda: name not in self.datasources() or self.count(name) == 0, f"{name} emptied")

    # --- worker side -----------------------------------------------------------------------
    def open(self, layout: Layout, worker: int = 0) -> None:
        self._dataset_info(layout)
        self.http.json("GET", "/status")            # connect (and log in) outside timing

    def close(self) -> None:
        self.http.close()

    def _check_day(self, layout: Layout, day: dt.date) -> None:
        if day not in layout.days:
            span = f"{layout.days[0]} .. {layout.days[-1]}" if layout.days else "none"
            raise ValueError(f"{day} is not a trading day of this layout (days: {span})")

    def _exchange(self, sql: str, parameters: list | None, types: bool = False) -> tuple[bytes, dict[str, float]]:
        data, first, total = self.http.sql(sql, parameters, types=types)
        if self.probing:
            return data, {"server": first, "transfer": total - first}
        return data, {}

    def _read(self, layout: Layout, sql: str, parameters: list | None, schema: Schema | None = None) -> OpResult:
        """A reply of ``_Shape.select_list`` (of ``schema``'s columns when given) in the order Druid
        returns it (its segments' stored order: no sort, here or on the server), decoded into the
        schema's columns."""
        info = self._dataset_info(layout)
        shape = _Shape(info)
        data, phases = self._exchange(sql, parameters)
        t0 = _now()
        table = _csv_table(data, shape.reply_types(names=schema.names if schema is not None else None))
        frame = frame_from_arrow(shape.to_schema(table, schema), layout.strings)
        phases["decode"] = _now() - t0
        return OpResult(rows=len(frame), phases=phases, frame=frame, schema=schema or info.schema, wire_bytes=len(data),
                        node=self.node, extra={"server_time": "time to the reply's first byte"} if self.probing else {})

    def read_day(self, layout: Layout, day: dt.date, columns: tuple[str, ...] | None = None) -> OpResult:
        """The day's rows in Druid's stored order; with ``columns`` only theirs are selected (beside
        the timestamp, which the frame leaves out when not asked for)."""
        self._check_day(layout, day)
        info = self._dataset_info(layout)
        shape = _Shape(info)
        schema = None if columns is None else column_schema(info.schema, columns, layout.dataset)
        names = schema.names if schema is not None else None
        sql = f"SELECT {shape.select_list(names)} FROM {quote(self.table(layout))} WHERE {self._day_where(day)}"
        return self._read(layout, sql, None, schema)

    def read_slice(self, layout: Layout, day: dt.date, key: str) -> OpResult:
        self._check_day(layout, day)
        info = self._dataset_info(layout)
        shape = _Shape(info)
        sql = (f"SELECT {shape.select_list()} FROM {quote(self.table(layout))} "
               f"WHERE {self._day_where(day)} AND {quote(info.key_column)} = ?")
        return self._read(layout, sql, _param(key_value(info.schema.column(info.key_column), key)))

    def minute_bars(self, layout: Layout, day: dt.date, key: str) -> OpResult:
        self._check_day(layout, day)
        info = self._dataset_info(layout)
        bid, ask = price_columns(info)
        mid = f"(({quote(bid)} + {quote(ask)}) / 2)"
        order = f"MILLIS_TO_TIMESTAMP({quote(SEQ)})"
        minute = "TIMESTAMP_TO_MILLIS(TIME_FLOOR(__time, 'PT1M'))"
        # the time column a time of day (on 1970-01-01): the day taken off the ~390 labels here, not per row there
        shift = _ts_ms(day) if len(_Shape(info).time_parts) == 2 else 0
        sql = (f"SELECT {minute} AS m, EARLIEST_BY({mid}, {order}) AS o, "
               f"MAX({mid}) AS h, MIN({mid}) AS l, LATEST_BY({mid}, {order}) AS c FROM {quote(self.table(layout))} "
               f"WHERE {self._day_where(day)} AND {quote(info.key_column)} = ? GROUP BY 1 ORDER BY 1")
        data, phases = self._exchange(sql, _param(key_value(info.schema.column(info.key_column), key)))
        t0 = _now()
        table = _csv_table(data, {"minute": pa.int64(), "open": pa.float64(), "high": pa.float64(),
                                  "low": pa.float64(), "close": pa.float64()})
        table = table.set_column(0, "minute", pc.subtract(table.column(0), shift).cast(pa.timestamp("ms"))
                                 .cast(pa.timestamp("ns")))
        frame = frame_from_arrow(table, StringMode.ARROW)
        phases["decode"] = _now() - t0
        return OpResult(rows=len(frame), phases=phases, frame=frame, wire_bytes=len(data), node=self.node)

    def append(self, layout: Layout, frame: pd.DataFrame, table: str = "") -> OpResult:
        """One ingestion task with the rows inline (module doc: Appends)."""
        info = self._dataset_info(layout)
        target = table or self.append_table(layout)
        shape = _Shape(info)
        # this batch's ordinals: unique (microseconds, wrapping every ~18 min, x 2^23 rows), so its rows
        # can be found; below 2^53, as Druid's CSV parser passes numbers through a double
        base = (time.time_ns() // 1000 % (1 << 30)) << 23
        t0 = _now()
        buffer = io.BytesIO()
        pacsv.write_csv(shape.input_table(frame, base), buffer)
        t1 = _now()
        task = self.run_task(self._spec(target, {"type": "inline", "data": buffer.getvalue().decode()},
                                        shape.dimensions(True), None, True), f"append to {target}")
        t2 = _now()
        where = f"{quote(SEQ)} >= ? AND {quote(SEQ)} < ?"
        params = _param(base) + _param(base + len(frame))
        queryable = self.wait_visible(lambda: self.count(target, where, params) == len(frame), f"append to {target}")
        return OpResult(rows=len(frame), nbytes=rows_bytes(len(frame), info.schema),
                        phases={"decode": t1 - t0, "query": t2 - t1}, node=self.node,
                        extra={"queryable_s": queryable, "task": task})

    def row_count(self, layout: Layout, table: str = "") -> int:
        return self.count(table or self.table(layout))

    def appended_rows(self, layout: Layout, table: str = "") -> int:
        return self.count(table or self.append_table(layout))

    # --- reports 001 and 004 -------------------------------------------------------------------
    def import_csv(self, layout: Layout, path: Path, day: dt.date) -> OpResult:
        """Druid's native batch ingestion of the CSV file (``local`` input source: the indexer reads
        ``path``), converted from DolphinDB's text style by ingestion transforms; timed until the
        task succeeds, ``queryable_s`` until its rows are counted."""
        info = self._dataset_info(layout)
        shape = _Shape(info)
        target = self.import_table(layout)
        path = Path(path).resolve()
        transforms = []
        if len(shape.time_parts) == 2:         # a DATE and a time of day: __time joined by a transform
            d, t = shape.time_parts
            timestamp = {"column": d, "format": "yyyy.MM.dd"}
            transforms.append({"type": "expression", "name": "__time", "expression":
                               f"timestamp_parse(concat(replace(\"{d}\", '.', '-'), 'T', \"{t}\"), null, 'UTC')"})
        else:
            timestamp = {"column": shape.time_parts[0], "format": "yyyy.MM.dd'T'HH:mm:ss.SSS"}
        for c in shape.stored:
            if c.ddb_type == "CHAR":
                transforms.append({"type": "expression", "name": c.name, "expression": _char_code(c.name)})
        before = self.count(target)
        t0 = _now()
        task = self.run_task(self._spec(target, {"type": "local", "files": [str(path)]}, shape.dimensions(False),
                                        None, True, input_format={"type": "csv", "findColumnsFromHeader": True},
                                        transforms=transforms, timestamp=timestamp, strict=True),
                             f"import {path.name}")
        t1 = _now()
        rows_box = {}

        def visible() -> bool:
            rows_box["n"] = self.count(target) - before
            return rows_box["n"] > 0
        queryable = self.wait_visible(visible, f"import into {target}")
        rows = rows_box["n"]
        return OpResult(rows=rows, nbytes=rows_bytes(rows, info.schema), wire_path=path, node=self.node,
                        extra={"queryable_s": queryable, "task": task, "task_s": t1 - t0})

    def export_csv(self, layout: Layout, day: dt.date, path: Path) -> OpResult:
        """The broker's CSV reply (Druid's own CSV writer) streamed to ``path``: ISO dates, times of
        day, CHAR letters; rows in time order."""
        self._check_day(layout, day)
        info = self._dataset_info(layout)
        shape = _Shape(info)
        parts = []
        for c in info.schema.columns:
            name = quote(c.name)
            if c.name in shape.time_parts:
                fmt = {"DATE": "yyyy-MM-dd", "SECOND": "HH:mm:ss", "TIME": "HH:mm:ss.SSS",
                       "TIMESTAMP": "yyyy-MM-dd HH:mm:ss.SSS"}[c.ddb_type]
                parts.append(f"TIME_FORMAT(__time, '{fmt}') AS {name}")
            elif c.ddb_type == "CHAR":
                parts.append(f"{_char_letter(c.name)} AS {name}")
            else:
                parts.append(name)
        sql = (f"SELECT {', '.join(parts)} FROM {quote(self.table(layout))} WHERE {self._day_where(day)} "
               "ORDER BY __time")
        path = Path(path)
        try:
            with open(path, "wb") as out:
                self.http.sql(sql, None, header=True, sink=out)
        except OSError as exc:
            raise disk_full_error(exc, path.parent) or TargetError(f"cannot write {path}: {exc}") from exc
        table = self.table(layout)
        return OpResult(rows=None, count_rows=lambda: self.count(table, self._day_where(day)), schema=info.schema,
                        wire_path=path, node=self.node)

    def run_query(self, layout: Layout, query, values: dict[str, Any]) -> OpResult:
        text = query.text(self.query_dialect)
        if text is None:
            raise NotSupported(f"query {query.id} has no Druid text")
        table = self.table(layout)
        tables = {"quotes": table, "readings": table, "info": f"{table}_info"}
        parameters: list[dict[str, Any]] = []

        def bind(match: re.Match) -> str:
            name = match.group(1)
            if name in _TABLES:
                return quote(tables[name])
            if name not in values:
                raise TargetError(f"query {query.id}: no value for parameter {name!r}")
            bound = _param(values[name])
            parameters.extend(bound)
            return ", ".join("?" for _ in bound)
        sql = _PLACEHOLDER.sub(bind, text)
        data, phases = self._exchange(sql, parameters, types=True)
        t0 = _now()
        frame = frame_from_arrow(_typed_reply(data), StringMode.ARROW)
        frame.columns = list(query.columns)[:frame.shape[1]] if len(query.columns) == frame.shape[1] else \
            [c.split("_", 1)[1] for c in frame.columns]
        phases["decode"] = _now() - t0
        return OpResult(rows=len(frame), phases=phases, frame=frame, wire_bytes=len(data), node=self.node)

    # --- report 003 (definitions: workloads/targets/quotes.py) ----------------------------------
    def _quote_where(self, layout: Layout, days) -> tuple[QuoteColumns, str]:
        try:
            cols = quote_columns(self._dataset_info(layout))
            first, last = day_span(layout.days, days)
        except ValueError as exc:
            raise TargetError(f"{layout.dataset}: {exc}") from None
        b, a = quote(cols.bid), quote(cols.ask)
        tod = f"MOD(TIMESTAMP_TO_MILLIS(__time), {DAY_MS})"
        lo = (SESSION_OPEN.hour * 3600 + SESSION_OPEN.minute * 60 + SESSION_OPEN.second) * 1000
        hi = (SESSION_CLOSE.hour * 3600 + SESSION_CLOSE.minute * 60 + SESSION_CLOSE.second) * 1000
        where = (f"__time >= {_ts_literal(first)} AND __time < {_ts_literal(last + dt.timedelta(days=1))} AND "
                 f"{tod} BETWEEN {lo} AND {hi} AND {a} > {b} AND {b} > 0 AND {a} > 0 AND "
                 f"{a} / {b} < {MAX_ASK_BID_RATIO}")
        return cols, where

    def spread_by_minute(self, layout: Layout, days=()) -> OpResult:
        cols, where = self._quote_where(layout, days)
        b, a = quote(cols.bid), quote(cols.ask)
        sql = (f"SELECT MOD(TIMESTAMP_TO_MILLIS(TIME_FLOOR(__time, 'PT1M')), {DAY_MS}) AS m, "
               f"AVG(({a} - {b}) / ({a} + {b}) * 2) AS s FROM {quote(self.table(layout))} WHERE {where} "
               "GROUP BY 1 ORDER BY 1")
        data, phases = self._exchange(sql, None)
        t0 = _now()
        table = _csv_table(data, {"minute": pa.int64(), "avgSpread": pa.float64()})
        table = table.set_column(0, "minute", table.column(0).cast(pa.timestamp("ms")).cast(pa.timestamp("ns")))
        frame = frame_from_arrow(table, StringMode.ARROW)
        phases["decode"] = _now() - t0
        return OpResult(rows=len(frame), phases=phases, frame=frame, wire_bytes=len(data), node=self.node)

    def ols_spread(self, layout: Layout, days=()) -> OpResult:
        cols, where = self._quote_where(layout, days)
        b, a = quote(cols.bid), quote(cols.ask)
        y = f"({a} / {b} - 1)"
        x = f"((CAST({quote(cols.bid_size)} AS DOUBLE) + {quote(cols.ask_size)}) * ({a} + {b}) / 2)"
        sql = (f"SELECT COUNT(*) AS n, SUM({x}) AS sx, SUM({y}) AS sy, SUM({x} * {x}) AS sxx, SUM({y} * {y}) AS syy, "
               f"SUM({x} * {y}) AS sxy FROM {quote(self.table(layout))} WHERE {where}")
        data, phases = self._exchange(sql, None)
        t0 = _now()
        n, sx, sy, sxx, syy, sxy = (float(v) for v in data.decode().strip().split(","))
        try:
            if n == 0:
                raise ValueError("no quote passes report 003's filters in this span")
            ax, ay = sx / n, sy / n
            frame = ols_from_sums(int(n), ax, ay, sxx - n * ax * ax, syy - n * ay * ay, sxy - n * ax * ay)
        except ValueError as exc:
            raise TargetError(f"{layout.dataset}: {exc}") from None
        phases["decode"] = _now() - t0
        return OpResult(rows=len(frame), phases=phases, frame=frame, wire_bytes=len(data), node=self.node,
                        extra={"observations": int(n)})

    def mapreduce_minute_bars(self, layout: Layout, days=()) -> OpResult:
        """Report 003 (b) through Druid's multi-stage-query engine: ``INSERT INTO <table>_minute
        SELECT`` the span's minute quotes (per key and minute, average bid and ask; ``__time`` the
        minute), submitted to ``/druid/v2/sql/task`` and timed until the task succeeds; the answer
        is the number of bars written, counted once every segment it published is loaded (outside
        the timing: ``extra["queryable_s"]``). A server whose ``/status`` lists no MSQ module gets
        the verdict "this server has no multi-stage-query extension" (``NotSupported``)."""
        if not self.has_msq():
            raise NotSupported(NO_MSQ)
        try:
            cols = quote_columns(self._dataset_info(layout))
            first, last = day_span(layout.days, days)
        except ValueError as exc:
            raise TargetError(f"{layout.dataset}: {exc}") from None
        minute = self.minute_table(layout)
        span = f"__time >= {_ts_literal(first)} AND __time < {_ts_literal(last + dt.timedelta(days=1))}"
        k, b, a = quote(cols.key), quote(cols.bid), quote(cols.ask)
        sql = (f"INSERT INTO {quote(minute)} SELECT TIME_FLOOR(__time, 'PT1M') AS __time, {k}, AVG({b}) AS {b}, "
               f"AVG({a}) AS {a} FROM {quote(self.table(layout))} WHERE {span} GROUP BY 1, 2 PARTITIONED BY DAY")
        before = self.count(minute, span)
        t0 = _now()
        answer = self.http.json("POST", "/druid/v2/sql/task", {"query": sql, "context": {**CONTEXT, **MSQ_CONTEXT}})
        task = self.wait_task(answer["taskId"], f"the map-reduce into {minute}")
        t1 = _now()
        queryable = self.wait_visible(lambda: self._segments_loaded(minute), f"the bars in {minute}")
        bars = self.count(minute, span) - before
        frame = pd.DataFrame({"bars": [int(bars)]})
        return OpResult(rows=len(frame), phases={}, frame=frame, node=self.node,
                        extra={"bars": int(bars), "insert_s": t1 - t0, "queryable_s": queryable, "task": task,
                               "engine": "multi-stage query (/druid/v2/sql/task)"})

    def minute_table(self, layout: Layout) -> str:
        return self.table(layout) + "_minute"

    def has_msq(self) -> bool:
        """Whether the server runs multi-stage queries, asked of it (the broker's ``/status``)."""
        if self._msq is None:
            self._msq = msq_loaded(self.http.json("GET", "/status"))
        return self._msq

    def _segments_loaded(self, datasource: str) -> bool:
        """Every published segment of ``datasource`` is served (at least one)."""
        found = self.http.rows("SELECT COUNT(*) AS n, SUM(is_available) AS up FROM sys.segments "
                               "WHERE datasource = ? AND is_published = 1 AND is_overshadowed = 0", _param(datasource))
        return bool(found) and int(found[0]["n"] or 0) > 0 and int(found[0]["up"] or 0) == int(found[0]["n"])


def msq_loaded(status: Any) -> bool:
    """Whether a ``/status`` answer lists the multi-stage-query extension among its modules."""
    if not isinstance(status, dict):
        return False
    return any(isinstance(m, dict) and (m.get("artifact") == MSQ_ARTIFACT
                                        or str(m.get("name") or "").startswith("org.apache.druid.msq."))
               for m in status.get("modules") or [])

