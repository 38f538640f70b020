"""Laying ticks out in QuestDB (``prepare``), the manifest of layouts, and footprints.

Layout, as a practitioner lays out ticks in QuestDB: one WAL table per dataset and scale,
``<dataset>_<scale key>``, with a designated timestamp and ``PARTITION BY DAY``. A dataset whose
time column is a full instant (devices: ``time`` TIMESTAMP) has it as the designated timestamp;
one whose day and time of day are apart (TAQ: ``date`` DATE, ``time`` SECOND on 1970-01-01) gets
``_ts`` = date + time, designated. ``_seq`` (LONG) is each row's arrival ordinal within its day,
kept for checks: QuestDB stores a partition in designated-timestamp order, rows of one timestamp
in arrival order (each day is loaded in time order), so that stored order already puts the
first/last quote of a minute where DuckDB's does. Types: ``dialect``. Beside it: ``_append``
(appends), ``_import`` (CSV imports, no ``_seq``), ``_minute`` (report 003's map-reduce), the
dataset's side tables (``_ensure_side_tables``: TAQ's ``_trades`` a WAL table with the same designated
``_ts`` and day partitions, as a desk keeps trades beside quotes so that ``ASOF JOIN`` pairs them;
devices' ``_info`` a plain table) and the manifest ``_tickbench_layouts``.

Footprint: ``table_partitions()`` ``diskSize`` (the engine's allocated bytes: column files are
sized in pages, so a small table looks big); QuestDB reports no per-column size (``columns`` is
empty); one replica.
"""
from __future__ import annotations

import datetime as dt
import json
from dataclasses import replace
from typing import Any

from workloads.datasets.base import seed_side_tables, side_tables
from workloads.datasets.roles import rounding_note
from workloads.datasets.schema import DatasetInfo, Scale, Schema, StringMode
from workloads.targets.base import IMPORT_TABLE, Footprint, Layout, ProgressCallback, TargetError
from workloads.targets.common.day_loads import (complete_days, days_json, keys_sample, load_days, manifest_entries,
                                                manifest_fields, ordered_days, scale_json, time_ordered)
from workloads.targets.common.lazy import get_dataset as _get_dataset
from workloads.targets.questdb.dialect import (SEQ, TIME_PRECISION, _QDB_TYPES, quote, literal, table_name, sql_value,
                                               designated, side_timestamp, _columns_ddl)
from workloads.targets.questdb.frames import ilp_frame


LAYOUT_FORMAT = 1
DEFAULT_CHUNK_ROWS = 1_000_000
MANIFEST_TABLE = "_tickbench_layouts"


