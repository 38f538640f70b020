"""HDF5 through pandas/PyTables: one file per trading day holding one node per day (``/d20070823``).

Report 000 named HDF5 as the other file option beside pickle. There is no query engine: the
suites and report 003 run in pandas on the client (``ClientPandas``), minute bars too.

Config keys (plain data, rebuilt in every worker):
- ``root``: the datasets folder (default ``workloads.paths.default_datasets_dir()``).
- ``format``: ``"table"`` (default; PyTables Table, queryable by ``where``) or ``"fixed"``
  (pandas' fixed format: faster to write, no ``where``).
- ``complib``: PyTables' compressor, default ``"blosc:lz4"`` (fast to write and read, the usual
  choice of PyTables users); ``"none"`` for none; any of ``tables.filters.all_complibs``.
- ``complevel``: 0-9, default 5 (ignored with ``complib`` "none").

Layout: ``<root>/hdf5/<dataset>/<scale.key()>/<format>/<complib>-<complevel>/<YYYY-MM-DD>.h5``,
one node ``/dYYYYMMDD`` per file, side tables as ``<name>.h5`` (node ``/<name>``) and
``manifest.json`` (format, scale with the dataset's content id, rows and bytes per day, keys
sample, schema, library versions). One file per day rather than one file with every day: an
HDF5 file open for writing can be left corrupt by a crash (its metadata is cached in memory), so
each day is written to a hidden temp file and renamed (``storage.atomic_path``); a crash costs at
most the day being written and ``prepare`` resumes at the first missing day. A full disk is
reported as such even where HDF5 stays silent about it (``_check_written``). The stored data do
not depend on the string mode (strings are decoded into it on read), so every mode shares a layout.

Rows of a day are stored ordered by (key, time), ties in arrival order (DuckDB's order), so a
key's rows are contiguous. Table format: every column is a data column (``where`` can name any
column) and the key column has a PyTables index (optlevel 6, "medium", PyTables' defaults); the
date needs none, it is the node. Strings are fixed-width UTF-8 bytes (pandas' table format).
Fixed format: pandas' own; its string blocks are pickled object arrays (pandas warns about it).

Phases (seconds; meanings in ``workloads.targets.base``). The timed span opens the file and reads:
- table, whole day: ``read`` = the node's rows into numpy records (disk + decompression), by
  PyTables' ``Table.read()`` or by h5py (see below); ``decode`` = records -> DataFrame in the
  layout's string mode (fixed-width bytes through Arrow strings).
- table, slice / minute bars: ``read`` = ``Table.read_where("key == v")`` (uses the key's index,
  reads only that key's rows), ``decode`` as above, ``query`` = pandas' bars.
- fixed: ``read`` = ``HDFStore.get`` (disk, decompression, unpickling into pandas), ``decode`` =
  pandas' str -> the layout's string mode; a slice reads the whole day and filters in pandas
  (``query``).

Which whole-day reader, measured (``.venv/bin/python benchmarks/bench_hdf5_readers.py --rows 1000000
--repeats 5``: a 1 M-row TAQ day, 500 symbols, table format, warm, best of 5, on a 2-core machine
shared with other jobs; decode = records -> DataFrame with Arrow str, object str 0.21-0.23 s):

================  =======  ===============  ==========  ==========  ======
complib           file     HDFStore.select  Table.read  h5py read   decode
================  =======  ===============  ==========  ==========  ======
blosc:lz4 5       21.3 MB  0.98 s           0.10 s      unreadable  0.10 s
blosc:zstd 3      14.6 MB  1.26 s           0.39 s      unreadable  0.10 s
zlib 1            14.4 MB  1.40 s           0.54 s      0.26 s      0.10 s
none              62.3 MB  0.89 s           0.02 s      0.07 s      0.10 s
================  =======  ===============  ==========  ==========  ======

``HDFStore.select`` spends most of its time in pandas' per-column conversion, not in HDF5, so
the day is read as records and decoded here (~5x faster, the same frame). h5py cannot read blosc
without the separate ``hdf5plugin`` package and beats PyTables only on zlib, so h5py reads zlib
layouts and PyTables every other (``describe()["day_reader"]``). A key's slice (3,790 rows):
``HDFStore.select(where=...)`` 0.013 s, ``Table.read_where`` 0.003 s. Stored in time order
instead of key order, a 31,864-row slice took 0.29 s instead of 0.05 s (blosc:lz4; an earlier
ad-hoc script, not part of ``bench_hdf5_readers``): the key order is what makes ``where`` pay. In that
script fixed format (``HDFStore.get``) read the same day in 2.8 s (its strings are pickled).

Wire bytes: a whole-day read's file size; a table slice reads an unknown part of it (None).

Some columns of a day (``read_day(..., columns)``): HDF5 stores rows, so every read still takes
the whole node off the disk (wire bytes: the file's size) and only the decoding is of fewer
columns. h5py reads just those fields of the records (``dataset.fields(names)``, the h5py user's
call); PyTables' ``Table.read`` reads whole records (its ``field=`` takes one column) and the
records' other fields are left undecoded; fixed format is ``HDFStore.get`` of the whole frame, then
the columns picked (``decode``): pandas refuses ``columns=`` for a fixed store.

Concurrency: HDF5 (without SWMR, which pandas does not use) lets several processes read a file
at once, never a writer beside them (HDF5's own file locks refuse the open). Day files are only
read after ``prepare``; every write during a run goes to a new part file of its own
(``append/<table>/part-<pid>-<ns>-<id>.h5``, ``minute/part-...``, ``import/<day>.h5``), written
through a temp file and renamed, so no process ever opens a file another one writes and appends
from several workers need no lock and never wait for each other. For ``append``: ``io`` is
``HDFStore.put`` of the batch into its part file (pandas' conversion, compression, writing).
"""
from __future__ import annotations

