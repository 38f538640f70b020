"""MongoDB: a user's MongoDB server through ``pymongo``.

Config keys (plain data, rebuilt in every worker process): ``host`` (required), ``port`` (default
27017), ``user`` and ``password`` (none: no authentication), ``database`` (default
``tickbench``), ``auth_source`` (the database holding the user; default pymongo's: ``database``
or ``admin``), ``local_engine`` (true when Tickbench started the server: described),
``timeout_ms`` (server selection and connect, default 3000: a refused port fails fast),
``batch_rows`` (documents per ``insert_many``, default 50,000), ``layout`` (``documents``, the
default, or ``timeseries``: below) and ``granularity`` (a time-series collection's: ``seconds``,
the default, ``minutes`` or ``hours``). pymongo is imported only when a connection is made,
pymongoarrow on the first read (``MissingClient`` names the ``mongodb`` extra for either).

No real MongoDB server is obtainable on the machines this is developed on: the tests run against
``mongo-java-server`` (``workloads.local_engines.mongodb``), an independent implementation of the
wire protocol. Its timings are not MongoDB's. ``describe()`` records the server's ``buildInfo``
version and, when the server is that stand-in (its ``buildInfo`` has no ``gitVersion``, which every
``mongod`` reports), says so in ``server``; every operation's ``extra["server"]`` carries the same
label so reports can flag it.

Layout ``documents`` (report 004's): one collection per dataset and scale,
``<database>.<dataset>_<scale key>``, one document per row, with a compound index by equality,
sort, range: TAQ ``(date, symbol, time, _seq)`` (a day and a symbol are equalities, then the
order), devices ``(device_id, time)`` (a device's span: equality on the key, then a range of time;
layout format 1 had ``(time, device_id)`` and is reloaded). Layout ``timeseries``: a MongoDB 5.0+
time-series collection ``<...>_ts`` (``timeseries: {timeField, metaField, granularity}``) with
the key as metaField and as timeField the time (devices) or ``_ts``, the day plus the time of day
(TAQ: BSON has no time of day, and buckets must not mix days); index (key, timeField); a day is
its timeField's range, which prunes buckets; an interrupted load starts again from an empty
collection (MongoDB before 7.0 deletes from a time-series collection by metaField only). Whether
the server has time-series collections is asked, never assumed: a server that refuses ``create``
with ``timeseries`` (its error), or accepts it but lists the collection as a plain one (the
stand-in), gets ``NotSupported("this server does not support time-series collections (...)")``
from ``prepare``; no fallback. ``_seq`` is each row's
arrival ordinal within its day (ties in (key, time) are frequent: it makes the first/last quote
of a minute well defined and equal to DuckDB's). Types: strings
as strings; DATE as a datetime at midnight UTC; SECOND/TIME as a datetime on 1970-01-01 (BSON has
no time of day; milliseconds, as the datasets hold them); TIMESTAMP a datetime; CHAR/SHORT/INT as
32-bit ints, LONG 64-bit, DOUBLE/FLOAT doubles. Reads cast pymongoarrow's Arrow table to the
dataset's Arrow types, so frames hold DuckDB's rows and dtypes. Beside it: ``_append``, ``_import`` (CSV imports), ``_minute`` (report 003's
map-reduce), ``_info`` (devices' side collection) and the manifest collection
``_tickbench_layouts`` (one document per layout: format, scale with the dataset's content id,
days with their rows, keys sample, schema, versions). A day is loaded with ``insert_many`` in
batches; a day whose count is short (an interrupted load) is deleted and loaded again; the index
is built after the load.

Reads, as MongoDB's users read into pandas: pymongoarrow (the ``mongodb`` extra).
A day or a slice is ``find_arrow_all(collection, filter, schema=..., projection=...)`` with the
dataset's BSON types (``bson_arrow_schema``) and no sort: the rows come in the order the
collection gives them, as every engine's day read does (order is not part of the answer; minute
bars are ordered by minute). Phases: ``query`` = that call (the server's execution, the transfer
and pymongoarrow's BSON -> Arrow in C, interleaved batch by batch), ``decode`` = a cast to the
dataset's Arrow types and ``to_pandas``. Pipelines (minute bars, report 003, suite queries):
``aggregate_arrow_all``, with a schema where the result's types are known, else pymongoarrow's
inference. That call reads raw batches, which pymongo asks for with an ``aggregate`` whose cursor
has ``batchSize: 0``; a server that ignores it and answers documents in the first batch (the
stand-in: pymongo's raw-batch cursor then fails an assertion) is found by asking once in
``open``, and its pipelines go through a cursor of undecoded documents into pymongoarrow's same
decoder (``extra["read_path"]`` and ``describe()`` say so). A stage or operator the server does
not know (its error names it) is ``NotSupported("this server does not support $X")``: the
server's limit, one line per query, and the run goes on.
A server-reported time: in probe operations (``probed_ops``, only when the server answers
``explain``), the same ``find`` as raw batches (``find_raw_batches``: ``server`` + ``transfer``)
then pymongoarrow's decoder (``decode``); ``explain`` with ``executionStats`` afterwards gives
``executionTimeMillis``: ``server`` = that, ``transfer`` = the fetch's time minus it. The stand-in
has no ``explain``: no probes, and no server time. Minute bars and report 003 are aggregation
pipelines ($match, $sort by time and ``_seq``, $group by minute with $first/$last/$max/$min; OLS
from $group sums -> ``quotes.ols_from_sums``), run on the server.

Import: MongoDB has no server-side CSV loader (``mongoimport`` is a separate tool, not a server
call): the CSV is parsed on the client (``workloads.datasets.csvread``: ``decode``), converted to
documents and inserted with ``insert_many`` in batches (``query``); the index build after it is
timed apart: ``extra["queryable_s"]``. Export: no server-side CSV exporter either: the day is read
(``find``) and written with ``workloads.datasets.csvwrite.write_csv`` (ISO style). Footprint:
``collStats`` ``storageSize + totalIndexSize`` (the stand-in keeps everything in memory and
reports ``size`` only: then its ``size`` and index sizes, said in ``method``); per column MongoDB
tells nothing.

Cold cache: MongoDB has no command to empty its WiredTiger cache; ``planCacheClear`` once per step
(``drop_cache_for_step``) where the server has it; the server's OS page cache cannot be dropped
from a client. Concurrency: every worker has its own client; MongoDB serves them concurrently.
"""
from __future__ import annotations

