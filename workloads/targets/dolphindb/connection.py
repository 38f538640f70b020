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
``tickbench_`` object in the shared namespace (``objs(true)``) of every node the run may use, so
two runs against one cluster at the same time would disturb each other (they would anyway).
"""
from __future__ import annotations

import os

from workloads.targets.base import Layout, TargetError
from workloads.targets.dolphindb import quote as q
from workloads.targets.dolphindb import scripts
from workloads.targets.dolphindb.cluster import Node, _server_text, open_session, pick_node
from workloads.targets.dolphindb.wire import RawConnection, WireError

OBJECT_PREFIX = "tickbench_"           # every object a run shares on a node is named so
UPLOAD_PREFIX = "tickbench_upload_"
CHECK_CLOSE_S = 1.0                    # how long the pre-login check waits for the server to let go
LOST = "connection lost or reply timed out"


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
        """A short-lived DDB session for parent-side work (prepare, footprint, describe)."""
        node = node or self.profile.data_nodes[0]
        return self._connect(node, metadata=True), node

    def _run(self, session, node: Node, script: str, *args):
        try:
            return session.run(script, *args) if args else session.run(script)
        except RuntimeError as exc:
            text = _server_text(exc)
            if "Socket is disconnected" in text or "Failed to read" in text or "IO error" in text:
                if session is self._session:
                    self.close()           # the next operation reconnects
                raise TargetError(f"DolphinDB at {node.address}: {LOST} "
                                  f"({text.split(' with IO error')[0]})") from None
            raise TargetError(f"DolphinDB at {node.address} answered: {text}") from None

    def nodes_in_use(self) -> tuple[Node, ...]:
        """Every node a worker of this run may be given: the first data node under the policy
        ``one``, else all of them (the users of a step are not known here)."""
        nodes = self.profile.data_nodes
        return nodes[:1] if self.profile.node_policy == "one" else nodes

    def sweep(self, prefix: str = OBJECT_PREFIX, empty_only: bool = False) -> list[str]:
        """Undefine every shared object named ``prefix...`` on every node the run may use (left
        by a killed worker, or a query that ran on past its client's timeout); "node: name" of
        each. ``empty_only``: empty them instead (tables that live workers still write to). A
        node that cannot be reached holds nothing a run can see: it is passed over."""
        swept = []
        for node in self.nodes_in_use():
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
        self._node = pick_node(self.profile, worker, self.seed)
        self._session = self._connect(self._node)
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
