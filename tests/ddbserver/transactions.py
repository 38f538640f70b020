"""Writes to DFS tables as DolphinDB runs them: a transaction per write that locks the chunks it
writes (locks.py), lands in the OLAP cache engine (olap_cache.py), and table creation that fails
for a table created a moment before by someone else.

A write's transaction lasts ``faults.write_delay`` seconds longer than the insert itself (a real
server's write takes its time; here it lets concurrent writers overlap), and a
``createPartitionedTable`` takes the same delay before it commits, so two sessions that both saw
``existsTable`` answer false both create, and the second fails with the catalog's error, as on a
real server. Creates and their failures are counted per table.
"""
from __future__ import annotations

import bisect
import threading
import time
from collections import Counter

import numpy as np
import pandas as pd

from tests.ddbserver import codec as c
from tests.ddbserver.locks import Chunk, ChunkLocks
from tests.ddbserver.olap_cache import TSDB_CACHE_ROWS, OlapCacheEngine
from tests.ddbserver.store import Database, Store, StoreError, TableMeta

_DAY_UNITS = {c.DATE: 1, c.TIMESTAMP: 86_400_000, c.NANOTIMESTAMP: 86_400_000_000_000, c.DATETIME: 86_400}


def chunk_rows(path: str, table: str, meta: TableMeta, db: Database, incoming: c.Table) -> dict[Chunk, int]:
    """The rows ``incoming`` (columns by position, as tableInsert takes them) writes to each chunk."""
    if not meta.partition_columns:
        return {(path, table, 0, 0): incoming.rows}      # a dimension table is one chunk
    vectors = list(incoming.columns.values())
    names = [n for n, _ in meta.columns]
    day_col = meta.partition_columns[0]
    day_type = meta.type_of(day_col)
    days = np.asarray(vectors[names.index(day_col)].values).astype("i8") // _DAY_UNITS.get(day_type, 1)
    if len(meta.partition_columns) > 1:
        keys = vectors[names.index(meta.partition_columns[1])].values
        buckets = [bisect.bisect_right(db.key_bounds, k) for k in keys]
    else:
        buckets = [0] * len(days)
    counts = pd.DataFrame({"day": days, "bucket": buckets}).value_counts()
    return {(path, table, int(d), int(b)): int(n) for (d, b), n in counts.items()}


class Transactions:
    def __init__(self, store: Store, caches, faults):
        self.store = store
        self.faults = faults
        self.locks = ChunkLocks(faults.chunk_retry_s)
        self.olap = OlapCacheEngine(caches, faults.olap_cache_rows)
        self.tsdb = OlapCacheEngine(caches, TSDB_CACHE_ROWS, "flushTSDBCache")
        self._lock = threading.Lock()
        self.creates: Counter = Counter()            # "db/table" -> createPartitionedTable that succeeded
        self.create_errors: list[str] = []          # the messages of those that failed

    def insert(self, path: str, table: str, incoming: c.Table) -> int:
        """tableInsert / append! into a DFS table, inside a transaction holding its chunks."""
        meta = self.store.dfs_table(path, table)
        db = self.store.databases[path]
        rows = chunk_rows(path, table, meta, db, incoming)
        self.locks.retry_s = self.faults.chunk_retry_s
        with self.locks.transaction(rows, getattr(db, "atomic", "CHUNK")):
            inserted = self.store.insert(meta, incoming, db)
            if self.faults.write_delay > 0:
                time.sleep(self.faults.write_delay)
        self.olap.capacity_rows = self.faults.olap_cache_rows
        (self.tsdb if db.engine == "TSDB" else self.olap).write(rows)
        return inserted

    def create_table(self, path: str, name: str, columns: list[tuple[str, int]], parts: list[str]) -> None:
        """createPartitionedTable / createTable: committed after the write delay; a table that
        exists by then (whatever existsTable said before) is DolphinDB's catalog error."""
        time.sleep(self.faults.write_delay)     # the create takes its time: existsTable still says false
        try:
            self.store.create_table(path, name, columns, parts)
        except StoreError as exc:
            with self._lock:
                self.create_errors.append(str(exc))
            raise
        with self._lock:
            self.creates[f"{path}/{name}"] += 1

    def snapshot(self) -> dict:
        with self._lock:
            creates = {"tables": dict(self.creates), "errors": list(self.create_errors)}
        return {"locks": self.locks.snapshot(), "creates": creates, "olap_cache": self.olap.snapshot(),
                "tsdb_cache": self.tsdb.snapshot()}
