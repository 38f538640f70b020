"""Pytest fixtures that run the ClickHouse stand-in (``python -m tests.chserver``) as a process of
its own (a session of its own too), on 127.0.0.1 and a free port, stopped by its PID."""
from __future__ import annotations

import os
import selectors
import signal
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
START_TIMEOUT = 60.0
USERS = {"default": "", "tick": "s3cret"}


@dataclass
class RunningServer:
    proc: subprocess.Popen
    port: int
    data: Path
    host: str = "127.0.0.1"
    users: dict[str, str] = field(default_factory=lambda: dict(USERS))

    def config(self, **more) -> dict:
        """A ClickHouse target config for this server (user ``tick``)."""
        return {"host": self.host, "port": self.port, "user": "tick", "password": self.users["tick"], **more}

    def stop(self) -> None:
        if self.proc.poll() is None:
            os.kill(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                os.kill(self.proc.pid, signal.SIGKILL)
                self.proc.wait(timeout=15)


def start_server(data: Path, users: dict[str, str] | None = None, timezone: str = "") -> RunningServer:
    """The stand-in serving ``data``; ``timezone``: the server's zone (``<timezone>`` in a ClickHouse
    server's config: every query's session zone unless it sets its own), "" the machine's."""
    users = dict(users or USERS)
    data.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "PYTHONPATH": str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    log = open(data.parent / f"{data.name}.log", "wb")
    proc = subprocess.Popen([sys.executable, "-m", "tests.chserver", "--data", str(data),
                             "--users", ",".join(f"{u}:{p}" for u, p in users.items()),
                             *(["--timezone", timezone] if timezone else [])],
                            cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=log, text=True,
                            start_new_session=True)
    log.close()
    selector = selectors.DefaultSelector()
    selector.register(proc.stdout, selectors.EVENT_READ)
    ready = selector.select(timeout=START_TIMEOUT)
    line = proc.stdout.readline().strip() if ready else ""
    if not line.startswith("PORT "):
        if proc.poll() is None:
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait(timeout=15)
        detail = (data.parent / f"{data.name}.log").read_text(errors="replace")[-2000:]
        raise RuntimeError(f"ClickHouse stand-in did not start: {line or detail or 'no output'}")
    return RunningServer(proc, int(line.split()[1]), data, users=users)


@pytest.fixture(scope="session")
def ch_server(tmp_path_factory):
    """One stand-in server for the session (its own chDB folder), in the machine's zone, or in
    ``CHSERVER_TIMEZONE`` where set (``CHSERVER_TIMEZONE=America/New_York`` runs every test of a
    ClickHouse server against one whose ``<timezone>`` is New York)."""
    server = start_server(tmp_path_factory.mktemp("chserver") / "data",
                          timezone=os.environ.get("CHSERVER_TIMEZONE", ""))
    yield server
    server.stop()
