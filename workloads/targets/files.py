"""File targets: one file per trading day, as pickle (report 000), Parquet or Feather.

Layout: ``<root>/<kind>/<dataset>/<scale.key()>/<strings>/<YYYY-MM-DD>.<ext>`` plus
``manifest.json`` (rows and bytes per day, keys sample, schema, library versions). Each day
file is written to a hidden temp file, fsynced and renamed, so a crash never leaves a half
file under a cached name; the manifest is rewritten after every day, so an interrupted
``prepare`` resumes at the first missing day.

What is stored per string mode: a pickle holds the DataFrame in the layout's string mode (the
report's pickles held object strings: one Python str per row, as here). Parquet and Feather hold plain Arrow strings and apply
the mode while decoding (Feather's file format cannot change dictionaries between chunks).

Phases of an operation (seconds; meanings in ``workloads.targets.base``). The timed call is the
user's own: ``pickle.load(f)`` of the open file; ``pq.read_table(path, ...)`` then ``to_pandas``;
``pa.ipc.open_file(path).read_all()`` (Feather v2 is the Arrow IPC file format;
``feather.read_table`` is deprecated since pyarrow 24) then ``to_pandas``:
- Parquet/Feather: ``read`` = the reader into Arrow (disk, decompression, decoding; a slice's key
  filter inside Arrow for Parquet), ``decode`` = Arrow -> DataFrame in the layout's string mode,
  ``query`` = Feather's key filter in Arrow, or pandas' work (minute bars, report 003).
- pickle: one call, no parts. Its split comes from probe operations that read through a wrapper
  adding up the time of the unpickler's file reads (``io``; the rest of ``pickle.load`` is
  ``decode``); ``query`` is pandas' own work after it (a slice's filter, minute bars).
For ``append`` the direction is reversed: ``decode`` is DataFrame -> the format's bytes, ``io``
writing them (no fsync: a user's ``to_parquet`` does not). "Append" for files means one new file
per batch in ``append/<table>/`` beside the day files (pickle: one pickle per batch;
Parquet/Feather: one part file per batch); the day files are never rewritten.
Wire bytes of a read: the file's size (every byte of a day file is read: rows are in time order,
so a slice's Parquet filter skips no row group).

Reading some columns of a day (``read_day(..., columns)``, report 000's "without the two string
columns"): Parquet and Feather pass ``columns=`` to their reader, which reads only those columns.
Their wire bytes: Parquet, the columns' chunks plus the footer, from the footer's own sizes;
Feather, the bytes its reader takes (the columns' buffers and the footer), counted once per file
and column set by a second read through a counting file after the timed span (the IPC footer's
buffer sizes are not exposed). A pickle cannot be read in part: as in the report,
``prepare_columns`` writes once, before the workers start, a second pickle per day holding only
those columns (``<layout>/columns/<hash of the names>/<YYYY-MM-DD>.pkl``, rebuilt when older than
its day file), and the timed call is ``pickle.load`` of that file, whose size is the wire bytes.
"""
from __future__ import annotations

from abc import abstractmethod

import datetime as dt
import hashlib
import io
import json
import os
import pickle
import re
import time
import uuid
from dataclasses import asdict
from pathlib import Path
from typing import Any, BinaryIO

import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from workloads.datasets.schema import DatasetInfo, Scale, StringMode, apply_string_mode
from workloads.targets.arrow_frames import (arrow_schema, arrow_table, frame_from_arrow, key_value,
                                            library_versions)
from workloads.targets.bars import minute_bars, price_columns
from workloads.datasets.base import side_tables
from workloads.datasets.csv_files import STYLE as CSV_STYLE
from workloads.datasets.csvread import read_csv
from workloads.datasets.csvwrite import write_csv
from workloads.targets.base import (IMPORT_TABLE, Footprint, Layout, OpResult, ProgressCallback,
                                    Target, TargetError)
from workloads.targets.cache import drop_file_cache, system_wide_drop
from workloads.targets.client_pandas import ClientPandas
from workloads.targets.columns import column_schema
from workloads.targets.sizes import rows_bytes
from workloads.targets.day_files import lay_out_days, root_folder
from workloads.targets.storage import atomic_file, write_bytes_atomic
from workloads.targets.quotes import QuoteColumns, minute_quotes
from workloads.targets.lazy import get_dataset as _get_dataset

