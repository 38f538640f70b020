"""QuestDB: a user's QuestDB server (or one Tickbench started on loopback, ``local_engine``).

Config keys (plain data, rebuilt in every worker process): ``host`` (default 127.0.0.1),
``port`` (PostgreSQL wire, default 8812), ``http_port`` (REST: ``/exec``, ``/imp``, ``/exp`` and ILP
over HTTP, default 9000), ``user`` / ``password`` (PG wire; QuestDB's defaults admin / quest; sent to
HTTP as basic auth too, which an open-source server without HTTP users ignores), ``database``
(default ``qdb``: QuestDB has one database, the name is only checked by PG wire), ``timeout``
(connect, s, default 10), ``wal_timeout_s`` (how long to wait for a WAL table to apply its
writes, default 300), ``chunk_rows`` (rows per ILP batch at prepare, default 1,000,000),
``local_engine`` (true when Tickbench started the server: reported by ``describe``).

Clients: ``questdb`` (ILP over HTTP, ``Sender.dataframe``) and ``psycopg`` (PG wire), both
imported lazily (a missing one raises ``MissingClient``); the rest is HTTP with the stdlib.
``questdb.connect().query`` is not used: it needs a WebSocket endpoint this server lacks.

Layout, as a practitioner lays out ticks in QuestDB: one WAL table per dataset and scale,
``<dataset>_<scale key>``, with a designated timestamp and ``PARTITION BY DAY``. A dataset whose
time column is a full instant (devices: ``time`` TIMESTAMP) has it as the designated timestamp;
one whose day and time of day are apart (TAQ: ``date`` DATE, ``time`` SECOND on 1970-01-01) gets
``_ts`` = date + time, designated. ``_seq`` (LONG) is each row's arrival ordinal within its day,
kept for checks: QuestDB stores a partition in designated-timestamp order, rows of one timestamp
in arrival order (each day is loaded in time order), so that stored order already puts the
first/last quote of a minute where DuckDB's does. Types: SYMBOL ``SYMBOL``, STRING ``VARCHAR``,
DATE ``DATE``, SECOND/TIME/TIMESTAMP ``TIMESTAMP`` (times of day on 1970-01-01, as the datasets hold
them), CHAR ``BYTE``, SHORT ``SHORT``, INT ``INT``, LONG ``LONG``, DOUBLE ``DOUBLE``, BOOL
``BOOLEAN``. Beside it: ``_append`` (appends), ``_import`` (CSV imports, no ``_seq``), ``_minute``
(report 003's map-reduce), ``_info`` (devices' side table) and the manifest ``_tickbench_layouts``.

Writes are ILP over HTTP (``Sender.dataframe``). A WAL table applies committed writes later
(asynchronously to queries): after a write that must be seen (prepare's day counts, appended rows,
imports), the target waits until ``wal_tables()`` shows the table's ``writerTxn`` caught up with
its ``sequencerTxn`` (a suspended table is an error). For an import that wait is
``extra["queryable_s"]``; an append's is not in its timing (a user's ILP append returns when the
server has committed it to the WAL).

Meaning of the reads (issue 21): ``read_day`` and ``read_slice`` return the day's (the key-day's)
rows in the order QuestDB stores them, with no ``ORDER BY`` (designated timestamp, ties in
arrival order; order is not part of those answers, ``verify`` compares them order-free);
``minute_bars`` returns bars ordered by minute (``SAMPLE BY 1m``'s own order, part of the answer).

Phases, honestly. A measured read is the user's plain call: the query as an HTTP ``/exp`` request
with ``fmt=parquet`` (QuestDB's fastest documented whole-result path, typed columns: psycopg's
binary fetch and ``/exp`` CSV + pyarrow's CSV reader were both slower here), in the table's stored
order, then ``pq.read_table`` and ``to_pandas``, nothing else: the same calls a QuestDB user
writes (``benchmarks/practitioner/questdb_paths.py``), so Tickbench's path IS the fastest one
measured (``describe()["read_path"]`` gives the figures). The ``/exp`` exchange is one request:
the server's execution and the transfer cannot be told apart, so a measured operation has only
``decode``. Probe operations (``probed_ops``) split it: the same
query through ``/exec?timings=true&count=true`` gives the server's own ``compiler + execute +
count`` nanoseconds (``count``: the whole result iterated on the server, nothing sent), then the
``/exp`` exchange: ``server`` = that reported time (at most the exchange), ``transfer`` = the rest
of the exchange, ``decode`` = Parquet read + to_pandas; ``wire_bytes`` the Parquet reply's size.

Cold cache: QuestDB has no statement that drops its caches (it reads memory-mapped column files;
the OS page cache of a server's files cannot be dropped from a client): nothing is applied, and
``drop_cache``/``drop_cache_for_step`` say so by returning nothing.

Reports 001 and 004. A day is chosen by the designated timestamp (``_ts IN '2007-08-23'``: an
Interval forward scan of that partition); t04 does it in a subquery (QuestDB 9.3.4 double-counts
its GROUP BY when the interval and a filter share one WHERE). Suite queries run their ``questdb`` text (``resources/queries/*.questdb.toml``)
with ``{quotes}``/``{readings}``/``{info}`` replaced by this layout's tables and ``{name}``
parameters replaced by QuestDB literals (``'2007-08-23'``, ``'IBM'``, lists as ``'A','B'`` for
``IN (...)``, timestamps as ``'2007-08-23T09:30:00.000000Z'``), formatted here (the engine binds no
lists); results through ``/exp`` Parquet like reads. Import: QuestDB's own CSV loader, HTTP
``/imp`` with a schema (``DATE`` pattern ``yyyy.MM.dd``, ``TIMESTAMP`` ``HH:mm:ss`` or
``yyyy.MM.ddTHH:mm:ss.SSS``, a CHAR as ``CHAR``) into a staging table (``_import_stage``,
overwritten), then ``INSERT INTO <table>_import SELECT`` converting to the table's types (a CHAR
letter to its code by a ``CASE`` over printable ASCII: QuestDB casts no CHAR to a number), the
designated ``_ts`` computed; the wait for the WAL is ``queryable_s``. Export: HTTP ``/exp`` CSV
(QuestDB's own writer) streamed to the file, times of day and dates as text in DuckDB's style
(``to_str``), CHAR as its letter. Footprint: ``table_partitions()`` ``diskSize`` (the engine's
allocated bytes: column files are sized in pages, so a small table looks big); QuestDB reports
no per-column size (``columns`` is empty); one replica.
"""
from __future__ import annotations

