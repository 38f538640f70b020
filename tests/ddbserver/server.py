"""The test server: one thread per connection, one or more listening ports sharing one store.

Port 0 of the list is the first node (the controller in a cluster, the only node otherwise); the
next ports are data nodes, then compute nodes (in one compute group). Every request is framed,
answered by the dispatcher, and the reply is shaped by the active faults (delay, error, close
mid-reply, a lost reply, silence). A table reply takes the format the request's flag asks for
(Arrow, pickle, compressed), as a real server does. Each node counts its connections and
logged-in sessions (sessions.py) and refuses connections past its limit. Every script and function
request is a console job (jobs.py) that ``cancelConsoleJob`` can stop while the delay fault holds
it. A node taken offline (``--offline`` at start, or ``testServerNodes`` with
``{"offline": [aliases]}`` at run time) stops listening and drops its connections; getClusterPerf
reports it with state 0. ``{"online": [aliases]}`` brings it back on its port, its caches as it
left them (a node that was unreachable, not restarted, still holds what it read).
"""
from __future__ import annotations

import json
import random
import socket
import socketserver
import sys
import threading
import traceback

from tests.ddbserver import codec as c
from tests.ddbserver.arrow_reply import table_to_ipc
from tests.ddbserver.dispatch import Dispatcher, ScriptError, Session
from tests.ddbserver.faults import Faults
from tests.ddbserver.jobs import CANCELLED_MESSAGE
from tests.ddbserver.framing import (FLAG_ARROW, FLAG_COMPRESS, FLAG_PICKLE, ProtocolError,
                                     arrow_table_reply, error_reply, ok_reply, pickle_table_reply,
                                     read_request)
from tests.ddbserver.pickle_reply import table_to_pickle
from tests.ddbserver.sessions import Sessions
from tests.ddbserver.store import Store, StoreError
from tests.ddbserver.topology import COMPUTE, CONTROLLER, DATA, SINGLE, Node, Topology

LOGIN_ERROR = "The user name or password is incorrect."
URGENT = 1                    # request flag bit 0: run at once, ahead of the worker queue


