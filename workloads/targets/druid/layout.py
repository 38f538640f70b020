"""Laying data out on Druid, as a mixin of ``DruidTarget``: prepare, the layout manifest, footprint.

Layout (report 001's): one datasource per dataset and scale, ``tickbench_<dataset>_<scale key>``,
``segmentGranularity`` DAY, ``queryGranularity`` NONE, rollup off (its columns: ``shape``).
Beside it: ``_append``, ``_import``, ``_info`` (devices) and the manifest datasource
``tickbench_layouts`` (one row per prepare: format, scale with the content id, days, rows,
keys sample, schema, versions, the side tables' rows by day; the newest row wins).

Loading: Druid has no client insert of DataFrames. Prepare writes each missing day as a CSV file
(``__time`` in ms, then the columns) into ``data_folder``, submits ONE ``index_parallel`` task over
those files (``local`` input source, intervals = those days: a day that was half loaded is
replaced), waits for it and until the broker counts every day's rows, then deletes the files.
A second prepare finds the manifest and reuses (side tables too, when Druid counts the rows by day
the manifest recorded: nothing is generated); an interrupted one reloads only the days whose counts
are short. A side table with a date and a time of day (TAQ's trades) is laid out as the
quotes are: day files, DAY segments, ``__time`` its date + time, its own ``_seq`` (arrival within the
day); one without (devices' info) goes in as ``inline`` data at a constant time.

Footprint: ``sys.segments`` size of the active segments; per column the segment metadata
query's ``size`` analysis (Druid's estimate of each column's size); ``runtime_bytes`` the segment
cache's folder for the datasource (report 001's run-time space).
"""
from __future__ import annotations

import datetime as dt
import io
import json
import time
import uuid
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow.csv as pacsv

from workloads.datasets.base import is_day_series, seed_side_tables, side_tables
from workloads.datasets.roles import rounding_note
from workloads.datasets.schema import DatasetInfo, Scale, StringMode
from workloads.targets.base import IMPORT_TABLE, Footprint, Layout, ProgressCallback, TargetError
from workloads.targets.common.day_loads import keys_sample, manifest_fields, scale_json, time_ordered
from workloads.targets.common.lazy import get_dataset as _get_dataset
from workloads.targets.common.storage import disk_full_error
from workloads.targets.druid.dialect import DAY_MS, SEQ, TS, _param, quote, table_name
from workloads.targets.druid.shape import TIME_PRECISION, _Shape
from workloads.text import plural


LAYOUT_FORMAT = 2              # 2: TAQ's trades laid out by day, with _seq; side tables' rows recorded
MANIFEST = "tickbench_layouts"