import datetime as dt
import errno
import importlib.util
import os
import re
import time
import uuid
import warnings
from dataclasses import asdict
from importlib import metadata
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import tables

from workloads.datasets.base import side_tables
from workloads.datasets.csv_files import STYLE as CSV_STYLE
from workloads.datasets.csvread import read_csv
from workloads.datasets.csvwrite import write_csv
from workloads.datasets.schema import DatasetInfo, Scale, Schema, StringMode, apply_string_mode
from workloads.targets.arrow_frames import frame_from_arrow, key_value, library_versions
from workloads.targets.bars import minute_bars, price_columns
from workloads.targets.base import (IMPORT_TABLE, Footprint, Layout, OpResult, ProgressCallback,
                                    Target, TargetError)
from workloads.targets.cache import drop_file_cache, system_wide_drop
from workloads.targets.columns import column_schema
from workloads.targets.client_pandas import ClientPandas
from workloads.targets.quotes import QuoteColumns, minute_quotes
from workloads.targets.sizes import rows_bytes
from workloads.targets.day_files import lay_out_days, root_folder
from workloads.targets.storage import atomic_path, free_mb
from workloads.targets.lazy import get_dataset as _get_dataset

LAYOUT_FORMAT = 1          # bump when the on-disk layout changes; older layouts are rebuilt
FORMATS = ("table", "fixed")
DEFAULT_COMPLIB = "blosc:lz4"
DEFAULT_COMPLEVEL = 5
DEFAULT_CHUNK_ROWS = 1_000_000
EXT = "h5"
NAN_REP = "nan"            # pandas' text for a missing string in table format
_TEMPORAL = frozenset({"DATE", "SECOND", "TIME", "TIMESTAMP"})
_TABLE_NAME = re.compile(r"[A-Za-z0-9_]{1,64}")


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


def records_frame(records: np.ndarray, schema: Schema, strings: StringMode) -> pd.DataFrame:
    """A table node's numpy records (one field per column) as a DataFrame of ``schema``'s dtypes.

    Fixed-width bytes become Arrow strings (UTF-8 checked; pandas' "nan" marker becomes missing,
    as ``HDFStore.select`` does), temporal int64 nanoseconds become ``datetime64[ns]``; the string
    mode is then applied by ``frame_from_arrow``, the rule of every Arrow-based target.
    """
    arrays = {}
    for column in schema.columns:
        values = records[column.name]
        if column.is_string:
            text = pa.array(values, type=pa.binary()).cast(pa.large_string())
            missing = pc.equal(text, NAN_REP)
            if pc.any(missing).as_py():
                text = pc.if_else(missing, pa.scalar(None, pa.large_string()), text)
            arrays[column.name] = text
        elif column.ddb_type in _TEMPORAL:
            arrays[column.name] = pa.array(values.view("M8[ns]"))
        else:
            arrays[column.name] = pa.array(values)
    return frame_from_arrow(pa.table(arrays), strings)


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


