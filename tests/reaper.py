"""Every process a test run starts dies with the run, however the run ends (SIGTERM, SIGKILL, a
timeout): servers start in sessions of their own, so no signal to pytest reaches them.

A pytest plugin. At configure it puts a token unique to this run into the environment, which every
process it starts inherits (servers, stand-ins, workers, their JVMs), and starts a watchdog outside
the run's process group. When pytest ends (its pipe to the watchdog closes, or its PID is gone), the
watchdog signals every process carrying the token: SIGTERM, then SIGKILL after a grace period.

    python -m tests.reaper <pytest pid> <token>     (the watchdog; started by the plugin)
"""
from __future__ import annotations

import os
import select
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

TOKEN_VARIABLE = "TICKBENCH_TEST_RUN"
GRACE_S = 5.0
OWNER_POLL_S = 0.5

_watchdog: subprocess.Popen | None = None


def pytest_configure(config) -> None:
    global _watchdog
    if hasattr(config, "workerinput"):      # an xdist worker: its controller's watchdog covers it
        return
    token = uuid.uuid4().hex
    os.environ[TOKEN_VARIABLE] = token
    env = {k: v for k, v in os.environ.items() if k != TOKEN_VARIABLE}   # the watchdog spares itself
    _watchdog = subprocess.Popen([sys.executable, "-m", "tests.reaper", str(os.getpid()), token],
                                 stdin=subprocess.PIPE, env=env, start_new_session=True,
                                 cwd=Path(__file__).resolve().parent.parent)


def pytest_unconfigure(config) -> None:
    """A normal end: what the fixtures left running is stopped now, before pytest returns."""
    global _watchdog
    if _watchdog is None:
        return
    _watchdog.stdin.close()
    try:
        _watchdog.wait(GRACE_S + 5.0)
    except subprocess.TimeoutExpired:     # still signalling stragglers: it finishes without pytest
        pass
    _watchdog = None


def carriers(token: str, spare: int = 0) -> list[int]:
    """PIDs of the processes whose environment holds this run's token (but ``spare``)."""
    needle = f"{TOKEN_VARIABLE}={token}".encode()
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) in (os.getpid(), spare):
            continue
        try:
            if needle in (entry / "environ").read_bytes().split(b"\0"):
                found.append(int(entry.name))
        except OSError:           # gone meanwhile, or not ours to read
            pass
    return found


def reap(token: str, owner: int) -> list[int]:
    """Stop every carrier of ``token`` but the owner (pytest itself, at a normal end); the PIDs
    that were signalled."""
    signalled = carriers(token, owner)
    for pid in signalled:
        _signal(pid, signal.SIGTERM)
    deadline = time.monotonic() + GRACE_S
    while time.monotonic() < deadline and carriers(token, owner):
        time.sleep(0.1)
    for pid in carriers(token, owner):
        _signal(pid, signal.SIGKILL)
    return signalled


def _signal(pid: int, sig: int) -> None:
    try:
        os.kill(pid, sig)
    except ProcessLookupError:           # ended by itself meanwhile: nothing to stop
        pass


def _owner_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return os.getppid() == pid     # reparented: the owner is gone even if its PID was reused


def watch(owner: int, token: str) -> None:
    for sig in (signal.SIGINT, signal.SIGHUP):      # a terminal's Ctrl-C is for pytest, not for us
        signal.signal(sig, signal.SIG_IGN)
    stdin = sys.stdin.buffer
    while _owner_alive(owner):
        ready, _, _ = select.select([stdin], [], [], OWNER_POLL_S)
        if ready and not os.read(stdin.fileno(), 4096):
            break                 # the owner closed the pipe (its end) or died holding it
    reap(token, owner)


if __name__ == "__main__":
    watch(int(sys.argv[1]), sys.argv[2])
