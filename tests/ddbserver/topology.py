"""The fake deployment's self-description: nodes, version, getClusterPerf."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tests.ddbserver import codec as c

CONTROLLER, DATA, SINGLE = 2, 0, 3       # getClusterPerf's mode column
VERSION = "3.00.1 2024.06.01 tickbench-test-server"


@dataclass
class Node:
    name: str
    mode: int          # 0 data node, 2 controller, 3 single
    port: int


class Topology:
    def __init__(self, nodes: list[Node], version: str | None = None):
        self.nodes = nodes
        self.version = version or VERSION

    def cluster_perf(self, node: Node, connections: dict) -> c.Table:
        return self._perf_table(connections)

    def _perf_table(self, connections: dict) -> c.Table:
        nodes = self.nodes
        cols = {
            "host": c.Vector(c.STRING, np.array(["127.0.0.1"] * len(nodes), dtype=object)),
            "port": c.Vector(c.INT, np.array([n.port for n in nodes], dtype="i4")),
            "site": c.Vector(c.STRING, np.array([f"127.0.0.1:{n.port}:{n.name}" for n in nodes], dtype=object)),
            "mode": c.Vector(c.INT, np.array([n.mode for n in nodes], dtype="i4")),
            "state": c.Vector(c.BOOL, np.ones(len(nodes), dtype="i1")),
            "name": c.Vector(c.STRING, np.array([n.name for n in nodes], dtype=object)),
            "memoryUsed": c.Vector(c.LONG, np.array([(i + 1) << 20 for i in range(len(nodes))], dtype="i8")),
            "cpuUsage": c.Vector(c.DOUBLE, np.array([1.5 * (i + 1) for i in range(len(nodes))])),
            "connectionNum": c.Vector(c.INT, np.array([connections.get(n.port, 0) for n in nodes], dtype="i4")),
        }
        return c.Table("", cols)