LAYOUT_FORMAT = 1          # bump when the on-disk layout changes; older layouts are rebuilt
DEFAULT_CHUNK_ROWS = 1_000_000
_TABLE_NAME = re.compile(r"[A-Za-z0-9_]{1,64}")


def _now() -> float:
    return time.perf_counter()



class TimedReader:
    """A read-only file wrapper that adds up the seconds spent in its reads."""

    __slots__ = ("_file", "seconds")

    def __init__(self, file: BinaryIO):
        self._file = file
        self.seconds = 0.0

    def read(self, size: int = -1) -> bytes:
        start = _now()
        data = self._file.read(size)
        self.seconds += _now() - start
        return data

    def readinto(self, buffer) -> int:
        start = _now()
        count = self._file.readinto(buffer)
        self.seconds += _now() - start
        return count

    def readline(self, size: int = -1) -> bytes:
        start = _now()
        line = self._file.readline(size)
        self.seconds += _now() - start
        return line


class _CountingReader(io.RawIOBase):
    """A read-only file that counts the bytes read through it."""

    def __init__(self, file: BinaryIO):
        super().__init__()
        self._file = file
        self.count = 0

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        return self._file.seek(offset, whence)

    def tell(self) -> int:
        return self._file.tell()

    def readinto(self, buffer) -> int:
        count = self._file.readinto(buffer)
        self.count += count or 0
        return count

    def read(self, size: int = -1) -> bytes:
        data = self._file.read(size)
        self.count += len(data)
        return data