import base64
import datetime as dt
import io
import json
import time
import http.client
import urllib.parse
import uuid
from dataclasses import asdict
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa

from workloads.datasets.base import side_tables
from workloads.datasets.schema import DatasetInfo, Scale, Schema, StringMode
from workloads.targets.arrow_frames import frame_from_arrow, key_value, library_versions
from workloads.targets.bars import price_columns
from workloads.targets.columns import column_schema
from workloads.targets.base import (IMPORT_TABLE, Footprint, Layout, NotSupported, OpResult,
                                    ProgressCallback, Target, TargetError)
from workloads.targets.quotes import (MAX_ASK_BID_RATIO, SESSION_CLOSE, SESSION_OPEN, QuoteColumns, day_span,
                                     ols_from_sums, quote_columns)
from workloads.targets.kept_http import KeptConnection
from workloads.targets.sizes import rows_bytes
from workloads.targets.storage import disk_full_error
from workloads.targets.lazy import get_dataset as _get_dataset

LAYOUT_FORMAT = 1
KEYS_SAMPLE = 100
DEFAULT_PORT = 8812
DEFAULT_HTTP_PORT = 9000
DEFAULT_USER = "admin"
DEFAULT_PASSWORD = "quest"
DEFAULT_DATABASE = "qdb"
DEFAULT_CHUNK_ROWS = 1_000_000
MANIFEST_TABLE = "_tickbench_layouts"
# issue 21: measured beside the hand-written path (workloads/practitioner/questdb_paths.py)
READ_PATH = ("QuestDB's fastest documented path: /exp?fmt=parquet in stored order + pyarrow.parquet + to_pandas, "
             "nothing else (the hand-written path's calls); 1 M-row TAQ day, warm, median of 7, interleaved, five "
             "runs on a shared 2-core machine: day 238-384 ms, ratio 0.85-1.23 (median 1.03; 1,062 ms before, with "
             "ORDER BY symbol, time, _seq), slice median 1.07, bars median 1.03")
SEQ = "_seq"
TS = "_ts"

_QDB_TYPES = {
    "BOOL": "BOOLEAN", "CHAR": "BYTE", "SHORT": "SHORT", "INT": "INT", "LONG": "LONG", "FLOAT": "FLOAT",
    "DOUBLE": "DOUBLE", "DATE": "DATE", "SECOND": "TIMESTAMP", "TIME": "TIMESTAMP", "TIMESTAMP": "TIMESTAMP",
    "SYMBOL": "SYMBOL", "STRING": "VARCHAR",
}
_TEMPORAL = frozenset({"SECOND", "TIME", "TIMESTAMP", "DATE"})
# /imp's parse patterns for DolphinDB's text style (workloads.datasets.csv_files)
_IMP_PATTERNS = {"DATE": "yyyy.MM.dd", "SECOND": "HH:mm:ss", "TIME": "HH:mm:ss.SSS",
                 "TIMESTAMP": "yyyy.MM.ddTHH:mm:ss.SSS"}
# export: DuckDB's COPY style for times of day and dates
_TO_TEXT = {"DATE": "to_str({c}, 'yyyy-MM-dd')", "SECOND": "to_str({c}, 'HH:mm:ss')",
            "TIME": "to_str({c}, 'HH:mm:ss.SSS')", "TIMESTAMP": "to_str({c}, 'yyyy-MM-dd HH:mm:ss.SSS')",
            "CHAR": "cast({c} AS CHAR)"}


def _now() -> float:
    return time.perf_counter()


def quote(name: str) -> str:
    """A QuestDB identifier, quoted."""
    return '"' + name.replace('"', '""') + '"'


def literal(text: str) -> str:
    return "'" + str(text).replace("'", "''") + "'"


def char_code(column: str) -> str:
    """A CHAR column's letter as its code (QuestDB casts no CHAR to a number): printable ASCII."""
    return f"CASE {column} " + " ".join(f"WHEN {literal(chr(i))} THEN {i}" for i in range(32, 127)) + " END"


def table_name(dataset: str, scale: Scale) -> str:
    return f"{dataset}_{scale.key()}"


def sql_value(value: Any) -> str:
    """A Python value as a QuestDB literal (suite parameters; lists as ``a, b`` for ``IN (...)``)."""
    if isinstance(value, (list, tuple)):
        return ", ".join(sql_value(v) for v in value)
    if isinstance(value, (pd.Timestamp, np.datetime64)):
        value = pd.Timestamp(value).to_pydatetime()
    if isinstance(value, dt.datetime):
        return literal(value.strftime("%Y-%m-%dT%H:%M:%S.%fZ"))
    if isinstance(value, dt.date):
        return literal(value.isoformat())
    if isinstance(value, dt.time):
        return literal("1970-01-01T" + value.strftime("%H:%M:%S.%fZ"))
    if isinstance(value, (bool, np.bool_)):
        return "true" if value else "false"
    if isinstance(value, (int, float, np.integer, np.floating)):
        return repr(value.item() if hasattr(value, "item") else value)
    return literal(str(value))


def _first_line(text: Any) -> str:
    lines = str(text).strip().splitlines()
    return lines[0] if lines else ""



def designated(info: DatasetInfo) -> str:
    """The designated timestamp: the time column when it holds full instants, else ``_ts``."""
    column = info.schema.column(info.time_column)
    if column.ddb_type == "TIMESTAMP" and info.date_column == info.time_column:
        return info.time_column
    return TS


def _columns_ddl(schema: Schema, ts: str, seq: bool) -> str:
    parts = [f"{quote(c.name)} {_QDB_TYPES[c.ddb_type]}" for c in schema.columns]
    if seq:
        parts.append(f"{quote(SEQ)} LONG")
    if ts not in schema.names:
        parts.append(f"{quote(ts)} TIMESTAMP")
    return ", ".join(parts)


