"""Importing a user's CSV file as a dataset (``import_csv``): read against a built-in dataset's
schema and stored as ``workloads.datasets.imported`` reads it back; and matching a CSV's header to
that schema, for forms that let a user map columns.

How the import stays safe and small in memory:
- The CSV is read in chunks (``iter_csv``); each chunk's rows go to a per-day part file. A day
  whose rows arrived in time order (the usual CSV) is streamed into its final file as is;
  otherwise that one day is loaded and sorted. The whole CSV is never in memory.
- Everything is built in a hidden temp folder beside the imports and renamed into place at the
  end, so a malformed CSV, a full disk or a cancel leaves nothing half-made, and an earlier import
  of the same name stays as it was until the new one is complete.
"""
from __future__ import annotations

import csv
import datetime as dt
import hashlib
import json
import os
import shutil
import threading
import time
import uuid
from collections import Counter
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from workloads.datasets.builtin import DATASETS, IMPORT_PREFIX as PREFIX
from workloads.datasets.csv_parse import CsvFormatError, iter_schema_csv
from workloads.datasets.imported import FORMAT, MANIFEST, ImportedDataset, check_name, imports_dir, load_import
from workloads.datasets.schema import DatasetInfo, Schema, StringMode
from workloads.processes import pid_alive
from workloads.text import plural

READ_CHUNK_ROWS = 1_000_000      # CSV rows converted at a time while importing
ROW_GROUP_ROWS = 262_144         # Parquet row groups of sorted days: small enough to stream
MAX_OPEN_DAYS = 32               # open per-day part writers (a file descriptor each)
_READ_SHARE = 900                # progress units (of 1000) for reading; the rest for sorting
_NS_PER_DAY = 86_400 * 10**9

ImportProgress = Callable[[int, int, str], None]   # (done, total, message), as targets' progress


class ImportFailed(RuntimeError):
    """An import that could not finish for a reason other than the CSV's content (disk full)."""


class ImportCancelled(ImportFailed):
    """The caller asked the import to stop; nothing was changed."""


# --- header matching (for forms that let a user map columns) ---------------------------------------
def csv_header(path: str | Path, delimiter: str = ",") -> list[str]:
    """The header row's names, as ``iter_csv`` reads them."""
    path = Path(path)
    with path.open(newline="", encoding="utf-8-sig") as handle:
        try:
            return [name.strip() for name in next(csv.reader(handle, delimiter=delimiter))]
        except StopIteration:
            raise CsvFormatError(f"{path.name} is empty: expected a header row naming the columns") from None


def suggest_mapping(header: list[str], schema: Schema) -> dict[str, str | None]:
    """Schema column -> the CSV column ``iter_csv`` would read for it (None: no match), using the
    same rule: the exact name, else the one name that matches ignoring case."""
    by_lower: dict[str, list[str]] = {}
    for name in header:
        by_lower.setdefault(name.lower(), []).append(name)
    out: dict[str, str | None] = {}
    for column in schema.names:
        if column in header:
            out[column] = column
        else:
            found = by_lower.get(column.lower(), [])
            out[column] = found[0] if len(found) == 1 else None
    return out


