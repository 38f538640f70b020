"""The one writer of a run's folder (``RunWriter``: the process running the run, a migration, or
the one sealer of a dead run), and the lock that makes that sealer one (``SealLock``).

Operation records are appended to an Arrow stream as they arrive (cheap: the run's workers are
being measured meanwhile), turned into one Parquet part at each step's end or when the stream grows
large, and sealed into one file once the run has ended. Space is held while a run goes and given
back to write its end on a full disk.
"""
from __future__ import annotations

import fcntl
import json
import os
import shutil
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from workloads.results.atomic_files import DamagedFile, DiskFullError, _written, create_json, disk_full, write_json
from workloads.results.ops_stream import STREAM_SUFFIX, OpsStream, is_stream, read_stream
from workloads.results.run_files import (OPS_DIR, OPS_FILE, RESERVE_BYTES, RESERVE_FILE, RESOURCES_FILE, RUN_FILE,
                                         SEAL_LOCK, STEPS_FILE, WORKERS_FILE, RunFolder, _part_range, ended,
                                         measured_ends, read_ops_file)
from workloads.results.run_tables import OPS_COLUMNS, PART_WRITE, _as_dictionaries, plain_strings, utc_now

ROLL_BYTES = 64 << 20         # a stream this large becomes a part at once: memory and disk stay bounded