def ilp_frame(frame: pd.DataFrame, info: DatasetInfo, ts: str, seq_start: int | None = None) -> pd.DataFrame:
    """A generator frame as ILP sends it: SYMBOL columns categorical (ILP symbols), STRING as
    Python strings, the arrival ordinal and the designated timestamp added."""
    schema = info.schema
    out = {}
    for c in schema.columns:
        values = frame[c.name]
        if c.ddb_type == "SYMBOL":
            values = values.astype("category")
        elif c.ddb_type == "STRING":
            values = values.astype(object)
        out[c.name] = values.reset_index(drop=True)
    if seq_start is not None:
        out[SEQ] = pd.Series(np.arange(seq_start, seq_start + len(frame), dtype=np.int64))
    if ts not in schema.names:
        date = frame[info.date_column].to_numpy(dtype="datetime64[ns]")
        clock = frame[info.time_column].to_numpy(dtype="datetime64[ns]")
        day = date.astype("datetime64[D]").astype("datetime64[ns]")
        of_day = clock - clock.astype("datetime64[D]").astype("datetime64[ns]")
        out[ts] = pd.Series(day + of_day)
    return pd.DataFrame(out)


def naive_times(table: pa.Table) -> pa.Table:
    """QuestDB's Parquet times are UTC: the datasets' convention is naive UTC."""
    fields, changed = [], False
    for field in table.schema:
        if pa.types.is_timestamp(field.type) and field.type.tz is not None:
            fields.append(pa.field(field.name, pa.timestamp(field.type.unit), field.nullable))
            changed = True
        else:
            fields.append(field)
    return table.cast(pa.schema(fields)) if changed else table


class _Server:
    """PG wire (psycopg) and HTTP (one kept connection) to one QuestDB; errors as TargetError naming it."""

    def __init__(self, config: dict[str, Any]):
        self.host = str(config.get("host") or "127.0.0.1").strip()
        try:
            self.port = int(config.get("port") or DEFAULT_PORT)
            self.http_port = int(config.get("http_port") or DEFAULT_HTTP_PORT)
        except (TypeError, ValueError):
            raise TargetError(f"QuestDB port {config.get('port')!r} / http_port {config.get('http_port')!r} "
                              "is not a number") from None
        self.user = str(config.get("user") or DEFAULT_USER)
        self.password = str(config.get("password") if config.get("password") is not None else DEFAULT_PASSWORD)
        self.database = str(config.get("database") or DEFAULT_DATABASE)
        self.timeout = float(config.get("timeout") or 10.0)
        self.address = f"{self.host}:{self.port}"
        self._pg = None
        self._http = KeptConnection(self.host, self.http_port, max(self.timeout, 3600.0))
        token = base64.b64encode(f"{self.user}:{self.password}".encode()).decode()
        self._auth = {"Authorization": f"Basic {token}"}

    # --- PG wire ---------------------------------------------------------------------------
    def pg(self):
        if self._pg is None or self._pg.closed:
            try:
                import psycopg
            except ImportError as exc:
                from workloads.targets import MissingClient
                raise MissingClient("questdb", "psycopg") from exc
            try:
                self._pg = psycopg.connect(host=self.host, port=self.port, user=self.user, password=self.password,
                                           dbname=self.database, autocommit=True, connect_timeout=self.timeout)
            except Exception as exc:
                raise self.error(exc) from None
        return self._pg

    def execute(self, sql: str) -> None:
        try:
            self.pg().execute(sql)
        except TargetError:
            raise
        except Exception as exc:
            self._reset_broken()
            raise self.error(exc) from None

    def rows(self, sql: str) -> list[dict[str, Any]]:
        try:
            cur = self.pg().execute(sql)
            names = [d.name for d in cur.description]
            return [dict(zip(names, row)) for row in cur.fetchall()]
        except TargetError:
            raise
        except Exception as exc:
            self._reset_broken()
            raise self.error(exc) from None

    def _reset_broken(self) -> None:
        if self._pg is not None and self._pg.closed:
            self._pg = None

    def error(self, exc: BaseException) -> TargetError:
        text = _first_line(exc)
        low = str(exc).lower()
        if "password" in low or "authentication" in low:
            return TargetError(f"QuestDB at {self.address}: authentication failed for user {self.user!r} "
                               "(wrong password, or no such user)")
        if "refused" in low:
            return TargetError(f"QuestDB at {self.address}: connection refused (no server listening there; "
                               f"is {self.port} its PostgreSQL wire port?)")
        if "timeout" in low or "timed out" in low:
            return TargetError(f"QuestDB at {self.address}: no answer within {self.timeout:g} s")
        if "name or service not known" in low or "failed to resolve" in low:
            return TargetError(f"QuestDB at {self.address}: cannot resolve host {self.host!r}")
        return disk_full_error(exc, Path(".")) or TargetError(f"QuestDB at {self.address}: {text}")

    # --- HTTP ------------------------------------------------------------------------------
    def http(self, path: str, params: dict[str, str], data: bytes | None = None,
             headers: dict[str, str] | None = None) -> bytes:
        """One request on this user's kept connection (``workloads.targets.kept_http``)."""
        target = f"{path}?{urllib.parse.urlencode(params)}"
        where = f"QuestDB HTTP at {self.host}:{self.http_port}"
        try:
            status, body = self._http.request("GET" if data is None else "POST", target, data,
                                              {**self._auth, **(headers or {})})
        except ConnectionRefusedError:
            raise TargetError(f"{where}: connection refused (is it the HTTP port?)") from None
        except (OSError, http.client.HTTPException) as exc:
            raise TargetError(f"{where}: {_first_line(exc) or type(exc).__name__}") from None
        if status < 400:
            return body
        if status == 401:
            raise TargetError(f"{where}: authentication failed for user {self.user!r}")
        raise TargetError(f"{where}: {http_error_text(body.decode(errors='replace'))}")

    def parquet(self, sql: str) -> bytes:
        return self.http("/exp", {"query": sql, "fmt": "parquet"})

    def exec_json(self, sql: str, **params: str) -> dict[str, Any]:
        said = json.loads(self.http("/exec", {"query": sql, **params}))
        if "error" in said:
            raise TargetError(f"QuestDB at {self.host}:{self.http_port}: {said['error']}")
        return said

    def sender(self):
        try:
            from questdb import Sender
        except ImportError as exc:
            from workloads.targets import MissingClient
            raise MissingClient("questdb", "questdb") from exc
        conf = f"http::addr={self.host}:{self.http_port};username={self.user};password={self.password};"
        try:
            return Sender.from_conf(conf)
        except Exception as exc:
            raise TargetError(f"QuestDB ILP at {self.host}:{self.http_port}: {_first_line(exc)}") from None

    def ingest(self, table: str, frame: pd.DataFrame, ts: str, symbols: list[str]) -> None:
        try:
            with self.sender() as sender:
                sender.dataframe(frame, table_name=table, symbols=symbols, at=ts)
        except TargetError:
            raise
        except Exception as exc:
            raise disk_full_error(exc, Path(".")) or \
                TargetError(f"QuestDB ILP at {self.host}:{self.http_port}: {_first_line(exc)}") from None

    def wait_applied(self, table: str, timeout: float) -> float:
        """Wait until the WAL table has applied every committed write; seconds waited."""
        start = _now()
        delay = 0.005
        while True:
            found = self.rows(f"SELECT suspended, writerTxn, sequencerTxn, errorMessage FROM wal_tables() "
                              f"WHERE name = {literal(table)}")
            if not found:
                return _now() - start          # not a WAL table: writes are applied at once
            row = found[0]
            if row["suspended"]:
                raise TargetError(f"QuestDB table {table} is suspended: {row['errorMessage']}")
            if row["writerTxn"] >= row["sequencerTxn"]:
                return _now() - start
            if _now() - start > timeout:
                raise TargetError(f"QuestDB table {table} did not apply its WAL within {timeout:g} s")
            time.sleep(delay)
            delay = min(delay * 2, 0.1)

    def close(self) -> None:
        self._http.close()
        if self._pg is not None:
            try:
                self._pg.close()
            finally:
                self._pg = None


