"""Sessions on DolphinDB nodes, and the shared objects a run leaves on them.

Set-up and metadata (prepare, footprint, node discovery) use plain DDB sessions whatever the
profile's protocol; a worker holds one session on the node the policy gives it, and a bare
socket (``wire.RawConnection``) opened at its first probe, never before: a run without probes
(report 002's) holds one session per user on its node.

Nothing of a run stays on the server. Every object it shares is named ``tickbench_...``: a
probe's result (``tickbench_w<worker>_<pid>_<random>_<n>``, one name per probe) is created inside the probe's
``try/finally`` and undefined on every path, through a fresh session when the probe's own was
lost (a reply lost or timed out); the upload sweep's table (``tickbench_upload_w...``, one per
worker, shared on its node) is undefined when the worker closes. What a killed worker or a query
still running past its client's timeout leaves behind, ``prepare`` sweeps: it undefines every
``tickbench_`` object in the shared namespace (``objs(true)``) of every data node (and every node
users may be routed to), so two runs against one cluster at the same time would disturb each
other (they would anyway).

A reply lost or timed out leaves its job running on the server: before any clean-up, the job is
cancelled (``getConsoleJobs`` for the lost session's id, ``cancelConsoleJob``, DolphinDB's way to
stop another session's interactive job) and waited for, so a probe's result is never shared after
its clean-up. DolphinDB cancels a job only between its sub-tasks: one that does not end within
``timeout`` is said in ``cancel_note`` and left to the next sweep.

Every ``session.run`` carries the run's job priority and parallelism (``priority``/``parallelism``
config keys; default the client's own 4 and 64, the reproduced reports 2 as their API sent).
"""
from __future__ import annotations

import os
import time

from workloads.targets.base import Layout, TargetError
from workloads.targets.dolphindb import quote as q
from workloads.targets.dolphindb import console_jobs, scripts
from workloads.targets.dolphindb.cluster import Node, _server_text, discover_nodes, open_session, pick_node
from workloads.targets.dolphindb.wire import RawConnection, WireError

OBJECT_PREFIX = "tickbench_"           # every object a run shares on a node is named so
UPLOAD_PREFIX = "tickbench_upload_"
CHECK_CLOSE_S = 1.0                    # how long the pre-login check waits for the server to let go
CANCEL_POLL_S = 0.05                   # how often a cancelled job is looked for until it has gone
LOST = "connection lost or reply timed out"
# the dolphindb client's own defaults for session.run (3.0.x ``session.run`` docstring); up to API
# 1.30.22 it sent parallelism 2, DolphinDB's default for an interactive job (job-management tutorial)
CLIENT_PRIORITY, CLIENT_PARALLELISM = 4, 64
MAX_PRIORITY = 8                       # a user's cap can be set to 0-8 (setMaxJobPriority): 9 is never granted
REPORTS_PARALLELISM = 2


def job_setting(config: dict, key: str, default: int, low: int, high: int) -> int:
    """A job priority or parallelism from the target config, checked against DolphinDB's range."""
    value = config.get(key)
    if value is None or value == "":
        return default
    try:
        number = int(value)
        whole = not isinstance(value, bool) and float(value) == number
    except (TypeError, ValueError):
        whole = False
    if not whole:
        raise TargetError(f"DolphinDB {key} {value!r} is not a whole number")
    if not low <= number <= high:
        raise TargetError(f"DolphinDB {key} {value!r} is not between {low} and {high}")
    return number


def scheduling_note(priority: int, parallelism: int) -> str:
    """Whose defaults these are, for the run's record."""
    if (priority, parallelism) == (CLIENT_PRIORITY, CLIENT_PARALLELISM):
        return "; the client's defaults"
    if parallelism == REPORTS_PARALLELISM:
        return "; parallelism 2 as the reports' API sent it (before 1.30.22) and DolphinDB's job default"
    return ""


