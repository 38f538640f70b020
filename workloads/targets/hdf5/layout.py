"""Laying a dataset out as HDF5 day files: file and node names, writing a file safely,
``prepare``, side tables, footprint and cache.

Layout: ``<root>/hdf5/<dataset>/<scale.key()>/<format>/<complib>-<complevel>/<YYYY-MM-DD>.h5``,
one node ``/dYYYYMMDD`` per file, side tables as ``<name>.h5`` (node ``/<name>``) and
``manifest.json`` (format, scale with the dataset's content id, rows and bytes per day, keys
sample, schema, library versions). One file per day rather than one file with every day: an
HDF5 file open for writing can be left corrupt by a crash (its metadata is cached in memory), so
each day is written to a hidden temp file and renamed (``storage.atomic_path``); a crash costs at
most the day being written and ``prepare`` resumes at the first missing day. A full disk is
reported as such even where HDF5 stays silent about it (``_check_written``). The stored data do
not depend on the string mode (strings are decoded into it on read), so every mode shares a layout.

Rows of a day are stored ordered by (key, time), ties in arrival order (DuckDB's order), so a key's
rows are contiguous (a dataset without a key: time order, no index). Times, an imported
NANOTIMESTAMP too, are int64 nanoseconds: kept to the ns. Table format: every column is a data
column (``where`` can name any column) and the key column has a PyTables index (optlevel 6,
"medium", PyTables' defaults); the date needs none, it is the node. Strings are fixed-width UTF-8
bytes (pandas' table format). Fixed format: pandas' own; its string blocks are pickled object arrays
(pandas warns about it).
"""
from __future__ import annotations

import datetime as dt
import errno
import os
import time
import warnings
from dataclasses import asdict
from importlib import metadata
from pathlib import Path
from typing import Any

import pandas as pd
import tables

from workloads.datasets.base import seed_side_tables, side_tables
from workloads.datasets.schema import DatasetInfo, Scale, StringMode
from workloads.targets.common.arrow_frames import library_versions
from workloads.targets.base import IMPORT_TABLE, Footprint, Layout, ProgressCallback
from workloads.targets.common.cache import drop_file_cache, system_wide_drop
from workloads.targets.common.day_files import lay_out_days
from workloads.targets.common.storage import atomic_path, free_mb
from workloads.targets.common.lazy import get_dataset as _get_dataset
from workloads.targets.common.row_order import order_columns


LAYOUT_FORMAT = 1          # bump when the on-disk layout changes; older layouts are rebuilt
EXT = "h5"


def _now() -> float:
    return time.perf_counter()


def day_node(day: dt.date) -> str:
    return "d" + day.strftime("%Y%m%d")


def hdf5_versions() -> dict[str, str]:
    versions = library_versions()
    versions["tables"] = tables.__version__
    versions["hdf5"] = tables.hdf5_version
    try:
        versions["h5py"] = metadata.version("h5py")
    except metadata.PackageNotFoundError:
        versions["h5py"] = ""
    blosc = tables.which_lib_version("blosc")
    versions["blosc"] = blosc[1] if blosc else ""
    return versions


def _check_written(tmp: Path, path: Path) -> None:
    """Refuse a file whose writes a full disk cut short.

    HDF5 (through PyTables) can close a file without an error although the disk ran full: the
    raw-data chunk cache is written back when datasets close and that failure is not reported
    (seen on a full tmpfs: an 815 KB file with 256 KB on disk, holes read back as zeros). A file
    with fewer bytes on disk than its size on a disk with nothing left is such a file.
    (Compressing file systems also hold files in fewer blocks, but not on a full disk.)
    """
    stat = tmp.stat()
    allocated = getattr(stat, "st_blocks", None)
    if allocated is not None and allocated * 512 < stat.st_size and free_mb(tmp.parent) == 0:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(path))


