"""Writing beside the day files: appends, CSV import and export, clearing, report 003's minute quotes.

For ``append`` the direction is reversed: ``decode`` is DataFrame -> the format's bytes, ``io``
writing them (no fsync: a user's ``to_parquet`` does not). "Append" for files means one new file
per batch in ``append/<table>/`` beside the day files (pickle: one pickle per batch;
Parquet/Feather: one part file per batch); the day files are never rewritten.
"""
from __future__ import annotations

import datetime as dt
import io
import os
import pickle
import re
import time
import uuid
from pathlib import Path

import pandas as pd
import pyarrow as pa

from workloads.datasets.csv_files import STYLE as CSV_STYLE
from workloads.datasets.csvread import read_csv
from workloads.datasets.csvwrite import write_csv
from workloads.targets.base import IMPORT_TABLE, Layout, OpResult
from workloads.targets.common.sizes import rows_bytes
from workloads.targets.common.storage import write_bytes_atomic
from workloads.targets.common.quotes import QuoteColumns, minute_quotes


_TABLE_NAME = re.compile(r"[A-Za-z0-9_]{1,64}")


def _now() -> float:
    return time.perf_counter()


class FileWrites:
    """The write operations, each a new file of its own (mixed into ``FileTarget``)."""

    def append(self, layout: Layout, frame: pd.DataFrame, table: str = "") -> OpResult:
        folder = self.append_dir(layout, table)
        folder.mkdir(parents=True, exist_ok=True)
        t0 = _now()
        payload = self._encode(frame, layout)
        t1 = _now()
        name = f"part-{os.getpid()}-{time.time_ns()}-{uuid.uuid4().hex[:6]}.{self.ext}"
        write_bytes_atomic(folder / name, payload, durable=False)
        t2 = _now()
        return OpResult(rows=len(frame), nbytes=rows_bytes(len(frame), self._dataset_info(layout).schema),
                        phases={"decode": t1 - t0, "io": t2 - t1}, wire_bytes=len(payload))

    def clear_table(self, layout: Layout, table: str = "") -> None:
        if table == IMPORT_TABLE:
            for path in self.import_dir(layout).glob(f"*.{self.ext}"):
                path.unlink(missing_ok=True)
            return
        folder = self.minute_dir(layout) if table == "minute" else self.append_dir(layout, table)
        for part in folder.glob(f"part-*.{self.ext}"):
            part.unlink(missing_ok=True)

    # --- reports 001 and 004: import, export (the suites: client_pandas.py) ---------------------
    def import_dir(self, layout: Layout) -> Path:
        return Path(layout.location) / IMPORT_TABLE

    def import_csv(self, layout: Layout, path: Path, day: dt.date) -> OpResult:
        """pyarrow's CSV reader into the schema's columns (``read``), then the format's writer
        (``io``) to ``import/<day>.<ext>`` beside the layout."""
        schema = self._dataset_info(layout).schema
        folder = self.import_dir(layout)
        folder.mkdir(parents=True, exist_ok=True)
        t0 = _now()
        frame = read_csv(path, layout.dataset)
        t1 = _now()
        write_bytes_atomic(folder / f"{day.isoformat()}.{self.ext}", self._encode_frame(frame, schema),
                           durable=False)
        t2 = _now()
        return OpResult(rows=len(frame), nbytes=rows_bytes(len(frame), schema), wire_path=path,
                        phases={"read": t1 - t0, "io": t2 - t1}, extra={"queryable_s": 0.0})

    def export_csv(self, layout: Layout, day: dt.date, path: Path) -> OpResult:
        """The day file read as a user reads it, then pyarrow's CSV writer (``io``)."""
        schema = self._dataset_info(layout).schema
        frame, phases = self._read(self.day_path(layout, day), layout, None)
        t0 = _now()
        write_csv(frame, path, schema, style=CSV_STYLE)
        phases["io"] = _now() - t0
        return OpResult(rows=len(frame), nbytes=rows_bytes(len(frame), schema), wire_path=path, phases=phases)

    def append_dir(self, layout: Layout, table: str = "") -> Path:
        table = table or "scratch"
        if not _TABLE_NAME.fullmatch(table):
            raise ValueError(f"append table name {table!r}: use 1-64 letters, digits or underscores")
        return Path(layout.location) / "append" / table

    def appended_rows(self, layout: Layout, table: str = "") -> int:
        """Rows appended so far to ``table`` (every part file), for checks and reports."""
        folder = self.append_dir(layout, table)
        return sum(self._count_rows(p) for p in sorted(folder.glob(f"part-*.{self.ext}")))

    # --- report 003's computations, with pandas on the client (client_pandas.py) -----------------
    # Whole day files are read: no column pruning, as report 000's pickles allowed none.
    def minute_dir(self, layout: Layout) -> Path:
        """Where the map-reduce writes its minute quotes: one part file per day and operation."""
        return Path(layout.location) / "minute"

    def mapreduce_minute_bars(self, layout: Layout, days=()) -> OpResult:
        folder = self.minute_dir(layout)
        folder.mkdir(parents=True, exist_ok=True)
        written = {"io": 0.0, "query": 0.0}

        def save_minute_quotes(frame: pd.DataFrame, cols: QuoteColumns) -> int:
            bars = minute_quotes(frame, cols)
            payload = self._encode_result(bars)
            t0 = _now()
            name = f"part-{os.getpid()}-{time.time_ns()}-{uuid.uuid4().hex[:6]}.{self.ext}"
            write_bytes_atomic(folder / name, payload, durable=False)
            written["io"] += _now() - t0     # writing is io, not pandas' work
            return len(bars)

        counts, nbytes, phases = self._each_day(layout, days, save_minute_quotes)
        phases["io"] = phases.get("io", 0.0) + written["io"]
        phases["query"] -= written["io"]
        frame = pd.DataFrame({"bars": [sum(counts)]})
        return OpResult(rows=len(frame), phases=phases, frame=frame, wire_bytes=nbytes,
                        extra={"bars": sum(counts)})

    def _encode_result(self, frame: pd.DataFrame) -> bytes:
        """A computed frame in this target's format (pickle, or Arrow through the codec's writer)."""
        writer = getattr(self, "_writer", None)
        if writer is None:
            return pickle.dumps(frame, protocol=pickle.HIGHEST_PROTOCOL)
        table = pa.Table.from_pandas(frame, preserve_index=False)
        sink = io.BytesIO()
        with writer(sink, table.schema) as out:
            out.write_table(table)
        return sink.getvalue()

    def minute_rows(self, layout: Layout) -> int:
        """Minute quotes written so far by the map-reduce, for checks and reports."""
        return sum(self._count_rows(p) for p in sorted(self.minute_dir(layout).glob(f"part-*.{self.ext}")))
