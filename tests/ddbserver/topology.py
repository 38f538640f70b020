"""The fake deployment's self-description: nodes, version, getClusterPerf, controller alias, rpc,
and its replication factor (how many copies of each tablet getTabletsMeta lists).

DolphinDB 2.x runs ``getClusterPerf`` only on the controller (or a single-mode node); 3.x runs it
on any node. ``rpc(getControllerAlias(), getClusterPerf, true)`` reaches the controller from
anywhere, and fails on a single-mode node, whose controller alias is empty.

Compute nodes (mode 4, 3.x) may belong to a compute group (the ``computeGroup`` column); only
grouped compute nodes cache data (DolphinDB 3.00.2's storage-compute separation). ``host`` is
what the node calls itself (``perf_host``: often a LAN name or localhost on a real cluster) and
``publicName`` what clients outside should use (empty when not configured), as getClusterPerf
reports them; ``maxConnections`` is the per-node connection limit (0: none, reported as 512).

A node taken offline (``online`` false) is reported with ``state`` 0 and refuses connections; a
``pnodeRun`` naming it fails (``reachable``). DolphinDB's own wording for that error was not found
in its documentation: ``OFFLINE_MESSAGE`` is this server's.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tests.ddbserver import codec as c
from tests.ddbserver.syntax import ScriptError

CONTROLLER, DATA, SINGLE, COMPUTE = 2, 0, 3, 4       # getClusterPerf's mode column
VERSIONS = {2: "2.00.12 2024.03.14 tickbench-test-server", 3: "3.00.1 2024.06.01 tickbench-test-server"}
# What a 2.x data node answers (reported by a user of a real 2.x cluster)
PERF_ON_DATA_NODE = "Only master or single mode supports function getClusterPerf"
DEFAULT_MAX_CONNECTIONS = 512
OFFLINE_MESSAGE = "Failed to connect to node [{alias}]: the node is offline."


@dataclass
class Node:
    name: str
    mode: int          # 0 data node, 2 controller, 3 single, 4 compute
    port: int
    group: str = ""    # a compute node's compute group ("" : none)
    online: bool = True

    @property
    def stores(self) -> bool:
        """Holds DFS data (and so a data-node cache): data nodes and a single node."""
        return self.mode in (DATA, SINGLE)

    @property
    def caches_compute(self) -> bool:
        """A compute node in a compute group: it caches the data its queries pulled."""
        return self.mode == COMPUTE and bool(self.group)


class Topology:
    def __init__(self, nodes: list[Node], major: int = 3, version: str | None = None, replicas: int = 1,
                 perf_host: str = "127.0.0.1", public_name: str = "", max_connections: int = 0):
        if major not in VERSIONS:
            raise ValueError(f"server major version {major} is not supported (2 or 3)")
        if replicas < 1:
            raise ValueError("replicas must be at least 1")
        if major == 2 and any(n.mode == COMPUTE and n.group for n in nodes):
            raise ValueError("compute groups are a DolphinDB 3.x feature")
        self.nodes = nodes
        self.major = major
        self.version = version or VERSIONS[major]
        self.replicas = replicas          # dfsReplicationFactor: tablet copies getTabletsMeta reports
        self.perf_host = perf_host
        self.public_name = public_name
        self.max_connections = max_connections

    @property
    def controller(self) -> Node | None:
        return next((n for n in self.nodes if n.mode == CONTROLLER), None)

    @property
    def data_nodes(self) -> list[Node]:
        return [n for n in self.nodes if n.stores]

    @property
    def online_data_nodes(self) -> list[Node]:
        """The data nodes that serve reads: a partition's replica on an offline node is not read."""
        return [n for n in self.nodes if n.stores and n.online]

    def node(self, alias: str) -> Node:
        for n in self.nodes:
            if n.name == alias:
                return n
        raise ScriptError(f"The node alias [{alias}] does not exist.")

    def reachable(self, alias: str) -> Node:
        """The node ``alias`` as a pnodeRun node list names it: it must be online."""
        node = self.node(alias)
        if not node.online:
            raise ScriptError(OFFLINE_MESSAGE.format(alias=alias))
        return node

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
        host = self.perf_host
        strings = lambda values: c.Vector(c.STRING, np.array(values, dtype=object))  # noqa: E731
        ints = lambda values: c.Vector(c.INT, np.array(values, dtype="i4"))  # noqa: E731
        cols = {
            "host": strings([host] * len(nodes)),
            "port": ints([n.port for n in nodes]),
            "site": strings([f"{host}:{n.port}:{n.name}" for n in nodes]),
            "mode": ints([n.mode for n in nodes]),
            "state": c.Vector(c.BOOL, np.array([n.online for n in nodes], dtype="i1")),
            "maxConnections": ints([self.max_connections or DEFAULT_MAX_CONNECTIONS] * len(nodes)),
            "name": strings([n.name for n in nodes]),
            "memoryUsed": c.Vector(c.LONG, np.array([(i + 1) << 20 for i in range(len(nodes))], dtype="i8")),
            "cpuUsage": c.Vector(c.DOUBLE, np.array([1.5 * (i + 1) for i in range(len(nodes))])),
            "connectionNum": ints([connections.get(n.port, 0) for n in nodes]),
            "publicName": strings([self.public_name] * len(nodes)),
        }
        if self.major >= 3:
            cols = {"computeGroup": strings([n.group for n in nodes]), **cols}
        return c.Table("", cols)
