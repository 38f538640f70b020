"""Laying ticks out in PostgreSQL (``prepare``), the manifest of layouts, and footprints.

Layout, as a practitioner lays out ticks in PostgreSQL: one table per dataset and scale,
``<dataset>_<scale key>`` (a long name is shortened with a hash), declaratively ``PARTITION BY
RANGE`` of the day column (devices: of its timestamp), one partition per day
(``<table>_pYYYYMMDD``), and a B-tree index on (key, time, ``_seq``). ``_seq`` (integer) is each
row's arrival ordinal within its day: ties in (key, time) are frequent in second-resolution
quotes; it is the heap's order (below) and picks a minute's first/last quote (``(array_agg(mid
ORDER BY _seq))[1]``: PostgreSQL has no first/last aggregate; a day is generated in time order,
checked, so ``_seq`` follows (time, arrival) order). Types: ``dialect``. A day is loaded with
``COPY ... FROM STDIN (FORMAT csv)`` (pyarrow writes the CSV) into a table of its own, indexed on
(key, time, ``_seq``) and ``CLUSTER``ed on that index (the heap rewritten in index order: a day's
rows lie physically by key, then time, then arrival, as DuckDB's and the files' do, and the
index's correlation with the heap is 1), then ``ATTACH``ed as the day's partition (the table's
index adopts the partition's) and ``ANALYZE``d; a day whose partition is missing or short (an
interrupted load) is dropped and loaded again. ``LAYOUT_FORMAT`` 2 marks clustered layouts: one of
format 1 (days in time order) is dropped and loaded again, never read as if sorted. Beside it:
``_append``, ``_import``, ``_minute`` (report 003's map-reduce), the dataset's side tables
(``_ensure_side_tables``: TAQ's ``_trades``, indexed on (date, symbol, time) as a desk indexes the
trades it joins to quotes; devices' ``_info``), and the manifest table ``_tickbench_layouts``.

Footprint: ``pg_total_relation_size`` of every partition (heap + TOAST + indexes); per column
``sum(pg_column_size(col))`` (the stored datums, without tuple headers or indexes).
"""
from __future__ import annotations

import datetime as dt
import json
from typing import Any

from workloads.datasets.base import is_day_series, seed_side_tables, side_tables
from workloads.datasets.roles import rounding_note
from workloads.datasets.schema import DatasetInfo, Scale, StringMode
from workloads.targets.base import IMPORT_TABLE, Footprint, Layout, ProgressCallback
from workloads.targets.common.day_loads import (complete_days, days_json, keys_sample, load_days, manifest_entries,
                                                manifest_fields, ordered_days, scale_json, time_ordered)
from workloads.targets.common.lazy import get_dataset as _get_dataset
from workloads.targets.postgres.dialect import SEQ, TIME_PRECISION, quote, literal, table_name, _columns_ddl
from workloads.targets.postgres.copy_formats import copy_csv


LAYOUT_FORMAT = 2             # 2: partitions CLUSTERed in index order (1: loaded in time order)
DEFAULT_CHUNK_ROWS = 500_000
MANIFEST_TABLE = "_tickbench_layouts"


