"""DolphinDB cluster profiles: where the nodes are, how to log in, which node each worker uses.

A ``ClusterProfile`` is plain data (saved without its password: the password is passed at run
time or kept in the OS keyring by the app). ``test_connection`` gives a clear verdict within a few
seconds; ``discover_nodes`` reads the topology with ``rpc(getControllerAlias(), getClusterPerf,
true)`` (DolphinDB 2.x answers getClusterPerf only on the controller), and says when it could only
describe the one node it asked (not a cluster). A node is reached at its ``publicName`` when the
cluster reports one (the address its clients are meant to use), else at its ``host`` (what the
node calls itself: often ``localhost`` or a LAN name). ``pick_node`` spreads workers over nodes.

Users go to data nodes (report 002: "a random data node"), never to compute nodes unless the profile
says so (``use_compute_nodes``: then to its compute nodes instead). Set-up, footprints and clears
always run on a data node: on a compute node of a compute group ``pnodeRun`` reaches only its group,
which holds no tablets.

PROTOCOL_PICKLE: the ``dolphindb`` client (3.0.x, ``config.py``) turns it into PROTOCOL_DDB on
Python 3.13 and later without a word, so a run there would say PICKLE and measure DDB.
``client_protocol`` refuses PICKLE there with a one-line reason instead (``pickle_refusal``
decides, the way the client does); Tickbench never labels a DDB figure PICKLE.
"""
from __future__ import annotations

import datetime as dt
import random
import socket
import sys
import time
from dataclasses import asdict, dataclass, field, replace
from typing import Any

ROLES = ("controller", "data", "compute", "single")
PROTOCOLS = ("DDB", "PICKLE", "ARROW")
NODE_POLICIES = ("one", "round_robin", "random")
VERDICTS = ("ok", "refused", "timed_out", "wrong_password", "not_initialised", "error")
# getClusterPerf's ``mode`` column (DolphinDB docs): 0 data, 1 agent, 2 controller, 3 single, 4 compute
MODE_NAMES = {0: "data", 1: "agent", 2: "controller", 3: "single", 4: "compute"}


@dataclass(frozen=True)
class Node:
    host: str
    port: int
    role: str = "single"

    def __post_init__(self) -> None:
        if not isinstance(self.host, str) or not self.host.strip() or any(ch.isspace() for ch in self.host):
            raise ValueError(f"node host {self.host!r} is empty or holds spaces")
        if isinstance(self.port, bool) or not isinstance(self.port, int) or not 1 <= self.port <= 65535:
            raise ValueError(f"node {self.host}: port {self.port!r} is not between 1 and 65535")
        if self.role not in ROLES:
            raise ValueError(f"node {self.host}:{self.port}: role {self.role!r} is not one of {', '.join(ROLES)}")

    @property
    def address(self) -> str:
        return f"{self.host}:{self.port}"