class HDF5Layout:
    """Where a layout's files live, how each is written and what they occupy (mixed into ``HDF5Target``)."""

    def layout_dir(self, dataset: str, scale: Scale) -> Path:
        return self.root / self.kind / dataset / scale.key() / self.format / self.codec

    def day_path(self, layout: Layout, day: dt.date) -> Path:
        if day not in layout.days:
            span = f"{layout.days[0]} .. {layout.days[-1]}" if layout.days else "none"
            raise ValueError(f"{day} is not a trading day of this layout (days: {span})")
        return Path(layout.location) / f"{day.isoformat()}.{EXT}"

    def day_files(self, layout: Layout) -> list[Path]:
        return [Path(layout.location) / f"{d.isoformat()}.{EXT}" for d in layout.days]

    def side_path(self, layout: Layout, name: str) -> Path:
        return Path(layout.location) / f"{name}.{EXT}"

    # --- writing -------------------------------------------------------------------------
    def _write(self, path: Path, node: str, frame: pd.DataFrame, key_column: str | None = None) -> float:
        """``frame`` as node ``node`` of a new file ``path`` (via a temp file and a rename) in the
        layout's format; returns the seconds spent building the key's index (table format)."""
        index_s = 0.0
        with atomic_path(path) as tmp, warnings.catch_warnings():
            # a user's column names need not be Python identifiers: PyTables then only loses attribute access
            warnings.simplefilter("ignore", tables.NaturalNameWarning)
            try:
                with pd.HDFStore(tmp, mode="w", complib=self.complib, complevel=self.complevel) as store:
                    if self.format == "fixed":
                        strings = frame.select_dtypes(include=["object", "string", "category"]).columns
                        plain = frame.astype({name: object for name in strings})  # fixed needs object strings
                        with warnings.catch_warnings():   # pandas warns that it pickles object columns
                            warnings.simplefilter("ignore", pd.errors.PerformanceWarning)
                            store.put(node, plain, format="fixed")
                    else:
                        store.put(node, frame, format="table", data_columns=True, index=False)
                        if key_column is not None and len(frame):
                            t0 = _now()
                            store.create_table_index(node, columns=[key_column], optlevel=6, kind="medium")
                            index_s = _now() - t0
            except Exception as exc:
                if free_mb(tmp.parent) == 0:   # HDF5's error text never says why: a full disk does
                    raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(path)) from exc
                raise
            _check_written(tmp, path)
        return index_s

    def _write_day(self, ds, index: int, scale: Scale, path: Path, on_chunk) -> int:
        info: DatasetInfo = ds.info
        chunks, rows = [], 0
        for chunk in ds.generate_day(index, scale, StringMode.ARROW, self.chunk_rows):
            chunks.append(chunk)
            rows += len(chunk)
            on_chunk(rows)
        frame = chunks[0] if len(chunks) == 1 else pd.concat(chunks, ignore_index=True)
        del chunks
        # (key, time), ties in arrival order: a key's rows contiguous for ``where`` (no key: time)
        frame = frame.sort_values(list(order_columns(info)), kind="stable", ignore_index=True)
        self._write(path, day_node(ds.trading_days(scale)[index]), frame, info.key_column or None)
        return len(frame)

    # --- parent side ---------------------------------------------------------------------
    def prepare(self, dataset: str, scale: Scale, strings: StringMode,
                progress: ProgressCallback | None = None) -> Layout:
        strings = StringMode.parse(strings)
        ds = _get_dataset(dataset)
        folder = self.layout_dir(dataset, scale)
        days = list(ds.trading_days(scale))
        wanted = {"format": LAYOUT_FORMAT, "kind": self.kind, "dataset": dataset, "scale": asdict(scale),
                  "content": ds.content_id, "hdf5_format": self.format, "complib": self.complib or "none",
                  "complevel": self.complevel, "days": [d.isoformat() for d in days]}
        return lay_out_days(folder, wanted, ds, scale, strings, EXT,
                            lambda index, path, on_chunk: self._write_day(ds, index, scale, path, on_chunk),
                            lambda where: self._write_side_tables(ds, scale, where), hdf5_versions(), progress)

    def _write_side_tables(self, ds, scale: Scale, folder: Path) -> None:
        """A dataset's side tables (devices: ``info``) as ``<name>.h5`` beside the days."""
        for name in side_tables(ds):
            path = folder / f"{name}.{EXT}"
            if not path.is_file():
                self._write(path, name, getattr(ds, f"{name}_frame")(scale))

    def footprint(self, layout: Layout) -> int:
        return sum(p.stat().st_size for p in self.day_files(layout) if p.is_file())

    def footprint_detail(self, layout: Layout, table: str = "") -> Footprint:
        """File sizes. No per-column sizes: a table node is one compound dataset (rows of every
        column), fixed-format blocks hold several columns each, so HDF5 cannot tell them."""
        if table == IMPORT_TABLE:
            files = sorted(self.import_dir(layout).glob(f"*.{EXT}"))
        else:
            sides = [self.side_path(layout, n) for n in seed_side_tables(_get_dataset(layout.dataset))]
            files = [p for p in self.day_files(layout) + sides if p.is_file()]
        return Footprint(bytes=sum(p.stat().st_size for p in files), replicas=1,
                         method="file sizes (HDF5 stores rows, not columns: no per-column size)")

    def describe(self) -> dict[str, Any]:
        return {"kind": self.kind, "root": str(self.root), "format": self.format,
                "complib": self.complib or "none", "complevel": self.complevel,
                "day_reader": self.day_reader, "time_precision": "ns",
                "slice_reader": "PyTables Table.read_where on the key's index" if self.format == "table"
                else "pandas HDFStore.get, then a pandas filter",
                "versions": hdf5_versions()}

    def data_files(self, layout: Layout) -> list[Path]:
        sides = [self.side_path(layout, n) for n in side_tables(_get_dataset(layout.dataset))]
        return self.day_files(layout) + sides

    def drop_cache(self, layout: Layout) -> list[str]:
        # Files are opened per operation: PyTables/HDF5 keep no chunk cache between reads.
        return drop_file_cache(self.data_files(layout), system_wide=system_wide_drop(self.config))
