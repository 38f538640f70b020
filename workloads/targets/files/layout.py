"""Laying a dataset out as day files: paths, ``prepare``, side tables, footprint and cache.

Layout: ``<root>/<kind>/<dataset>/<scale.key()>/<strings>/<YYYY-MM-DD>.<ext>`` plus
``manifest.json`` (rows and bytes per day, keys sample, schema, library versions). Each day
file is written to a hidden temp file, fsynced and renamed, so a crash never leaves a half
file under a cached name; the manifest is rewritten after every day, so an interrupted
``prepare`` resumes at the first missing day.

Any dataset's columns are stored as its DataFrame holds them (pandas' dtypes; Arrow's for Parquet and
Feather, ``common.arrow_frames``): every time, an imported NANOTIMESTAMP too, as datetime64[ns]/
timestamp[ns], kept to the ns. A day's rows keep the dataset's time order (report 000's files).
"""
from __future__ import annotations

import datetime as dt
from dataclasses import asdict
from pathlib import Path
from typing import Any

from workloads.datasets.schema import Scale, StringMode
from workloads.targets.common.arrow_frames import library_versions
from workloads.datasets.base import seed_side_tables, side_tables
from workloads.targets.base import IMPORT_TABLE, Footprint, Layout, ProgressCallback
from workloads.targets.common.cache import drop_file_cache, system_wide_drop
from workloads.targets.common.day_files import lay_out_days, root_folder
from workloads.targets.common.storage import write_bytes_atomic
from workloads.targets.common.lazy import get_dataset as _get_dataset


LAYOUT_FORMAT = 1          # bump when the on-disk layout changes; older layouts are rebuilt
DEFAULT_CHUNK_ROWS = 1_000_000


class FileLayout:
    """Where a layout's files live, how they are laid out and what they occupy (mixed into ``FileTarget``)."""

    # --- layout ------------------------------------------------------------------------
    @property
    def root(self) -> Path:
        return root_folder(self.config)

    @property
    def chunk_rows(self) -> int:
        return int(self.config.get("chunk_rows") or DEFAULT_CHUNK_ROWS)

    def layout_dir(self, dataset: str, scale: Scale, strings: StringMode) -> Path:
        return self.root / self.kind / dataset / scale.key() / StringMode.parse(strings).value

    def day_path(self, layout: Layout, day: dt.date) -> Path:
        if day not in layout.days:
            span = f"{layout.days[0]} .. {layout.days[-1]}" if layout.days else "none"
            raise ValueError(f"{day} is not a trading day of this layout (days: {span})")
        return Path(layout.location) / f"{day.isoformat()}.{self.ext}"

    def day_files(self, layout: Layout) -> list[Path]:
        return [Path(layout.location) / f"{d.isoformat()}.{self.ext}" for d in layout.days]

    # --- parent side ---------------------------------------------------------------------
    def prepare(self, dataset: str, scale: Scale, strings: StringMode,
                progress: ProgressCallback | None = None) -> Layout:
        strings = StringMode.parse(strings)
        ds = _get_dataset(dataset)
        folder = self.layout_dir(dataset, scale, strings)
        days = list(ds.trading_days(scale))
        wanted = {"format": LAYOUT_FORMAT, "kind": self.kind, "dataset": dataset,
                  "scale": asdict(scale), "strings": strings.value, "content": ds.content_id,
                  "days": [d.isoformat() for d in days]}
        return lay_out_days(folder, wanted, ds, scale, strings, self.ext,
                            lambda index, path, on_chunk: self._write_day(ds, index, scale, strings, path, on_chunk),
                            lambda where: self._write_side_tables(ds, scale, where), library_versions(), progress)

    def _write_side_tables(self, ds, scale: Scale, folder: Path) -> None:
        """A dataset's side tables (devices: ``info``) as ``<name>.<ext>`` beside the days."""
        for name, schema in side_tables(ds).items():
            path = folder / f"{name}.{self.ext}"
            if not path.is_file():
                write_bytes_atomic(path, self._encode_frame(getattr(ds, f"{name}_frame")(scale), schema))

    def side_path(self, layout: Layout, name: str) -> Path:
        return Path(layout.location) / f"{name}.{self.ext}"

    def footprint(self, layout: Layout) -> int:
        return sum(p.stat().st_size for p in self.day_files(layout) if p.is_file())

    def _table_files(self, layout: Layout, table: str) -> list[Path]:
        if table == IMPORT_TABLE:
            return sorted(self.import_dir(layout).glob(f"*.{self.ext}"))
        sides = [self.side_path(layout, n) for n in seed_side_tables(_get_dataset(layout.dataset))]
        return [p for p in self.day_files(layout) + sides if p.is_file()]

    def footprint_detail(self, layout: Layout, table: str = "") -> Footprint:
        files = self._table_files(layout, table)
        columns = self._column_bytes(files)
        return Footprint(bytes=sum(p.stat().st_size for p in files), columns=columns, replicas=1,
                         method="file sizes" + (", column chunks from the Parquet footers" if columns else ""))

    def _column_bytes(self, files: list[Path]) -> dict[str, int]:
        """Bytes per column where the format's metadata says (Parquet's column chunks)."""
        return {}

    def describe(self) -> dict[str, Any]:
        return {"kind": self.kind, "root": str(self.root), "format": self.ext, "time_precision": "ns",
                "versions": library_versions(), **self._codec()}

    def _codec(self) -> dict[str, Any]:
        return {}

    def data_files(self, layout: Layout) -> list[Path]:
        return self.day_files(layout)

    def drop_cache(self, layout: Layout) -> list[str]:
        return drop_file_cache(self.data_files(layout), system_wide=system_wide_drop(self.config))