# --- the targets ----------------------------------------------------------------------------
class FileTarget(ClientPandas, Target):
    """One file per day under ``config["root"]``; subclasses say how a file is encoded."""

    ext = ""
    read_phases = ("io", "decode", "query")
    filters_in_arrow = True   # False: the whole day becomes a DataFrame, pandas filters it

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

    @abstractmethod
    def _write_day(self, ds, index: int, scale: Scale, strings: StringMode, path: Path,
                   on_chunk) -> int:
        """Supplied by each concrete format."""

    def footprint(self, layout: Layout) -> int:
        return sum(p.stat().st_size for p in self.day_files(layout) if p.is_file())

    def _table_files(self, layout: Layout, table: str) -> list[Path]:
        if table == IMPORT_TABLE:
            return sorted(self.import_dir(layout).glob(f"*.{self.ext}"))
        sides = [self.side_path(layout, n) for n in side_tables(_get_dataset(layout.dataset))]
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
        return {"kind": self.kind, "root": str(self.root), "format": self.ext,
                "versions": library_versions(), **self._codec()}

    def _codec(self) -> dict[str, Any]:
        return {}

    def data_files(self, layout: Layout) -> list[Path]:
        return self.day_files(layout)

    def drop_cache(self, layout: Layout) -> list[str]:
        return drop_file_cache(self.data_files(layout), system_wide=system_wide_drop(self.config))

    # --- worker side ---------------------------------------------------------------------
    def open(self, layout: Layout, worker: int = 0) -> None:
        if not Path(layout.location).is_dir():
            raise TargetError(f"layout folder {layout.location} is missing: prepare the target first")
        self._info: DatasetInfo = _get_dataset(layout.dataset).info

    def _dataset_info(self, layout: Layout) -> DatasetInfo:
        info = getattr(self, "_info", None)
        if info is None or info.name != layout.dataset:
            self._info = info = _get_dataset(layout.dataset).info
        return info

    def read_day(self, layout: Layout, day: dt.date, columns: tuple[str, ...] | None = None) -> OpResult:
        path = self.day_path(layout, day)
        if columns is None:
            frame, phases = self._read(path, layout, None)
            return self._result(frame, phases, layout, path)
        schema = column_schema(self._dataset_info(layout).schema, columns, layout.dataset)
        frame, phases = self._read(path, layout, None, tuple(schema.names))
        return OpResult(rows=len(frame), phases=phases, frame=frame, schema=schema,
                        **self._columns_wire(path, tuple(schema.names)))

    def _columns_wire(self, path: Path, columns: tuple[str, ...]) -> dict[str, Any]:
        """How the wire bytes of a read of ``columns`` of ``path`` are known (OpResult's keywords)."""
        return {"wire_path": path}

    def _result(self, frame: pd.DataFrame, phases: dict[str, float], layout: Layout, path: Path) -> OpResult:
        return OpResult(rows=len(frame), phases=phases, frame=frame,
                        schema=self._dataset_info(layout).schema, wire_path=path)

    @abstractmethod
    def _read(self, path: Path, layout: Layout, key: tuple[str, Any] | None,
              columns: tuple[str, ...] | None = None) -> tuple[pd.DataFrame, dict[str, float]]:
        """The file as a DataFrame (filtered to ``key`` where the format's reader can; only
        ``columns`` where it reads columns) and the phases of that call: each format's user call,
        described in the module doc."""

    def _read_key(self, layout: Layout, day: dt.date, key: str) -> tuple[pd.DataFrame, dict[str, float], Path]:
        """One key-day as a DataFrame, with the phases (pandas' filter as query)."""
        info = self._dataset_info(layout)
        value = key_value(info.schema.column(info.key_column), key)
        path = self.day_path(layout, day)
        frame, phases = self._read(path, layout, (info.key_column, value))
        if not self.filters_in_arrow:
            t0 = _now()
            frame = frame[frame[info.key_column] == value].reset_index(drop=True)
            phases["query"] = phases.get("query", 0.0) + (_now() - t0)
        return frame, phases, path

    def read_slice(self, layout: Layout, day: dt.date, key: str) -> OpResult:
        frame, phases, path = self._read_key(layout, day, key)
        return self._result(frame, phases, layout, path)

    def minute_bars(self, layout: Layout, day: dt.date, key: str) -> OpResult:
        info = self._dataset_info(layout)
        bid, ask = price_columns(info)
        frame, phases, path = self._read_key(layout, day, key)
        t0 = _now()
        bars = minute_bars(frame, info.time_column, bid, ask)
        phases["query"] = phases.get("query", 0.0) + (_now() - t0)
        return OpResult(rows=len(bars), phases=phases, frame=bars, wire_path=path)

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

    def _day_frame(self, layout: Layout, day: dt.date) -> tuple[pd.DataFrame, dict[str, float], int | None]:
        path = self.day_path(layout, day)
        frame, phases = self._read(path, layout, None)
        return frame, phases, path.stat().st_size

    def _side_frame(self, layout: Layout, name: str) -> pd.DataFrame:
        frame, _ = self._read(self.side_path(layout, name), layout, None)
        return frame

    def append_dir(self, layout: Layout, table: str = "") -> Path:
        table = table or "scratch"
        if not _TABLE_NAME.fullmatch(table):
            raise ValueError(f"append table name {table!r}: use 1-64 letters, digits or underscores")
        return Path(layout.location) / "append" / table

    def appended_rows(self, layout: Layout, table: str = "") -> int:
        """Rows appended so far to ``table`` (every part file), for checks and reports."""
        folder = self.append_dir(layout, table)
        return sum(self._count_rows(p) for p in sorted(folder.glob(f"part-*.{self.ext}")))

    # --- codec hooks ---------------------------------------------------------------------
    @abstractmethod
    def _encode(self, frame: pd.DataFrame, layout: Layout) -> bytes:
        """Supplied by each concrete format."""

    def _encode_frame(self, frame: pd.DataFrame, schema) -> bytes:
        """Any table of ``schema`` in this format (side tables, imported days)."""
        return pickle.dumps(frame, protocol=pickle.HIGHEST_PROTOCOL)

    @abstractmethod
    def _count_rows(self, path: Path) -> int:
        """Supplied by each concrete format."""

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


