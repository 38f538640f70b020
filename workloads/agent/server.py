"""The agent's listener: ``POST /drop``, signed (protocol.py), answered by one drop at a time, and
``POST /info``, signed too, answered with the host's name and hardware threads (nothing else).

Bounded by construction: a fixed pool of threads accepts and handles connections (the kernel's
backlog holds the rest), each connection has a short socket timeout and an overall deadline, a
request is capped at a few KB (its body is read, never used), and every refusal is decided from the
headers alone before anything is done. One JSON line per request goes to the log, flushed at once.
"""
from __future__ import annotations

import json
import os
import signal
import socket
import socketserver
import sys
import threading
import time
from datetime import datetime, timezone
from http.server import BaseHTTPRequestHandler
from typing import TextIO

from workloads.agent.droppers import DropperError
from workloads.agent.protocol import INFO_PATH, VERBS, Verifier

THREADS = 8
SOCKET_TIMEOUT_S = 5.0        # a silent client is dropped after this
CONNECTION_DEADLINE_S = 10.0  # a client dripping bytes is dropped after this (a running drop is exempt)
MAX_HEAD_BYTES = 16 * 1024    # request line + headers
MAX_BODY_BYTES = 4 * 1024
_ACCEPT_POLL_S = 0.25         # how soon a stop is noticed


class AgentLog:
    """One JSON line per request, written whole and flushed (another process may be reading it)."""

    def __init__(self, stream: TextIO):
        self._stream = stream
        self._lock = threading.Lock()

    def write(self, peer: str, outcome: str, reason: str = "", request_id: str = "", **drop) -> None:
        entry = {"time": datetime.now(timezone.utc).isoformat(timespec="milliseconds"), "peer": peer,
                 "outcome": outcome, "reason": reason, "request_id": request_id or None, **drop}
        line = json.dumps(entry) + "\n"
        with self._lock:
            self._stream.write(line)
            self._stream.flush()


class _CappedReader:
    """The request's input, ending in an error past ``limit`` bytes (however slowly they come)."""

    def __init__(self, raw, limit: int):
        self._raw = raw
        self._left = limit

    def _take(self, data: bytes) -> bytes:
        self._left -= len(data)
        return data

    # past the limit the input ends, as if the client had closed: what was read is refused as it stands
    def readline(self, size: int = -1) -> bytes:
        return self._take(self._raw.readline(self._left if size < 0 else min(size, self._left)))

    def read(self, size: int = -1) -> bytes:
        return self._take(self._raw.read(self._left if size < 0 else min(size, self._left)))

    def close(self) -> None:
        self._raw.close()


class _Handler(BaseHTTPRequestHandler):
    server_version = "tickbench-agent"
    sys_version = ""
    timeout = SOCKET_TIMEOUT_S
    agent: Agent          # set on the subclass each Agent makes

    def setup(self) -> None:
        super().setup()
        self.rfile = _CappedReader(self.rfile, MAX_HEAD_BYTES + MAX_BODY_BYTES)
        self._logged = False

    # -- every method: refused unless POST /drop or POST /info -----------------------------------
    def do_POST(self) -> None:
        if self.path not in VERBS:
            return self._refuse(404, "not found", f"path {self.path[:80]!r}")
        try:
            length = int(self.headers.get("Content-Length") or 0)
        except ValueError:
            length = -1
        if not 0 <= length <= MAX_BODY_BYTES:
            return self._refuse(413, "body too large", "body length not 0..4096")
        self.rfile.read(length)          # read so the reply is not lost to a reset; never used
        verdict = self.agent.verifier.check(self.headers, verb=VERBS[self.path])
        if not verdict.accepted:
            return self._refuse(401, "unauthorized", verdict.reason, verdict.nonce)
        if self.path == INFO_PATH:
            threads = os.cpu_count()
            self._log("informed", "", verdict.nonce, threads=threads)
            return self._reply(200, {"request_id": verdict.nonce, "host": socket.gethostname(), "threads": threads})
        self.agent.exempt(self.request)  # a drop may take long: no deadline while it runs
        outcome = self.agent.drop()
        if outcome is None:
            return self._refuse(429, "busy", "", verdict.nonce, outcome="busy")
        method, started, ended, error = outcome
        if error:
            self._log("failed", error, verdict.nonce, started=started, ended=ended)
            return self._reply(500, {"error": f"drop failed: {error}", "request_id": verdict.nonce})
        seconds = round(ended - started, 6)
        self._log("dropped", "", verdict.nonce, method=method, seconds=seconds, started=started, ended=ended)
        self._reply(200, {"request_id": verdict.nonce, "method": method, "seconds": seconds,
                          "host": socket.gethostname()})

    def _not_allowed(self) -> None:
        if self.path not in VERBS:
            return self._refuse(404, "not found", f"path {self.path[:80]!r}")
        self._refuse(405, "method not allowed", f"method {self.command}")

    do_GET = do_HEAD = do_PUT = do_DELETE = do_PATCH = do_OPTIONS = do_TRACE = do_CONNECT = _not_allowed

    # -- replies and the log ---------------------------------------------------------------------
    def _refuse(self, status: int, said: str, reason: str, request_id: str = "", outcome: str = "refused") -> None:
        self._log(outcome, reason or said, request_id, status=status)
        self._reply(status, {"error": said})

    def _reply(self, status: int, body: dict) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.send_header("Connection", "close")
        if status == 405:
            self.send_header("Allow", "POST")
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(data)

    def _log(self, outcome: str, reason: str, request_id: str, **extra) -> None:
        self._logged = True
        self.agent.log.write(f"{self.client_address[0]}:{self.client_address[1]}", outcome, reason, request_id, **extra)

    def log_message(self, format: str, *args) -> None:    # noqa: A002  (http.server's name)
        pass                                                # our own JSON lines instead

    def log_error(self, format: str, *args) -> None:      # noqa: A002
        if not self._logged:                                # a request http.server refused itself
            self._log("refused", f"bad request: {format % args}"[:200], "")


