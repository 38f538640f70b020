"""Laying a dataset out in ArcticDB: the library's name, ``prepare`` (day by day, resumable, per
day or per instrument), the manifest, side tables, footprint and cache.

Layout: one library per dataset, scale and symbol layout, ``<prefix><dataset>_<scale.key()>_by_<day|
instrument>`` (characters ArcticDB dislikes made ``_``). Rows are indexed by their timestamp (TAQ:
``date`` + the ``time`` of day; devices and imports: ``time``, datetime64[ns], an imported
NANOTIMESTAMP kept to the ns), sorted, so ``date_range`` reads seek; every schema column is stored
as well, so a read gives DuckDB's columns in its order with the index dropped. Per-day symbols hold
the generator's time order; a day of the per-instrument layout is read with ``read_batch`` (one
``date_range`` request per key, keys in sorted order: DuckDB's row order). The manifest is the
metadata of the symbol ``_tickbench_manifest`` (format, scale with the dataset's content id, days
and rows per day, keys sample, schema, versions, complete flag), rewritten after each day, so an
interrupted ``prepare`` resumes at the first missing day (per-day: the day symbol is simply
rewritten; per-instrument: a day begun is first deleted from every key symbol with
``delete_data_in_range``). Side tables (devices' ``info``) are ``_side_<name>``, appends go to
``_append_<table>``, CSV imports to ``_import_<day symbol or key>``, report 003's minute quotes to
``_minute``; those scratch symbols are row-numbered (their batches repeat timestamps, which a
time-indexed append refuses).
"""
from __future__ import annotations

import datetime as dt
import re
from dataclasses import asdict, replace
from importlib import metadata
from pathlib import Path
from typing import Any

import pandas as pd
from arcticdb import WritePayload

from workloads.datasets.base import seed_side_tables, side_tables
from workloads.datasets.schema import DatasetInfo, Scale, StringMode
from workloads.targets.common.arrow_frames import library_versions
from workloads.targets.base import IMPORT_TABLE, Footprint, Layout, ProgressCallback, TargetError
from workloads.targets.common.cache import drop_file_cache, system_wide_drop
from workloads.targets.common.lazy import get_dataset as _get_dataset
from workloads.text import plural
from workloads.targets.arcticdb.symbols import MANIFEST_SYMBOL, day_range, day_symbol, time_indexed
from workloads.targets.arcticdb.connection import display_uri, lmdb_folder


LAYOUT_FORMAT = 1
KEYS_SAMPLE = 100
DEFAULT_CHUNK_ROWS = 1_000_000
_NAME_CHARS = re.compile(r"[^A-Za-z0-9_.-]")