class HDF5Target(ClientPandas, Target):
    kind = "hdf5"
    read_phases = ("read", "decode", "query")

    # --- configuration -------------------------------------------------------------------
    @property
    def root(self) -> Path:
        return root_folder(self.config)

    @property
    def format(self) -> str:
        value = str(self.config.get("format") or "table").lower()
        if value not in FORMATS:
            raise TargetError(f"HDF5 format {value!r}: choose table or fixed")
        return value

    @property
    def complib(self) -> str | None:
        value = self.config.get("complib")
        value = DEFAULT_COMPLIB if value is None else str(value).lower()
        if value in ("", "none"):
            return None
        if value not in tables.filters.all_complibs:
            raise TargetError(f"HDF5 complib {value!r}: choose none or one of "
                              f"{', '.join(tables.filters.all_complibs)}")
        return value

    @property
    def complevel(self) -> int:
        if self.complib is None:
            return 0
        level = self.config.get("complevel")
        level = DEFAULT_COMPLEVEL if level in (None, "") else int(level)
        if not 0 <= level <= 9:
            raise TargetError(f"HDF5 complevel {level}: choose 0-9")
        return level

    @property
    def chunk_rows(self) -> int:
        return int(self.config.get("chunk_rows") or DEFAULT_CHUNK_ROWS)

    @property
    def codec(self) -> str:
        return f"{self.complib.replace(':', '-')}-{self.complevel}" if self.complib else "none"

    @property
    def day_reader(self) -> str:
        """The whole-day reader this layout uses (the faster one measured, see the module doc)."""
        if self.format == "fixed":
            return "pandas HDFStore.get"
        # h5py is optional (the double-click app leaves it out): PyTables reads every file too
        if self.complib == "zlib" and importlib.util.find_spec("h5py") is not None:
            return "h5py"
        return "PyTables Table.read"

    def layout_dir(self, dataset: str, scale: Scale) -> Path:
        return self.root / self.kind / dataset / scale.key() / self.format / self.codec

    def _dataset_info(self, layout: Layout) -> DatasetInfo:
        info = getattr(self, "_info", None)
        if info is None or info.name != layout.dataset:
            self._info = info = _get_dataset(layout.dataset).info
        return info

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
        with atomic_path(path) as tmp:
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
        # (key, time), ties in arrival order: a key's rows contiguous for ``where``
        frame = frame.sort_values([info.key_column, info.time_column], kind="stable", ignore_index=True)
        self._write(path, day_node(ds.trading_days(scale)[index]), frame, info.key_column)
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
            sides = [self.side_path(layout, n) for n in side_tables(_get_dataset(layout.dataset))]
            files = [p for p in self.day_files(layout) + sides if p.is_file()]
        return Footprint(bytes=sum(p.stat().st_size for p in files), replicas=1,
                         method="file sizes (HDF5 stores rows, not columns: no per-column size)")

    def describe(self) -> dict[str, Any]:
        return {"kind": self.kind, "root": str(self.root), "format": self.format,
                "complib": self.complib or "none", "complevel": self.complevel,
                "day_reader": self.day_reader,
                "slice_reader": "PyTables Table.read_where on the key's index" if self.format == "table"
                else "pandas HDFStore.get, then a pandas filter",
                "versions": hdf5_versions()}

    def data_files(self, layout: Layout) -> list[Path]:
        sides = [self.side_path(layout, n) for n in side_tables(_get_dataset(layout.dataset))]
        return self.day_files(layout) + sides

    def drop_cache(self, layout: Layout) -> list[str]:
        # Files are opened per operation: PyTables/HDF5 keep no chunk cache between reads.
        return drop_file_cache(self.data_files(layout), system_wide=system_wide_drop(self.config))

    # --- worker side ---------------------------------------------------------------------
    def open(self, layout: Layout, worker: int = 0) -> None:
        if not Path(layout.location).is_dir():
            raise TargetError(f"HDF5 layout folder {layout.location} is missing: prepare the target first")
        self._dataset_info(layout)

    def _read(self, layout: Layout, path: Path, node: str, schema: Schema,
              key: tuple[str, Any] | None = None, part: bool = False) -> tuple[pd.DataFrame, dict[str, float]]:
        """The node as a DataFrame in the layout's string mode (only ``key``'s rows in table
        format) and the phases of the read (module doc). ``part``: ``schema`` is only some of the
        node's columns, and only they are decoded (h5py: only they are read out of the records)."""
        if not path.is_file():
            raise TargetError(f"HDF5 file {path} is missing: prepare the target again")
        t0 = _now()
        if self.format == "fixed":
            with pd.HDFStore(path, mode="r") as store:
                frame = store.get(node)
            t1 = _now()
            frame = frame.reset_index(drop=True)
            if part:
                frame = frame[list(schema.names)]
            frame = apply_string_mode(frame, schema, layout.strings)
            return frame, {"read": t1 - t0, "decode": _now() - t1}
        if key is None and self.day_reader == "h5py":
            import h5py
            with h5py.File(path, "r") as f:
                table = f[node]["table"]
                records = table.fields(list(schema.names))[()] if part else table[()]
        else:
            with tables.open_file(str(path), mode="r") as f:
                table = f.get_node(f"/{node}/table")
                if key is None:
                    records = table.read()
                else:
                    value = key[1].encode("utf-8") if isinstance(key[1], str) else key[1]
                    records = table.read_where("column == value",
                                               condvars={"column": table.colinstances[key[0]], "value": value})
        t1 = _now()
        frame = records_frame(records, schema, layout.strings)
        return frame, {"read": t1 - t0, "decode": _now() - t1}

    def _read_day(self, layout: Layout, day: dt.date, schema: Schema | None = None
                  ) -> tuple[pd.DataFrame, dict[str, float], Path]:
        path = self.day_path(layout, day)
        full = self._dataset_info(layout).schema
        frame, phases = self._read(layout, path, day_node(day), schema or full,
                                   part=schema is not None and schema != full)
        return frame, phases, path

    def read_day(self, layout: Layout, day: dt.date, columns: tuple[str, ...] | None = None) -> OpResult:
        schema = column_schema(self._dataset_info(layout).schema, columns, layout.dataset)
        frame, phases, path = self._read_day(layout, day, schema if columns is not None else None)
        return OpResult(rows=len(frame), phases=phases, frame=frame, schema=schema, wire_path=path)

    def _read_key(self, layout: Layout, day: dt.date, key: str) -> tuple[pd.DataFrame, dict[str, float], Path | None]:
        """One key-day: PyTables' ``where`` (table), or the day filtered by pandas (fixed)."""
        info = self._dataset_info(layout)
        value = key_value(info.schema.column(info.key_column), key)
        path = self.day_path(layout, day)
        if self.format == "table":
            frame, phases = self._read(layout, path, day_node(day), info.schema, (info.key_column, value))
            return frame, phases, None
        frame, phases = self._read(layout, path, day_node(day), info.schema)
        t0 = _now()
        frame = frame[frame[info.key_column] == value].reset_index(drop=True)
        phases["query"] = _now() - t0
        return frame, phases, path

    def read_slice(self, layout: Layout, day: dt.date, key: str) -> OpResult:
        frame, phases, path = self._read_key(layout, day, key)
        return OpResult(rows=len(frame), phases=phases, frame=frame,
                        schema=self._dataset_info(layout).schema, wire_path=path)

    def minute_bars(self, layout: Layout, day: dt.date, key: str) -> OpResult:
        info = self._dataset_info(layout)
        bid, ask = price_columns(info)
        frame, phases, path = self._read_key(layout, day, key)
        t0 = _now()
        bars = minute_bars(frame, info.time_column, bid, ask)
        phases["query"] = phases.get("query", 0.0) + (_now() - t0)
        return OpResult(rows=len(bars), phases=phases, frame=bars, wire_path=path)

    # --- ClientPandas: whole days and side tables ---------------------------------------------
    def _day_frame(self, layout: Layout, day: dt.date) -> tuple[pd.DataFrame, dict[str, float], int | None]:
        frame, phases, path = self._read_day(layout, day)
        return frame, phases, path.stat().st_size

    def _side_frame(self, layout: Layout, name: str) -> pd.DataFrame:
        schema = getattr(_get_dataset(layout.dataset), f"{name}_schema")
        frame, _ = self._read(layout, self.side_path(layout, name), name, schema)
        return frame

    # --- appends: one part file per batch -----------------------------------------------------
    def append_dir(self, layout: Layout, table: str = "") -> Path:
        table = table or "scratch"
        if not _TABLE_NAME.fullmatch(table):
            raise ValueError(f"append table name {table!r}: use 1-64 letters, digits or underscores")
        return Path(layout.location) / "append" / table

    def minute_dir(self, layout: Layout) -> Path:
        """Where the map-reduce writes its minute quotes: one part file per day and operation."""
        return Path(layout.location) / "minute"

    def import_dir(self, layout: Layout) -> Path:
        return Path(layout.location) / IMPORT_TABLE

    @staticmethod
    def _part_name() -> str:
        return f"part-{os.getpid()}-{time.time_ns()}-{uuid.uuid4().hex[:6]}.{EXT}"

    def append(self, layout: Layout, frame: pd.DataFrame, table: str = "") -> OpResult:
        folder = self.append_dir(layout, table)
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / self._part_name()
        t0 = _now()
        self._write(path, "append", frame)
        io_s = _now() - t0
        return OpResult(rows=len(frame), nbytes=rows_bytes(len(frame), self._dataset_info(layout).schema),
                        phases={"io": io_s}, wire_path=path)

    def _parts_rows(self, folder: Path, node: str) -> int:
        rows = 0
        for path in sorted(folder.glob(f"part-*.{EXT}")):
            with pd.HDFStore(path, mode="r") as store:
                storer = store.get_storer(node)
                rows += storer.nrows if self.format == "table" else len(store.get(node))
        return rows

    def appended_rows(self, layout: Layout, table: str = "") -> int:
        """Rows appended so far to ``table`` (every part file), for checks and reports."""
        return self._parts_rows(self.append_dir(layout, table), "append")

    def minute_rows(self, layout: Layout) -> int:
        """Minute quotes written so far by the map-reduce, for checks and reports."""
        return self._parts_rows(self.minute_dir(layout), "minute")

    def clear_table(self, layout: Layout, table: str = "") -> None:
        if table == IMPORT_TABLE:
            files = self.import_dir(layout).glob(f"*.{EXT}")
        else:
            folder = self.minute_dir(layout) if table == "minute" else self.append_dir(layout, table)
            files = folder.glob(f"part-*.{EXT}")
        for path in files:
            path.unlink(missing_ok=True)

    # --- reports 001 and 004: import, export (the suites: client_pandas.py) ---------------------
    def import_csv(self, layout: Layout, path: Path, day: dt.date) -> OpResult:
        """PyTables has no CSV loader: pyarrow's CSV reader into the schema's columns (``read``),
        then ``HDFStore.put`` in the layout's format to ``import/<day>.h5`` (``io``); building the
        key's index (table format) is ``extra["queryable_s"]``."""
        info = self._dataset_info(layout)
        folder = self.import_dir(layout)
        folder.mkdir(parents=True, exist_ok=True)
        t0 = _now()
        frame = read_csv(path, layout.dataset)
        t1 = _now()
        index_s = self._write(folder / f"{day.isoformat()}.{EXT}", day_node(day), frame, info.key_column)
        t2 = _now()
        return OpResult(rows=len(frame), nbytes=rows_bytes(len(frame), info.schema), wire_path=path,
                        phases={"read": t1 - t0, "io": t2 - t1 - index_s}, extra={"queryable_s": index_s})

    def export_csv(self, layout: Layout, day: dt.date, path: Path) -> OpResult:
        """The day read as ``read_day`` reads it, then pyarrow's CSV writer (``io``)."""
        schema = self._dataset_info(layout).schema
        frame, phases, _ = self._read_day(layout, day)
        t0 = _now()
        write_csv(frame, path, schema, style=CSV_STYLE)
        phases["io"] = _now() - t0
        return OpResult(rows=len(frame), nbytes=rows_bytes(len(frame), schema), wire_path=path, phases=phases)

    # --- report 003 (b): minute quotes written beside the layout ---------------------------------
    def mapreduce_minute_bars(self, layout: Layout, days=()) -> OpResult:
        folder = self.minute_dir(layout)
        folder.mkdir(parents=True, exist_ok=True)
        written = {"io": 0.0}

        def save_minute_quotes(frame: pd.DataFrame, cols: QuoteColumns) -> int:
            bars = minute_quotes(frame, cols)
            t0 = _now()
            self._write(folder / self._part_name(), "minute", bars)
            written["io"] += _now() - t0     # writing is io, not pandas' work
            return len(bars)

        counts, nbytes, phases = self._each_day(layout, days, save_minute_quotes)
        phases["io"] = phases.get("io", 0.0) + written["io"]
        phases["query"] -= written["io"]
        frame = pd.DataFrame({"bars": [sum(counts)]})
        return OpResult(rows=len(frame), phases=phases, frame=frame, wire_bytes=nbytes,
                        extra={"bars": sum(counts)})
