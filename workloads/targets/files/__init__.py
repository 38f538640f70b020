"""File targets: one file per trading day, as pickle (report 000), Parquet or Feather.

The format targets are here (``PickleTarget``, ``ParquetTarget``, ``FeatherTarget``: how a file is
written and read) on ``FileTarget``, whose parts live beside it, by job:
- ``layout.py``: the folders and ``prepare`` (day files, manifest, side tables), footprint;
- ``reads.py``: a day, a key's slice, minute bars, whole days for the pandas suites (wire bytes);
- ``writes.py``: appends, CSV import and export, clearing, report 003's minute quotes;
- ``read_meters.py``: file wrappers timing the unpickler's reads, counting Feather's bytes;
- ``arrow_files.py``: Feather files read by field, Parquet bytes of some columns.

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

import datetime as dt
import hashlib
import io
import json
import pickle
import time
from abc import abstractmethod
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from workloads.datasets.schema import Scale, StringMode, apply_string_mode
from workloads.targets.base import Layout, OpResult, Target, TargetError
from workloads.targets.common.arrow_frames import arrow_schema, arrow_table, frame_from_arrow
from workloads.targets.common.client_pandas import ClientPandas
from workloads.targets.common.columns import column_schema
from workloads.targets.common.storage import atomic_file, write_bytes_atomic
from workloads.targets.files.arrow_files import ipc_fields, parquet_columns_bytes, read_ipc_file
from workloads.targets.files.layout import FileLayout
from workloads.targets.files.read_meters import TimedReader, _CountingReader
from workloads.targets.files.reads import FileReads
from workloads.targets.files.writes import FileWrites


def _now() -> float:
    return time.perf_counter()


# --- the targets ----------------------------------------------------------------------------
class FileTarget(FileReads, FileWrites, FileLayout, ClientPandas, Target):
    """One file per day under ``config["root"]``; subclasses say how a file is encoded."""

    ext = ""
    read_phases = ("io", "decode", "query")
    filters_in_arrow = True   # False: the whole day becomes a DataFrame, pandas filters it

    # --- codec hooks ---------------------------------------------------------------------
    @abstractmethod
    def _write_day(self, ds, index: int, scale: Scale, strings: StringMode, path: Path,
                   on_chunk) -> int:
        """Supplied by each concrete format."""

    @abstractmethod
    def _read(self, path: Path, layout: Layout, key: tuple[str, Any] | None,
              columns: tuple[str, ...] | None = None) -> tuple[pd.DataFrame, dict[str, float]]:
        """The file as a DataFrame (filtered to ``key`` where the format's reader can; only
        ``columns`` where it reads columns) and the phases of that call: each format's user call,
        described in the module doc."""

    @abstractmethod
    def _encode(self, frame: pd.DataFrame, layout: Layout) -> bytes:
        """Supplied by each concrete format."""

    def _encode_frame(self, frame: pd.DataFrame, schema) -> bytes:
        """Any table of ``schema`` in this format (side tables, imported days)."""
        return pickle.dumps(frame, protocol=pickle.HIGHEST_PROTOCOL)

    @abstractmethod
    def _count_rows(self, path: Path) -> int:
        """Supplied by each concrete format."""


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


