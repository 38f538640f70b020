"""Embedded chDB: a data folder on this machine, its session and the statements run on it.

Concurrency of embedded chDB: only ONE process can hold a chDB session on a data folder. Tickbench
processes take turns on a kernel lock (``flock`` on ``<folder>.tickbench-turn.lock`` beside the
folder, POSIX) rather than by retrying chDB's open (a refused open is an error, not a queue), and
retry with backoff only when another program holds the folder, up to ``lock_timeout_s``. With
``session = "auto"`` a process keeps its session between operations as long as no other process
asks for the folder: a waiting process says so (a shared ``flock`` on
``<folder>.tickbench-waiters.lock``) and rings a doorbell (``common.turns.Doorbell``), and the
holder hands over at the end of its operation, or at once when it is idle (a watcher thread that
sleeps until rung: it never wakes beside a single user's operations), so a single user pays no open
per operation and several users take turns. ``per_operation`` opens and closes around
every operation. As for
DuckDB's writers, the wait and the open are part of the timed span (``query`` phase): they are
what using one chDB folder from several processes costs; the close when handing over is too. The
parent's work (prepare, footprint, clear_table, describe) always closes its session before
returning, so workers never wait for it; ``open`` in a worker only loads chDB and checks the
folder (taking the folder there would block the other workers at the start barrier).

chDB is imported only when a folder is used (a missing one raises ``MissingClient`` naming the
``clickhouse`` extra).
"""
from __future__ import annotations

import atexit
import os
import random
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pyarrow as pa

from workloads.targets.base import TargetError
from workloads.targets.clickhouse.dialect import _SETTINGS, _first_line, _now, param_text, quote, with_literals
from workloads.targets.common.storage import disk_full_error
from workloads.targets.common.turns import Doorbell, can_queue, others_waiting, take_turn

_ACTIVE: "_Folder | None" = None        # chDB allows one session per process: whose it is


def _is_busy(exc: BaseException) -> bool:
    text = str(exc).lower()
    return "lock" in text or "embeddedserver" in text or "already running" in text


def arrow_of(result) -> pa.Table:
    """chDB's Arrow result as a table whose buffers keep ``result`` alive.

    chDB's own "ArrowTable" output (chDB 4.4: ``RecordBatchFileReader(res.get_memview().view())``)
    reads the result's memory without copying but keeps no reference to the result, which is freed
    once the call returns: uncompressed (see ``arrow``), the table's buffers then point at freed
    memory, and a frame kept from one read showed other bytes (or failed to decode) after the next
    reads (20 of 20 times in a check of 20 further reads). The same zero-copy read, over a buffer
    whose base is the result, costs nothing more and stays valid as long as the table does.
    """
    if len(result) == 0:                 # as chDB's own conversion: an empty table, no columns
        return pa.Table.from_batches([], schema=pa.schema([]))
    raw = pa.py_buffer(result.get_memview().view())
    return pa.ipc.open_file(pa.foreign_buffer(raw.address, raw.size, base=result)).read_all()


class _ChdbConn:
    """Statements on an open chDB session; chDB's errors as TargetError."""

    def __init__(self, session, path: Path):
        self.session, self.path = session, path

    def _query(self, sql: str, fmt: str, params: dict[str, Any] | None):
        try:
            if params and (written := with_literals(sql, params)) is not None:
                sql, params = written, None
            if params:
                return self.session.query(sql, fmt, params={k: param_text(v) for k, v in params.items()})
            return self.session.query(sql, fmt)
        except TargetError:
            raise
        except Exception as exc:
            raise disk_full_error(exc, self.path) or TargetError(f"chDB: {_first_line(exc)}") from exc

    def arrow(self, sql: str, params: dict[str, Any] | None = None) -> pa.Table:
        # In-process there is no wire: chDB's default lz4 framing of its Arrow output (~55 ms of a
        # 1M-row day's ~145) would compress only to decompress at once. A SET in the session does
        # not reach the Arrow path; the query's own SETTINGS does.
        if not _SETTINGS.search(sql):
            sql += "\nSETTINGS output_format_arrow_compression_method = 'none'"
        return arrow_of(self._query(sql, "Arrow", params))

    def execute(self, sql: str, params: dict[str, Any] | None = None) -> int:
        """Run a statement; the rows it wrote."""
        return int(self._query(sql, "CSV", params).rows_written())

    def rows(self, sql: str, params: dict[str, Any] | None = None) -> list[dict[str, Any]]:
        return self.arrow(sql, params).to_pylist()

    def insert(self, table: str, data: pa.Table) -> int:
        _tb_insert = data  # noqa: F841 (chDB's Python() table function finds it by name)
        names = ", ".join(quote(n) for n in data.column_names)
        return self.execute(f"INSERT INTO {table} ({names}) SELECT * FROM Python(_tb_insert)")