# --- importing ----------------------------------------------------------------------------------------
def import_csv(path: str | Path, base: str, name: str, mapping: Mapping[str, str] | None = None,
               progress: ImportProgress | None = None, *, chunk_rows: int = READ_CHUNK_ROWS,
               cancel: threading.Event | None = None, delimiter: str = ",") -> ImportedDataset:
    """Import the CSV at ``path`` read against the built-in dataset ``base``'s schema as
    ``imp_<name>``; replaces an earlier import of that name only when this one succeeds.

    ``mapping``: CSV header -> schema column, for columns whose names differ. ``progress(done,
    total, message)`` is called from this thread after each chunk and each day. ``cancel``: set
    it to stop at the next chunk (ImportCancelled). Raises CsvFormatError (file, line, column)
    for bad content, ValueError for a bad name or base, ImportFailed when the disk is full.
    """

    check_name(name)
    if base not in DATASETS:
        raise ValueError(f"unknown base dataset {base!r}: choose one of {', '.join(DATASETS)}")
    source = Path(path).expanduser().resolve()
    if not source.is_file():
        raise ValueError(f"{path}: no such file")
    if chunk_rows < 1:
        raise ValueError("chunk rows must be at least 1")
    root, work = work_folder(name)
    started = time.perf_counter()
    try:
        builder = _Builder(work, DATASETS[base].info, source, progress, cancel)
        for frame in iter_schema_csv(source, DATASETS[base].info.schema, base, mapping, chunk_rows,
                                     StringMode.ARROW, delimiter=delimiter):
            builder.add(frame)
        if builder.rows == 0:
            raise CsvFormatError(f"{source.name} has a header but no data rows")
        days = builder.finish()
        manifest = {
            "format": FORMAT, "name": name, "dataset": PREFIX + name, "base": base,
            "import_id": uuid.uuid4().hex,
            "source": {"path": str(source), "size": source.stat().st_size,
                       "mtime": dt.datetime.fromtimestamp(source.stat().st_mtime).isoformat()},
            "mapping": dict(mapping or {}),
            "schema": [[c.name, c.ddb_type] for c in builder.info.schema.columns],
            "day_column": builder.day_column, "time_column": builder.info.time_column,
            "key_column": builder.info.key_column,
            "days": days, "rows": builder.rows,
            "keys": [k for k, _ in builder.key_rows], "key_rows": [n for _, n in builder.key_rows],
            "created": dt.datetime.now().isoformat(timespec="seconds"),
            "seconds": round(time.perf_counter() - started, 3),
            "versions": {"pandas": pd.__version__, "pyarrow": pa.__version__},
        }
        _write_json(work / MANIFEST, {**manifest, "content": content_digest(work)})
        _swap_in(work, root / name)
    except BaseException as exc:
        shutil.rmtree(work, ignore_errors=True)
        from workloads.targets.common.storage import is_disk_full  # the targets package imports datasets
        if is_disk_full(exc):
            raise ImportFailed(_disk_full_message(source, root, name)) from exc
        raise
    return load_import(name)


def work_folder(name: str) -> tuple[Path, Path]:
    """(the imports folder, a new hidden folder in it) where an import of ``name`` is built, to be renamed
    into place when it is whole; folders left by dead imports are removed first."""
    root = imports_dir()
    root.mkdir(parents=True, exist_ok=True)
    _remove_stale_temp_folders(root)
    work = root / f".tmp-{name}-{os.getpid()}-{uuid.uuid4().hex[:8]}"
    work.mkdir()
    return root, work


