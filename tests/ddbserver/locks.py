"""Chunk locks: a write to a DFS table takes the chunks it writes for the length of its transaction.

DolphinDB creates a transaction for each insert, delete or update and locks the chunks it writes
(its error code reference, S00002). A chunk is one partition of one table here (the database's
``chunkGranularity`` is TABLE by default since 1.30.16/2.00.4). What a transaction does when a
chunk it needs is locked depends on the database's ``atomic`` level (``setAtomicLevel``):

- ``TRANS``: the whole write fails at once, with DolphinDB's own message (``CHUNK_LOCKED``);
- ``CHUNK``: the write goes on and keeps attempting the locked chunk "until it is still locked
  after a few minutes" (here ``retry_s``), then fails with the same message.

Every chunk found locked by another transaction counts as one conflict (per transaction and
chunk), whatever the outcome, so a test can tell writers that share chunks from writers that own
theirs. Chunks are taken in sorted order, so two CHUNK writers never wait on each other in a circle.
"""
from __future__ import annotations

import datetime as dt
import itertools
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

from tests.ddbserver.syntax import EPOCH, ScriptError

Chunk = tuple[str, str, int, int]       # database, table, day (days since epoch), key bucket

# DolphinDB's text for a chunk locked by another transaction (error code reference S00002)
CHUNK_LOCKED = ("<ChunkInTransaction>The openChunks operation failed because the chunk '{path}' is "
                "currently locked and in use by transaction {tid}. RefId:S00002")


def chunk_path(chunk: Chunk) -> str:
    """``/<database name>/<day>/<key bucket>/<table>``: where the chunk's files would live."""
    db, table, day, bucket = chunk
    name = db[len("dfs://"):] if db.startswith("dfs://") else db
    return f"/{name}/{(EPOCH + dt.timedelta(days=day)):%Y%m%d}/{bucket}/{table}"


class ChunkLocks:
    def __init__(self, retry_s: float = 120.0):
        self.retry_s = retry_s                  # CHUNK: how long a locked chunk is attempted
        self._cond = threading.Condition()
        self._held: dict[Chunk, int] = {}       # chunk -> transaction id holding it
        self._ids = itertools.count(1)
        self.transactions = 0                   # write transactions begun
        self.conflicts = 0                      # chunks found locked by another transaction
        self.failed = 0                         # transactions that failed on a locked chunk
        self.log: list[dict] = []               # one entry per conflict (the first 1,000)

    @contextmanager
    def transaction(self, chunks, atomic: str) -> Iterator[int]:
        """Hold ``chunks`` for the ``with`` block (the write); its transaction id is yielded."""
        wanted = sorted(set(chunks))
        with self._cond:
            tid = next(self._ids)
            self.transactions += 1
        taken: list[Chunk] = []
        try:
            if atomic == "TRANS":
                self._take_all_or_fail(tid, wanted, taken)
            else:
                for chunk in wanted:
                    self._take_waiting(tid, chunk, taken)
            yield tid
        finally:
            with self._cond:
                for chunk in taken:
                    del self._held[chunk]
                self._cond.notify_all()

    def _conflict(self, tid: int, chunk: Chunk, atomic: str) -> None:
        self.conflicts += 1
        if len(self.log) < 1000:
            self.log.append({"transaction": tid, "holder": self._held[chunk], "chunk": chunk_path(chunk),
                             "atomic": atomic})

    def _fail(self, tid: int, chunk: Chunk) -> ScriptError:
        self.failed += 1
        return ScriptError(CHUNK_LOCKED.format(path=chunk_path(chunk), tid=self._held[chunk]))

    def _take_all_or_fail(self, tid: int, wanted: list[Chunk], taken: list[Chunk]) -> None:
        with self._cond:
            locked = [c for c in wanted if c in self._held]
            if locked:
                for chunk in locked:
                    self._conflict(tid, chunk, "TRANS")
                raise self._fail(tid, locked[0])
            for chunk in wanted:
                self._held[chunk] = tid
                taken.append(chunk)

    def _take_waiting(self, tid: int, chunk: Chunk, taken: list[Chunk]) -> None:
        deadline = time.monotonic() + self.retry_s
        with self._cond:
            if chunk in self._held:
                self._conflict(tid, chunk, "CHUNK")
            while chunk in self._held:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise self._fail(tid, chunk)
                self._cond.wait(min(left, 0.05))
            self._held[chunk] = tid
            taken.append(chunk)

    def snapshot(self) -> dict:
        with self._cond:
            return {"transactions": self.transactions, "conflicts": self.conflicts, "failed": self.failed,
                    "log": list(self.log)}
