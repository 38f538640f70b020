"""Per-node caches of DFS partitions, so a test can tell a cold read from a warm one.

A partition is (database, table, day, key bucket), as the target's COMPO databases cut them. Each
partition lives on one data node (``holder``: spread by a stable hash; a single node holds all),
and a read through a session on node N goes where DolphinDB would take it:

- N a data node (or the single node): each partition is read on its holder, from that holder's
  cache when it is there, else from disk, which fills the holder's cache;
- N a compute node in a compute group: each partition is looked for in the group's cache (the
  group's node ``compute_holder`` keeps it), else pulled from its data node (whose cache is looked
  at and filled in turn) and then cached in the group.

Every read is logged: the node it came through, its kind (``plain``: a user's query; ``measured``:
a probe), how many partitions it touched and how many were found in some cache; ``cold`` is true
only when none was. ``clearAllCache`` empties a data node's cache and never a compute group's
(DolphinDB documents ``clearComputeNodeCache`` for those), which ``clear_compute`` empties.
"""
from __future__ import annotations

import threading
import time
import zlib
from typing import Iterable

from tests.ddbserver.syntax import ScriptError
from tests.ddbserver.topology import Node, Topology

Partition = tuple[str, str, int, int]          # database, table, day (days since epoch), key bucket


class Caches:
    def __init__(self, topology: Topology):
        self.topology = topology
        self.lock = threading.Lock()
        self.data: dict[str, set[Partition]] = {n.name: set() for n in topology.data_nodes}
        self.compute: dict[str, set[Partition]] = {n.name: set() for n in topology.nodes if n.caches_compute}
        self.reads: list[dict] = []
        self.host_pages = None             # host_pages.HostPages: the host's page cache, when modelled
        self.clears: list[dict] = []
        self.engines = []              # the OLAP and TSDB cache engines (olap_cache.py): fresh writes in memory

    @staticmethod
    def _spot(partition: Partition, count: int) -> int:
        return zlib.crc32(repr(partition).encode()) % count

    def holder(self, partition: Partition) -> str:
        nodes = self.topology.online_data_nodes     # a replica on an offline node is not read
        return nodes[self._spot(partition, len(nodes))].name

    def compute_holder(self, group: str, partition: Partition) -> str:
        members = [n.name for n in self.topology.nodes if n.caches_compute and n.group == group]
        return members[self._spot(partition, len(members))]

    def read(self, node: Node, partitions: Iterable[Partition], kind: str) -> dict:
        """Serve ``partitions`` for a query through ``node``; log and return what was found."""
        parts = sorted(set(partitions))
        hits = host_hits = 0
        with self.lock:
            for p in parts:
                found = False
                if node.caches_compute:
                    group_cache = self.compute[self.compute_holder(node.group, p)]
                    found = p in group_cache
                    group_cache.add(p)
                if not found:
                    disk = self.data[self.holder(p)]
                    found = p in disk or any(engine.holds(p) for engine in self.engines)
                    disk.add(p)
                    if not found and self.host_pages is not None:     # a read from disk, through the host's cache
                        host_hits += self.host_pages.read(p)
                hits += found
            entry = {"seq": len(self.reads), "node": node.name, "kind": kind, "partitions": len(parts),
                     "hits": hits, "cold": bool(parts) and hits == 0, "at": time.time()}
            if self.host_pages is not None:
                entry["host_cached"] = host_hits        # partitions read from disk found in the host's page cache
            self.reads.append(entry)
        return entry

    def clear_all_cache(self, nodes: list[Node], by: Node) -> None:
        """``clearAllCache`` run on ``nodes``: their data-node caches go; compute groups' stay."""
        with self.lock:
            for n in nodes:
                if n.stores:
                    self.data[n.name].clear()
            self.clears.append({"by": by.name, "function": "clearAllCache", "nodes": [n.name for n in nodes]})

    def clear_compute(self, nodes: list[Node], database: str, by: Node) -> None:
        """``clearComputeNodeCache(database)`` run on ``nodes``: each must be a grouped compute node."""
        with self.lock:
            for n in nodes:
                if not n.caches_compute:
                    raise ScriptError(f"clearComputeNodeCache can only be called on a compute node of a "
                                      f"compute group; {n.name} is not one")
            for n in nodes:
                self.compute[n.name] = {p for p in self.compute[n.name] if p[0] != database}
            self.clears.append({"by": by.name, "function": "clearComputeNodeCache",
                                "nodes": [n.name for n in nodes], "database": database})

    def default_pnode_targets(self, by: Node) -> list[Node]:
        """Where ``pnodeRun(f)`` runs without a node list (DolphinDB's pnodeRun docs): on a compute
        node of a group, every compute node of that group; elsewhere every data node and every
        compute node outside a group."""
        if by.caches_compute:
            return [n for n in self.topology.nodes if n.caches_compute and n.group == by.group]
        return [n for n in self.topology.nodes if n.stores or (n.mode == 4 and not n.group)]