class PostgresLayout:
    """PostgresTarget's layout: prepare, partitions, scratch and side tables, manifest, footprint."""

    # --- parent side -----------------------------------------------------------------------
    def prepare(self, dataset: str, scale: Scale, strings: StringMode,
                progress: ProgressCallback | None = None) -> Layout:
        strings = StringMode.parse(strings)
        ds = _get_dataset(dataset)
        info: DatasetInfo = ds.info
        table = table_name(dataset, scale)
        days = list(ds.trading_days(scale))
        scale_text = scale_json(ds, scale)
        db = self.db
        db.conn(create=True)
        db.execute(f"CREATE TABLE IF NOT EXISTS {quote(MANIFEST_TABLE)} (table_name text PRIMARY KEY, "
                   "format integer, dataset text, scale text, days text, keys_sample text, schema text, "
                   "versions text, complete boolean, created timestamptz)")
        found = db.rows(f"SELECT format, scale, days, keys_sample, complete FROM {quote(MANIFEST_TABLE)} "
                        "WHERE table_name = %s", (table,))
        row = found[0] if found else None
        compatible, entries = manifest_entries(row, LAYOUT_FORMAT, scale_text)
        main = quote(table)
        if not compatible:
            db.execute(f"DROP TABLE IF EXISTS {main} CASCADE")
        day_col = quote(info.date_column)
        db.execute(f"CREATE TABLE IF NOT EXISTS {main} ({_columns_ddl(info.schema, seq=True)}) "
                   f"PARTITION BY RANGE ({day_col})")
        db.execute(f"CREATE INDEX IF NOT EXISTS {quote(table + '_key_time')} ON {main} ({self._index_columns(info)})")
        for scratch in (table + "_append", table + "_import"):
            self._ensure_table(info, scratch)
        keys = keys_sample(ds, scale)
        if compatible and row["complete"] and complete_days(entries, days) and \
                all(self._partition_rows(table, d) == entries[d.isoformat()]["rows"] for d in days) and \
                self._side_tables_laid_out(ds, table):
            return self._layout(dataset, scale, strings, entries, json.loads(row["keys_sample"]), table, True)
        self._ensure_side_tables(ds, scale, table)
        manifest = manifest_fields(dataset, scale_text, keys, info)
        entries = load_days(
            days, dict(zip(days, ds.day_rows(scale))), entries, lambda day: self._partition_rows(table, day),
            lambda index, day, done, total: self._load_day(ds, index, day, scale, table, done, total, progress),
            lambda saved, complete: self._write_manifest(table, manifest, saved, complete), table, progress)
        return self._layout(dataset, scale, strings, entries, keys, table, False)

    @staticmethod
    def _index_columns(info: DatasetInfo) -> str:
        return ", ".join(quote(c) for c in dict.fromkeys((info.key_column, info.time_column, SEQ)) if c)

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
        rows = 0
        for chunk in time_ordered(ds.generate_day(index, scale, StringMode.ARROW, chunk_rows), info, index, SEQ):
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
        keys = ", ".join(quote(c) for c in dict.fromkeys((info.key_column, info.time_column)) if c)
        self.db.execute(f"CREATE INDEX IF NOT EXISTS {quote(name + '_key_time')} ON {quote(name)} ({keys})")

    @staticmethod
    def _side_index(info: DatasetInfo, schema) -> str | None:
        """A side table's index: (date, key, time) when it is a time series of the dataset's keys
        and days (TAQ's trades: a day's trades chosen by its date, a symbol's in time order for the
        join to quotes), else None (devices' info: a few rows)."""
        wanted = (info.date_column, info.key_column, info.time_column)
        if is_day_series(info, schema) and len(set(wanted)) == 3 and info.key_column in schema.names:
            return ", ".join(quote(c) for c in wanted)
        return None

    def _side_tables_laid_out(self, ds, table: str) -> bool:
        """Every side table there with rows and its index: a reused layout's are not drawn again (a
        complete layout loaded them before its days; one from before they existed loads them now)."""
        for name, schema in side_tables(ds).items():
            side = f"{table}_{name}"
            if not self.db.rows("SELECT 1 FROM pg_class WHERE relname = %s AND relnamespace = "
                                "current_schema()::regnamespace", (side,)):
                return False
            if not self.db.rows(f"SELECT 1 FROM {quote(side)} LIMIT 1"):
                return False
            if self._side_index(ds.info, schema) and not self.db.rows(
                    "SELECT 1 FROM pg_indexes WHERE tablename = %s AND indexname = %s AND schemaname = current_schema()",
                    (side, side + "_day_key_time")):
                return False
        return True

    def _ensure_side_tables(self, ds, scale: Scale, table: str) -> None:
        for name, schema in side_tables(ds).items():
            side = quote(f"{table}_{name}")
            frame = getattr(ds, f"{name}_frame")(scale)
            self.db.execute(f"CREATE TABLE IF NOT EXISTS {side} ({_columns_ddl(schema)})")
            index = self._side_index(ds.info, schema)
            if index:
                self.db.execute(f"CREATE INDEX IF NOT EXISTS {quote(f'{table}_{name}_day_key_time')} "
                                f"ON {side} ({index})")
            if int(self.db.rows(f"SELECT count(*) AS n FROM {side}")[0]["n"]) == len(frame):
                continue
            self.db.execute(f"TRUNCATE {side}")
            self.db.copy_in(f"COPY {side} FROM STDIN (FORMAT csv)", copy_csv(frame, schema))
            self.db.execute(f"ANALYZE {side}")

    def _write_manifest(self, table: str, manifest: dict[str, Any], entries: dict[str, dict], complete: bool) -> None:
        days = days_json(entries)
        self.db.execute(
            f"INSERT INTO {quote(MANIFEST_TABLE)} VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, now()) "
            "ON CONFLICT (table_name) DO UPDATE SET format = EXCLUDED.format, dataset = EXCLUDED.dataset, "
            "scale = EXCLUDED.scale, days = EXCLUDED.days, keys_sample = EXCLUDED.keys_sample, "
            "schema = EXCLUDED.schema, versions = EXCLUDED.versions, complete = EXCLUDED.complete, "
            "created = EXCLUDED.created",
            (table, LAYOUT_FORMAT, manifest["dataset"], manifest["scale"], days, manifest["keys_sample"],
             manifest["schema"], manifest["versions"], complete))

    def _layout(self, dataset, scale, strings, entries, keys, table, reused) -> Layout:
        days, rows = ordered_days(entries)
        return Layout(dataset=dataset, scale=scale, strings=strings, days=days, keys_sample=tuple(keys), rows=rows,
                      footprint_bytes=self._tables_bytes([table] + self._side_names(dataset, table)),
                      reused=reused, location=f"{self.db.address}/{self.db.database}.{table}",
                      notes=rounding_note(_get_dataset(dataset).info.schema, "PostgreSQL", TIME_PRECISION))

    @staticmethod
    def _side_names(dataset: str, table: str) -> list[str]:
        """The side tables a footprint counts with the table (``seed_side_tables``)."""
        return [f"{table}_{name}" for name in seed_side_tables(_get_dataset(dataset))]

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