class _Builder:
    """Splits CSV chunks into per-day part files, then writes each day sorted by time."""

    def __init__(self, work: Path, info: DatasetInfo, source: Path, progress: ImportProgress | None,
                 cancel: threading.Event | None):
        self.work, self.info, self.source = work, info, source
        self.progress, self.cancel = progress, cancel
        self.day_column = info.extra.get("day_from") or info.date_column
        self.time_column = info.time_column
        self.arrow_schema = pa.schema([
            pa.field(c.name, pa.large_string() if c.is_string else pa.from_numpy_dtype(np.dtype(
                c.pandas_dtype(StringMode.ARROW)))) for c in info.schema.columns])
        self.parts = work / "parts"
        self.parts.mkdir()
        self.writers: dict[int, pq.ParquetWriter] = {}   # day (days since 1970) -> open part, by use
        self.part_files: dict[int, list[Path]] = {}
        self.day_rows: Counter[int] = Counter()
        self.last_time: dict[int, int] = {}              # ns of the day's latest row so far
        self.in_order: dict[int, bool] = {}              # rows arrived sorted by time
        self.keys: Counter[str] = Counter()
        self.key_counts: list[pa.StructArray] = []      # per-chunk counts, folded into ``keys`` now and then
        self.rows = 0
        self.expected_rows = _estimate_rows(source) if source.is_file() else 1
        self.started = time.perf_counter()

    def _check_cancel(self) -> None:
        if self.cancel is not None and self.cancel.is_set():
            raise ImportCancelled(f"import of {self.source.name} cancelled: nothing was changed")

    def _report(self, done: float, message: str) -> None:
        if self.progress is not None:
            self.progress(int(done), 1000, message)

    # --- phase 1: split by day -----
    def add(self, frame: pd.DataFrame) -> None:
        self._check_cancel()
        if len(frame):
            self.add_table(pa.Table.from_pandas(frame, preserve_index=False).cast(self.arrow_schema))

    def add_table(self, table: pa.Table) -> None:
        """Rows already in the stored Arrow schema (``arrow_schema``: strings large, times ns)."""
        self._check_cancel()
        if not table.num_rows:
            return
        table = table.replace_schema_metadata(None)
        times = table.column(self.time_column).cast(pa.int64()).to_numpy()
        days = table.column(self.day_column).cast(pa.int64()).to_numpy() // _NS_PER_DAY
        if self.info.key_column:
            self.key_counts.append(pc.value_counts(table.column(self.info.key_column)))
            if len(self.key_counts) >= 256:
                self._fold_keys()
        if days[0] == days[-1] and (days == days[0]).all():   # the usual case: one day per chunk
            self._write_part(int(days[0]), table, times)
        else:
            order = np.argsort(days, kind="stable")          # keeps file order within a day
            sorted_days = days[order]
            bounds = np.flatnonzero(np.diff(sorted_days)) + 1
            for lo, hi in zip(np.r_[0, bounds], np.r_[bounds, len(order)]):
                rows = order[lo:hi]
                self._write_part(int(sorted_days[lo]), table.take(pa.array(rows)), times[rows])
        self.rows += table.num_rows
        share = min(self.rows / max(self.expected_rows, self.rows + 1), 0.99)
        self._report(share * _READ_SHARE, f"read {self.rows:,} rows of {self.source.name}{self._pace(share)}")

    def _fold_keys(self) -> None:
        """Sum the chunks' key counts in Arrow (a Python loop per chunk cost ~10 % of an import)."""
        if not self.key_counts:
            return
        counts = pa.Table.from_struct_array(pa.chunked_array(self.key_counts)).group_by("values").aggregate(
            [("counts", "sum")])
        for key, n in zip(counts.column("values").to_pylist(), counts.column("counts_sum").to_pylist()):
            self.keys[str(key)] += n
        self.key_counts.clear()

    def _pace(self, share: float) -> str:
        """`` (850,000 rows/s, about 12 s left)`` once a rate is known."""
        seconds = time.perf_counter() - self.started
        if seconds < 0.02 or not self.rows:    # a rate from the first block alone says little
            return ""
        left = seconds * (1 - share) / max(share, 1e-9)
        left_text = f"about {left:,.0f} s left" if left >= 1 else "under a second left"   # not "about 0 s"
        return f" ({self.rows / seconds:,.0f} rows/s, {left_text})"

    def _write_part(self, day: int, table: pa.Table, times: np.ndarray) -> None:
        ordered = bool((np.diff(times) >= 0).all()) and times[0] >= self.last_time.get(day, times[0])
        self.in_order[day] = self.in_order.get(day, True) and ordered
        self.last_time[day] = max(self.last_time.get(day, times[0]), int(times.max()))
        self.day_rows[day] += table.num_rows
        writer = self.writers.pop(day, None)
        if writer is None:
            if len(self.writers) >= MAX_OPEN_DAYS:           # close the least recently used day
                oldest = next(iter(self.writers))
                self.writers.pop(oldest).close()
            files = self.part_files.setdefault(day, [])
            files.append(self.parts / f"{day}-{len(files)}.parquet")
            writer = pq.ParquetWriter(files[-1], self.arrow_schema)
        self.writers[day] = writer                            # most recently used last
        writer.write_table(table)

    # --- phase 2: one sorted file per day -----
    def finish(self) -> list[dict[str, Any]]:
        for writer in self.writers.values():
            writer.close()
        self.writers.clear()
        self._fold_keys()
        self.key_rows = sorted(self.keys.items(), key=lambda kv: (-kv[1], kv[0]))
        entries = []
        ordered_days = sorted(self.day_rows)
        for index, day in enumerate(ordered_days):
            self._check_cancel()
            date = (np.datetime64(day, "D")).item()
            final = self.work / f"{date.isoformat()}.parquet"
            self._write_day(day, final)
            entries.append({"date": date.isoformat(), "rows": self.day_rows[day], "file": final.name,
                            "bytes": final.stat().st_size})
            done = _READ_SHARE + (1000 - _READ_SHARE) * (index + 1) / len(ordered_days)
            self._report(done, f"wrote {date.isoformat()} ({index + 1} of {plural(len(ordered_days), 'day')})")
        self.parts.rmdir()
        return entries

    def _write_day(self, day: int, final: Path) -> None:
        files = self.part_files[day]
        if self.in_order[day]:
            if len(files) == 1:
                os.rename(files[0], final)                    # already what we want
                return
            with pq.ParquetWriter(final, self.arrow_schema) as writer:  # stream, never the whole day
                for path in files:
                    with pq.ParquetFile(path) as part:
                        for batch in part.iter_batches(batch_size=ROW_GROUP_ROWS):
                            writer.write_batch(batch)
                    path.unlink()
            return
        table = pa.concat_tables([pq.read_table(p) for p in files])  # one day in memory
        table = table.take(pc.sort_indices(table, [(self.time_column, "ascending")]))  # stable
        pq.write_table(table, final, row_group_size=ROW_GROUP_ROWS)
        for path in files:
            path.unlink()