import datetime as dt
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

from workloads.datasets.base import side_tables
from workloads.datasets.schema import DatasetInfo, Scale, Schema, StringMode
from workloads.targets.arrow_frames import arrow_schema, frame_from_arrow, key_value, library_versions
from workloads.targets.bars import BAR_COLUMNS, price_columns
from workloads.targets.columns import column_schema
from workloads.targets.base import (IMPORT_TABLE, Footprint, Layout, NotSupported, OpResult,
                                    ProgressCallback, Target, TargetError)
from workloads.targets.quotes import (MAX_ASK_BID_RATIO, SESSION_CLOSE, SESSION_OPEN, QuoteColumns, day_span,
                                     ols_from_sums, quote_columns)
from workloads.targets.sizes import rows_bytes
from workloads.targets.lazy import get_dataset as _get_dataset, import_client

LAYOUT_FORMAT = 2      # 2: the devices index is (device_id, time) (equality, sort, range)
KEYS_SAMPLE = 100
DEFAULT_PORT = 27017
DEFAULT_DATABASE = "tickbench"
DEFAULT_TIMEOUT_MS = 3000
DEFAULT_BATCH_ROWS = 50_000
MANIFEST = "_tickbench_layouts"
SEQ = "_seq"
TS_FIELD = "_ts"       # a time-series collection's timeField where the day and the time of day are apart (TAQ)
DOCUMENTS, TIMESERIES = "documents", "timeseries"
VARIANTS = (DOCUMENTS, TIMESERIES)
DEFAULT_GRANULARITY = "seconds"
GRANULARITIES = ("seconds", "minutes", "hours")
STAND_IN = "mongo-java-server (wire-protocol stand-in, not MongoDB)"
_TEMPORAL = frozenset({"DATE", "SECOND", "TIME", "TIMESTAMP"})
EPOCH = dt.datetime(1970, 1, 1)


def _now() -> float:
    return time.perf_counter()


def _first_line(text: Any) -> str:
    lines = str(text).strip().splitlines()
    return lines[0] if lines else ""



def _pymongo():
    return import_client("mongodb", "pymongo")


def _arrow_api():
    """pymongoarrow's API (the ``mongodb`` extra), imported on the first read."""
    return import_client("mongodb", "pymongoarrow.api")


def table_name(dataset: str, scale: Scale, variant: str = DOCUMENTS) -> str:
    return f"{dataset}_{scale.key()}" + ("_ts" if variant == TIMESERIES else "")


# What a server says when it lacks a stage or an operator: (pattern, what the verdict names)
_UNKNOWN = (re.compile(r"Unrecognized pipeline stage name: '(\$\w+)'"),
            re.compile(r"Unrecognized window function, (\$\w+)"),
            re.compile(r"Unrecognized expression '(\$\w+)'"),
            re.compile(r"[Uu]nknown group operator '(\$\w+)'"))


def lacking(message: str) -> str | None:
    """The stage or operator a server's error says it does not know, else None."""
    for pattern in _UNKNOWN:
        found = pattern.search(message)
        if found:
            return found.group(1)
    return None


def bson_arrow_schema(schema: Schema) -> pa.Schema:
    """The Arrow types pymongoarrow builds from the stored BSON (module doc: Types): 32-bit ints
    for CHAR/SHORT/INT, datetimes in milliseconds, doubles, strings; ``arrow_schema`` after a cast."""
    def typ(column) -> pa.DataType:
        if column.is_string:
            return pa.string()
        if column.ddb_type in _TEMPORAL:
            return pa.timestamp("ms")
        return {"BOOL": pa.bool_(), "LONG": pa.int64(), "FLOAT": pa.float64(),
                "DOUBLE": pa.float64()}.get(column.ddb_type, pa.int32())
    return pa.schema([pa.field(c.name, typ(c)) for c in schema.columns])


def documents(frame: pd.DataFrame, schema: Schema, seq_start: int | None = None,
              stamp: tuple[str, str] | None = None) -> list[dict[str, Any]]:
    """Rows as BSON-ready documents (module doc: Types), ``_seq`` from ``seq_start``; ``stamp``
    (the day column, the time-of-day column) adds ``_ts``, their sum (a time-series timeField)."""
    names, columns = [], []
    if stamp is not None:
        day = frame[stamp[0]].to_numpy().astype("datetime64[ms]")
        clock = frame[stamp[1]].to_numpy().astype("datetime64[ms]") - np.datetime64(0, "ms")
        names.append(TS_FIELD)
        columns.append((day + clock).tolist())
    for column in schema.columns:
        series = frame[column.name]
        if column.is_string:
            values = series.astype(object).tolist()
        elif column.ddb_type in _TEMPORAL:
            values = series.to_numpy().astype("datetime64[ms]").tolist()
        else:
            values = series.to_numpy().tolist()
        names.append(column.name)
        columns.append(values)
    if seq_start is not None:
        names.append(SEQ)
        columns.append(range(seq_start, seq_start + len(frame)))
    return [dict(zip(names, row)) for row in zip(*columns)]


def bson_value(value: Any) -> Any:
    """A suite parameter as the stored type: a date at midnight, a time of day on 1970-01-01."""
    if isinstance(value, (list, tuple)):
        return [bson_value(v) for v in value]
    if isinstance(value, pd.Timestamp):
        return value.to_pydatetime()
    if isinstance(value, dt.datetime):
        return value
    if isinstance(value, dt.date):
        return dt.datetime.combine(value, dt.time())
    if isinstance(value, dt.time):
        return dt.datetime.combine(EPOCH.date(), value)
    if isinstance(value, np.generic):
        return value.item()
    return value


def _result_frame(table: pa.Table, columns: tuple[str, ...]) -> pd.DataFrame:
    """A pipeline's Arrow table (types inferred by pymongoarrow) as a frame of ``columns`` in that
    order (datetimes as datetime64[ns], strings as objects; a column no document had is all None)."""
    frame = frame_from_arrow(table, StringMode.OBJECT)
    for name in columns:
        if name not in frame.columns:
            frame[name] = pd.Series([None] * len(frame), dtype=object, index=frame.index)
    return frame[list(columns)]