class ArcticDBLayout:
    """``prepare`` and what a layout occupies (mixed into ``ArcticDBTarget``)."""

    def library_name(self, dataset: str, scale: Scale) -> str:
        name = f"{self.config.get('library') or ''}{dataset}_{scale.key()}_by_{self.symbol_per}"
        return _NAME_CHARS.sub("_", name)

    # --- parent side ---------------------------------------------------------------------
    def prepare(self, dataset: str, scale: Scale, strings: StringMode,
                progress: ProgressCallback | None = None) -> Layout:
        strings = StringMode.parse(strings)
        ds = _get_dataset(dataset)
        if self.symbol_per == "instrument" and not ds.info.key_column:
            raise TargetError(f"{dataset} has no key column: ArcticDB's symbol per instrument needs one "
                              "(use a symbol per day)")
        days = list(ds.trading_days(scale))
        name = self.library_name(dataset, scale)
        wanted = {"format": LAYOUT_FORMAT, "dataset": dataset, "scale": asdict(scale),
                  "content": ds.content_id, "symbol_per": self.symbol_per}
        with self._writer_turn(name):
            lib = self._library(name, create=True)
            manifest = self._read_manifest(lib)
            same = manifest is not None and all(manifest.get(k) == v for k, v in wanted.items())
            if same and manifest["complete"] and [e["date"] for e in manifest["entries"]] \
                    == [d.isoformat() for d in days]:
                self._write_side_tables(lib, ds, scale)
                return self._layout(manifest, name, strings, reused=True)
            if not same:  # another format, scale or content under this name: start over
                for symbol in lib.list_symbols():
                    lib.delete(symbol)
                manifest = {**wanted, "complete": False, "entries": [], "symbols": [],
                            "keys_sample": [str(k) for k in ds.keys(scale)[:KEYS_SAMPLE]],
                            "schema": [[c.name, c.ddb_type] for c in ds.info.schema.columns],
                            "versions": self._versions(), "created": dt.datetime.now().isoformat()}
            self._write_days(lib, ds, scale, days, manifest, progress)
            self._write_side_tables(lib, ds, scale)
            manifest["complete"] = True
            self._write_manifest(lib, manifest)
            return self._layout(manifest, name, strings, reused=False)

    def _write_days(self, lib, ds, scale: Scale, days: list[dt.date], manifest: dict[str, Any],
                    progress: ProgressCallback | None) -> None:
        done = {e["date"] for e in manifest["entries"]}
        pending = manifest.pop("pending", None)
        if pending and pending not in done and self.symbol_per == "instrument":
            span = day_range(dt.date.fromisoformat(pending))   # a day begun: take it out of every key
            for symbol in manifest["symbols"]:
                if lib.has_symbol(symbol):
                    lib.delete_data_in_range(symbol, span)
        total = sum(ds.day_rows(scale))          # an import's real rows, not the scale's
        rows_done = sum(e["rows"] for e in manifest["entries"])
        chunk_rows = int(self.config.get("chunk_rows") or DEFAULT_CHUNK_ROWS)
        for index, day in enumerate(days):
            if day.isoformat() in done:
                continue
            manifest["pending"] = day.isoformat()
            self._write_manifest(lib, manifest)
            chunks = ds.generate_day(index, scale, StringMode.ARROW, chunk_rows)
            if self.symbol_per == "day":
                rows = self._write_day_symbol(lib, ds.info, day, chunks)
            else:
                rows = self._append_day_to_keys(lib, ds.info, chunks, manifest)
            manifest.pop("pending")
            manifest["entries"].append({"date": day.isoformat(), "rows": rows})
            manifest["entries"].sort(key=lambda e: e["date"])
            self._write_manifest(lib, manifest)
            rows_done += rows
            if progress is not None:
                progress(min(rows_done, total), total, f"{day.isoformat()} written to ArcticDB")

    @staticmethod
    def _write_day_symbol(lib, info: DatasetInfo, day: dt.date, chunks) -> int:
        """The day as one symbol: the first chunk written (replacing a half day), the rest appended."""
        rows = 0
        for n, chunk in enumerate(chunks):
            frame = time_indexed(chunk, info)
            if n == 0:
                lib.write(day_symbol(day), frame, prune_previous_versions=True)
            else:
                lib.append(day_symbol(day), frame)
            rows += len(frame)
        return rows

    @staticmethod
    def _append_day_to_keys(lib, info: DatasetInfo, chunks, manifest: dict[str, Any]) -> int:
        """The whole day grouped by key (one segment per key-day), appended to each key's symbol."""
        day = pd.concat(list(chunks), ignore_index=True)
        payloads = [WritePayload(str(key), time_indexed(rows, info))
                    for key, rows in day.groupby(day[info.key_column].astype(str), sort=True, observed=True)]
        failed = [r for r in lib.append_batch(payloads) if not hasattr(r, "version")]
        if failed:
            raise TargetError(f"ArcticDB refused {plural(len(failed), 'key symbol')}: {failed[0]}")
        manifest["symbols"] = sorted(set(manifest["symbols"]) | {p.symbol for p in payloads})
        return len(day)

    @staticmethod
    def _write_side_tables(lib, ds, scale: Scale) -> None:
        for name in side_tables(ds):
            if not lib.has_symbol(f"_side_{name}"):
                lib.write(f"_side_{name}", getattr(ds, f"{name}_frame")(scale).reset_index(drop=True))

    @staticmethod
    def _read_manifest(lib) -> dict[str, Any] | None:
        if not lib.has_symbol(MANIFEST_SYMBOL):
            return None
        manifest = lib.read_metadata(MANIFEST_SYMBOL).metadata
        return manifest if isinstance(manifest, dict) else None

    @staticmethod
    def _write_manifest(lib, manifest: dict[str, Any]) -> None:
        lib.write(MANIFEST_SYMBOL, pd.DataFrame({"format": [LAYOUT_FORMAT]}), metadata=manifest,
                  prune_previous_versions=True)

    @staticmethod
    def _versions() -> dict[str, str]:
        return {**library_versions(), "arcticdb": metadata.version("arcticdb")}

    def _layout(self, manifest: dict[str, Any], name: str, strings: StringMode, reused: bool) -> Layout:
        entries = manifest["entries"]
        layout = Layout(dataset=manifest["dataset"], scale=Scale(**manifest["scale"]), strings=strings,
                        days=tuple(dt.date.fromisoformat(e["date"]) for e in entries),
                        keys_sample=tuple(manifest["keys_sample"]), rows=sum(e["rows"] for e in entries),
                        footprint_bytes=0, reused=reused,
                        location=f"{display_uri(self.uri)} library {name}, a symbol per {self.symbol_per}")
        return replace(layout, footprint_bytes=self.footprint(layout))

    def footprint(self, layout: Layout) -> int:
        """LMDB: the library's ``data.mdb`` (its pages in use, every symbol); S3: ArcticDB's own
        count of the library's compressed keys."""
        files = [p for p in self._mdb_files(layout) if p.is_file()]
        if files:
            return sum(p.stat().st_size for p in files)
        sizes = self._lib(layout).admin_tools().get_sizes()
        return sum(size.bytes_compressed for size in sizes.values())

    def footprint_detail(self, layout: Layout, table: str = "") -> Footprint:
        """ArcticDB's own count (``admin_tools().get_sizes_by_symbol()``): compressed bytes of every
        key (data segments, indexes, versions) of the table's live symbols (a deleted symbol's
        tombstone keys are the library's, not a table's). No per-column figure: ArcticDB does not tell."""
        lib = self._lib(layout)
        self._current_versions(lib.name)
        sizes = lib.admin_tools().get_sizes_by_symbol()
        # live symbols only: a deleted one keeps its version keys (a tombstone) in the sizes
        live = set(lib.list_symbols())
        if table == IMPORT_TABLE:
            wanted = [s for s in sizes if s in live and s.startswith("_import_")]
        else:
            seed = {f"_side_{name}" for name in seed_side_tables(_get_dataset(layout.dataset))}
            wanted = [s for s in sizes if s in live and (not s.startswith("_") or s in seed)]
        total = sum(size.bytes_compressed for s in wanted for size in sizes[s].values())
        return Footprint(bytes=total, replicas=1 if lmdb_folder(self.uri) is not None else None,
                         method=f"arcticdb get_sizes_by_symbol ({len(wanted)} symbols, compressed keys)")

    def describe(self) -> dict[str, Any]:
        return {"kind": self.kind, "uri": display_uri(self.uri), "symbol_per": self.symbol_per,
                "library_prefix": str(self.config.get("library") or ""), "bars_by": self.bars_by,
                "writers": "serialised per library (flock)", "time_precision": "ns", "versions": self._versions()}

    def data_files(self, layout: Layout) -> list[Path]:
        return self._mdb_files(layout)

    def drop_cache(self, layout: Layout) -> list[str]:
        """The OS cache of ``data.mdb``."""
        return drop_file_cache(self._mdb_files(layout), system_wide=system_wide_drop(self.config))