class DruidLayout:
    """DruidTarget's layout: prepare, ingestion of the days and side tables, manifest, footprint."""

    def prepare(self, dataset: str, scale: Scale, strings: StringMode,
                progress: ProgressCallback | None = None) -> Layout:
        strings = StringMode.parse(strings)
        ds = _get_dataset(dataset)
        info: DatasetInfo = ds.info
        table = table_name(dataset, scale)
        days = list(ds.trading_days(scale))
        scale_text = scale_json(ds, scale)
        keys = keys_sample(ds, scale)
        existing = self.datasources()
        row = self._manifest_row(table) if MANIFEST in existing else None
        if (row and int(row["format"]) == LAYOUT_FORMAT and row["scale"] == scale_text and table in existing
                and json.loads(row["days"]) == [{"date": d.isoformat(), "rows": n} for d, n in
                                                zip(days, ds.day_rows(scale))]
                and self._side_tables_ready(ds, table, existing, row)):
            return self._layout(dataset, scale, strings, days, json.loads(row["keys_sample"]), table,
                                sum(ds.day_rows(scale)), reused=True)
        expected = dict(zip(days, ds.day_rows(scale)))
        counts = self._day_counts(table) if table in existing else {}
        missing = [d for d in days if counts.get(d) != expected[d]]
        total = sum(expected.values())
        if missing:
            self._load_days(ds, scale, table, days, missing, expected, total, progress)
        self._ensure_side_tables(ds, scale, table, existing)
        manifest = {"table_name": table, "format": LAYOUT_FORMAT, **manifest_fields(dataset, scale_text, keys, info),
                    "days": json.dumps([{"date": d.isoformat(), "rows": expected[d]} for d in days]),
                    "side_rows": json.dumps(self._side_rows(ds, table)), "created": uuid.uuid4().hex}
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
        def day_frame(day: dt.date):
            index = days.index(day)
            return next(time_ordered([ds.day_frame(index, scale, StringMode.ARROW)], ds.info, index, SEQ))
        self._ingest_days(_Shape(ds.info), table, missing, expected, day_frame, total, progress)

    def _ingest_days(self, shape: _Shape, table: str, missing: list[dt.date], expected: dict[dt.date, int],
                     day_frame, total: int, progress: ProgressCallback | None) -> None:
        """Each of ``missing`` (``day_frame(day)``: its rows in arrival order) written as a file and
        ingested by one task over those days' intervals; waited for until every day counts its rows."""
        folder = self.data_folder / table
        folder.mkdir(parents=True, exist_ok=True)
        files, written = [], 0
        try:
            for day in missing:
                path = folder / f"{day.isoformat()}.csv"
                frame = day_frame(day)
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

    def _side_rows(self, ds, table: str) -> dict[str, dict[str, int]]:
        """Each side table's rows by day as Druid counts them (an untimed one's on its constant day)."""
        return {name: {d.isoformat(): n for d, n in self._day_counts(f"{table}_{name}").items()}
                for name in side_tables(ds)}

    def _side_tables_ready(self, ds, table: str, existing: set[str], row: dict[str, Any]) -> bool:
        """Every side table holds the rows the manifest recorded when it was laid out (none generated)."""
        recorded = json.loads(row.get("side_rows") or "null")
        return recorded is not None and all(f"{table}_{name}" in existing for name in side_tables(ds)) \
            and self._side_rows(ds, table) == recorded

    def _ensure_side_tables(self, ds, scale: Scale, table: str, existing: set[str]) -> None:
        for name, schema in side_tables(ds).items():
            side = f"{table}_{name}"
            frame = getattr(ds, f"{name}_frame")(scale)
            shape = _Shape(ds.info, schema)
            if is_day_series(ds.info, schema):       # TAQ's trades: laid out as the quotes
                self._ensure_side_days(side, shape, frame, existing)
                continue
            if side in existing and self.count(side) == len(frame):
                continue
            buffer = io.BytesIO()
            pacsv.write_csv(shape.input_table(frame, None), buffer)
            self.run_task(self._spec(side, {"type": "inline", "data": buffer.getvalue().decode()},
                                     shape.dimensions(False), ["2000-01-01/2000-01-02"], False), f"loading {side}")
            self.wait_visible(lambda: self.count(side) == len(frame), side)

    def _ensure_side_days(self, side: str, shape: _Shape, frame, existing: set[str]) -> None:
        """A side table with a date and a time of day laid out as the quotes: the days Druid counts
        short loaded again (every day, when it holds a day that is not the table's)."""
        date = shape.time_parts[0]
        expected = _rows_by_day(frame, date)
        counts = self._day_counts(side) if side in existing else {}
        if set(counts) - set(expected):
            self.http.json("DELETE", f"/druid/coordinator/v1/datasources/{side}", port=self.http.coordinator_port)
            self.wait_visible(lambda: side not in self.datasources() or self.count(side) == 0, f"{side} emptied")
            counts = {}
        missing = [d for d in expected if counts.get(d) != expected[d]]
        if missing:
            days = frame[date].to_numpy().astype("datetime64[D]")
            self._ingest_days(shape, side, missing, expected, lambda d: frame[days == np.datetime64(d, "D")],
                              len(frame), None)

    def _layout(self, dataset, scale, strings, days, keys, table, rows, reused) -> Layout:
        return Layout(dataset=dataset, scale=scale, strings=strings, days=tuple(days), keys_sample=tuple(keys),
                      rows=rows, footprint_bytes=self._segment_bytes([table] + self._side_names(dataset, table)),
                      reused=reused, location=f"druid://{self.http.address}/{table}",
                      notes=rounding_note(_get_dataset(dataset).info.schema, "Druid", TIME_PRECISION))

    @staticmethod
    def _side_names(dataset: str, table: str) -> list[str]:
        """The side tables a footprint counts with the table (``seed_side_tables``)."""
        return [f"{table}_{name}" for name in seed_side_tables(_get_dataset(dataset))]

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

    def _cache_bytes(self, datasource: str) -> int | None:
        folder = self._cache_folder(datasource)
        if folder is None:
            return None
        return sum(f.stat().st_size for f in folder.rglob("*") if f.is_file())


def _rows_by_day(frame, date: str) -> dict[dt.date, int]:
    """A side table's rows per day (its ``date`` column), days in order."""
    days = frame[date].to_numpy().astype("datetime64[D]")
    values, counts = np.unique(days, return_counts=True)
    return {v.astype(dt.date): int(n) for v, n in zip(values, counts)}