class PickleTarget(FileTarget):
    """Report 000's layout: ``pickle.dump`` of each day's whole DataFrame."""

    kind = "pickle"
    ext = "pkl"
    filters_in_arrow = False

    def _write_day(self, ds, index, scale, strings, path, on_chunk) -> int:
        chunks, rows = [], 0
        for chunk in ds.generate_day(index, scale, strings, self.chunk_rows):
            chunks.append(chunk)
            rows += len(chunk)
            on_chunk(rows)
        frame = chunks[0] if len(chunks) == 1 else pd.concat(chunks, ignore_index=True)
        del chunks
        # The file must hold exactly the representation the layout is named after. Going through
        # Arrow strings first also gives object columns one Python str per row, as a frame read
        # from CSV holds them (report 000). A generator's shared str objects would be memoized by
        # pickle and load ~8x faster than such files (2M TAQ rows: 0.09 s vs 0.77 s).
        frame = apply_string_mode(frame, ds.info.schema, StringMode.ARROW)
        frame = apply_string_mode(frame, ds.info.schema, strings)
        with atomic_file(path) as f:
            pickle.dump(frame, f, protocol=pickle.HIGHEST_PROTOCOL)
        return len(frame)

    probed_ops = frozenset({"read_day", "read_slice", "minute_bars", "spread_by_minute", "ols_spread",
                            "mapreduce_minute_bars"})

    def read_day(self, layout: Layout, day: dt.date, columns: tuple[str, ...] | None = None) -> OpResult:
        """``pickle.load`` of the day file, or with ``columns`` of the file ``prepare_columns``
        wrote holding only them (a pickle cannot be read in part)."""
        if columns is None:
            return super().read_day(layout, day)
        path, schema = self._columns_file(layout, day, columns)
        try:
            frame, phases = self._read(path, layout, None)
        except FileNotFoundError:
            raise TargetError(f"no pickle of {day} holding only {', '.join(schema.names)}: call "
                              "prepare_columns first (the read-day workload does, before its workers "
                              "start)") from None
        return OpResult(rows=len(frame), phases=phases, frame=frame, schema=schema, wire_path=path)

    def columns_dir(self, layout: Layout, columns: tuple[str, ...]) -> Path:
        """Where the day files holding only ``columns`` (in the schema's order) live."""
        tag = hashlib.sha1(",".join(columns).encode()).hexdigest()[:12]
        return Path(layout.location) / "columns" / tag

    def _columns_file(self, layout: Layout, day: dt.date, columns: tuple[str, ...]):
        """(path, schema) of the day's file of ``columns``, worked out once per worker."""
        cache = getattr(self, "_columns_files", None)
        if cache is None:
            cache = self._columns_files = {}
        found = cache.get((layout.location, day, columns))
        if found is None:
            self.day_path(layout, day)                  # a day of the layout, else ValueError
            schema = column_schema(self._dataset_info(layout).schema, columns, layout.dataset)
            path = self.columns_dir(layout, tuple(schema.names)) / f"{day.isoformat()}.{self.ext}"
            found = cache[(layout.location, day, columns)] = (path, schema)
        return found

    def prepare_columns(self, layout: Layout, columns: tuple[str, ...] | None) -> None:
        """Report 000's second set of pickles: each day file loaded, cut to ``columns`` and
        dumped again, once (reused while newer than its day file); untimed."""
        if columns is None:
            return
        schema = column_schema(self._dataset_info(layout).schema, columns, layout.dataset)
        names = list(schema.names)
        folder = self.columns_dir(layout, tuple(names))
        folder.mkdir(parents=True, exist_ok=True)
        write_bytes_atomic(folder / "columns.json", json.dumps({"columns": names}).encode(), durable=False)
        for day in layout.days:
            source = self.day_path(layout, day)
            path = folder / f"{day.isoformat()}.{self.ext}"
            if path.is_file() and path.stat().st_mtime_ns >= source.stat().st_mtime_ns:
                continue
            with open(source, "rb") as f:
                frame = pickle.load(f)
            part = frame[names]
            del frame
            with atomic_file(path) as f:
                pickle.dump(part, f, protocol=pickle.HIGHEST_PROTOCOL)

    def data_files(self, layout: Layout) -> list[Path]:
        # the files of a column subset are read too (they are the day files of such a read)
        return self.day_files(layout) + sorted((Path(layout.location) / "columns").glob(f"*/*.{self.ext}"))

    def _read(self, path, layout, key, columns=None):
        """``pickle.load`` of the open file, as report 000 timed it, and nothing else.

        In probe mode the unpickler reads through ``TimedReader``, which adds up the time spent
        inside its read calls: that is ``io``; the rest of ``pickle.load`` is ``decode``. The
        wrapper is the one thing a user's call would not do, so only probes use it. ``columns``
        must be None: a pickle is read whole (``read_day`` reads a file of only those columns).
        """
        if columns is not None:
            raise ValueError("a pickle is read whole: read_day(columns=...) reads the file prepare_columns wrote")
        if not self.probing:
            with open(path, "rb") as f:
                return pickle.load(f), {}
        t0 = _now()
        with open(path, "rb") as f:
            reader = TimedReader(f)
            frame = pickle.load(reader)
        total = _now() - t0
        return frame, {"io": reader.seconds, "decode": max(total - reader.seconds, 0.0)}

    def _encode(self, frame, layout) -> bytes:
        return pickle.dumps(frame, protocol=pickle.HIGHEST_PROTOCOL)

    def _count_rows(self, path) -> int:
        with open(path, "rb") as f:
            return len(pickle.load(f))

    def _codec(self) -> dict[str, Any]:
        return {"protocol": pickle.HIGHEST_PROTOCOL}


