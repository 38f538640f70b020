"""Laying a dataset out in DuckDB: ``prepare`` (day by day, resumable), the manifest, side tables,
and the footprint of the file and of a table's column segments.

Layout: table ``<dataset>_<scale.key()>`` in ``config["path"]`` (default
``<datasets dir>/tickbench_data.duckdb``), no index, rows ordered by (date, key, time) (without a
key: (date, time); ``common/row_order``) so DuckDB's zone maps (per-row-group min/max) skip most of
the table for a day or key-day. Strings are VARCHAR, an imported NANOTIMESTAMP is TIMESTAMP_NS (kept
to the ns); the string mode only changes decoding, so all three modes share the table. Each day is
loaded in its own transaction (chunks from the generator via Arrow into a temp table, then one
sorted INSERT), so an interrupted ``prepare`` resumes at the first missing day. The
manifest lives in the table ``_tickbench_layouts``.
"""
from __future__ import annotations

import datetime as dt
import json
from dataclasses import asdict
from pathlib import Path
from typing import Any

import duckdb

from workloads.datasets.base import side_tables
from workloads.datasets.schema import DatasetInfo, Scale, StringMode
from workloads.targets.common.arrow_frames import arrow_schema, arrow_table, library_versions
from workloads.targets.base import IMPORT_TABLE, Footprint, Layout, ProgressCallback
from workloads.targets.common.cache import drop_file_cache, system_wide_drop
from workloads.targets.common.lazy import get_dataset as _get_dataset
from workloads.targets.common.row_order import order_columns
from workloads.targets.duckdb.dialect import (MANIFEST_TABLE, TIME_PRECISION, _columns_sql, _literal,
                                              _select_cast_sql, quote, table_name)


LAYOUT_FORMAT = 1
KEYS_SAMPLE = 100
DEFAULT_CHUNK_ROWS = 1_000_000


