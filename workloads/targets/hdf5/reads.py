"""Reading HDF5 day files: a day (or some of its columns), a key's slice, minute bars, and the
whole days and side tables the pandas suites compute on; records decoded into DataFrames.

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
"""
from __future__ import annotations

import datetime as dt
import importlib.util
import time
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import tables

from workloads.datasets.schema import NUMPY_DTYPES, Schema, StringMode, apply_string_mode
from workloads.targets.common.arrow_frames import frame_from_arrow, key_value
from workloads.targets.common.bars import minute_bars, price_columns
from workloads.targets.base import Layout, OpResult, TargetError
from workloads.targets.common.columns import column_schema
from workloads.targets.common.lazy import get_dataset as _get_dataset
from workloads.targets.common.row_order import key_column
from workloads.targets.hdf5.layout import day_node


NAN_REP = "nan"            # pandas' text for a missing string in table format
# stored as int64 nanoseconds (an imported NANOTIMESTAMP too: kept to the ns)
_TEMPORAL = frozenset(t for t, dtype in NUMPY_DTYPES.items() if dtype.startswith("datetime64"))


def _now() -> float:
    return time.perf_counter()


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


class HDF5Reads:
    """The read operations and the readers they use (mixed into ``HDF5Target``)."""

    @property
    def day_reader(self) -> str:
        """The whole-day reader this layout uses (the faster one measured, see the module doc)."""
        if self.format == "fixed":
            return "pandas HDFStore.get"
        # h5py is optional (the double-click app leaves it out): PyTables reads every file too
        if self.complib == "zlib" and importlib.util.find_spec("h5py") is not None:
            return "h5py"
        return "PyTables Table.read"

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
        key_name = key_column(info, "a slice")
        value = key_value(info.schema.column(key_name), key)
        path = self.day_path(layout, day)
        if self.format == "table":
            frame, phases = self._read(layout, path, day_node(day), info.schema, (key_name, value))
            return frame, phases, None
        frame, phases = self._read(layout, path, day_node(day), info.schema)
        t0 = _now()
        frame = frame[frame[key_name] == value].reset_index(drop=True)
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
        bars = minute_bars(frame, info.time_column, bid, ask, info.size_column)
        phases["query"] = phases.get("query", 0.0) + (_now() - t0)
        return OpResult(rows=len(bars), phases=phases, frame=bars, wire_path=path)

    # --- ClientPandas: whole days and side tables ---------------------------------------------
    def _day_frame(self, layout: Layout, day: dt.date) -> tuple[pd.DataFrame, dict[str, float], int | None]:
        frame, phases, path = self._read_day(layout, day)
        return frame, phases, path.stat().st_size

    def _side_frame(self, layout: Layout, name: str, day: dt.date | None = None) -> pd.DataFrame:
        """The side table's node, read whole; with ``day``, its rows of that day kept in pandas."""
        dataset = _get_dataset(layout.dataset)
        frame, _ = self._read(layout, self.side_path(layout, name), name, getattr(dataset, f"{name}_schema"))
        if day is not None:
            date = dataset.info.date_column
            frame = frame[frame[date] == pd.Timestamp(day)].reset_index(drop=True)
        return frame