class QuestDBLayout:
    """QuestDBTarget's layout: prepare, ILP loads, scratch and side tables, manifest, footprint."""

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
        scale_text = scale_json(ds, scale)
        server.execute(f"CREATE TABLE IF NOT EXISTS {quote(MANIFEST_TABLE)} (table_name VARCHAR, format INT, "
                       "dataset VARCHAR, scale VARCHAR, days VARCHAR, keys_sample VARCHAR, schema VARCHAR, "
                       "versions VARCHAR, complete BOOLEAN, created TIMESTAMP)")
        found = server.rows(f"SELECT format, scale, days, keys_sample, complete FROM {quote(MANIFEST_TABLE)} "
                            f"WHERE table_name = {literal(table)} ORDER BY created DESC LIMIT 1")
        row = found[0] if found else None
        compatible, entries = manifest_entries(row, LAYOUT_FORMAT, scale_text)
        if not compatible:
            server.execute(f"DROP TABLE IF EXISTS {quote(table)}")
        self._ensure_table(info, table, seq=True)
        for scratch in (table + "_append", table + "_import"):
            self._ensure_table(info, scratch)
        keys = keys_sample(ds, scale)
        if compatible and row["complete"] and complete_days(entries, days) and self._side_tables_laid_out(ds, table):
            return self._layout(dataset, scale, strings, entries, json.loads(row["keys_sample"]), table, reused=True)
        self._ensure_side_tables(ds, scale, table)
        manifest = manifest_fields(dataset, scale_text, keys, info)
        server.wait_applied(table, self.wal_timeout)
        counts = {str(r["day"])[:10]: int(r["n"]) for r in server.rows(
            f"SELECT to_str({quote(ts)}, 'yyyy-MM-dd') AS day, count() AS n FROM {quote(table)}")}

        def load(index: int, day: dt.date, done: int, total: int) -> int:
            key = day.isoformat()
            if counts.get(key):          # an interrupted day: drop its partition, load it again
                server.execute(f"ALTER TABLE {quote(table)} DROP PARTITION LIST {literal(key)}")
                server.wait_applied(table, self.wal_timeout)
            rows = self._load_day(ds, index, scale, table, ts, done, total, progress)
            server.wait_applied(table, self.wal_timeout)
            have = int(server.rows(f"SELECT count() AS n FROM {quote(table)} WHERE {quote(ts)} IN {literal(key)}")[0]["n"])
            if have != rows:
                raise TargetError(f"QuestDB table {table}: {have} rows on {key} after loading {rows}")
            return rows

        entries = load_days(days, dict(zip(days, ds.day_rows(scale))), entries, lambda day: counts.get(day.isoformat()),
                            load, lambda saved, complete: self._write_manifest(table, manifest, saved, complete),
                            table, progress)
        return self._layout(dataset, scale, strings, entries, keys, table, reused=False)

    def _symbols(self, schema: Schema) -> list[str]:
        return [c.name for c in schema.columns if c.ddb_type == "SYMBOL"]

    def _load_day(self, ds, index: int, scale: Scale, table: str, ts: str, done: int, total: int,
                  progress: ProgressCallback | None) -> int:
        info: DatasetInfo = ds.info
        rows = 0
        chunk_rows = int(self.config.get("chunk_rows") or DEFAULT_CHUNK_ROWS)
        for chunk in time_ordered(ds.generate_day(index, scale, StringMode.ARROW, chunk_rows), info, index, SEQ):
            self._server.ingest(table, ilp_frame(chunk, info, ts, seq_start=rows), ts, self._symbols(info.schema))
            rows += len(chunk)
            if progress is not None:
                progress(min(done + rows, total), total, f"loading day {index + 1} into {table}")
        return rows

    def _ensure_table(self, info: DatasetInfo, name: str, seq: bool = False) -> None:
        ts = designated(info)
        self._server.execute(f"CREATE TABLE IF NOT EXISTS {quote(name)} ({_columns_ddl(info.schema, ts, seq)}) "
                             f"TIMESTAMP({quote(ts)}) PARTITION BY DAY WAL")

    def _designated_of(self, table: str) -> str | None:
        """``table``'s designated timestamp ("" when it has none); None when there is no such table."""
        found = self._server.rows(f"SELECT designatedTimestamp FROM tables() WHERE table_name = {literal(table)}")
        return (found[0]["designatedTimestamp"] or "") if found else None

    def _side_tables_laid_out(self, ds, table: str) -> bool:
        """Every side table there, in its layout, with rows: a reused layout's are not drawn again
        (a complete layout loaded them before its days; a layout from before a side table existed,
        or from before trades had a designated timestamp, has them laid out again)."""
        for name, schema in side_tables(ds).items():
            side = f"{table}_{name}"
            if self._designated_of(side) != side_timestamp(ds.info, schema):
                return False
            self._server.wait_applied(side, self.wal_timeout)
            if not int(self._server.rows(f"SELECT count() AS n FROM {quote(side)}")[0]["n"]):
                return False
        return True

    def _ensure_side_tables(self, ds, scale: Scale, table: str) -> None:
        """A dataset's side tables as ``<table>_<name>``, each loaded once (module doc: Layout): a
        time series (TAQ's trades) as a WAL table with the main table's designated ``_ts``, by ILP
        in (date, time) order; a plain table (devices' ``info``) by one INSERT."""
        server = self._server
        for name, schema in side_tables(ds).items():
            side = f"{table}_{name}"
            frame = getattr(ds, f"{name}_frame")(scale)
            ts = side_timestamp(ds.info, schema)
            if self._designated_of(side) not in (None, ts):
                server.execute(f"DROP TABLE {quote(side)}")     # laid out before it had its timestamp
            columns = ", ".join(f"{quote(c.name)} {_QDB_TYPES[c.ddb_type]}" for c in schema.columns)
            if ts:
                server.execute(f"CREATE TABLE IF NOT EXISTS {quote(side)} ({columns}, {quote(ts)} TIMESTAMP) "
                               f"TIMESTAMP({quote(ts)}) PARTITION BY DAY WAL")
                server.wait_applied(side, self.wal_timeout)
            else:
                server.execute(f"CREATE TABLE IF NOT EXISTS {quote(side)} ({columns})")
            have = int(server.rows(f"SELECT count() AS n FROM {quote(side)}")[0]["n"])
            if have == len(frame):
                continue
            server.execute(f"TRUNCATE TABLE {quote(side)}")
            if ts:
                info = replace(ds.info, schema=schema)
                server.ingest(side, ilp_frame(frame, info, ts), ts, self._symbols(schema))
                server.wait_applied(side, self.wal_timeout)
                continue
            values = ", ".join("(" + ", ".join(sql_value(v) for v in row) + ")"
                               for row in frame[schema.names].itertuples(index=False))
            server.execute(f"INSERT INTO {quote(side)} VALUES {values}")

    def _write_manifest(self, table: str, manifest: dict[str, Any], entries: dict[str, dict], complete: bool) -> None:
        days = days_json(entries)
        created = dt.datetime.now(dt.timezone.utc).replace(tzinfo=None)
        self._server.execute(
            f"INSERT INTO {quote(MANIFEST_TABLE)} VALUES ({literal(table)}, {LAYOUT_FORMAT}, "
            f"{literal(manifest['dataset'])}, {literal(manifest['scale'])}, {literal(days)}, "
            f"{literal(manifest['keys_sample'])}, {literal(manifest['schema'])}, {literal(manifest['versions'])}, "
            f"{'true' if complete else 'false'}, {sql_value(created)})")

    def _layout(self, dataset, scale, strings, entries, keys, table, reused) -> Layout:
        days, rows = ordered_days(entries)
        return Layout(dataset=dataset, scale=scale, strings=strings, days=days, keys_sample=tuple(keys), rows=rows,
                      footprint_bytes=self._disk_bytes([table] + self._side_names(dataset, table)),
                      reused=reused, location=f"{self._server.address}/{table}",
                      notes=rounding_note(_get_dataset(dataset).info.schema, "QuestDB", TIME_PRECISION))

    @staticmethod
    def _side_names(dataset: str, table: str) -> list[str]:
        """The side tables a footprint counts with the table (``seed_side_tables``)."""
        return [f"{table}_{name}" for name in seed_side_tables(_get_dataset(dataset))]

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