EXPORT_LIMIT = "http_export_connections"


def http_error_text(body: str) -> str:
    """What a QuestDB HTTP error says (its JSON ``error`` or the text), and where the server refused
    a connection over its ``/exp`` limit, what to change."""
    try:
        said = json.loads(body).get("error") or body
    except (ValueError, AttributeError):
        said = body
    text = _first_line(said)
    if EXPORT_LIMIT in text:
        text += (" (the server's limit, not Tickbench's: its /exp serves at most http.export.connection.limit "
                 "connections at once, by default as many as it has CPUs, and every user holds one; raise it "
                 "in its server.conf for more users)")
    return text


def _multipart(fields: dict[str, str], file_field: str, filename: str, payload: bytes) -> tuple[bytes, str]:
    boundary = uuid.uuid4().hex
    head = b"".join(f"--{boundary}\r\nContent-Disposition: form-data; name=\"{k}\"\r\n\r\n{v}\r\n".encode()
                    for k, v in fields.items())
    head += (f"--{boundary}\r\nContent-Disposition: form-data; name=\"{file_field}\"; filename=\"{filename}\"\r\n"
             "Content-Type: text/csv\r\n\r\n").encode()
    return head + payload + f"\r\n--{boundary}--\r\n".encode(), f"multipart/form-data; boundary={boundary}"


