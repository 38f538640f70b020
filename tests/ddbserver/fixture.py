"""Pytest fixtures that run the test server in its own process (a server thread inside the
client's process made DBConnectionPool hang: shared/DDB_PROTOCOL.md).

Register in the main conftest.py with:
    from tests.ddbserver.fixture import ddb_server, ddb_cluster, ddb_server_factory  # noqa: F401
"""
from __future__ import annotations

import json
import os
import selectors
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
START_TIMEOUT = 30.0


@dataclass
class RunningServer:
    proc: subprocess.Popen
    ports: list[int]
    host: str = "127.0.0.1"
    users: dict[str, str] = field(default_factory=lambda: {"admin": "123456"})
    roles: list[str] = field(default_factory=list)

    @property
    def port(self) -> int:
        """The first node: the controller of a cluster, or the single node."""
        return self.ports[0]

    @property
    def data_ports(self) -> list[int]:
        data = [p for p, r in zip(self.ports, self.roles) if r == "data"]
        return data or self.ports[:1]

    @property
    def compute_ports(self) -> list[int]:
        return [p for p, r in zip(self.ports, self.roles) if r == "compute"]

    def profile(self, **extra) -> dict:
        """A cluster profile (plain data) listing every node with its role."""
        roles = self.roles if len(self.roles) > 1 else ["single"]
        return {"name": "test-server", "user": "admin",
                "nodes": [{"host": self.host, "port": p, "role": r} for p, r in zip(self.ports, roles)], **extra}

    def control(self, **faults) -> dict:
        """Change faults at run time (``reset=True`` first restores the defaults).

        Sent over a bare socket with this package's codec, not through the client: the client
        refuses to connect to a node whose faults make it look uninitialised.
        """
        return self._call("testServerControl", json.dumps(faults))

    def stats(self) -> dict:
        """What the server has seen so far: ``cache_clears`` (pnodeRun(clearAllCache) calls),
        ``reads`` (each read: node, kind, partitions, hits, ``cold``), ``clears``, ``shared``
        (node alias -> the names in its shared namespace) and ``sessions`` (port as text ->
        open, logged_in, logins, peak_logged_in, refused); ``locks`` (DFS write transactions, chunk
        lock ``conflicts``, ``failed``, a ``log``), ``creates`` (tables created, by "db/table", and the
        ``errors`` of creates that failed) and ``olap_cache`` (rows the OLAP cache engine holds, its
        flushes). ``--write-delay S`` (or ``control(write_delay=S)``) makes writes and creates last
        long enough to overlap; ``--olap-cache-rows N`` turns the OLAP cache engine on."""
        return self._call("testServerStats", "")

    def take_offline(self, *aliases: str) -> list[str]:
        """Take nodes down (state 0, no more connections); the aliases now offline."""
        return self._call("testServerNodes", json.dumps({"offline": list(aliases)}))

    def bring_online(self, *aliases: str) -> list[str]:
        """Bring nodes back (their caches as they were); the aliases still offline."""
        return self._call("testServerNodes", json.dumps({"online": list(aliases)}))

    def jobs_since(self, seen: int) -> list[dict]:
        """The console jobs logged after the first ``seen`` (node, session, priority, parallelism,
        desc, cancelled); take ``len(stats()["jobs"]["log"])`` first."""
        return self.stats()["jobs"]["log"][seen:]

    def reads_since(self, seen: int) -> list[dict]:
        """The reads logged after the first ``seen`` (take ``len(stats()["reads"])`` first)."""
        return self.stats()["reads"][seen:]

    def _call(self, function: str, argument: str) -> dict:
        import socket

        from tests.ddbserver import codec as c

        with socket.create_connection((self.host, self.port), timeout=10) as sock:
            sock.sendall(b"API 0 8 / 32_1_4_2\nconnect\n")
            src = c.Source(sock=sock)
            session = src.read_line().split(" ")[0]
            src.read_line()
            body = f"function\n{function}\n1\n1"
            sock.sendall(f"API2 {session} {len(body)} / 32_1_4_64__0\n{body}".encode()
                         + c.encode(c.Scalar(c.STRING, argument)))
            src.read_line()
            status = src.read_line()
            if status != "OK":
                raise RuntimeError(f"the test server refused {function}: {status}")
            return json.loads(c.Decoder(src).object().value)

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=10)


def start_server(*args: str, env: dict | None = None, users: dict[str, str] | None = None) -> RunningServer:
    """Start ``python -m tests.ddbserver`` with ``args``; wait for its ``PORTS`` line.

    Flags (``python -m tests.ddbserver --help``): ``--data-nodes N`` (a controller + N data nodes),
    ``--compute-nodes N`` (and N compute nodes in a compute group), ``--server-major 2``
    (DolphinDB 2.x: getClusterPerf on the controller only), ``--no-arrow-plugin`` /
    ``--no-arrow-on ALIASES`` (ARROW requests answered in the DDB format), ``--replicas N``
    (tablet copies the footprint scripts see), ``--perf-host``/``--public-name`` (getClusterPerf's
    host and publicName), ``--max-connections N``, ``--offline ALIASES`` (nodes down), and the
    fault flags.
    """
    cmd = [sys.executable, "-m", "tests.ddbserver", *args]
    if users is not None:
        cmd += ["--users", ",".join(f"{u}:{p}" for u, p in users.items())]
    proc_env = {**os.environ, **(env or {})}
    proc_env["PYTHONPATH"] = str(REPO) + os.pathsep + proc_env.get("PYTHONPATH", "")
    proc = subprocess.Popen(cmd, cwd=REPO, env=proc_env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    sel = selectors.DefaultSelector()
    sel.register(proc.stdout, selectors.EVENT_READ)
    if not sel.select(timeout=START_TIMEOUT):
        proc.kill()
        raise RuntimeError(f"test server did not start within {START_TIMEOUT:.0f} s")
    line = proc.stdout.readline().strip()
    if not line.startswith("PORTS "):
        proc.kill()
        raise RuntimeError(f"test server failed to start: {line or proc.stderr.read()[-2000:]}")
    roles = proc.stdout.readline().split()[1:]
    return RunningServer(proc, [int(p) for p in line.split()[1:]],
                         users=users or {"admin": "123456"}, roles=roles)


@pytest.fixture(scope="session")
def ddb_server():
    """One single-node test server for the whole session (faults: reset them after changing)."""
    server = start_server()
    yield server
    server.stop()


@pytest.fixture(scope="session")
def ddb_cluster():
    """A fake cluster: a controller port and three data-node ports, all served by one process."""
    server = start_server("--data-nodes", "3")
    yield server
    server.stop()


@pytest.fixture
def ddb_server_factory():
    """Start servers with given flags; all are stopped when the test ends."""
    started: list[RunningServer] = []

    def factory(*args: str, **kwargs) -> RunningServer:
        server = start_server(*args, **kwargs)
        started.append(server)
        return server

    yield factory
    for server in started:
        server.stop()
