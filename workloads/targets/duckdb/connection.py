"""DuckDB's connections and its one-writer rule: this process's read-only connection, and the
file's read-write connection taken in turn with other processes.

Concurrency, honestly: DuckDB lets ONE process open a file read-write, or several processes
open it read-only, never both at once. So:
- ``prepare`` closes its read-write connection before returning; workers ``open`` read-only.
- ``append`` releases this process's read-only connection, then opens read-write for the one
  INSERT and closes again, so concurrent appends from several processes are serialised, one
  at a time. Tickbench's writers queue on a kernel lock (``flock`` on ``<file>.writers.lock``,
  POSIX) rather than by retrying DuckDB's open, because a refused open costs ~10 ms of CPU.
  When DuckDB still refuses (a reader or another program holds the file) we retry with
  backoff, up to ``lock_timeout_s``. The wait is part of the ``query`` phase and is also
  reported in ``OpResult.extra`` (``lock_wait_s``; ``lock_retries``: refused DuckDB opens;
  ``queue_polls``: checks of the writer queue). Each append pays an open
  and a close (checkpoint) of the file: tens of ms, the price of a multi-process writer.
- Readers opening while a writer holds the file wait the same way (outside timing in ``open``).
"""
from __future__ import annotations

import os
import random
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import duckdb

from workloads.targets.base import Layout, TargetError
from workloads.targets.common.storage import disk_full_error
from workloads.targets.common.turns import take_turn
from workloads.targets.common.zones import duckdb_on_utc


DEFAULT_LOCK_TIMEOUT_S = 120.0


def _now() -> float:
    return time.perf_counter()


def _is_lock_error(exc: Exception) -> bool:
    return isinstance(exc, duckdb.IOException) and "lock" in str(exc).lower()


class DuckDBConnection:
    """The database file, its connections and the writer's turn (mixed into ``DuckDBTarget``)."""

    # --- configuration -------------------------------------------------------------------
    @property
    def path(self) -> Path:
        path = self.config.get("path")
        if not path:
            from workloads.paths import default_datasets_dir
            return default_datasets_dir() / "tickbench_data.duckdb"
        return Path(path)

    @property
    def lock_timeout_s(self) -> float:
        return float(self.config.get("lock_timeout_s") or DEFAULT_LOCK_TIMEOUT_S)

    @contextmanager
    def _writer(self):
        """The file's read-write connection, taken in turn with other processes (DuckDB allows one
        writing process per file); yields it with the wait facts an OpResult reports."""
        self.close()  # a read-only handle in this process would block our own read-write open
        asked = time.monotonic()          # the system-wide clock: turns compare across processes
        turn, polls = self._queue_for_writing()
        taken = time.monotonic()
        try:
            con, waited, retries = self._connect(read_only=False)
        except BaseException:
            if turn is not None:
                os.close(turn)
            raise
        facts = {"lock_wait_s": (taken - asked) + waited, "lock_retries": retries, "queue_polls": polls,
                 "serialised": True, "turn_asked": asked, "turn_taken": taken}
        try:
            yield con, facts
        except duckdb.Error as exc:
            raise self._disk_full(exc) or exc
        finally:
            con.close()  # hand the file to the next writer
            facts["turn_released"] = time.monotonic()
            if turn is not None:
                os.close(turn)

    def _queue_for_writing(self) -> tuple[int | None, int]:
        """Wait for this file's writer turn among Tickbench processes: (fd, polls)."""
        return take_turn(self.path.with_name(self.path.name + ".writers.lock"), self.lock_timeout_s,
                         f"no turn to write {self.path} within {self.lock_timeout_s:g} s: other Tickbench "
                         "processes kept appending (DuckDB allows one writing process per file)")

    def _connect(self, read_only: bool) -> tuple[duckdb.DuckDBPyConnection, float, int]:
        """Open the file, waiting while another process holds a conflicting lock.

        Returns (connection, seconds spent waiting for the lock, failed attempts).
        """
        config: dict[str, Any] = {}
        if self.config.get("threads"):
            config["threads"] = int(self.config["threads"])
        if self.config.get("memory_limit"):  # e.g. "2GB": several worker processes share the RAM
            config["memory_limit"] = str(self.config["memory_limit"])
        timeout = self.lock_timeout_s
        if not read_only:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        elif not self.path.is_file():
            raise TargetError(f"DuckDB file {self.path} does not exist: prepare the target first")
        start = _now()
        retries, delay = 0, 0.001
        while True:
            attempt = _now()
            try:
                con = duckdb.connect(str(self.path), read_only=read_only, config=config)
                duckdb_on_utc(con)
                return con, attempt - start, retries
            except duckdb.ConnectionException as exc:  # this process already has it open otherwise
                raise TargetError(f"DuckDB file {self.path} is already open in this process in another "
                                  f"mode (read-only vs read-write); close that connection first: {exc}") from exc
            except duckdb.Error as exc:
                if not _is_lock_error(exc):
                    raise TargetError(f"cannot open DuckDB file {self.path}: {exc}") from exc
                if _now() - start > timeout:
                    raise TargetError(
                        f"DuckDB file {self.path} stayed locked by another process for {timeout:g} s "
                        f"(DuckDB allows one writing process per file): {exc}") from exc
                retries += 1
                time.sleep(delay * (1 + random.random()))  # jitter: writers must not retry in lockstep
                delay = min(delay * 2, 0.05)

    def _disk_full(self, exc: duckdb.Error) -> TargetError | None:
        """DuckDB's "No space left on device" as the clear error the files targets give."""
        return disk_full_error(exc, self.path)

    def drop_process_cache(self, layout: Layout) -> list[str]:
        """DuckDB's own buffer pool, by reopening this process's connection."""
        if self._reader is None:
            return []
        self.close()
        self._reader, _, _ = self._connect(read_only=True)
        return ["duckdb reconnect"]

    # --- worker side ---------------------------------------------------------------------
    def open(self, layout: Layout, worker: int = 0) -> None:
        self._dataset_info(layout)
        if self._reader is None:
            self._reader, _, _ = self._connect(read_only=True)

    def close(self) -> None:
        if self._reader is not None:
            self._reader.close()
            self._reader = None

    def _con(self, layout: Layout) -> duckdb.DuckDBPyConnection:
        if self._reader is None:  # not opened (or released by an append): connect before timing
            self.open(layout)
        return self._reader