class DuckDBLayout:
    """``prepare`` and what a layout occupies (mixed into ``DuckDBTarget``)."""

    # --- parent side ---------------------------------------------------------------------
    def prepare(self, dataset: str, scale: Scale, strings: StringMode,
                progress: ProgressCallback | None = None) -> Layout:
        strings = StringMode.parse(strings)
        ds = _get_dataset(dataset)
        table = table_name(dataset, scale)
        days = list(ds.trading_days(scale))
        scale_json = json.dumps({**asdict(scale), "content": ds.content_id}, sort_keys=True)
        self.close()  # our own read-only connection would block the read-write open
        con, _, _ = self._connect(read_only=False)
        try:
            return self._prepare(con, ds, dataset, scale, strings, table, days, scale_json, progress)
        except duckdb.Error as exc:
            raise self._disk_full(exc) or exc
        finally:
            con.close()  # workers open read-only; a read-write handle here would lock them out

    def _prepare(self, con, ds, dataset: str, scale: Scale, strings: StringMode, table: str,
                 days: list[dt.date], scale_json: str, progress: ProgressCallback | None) -> Layout:
        info: DatasetInfo = ds.info
        con.execute(f"CREATE TABLE IF NOT EXISTS {MANIFEST_TABLE} (table_name VARCHAR, format INTEGER, "
                    "dataset VARCHAR, scale VARCHAR, days VARCHAR, keys_sample VARCHAR, "
                    "schema VARCHAR, versions VARCHAR, complete BOOLEAN, created TIMESTAMP)")
        found = con.execute(f"SELECT format, scale, days, keys_sample, complete FROM {MANIFEST_TABLE} "
                            "WHERE table_name = ?", [table]).fetchall()
        row = found[0] if found else None
        compatible = row is not None and row[0] == LAYOUT_FORMAT and row[1] == scale_json
        entries = json.loads(row[2]) if compatible else []
        if compatible and row[4] and [e["date"] for e in entries] == [d.isoformat() for d in days]:
            self._ensure_append_table(con, table, table + "_append")
            self._ensure_side_tables(con, ds, scale, table)
            return self._layout(dataset, scale, strings, entries, json.loads(row[3]), table, reused=True)
        if not compatible:  # a different format or scale under this name: start over
            con.execute(f"DROP TABLE IF EXISTS {quote(table)}")
            con.execute(f"DELETE FROM {MANIFEST_TABLE} WHERE table_name = ?", [table])
        con.execute(f"CREATE TABLE IF NOT EXISTS {quote(table)} ({_columns_sql(info.schema)})")
        self._ensure_append_table(con, table, table + "_append")
        self._ensure_side_tables(con, ds, scale, table)
        keys = [str(k) for k in ds.keys(scale)[:KEYS_SAMPLE]]
        manifest = {"format": LAYOUT_FORMAT, "dataset": dataset, "scale": scale_json,
                    "keys_sample": json.dumps(keys),
                    "schema": json.dumps([[c.name, c.ddb_type] for c in info.schema.columns]),
                    "versions": json.dumps(library_versions())}
        done = {e["date"] for e in entries}
        total = sum(ds.day_rows(scale))          # an import's real rows, not the scale's
        rows_done = sum(e["rows"] for e in entries)
        for index, day in enumerate(days):
            if day.isoformat() in done:
                continue
            con.begin()  # one day = one transaction: a crash leaves no half day
            rows = self._load_day(con, ds, index, scale, table, rows_done, total, progress)
            entries.append({"date": day.isoformat(), "rows": rows})
            entries.sort(key=lambda e: e["date"])
            self._write_manifest(con, table, manifest, entries, complete=False)
            con.commit()
            rows_done += rows
            if progress is not None:
                progress(min(rows_done, total), total, f"{day.isoformat()} loaded into {table}")
        self._write_manifest(con, table, manifest, entries, complete=True)
        con.execute("CHECKPOINT")  # fold the WAL into the file: readers and footprint see it all
        return self._layout(dataset, scale, strings, entries, keys, table, reused=False)

    def _load_day(self, con, ds, index: int, scale: Scale, table: str, rows_done: int, total: int,
                  progress: ProgressCallback | None) -> int:
        info: DatasetInfo = ds.info
        schema = arrow_schema(info.schema)
        con.execute(f"CREATE OR REPLACE TEMP TABLE _tb_stage ({_columns_sql(info.schema)})")
        rows = 0
        chunk_rows = int(self.config.get("chunk_rows") or DEFAULT_CHUNK_ROWS)
        for chunk in ds.generate_day(index, scale, StringMode.ARROW, chunk_rows):
            con.register("_tb_chunk", arrow_table(chunk, schema))
            con.execute(f"INSERT INTO _tb_stage SELECT {_select_cast_sql(info.schema)} FROM _tb_chunk")
            con.unregister("_tb_chunk")
            rows += len(chunk)
            if progress is not None:
                progress(min(rows_done + rows, total), total, f"loading day {index + 1} into {table}")
        # rowid (arrival order) breaks ties in time, so first/last quote of a minute is well defined
        order = ", ".join(quote(c) for c in order_columns(info))
        con.execute(f"INSERT INTO {quote(table)} SELECT * EXCLUDE (_arrival) FROM "
                    f"(SELECT *, rowid AS _arrival FROM _tb_stage) ORDER BY {order}, _arrival")
        con.execute("DROP TABLE _tb_stage")
        return rows

    @staticmethod
    def _ensure_side_tables(con, ds, scale: Scale, table: str) -> None:
        """A dataset's side tables (devices: ``info``) as ``<table>_<name>``, loaded once."""
        for name, schema in side_tables(ds).items():
            side = f"{table}_{name}"
            exists = con.execute("SELECT count(*) FROM information_schema.tables WHERE table_name = ?",
                                 [side]).fetchall()[0][0]
            if exists and con.execute(f"SELECT count(*) FROM {quote(side)}").fetchall()[0][0]:
                continue
            frame = getattr(ds, f"{name}_frame")(scale)
            con.execute(f"CREATE OR REPLACE TABLE {quote(side)} ({_columns_sql(schema)})")
            con.register("_tb_side", arrow_table(frame, arrow_schema(schema)))
            con.execute(f"INSERT INTO {quote(side)} SELECT {_select_cast_sql(schema)} FROM _tb_side")
            con.unregister("_tb_side")

    @staticmethod
    def _ensure_append_table(con, table: str, append_table: str) -> None:
        con.execute(f"CREATE TABLE IF NOT EXISTS {quote(append_table)} AS "
                    f"SELECT * FROM {quote(table)} LIMIT 0")

    @staticmethod
    def _write_manifest(con, table: str, manifest: dict[str, Any], entries: list[dict], complete: bool) -> None:
        con.execute(f"DELETE FROM {MANIFEST_TABLE} WHERE table_name = ?", [table])
        con.execute(f"INSERT INTO {MANIFEST_TABLE} VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, now()::TIMESTAMP)",
                    [table, manifest["format"], manifest["dataset"], manifest["scale"], json.dumps(entries),
                     manifest["keys_sample"], manifest["schema"], manifest["versions"], complete])

    def _layout(self, dataset, scale, strings, entries, keys, table, reused) -> Layout:
        return Layout(dataset=dataset, scale=scale, strings=strings,
                      days=tuple(dt.date.fromisoformat(e["date"]) for e in entries),
                      keys_sample=tuple(keys), rows=sum(e["rows"] for e in entries),
                      footprint_bytes=self._file_bytes(), reused=reused, location=f"{self.path}:{table}")

    def _files(self) -> list[Path]:
        return [self.path, self.path.with_name(self.path.name + ".wal")]

    def _file_bytes(self) -> int:
        return sum(p.stat().st_size for p in self._files() if p.is_file())

    def footprint(self, layout: Layout) -> int:
        """The database file's size (+ WAL): every table in it, as the file holds them together."""
        return self._file_bytes()

    def describe(self) -> dict[str, Any]:
        return {"kind": self.kind, "path": str(self.path), "duckdb": duckdb.__version__,
                "threads": self.config.get("threads") or "default", "time_precision": TIME_PRECISION,
                "versions": library_versions()}

    def data_files(self, layout: Layout) -> list[Path]:
        return self._files()

    def drop_cache(self, layout: Layout) -> list[str]:
        """The OS cache of the database file."""
        return drop_file_cache(self._files(), system_wide=system_wide_drop(self.config))

    def footprint_detail(self, layout: Layout, table: str = "") -> Footprint:
        """Bytes of the table's column segments (``pragma_storage_info``): a segment runs from its
        offset to the next segment's in the same block, the last one of a block to the block's end
        (256 KB blocks: a slight overcount), plus any whole blocks it spans."""
        name = self.import_table(layout) if table == IMPORT_TABLE else self.table(layout)
        held = self._reader is not None
        con = self._con(layout)
        try:
            if not con.execute("SELECT count(*) FROM information_schema.tables WHERE table_name = ?",
                               [name]).fetchall()[0][0]:
                return Footprint(bytes=0, method=f"{name} does not exist yet")
            segments = con.sql("SELECT column_name, block_id, block_offset, additional_block_ids "
                               f"FROM pragma_storage_info({_literal(name)}) WHERE persistent").df()
            block = con.execute("SELECT block_size FROM pragma_database_size()").fetchall()[0][0]
        finally:
            if not held:     # the runner asks between steps: hold no lock the workers' writers need
                self.close()
        columns: dict[str, int] = {}
        for _, in_block in segments.groupby("block_id"):
            ordered = in_block.sort_values("block_offset")
            offsets = ordered["block_offset"].tolist() + [block]
            for (_, row), start, end in zip(ordered.iterrows(), offsets, offsets[1:]):
                extra = len(row["additional_block_ids"]) if row["additional_block_ids"] is not None else 0
                columns[row["column_name"]] = columns.get(row["column_name"], 0) + (end - start) + extra * block
        return Footprint(bytes=sum(columns.values()), columns=columns, replicas=1,
                         method="pragma_storage_info segments (block-level estimate)")
