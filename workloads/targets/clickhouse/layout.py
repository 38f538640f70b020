"""Laying a dataset out in ClickHouse: ``prepare`` (tables, the day-by-day load, the manifest) and
the footprint, as a mixin of ``ClickHouseTarget``.

Layout, as a practitioner lays out ticks in ClickHouse: one MergeTree table per dataset and scale,
``<database>.<dataset>_<scale key>``, ``PARTITION BY`` the day (the DATE column, or ``toDate`` of
the timestamp for devices), ``ORDER BY (key, time, _seq)``. ``_seq`` (UInt32) is each row's
arrival ordinal within its day (the generator's row order): ties in (key, time) are frequent in
second-resolution quotes, and ``_seq`` makes the stored order, the first/last quote of a minute
(``argMin``/``argMax`` of the mid by ``_seq``: a day is loaded in time order, checked, so ``_seq``
follows (time, arrival) order) and a day read back
(``ORDER BY key, time, _seq``, read in order from the sorting key) well defined and equal to
DuckDB's and pandas'. Reads select the schema's columns only; ``_seq`` shows in the footprint
as the column it is. Types: ``dialect``. Each day is loaded in batches (Arrow, with explicit UTC
times and dates, so the machine's time zone never shifts a value), then ``OPTIMIZE ... PARTITION
... FINAL`` leaves one part per day; a day whose row count is short (an interrupted load) has its
partition dropped and loaded again. Beside it: ``_append`` (appends), ``_import`` (CSV imports),
``_minute`` (report 003's map-reduce), ``_info`` (devices' side table), and the manifest table
``_tickbench_layouts``.

Footprint: ``system.parts`` bytes on disk of the active parts, per column ``system.columns``
compressed bytes; one replica.
"""
from __future__ import annotations

import datetime as dt
import json
from typing import Any

from workloads.datasets.base import seed_side_tables, side_tables
from workloads.datasets.schema import DatasetInfo, Scale, StringMode
from workloads.targets.base import IMPORT_TABLE, Footprint, Layout, ProgressCallback
from workloads.targets.clickhouse.dialect import SEQ, _columns_ddl, _engine_ddl, insert_arrow, literal, quote, table_name
from workloads.targets.common.day_loads import (complete_days, days_json, keys_sample, load_days, manifest_entries,
                                                manifest_fields, ordered_days, scale_json, time_ordered)
from workloads.targets.common.lazy import get_dataset as _get_dataset

LAYOUT_FORMAT = 1
DEFAULT_CHUNK_ROWS = 1_000_000
MANIFEST_TABLE = "_tickbench_layouts"