class _Folder:
    """A chDB data folder taken in turns by Tickbench processes (module doc: Concurrency)."""

    def __init__(self, path: Path, hold: bool, timeout: float, threads: int | None):
        self.path, self.hold, self.timeout, self.threads = path, hold and can_queue(), timeout, threads
        self._session = None
        self._turn: int | None = None
        self._waiters: int | None = None
        self._depth = 0
        self._guard = threading.RLock()
        self._watcher: threading.Thread | None = None
        self._doorbell: Doorbell | None = None
        self.address = str(path)

    def ready(self) -> None:
        """Load chDB and check the folder (outside timing); the folder itself is not taken."""
        _chdb_session_module()
        if not self.path.is_dir():
            raise TargetError(f"chDB folder {self.path} does not exist: prepare the target first")

    def _lock_path(self, what: str) -> Path:
        return self.path.with_name(f"{self.path.name}.tickbench-{what}.lock")

    @contextmanager
    def session(self, hold: bool | None = None) -> Iterator[tuple[_ChdbConn, dict[str, Any]]]:
        """The folder's session for the block, and the facts of getting it (wait, open, close)."""
        with self._guard:
            facts: dict[str, Any] = {}
            if self._depth == 0:
                facts = self._acquire() if self._session is None else \
                    {"lock_wait_s": 0.0, "open_s": 0.0, "session": "held", "serialised": True}
            self._depth += 1
            try:
                yield _ChdbConn(self._session, self.path), facts
            finally:
                self._depth -= 1
                if self._depth == 0:
                    keep = self.hold if hold is None else hold and self.hold
                    if keep and not self._others_waiting():
                        self._watch()
                    else:
                        start = _now()
                        self.release(facts)
                        facts["close_s"] = _now() - start

    def _acquire(self) -> dict[str, Any]:
        global _ACTIVE
        if _ACTIVE is not None and _ACTIVE is not self:
            _ACTIVE.release()        # another folder (or target) of this process has chDB's one session
        asked = time.monotonic()
        turn, polls = self._queue()
        taken = time.monotonic()
        try:
            start = _now()
            session, waited, retries = self._open()
            open_s = _now() - start - waited
        except BaseException:
            if turn is not None:
                os.close(turn)
            raise
        self._session, self._turn = session, turn
        _ACTIVE = self
        return {"lock_wait_s": (taken - asked) + waited, "open_s": open_s, "lock_retries": retries, "queue_polls": polls,
                "session": "opened", "serialised": True, "turn_asked": asked, "turn_taken": taken}

    def _queue(self) -> tuple[int | None, int]:
        """Wait for the folder's turn among Tickbench processes: (fd, polls). A waiting
        process holds a shared lock on the waiters file, so an idle holder hands over."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        return take_turn(self._lock_path("turn"), self.timeout,
                         f"no turn on chDB folder {self.path} within {self.timeout:g} s: other Tickbench "
                         "processes kept it (chDB allows one process per folder)", self._lock_path("waiters"),
                         self._lock_path("doorbell"))

    def _others_waiting(self) -> bool:
        if not can_queue():
            return True
        if self._waiters is None:
            self._waiters = os.open(self._lock_path("waiters"), os.O_CREAT | os.O_RDWR, 0o644)
        return others_waiting(self._waiters)

    def _watch(self) -> None:
        """Hand the idle held session over as soon as another process asks (rings)."""
        if self._doorbell is not None:     # listening already (a released turn's watcher is ending)
            return
        self._doorbell = Doorbell(self._lock_path("doorbell"))
        self._watcher = threading.Thread(target=self._watch_loop, args=(self._doorbell,),
                                         name="tickbench-chdb-handover", daemon=True)
        self._watcher.start()

    def _watch_loop(self, doorbell: Doorbell) -> None:
        try:
            while doorbell.wait():
                with self._guard:           # mid-operation: after it (whose end looks for waiters too)
                    if self._session is not None and self._depth == 0 and self._others_waiting():
                        self.release()      # stops this loop
        finally:
            doorbell.close()

    def _open(self):
        """chDB's session on the folder, retrying while another program holds it:
        (session, seconds waited, refused opens)."""
        module = _chdb_session_module()
        self.path.mkdir(parents=True, exist_ok=True)
        start, retries, delay = _now(), 0, 0.001
        while True:
            attempt = _now()
            try:
                session = module.Session(str(self.path))
            except Exception as exc:
                if not _is_busy(exc):
                    raise disk_full_error(exc, self.path) or \
                        TargetError(f"cannot open chDB folder {self.path}: {_first_line(exc)}") from exc
                if _now() - start > self.timeout:
                    raise TargetError(f"chDB folder {self.path} stayed locked by another process for "
                                      f"{self.timeout:g} s (chDB allows one process per folder): "
                                      f"{_first_line(exc)}") from exc
                retries += 1
                time.sleep(delay * (1 + random.random()))
                delay = min(delay * 2, 0.05)
                continue
            if self.threads:
                session.query(f"SET max_threads = {int(self.threads)}")
            return session, attempt - start, retries

    def release(self, facts: dict[str, Any] | None = None) -> None:
        """Close the session and give the folder's turn back (``facts["turn_released"]``: when,
        stamped before the turn passes on, so turns of several processes never seem to overlap)."""
        global _ACTIVE
        with self._guard:
            session, self._session = self._session, None
            try:
                if session is not None:
                    session.close()
            finally:
                if facts is not None:
                    facts["turn_released"] = time.monotonic()
                if self._turn is not None:
                    os.close(self._turn)
                    self._turn = None
                if self._doorbell is not None:
                    self._doorbell.stop()       # the watcher ends and closes it
                    self._doorbell = None
                if _ACTIVE is self:
                    _ACTIVE = None

    def close(self) -> None:
        self.release()
        if self._waiters is not None:
            os.close(self._waiters)
            self._waiters = None


def _chdb_session_module():
    try:
        from chdb import session
    except ImportError as exc:
        from workloads.targets import MissingClient
        raise MissingClient("clickhouse", "chdb") from exc
    return session


@atexit.register
def _release_at_exit() -> None:
    if _ACTIVE is not None:
        try:
            _ACTIVE.release()
        except Exception:
            pass