@dataclass(frozen=True)
class ClusterProfile:
    name: str
    nodes: tuple[Node, ...]
    user: str = "admin"
    password: str = field(default="", repr=False, compare=False)
    protocol: str = "DDB"
    compress: bool = False
    node_policy: str = "one"
    use_compute_nodes: bool = False     # route users to the compute nodes instead of the data nodes

    def __post_init__(self) -> None:
        object.__setattr__(self, "nodes", tuple(self.nodes))
        if not self.nodes:
            raise ValueError(f"profile {self.name!r} has no nodes")
        if self.use_compute_nodes and not self.compute_nodes:
            raise ValueError(f"profile {self.name!r} routes users to compute nodes but lists none; add the "
                             "compute nodes (role compute) or turn use_compute_nodes off")
        if not self.use_compute_nodes and self.compute_nodes and not self.data_nodes:
            raise ValueError(f"profile {self.name!r} lists compute nodes but no data node: list the data nodes "
                             "(users go to data nodes), or turn use_compute_nodes on to route users through "
                             "the compute nodes")
        if self.protocol not in PROTOCOLS:
            raise ValueError(f"profile {self.name!r}: protocol {self.protocol!r} is not one of {', '.join(PROTOCOLS)}")
        if self.node_policy not in NODE_POLICIES:
            raise ValueError(f"profile {self.name!r}: node policy {self.node_policy!r} is not one of "
                             f"{', '.join(NODE_POLICIES)}")
        if self.compress and self.protocol != "DDB":
            # the client refuses ARROW with compression and silently ignores it under PICKLE
            raise ValueError(f"profile {self.name!r}: compression works only with the DDB protocol, "
                             f"not with {self.protocol}; turn compression off or choose DDB")

    @property
    def data_nodes(self) -> tuple[Node, ...]:
        """Nodes listed that hold the data: data and single nodes. None when only a controller or
        compute nodes are listed: the target then asks the cluster for its data nodes (a
        controller serves no query of a user)."""
        return tuple(n for n in self.nodes if n.role in ("data", "single"))

    @property
    def compute_nodes(self) -> tuple[Node, ...]:
        return tuple(n for n in self.nodes if n.role == "compute")

    @property
    def user_nodes(self) -> tuple[Node, ...]:
        """Where users are routed: the data nodes, or the compute nodes when the profile says so."""
        return self.compute_nodes if self.use_compute_nodes else self.data_nodes

    @property
    def entry(self) -> Node:
        """Where to connect for cluster-wide calls: the controller if listed, else the first node."""
        return next((n for n in self.nodes if n.role == "controller"), self.nodes[0])

    def with_password(self, password: str) -> "ClusterProfile":
        return replace(self, password=password)

    def to_dict(self) -> dict[str, Any]:
        """Plain data for settings and run records; the password is never included."""
        data = asdict(self)
        data.pop("password")
        data["nodes"] = [asdict(n) for n in self.nodes]
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any], password: str = "") -> "ClusterProfile":
        name = str(data.get("name", "cluster"))
        nodes = []
        for i, n in enumerate(data.get("nodes") or [], start=1):
            if not isinstance(n, dict) or "host" not in n or "port" not in n:
                raise ValueError(f"cluster profile {name!r}: node {i} needs a host and a port")
            try:
                port = int(n["port"])
            except (TypeError, ValueError):
                raise ValueError(f"cluster profile {name!r}: node {i} port {n['port']!r} is not a number") from None
            nodes.append(Node(str(n["host"]).strip(), port, str(n.get("role", "single"))))
        return cls(
            name=name, nodes=tuple(nodes), user=str(data.get("user", "admin")),
            password=password or str(data.get("password", "")),
            protocol=str(data.get("protocol", "DDB")).upper(), compress=bool(data.get("compress", False)),
            node_policy=str(data.get("node_policy", "one")),
            use_compute_nodes=_flag(data.get("use_compute_nodes", False)),
        )

    @classmethod
    def single(cls, host: str, port: int, user: str = "admin", password: str = "", **kw) -> "ClusterProfile":
        return cls(name=kw.pop("name", f"{host}:{port}"), nodes=(Node(host, int(port), "single"),),
                   user=user, password=password, **kw)


def _flag(value) -> bool:
    """A yes/no setting as a profile file or a flag may spell it ("false" is no)."""
    return value if isinstance(value, bool) else str(value).strip().lower() in ("1", "true", "yes", "on")


@dataclass(frozen=True)
class Verdict:
    ok: bool
    kind: str            # one of VERDICTS
    message: str
    server_version: str = ""


@dataclass(frozen=True)
class NodeInfo:
    name: str
    mode: str
    host: str              # where clients reach it: publicName when reported, else host
    port: int
    state: bool
    cpu_percent: float
    memory_used: int
    connections: int
    lan_host: str = ""     # getClusterPerf's host column, as reported
    compute_group: str = ""


def pickle_refusal(version_info=None) -> str:
    """Why PROTOCOL_PICKLE cannot be used here, or "" when it can. The dolphindb client decides
    with ``sys.version_info.minor >= 13`` (its ``config.py``, ``ConnectionSetting``), so this
    reads the same field of the same object."""
    info = sys.version_info if version_info is None else version_info
    if info.minor >= 13:
        return (f"PICKLE is not available on Python {info.major}.{info.minor}: the dolphindb client "
                "sends DDB instead without saying so; choose DDB or ARROW (or run Tickbench on "
                "Python 3.12 or older)")
    return ""


class ProtocolRefused(ValueError):
    """The profile asks for a protocol the installed client would silently replace."""