class RunWriter(RunFolder):
    """The one writer of a run's folder (the process running it, or a migration, or the one
    sealer of a dead run). Every write that finds the disk full raises ``DiskFullError``."""

    def __init__(self, folder: Path):
        super().__init__(folder)
        self.folder.mkdir(parents=True, exist_ok=True)
        self._run = self.run()
        self._steps = self.steps()
        self._workers = self.workers()
        parts = self.ops_files()
        self._next_part = 1 + max((_part_range(p)[1] for p in parts), default=0)
        self._stream: OpsStream | None = None

    def create_run(self, fields: dict[str, Any]) -> None:
        """The run's first record, only if the folder has none: ValueError if it has (a run id is
        used once). Space for the run's end is held at once (``reserve``)."""
        if not create_json(self.folder / RUN_FILE, fields):
            raise ValueError(f"run id {self.run_id!r}: already used by a run in {self.folder.parent}; "
                             "a run id names one run")
        self._run = dict(fields)
        self.reserve()

    def reserve(self) -> None:
        """Hold ``RESERVE_BYTES`` (real blocks, not a hole) so the run's end can be written when
        the disk fills; best effort."""
        try:
            with open(self.folder / RESERVE_FILE, "wb") as out:
                out.write(b"\0" * RESERVE_BYTES)
        except OSError:
            (self.folder / RESERVE_FILE).unlink(missing_ok=True)

    def release_reserve(self) -> None:
        (self.folder / RESERVE_FILE).unlink(missing_ok=True)

    def update_run(self, **fields: Any) -> None:
        self._run.update(fields)
        write_json(self.folder / RUN_FILE, self._run)

    def add_step(self, row: dict[str, Any]) -> None:
        self._steps = [s for s in self._steps if s["step"] != row["step"]] + [row]
        write_json(self.folder / STEPS_FILE, self._steps)

    def update_step(self, step: int, **fields: Any) -> None:
        for row in self._steps:
            if row["step"] == step:
                row.update(fields)
        write_json(self.folder / STEPS_FILE, self._steps)

    def add_step_facts(self, step: int, facts: dict[str, Any]) -> None:
        """``facts`` added to the step's (a later one of the same name wins)."""
        for row in self._steps:
            if row["step"] == step:
                row["facts"] = json.dumps({**json.loads(row.get("facts") or "{}"), **facts}, default=str)
        write_json(self.folder / STEPS_FILE, self._steps)

    def set_worker(self, row: dict[str, Any]) -> None:
        self._workers = [w for w in self._workers
                         if (w["step"], w["worker"]) != (row["step"], row["worker"])] + [row]
        write_json(self.folder / WORKERS_FILE, self._workers)

    def add_ops(self, ops: pa.Table) -> None:
        """The records appended to the run's stream (a new stream after a step's end, a failed
        write or a change of columns)."""
        if not ops.num_rows:
            return
        ops = _as_dictionaries(ops)
        if self._stream is not None and ops.schema != self._stream.schema:
            self.settle_ops()
        if self._stream is None:
            self._stream = self._open_stream(ops.schema)
        try:
            self._stream.append(ops)
        except OSError as exc:
            self._stream.abandon()
            self._stream = None
            if disk_full(exc):
                raise DiskFullError(self.folder / OPS_DIR, exc) from None
            raise
        if self._stream.nbytes >= ROLL_BYTES:
            self.settle_ops()

    def _open_stream(self, schema: pa.Schema) -> OpsStream:
        folder = self.folder / OPS_DIR
        path = folder / f"{self._next_part:06d}{STREAM_SUFFIX}"
        self._next_part += 1
        try:
            folder.mkdir(exist_ok=True)
            return OpsStream(path, schema)
        except OSError as exc:
            if disk_full(exc):
                raise DiskFullError(path, exc) from None
            raise

    def settle_ops(self) -> None:
        """The open stream as an immutable Parquet part of its number (from memory: no re-read),
        then the stream deleted; a reader listing in between takes the part alone. On a full disk
        the stream stays, closed and whole, and ``DiskFullError`` is raised."""
        stream, self._stream = self._stream, None
        if stream is None:
            return
        stream.close()
        if stream.tables:
            part = pa.concat_tables(stream.tables)
            _written(stream.path.with_suffix(".parquet"), lambda temporary: pq.write_table(part, temporary, **PART_WRITE))
        stream.path.unlink(missing_ok=True)

    def add_resource(self, row: dict[str, Any]) -> None:
        path = self.folder / RESOURCES_FILE
        try:
            with open(path, "a", encoding="utf-8") as out:
                out.write(json.dumps(row) + "\n")
        except OSError as exc:
            if disk_full(exc):
                raise DiskFullError(path, exc) from None
            raise

    def kept_ops(self) -> int:
        """Records on disk (streams, parts or the sealed file): the whole batches of a stream, the
        rows in a Parquet footer."""
        total = 0
        for path in self.ops_files():
            try:
                total += read_stream(path, columns=[]).num_rows if is_stream(path) else pq.read_metadata(path).num_rows
            except (pa.ArrowException, OSError, DamagedFile):     # a damaged file keeps nothing countable
                pass
        return total

    def end(self, status: str, message: str, finished_at: Any = None) -> None:
        """The run's last writes: records sealed (left as parts if the disk has no room for the
        sealed file), steps and workers in their true end states, the run's record last. The
        reserve is given back first, so a full disk still takes these small files."""
        self.release_reserve()
        try:
            self.settle_ops()
            self.seal_ops()
        except DiskFullError:
            pass                        # the parts stay: readers read them as they read a live run
        steps, workers = ended(status, message, self._steps, self._workers,
                               measured_ends(self.ops_files()) if any(
                                   s.get("status") == "running" for s in self._steps) else {})
        if steps != self._steps:
            self._steps = steps
            write_json(self.folder / STEPS_FILE, steps)
        if workers != self._workers:
            self._workers = workers
            write_json(self.folder / WORKERS_FILE, workers)
        self.update_run(status=status, message=message, finished_at=finished_at or utc_now())

    def seal_ops(self) -> None:
        """The parts and streams as one file once the run has ended (readers then open one file)."""
        parts = [p for p in self.ops_files() if p.parent.name == OPS_DIR]
        if not parts:
            return
        whole = pa.concat_tables([plain_strings(read_ops_file(p)) for p in parts] + [pa.schema(OPS_COLUMNS).empty_table()],
                                 promote_options="default").select(list(OPS_COLUMNS))
        _written(self.folder / OPS_FILE, lambda temporary: pq.write_table(whole, temporary, compression="zstd"))
        shutil.rmtree(self.folder / OPS_DIR, ignore_errors=True)


class SealLock:
    """Whoever seals a dead run holds this (``flock``, let go when its process ends, even by
    ``kill -9``); anyone else finds it taken and leaves the run to them."""

    def __init__(self, folder: Path):
        self.path = Path(folder) / SEAL_LOCK
        self._fd: int | None = None

    def __enter__(self) -> bool:
        try:
            self._fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
            fcntl.flock(self._fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return True
        except OSError:
            if self._fd is not None:
                os.close(self._fd)
                self._fd = None
            return False

    def __exit__(self, *_exc) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None