class DolphinDBConnection:
    """Sessions, the probe's bare socket and the sweep of shared objects (a mixin of
    ``DolphinDBTarget``)."""

    # --- sessions ------------------------------------------------------------------------------
    def _connect(self, node: Node, metadata: bool = False):
        """A client session on ``node``; clear errors when it fails.

        An anonymous handshake over a bare socket comes first and is closed before the login:
        it tells refused and silent apart within ``timeout``, where the client would wait for
        ``query_timeout``; a wrong password or a full node is then told by the client's login."""
        try:
            check = RawConnection(node.host, node.port, protocol="DDB", timeout=self.timeout)
        except WireError as exc:
            raise TargetError(f"DolphinDB at {node.address}: {exc}") from None
        check.close(wait_s=min(self.timeout, CHECK_CLOSE_S))
        try:
            return open_session(self.profile, node, timeout=self.query_timeout, net_timeout=self.timeout,
                                metadata=metadata)
        except ConnectionError as exc:
            raise TargetError(f"DolphinDB at {node.address}: {exc}") from None

    def _admin_session(self, node: Node | None = None):
        """A short-lived DDB session for parent-side work (prepare, footprint, describe), on a
        data node unless ``node`` is given."""
        node = node or self._admin_node()
        return self._connect(node, metadata=True), node

    def _admin_node(self) -> Node:
        """The first data node listed and online, else (a profile of compute nodes or a controller
        only) the first the cluster reports online: never a compute node, where pnodeRun reaches
        only its group."""
        nodes = self._online(self.profile.data_nodes) or self._reported_data_nodes()
        if not nodes:
            raise TargetError(f"DolphinDB cluster {self.profile.name!r}: no data node is listed and none is "
                              "reported online; list a data node in the profile")
        return nodes[0]

    def _online(self, nodes: tuple[Node, ...]) -> tuple[Node, ...]:
        """``nodes`` less those the cluster reports offline (getClusterPerf's ``state``, asked of
        the entry node now: a node down when a plan was made may be back); as listed where there
        is no cluster to ask."""
        if not nodes:
            return nodes
        try:
            discovery = discover_nodes(self.profile, timeout=self.timeout)
        except (ConnectionError, RuntimeError):
            return nodes                       # nobody to ask: the connect says what is wrong
        if not discovery.from_cluster:
            return nodes
        down = {(n.port, host) for n in discovery.nodes if not n.state for host in (n.host, n.lan_host)}
        down_ports = {n.port for n in discovery.nodes if not n.state}
        return tuple(n for n in nodes if (n.port, n.host) not in down and not (
            n.port in down_ports and not any(i.port == n.port and i.state for i in discovery.nodes)))

    def _user_nodes(self) -> tuple[Node, ...]:
        """Where users go: the profile's user nodes online, else (a controller listed alone) the
        data nodes the cluster reports online."""
        return self._online(self.profile.user_nodes) or (
            () if self.profile.use_compute_nodes else self._reported_data_nodes())

    def _reported_data_nodes(self) -> tuple[Node, ...]:
        """The data nodes getClusterPerf reports online (asked of the entry node once)."""
        if self._cluster_data_nodes is None:
            try:
                discovery = discover_nodes(self.profile, timeout=self.timeout)
            except (ConnectionError, RuntimeError) as exc:
                raise TargetError(f"DolphinDB at {self.profile.entry.address}: {_server_text(exc)}") from None
            self._cluster_data_nodes = tuple(Node(n.host, n.port, "data") for n in discovery.nodes
                                             if n.mode == "data" and n.state) if discovery.from_cluster else ()
        return self._cluster_data_nodes

    def _run(self, session, node: Node, script: str, *args):
        """``session.run`` with the run's job priority and parallelism; a lost or timed-out reply
        of a worker's session cancels the job it leaves running before anything else happens."""
        try:
            return session.run(script, *args, priority=self.priority, parallelism=self.parallelism)
        except RuntimeError as exc:
            text = _server_text(exc)
            if "Socket is disconnected" in text or "Failed to read" in text or "IO error" in text:
                if session is self._session:
                    self._cancel_left_job(self._session_id, node)
                    self.close()           # the next operation reconnects
                raise TargetError(f"DolphinDB at {node.address}: {LOST} "
                                  f"({text.split(' with IO error')[0]})") from None
            raise TargetError(f"DolphinDB at {node.address} answered: {text}") from None

    def _cancel_left_job(self, session_id: str, node: Node) -> None:
        """Cancel the console job a lost session (``session_id``: the client forgets it with the
        connection, so it is kept from the login) may have left running on ``node`` and wait until
        it has gone (up to ``timeout``), so nothing it would share arrives after the clean-up. The
        look-ups and the cancel are sent urgent (request flag bit 0, as the Java client and the
        job-management tutorial send a cancel): an ordinary request would wait in the node's
        worker queue, behind the very jobs it is cancelling."""
        try:
            session_id = int(session_id)
            admin = RawConnection(node.host, node.port, self.profile.user, self.profile.password, protocol="DDB",
                                  timeout=self.timeout)
        except (WireError, ValueError, TypeError):
            self.cancel_note = f"{node.address}: the lost session's job could not be looked for"
            return
        try:
            jobs = admin.run_texts(console_jobs.console_jobs(session_id), urgent=True)
            if jobs:
                admin.run_discard(console_jobs.cancel_console_job(jobs), urgent=True)
                self.cancelled.extend(f"{node.address}: {job}" for job in jobs)
            deadline = time.monotonic() + self.timeout
            while jobs and time.monotonic() < deadline:
                time.sleep(CANCEL_POLL_S)
                jobs = admin.run_texts(console_jobs.console_jobs(session_id), urgent=True)
            self.cancel_note = (f"{node.address}: {len(jobs)} cancelled job(s) still running after "
                                f"{self.timeout:g} s; the next prepare sweeps what they share") if jobs else ""
        except WireError as exc:
            self.cancel_note = f"{node.address}: {exc}"
        finally:
            admin.close()

    def nodes_in_use(self) -> tuple[Node, ...]:
        """Every node a worker of this run may be given: the first user node under the policy
        ``one``, else all of them (the users of a step are not known here)."""
        nodes = self._user_nodes()
        return nodes[:1] if self.profile.node_policy == "one" else nodes

    def sweep_nodes(self) -> tuple[Node, ...]:
        """Every node a run may have shared objects on: every data node and every user node."""
        listed = self.profile.data_nodes or self._reported_data_nodes()
        return tuple(dict.fromkeys(listed + self.profile.user_nodes))

    def sweep(self, prefix: str = OBJECT_PREFIX, empty_only: bool = False) -> list[str]:
        """Undefine every shared object named ``prefix...`` on every data node (and every node
        users may be routed to), left by a killed worker or by a query that ran on past its
        client's timeout; "node: name" of each. ``empty_only``: empty them instead (tables that
        live workers still write to). A node that cannot be reached holds nothing a run can see:
        it is passed over."""
        swept = []
        for node in self.sweep_nodes():
            try:
                session, node = self._admin_session(node)
            except TargetError:
                continue
            try:
                names = self._run(session, node, scripts.shared_objects())
                for name in sorted(str(n) for n in (names if names is not None else [])):
                    if name.startswith(prefix) and q.IDENTIFIER_RE.fullmatch(name):
                        self._run(session, node, scripts.clear_memory_table(name) if empty_only
                                  else scripts.drop_shared(name))
                        swept.append(f"{node.address}: {name}")
            finally:
                session.close()
        return swept


    # --- worker side ---------------------------------------------------------------------------
    def open(self, layout: Layout, worker: int = 0) -> None:
        self.close()
        self._worker = worker
        nodes = self._user_nodes()
        if not nodes:
            raise TargetError(f"DolphinDB cluster {self.profile.name!r}: no node to route users to is online")
        self._node = pick_node(self.profile, worker, self.seed, nodes)
        self._session = self._connect(self._node)
        self._session_id = str(self._session.getSessionId())
        tag = f"w{int(worker)}_{os.getpid()}_{os.urandom(3).hex()}"
        self._share_name = f"{OBJECT_PREFIX}{tag}"
        self._upload_name = f"{UPLOAD_PREFIX}{tag}"

    def close(self) -> None:
        """Undefine this worker's upload table, then drop its connections."""
        session, self._session = self._session, None
        if self._upload_name in self._ensured:
            self._ensured.discard(self._upload_name)
            self._undefine(session, self._upload_name)
        if session is not None:
            session.close()
        self._drop_raw()

    @property
    def node(self) -> str:
        """The node this worker talks to ("" before ``open``): the runner records it per worker."""
        return self._node.address if self._node is not None else ""

    def _require_open(self, layout: Layout) -> None:
        if self._session is None:
            self.open(layout, self._worker)

    def _raw_connection(self) -> RawConnection:
        """The bare socket of the transfer phase, logged in at this worker's first probe."""
        if self._raw is None:
            try:
                self._raw = RawConnection(self._node.host, self._node.port, self.profile.user,
                                          self.profile.password, protocol=self.profile.protocol,
                                          compress=self.profile.compress, timeout=self.timeout)
            except WireError as exc:
                raise TargetError(f"DolphinDB at {self._node.address}: {exc}") from None
            self._raw.sock.settimeout(self.query_timeout)
        return self._raw

    def _drop_raw(self) -> None:
        if self._raw is not None:
            self._raw.close()
            self._raw = None

    def _undefine(self, session, name: str) -> None:
        """Undefine a shared object on this worker's node: through ``session`` when it can, else
        through a fresh session (``session`` may have died with the reply it was waiting for: its
        error cannot tell that from "no such object", so any error gets the second try); an
        unreachable node keeps it until the next ``prepare`` sweeps it."""
        if session is not None:
            try:
                self._run(session, self._node, scripts.drop_shared(name))
                return
            except TargetError:   # the probe's session is lost: a fresh one below drops it
                pass
        try:
            fresh, node = self._admin_session(self._node)
        except TargetError:
            return
        try:
            self._run(fresh, node, scripts.drop_shared(name))
        except TargetError:
            pass                                   # gone already, or never made
        finally:
            fresh.close()
