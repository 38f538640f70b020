"""Writing beside the day files: appends (a part file per batch), CSV import and export, clearing,
report 003's minute quotes.

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
import os
import re
import time
import uuid
from pathlib import Path

import pandas as pd

from workloads.datasets.csv_files import STYLE as CSV_STYLE
from workloads.datasets.csvread import read_csv
from workloads.datasets.csvwrite import write_csv
from workloads.targets.base import IMPORT_TABLE, Layout, OpResult
from workloads.targets.common.quotes import QuoteColumns, minute_quotes
from workloads.targets.common.sizes import rows_bytes
from workloads.targets.hdf5.layout import EXT, day_node


_TABLE_NAME = re.compile(r"[A-Za-z0-9_]{1,64}")


def _now() -> float:
    return time.perf_counter()


class HDF5Writes:
    """The write operations, each a new file of its own (mixed into ``HDF5Target``)."""

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
        index_s = self._write(folder / f"{day.isoformat()}.{EXT}", day_node(day), frame, info.key_column or None)
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
