"""MongoDB: a user's MongoDB server through ``pymongo``.

Config keys (plain data, rebuilt in every worker process): ``host`` (required), ``port`` (default
27017), ``user`` and ``password`` (none: no authentication), ``database`` (default
``tickbench``), ``auth_source`` (the database holding the user; default pymongo's: ``database``
or ``admin``), ``local_engine`` (true when Tickbench started the server: described),
``timeout_ms`` (server selection and connect, default 3000: a refused port fails fast),
``batch_rows`` (documents per ``insert_many``, default 50,000). pymongo is imported only when a
connection is made (``MissingClient`` names the ``mongodb`` extra).

No real MongoDB server is obtainable on the machines this is developed on: the tests run against
``mongo-java-server`` (``workloads.local_engines.mongodb``), an independent implementation of the
wire protocol. Its timings are not MongoDB's. ``describe()`` records the server's ``buildInfo``
version and, when the server is that stand-in (its ``buildInfo`` has no ``gitVersion``, which every
``mongod`` reports), says so in ``server``; every operation's ``extra["server"]`` carries the same
label so reports can flag it.

Layout (report 004's): one collection per dataset and scale, ``<database>.<dataset>_<scale key>``,
one document per row, with a compound index on the day and the key: TAQ ``(date, symbol)``,
devices ``(time, device_id)``; TAQ's is extended by ``(time, _seq)`` so a day or a symbol's day
is read in stored order from the index, without an in-memory sort. ``_seq`` is each row's
arrival ordinal within its day (ties in (key, time) are frequent: it makes the stored order, the
first/last quote of a minute and a read back well defined and equal to DuckDB's). Types: strings
as strings; DATE as a datetime at midnight UTC; SECOND/TIME as a datetime on 1970-01-01 (BSON has
no time of day; milliseconds, as the datasets hold them); TIMESTAMP a datetime; CHAR/SHORT/INT as
32-bit ints, LONG 64-bit, DOUBLE/FLOAT doubles. Reads convert back through Arrow so frames equal
DuckDB's. Beside it: ``_append``, ``_import`` (CSV imports), ``_minute`` (report 003's
map-reduce), ``_info`` (devices' side collection) and the manifest collection
``_tickbench_layouts`` (one document per layout: format, scale with the dataset's content id,
days with their rows, keys sample, schema, versions). A day is loaded with ``insert_many`` in
batches; a day whose count is short (an interrupted load) is deleted and loaded again; the index
is built after the load.

Phases, honestly: a read is ``find`` (filter, projection, sort) with a cursor of undecoded documents (``RawBSONDocument``):
``query`` = iterating the cursor until its last batch (the server's execution and the transfer
merged: a cursor interleaves them), ``decode`` = BSON documents -> Arrow -> DataFrame.
Aggregations (minute bars, report 003, suite queries) the same way (``aggregate``).
A server-reported time: in probe operations (``probed_ops``, only when the server answers
``explain``), ``explain`` with ``executionStats`` of the same ``find`` after the timed call gives
``executionTimeMillis``: ``server`` = that, ``transfer`` = the cursor's time minus it. The stand-in
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
import time
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

LAYOUT_FORMAT = 1
KEYS_SAMPLE = 100
DEFAULT_PORT = 27017
DEFAULT_DATABASE = "tickbench"
DEFAULT_TIMEOUT_MS = 3000
DEFAULT_BATCH_ROWS = 50_000
MANIFEST = "_tickbench_layouts"
SEQ = "_seq"
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


def table_name(dataset: str, scale: Scale) -> str:
    return f"{dataset}_{scale.key()}"


def documents(frame: pd.DataFrame, schema: Schema, seq_start: int | None = None) -> list[dict[str, Any]]:
    """Rows as BSON-ready documents (module doc: Types), ``_seq`` from ``seq_start``."""
    names, columns = [], []
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


def _decode(raw: list) -> list[dict[str, Any]]:
    """``RawBSONDocument``s (the cursor's undecoded documents) decoded into dicts."""
    import bson
    options = bson.CodecOptions(tz_aware=False)
    return [bson.decode(doc.raw, options) for doc in raw]


def _frame(docs: list[dict[str, Any]], schema: pa.Schema, strings: StringMode) -> pd.DataFrame:
    return frame_from_arrow(pa.Table.from_pylist(docs, schema=schema), strings)


def _result_frame(docs: list[dict[str, Any]], columns: tuple[str, ...]) -> pd.DataFrame:
    """A pipeline's documents as a frame of ``columns`` (datetimes as datetime64[ns])."""
    data = {c: [d.get(c) for d in docs] for c in columns}
    frame = pd.DataFrame(data, columns=list(columns))
    for name in columns:
        values = data[name]
        if values and all(isinstance(v, dt.datetime) or v is None for v in values) and \
                any(isinstance(v, dt.datetime) for v in values):
            frame[name] = pd.to_datetime(frame[name]).astype("datetime64[ns]")
    return frame


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
        self.address = f"{self.host}:{self.port}"
        self._client = None
        self._build: dict[str, Any] | None = None
        self._info: DatasetInfo | None = None
        self._explain: bool | None = None

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

    def _raw(self, collection: str):
        """The collection with a cursor that leaves documents undecoded (``RawBSONDocument``):
        iterating it is the fetch, decoding them the ``decode`` phase."""
        import bson
        from bson.raw_bson import RawBSONDocument
        return self.db()[collection].with_options(
            codec_options=bson.CodecOptions(document_class=RawBSONDocument, tz_aware=False))

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
        return table_name(layout.dataset, layout.scale)

    def import_table(self, layout: Layout) -> str:
        return self.table(layout) + "_import"

    def minute_table(self, layout: Layout) -> str:
        return self.table(layout) + "_minute"

    @staticmethod
    def index_keys(info: DatasetInfo, main: bool = True) -> list[tuple[str, int]]:
        """Report 004's compound index: the day column and the key (TAQ: then time and ``_seq``)."""
        keys = [(info.date_column, 1), (info.key_column, 1)]
        if main and info.date_column != info.time_column:
            keys += [(info.time_column, 1), (SEQ, 1)]
        return keys

    # --- parent side ---------------------------------------------------------------------------
    def prepare(self, dataset: str, scale: Scale, strings: StringMode,
                progress: ProgressCallback | None = None) -> Layout:
        strings = StringMode.parse(strings)
        ds = _get_dataset(dataset)
        info: DatasetInfo = ds.info
        table = table_name(dataset, scale)
        days = list(ds.trading_days(scale))
        scale_json = json.dumps({**asdict(scale), "content": ds.content_id}, sort_keys=True)
        db = self.db()
        manifests = db[MANIFEST]
        row = self._call(manifests.find_one, {"_id": table})
        compatible = row is not None and row.get("format") == LAYOUT_FORMAT and row.get("scale") == scale_json
        entries = {e["date"]: e for e in row["days"]} if compatible else {}
        main = db[table]
        if not compatible:
            self._call(main.drop)
        self._side_collections(ds, scale, table)
        keys = [str(k) for k in ds.keys(scale)[:KEYS_SAMPLE]]
        if compatible and row.get("complete") and sorted(entries) == [d.isoformat() for d in days]:
            return self._layout(dataset, scale, strings, entries, row["keys_sample"], table, reused=True)
        manifest = {"format": LAYOUT_FORMAT, "dataset": dataset, "scale": scale_json, "keys_sample": keys,
                    "schema": [[c.name, c.ddb_type] for c in info.schema.columns], "versions": self._versions()}
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
                self._call(main.insert_many, documents(chunk, ds.info.schema, seq_start=rows), ordered=False)
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
            "phases": "query (cursor iteration: server execution and transfer merged) / decode (BSON -> "
                      "DataFrame); probes: server (explain executionStats executionTimeMillis) / transfer / "
                      "decode where the server has explain",
            "cold_cache": "planCacheClear once per step where the server has it; MongoDB's cache and the "
                          "server's OS page cache are not controlled"}
        try:
            info["pymongo"] = _pymongo().version
            self.client()
            info["server_version"] = self._build.get("version")
            info["server"] = self.server_label
            if self.stand_in:
                info["warning"] = ("this server is mongo-java-server, a wire-protocol stand-in: its timings "
                                   "are not MongoDB's")
        except Exception as exc:  # a description must never stop a run
            info["error"] = _first_line(exc)
        return info

    def drop_cache_for_step(self, layout: Layout) -> list[str]:
        applied = []
        for name in self._layout_names(layout.dataset, self.table(layout)):
            try:
                self._call(self.db().command, "planCacheClear", name)
                applied.append(f"planCacheClear {name} once before the step")
            except TargetError:
                continue
        return applied

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
        self.probed_ops = frozenset({"read_day", "read_slice"}) if self._explain else frozenset()

    def close(self) -> None:
        if self._client is not None:
            self._client.close()
            self._client = None

    def _check_day(self, layout: Layout, day: dt.date) -> None:
        if day not in layout.days:
            span = f"{layout.days[0]} .. {layout.days[-1]}" if layout.days else "none"
            raise ValueError(f"{day} is not a trading day of this layout (days: {span})")

    @staticmethod
    def _day_filter(info: DatasetInfo, day: dt.date) -> dict[str, Any]:
        start = dt.datetime.combine(day, dt.time())
        column = info.schema.column(info.date_column)
        if column.ddb_type == "DATE":
            return {column.name: start}
        return {column.name: {"$gte": start, "$lt": start + dt.timedelta(days=1)}}

    def _stored_order(self, info: DatasetInfo) -> list[tuple[str, int]]:
        return [(c, 1) for c in dict.fromkeys((info.key_column, info.time_column, SEQ))]

    def _find(self, layout: Layout, filter_: dict[str, Any], sort, info: DatasetInfo,
              schema: Schema | None = None) -> OpResult:
        """The user's call: ``find`` into undecoded documents (query), then BSON -> DataFrame
        (decode). The projection names the schema's fields, or only ``schema``'s (some of them)."""
        schema = schema or info.schema
        collection = self._raw(self.table(layout))
        projection = {"_id": 0, **{name: 1 for name in schema.names}}
        t0 = _now()
        batches = self._call(lambda: list(collection.find(filter_, projection, sort=sort, allow_disk_use=True)))
        t1 = _now()
        frame = _frame(_decode(batches), arrow_schema(schema), layout.strings)
        t2 = _now()
        result = OpResult(rows=len(frame), phases={"query": t1 - t0, "decode": t2 - t1}, frame=frame,
                          schema=schema, node=self.address, wire_bytes=sum(len(b.raw) for b in batches),
                          extra=self._extra())
        if self.probing and self._explain:
            said = self._call(self.db().command, "explain",
                              {"find": self.table(layout), "filter": filter_, "projection": projection,
                               "sort": dict(sort)}, verbosity="executionStats")
            ms = (said.get("executionStats") or {}).get("executionTimeMillis")
            if ms is not None:
                server = min(ms / 1000, t1 - t0)
                result.phases = {"server": server, "transfer": t1 - t0 - server, "decode": t2 - t1}
                result.extra["server_time"] = "explain executionStats executionTimeMillis (a second run)"
        return result

    def read_day(self, layout: Layout, day: dt.date, columns: tuple[str, ...] | None = None) -> OpResult:
        self._check_day(layout, day)
        info = self._dataset_info(layout)
        return self._find(layout, self._day_filter(info, day), self._stored_order(info), info,
                          column_schema(info.schema, columns, layout.dataset))

    def read_slice(self, layout: Layout, day: dt.date, key: str) -> OpResult:
        self._check_day(layout, day)
        info = self._dataset_info(layout)
        filter_ = {**self._day_filter(info, day),
                   info.key_column: key_value(info.schema.column(info.key_column), key)}
        return self._find(layout, filter_, self._stored_order(info), info)

    def _aggregate(self, collection: str, pipeline: list[dict], columns: tuple[str, ...],
                   schema: pa.Schema | None = None, strings: StringMode = StringMode.ARROW) -> OpResult:
        """A pipeline into undecoded documents (query), then its documents -> DataFrame (decode)."""
        coll = self._raw(collection)
        t0 = _now()
        batches = self._call(lambda: list(coll.aggregate(pipeline, allowDiskUse=True)))
        t1 = _now()
        docs = _decode(batches)
        frame = _frame(docs, schema, strings) if schema is not None else _result_frame(docs, columns)
        t2 = _now()
        return OpResult(rows=len(frame), phases={"query": t1 - t0, "decode": t2 - t1}, frame=frame,
                        node=self.address, wire_bytes=sum(len(b.raw) for b in batches), extra=self._extra())

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
        schema = pa.schema([pa.field("minute", pa.timestamp("ns"))] + [pa.field(c, pa.float64()) for c in BAR_COLUMNS[1:]])
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
        schema = pa.schema([pa.field("minute", pa.timestamp("ns")), pa.field("avgSpread", pa.float64())])
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
