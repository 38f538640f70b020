"""The fake deployment's self-description: nodes, version, getClusterPerf, controller alias, rpc,
and its replication factor (how many copies of each tablet getTabletsMeta lists).

DolphinDB 2.x runs ``getClusterPerf`` only on the controller (or a single-mode node); 3.x runs it
on any node. ``rpc(getControllerAlias(), getClusterPerf, true)`` reaches the controller from
anywhere, and fails on a single-mode node, whose controller alias is empty.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tests.ddbserver import codec as c
from tests.ddbserver.syntax import ScriptError

CONTROLLER, DATA, SINGLE = 2, 0, 3       # getClusterPerf's mode column
VERSIONS = {2: "2.00.12 2024.03.14 tickbench-test-server", 3: "3.00.1 2024.06.01 tickbench-test-server"}
# What a 2.x data node answers (reported by a user of a real 2.x cluster)
PERF_ON_DATA_NODE = "Only master or single mode supports function getClusterPerf"


@dataclass
class Node:
    name: str
    mode: int          # 0 data node, 2 controller, 3 single
    port: int


class Topology:
    def __init__(self, nodes: list[Node], major: int = 3, version: str | None = None, replicas: int = 1):
        if major not in VERSIONS:
            raise ValueError(f"server major version {major} is not supported (2 or 3)")
        if replicas < 1:
            raise ValueError("replicas must be at least 1")
        self.nodes = nodes
        self.major = major
        self.version = version or VERSIONS[major]
        self.replicas = replicas          # dfsReplicationFactor: tablet copies getTabletsMeta reports

    @property
    def controller(self) -> Node | None:
        return next((n for n in self.nodes if n.mode == CONTROLLER), None)

    def controller_alias(self) -> str:
        controller = self.controller
        return controller.name if controller else ""

    def cluster_perf(self, node: Node, connections: dict) -> c.Table:
        if self.major == 2 and node.mode == DATA:
            raise ScriptError(PERF_ON_DATA_NODE)
        return self._perf_table(connections)

    def rpc_cluster_perf(self, connections: dict) -> c.Table:
        alias = self.controller_alias()
        if not alias:
            raise ScriptError(f"rpc: the node alias [{alias}] does not exist.")
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