class _Server(socketserver.TCPServer):
    allow_reuse_address = True
    request_queue_size = 256


class Agent:
    """Listens on ``address`` and drops with ``dropper`` for requests ``verifier`` accepts."""

    def __init__(self, address: tuple[str, int], verifier: Verifier, dropper, log: AgentLog,
                 threads: int = THREADS):
        self.verifier = verifier
        self.dropper = dropper
        self.log = log
        self._threads = threads
        handler = type("Handler", (_Handler,), {"agent": self})
        family = socket.AF_INET6 if ":" in address[0] else socket.AF_INET
        self._server = type("Server", (_Server,), {"address_family": family})(address, handler)
        self._server.socket.settimeout(_ACCEPT_POLL_S)
        self._dropping = threading.Lock()
        self._open: dict[socket.socket, float] = {}     # connection -> its deadline
        self._open_lock = threading.Lock()
        self._stop = threading.Event()

    @property
    def address(self) -> tuple[str, int]:
        host, port = self._server.server_address[:2]
        return host, port

    def drop(self) -> tuple[str, float, float, str] | None:
        """(method, started, ended, error) of one drop, or None while another runs."""
        if not self._dropping.acquire(blocking=False):
            return None
        try:
            started = time.time()
            try:
                method, error = self.dropper.drop(), ""
            except (DropperError, OSError) as exc:
                method, error = "", str(exc) or type(exc).__name__
            return method, started, time.time(), error
        finally:
            self._dropping.release()

    def exempt(self, connection: socket.socket) -> None:
        with self._open_lock:
            self._open[connection] = float("inf")

    def serve(self, stop: threading.Event) -> None:
        """Handle connections until ``stop`` is set; then close the socket."""
        workers = [threading.Thread(target=self._accept_loop, name=f"agent-{i}", daemon=True)
                   for i in range(self._threads)]
        for worker in workers:
            worker.start()
        try:
            while not stop.wait(_ACCEPT_POLL_S):
                self._enforce_deadlines()
        finally:
            self._stop.set()
            for worker in workers:
                worker.join(SOCKET_TIMEOUT_S + 1.0)
            self._server.server_close()

    def _accept_loop(self) -> None:
        while not self._stop.is_set():
            try:
                connection, peer = self._server.socket.accept()
            except TimeoutError:
                continue
            except OSError:          # out of descriptors, an aborted handshake: keep serving
                time.sleep(0.05)
                continue
            with self._open_lock:
                self._open[connection] = time.monotonic() + CONNECTION_DEADLINE_S
            try:
                self._server.finish_request(connection, peer)
            except Exception:        # noqa: BLE001  (a reset or a cut-off client ends only its connection)
                pass
            finally:
                with self._open_lock:
                    self._open.pop(connection, None)
                self._server.shutdown_request(connection)

    def _enforce_deadlines(self) -> None:
        now = time.monotonic()
        with self._open_lock:
            late = [c for c, deadline in self._open.items() if deadline < now]
        for connection in late:
            try:
                connection.shutdown(socket.SHUT_RDWR)    # its handler's read returns; the loop closes it
            except OSError:
                pass


def serve_until_signalled(agent: Agent, ready=lambda: None) -> None:
    """Serve until SIGTERM or SIGINT, then stop cleanly. ``ready`` (the banner saying it listens)
    runs once the signals are handled: a stop sent as soon as it is read must not kill the agent."""
    stop = threading.Event()
    previous = {sig: signal.signal(sig, lambda *_: stop.set()) for sig in (signal.SIGTERM, signal.SIGINT)}
    try:
        ready()
        agent.serve(stop)
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def open_log(path) -> TextIO:
    return sys.stderr if path is None else open(path, "a", encoding="utf-8")