def protocol_constant(protocol: str) -> int:
    """The client's constant for ``protocol``; ``ProtocolRefused`` when the client would use
    another one instead (PICKLE on Python >= 3.13)."""
    import dolphindb.settings as keys

    if protocol == "PICKLE" and pickle_refusal():
        raise ProtocolRefused(pickle_refusal())
    return {"DDB": keys.PROTOCOL_DDB, "PICKLE": keys.PROTOCOL_PICKLE,
            "ARROW": keys.PROTOCOL_ARROW}[protocol]


def open_session(profile: ClusterProfile, node: Node, timeout: float = 10.0, net_timeout: float | None = None,
                 metadata: bool = False):
    """A logged-in ``dolphindb.session`` on ``node``; raises ConnectionError with the reason.

    ``timeout`` bounds connecting and each reply (socket receive timeout); use a long one for
    sessions that run big queries. ``metadata``: a plain DDB session without compression whatever
    the profile says, for set-up and metadata calls that expect DataFrames and scalars (under
    PROTOCOL_ARROW tables come back as pyarrow Tables).
    """
    import dolphindb as ddb

    protocol = "DDB" if metadata else profile.protocol
    try:
        constant = protocol_constant(protocol)
    except ProtocolRefused as exc:
        raise ConnectionError(str(exc)) from None
    session = ddb.session(compress=profile.compress and not metadata, protocol=constant,
                          show_output=False)
    ok = session.connect(node.host, node.port, profile.user, profile.password,
                         timeout=dt.timedelta(seconds=timeout),
                         netTimeout=dt.timedelta(seconds=net_timeout or min(timeout, 10.0)))
    if not ok:
        session.close()
        verdict = test_connection(profile, node, timeout=min(timeout, 5.0))
        raise ConnectionError(verdict.message)
    return session


def test_connection(profile: ClusterProfile, node: Node | None = None, timeout: float = 3.0) -> Verdict:
    """Try ``node`` (default: the profile's entry node) and say what is wrong, within ~2 x timeout."""
    from workloads.targets.dolphindb.wire import RawConnection, WireError

    node = node or profile.entry
    where = node.address
    # 1. TCP alone tells refused from timed out (and names an unknown host)
    try:
        probe = socket.create_connection((node.host, node.port), timeout=timeout)
        probe.close()
    except ConnectionRefusedError:
        return Verdict(False, "refused", f"{where} refused the connection: is DolphinDB running on that port?")
    except socket.timeout:
        return Verdict(False, "timed_out", f"{where} did not accept a connection within {timeout:g} s")
    except OSError as exc:
        return Verdict(False, "error", f"cannot reach {where}: {exc.strerror or exc}")
    # 2. log in over the bare protocol: a login error and silence are told apart here
    try:
        raw = RawConnection(node.host, node.port, profile.user, profile.password, timeout=timeout)
        raw.close()
    except WireError as exc:
        text = str(exc)
        if "timed out" in text:
            return Verdict(False, "timed_out", f"{where} accepted the connection but did not answer within "
                                               f"{timeout:g} s")
        if "login" in text and "RefId:S00006" not in text:     # S00006: the node's connection limit
            return Verdict(False, "wrong_password", f"{where} refused the login of user {profile.user!r}: "
                                                    f"{text.split(': ', 1)[-1]}")
        return Verdict(False, "error", f"{where}: {text.split(' failed: ', 1)[-1]}")
    # 3. the real client: it also checks that the node is initialised
    import dolphindb as ddb

    try:
        constant = protocol_constant(profile.protocol)
    except ProtocolRefused as exc:
        return Verdict(False, "error", str(exc))
    session = ddb.session(compress=profile.compress, protocol=constant, show_output=False)
    started = time.monotonic()
    try:
        ok = session.connect(node.host, node.port, profile.user, profile.password,
                             timeout=dt.timedelta(seconds=timeout), netTimeout=dt.timedelta(seconds=timeout))
        if not ok:
            return Verdict(False, "not_initialised",
                           f"{where} accepted the login but the client refused the node: it is not "
                           "initialised yet (isNodeInitialized() is false) or asks for a newer API")
        version = str(session.run("version()"))
    except RuntimeError as exc:
        if time.monotonic() - started >= 0.9 * timeout:   # the client gave up on a slow reply
            return Verdict(False, "timed_out", f"{where} accepted the login but did not answer within "
                                               f"{timeout:g} s")
        return Verdict(False, "error", f"{where}: {_server_text(exc)}")
    finally:
        session.close()
    return Verdict(True, "ok", f"connected to {where} as {profile.user!r}, DolphinDB {version}", version)