class _ArrowFileTarget(FileTarget):
    """Shared by Parquet and Feather: chunked writers, strings applied at decode."""

    default_compression = ""

    @property
    def compression(self) -> str:
        return str(self.config.get("compression") or self.default_compression)

    def _codec(self) -> dict[str, Any]:
        return {"compression": self.compression}

    def _write_day(self, ds, index, scale, strings, path, on_chunk) -> int:
        schema = arrow_schema(ds.info.schema)
        rows = 0
        with atomic_file(path) as f:
            with self._writer(f, schema) as writer:  # one chunk at a time: days larger than RAM
                for chunk in ds.generate_day(index, scale, StringMode.ARROW, self.chunk_rows):
                    writer.write_table(arrow_table(chunk, schema))
                    rows += len(chunk)
                    on_chunk(rows)
        return rows

    @abstractmethod
    def _writer(self, sink, schema: pa.Schema):
        """Supplied by each concrete format."""

    def _encode(self, frame, layout) -> bytes:
        return self._encode_frame(frame, self._dataset_info(layout).schema)

    def _encode_frame(self, frame, schema) -> bytes:
        arrow = arrow_schema(schema)
        sink = io.BytesIO()
        with self._writer(sink, arrow) as writer:
            writer.write_table(arrow_table(frame, arrow))
        return sink.getvalue()


class ParquetTarget(_ArrowFileTarget):
    kind = "parquet"
    ext = "parquet"
    default_compression = "snappy"  # pyarrow's default

    def _writer(self, sink, schema):
        return pq.ParquetWriter(sink, schema, compression=self.compression)

    def _read(self, path, layout, key, columns=None):
        """``pq.read_table(path, ...)`` (read; ``columns=`` reads only theirs), then ``to_pandas``
        in the string mode (decode)."""
        info = self._dataset_info(layout)
        # Category mode: read Parquet's dictionary pages as Arrow dictionaries (no re-hashing).
        dictionary = ([c.name for c in info.schema.columns if c.is_string and (columns is None or c.name in columns)]
                      if layout.strings is StringMode.CATEGORY else None)
        filters = [(key[0], "==", key[1])] if key is not None else None
        t0 = _now()
        table = pq.read_table(path, columns=list(columns) if columns is not None else None, filters=filters,
                              read_dictionary=dictionary)
        t1 = _now()
        frame = frame_from_arrow(table, layout.strings)
        return frame, {"read": t1 - t0, "decode": _now() - t1}

    def _count_rows(self, path) -> int:
        return pq.ParquetFile(path).metadata.num_rows

    def _columns_wire(self, path: Path, columns: tuple[str, ...]) -> dict[str, Any]:
        return {"count_wire": lambda: parquet_columns_bytes(path, columns)}

    def _column_bytes(self, files: list[Path]) -> dict[str, int]:
        columns: dict[str, int] = {}
        for path in files:
            meta = pq.ParquetFile(path).metadata
            for group in range(meta.num_row_groups):
                row_group = meta.row_group(group)
                for index in range(row_group.num_columns):
                    chunk = row_group.column(index)
                    columns[chunk.path_in_schema] = columns.get(chunk.path_in_schema, 0) + chunk.total_compressed_size
        return columns