class QuestDBTarget(Target):
    kind = "questdb"
    query_dialect = "questdb"
    read_phases = ("server", "transfer", "decode")
    probed_ops = frozenset({"read_day", "read_slice", "minute_bars", "run_query", "spread_by_minute"})

    def __init__(self, config: dict[str, Any]):
        super().__init__(config)
        self._server = _Server(self.config)
        self._info: DatasetInfo | None = None
        self.wal_timeout = float(self.config.get("wal_timeout_s") or 300.0)

    @property
    def node(self) -> str:
        return self._server.address

    def _dataset_info(self, layout: Layout) -> DatasetInfo:
        if self._info is None or self._info.name != layout.dataset:
            self._info = _get_dataset(layout.dataset).info
        return self._info

    def table(self, layout: Layout) -> str:
        return table_name(layout.dataset, layout.scale)

    def import_table(self, layout: Layout) -> str:
        return self.table(layout) + "_import"

    def minute_table(self, layout: Layout) -> str:
        return self.table(layout) + "_minute"

    # --- parent side -------------------------------------------------------------------------
    def prepare(self, dataset: str, scale: Scale, strings: StringMode,
                progress: ProgressCallback | None = None) -> Layout:
        strings = StringMode.parse(strings)
        ds = _get_dataset(dataset)
        info: DatasetInfo = ds.info
        server = self._server
        table = table_name(dataset, scale)
        ts = designated(info)
        days = list(ds.trading_days(scale))
        scale_json = json.dumps({**asdict(scale), "content": ds.content_id}, sort_keys=True)
        server.execute(f"CREATE TABLE IF NOT EXISTS {quote(MANIFEST_TABLE)} (table_name VARCHAR, format INT, "
                       "dataset VARCHAR, scale VARCHAR, days VARCHAR, keys_sample VARCHAR, schema VARCHAR, "
                       "versions VARCHAR, complete BOOLEAN, created TIMESTAMP)")
        found = server.rows(f"SELECT format, scale, days, keys_sample, complete FROM {quote(MANIFEST_TABLE)} "
                            f"WHERE table_name = {literal(table)} ORDER BY created DESC LIMIT 1")
        row = found[0] if found else None
        compatible = row is not None and row["format"] == LAYOUT_FORMAT and row["scale"] == scale_json
        entries = {e["date"]: e for e in json.loads(row["days"])} if compatible else {}
        if not compatible:
            server.execute(f"DROP TABLE IF EXISTS {quote(table)}")
        self._ensure_table(info, table, seq=True)
        for scratch in (table + "_append", table + "_import"):
            self._ensure_table(info, scratch)
        self._ensure_side_tables(ds, scale, table)
        keys = [str(k) for k in ds.keys(scale)[:KEYS_SAMPLE]]
        if compatible and row["complete"] and sorted(entries) == [d.isoformat() for d in days]:
            return self._layout(dataset, scale, strings, entries, json.loads(row["keys_sample"]), table, reused=True)
        manifest = {"dataset": dataset, "scale": scale_json, "keys_sample": json.dumps(keys),
                    "schema": json.dumps([[c.name, c.ddb_type] for c in info.schema.columns]),
                    "versions": json.dumps(library_versions())}
        server.wait_applied(table, self.wal_timeout)
        counts = {str(r["day"])[:10]: int(r["n"]) for r in server.rows(
            f"SELECT to_str({quote(ts)}, 'yyyy-MM-dd') AS day, count() AS n FROM {quote(table)}")}
        expected = dict(zip(days, ds.day_rows(scale)))
        total = sum(expected.values())
        done = 0
        for index, day in enumerate(days):
            key = day.isoformat()
            entry = entries.get(key)
            if entry and counts.get(key) == entry["rows"] == expected[day]:
                done += entry["rows"]
                continue
            if counts.get(key):          # an interrupted day: drop its partition, load it again
                server.execute(f"ALTER TABLE {quote(table)} DROP PARTITION LIST {literal(key)}")
                server.wait_applied(table, self.wal_timeout)
            rows = self._load_day(ds, index, scale, table, ts, done, total, progress)
            server.wait_applied(table, self.wal_timeout)
            have = int(server.rows(f"SELECT count() AS n FROM {quote(table)} WHERE {quote(ts)} IN {literal(key)}")[0]["n"])
            if have != rows:
                raise TargetError(f"QuestDB table {table}: {have} rows on {key} after loading {rows}")
            entries[key] = {"date": key, "rows": rows}
            self._write_manifest(table, manifest, entries, complete=False)
            done += rows
            if progress is not None:
                progress(min(done, total), total, f"{key} loaded into {table}")
        wanted = {d.isoformat() for d in days}
        entries = {k: v for k, v in entries.items() if k in wanted}
        self._write_manifest(table, manifest, entries, complete=True)
        return self._layout(dataset, scale, strings, entries, keys, table, reused=False)

    def _symbols(self, schema: Schema) -> list[str]:
        return [c.name for c in schema.columns if c.ddb_type == "SYMBOL"]

    def _load_day(self, ds, index: int, scale: Scale, table: str, ts: str, done: int, total: int,
                  progress: ProgressCallback | None) -> int:
        info: DatasetInfo = ds.info
        rows, last = 0, None
        chunk_rows = int(self.config.get("chunk_rows") or DEFAULT_CHUNK_ROWS)
        for chunk in ds.generate_day(index, scale, StringMode.ARROW, chunk_rows):
            times = chunk[info.time_column]
            if len(chunk) and (not times.is_monotonic_increasing or (last is not None and times.iloc[0] < last)):
                raise TargetError(f"{info.name}: day {index + 1} is not in time order; the arrival ordinal "
                                  f"({SEQ}) must follow time order")
            last = times.iloc[-1] if len(chunk) else last
            self._server.ingest(table, ilp_frame(chunk, info, ts, seq_start=rows), ts, self._symbols(info.schema))
            rows += len(chunk)
            if progress is not None:
                progress(min(done + rows, total), total, f"loading day {index + 1} into {table}")
        return rows

    def _ensure_table(self, info: DatasetInfo, name: str, seq: bool = False) -> None:
        ts = designated(info)
        self._server.execute(f"CREATE TABLE IF NOT EXISTS {quote(name)} ({_columns_ddl(info.schema, ts, seq)}) "
                             f"TIMESTAMP({quote(ts)}) PARTITION BY DAY WAL")

    def _ensure_side_tables(self, ds, scale: Scale, table: str) -> None:
        """A dataset's side tables (devices: ``info``) as ``<table>_<name>``: plain tables (no
        designated timestamp, not partitioned), loaded once by ILP."""
        server = self._server
        for name, schema in side_tables(ds).items():
            side = f"{table}_{name}"
            frame = getattr(ds, f"{name}_frame")(scale)
            server.execute(f"CREATE TABLE IF NOT EXISTS {quote(side)} "
                           f"({', '.join(f'{quote(c.name)} {_QDB_TYPES[c.ddb_type]}' for c in schema.columns)})")
            have = int(server.rows(f"SELECT count() AS n FROM {quote(side)}")[0]["n"])
            if have == len(frame):
                continue
            server.execute(f"TRUNCATE TABLE {quote(side)}")
            values = ", ".join("(" + ", ".join(sql_value(v) for v in row) + ")"
                               for row in frame[schema.names].itertuples(index=False))
            server.execute(f"INSERT INTO {quote(side)} VALUES {values}")

    def _write_manifest(self, table: str, manifest: dict[str, Any], entries: dict[str, dict], complete: bool) -> None:
        days = json.dumps(sorted(entries.values(), key=lambda e: e["date"]))
        created = dt.datetime.now(dt.timezone.utc).replace(tzinfo=None)
        self._server.execute(
            f"INSERT INTO {quote(MANIFEST_TABLE)} VALUES ({literal(table)}, {LAYOUT_FORMAT}, "
            f"{literal(manifest['dataset'])}, {literal(manifest['scale'])}, {literal(days)}, "
            f"{literal(manifest['keys_sample'])}, {literal(manifest['schema'])}, {literal(manifest['versions'])}, "
            f"{'true' if complete else 'false'}, {sql_value(created)})")

    def _layout(self, dataset, scale, strings, entries, keys, table, reused) -> Layout:
        ordered = sorted(entries.values(), key=lambda e: e["date"])
        return Layout(dataset=dataset, scale=scale, strings=strings,
                      days=tuple(dt.date.fromisoformat(e["date"]) for e in ordered),
                      keys_sample=tuple(keys), rows=sum(e["rows"] for e in ordered),
                      footprint_bytes=self._disk_bytes([table] + self._side_names(dataset, table)),
                      reused=reused, location=f"{self._server.address}/{table}")

    @staticmethod
    def _side_names(dataset: str, table: str) -> list[str]:
        return [f"{table}_{name}" for name in side_tables(_get_dataset(dataset))]

    def _disk_bytes(self, tables: list[str]) -> int:
        total = 0
        for name in tables:
            found = self._server.rows(f"SELECT sum(diskSize) AS b FROM table_partitions({literal(name)})")
            total += int(found[0]["b"] or 0) if found else 0
        return total

    def footprint(self, layout: Layout) -> int:
        table = self.table(layout)
        return self._disk_bytes([table] + self._side_names(layout.dataset, table))

    def footprint_detail(self, layout: Layout, table: str = "") -> Footprint:
        """``table_partitions()`` diskSize of the table's partitions; no per-column sizes (QuestDB
        reports none)."""
        name = self.import_table(layout) if table == IMPORT_TABLE else self.table(layout)
        self._server.wait_applied(name, self.wal_timeout)
        rows = int(self._server.rows(f"SELECT count() AS n FROM {quote(name)}")[0]["n"])
        if not rows:
            return Footprint(bytes=0, method=f"{name} has no data yet")
        return Footprint(bytes=self._disk_bytes([name]), columns={}, replicas=1,
                         method="table_partitions() diskSize (allocated column files); no per-column sizes")

    def describe(self) -> dict[str, Any]:
        server = self._server
        info: dict[str, Any] = {
            "kind": self.kind, "host": server.host, "port": server.port, "http_port": server.http_port,
            "user": server.user, "database": server.database, "local_engine": bool(self.config.get("local_engine")),
            "versions": library_versions(),
            "reads": "HTTP /exp fmt=parquet, then pyarrow.parquet + to_pandas; day and slice in the table's "
                     "stored order (no ORDER BY), bars by SAMPLE BY 1m",
            "read_path": READ_PATH,
            "writes": "ILP over HTTP (questdb.Sender.dataframe); WAL applied before counting",
            "phases": "measured: decode only (/exp is one exchange); probes: server (/exec timings "
                      "compiler+execute+count) / transfer / decode",
            "cold_cache": "none: QuestDB has no statement dropping its caches; the server's page cache is not "
                          "controlled"}
        try:
            from importlib import metadata
            for package in ("questdb", "psycopg"):
                try:
                    info[package] = metadata.version(package)
                except metadata.PackageNotFoundError:
                    info[package] = ""
            build = server.rows("SELECT build() AS b")[0]["b"]
            info["server_build"] = build
            marker = "QuestDB "
            if marker in build:
                info["server_version"] = build.split(marker, 1)[1].split(",")[0].strip()
        except Exception as exc:       # a description must never stop a run
            info["error"] = _first_line(exc)
        return info

    def drop_cache(self, layout: Layout) -> list[str]:
        return []        # the server maps its column files: no client can evict them (describe says so)

    def clear_table(self, layout: Layout, table: str = "") -> None:
        if table == "minute":
            name = self.minute_table(layout)
        elif table == IMPORT_TABLE:
            name = self.import_table(layout)
        else:
            name = table or self.table(layout) + "_append"
        exists = self._server.rows(f"SELECT count() AS n FROM tables() WHERE table_name = {literal(name)}")
        if int(exists[0]["n"]):
            self._server.execute(f"TRUNCATE TABLE {quote(name)}")
            self._server.wait_applied(name, self.wal_timeout)

    # --- worker side -----------------------------------------------------------------------
    def open(self, layout: Layout, worker: int = 0) -> None:
        self._dataset_info(layout)
        self._server.pg()                 # connect and log in, outside timing

    def close(self) -> None:
        self._server.close()

    def _check_day(self, layout: Layout, day: dt.date) -> None:
        if day not in layout.days:
            span = f"{layout.days[0]} .. {layout.days[-1]}" if layout.days else "none"
            raise ValueError(f"{day} is not a trading day of this layout (days: {span})")

    def _select(self, sql: str, strings: StringMode, schema: Schema | None = None) -> OpResult:
        """The user's call: ``/exp`` Parquet, then Parquet -> Arrow -> pandas (module doc: Phases)."""
        import pyarrow.parquet as pq
        if self.probing:
            return self._probe(sql, strings, schema)
        data = self._server.parquet(sql)
        t1 = _now()
        frame = frame_from_arrow(naive_times(pq.read_table(io.BytesIO(data))), strings)
        return OpResult(rows=len(frame), phases={"decode": _now() - t1}, frame=frame, schema=schema,
                        wire_bytes=len(data), node=self.node)

    def _probe(self, sql: str, strings: StringMode, schema: Schema | None) -> OpResult:
        import pyarrow.parquet as pq
        said = self._server.exec_json(sql, timings="true", count="true", limit="1")
        timings = said.get("timings") or {}
        server_s = sum(int(timings.get(k) or 0) for k in ("compiler", "execute", "count")) / 1e9
        t0 = _now()
        data = self._server.parquet(sql)
        t1 = _now()
        frame = frame_from_arrow(naive_times(pq.read_table(io.BytesIO(data))), strings)
        t2 = _now()
        on_server = min(server_s, t1 - t0)
        return OpResult(rows=len(frame), phases={"server": on_server, "transfer": t1 - t0 - on_server,
                                                 "decode": t2 - t1},
                        frame=frame, schema=schema, wire_bytes=len(data), node=self.node,
                        extra={"server_time": "/exec timings compiler+execute+count"})

    def _columns(self, info: DatasetInfo, schema: Schema | None = None) -> str:
        return ", ".join(quote(n) for n in (schema or info.schema).names)

    def _key_sql(self, info: DatasetInfo, key: str) -> str:
        return sql_value(key_value(info.schema.column(info.key_column), key))

    def read_day(self, layout: Layout, day: dt.date, columns: tuple[str, ...] | None = None) -> OpResult:
        self._check_day(layout, day)
        info = self._dataset_info(layout)
        schema = column_schema(info.schema, columns, layout.dataset)
        sql = (f"SELECT {self._columns(info, schema)} FROM {quote(self.table(layout))} "
               f"WHERE {quote(designated(info))} IN {literal(day.isoformat())}")
        return self._select(sql, layout.strings, schema)

    def read_slice(self, layout: Layout, day: dt.date, key: str) -> OpResult:
        self._check_day(layout, day)
        info = self._dataset_info(layout)
        sql = (f"SELECT {self._columns(info)} FROM {quote(self.table(layout))} "
               f"WHERE {quote(designated(info))} IN {literal(day.isoformat())} "
               f"AND {quote(info.key_column)} = {self._key_sql(info, key)}")
        return self._select(sql, layout.strings, info.schema)

    def minute_bars(self, layout: Layout, day: dt.date, key: str) -> OpResult:
        """``SAMPLE BY 1m`` over the key-day's rows in their stored order (the designated timestamp,
        ties in arrival order), so ``first``/``last`` are the minute's first/last quote by arrival;
        bars ordered by minute (``SAMPLE BY``'s own order)."""
        self._check_day(layout, day)
        info = self._dataset_info(layout)
        bid, ask = price_columns(info)
        ts, t = quote(designated(info)), quote(info.time_column)
        # within one day the time column follows the designated timestamp, so the subquery (stored
        # order, no sort) can designate it: the bars are labelled as the time column (a time of day
        # stays one)
        sql = (f"SELECT {t} AS minute, first(mid) AS open, max(mid) AS high, min(mid) AS low, last(mid) AS close "
               f"FROM (SELECT {t}, ({quote(bid)} + {quote(ask)}) / 2 AS mid FROM {quote(self.table(layout))} "
               f"WHERE {ts} IN {literal(day.isoformat())} AND {quote(info.key_column)} = {self._key_sql(info, key)} "
               f") TIMESTAMP({t}) SAMPLE BY 1m ALIGN TO CALENDAR")
        return self._select(sql, StringMode.ARROW)

    def append(self, layout: Layout, frame: pd.DataFrame, table: str = "") -> OpResult:
        """Rows into ``<table>_append`` (or ``table``, created on first use) by ILP over HTTP:
        ``decode`` = DataFrame to the ILP frame, ``transfer`` = ``Sender.dataframe`` and its flush
        (the server has committed the rows to its WAL when it returns)."""
        info = self._dataset_info(layout)
        target = table or self.table(layout) + "_append"
        ts = designated(info)
        if table:
            self._ensure_table(info, target)
        t0 = _now()
        ilp = ilp_frame(frame, info, ts)
        t1 = _now()
        self._server.ingest(target, ilp, ts, self._symbols(info.schema))
        t2 = _now()
        return OpResult(rows=len(frame), nbytes=rows_bytes(len(frame), info.schema),
                        phases={"decode": t1 - t0, "transfer": t2 - t1}, node=self.node)

    def row_count(self, layout: Layout, table: str = "") -> int:
        """Rows in ``table`` (default: the main table) once its WAL is applied."""
        name = table or self.table(layout)
        self._server.wait_applied(name, self.wal_timeout)
        return int(self._server.rows(f"SELECT count() AS n FROM {quote(name)}")[0]["n"])

    def sql_rows(self, sql: str) -> list[dict[str, Any]]:
        """Rows of a statement over PG wire (checks; never timed)."""
        return self._server.rows(sql)

    def appended_rows(self, layout: Layout, table: str = "") -> int:
        return self.row_count(layout, table or self.table(layout) + "_append")

    # --- reports 001 and 004 -------------------------------------------------------------------
    def import_csv(self, layout: Layout, path: Path, day: dt.date) -> OpResult:
        """``/imp`` into ``<table>_import_stage`` (overwritten), then ``INSERT INTO <table>_import
        SELECT`` with the conversions; ``queryable_s``: the wait for the WAL to apply it."""
        info = self._dataset_info(layout)
        server = self._server
        stage, target = self.table(layout) + "_import_stage", self.import_table(layout)
        schema = []
        for c in info.schema.columns:
            item: dict[str, Any] = {"name": c.name, "type": "CHAR" if c.ddb_type == "CHAR" else _QDB_TYPES[c.ddb_type]}
            if c.ddb_type in _IMP_PATTERNS:
                item["pattern"] = _IMP_PATTERNS[c.ddb_type]
            schema.append(item)
        ts = designated(info)
        converted = []
        for c in info.schema.columns:
            expr = char_code(quote(c.name)) if c.ddb_type == "CHAR" else quote(c.name)
            converted.append(f"{expr} AS {quote(c.name)}")
        names = list(info.schema.names)
        if ts not in names:
            converted.append(f"{quote(info.date_column)} + {quote(info.time_column)} AS {quote(ts)}")
            names.append(ts)
        t0 = _now()
        body, content_type = _multipart({"schema": json.dumps(schema)}, "data", Path(path).name, Path(path).read_bytes())
        said = json.loads(server.http("/imp", {"name": stage, "overwrite": "true", "fmt": "json",
                                                "forceHeader": "true", "atomicity": "abort"},
                                      data=body, headers={"Content-Type": content_type}))
        if said.get("status") != "OK":
            raise TargetError(f"QuestDB /imp of {path}: {said.get('status') or said}")
        server.execute(f"INSERT INTO {quote(target)} ({', '.join(quote(n) for n in names)}) "
                       f"SELECT {', '.join(converted)} FROM {quote(stage)}")
        t1 = _now()
        queryable = server.wait_applied(target, self.wal_timeout)
        rows = int(said.get("rowsImported") or 0)
        return OpResult(rows=rows, nbytes=rows_bytes(rows, info.schema), wire_path=path, node=self.node,
                        phases={}, extra={"queryable_s": queryable, "loader": "HTTP /imp + INSERT ... SELECT",
                                          "load_s": t1 - t0, "rows_rejected": int(said.get("rowsRejected") or 0)})

    def export_csv(self, layout: Layout, day: dt.date, path: Path) -> OpResult:
        """QuestDB's own CSV writer (HTTP ``/exp``), one day in stored order, streamed to ``path``."""
        self._check_day(layout, day)
        info = self._dataset_info(layout)
        parts = [_TO_TEXT.get(c.ddb_type, "{c}").format(c=quote(c.name)) + f" AS {quote(c.name)}"
                 for c in info.schema.columns]
        table, ts = quote(self.table(layout)), quote(designated(info))
        sql = f"SELECT {', '.join(parts)} FROM {table} WHERE {ts} IN {literal(day.isoformat())}"
        data = self._server.http("/exp", {"query": sql, "fmt": "csv"})
        path = Path(path)
        try:
            path.write_bytes(data)
        except OSError as exc:
            raise disk_full_error(exc, path.parent) or exc

        def count() -> int:
            return int(self._server.rows(f"SELECT count() AS n FROM {table} WHERE {ts} IN "
                                         f"{literal(day.isoformat())}")[0]["n"])
        return OpResult(rows=None, count_rows=count, schema=info.schema, wire_path=path, node=self.node)

    def run_query(self, layout: Layout, query, values: dict[str, Any]) -> OpResult:
        text = query.text(self.query_dialect)
        if text is None:
            raise NotSupported(f"query {query.id} has no QuestDB text")
        table = self.table(layout)
        names = {"quotes": quote(table), "readings": quote(table), "info": quote(f"{table}_info")}
        sql = text
        for name, value in names.items():
            sql = sql.replace("{" + name + "}", value)
        for name, value in values.items():
            sql = sql.replace("{" + name + "}", sql_value(value))
        return self._select(sql, StringMode.ARROW)

    # --- report 003 (definitions: workloads/targets/quotes.py) ---------------------------------
    def _quote_sql(self, layout: Layout, days) -> tuple[QuoteColumns, str]:
        try:
            cols = quote_columns(self._dataset_info(layout))
            first, last = day_span(layout.days, days)
        except ValueError as exc:
            raise TargetError(f"{layout.dataset}: {exc}") from None
        ts = quote(designated(self._dataset_info(layout)))
        end = last + dt.timedelta(days=1)
        return cols, f"{ts} >= {literal(first.isoformat())} AND {ts} < {literal(end.isoformat())}"

    @staticmethod
    def _seed_filter(cols: QuoteColumns) -> str:
        t, b, a = quote(cols.time), quote(cols.bid), quote(cols.ask)
        second = f"(hour({t}) * 3600 + minute({t}) * 60 + second({t}))"
        lo = SESSION_OPEN.hour * 3600 + SESSION_OPEN.minute * 60 + SESSION_OPEN.second
        hi = SESSION_CLOSE.hour * 3600 + SESSION_CLOSE.minute * 60 + SESSION_CLOSE.second
        return (f"{second} BETWEEN {lo} AND {hi} AND {a} > {b} AND {b} > 0 AND {a} > 0 "
                f"AND {a} / {b} < {MAX_ASK_BID_RATIO}")

    def spread_by_minute(self, layout: Layout, days=()) -> OpResult:
        cols, where = self._quote_sql(layout, days)
        t, b, a = quote(cols.time), quote(cols.bid), quote(cols.ask)
        sql = (f"SELECT timestamp_floor('m', {t}) AS minute, avg(({a} - {b}) / ({a} + {b}) * 2) AS avgSpread "
               f"FROM {quote(self.table(layout))} WHERE {where} AND {self._seed_filter(cols)} "
               "GROUP BY minute ORDER BY minute")
        return self._select(sql, StringMode.ARROW)

    def ols_spread(self, layout: Layout, days=()) -> OpResult:
        """Six sums on the server (one row over PG wire), the regression from them on the client."""
        cols, where = self._quote_sql(layout, days)
        b, a = quote(cols.bid), quote(cols.ask)
        size = f"(cast({quote(cols.bid_size)} AS DOUBLE) + {quote(cols.ask_size)})"
        sql = ("SELECT count() AS n, avg(x) AS ax, avg(y) AS ay, sum(x * x) AS sxx0, sum(y * y) AS syy0, "
               f"sum(x * y) AS sxy0 FROM (SELECT {a} / {b} - 1 AS y, {size} * ({a} + {b}) / 2 AS x "
               f"FROM {quote(self.table(layout))} WHERE {where} AND {self._seed_filter(cols)})")
        t0 = _now()
        row = self._server.rows(sql)[0]
        t1 = _now()
        n = int(row["n"] or 0)
        ax, ay = float(row["ax"] or 0.0), float(row["ay"] or 0.0)
        sums = (n, ax, ay, float(row["sxx0"] or 0.0) - n * ax * ax, float(row["syy0"] or 0.0) - n * ay * ay,
                float(row["sxy0"] or 0.0) - n * ax * ay)
        try:
            frame = ols_from_sums(*sums)
        except ValueError as exc:
            raise TargetError(f"{layout.dataset}: {exc}") from None
        return OpResult(rows=len(frame), phases={"decode": _now() - t1}, frame=frame, node=self.node,
                        extra={"observations": n, "fetch_s": t1 - t0})

    def mapreduce_minute_bars(self, layout: Layout, days=()) -> OpResult:
        """Report 003 (b): minute quotes of the span INSERTed into the minute table; the answer is
        the number of bars written (counted after the WAL applied them, outside the timing)."""
        cols, where = self._quote_sql(layout, days)
        k, d, t, b, a = (quote(c) for c in (cols.key, cols.date, cols.time, cols.bid, cols.ask))
        info = self._dataset_info(layout)
        ts = quote(designated(info))
        minute = self.minute_table(layout)
        self._server.execute(f"CREATE TABLE IF NOT EXISTS {quote(minute)} ({k} SYMBOL, {d} DATE, minute TIMESTAMP, "
                             f"{b} DOUBLE, {a} DOUBLE, {quote(TS)} TIMESTAMP) TIMESTAMP({quote(TS)}) "
                             "PARTITION BY DAY WAL")
        before = self.row_count(layout, minute)
        t0 = _now()
        self._server.execute(
            f"INSERT INTO {quote(minute)} SELECT {k}, {d}, timestamp_floor('m', {t}) AS minute, avg({b}) AS {b}, "
            f"avg({a}) AS {a}, timestamp_floor('m', {ts}) AS {quote(TS)} FROM {quote(self.table(layout))} "
            f"WHERE {where} GROUP BY {k}, {d}, minute, {quote(TS)}")
        t1 = _now()
        bars = self.row_count(layout, minute) - before
        frame = pd.DataFrame({"bars": [int(bars)]})
        return OpResult(rows=len(frame), phases={}, frame=frame, extra={"bars": int(bars), "insert_s": t1 - t0},
                        node=self.node)
