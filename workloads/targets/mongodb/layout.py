"""Laying a dataset out on a MongoDB server: collection names, the compound index, loading
(``prepare``), the manifest and the footprint.

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
from ``prepare``; no fallback. Beside it: ``_append``, ``_import`` (CSV imports), ``_minute``
(report 003's map-reduce), the side collections ``_info`` (devices) and ``_trades`` (TAQ; indexed
(date, symbol, time)), and the manifest collection ``_tickbench_layouts`` (one document per
layout: format, scale with the dataset's content id, days with their rows, keys sample, schema,
versions, the side collections' rows). A day is loaded with ``insert_many`` in
batches; a day whose count is short (an interrupted load) is deleted and loaded again; the index
is built after the load.

Footprint: ``collStats`` ``storageSize + totalIndexSize`` (the stand-in keeps everything in memory
and reports ``size`` only: then its ``size`` and index sizes, said in ``method``); per column
MongoDB tells nothing.
"""
from __future__ import annotations

import datetime as dt
import json
from dataclasses import asdict
from typing import Any

from workloads.datasets.base import side_tables
from workloads.datasets.roles import rounding_note
from workloads.datasets.schema import DatasetInfo, Scale, StringMode
from workloads.targets.base import IMPORT_TABLE, Footprint, Layout, NotSupported, ProgressCallback, TargetError
from workloads.targets.common.arrow_frames import library_versions
from workloads.targets.common.lazy import get_dataset as _get_dataset
from workloads.targets.mongodb.connection import _first_line, _pymongo
from workloads.targets.mongodb.dialect import (DOCUMENTS, MANIFEST, SEQ, TIMESERIES, TIME_PRECISION, TS_FIELD,
                                               documents, table_name)

LAYOUT_FORMAT = 2      # 2: the devices index is (device_id, time) (equality, sort, range)
KEYS_SAMPLE = 100


class MongoDBLayout:
    """Names, the index, ``prepare``, the manifest and footprints (a mixin of ``MongoDBTarget``)."""

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
            keys = [(info.key_column, 1), (self.time_field(info), 1)]
        elif info.date_column == info.time_column:
            keys = [(info.key_column, 1), (info.time_column, 1)]
        else:
            keys = [(info.date_column, 1), (info.key_column, 1)]
            if main:
                keys += [(info.time_column, 1), (SEQ, 1)]
        return [(name, order) for name, order in keys if name]      # a dataset without a key: time only

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
        side_rows = self._side_collections(ds, scale, table, (row.get("side_rows") or {}) if compatible else {})
        keys = [str(k) for k in ds.keys(scale)[:KEYS_SAMPLE]]
        if compatible and row.get("complete") and sorted(entries) == [d.isoformat() for d in days]:
            if row.get("side_rows") != side_rows:
                self._call(manifests.update_one, {"_id": table}, {"$set": {"side_rows": side_rows}})
            return self._layout(dataset, scale, strings, entries, row["keys_sample"], table, reused=True)
        manifest = {"format": LAYOUT_FORMAT, "dataset": dataset, "scale": scale_json, "keys_sample": keys,
                    "variant": self.variant, "schema": [[c.name, c.ddb_type] for c in info.schema.columns],
                    "versions": self._versions(), "side_rows": side_rows}
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
        options = {"timeField": self.time_field(info), "granularity": self.granularity,
                   **({"metaField": info.key_column} if info.key_column else {})}
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

    def _side_collections(self, ds, scale: Scale, table: str, known: dict[str, int]) -> dict[str, int]:
        """Each side collection loaded once; returns its rows by name. One whose count is what the
        manifest recorded (``known``) is kept without generating its rows (TAQ's trades are drawn
        from every day's quotes); else its rows are generated and it is kept when complete, loaded
        again when not."""
        db = self.db()
        rows: dict[str, int] = {}
        for name, schema in side_tables(ds).items():
            side = db[f"{table}_{name}"]
            have = self._call(side.count_documents, {})
            if known.get(name) == have:
                rows[name] = have
                continue
            frame = getattr(ds, f"{name}_frame")(scale)
            rows[name] = len(frame)
            if have == len(frame):
                continue
            self._call(side.delete_many, {})
            self._call(side.insert_many, documents(frame, schema))
            self._call(side.create_index, self._side_index(ds.info, schema))
        return rows

    @staticmethod
    def _side_index(info: DatasetInfo, schema) -> list[tuple[str, int]]:
        """A side table with the dataset's day, key and time (TAQ's trades) is read as the quotes
        are, a day at a time: indexed (date, key, time); any other by its first column (devices'
        info: the device)."""
        columns = (info.date_column, info.key_column, info.time_column)
        if all(columns) and len(set(columns)) == 3 and set(columns) <= set(schema.names):
            return [(name, 1) for name in columns]
        return [(schema.columns[0].name, 1)]

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
                      reused=reused, location=f"{self.address}/{self.database}.{table}",
                      notes=rounding_note(_get_dataset(dataset).info.schema, "MongoDB", TIME_PRECISION))

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

    def _layout_text(self) -> str:
        if self.variant == TIMESERIES:
            return (f"time-series collection per dataset (timeseries: timeField = the time, or {TS_FIELD} = day + "
                    f"time of day for TAQ; metaField = the key; granularity {self.granularity}), index (key, "
                    "timeField); appends, imports and side tables in plain collections")
        return ("a collection per dataset, one document per row; index (date, symbol, time, _seq) for TAQ, "
                "(device_id, time) for devices (equality, sort, range)")
