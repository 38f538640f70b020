"""The OLAP cache engine: fresh writes held in memory, not on disk, until flushed.

With the cache engine on (``chunkCacheEngineMemSize``, ``setOLAPCacheEngineSize``; DolphinDB's
deployment tutorials turn it on), "the system will first write the data to the cache. Only when the
amount of cached data reaches 30% of chunkCacheEngineMemSize will it be written to disk", or when
``flushOLAPCache()`` flushes "the data of completed transactions" (DolphinDB's function reference).
So a read of data still in the cache engine comes from memory: ``clearAllCache`` does not make it
cold, and it never counts as a read from disk (caches.py asks ``holds``).

The size is counted in rows here (``capacity_rows``, 0: the engine off, the default, so the test
server's other reads stay as they were). Each node's engine holds the partitions its node stores;
``flushOLAPCache`` runs on the node it is called on (through ``pnodeRun`` on each data node), and
each flush is logged in the caches' ``clears`` log, in order with the clears. With the engine off,
``flushOLAPCache`` is refused. A TSDB database's writes go to its own cache engine, always on, that
``flushTSDBCache`` flushes (``clearAllCache`` leaves it, as it leaves the OLAP one).
"""
from __future__ import annotations

from tests.ddbserver.syntax import ScriptError

Partition = tuple[str, str, int, int]          # database, table, day (days since epoch), key bucket
FLUSH_SHARE = 0.3                              # written to disk when 30 % full


OFF = "The OLAP cache engine is not enabled (chunkCacheEngineMemSize is 0): flushOLAPCache has nothing to flush."
TSDB_CACHE_ROWS = 10_000_000                   # the TSDB engine's cache is always on (TSDBCacheEngineSize)


class OlapCacheEngine:
    """One cache engine: the OLAP one (off unless sized) or, with ``function="flushTSDBCache"``,
    a TSDB database's, which is always on and holds each write until flushed (or 30 % full)."""

    def __init__(self, caches, capacity_rows: int = 0, function: str = "flushOLAPCache"):
        self.caches = caches                    # caches.py's Caches: holders, lock and clears log
        self.capacity_rows = capacity_rows
        self.function = function
        self.held: dict[str, dict[Partition, int]] = {n.name: {} for n in caches.topology.data_nodes}
        self.flushes = 0                        # flushOLAPCache calls
        self.full_flushes = 0                   # flushes because 30 % of the capacity was reached

    def write(self, rows: dict[Partition, int]) -> None:
        """A committed write's rows per partition: held by each partition's node while the engine
        is on; a node whose engine reaches 30 % of its capacity writes everything to disk."""
        if self.capacity_rows <= 0:
            return
        with self.caches.lock:
            for partition, count in rows.items():
                node = self.held[self.caches.holder(partition)]
                node[partition] = node.get(partition, 0) + count
            for name, node in self.held.items():
                if sum(node.values()) >= FLUSH_SHARE * self.capacity_rows:
                    node.clear()
                    self.full_flushes += 1

    def holds(self, partition: Partition) -> bool:
        """Whether the partition has rows still in its node's cache engine (call with the caches' lock)."""
        return partition in self.held.get(self.caches.holder(partition), {})

    def flush(self, nodes, by) -> None:
        """``flushOLAPCache()`` (``flushTSDBCache()``) run on ``nodes``: each data node's held rows go
        to disk; refused where the OLAP engine is off, as DolphinDB documents it for an engine on."""
        if self.capacity_rows <= 0:
            raise ScriptError(OFF)
        with self.caches.lock:
            flushed = 0
            for n in nodes:
                if n.stores:             # a compute node writes nothing: its flush has nothing to do
                    flushed += len(self.held[n.name])
                    self.held[n.name].clear()
            self.flushes += 1
            self.caches.clears.append({"by": by.name, "function": self.function,
                                       "nodes": [n.name for n in nodes], "partitions": flushed})

    def snapshot(self) -> dict:
        with self.caches.lock:
            return {"capacity_rows": self.capacity_rows, "flushes": self.flushes,
                    "full_flushes": self.full_flushes,
                    "held": {name: len(node) for name, node in self.held.items()},
                    "held_rows": sum(sum(node.values()) for node in self.held.values())}