def content_digest(folder: Path) -> str:
    """What an import holds, as a digest of its day files (names and bytes): the same rows imported
    again give the same digest, other rows under the same name another (``compare`` names the change)."""
    digest = hashlib.sha256()
    for path in sorted(folder.rglob("*.parquet")):
        digest.update(path.relative_to(folder).as_posix().encode() + b"\0")
        with path.open("rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                digest.update(block)
    return "sha256:" + digest.hexdigest()


def _estimate_rows(source: Path, sample_bytes: int = 1 << 20) -> int:
    """Rows in the file, from the line length of its first MiB (for progress only)."""
    size = source.stat().st_size
    with source.open("rb") as handle:
        sample = handle.read(sample_bytes)
    lines = sample.count(b"\n")
    if len(sample) >= size:
        return max(lines - 1 + (not sample.endswith(b"\n")), 1)
    header = sample.find(b"\n") + 1
    return max(int((size - header) / max((len(sample) - header) / max(lines - 1, 1), 1)), 1)


def _write_json(path: Path, data: dict[str, Any]) -> None:
    with open(path, "w", encoding="utf-8") as handle:
        json.dump(data, handle, indent=1)
        handle.flush()
        os.fsync(handle.fileno())


def _swap_in(work: Path, final: Path) -> None:
    """Rename the finished folder into place; an earlier import is replaced only now."""
    if not final.exists():
        os.rename(work, final)
        return
    old = final.with_name(f".old-{final.name}-{os.getpid()}-{uuid.uuid4().hex[:8]}")
    os.rename(final, old)
    try:
        os.rename(work, final)
    except BaseException:
        os.rename(old, final)   # put the earlier import back
        raise
    shutil.rmtree(old, ignore_errors=True)


def _remove_stale_temp_folders(root: Path) -> None:
    """Folders left by imports whose process died (kill -9, power loss); live ones are kept."""
    for folder in root.glob(".*-*-*-*"):
        try:
            pid = int(folder.name.rsplit("-", 2)[-2])
        except (ValueError, IndexError):
            continue
        if folder.is_dir() and not pid_alive(pid):
            shutil.rmtree(folder, ignore_errors=True)


def _disk_full_message(source: Path, root: Path, name: str) -> str:
    try:
        free = shutil.disk_usage(root).free
    except OSError:
        free = 0
    kept = " The earlier import of that name is kept." if (root / name).is_dir() else ""
    return (f"disk full while importing {source.name} into {root} ({free // (1024 * 1024):,} MB free): "
            f"nothing was imported.{kept} Free some space or set TICKBENCH_HOME to a larger disk.")