test_connection.__test__ = False  # a public API named test_*: keep pytest from collecting it


def _server_text(exc: BaseException) -> str:
    """The server's own message out of the client's exception text."""
    text = str(exc)
    marker = "Server Response: '"
    if marker in text:
        return text.split(marker, 1)[1].split("' script:", 1)[0].rstrip("'")
    return text.strip()


@dataclass(frozen=True)
class Discovery:
    """What a node said of its cluster: every node (``from_cluster``), or only itself."""

    nodes: list[NodeInfo]
    from_cluster: bool
    note: str = ""


def discover_nodes(profile: ClusterProfile, timeout: float = 5.0) -> Discovery:
    """Every node with its load, asked of the entry node through ``rpc(getControllerAlias(),
    getClusterPerf, true)``; only the entry node's own description when it is not part of a
    cluster (no controller to ask)."""
    from workloads.targets.dolphindb import scripts

    session = open_session(profile, profile.entry, timeout=timeout, metadata=True)
    try:
        try:
            perf = session.run(scripts.cluster_perf())
        except RuntimeError as exc:
            alias = str(session.run(scripts.node_alias()))
            node = profile.entry
            return Discovery([NodeInfo(alias, "single", node.host, node.port, True, 0.0, 0, 0)], False,
                             f"{node.address} answered as a single node ({_server_text(exc)})")
        return Discovery([node_info(row) for row in perf.to_dict("records")], True)
    finally:
        session.close()


def node_info(row: dict) -> NodeInfo:
    """One getClusterPerf row; the node is reached at its publicName when it has one."""
    mode = MODE_NAMES.get(int(row.get("mode", 3)), str(row.get("mode")))
    lan_host = _text(row.get("host"))
    public = _text(row.get("publicName"))
    return NodeInfo(
        name=_text(row.get("name")), mode=mode, host=public or lan_host, port=int(row.get("port", 0)),
        state=bool(row.get("state", True)), cpu_percent=float(row.get("cpuUsage", 0.0) or 0.0),
        memory_used=int(row.get("memoryUsed", 0) or 0), connections=int(row.get("connectionNum", 0) or 0),
        lan_host=lan_host, compute_group=_text(row.get("computeGroup")))


def _text(value) -> str:
    """A STRING cell as text: the client gives an empty one as None (or NaN in a frame)."""
    if value is None or (isinstance(value, float) and value != value):
        return ""
    return str(value).strip()


def profile_from_discovery(profile: ClusterProfile, discovery: Discovery) -> ClusterProfile:
    """The profile with its node list replaced by what the cluster reported (agents left out),
    each node at its publicName when it has one, else its host; unchanged when the node could
    only describe itself: a fallback never rewrites a profile."""
    if not discovery.from_cluster:
        return profile
    nodes = discovery.nodes
    roles = {"data": "data", "controller": "controller", "compute": "compute", "single": "single"}
    listed = tuple(Node(n.host, n.port, roles[n.mode]) for n in nodes if n.mode in roles and n.state)
    return replace(profile, nodes=listed or profile.nodes)


def pick_node(profile: ClusterProfile, worker_index: int, seed: int = 0,
              nodes: tuple[Node, ...] | None = None) -> Node:
    """The node worker ``worker_index`` talks to, of ``nodes`` (those online; default the profile's
    user nodes): ``one`` = the first for everyone, ``round_robin`` = each in turn, ``random`` = a
    seeded random one per worker (compute nodes instead of data nodes only when the profile says
    ``use_compute_nodes``)."""
    nodes = nodes or profile.user_nodes
    if profile.node_policy == "one":
        return nodes[0]
    if profile.node_policy == "round_robin":
        return nodes[worker_index % len(nodes)]
    return nodes[random.Random(f"{seed}:{worker_index}").randrange(len(nodes))]