class FeatherTarget(_ArrowFileTarget):
    """Feather v2 (the Arrow IPC file format), lz4 as ``pyarrow.feather.write_feather`` wrote it."""

    kind = "feather"
    ext = "feather"
    default_compression = "lz4"

    def _writer(self, sink, schema):
        codec = None if self.compression in ("", "uncompressed", "none") else self.compression
        return pa.ipc.new_file(sink, schema, options=pa.ipc.IpcWriteOptions(compression=codec))

    def _read(self, path, layout, key, columns=None):
        """``pa.ipc.open_file(path).read_all()`` (read; ``columns=`` reads only theirs), the key
        filter in Arrow (query), then ``to_pandas`` in the string mode (decode)."""
        fields = None if columns is None else ipc_fields(self._dataset_info(layout).schema.names, columns)
        t0 = _now()
        table = read_ipc_file(path, fields)
        if columns is not None:
            table = table.select(list(columns))
        t1 = _now()
        phases = {"read": t1 - t0}
        if key is not None:
            table = table.filter(pc.equal(table[key[0]], pa.scalar(key[1])))
            phases["query"] = _now() - t1
        t2 = _now()
        frame = frame_from_arrow(table, layout.strings)
        phases["decode"] = _now() - t2
        return frame, phases

    def _columns_wire(self, path: Path, columns: tuple[str, ...]) -> dict[str, Any]:
        return {"count_wire": lambda: self._feather_bytes(path, columns)}

    def _feather_bytes(self, path: Path, columns: tuple[str, ...]) -> int:
        """What the IPC reader reads of ``path`` for ``columns`` (their buffers and the footer),
        counted once per file and column set by reading them again through a counting file, after
        the timed span (the reader does not tell, and the sizes of the buffers are not exposed)."""
        cache = getattr(self, "_feather_wire", None)
        if cache is None:
            cache = self._feather_wire = {}
        key = (str(path), path.stat().st_mtime_ns, columns)
        if key not in cache:
            # the positions the timed read asks for (it knows them from the dataset's schema)
            fields = ipc_fields(pa.ipc.open_file(path).schema.names, columns)
            with open(path, "rb") as f:
                counting = _CountingReader(f)
                read_ipc_file(pa.PythonFile(counting, mode="r"), fields)
            cache[key] = counting.count
        return cache[key]

    def _count_rows(self, path) -> int:
        with pa.memory_map(str(path)) as source:
            reader = pa.ipc.open_file(source)
            return sum(reader.get_batch(i).num_rows for i in range(reader.num_record_batches))


def read_ipc_file(source, fields: list[int] | None = None) -> pa.Table:
    """An Arrow IPC (Feather v2) file into Arrow as pyarrow documents it since ``feather.read_table``
    was deprecated: ``pa.ipc.open_file(source).read_all()``; with ``fields`` (column positions in
    the file), opened with ``IpcReadOptions(included_fields=fields)`` so only those are read."""
    options = pa.ipc.IpcReadOptions(included_fields=fields) if fields is not None else None
    return pa.ipc.open_file(source, options=options).read_all()


def ipc_fields(names: list[str], columns: tuple[str, ...]) -> list[int]:
    """Positions of ``columns`` among a file's column ``names``, in the file's order."""
    return sorted(names.index(name) for name in columns)


def parquet_columns_bytes(path: Path, columns: tuple[str, ...]) -> int:
    """Bytes a read of ``columns`` takes from a Parquet file: their column chunks (as stored,
    compressed), the footer and its length and magic (4 + 4 bytes), from the footer's own sizes."""
    meta = pq.ParquetFile(path).metadata
    wanted = set(columns)
    chunks = 0
    for group in range(meta.num_row_groups):
        row_group = meta.row_group(group)
        for index in range(row_group.num_columns):
            chunk = row_group.column(index)
            if chunk.path_in_schema in wanted:
                chunks += chunk.total_compressed_size
    return chunks + meta.serialized_size + 8