class MongoDBTarget(Target):
    kind = "mongodb"
    read_phases = ("query", "decode")
    query_dialect = "mongodb"

    def __init__(self, config: dict[str, Any]):
        super().__init__(config)
        self.host = str(self.config.get("host") or "").strip()
        if not self.host:
            raise TargetError("MongoDB: no host given")
        try:
            self.port = int(self.config.get("port") or DEFAULT_PORT)
        except (TypeError, ValueError):
            raise TargetError(f"MongoDB port {self.config.get('port')!r} is not a number") from None
        self.user = str(self.config.get("user") or "")
        self.password = str(self.config.get("password") or "")
        self.database = str(self.config.get("database") or DEFAULT_DATABASE)
        self.auth_source = str(self.config.get("auth_source") or "")
        self.timeout_ms = int(self.config.get("timeout_ms") or DEFAULT_TIMEOUT_MS)
        self.batch_rows = int(self.config.get("batch_rows") or DEFAULT_BATCH_ROWS)
        self.variant = str(self.config.get("layout") or DOCUMENTS).strip().lower()
        if self.variant not in VARIANTS:
            raise TargetError(f"MongoDB layout {self.config.get('layout')!r}: choose one of {', '.join(VARIANTS)}")
        self.granularity = str(self.config.get("granularity") or DEFAULT_GRANULARITY).strip().lower()
        if self.granularity not in GRANULARITIES:
            raise TargetError(f"MongoDB time-series granularity {self.config.get('granularity')!r}: choose one "
                              f"of {', '.join(GRANULARITIES)}")
        self.address = f"{self.host}:{self.port}"
        self._client = None
        self._build: dict[str, Any] | None = None
        self._info: DatasetInfo | None = None
        self._explain: bool | None = None
        self._raw_batches: bool | None = None    # the server honours aggregate's cursor batchSize 0

    # --- connection --------------------------------------------------------------------------
    def error(self, exc: BaseException) -> TargetError:
        """A pymongo error as one line a user can act on."""
        text = str(exc)
        low = text.lower()
        code = getattr(exc, "code", None)
        if code == 18 or "authentication failed" in low or "auth failed" in low:
            return TargetError(f"MongoDB at {self.address}: authentication failed for user {self.user!r} "
                               "(wrong password, or no such user)")
        if "saslstart" in low or "no such command: 'authenticate'" in low:
            return TargetError(f"MongoDB at {self.address}: authentication failed for user {self.user!r}: the "
                               "server does not support authentication (the wire-protocol stand-in?)")
        if "refused" in low:
            return TargetError(f"MongoDB at {self.address}: connection refused (no server listening there)")
        if "timed out" in low or "timeout" in low:
            return TargetError(f"MongoDB at {self.address}: no answer within {self.timeout_ms} ms")
        if "name or service not known" in low or "nodename nor servname" in low or "getaddrinfo" in low:
            return TargetError(f"MongoDB at {self.address}: cannot resolve host {self.host!r}")
        if "wire version" in low:
            return TargetError(f"MongoDB at {self.address}: this pymongo cannot talk to the server: "
                               f"{_first_line(text)}")
        missing = lacking(text)
        if missing:        # the server's limit, in its own words: never the project's
            return NotSupported(f"this server does not support {missing}")
        return TargetError(f"MongoDB at {self.address} answered: {_first_line(text.split(', full error:')[0])}")

    def _call(self, fn, *args, **kwargs):
        pymongo = _pymongo()
        try:
            return fn(*args, **kwargs)
        except TargetError:
            raise
        except pymongo.errors.PyMongoError as exc:
            raise self.error(exc) from None

    def client(self):
        if self._client is None:
            pymongo = _pymongo()
            options: dict[str, Any] = {"serverSelectionTimeoutMS": self.timeout_ms,
                                       "connectTimeoutMS": self.timeout_ms, "tz_aware": False,
                                       "appname": "tickbench"}
            if self.user:
                options.update(username=self.user, password=self.password)
                if self.auth_source:
                    options["authSource"] = self.auth_source
            client = pymongo.MongoClient(self.host, self.port, **options)
            try:
                self._build = self._call(client.admin.command, "buildInfo")
                # authentication happens on the first command of a database (buildInfo needs none)
                self._call(client[self.database].command, "ping")
            except BaseException:
                client.close()
                raise
            self._client = client
        return self._client

    def db(self):
        return self.client()[self.database]

    @property
    def stand_in(self) -> bool:
        self.client()
        return "gitVersion" not in (self._build or {})

    @property
    def server_label(self) -> str:
        self.client()
        return STAND_IN if self.stand_in else f"MongoDB {self._build.get('version', '?')}"

    def _extra(self, **more) -> dict[str, Any]:
        return {"server": self.server_label, **more}

    # --- names ---------------------------------------------------------------------------------
    def _dataset_info(self, layout: Layout) -> DatasetInfo:
        if self._info is None or self._info.name != layout.dataset:
            self._info = _get_dataset(layout.dataset).info
        return self._info

    def table(self, layout: Layout) -> str:
        return table_name(layout.dataset, layout.scale, self.variant)

    def import_table(self, layout: Layout) -> str:
        return self.table(layout) + "_import"

    def minute_table(self, layout: Layout) -> str:
        return self.table(layout) + "_minute"

    @staticmethod
    def time_field(info: DatasetInfo) -> str:
        """A time-series collection's timeField: the time column when it holds the whole instant
        (devices), else ``_ts``, the day plus the time of day (TAQ)."""
        return info.time_column if info.date_column == info.time_column else TS_FIELD

    def index_keys(self, info: DatasetInfo, main: bool = True) -> list[tuple[str, int]]:
        """The layout's compound index, by equality, sort, range. TAQ: the day and the key (both
        equalities of a day or a slice read), then time and ``_seq`` (the order). Devices: the key,
        then time (a device's span is equality then range). A time-series collection: its
        metaField (the key), then its timeField."""
        if main and self.variant == TIMESERIES:
            return [(info.key_column, 1), (self.time_field(info), 1)]
        if info.date_column == info.time_column:
            return [(info.key_column, 1), (info.time_column, 1)]
        keys = [(info.date_column, 1), (info.key_column, 1)]
        if main:
            keys += [(info.time_column, 1), (SEQ, 1)]
        return keys

    # --- parent side ---------------------------------------------------------------------------
    def prepare(self, dataset: str, scale: Scale, strings: StringMode,
                progress: ProgressCallback | None = None) -> Layout:
        strings = StringMode.parse(strings)
        ds = _get_dataset(dataset)
        info: DatasetInfo = ds.info
        table = table_name(dataset, scale, self.variant)
        days = list(ds.trading_days(scale))
        scale_json = json.dumps({**asdict(scale), "content": ds.content_id}, sort_keys=True)
        db = self.db()
        manifests = db[MANIFEST]
        row = self._call(manifests.find_one, {"_id": table})
        compatible = row is not None and row.get("format") == LAYOUT_FORMAT and row.get("scale") == scale_json \
            and row.get("variant", DOCUMENTS) == self.variant
        entries = {e["date"]: e for e in row["days"]} if compatible else {}
        main = db[table]
        if not compatible:
            self._call(main.drop)
        if self.variant == TIMESERIES:
            self._ensure_timeseries(table, info)
            if compatible and not row.get("complete"):     # no delete of a day on 5.0-6.x: start again
                self._call(main.drop)
                self._ensure_timeseries(table, info)
                entries = {}
        self._side_collections(ds, scale, table)
        keys = [str(k) for k in ds.keys(scale)[:KEYS_SAMPLE]]
        if compatible and row.get("complete") and sorted(entries) == [d.isoformat() for d in days]:
            return self._layout(dataset, scale, strings, entries, row["keys_sample"], table, reused=True)
        manifest = {"format": LAYOUT_FORMAT, "dataset": dataset, "scale": scale_json, "keys_sample": keys,
                    "variant": self.variant, "schema": [[c.name, c.ddb_type] for c in info.schema.columns],
                    "versions": self._versions()}
        expected = dict(zip(days, ds.day_rows(scale)))
        total = sum(expected.values())
        rows_done = 0
        for index, day in enumerate(days):
            entry = entries.get(day.isoformat())
            have = self._call(main.count_documents, self._day_filter(info, day))
            if entry and have == entry["rows"] == expected[day]:
                rows_done += entry["rows"]
                continue
            if have:                 # an interrupted day: delete what it left, load it again
                self._call(main.delete_many, self._day_filter(info, day))
            rows = self._load_day(main, ds, index, scale, rows_done, total, progress)
            entries[day.isoformat()] = {"date": day.isoformat(), "rows": rows}
            self._write_manifest(table, manifest, entries, complete=False)
            rows_done += rows
            if progress is not None:
                progress(min(rows_done, total), total, f"{day.isoformat()} loaded into {table}")
        self._call(main.create_index, self.index_keys(info), name="day_key")
        wanted = {d.isoformat() for d in days}
        entries = {k: v for k, v in entries.items() if k in wanted}
        self._write_manifest(table, manifest, entries, complete=True)
        return self._layout(dataset, scale, strings, entries, keys, table, reused=False)

    def _versions(self) -> dict[str, str]:
        versions = library_versions()
        versions["pymongo"] = _pymongo().version
        versions["server"] = self.server_label
        return versions

    def _collection_type(self, name: str) -> str | None:
        """What the server lists ``name`` as ("collection", "timeseries", "view"), None if absent
        (every listed collection is read: the stand-in ignores listCollections' filter)."""
        for entry in self._call(lambda: list(self.db().list_collections())):
            if entry.get("name") == name:
                return str(entry.get("type") or "collection")
        return None

    def _ensure_timeseries(self, name: str, info: DatasetInfo) -> None:
        """``name`` as a time-series collection (timeField, metaField = the key, granularity), or
        ``NotSupported`` with the server's verdict: its error, or how it lists what it created."""
        kind = self._collection_type(name)
        if kind == "timeseries":
            return
        if kind is not None:          # a plain collection of that name (an older layout): not ours to keep
            self._call(self.db().drop_collection, name)
        options = {"timeField": self.time_field(info), "metaField": info.key_column, "granularity": self.granularity}
        pymongo = _pymongo()
        try:
            self.db().command("create", name, timeseries=options)
        except pymongo.errors.OperationFailure as exc:
            said = _first_line(exc.details.get("errmsg") if exc.details else exc)
            raise NotSupported(f"this server does not support time-series collections (MongoDB at "
                               f"{self.address} answered create with timeseries: {said})") from None
        except pymongo.errors.PyMongoError as exc:
            raise self.error(exc) from None
        kind = self._collection_type(name)
        if kind != "timeseries":
            if kind is not None:
                self._call(self.db().drop_collection, name)
            raise NotSupported(f"this server does not support time-series collections (MongoDB at {self.address} "
                               f"accepted create with timeseries but lists {name} as {kind!r}, not 'timeseries')")

    def _load_day(self, main, ds, index: int, scale: Scale, rows_done: int, total: int,
                  progress: ProgressCallback | None) -> int:
        rows, last = 0, None
        time_column = ds.info.time_column
        for chunk in ds.generate_day(index, scale, StringMode.ARROW, self.batch_rows):
            times = chunk[time_column]
            if len(chunk) and (not times.is_monotonic_increasing or (last is not None and times.iloc[0] < last)):
                raise TargetError(f"{ds.info.name}: day {index + 1} is not in time order; the arrival ordinal "
                                  f"({SEQ}) must follow time order")
            last = times.iloc[-1] if len(chunk) else last
            if len(chunk):
                stamp = (ds.info.date_column, ds.info.time_column) \
                    if self.variant == TIMESERIES and self.time_field(ds.info) == TS_FIELD else None
                self._call(main.insert_many, documents(chunk, ds.info.schema, seq_start=rows, stamp=stamp),
                           ordered=False)
            rows += len(chunk)
            if progress is not None:
                progress(min(rows_done + rows, total), total, f"loading day {index + 1} into {main.name}")
        return rows

    def _side_collections(self, ds, scale: Scale, table: str) -> None:
        db = self.db()
        for name, schema in side_tables(ds).items():
            side = db[f"{table}_{name}"]
            frame = getattr(ds, f"{name}_frame")(scale)
            if self._call(side.count_documents, {}) == len(frame):
                continue
            self._call(side.delete_many, {})
            self._call(side.insert_many, documents(frame, schema))
            self._call(side.create_index, [(schema.columns[0].name, 1)])

    def _write_manifest(self, table: str, manifest: dict[str, Any], entries: dict[str, dict], complete: bool) -> None:
        doc = {**manifest, "days": sorted(entries.values(), key=lambda e: e["date"]), "complete": complete,
               "created": dt.datetime.now(dt.timezone.utc).replace(tzinfo=None)}
        self._call(self.db()[MANIFEST].replace_one, {"_id": table}, doc, upsert=True)

    def _layout(self, dataset, scale, strings, entries, keys, table, reused) -> Layout:
        ordered = sorted(entries.values(), key=lambda e: e["date"])
        return Layout(dataset=dataset, scale=scale, strings=strings,
                      days=tuple(dt.date.fromisoformat(e["date"]) for e in ordered),
                      keys_sample=tuple(keys), rows=sum(e["rows"] for e in ordered),
                      footprint_bytes=sum(self._stats(name)[0] for name in self._layout_names(dataset, table)),
                      reused=reused, location=f"{self.address}/{self.database}.{table}")

    @staticmethod
    def _layout_names(dataset: str, table: str) -> list[str]:
        return [table] + [f"{table}_{name}" for name in side_tables(_get_dataset(dataset))]

    def _stats(self, name: str) -> tuple[int, str]:
        """(bytes, how) of one collection: storage + index sizes (the stand-in: data size)."""
        if name not in self._call(self.db().list_collection_names):
            return 0, "no such collection"
        stats = self._call(self.db().command, "collStats", name)
        index = int(stats.get("totalIndexSize") or sum((stats.get("indexSize") or {}).values()) or 0)
        storage = int(stats.get("storageSize") or 0)
        if storage:
            return storage + index, "collStats storageSize + totalIndexSize"
        return int(stats.get("size") or 0) + index, "collStats size + index sizes (the server reports no storage size)"

    def footprint(self, layout: Layout) -> int:
        return sum(self._stats(name)[0] for name in self._layout_names(layout.dataset, self.table(layout)))

    def footprint_detail(self, layout: Layout, table: str = "") -> Footprint:
        name = self.import_table(layout) if table == IMPORT_TABLE else self.table(layout)
        size, how = self._stats(name)
        if not size:
            return Footprint(bytes=0, method=f"{name} has no data yet")
        return Footprint(bytes=size, columns={}, replicas=1,
                         method=f"{how}; MongoDB stores documents, no per-column sizes")

    def describe(self) -> dict[str, Any]:
        info: dict[str, Any] = {
            "kind": self.kind, "host": self.host, "port": self.port, "database": self.database,
            "user": self.user, "local_engine": bool(self.config.get("local_engine", False)),
            "layout": self._layout_text(),
            "read_path": ("pymongoarrow: find_arrow_all (day, slice) and aggregate_arrow_all (bars, suite "
                          "queries) with the dataset's schema, BSON decoded into Arrow in C; no sort on a day or "
                          "slice read (the collection's order). This is the client path MongoDB documents for "
                          "Arrow and pandas; no faster path is known to Tickbench"),
            "phases": "query (pymongoarrow's call: server execution, transfer and BSON -> Arrow merged: it "
                      "decodes each batch as it arrives) / decode (Arrow -> DataFrame); probes: server (explain "
                      "executionStats executionTimeMillis) / transfer (raw batches) / decode where the server has "
                      "explain",
            "cold_cache": "planCacheClear once per step where the server has it; MongoDB's cache and the "
                          "server's OS page cache are not controlled"}
        try:
            info["pymongo"] = _pymongo().version
            try:
                info["pymongoarrow"] = import_client("mongodb", "pymongoarrow").__version__
            except TargetError as exc:
                info["pymongoarrow"] = str(exc)
            self.client()
            info["server_version"] = self._build.get("version")
            info["server"] = self.server_label
            if self.stand_in:
                info["warning"] = ("this server is mongo-java-server, a wire-protocol stand-in: its timings "
                                   "are not MongoDB's")
            if self._raw_batches is False:
                info["read_path"] += ("; NOT on this server for pipelines: it ignores aggregate's batchSize 0, so "
                                      "aggregate_arrow_all cannot run and pipelines are read as a cursor of "
                                      "undecoded documents decoded by pymongoarrow's decoder")
        except Exception as exc:  # a description must never stop a run
            info["error"] = _first_line(exc)
        return info

    def _layout_text(self) -> str:
        if self.variant == TIMESERIES:
            return (f"time-series collection per dataset (timeseries: timeField = the time, or {TS_FIELD} = day + "
                    f"time of day for TAQ; metaField = the key; granularity {self.granularity}), index (key, "
                    "timeField); appends, imports and side tables in plain collections")
        return ("a collection per dataset, one document per row; index (date, symbol, time, _seq) for TAQ, "
                "(device_id, time) for devices (equality, sort, range)")

    def drop_cache(self, layout: Layout) -> list[str]:
        """Nothing: WiredTiger's cache is emptied only by a restart, and the plan cache
        (``planCacheClear``) holds plans, not data, so clearing it would make no read cold."""
        return []

    def clear_table(self, layout: Layout, table: str = "") -> None:
        if table == "minute":
            name = self.minute_table(layout)
        elif table == IMPORT_TABLE:
            name = self.import_table(layout)
        else:
            name = table or self.table(layout) + "_append"
        self._call(self.db().drop_collection, name)     # its index too: an import builds it again

    # --- worker side ---------------------------------------------------------------------------
    def open(self, layout: Layout, worker: int = 0) -> None:
        self._dataset_info(layout)
        self.client()
        if self._explain is None:
            try:
                self.db().command("explain", {"count": MANIFEST}, verbosity="executionStats")
                self._explain = True
            except Exception:
                self._explain = False
        if self._raw_batches is None:
            self._raw_batches = self._honours_batch_size_zero(self.table(layout))
        self.probed_ops = frozenset({"read_day", "read_slice"}) if self._explain else frozenset()

    def _honours_batch_size_zero(self, collection: str) -> bool:
        """Asked once, untimed: pymongoarrow's ``aggregate_arrow_all`` reads raw batches, which
        pymongo requests as an ``aggregate`` whose cursor has ``batchSize: 0`` and whose first
        batch must come back empty. A server that answers documents in it (the stand-in) cannot
        serve that call: its pipelines go through a cursor of undecoded documents instead."""
        reply = self._call(self.db().command, "aggregate", collection,
                           pipeline=[{"$limit": 1}, {"$project": {"_id": 1}}], cursor={"batchSize": 0})
        cursor = reply.get("cursor") or {}
        if cursor.get("id"):
            with suppress(Exception):  # a cursor left open times out on the server
                self.db().command("killCursors", collection, cursors=[cursor["id"]])
        return not cursor.get("firstBatch")

    def close(self) -> None:
        if self._client is not None:
            self._client.close()
            self._client = None

    def _check_day(self, layout: Layout, day: dt.date) -> None:
        if day not in layout.days:
            span = f"{layout.days[0]} .. {layout.days[-1]}" if layout.days else "none"
            raise ValueError(f"{day} is not a trading day of this layout (days: {span})")

    def _day_filter(self, info: DatasetInfo, day: dt.date) -> dict[str, Any]:
        """A day's rows: its date (TAQ), or a range of the time (devices, and a time-series
        collection's timeField, which its buckets are pruned by)."""
        start = dt.datetime.combine(day, dt.time())
        span = {"$gte": start, "$lt": start + dt.timedelta(days=1)}
        if self.variant == TIMESERIES:
            return {self.time_field(info): span}
        column = info.schema.column(info.date_column)
        if column.ddb_type == "DATE":
            return {column.name: start}
        return {column.name: span}

    def _find(self, layout: Layout, filter_: dict[str, Any], info: DatasetInfo,
              schema: Schema | None = None) -> OpResult:
        """The user's call: pymongoarrow's ``find_arrow_all`` with the schema's BSON types (query:
        the server's execution, the transfer and pymongoarrow's BSON -> Arrow in C, batch by batch),
        then Arrow -> DataFrame (decode: a cast to the dataset's Arrow types, ``to_pandas``). No sort:
        the rows come in the order the collection gives them. The projection names the schema's
        fields, or only ``schema``'s (some of them)."""
        schema = schema or info.schema
        api = _arrow_api()
        collection = self.db()[self.table(layout)]
        projection = {"_id": 0, **{name: 1 for name in schema.names}}
        wanted = api.Schema.from_arrow(bson_arrow_schema(schema))
        if self.probing and self._explain:
            return self._probed_find(layout, collection, filter_, projection, wanted, schema)
        t0 = _now()
        table = self._call(api.find_arrow_all, collection, filter_, schema=wanted, projection=projection)
        t1 = _now()
        frame = frame_from_arrow(table.cast(arrow_schema(schema)), layout.strings)
        t2 = _now()
        return OpResult(rows=len(frame), phases={"query": t1 - t0, "decode": t2 - t1}, frame=frame,
                        schema=schema, node=self.address, extra=self._extra(read_path="pymongoarrow find_arrow_all"))

    def _probed_find(self, layout: Layout, collection, filter_, projection, wanted, schema: Schema) -> OpResult:
        """A probe: the same find as raw BSON batches (server + transfer, nothing decoded), then
        pymongoarrow's decoder and ``to_pandas`` (decode); ``explain`` afterwards for the server's time."""
        from pymongoarrow.context import PyMongoArrowContext
        t0 = _now()
        batches = self._call(lambda: list(collection.find_raw_batches(filter_, projection)))
        t1 = _now()
        context = PyMongoArrowContext(wanted, codec_options=collection.codec_options)
        for batch in batches:
            context.process_bson_stream(batch)
        frame = frame_from_arrow(context.finish().cast(arrow_schema(schema)), layout.strings)
        t2 = _now()
        result = OpResult(rows=len(frame), phases={"query": t1 - t0, "decode": t2 - t1}, frame=frame, schema=schema,
                          node=self.address, wire_bytes=sum(len(b) for b in batches),
                          extra=self._extra(read_path="pymongoarrow decoder over find_raw_batches (probe)"))
        said = self._call(self.db().command, "explain", {"find": collection.name, "filter": filter_,
                                                         "projection": projection}, verbosity="executionStats")
        ms = (said.get("executionStats") or {}).get("executionTimeMillis")
        if ms is not None:
            server = min(ms / 1000, t1 - t0)
            result.phases = {"server": server, "transfer": t1 - t0 - server, "decode": t2 - t1}
            result.extra["server_time"] = "explain executionStats executionTimeMillis (a second run)"
        return result

    def read_day(self, layout: Layout, day: dt.date, columns: tuple[str, ...] | None = None) -> OpResult:
        """The day's rows in the order the collection gives them (no sort: order is not part of a
        day read's answer)."""
        self._check_day(layout, day)
        info = self._dataset_info(layout)
        return self._find(layout, self._day_filter(info, day), info,
                          column_schema(info.schema, columns, layout.dataset))

    def read_slice(self, layout: Layout, day: dt.date, key: str) -> OpResult:
        """A key's rows of the day, in the order the collection gives them (no sort)."""
        self._check_day(layout, day)
        info = self._dataset_info(layout)
        filter_ = {**self._day_filter(info, day),
                   info.key_column: key_value(info.schema.column(info.key_column), key)}
        return self._find(layout, filter_, info)

    def _aggregate(self, collection: str, pipeline: list[dict], columns: tuple[str, ...],
                   schema: pa.Schema | None = None, strings: StringMode = StringMode.ARROW) -> OpResult:
        """A pipeline through pymongoarrow's ``aggregate_arrow_all`` (query: execution, transfer,
        BSON -> Arrow), then Arrow -> DataFrame (decode). ``schema``: the result's Arrow types (BSON's:
        datetimes in ms, 32/64-bit ints, doubles, strings), else pymongoarrow infers them. On a
        server that ignores batchSize 0 (``_honours_batch_size_zero``) the same decoder reads a
        cursor of undecoded documents, and ``extra["read_path"]`` says so."""
        api = _arrow_api()
        coll = self.db()[collection]
        wanted = api.Schema.from_arrow(schema) if schema is not None else None
        if self._raw_batches is None:
            self._raw_batches = self._honours_batch_size_zero(collection)
        t0 = _now()
        if self._raw_batches:
            table = self._call(api.aggregate_arrow_all, coll, pipeline, schema=wanted, allowDiskUse=True)
            path = "pymongoarrow aggregate_arrow_all"
        else:
            table = self._call(self._documents_to_arrow, coll, pipeline, wanted)
            path = ("pymongoarrow's decoder over a cursor of undecoded documents (this server ignores "
                    "aggregate's batchSize 0: aggregate_arrow_all cannot run)")
        t1 = _now()
        frame = frame_from_arrow(table, strings) if schema is not None else _result_frame(table, columns)
        t2 = _now()
        return OpResult(rows=len(frame), phases={"query": t1 - t0, "decode": t2 - t1}, frame=frame,
                        node=self.address, extra=self._extra(read_path=path))

    def _documents_to_arrow(self, coll, pipeline: list[dict], wanted) -> pa.Table:
        from bson import CodecOptions
        from bson.raw_bson import RawBSONDocument
        from pymongoarrow.context import PyMongoArrowContext
        raw = coll.with_options(codec_options=CodecOptions(document_class=RawBSONDocument, tz_aware=False))
        if wanted is not None:
            pipeline = [*pipeline, {"$project": wanted._get_projection()}]    # as aggregate_arrow_all does
        context = PyMongoArrowContext(wanted, codec_options=raw.codec_options)
        stream = b"".join(doc.raw for doc in raw.aggregate(pipeline, allowDiskUse=True))
        if stream:
            context.process_bson_stream(stream)
        return context.finish()

    @staticmethod
    def _minute(field: str) -> dict:
        return {"$subtract": [f"${field}", {"$mod": [{"$toLong": f"${field}"}, 60_000]}]}

    def minute_bars(self, layout: Layout, day: dt.date, key: str) -> OpResult:
        """An aggregation pipeline on the server: the key-day's quotes sorted by time and arrival
        ordinal, grouped by minute with $first/$last/$max/$min of the mid."""
        self._check_day(layout, day)
        info = self._dataset_info(layout)
        bid, ask = price_columns(info)
        t = info.time_column
        mid = {"$divide": [{"$add": [f"${bid}", f"${ask}"]}, 2]}
        pipeline = [
            {"$match": {**self._day_filter(info, day), info.key_column: key_value(info.schema.column(info.key_column), key)}},
            {"$sort": {t: 1, SEQ: 1}},
            {"$group": {"_id": self._minute(t), "open": {"$first": mid}, "high": {"$max": mid},
                        "low": {"$min": mid}, "close": {"$last": mid}}},
            {"$sort": {"_id": 1}},
            {"$project": {"_id": 0, "minute": "$_id", "open": 1, "high": 1, "low": 1, "close": 1}}]
        schema = pa.schema([pa.field("minute", pa.timestamp("ms"))] + [pa.field(c, pa.float64()) for c in BAR_COLUMNS[1:]])
        return self._aggregate(self.table(layout), pipeline, BAR_COLUMNS, schema)

    def append(self, layout: Layout, frame: pd.DataFrame, table: str = "") -> OpResult:
        """Rows as documents (``decode``: DataFrame -> documents) into ``<table>_append`` (or
        ``table``) with ``insert_many`` (``query``: encoding, sending, the server's write)."""
        info = self._dataset_info(layout)
        target = self.db()[table or self.table(layout) + "_append"]
        t0 = _now()
        docs = documents(frame, info.schema)
        t1 = _now()
        if docs:
            self._call(target.insert_many, docs, ordered=False)
        t2 = _now()
        return OpResult(rows=len(frame), nbytes=rows_bytes(len(frame), info.schema),
                        phases={"decode": t1 - t0, "query": t2 - t1}, node=self.address, extra=self._extra())

    def row_count(self, layout: Layout, table: str = "") -> int:
        return int(self._call(self.db()[table or self.table(layout)].count_documents, {}))

    def appended_rows(self, layout: Layout, table: str = "") -> int:
        return self.row_count(layout, table or self.table(layout) + "_append")

    # --- reports 001 and 004 ---------------------------------------------------------------------
    def import_csv(self, layout: Layout, path: Path, day: dt.date) -> OpResult:
        """No server-side CSV loader: parsed on the client (``decode``), ``insert_many`` in
        batches (``query``); the index build afterwards timed apart (``queryable_s``)."""
        from workloads.datasets.csvread import iter_csv
        info = self._dataset_info(layout)
        target = self.db()[self.import_table(layout)]
        decode = query = 0.0
        rows = 0
        t = _now()
        for chunk in iter_csv(path, layout.dataset, chunk_rows=self.batch_rows):
            docs = documents(chunk, info.schema)
            t1 = _now()
            decode += t1 - t
            if docs:
                self._call(target.insert_many, docs, ordered=False)
            rows += len(docs)
            t = _now()
            query += t - t1
        start = _now()
        self._call(target.create_index, self.index_keys(info, main=False), name="day_key")
        indexed = _now() - start
        return OpResult(rows=rows, nbytes=rows_bytes(rows, info.schema), wire_path=path, node=self.address,
                        phases={"decode": decode, "query": query},
                        extra=self._extra(queryable_s=indexed, index="create_index (day, key) after the load"))

    def export_csv(self, layout: Layout, day: dt.date, path: Path) -> OpResult:
        """No server-side CSV exporter: the day read with ``find`` and written with
        ``workloads.datasets.csvwrite.write_csv`` (ISO style)."""
        from workloads.datasets.csvwrite import write_csv
        read = self.read_day(layout, day)
        t0 = _now()
        rows = write_csv(read.frame, path, self._dataset_info(layout).schema, style="iso")
        t1 = _now()
        return OpResult(rows=rows, schema=self._dataset_info(layout).schema, wire_path=path, node=self.address,
                        phases={**read.phases, "decode": read.phases["decode"] + t1 - t0},
                        extra=self._extra(exporter="client: find + write_csv (MongoDB has no server CSV export)"))

    def run_query(self, layout: Layout, query, values: dict[str, Any]) -> OpResult:
        """The suite's ``mongodb`` text names a function of ``workloads.queries.mongo_suite``
        that builds the pipeline; the pipeline runs on the server."""
        from workloads.queries import mongo_suite
        text = query.text(self.query_dialect)
        if text is None:
            raise NotSupported(f"query {query.id} has no MongoDB pipeline")
        build = getattr(mongo_suite, text.strip(), None)
        if build is None:
            raise TargetError(f"query {query.id}: no pipeline function {text.strip()!r} in mongo_suite")
        table = self.table(layout)
        names = {"quotes": table, "readings": table, "info": f"{table}_info"}
        source, pipeline = build({k: bson_value(v) for k, v in values.items()}, names)
        return self._aggregate(names[source], pipeline, tuple(query.columns))

    # --- report 003 (definitions: workloads/targets/quotes.py) ---------------------------------------
    def _quote_match(self, layout: Layout, days) -> tuple[QuoteColumns, dict[str, Any]]:
        try:
            cols = quote_columns(self._dataset_info(layout))
            first, last = day_span(layout.days, days)
        except ValueError as exc:
            raise TargetError(f"{layout.dataset}: {exc}") from None
        return cols, {cols.date: {"$gte": bson_value(first), "$lte": bson_value(last)}}

    @staticmethod
    def _seed_filter(cols: QuoteColumns) -> dict[str, Any]:
        lo = (SESSION_OPEN.hour * 3600 + SESSION_OPEN.minute * 60 + SESSION_OPEN.second) * 1000
        hi = (SESSION_CLOSE.hour * 3600 + SESSION_CLOSE.minute * 60 + SESSION_CLOSE.second + 1) * 1000
        ms = {"$mod": [{"$toLong": f"${cols.time}"}, 86_400_000]}
        b, a = f"${cols.bid}", f"${cols.ask}"
        return {"$and": [{"$gte": [ms, lo]}, {"$lt": [ms, hi]}, {"$gt": [a, b]}, {"$gt": [b, 0]},
                         {"$gt": [a, 0]}, {"$lt": [{"$divide": [a, b]}, MAX_ASK_BID_RATIO]}]}

    def spread_by_minute(self, layout: Layout, days=()) -> OpResult:
        cols, match = self._quote_match(layout, days)
        a, b = f"${cols.ask}", f"${cols.bid}"
        spread = {"$multiply": [{"$divide": [{"$subtract": [a, b]}, {"$add": [a, b]}]}, 2]}
        pipeline = [{"$match": {**match, "$expr": self._seed_filter(cols)}},
                    {"$group": {"_id": self._minute(cols.time), "avgSpread": {"$avg": spread}}},
                    {"$sort": {"_id": 1}},
                    {"$project": {"_id": 0, "minute": "$_id", "avgSpread": 1}}]
        schema = pa.schema([pa.field("minute", pa.timestamp("ms")), pa.field("avgSpread", pa.float64())])
        return self._aggregate(self.table(layout), pipeline, ("minute", "avgSpread"), schema)

    def ols_spread(self, layout: Layout, days=()) -> OpResult:
        """Sums on the server ($group: n, Σx, Σy, Σx², Σy², Σxy), the table from them on the client."""
        cols, match = self._quote_match(layout, days)
        a, b = f"${cols.ask}", f"${cols.bid}"
        y = {"$subtract": [{"$divide": [a, b]}, 1]}
        x = {"$multiply": [{"$add": [f"${cols.bid_size}", f"${cols.ask_size}"]}, {"$divide": [{"$add": [a, b]}, 2]}]}
        pipeline = [{"$match": {**match, "$expr": self._seed_filter(cols)}},
                    {"$project": {"_id": 0, "x": x, "y": y}},
                    {"$group": {"_id": None, "n": {"$sum": 1}, "sx": {"$sum": "$x"}, "sy": {"$sum": "$y"},
                                "xx": {"$sum": {"$multiply": ["$x", "$x"]}},
                                "yy": {"$sum": {"$multiply": ["$y", "$y"]}},
                                "xy": {"$sum": {"$multiply": ["$x", "$y"]}}}}]
        result = self._aggregate(self.table(layout), pipeline, ("n", "sx", "sy", "xx", "yy", "xy"))
        start = _now()
        row = result.frame.iloc[0].to_dict() if len(result.frame) else {"n": 0}
        n = int(row.get("n") or 0)
        ax, ay = (row["sx"] / n, row["sy"] / n) if n else (0.0, 0.0)
        try:
            frame = ols_from_sums(n, ax, ay, row.get("xx", 0) - n * ax * ax, row.get("yy", 0) - n * ay * ay,
                                  row.get("xy", 0) - n * ax * ay)
        except ValueError as exc:
            raise TargetError(f"{layout.dataset}: {exc}") from None
        result.phases["decode"] += _now() - start
        result.frame, result.rows = frame, len(frame)
        result.extra["observations"] = n
        return result

    def mapreduce_minute_bars(self, layout: Layout, days=()) -> OpResult:
        """Report 003 (b): avg bid/ask per (symbol, date, minute) of the span, ``$merge``d into the
        layout's minute collection on the server; the answer is the number of bars written."""
        cols, match = self._quote_match(layout, days)
        minute = self.minute_table(layout)
        pipeline = [{"$match": match},
                    {"$group": {"_id": {cols.key: f"${cols.key}", cols.date: f"${cols.date}",
                                        "minute": self._minute(cols.time)},
                                cols.bid: {"$avg": f"${cols.bid}"}, cols.ask: {"$avg": f"${cols.ask}"}}},
                    {"$merge": {"into": minute, "whenMatched": "replace", "whenNotMatched": "insert"}}]
        coll = self.db()[self.table(layout)]
        before = self.row_count(layout, minute)
        t0 = _now()
        self._call(lambda: list(coll.aggregate(pipeline, allowDiskUse=True)))
        t1 = _now()
        bars = self.row_count(layout, minute) - before
        frame = pd.DataFrame({"bars": [int(bars)]})
        return OpResult(rows=1, phases={"query": t1 - t0, "decode": _now() - t1}, frame=frame, node=self.address,
                        extra=self._extra(bars=int(bars)))