class ClickHouseLayout:
    """Prepare (parent side: the session is closed before returning) and footprints."""

    def prepare(self, dataset: str, scale: Scale, strings: StringMode,
                progress: ProgressCallback | None = None) -> Layout:
        strings = StringMode.parse(strings)
        ds = _get_dataset(dataset)
        table = table_name(dataset, scale)
        days = list(ds.trading_days(scale))
        with self._conn(hold=False) as (con, _):     # the parent never keeps the folder
            return self._prepare(con, ds, dataset, scale, strings, table, days, scale_json(ds, scale), progress)

    def _prepare(self, con, ds, dataset, scale, strings, table, days, scale_text, progress) -> Layout:
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
        compatible, entries = manifest_entries(row, LAYOUT_FORMAT, scale_text)
        main = self.fq(table)
        if not compatible:       # a different format or scale under this name: start over
            con.execute(f"DROP TABLE IF EXISTS {main}")
        con.execute(f"CREATE TABLE IF NOT EXISTS {main} ({_columns_ddl(info.schema, seq=True)}) "
                    f"{_engine_ddl(info, seq=True)}")
        for scratch in (table + "_append", table + "_import"):
            self._ensure_table(con, info, scratch)
        reusable = bool(compatible and row["complete"] and complete_days(entries, days))
        self._ensure_side_tables(con, ds, scale, table, reusable)
        keys = keys_sample(ds, scale)
        if reusable:
            return self._layout(con, dataset, scale, strings, entries, json.loads(row["keys_sample"]), table,
                                reused=True)
        manifest = manifest_fields(dataset, scale_text, keys, info)
        day_expr = quote(info.date_column) if info.schema.column(info.date_column).ddb_type == "DATE" \
            else f"toDate({quote(info.date_column)})"
        counts = {r["day"]: int(r["n"]) for r in
                  con.rows(f"SELECT {day_expr} AS day, count() AS n FROM {main} GROUP BY day")}

        def load(index: int, day: dt.date, done: int, total: int) -> int:
            partition = literal(day.strftime('%Y%m%d'))
            if counts.get(day):      # an interrupted day: drop what it left, load it again
                con.execute(f"ALTER TABLE {main} DROP PARTITION ID {partition}")
            rows = self._load_day(con, ds, index, scale, main, done, total, progress)
            con.execute(f"OPTIMIZE TABLE {main} PARTITION ID {partition} FINAL")
            return rows

        entries = load_days(days, dict(zip(days, ds.day_rows(scale))), entries, counts.get, load,
                            lambda saved, complete: self._write_manifest(con, table, manifest, saved, complete),
                            table, progress)
        return self._layout(con, dataset, scale, strings, entries, keys, table, reused=False)

    def _load_day(self, con, ds, index: int, scale: Scale, main: str, rows_done: int, total: int,
                  progress: ProgressCallback | None) -> int:
        rows = 0
        chunk_rows = int(self.config.get("chunk_rows") or DEFAULT_CHUNK_ROWS)
        for chunk in time_ordered(ds.generate_day(index, scale, StringMode.ARROW, chunk_rows), ds.info, index, SEQ):
            con.insert(main, insert_arrow(chunk, ds.info.schema, seq_start=rows))
            rows += len(chunk)
            if progress is not None:
                progress(min(rows_done + rows, total), total, f"loading day {index + 1} into {main}")
        return rows

    def _ensure_table(self, con, info: DatasetInfo, name: str) -> None:
        """A scratch table with the dataset's columns (appends, imports), laid out as the main one."""
        con.execute(f"CREATE TABLE IF NOT EXISTS {self.fq(name)} ({_columns_ddl(info.schema)}) {_engine_ddl(info)}")

    def _ensure_side_tables(self, con, ds, scale: Scale, table: str, reused: bool) -> None:
        """A dataset's side tables (devices: ``info``, TAQ's trades) as ``<table>_<name>``, loaded
        once. A complete layout loaded them before its days, so when it is reused one holding rows is
        kept without drawing it again (TAQ's trades are drawn from every day's quotes)."""
        for name, schema in side_tables(ds).items():
            side = self.fq(f"{table}_{name}")
            con.execute(f"CREATE TABLE IF NOT EXISTS {side} ({_columns_ddl(schema)}) "
                        f"ENGINE = MergeTree ORDER BY {quote(schema.columns[0].name)}")
            have = int(con.rows(f"SELECT count() AS n FROM {side}")[0]["n"])
            if have and reused:
                continue
            frame = getattr(ds, f"{name}_frame")(scale)
            if have == len(frame):
                continue
            con.execute(f"TRUNCATE TABLE {side}")
            con.insert(side, insert_arrow(frame, schema))

    def _write_manifest(self, con, table: str, manifest: dict[str, Any], entries: dict[str, dict],
                        complete: bool) -> None:
        days = days_json(entries)
        con.execute(f"INSERT INTO {self.fq(MANIFEST_TABLE)} SELECT {{t:String}}, {LAYOUT_FORMAT}, {{ds:String}}, "
                    "{scale:String}, {days:String}, {keys:String}, {schema:String}, {versions:String}, "
                    "{complete:UInt8}, {created:DateTime64(6, 'UTC')}",
                    {"t": table, "ds": manifest["dataset"], "scale": manifest["scale"], "days": days,
                     "keys": manifest["keys_sample"], "schema": manifest["schema"],
                     "versions": manifest["versions"], "complete": int(complete),
                     "created": dt.datetime.now(dt.timezone.utc).replace(tzinfo=None).isoformat(sep=" ")})

    def _layout(self, con, dataset, scale, strings, entries, keys, table, reused) -> Layout:
        days, rows = ordered_days(entries)
        where = f"{self.path}:{self.database}.{table}" if not self.server else \
            f"{self._backend.address}/{self.database}.{table}"
        return Layout(dataset=dataset, scale=scale, strings=strings, days=days, keys_sample=tuple(keys), rows=rows,
                      footprint_bytes=self._parts_bytes(con, [table] + self._side_names(dataset, table)),
                      reused=reused, location=where)

    @staticmethod
    def _side_names(dataset: str, table: str) -> list[str]:
        """The side tables a footprint counts with the table (``seed_side_tables``)."""
        return [f"{table}_{name}" for name in seed_side_tables(_get_dataset(dataset))]

    def _parts_bytes(self, con, tables: list[str]) -> int:
        found = con.rows("SELECT sum(bytes_on_disk) AS b FROM system.parts WHERE active AND database = {db:String} "
                         "AND has({tables:Array(String)}, table)", {"db": self.database, "tables": tables})
        return int(found[0]["b"] or 0) if found else 0

    def footprint(self, layout: Layout) -> int:
        """Bytes on disk of the layout's active parts (its table and side tables)."""
        table = self.table(layout)
        with self._conn(hold=False) as (con, _):
            return self._parts_bytes(con, [table] + self._side_names(layout.dataset, table))

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