class TestServer:
    def __init__(self, data_nodes: int = 0, users: dict[str, str] | None = None,
                 version: str | None = None, faults: Faults | None = None,
                 host: str = "127.0.0.1", server_major: int = 3, arrow_plugin: bool = True,
                 replicas: int = 1, compute_nodes: int = 0, compute_group: str = "cgroup1",
                 perf_host: str = "127.0.0.1", public_name: str = "", max_connections: int = 0,
                 no_arrow_nodes: tuple[str, ...] = ()):
        """``version`` None: the default version string of ``server_major``; ``arrow_plugin``
        False answers ARROW requests in the DDB format, like a server without formatArrow, on
        every node (``no_arrow_nodes``: only on those node aliases). ``compute_nodes`` (with data
        nodes, 3.x): compute nodes in the compute group ``compute_group`` ("" : none).
        ``perf_host``/``public_name``: getClusterPerf's host and publicName columns.
        ``max_connections``: each node's connection limit (0: none)."""
        self.host = host
        self.arrow_plugin = arrow_plugin
        self.no_arrow_nodes = set(no_arrow_nodes)
        self.users = users if users is not None else {"admin": "123456"}
        self.faults = faults or Faults()
        self.store = Store()
        self.sessions = Sessions(max_connections)
        if compute_nodes and not data_nodes:
            raise ValueError("compute nodes need a cluster: give data nodes too")
        self._servers: list[socketserver.ThreadingTCPServer] = []
        count = 1 + data_nodes + compute_nodes
        for _ in range(count):
            srv = _Listener((host, 0), _Handler)
            srv.owner = self
            self._servers.append(srv)
        ports = [s.server_address[1] for s in self._servers]
        if data_nodes:
            self.nodes = [Node("controller", CONTROLLER, ports[0])] + [
                Node(f"dnode{i}", DATA, p) for i, p in enumerate(ports[1:1 + data_nodes], start=1)] + [
                Node(f"cnode{i}", COMPUTE, p, compute_group)
                for i, p in enumerate(ports[1 + data_nodes:], start=1)]
        else:
            self.nodes = [Node("local8848", SINGLE, ports[0])]
        self.topology = Topology(self.nodes, server_major, version, replicas, perf_host=perf_host,
                                 public_name=public_name, max_connections=max_connections)
        self.dispatcher = Dispatcher(self.store, self.topology, self.faults)
        self.dispatcher.sessions = self.sessions

    @property
    def ports(self) -> list[int]:
        return [s.server_address[1] for s in self._servers]

    def node_for(self, port: int) -> Node:
        return next(n for n in self.nodes if n.port == port)

    def start(self) -> None:
        for srv in self._servers:
            if self.node_for(srv.server_address[1]).online:
                threading.Thread(target=srv.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
        self._started = True

    def take_offline(self, aliases: list[str]) -> list[str]:
        """Stop the nodes ``aliases`` as if their processes went down: no more listening, their
        connections dropped at their next request, state 0 in getClusterPerf."""
        for alias in aliases:
            node = self.topology.node(alias)
            if not node.online:
                continue
            node.online = False
            srv = next(s for s in self._servers if s.server_address[1] == node.port)
            if getattr(self, "_started", False):
                srv.shutdown()
            srv.server_close()
        return [n.name for n in self.nodes if not n.online]

    def set_workers(self, count: int) -> None:
        """Each node's worker pool, as DolphinDB's ``workerNum``: an ordinary job waits for a free
        worker, an urgent one (request flag bit 0: a cancel, as the Java client and the job-management
        tutorial send it) runs at once. 0: a worker for every request."""
        self.workers = {n.port: threading.Semaphore(count) for n in self.nodes} if count > 0 else {}

    def bring_online(self, aliases: list[str]) -> None:
        """Nodes taken offline listen again on their ports, state 1 in getClusterPerf."""
        for alias in aliases:
            node = self.topology.node(alias)
            if node.online:
                continue
            at = next(i for i, s in enumerate(self._servers) if s.server_address[1] == node.port)
            srv = _Listener((self._servers[at].server_address[0], node.port), _Handler)
            srv.owner = self
            self._servers[at] = srv
            node.online = True
            threading.Thread(target=srv.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()

    def stop(self) -> None:
        for srv in self._servers:
            srv.shutdown()
            srv.server_close()

    # --- one request -------------------------------------------------------------------------
    def answer(self, req, session: Session) -> bytes:
        """The reply to one request, run as a console job (connects and control calls are none)."""
        if req.command == "function" and req.lines and req.lines[0] == "testServerNodes":
            asked = json.loads(req.args[0].value)
            self.bring_online(list(asked.get("online", [])))
            return ok_reply(req.session, [c.Scalar(c.STRING, json.dumps(self.take_offline(list(asked.get("offline", [])))))])
        key = req.lines[0] if req.command in ("function", "variable") and req.lines else req.script
        worker = None if req.command == "connect" or req.flag & URGENT else getattr(self, "workers", {}).get(
            session.node.port)
        if worker is not None:
            worker.acquire()                  # an ordinary job queues for a worker
        try:
            job = None if req.command == "connect" else self.dispatcher.jobs.start(
                session.node.name, session.user, req.session, req.priority, req.parallelism, key)
            try:
                return self._answer(req, session, job)
            finally:
                self.dispatcher.jobs.end(job)
        finally:
            if worker is not None:
                worker.release()

    def _answer(self, req, session: Session, job) -> bytes:
        if req.command == "connect":
            sid = str(random.randint(10**8, 10**10))
            refused = self.sessions.over_limit(session.node.port)
            if refused:
                return error_reply(sid, refused)
            if req.lines and req.lines[0] == "login":
                user, password = (req.lines[1:3] + ["", ""])[:2]
                if self.faults.refuse_login or self.users.get(user) != password:
                    return error_reply(sid, LOGIN_ERROR)
                if not session.user:
                    self.sessions.login(session.node.port)
                session.user = user
            session.variables.clear()
            return ok_reply(sid, [])
        key = req.lines[0] if req.command in ("function", "variable") and req.lines else req.script
        if self.faults.matches(self.faults.delay_match, key, empty_matches=self.faults.delay > 0):
            if self.dispatcher.jobs.hold(job, self.faults.delay):      # cancelled while it waited
                return error_reply(req.session, CANCELLED_MESSAGE)
        if self.faults.matches(self.faults.error_match, key):
            return error_reply(req.session, self.faults.error_message)
        try:
            if req.command == "script":
                objects = self.dispatcher.script(session, req.script)
            elif req.command == "function":
                objects = self.dispatcher.function(session, req.lines[0], req.args)
            elif req.command == "variable":
                objects = self.dispatcher.upload(session, req.lines[0].split(","), req.args)
            else:
                return error_reply(req.session, f"Unknown request type {req.command}")
        except (ScriptError, StoreError, ValueError) as exc:
            return error_reply(req.session, str(exc))
        except Exception as exc:  # a server bug: answer it instead of dropping the connection
            traceback.print_exc(file=sys.stderr)
            return error_reply(req.session, f"Test server internal error: {type(exc).__name__}: {exc}")
        if not objects:
            objects = [c.Scalar(c.VOID, None)] if req.command == "script" else []
        return self.shape_reply(req, objects, session.node)

    def shape_reply(self, req, objects: list, node: Node | None = None) -> bytes:
        """A table in the format the request's flag asks for; anything else DDB-encoded."""
        table = objects[0] if len(objects) == 1 and isinstance(objects[0], c.Table) else None
        arrow = self.arrow_plugin and (node is None or node.name not in self.no_arrow_nodes)
        if table is not None and req.flag & FLAG_ARROW and arrow:
            return arrow_table_reply(req.session, table_to_ipc(table))
        if table is not None and req.flag & FLAG_PICKLE:
            return pickle_table_reply(req.session, table_to_pickle(table))
        compress = table is not None and bool(req.flag & FLAG_COMPRESS)
        return ok_reply(req.session, objects, c.Encoder(compress=compress))


class _Listener(socketserver.ThreadingTCPServer):
    daemon_threads = True
    block_on_close = False     # stopping must not wait for connections held open by clients
    allow_reuse_address = True
    request_queue_size = 128
    owner: TestServer


class _Handler(socketserver.BaseRequestHandler):
    def handle(self) -> None:
        owner: TestServer = self.server.owner
        port = self.server.server_address[1]
        owner.faults.count_connection(port)
        owner.sessions.opened(port)
        session = Session(owner.node_for(port))
        try:
            self._serve(owner, port, session)
        finally:
            owner.sessions.closed(port, bool(session.user))

    def _serve(self, owner: "TestServer", port: int, session: Session) -> None:
        sock: socket.socket = self.request
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        if owner.faults.silent:
            _drain_until_closed(sock)
            return
        src = c.Source(sock=sock)
        while True:
            try:
                req = read_request(src)
            except (ConnectionError, OSError):
                return
            except (ProtocolError, c.CodecError) as exc:
                _send(sock, error_reply("0", f"Invalid request: {exc}"))
                return
            if owner.faults.silent:
                _drain_until_closed(sock)
                return
            if not session.node.online:         # the node went down: its connections go with it
                return
            reply = owner.answer(req, session)
            key = req.lines[0] if req.command in ("function", "variable") and req.lines else req.script
            if req.command != "connect" and owner.faults.matches(owner.faults.lose_match, key):
                continue           # the request ran; its reply is lost on the way (connection kept)
            if req.command != "connect" and owner.faults.matches(owner.faults.close_match, key):
                _send(sock, reply[: max(1, len(reply) // 2)])
                sock.shutdown(socket.SHUT_RDWR)
                sock.close()
                return
            if not _send(sock, reply):
                return


def _send(sock: socket.socket, data: bytes) -> bool:
    try:
        sock.sendall(data)
        return True
    except OSError:
        return False


def _drain_until_closed(sock: socket.socket) -> None:
    try:
        while sock.recv(65536):
            pass
    except OSError:
        pass
