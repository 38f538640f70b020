"""The process running each run, and runs whose process died.

A run records the process running it (host, pid and start time: a reused pid is another process).
A run whose process died (``kill -9``, a crash, a power cut) reads as aborted at once, with its
steps and workers in their true end states; it is sealed on disk by one opener (the one holding its
seal lock, when the disk has room): opening never writes on a full disk.
"""
from __future__ import annotations

import shutil
import socket
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psutil
import pyarrow as pa

from workloads.results.atomic_files import DamagedFile
from workloads.results.run_files import RESERVE_BYTES, RunFolder
from workloads.results.run_tables import utc_now
from workloads.results.run_writer import RunWriter, SealLock

ABORTED_MESSAGE = "the process running it (pid {pid}) stopped before the run ended (killed or crashed)"


@dataclass(frozen=True)
class HostProcess:
    """The process that runs a run: with its start time, a pid cannot be mistaken for a reused one."""

    host: str
    pid: int
    started: float      # psutil create_time, seconds since the epoch


def host_process() -> HostProcess:
    me = psutil.Process()
    return HostProcess(socket.gethostname(), me.pid, me.create_time())


def process_alive(process: HostProcess) -> bool:
    """Whether ``process`` still runs: same pid, same start time (a reused pid is another one)."""
    try:
        return abs(psutil.Process(process.pid).create_time() - process.started) < 1.0
    except psutil.NoSuchProcess:
        return False
    except psutil.Error:      # exists but cannot be inspected: assume it is ours and alive
        return True


def run_process(run: dict[str, Any]) -> HostProcess | None:
    if run.get("host_pid") is None:
        return None
    return HostProcess(str(run.get("host") or ""), int(run["host_pid"]), float(run.get("host_started") or 0))


def dead_message(run: dict[str, Any]) -> str | None:
    """Why ``run`` ended if it says 'running' but its process has ended, else None.

    Only runs started on this machine can be checked; a run recorded without its process (an old
    results file) cannot still be running."""
    if run.get("status") != "running":
        return None
    process = run_process(run)
    if process is None:
        return "the app stopped during the run"
    if process.host == socket.gethostname() and not process_alive(process):
        return ABORTED_MESSAGE.format(pid=process.pid)
    return None


def abort_if_dead(folder: Path) -> bool:
    """Seal the run in ``folder`` as aborted if its process has ended: by one process only (the
    holder of its seal lock; the others leave it), never on a disk without room for it (readers
    show it aborted all the same). True if this call sealed it."""
    folder = Path(folder)
    if dead_message(RunFolder(folder).run()) is None or not _room_to_seal(folder):
        return False
    with SealLock(folder) as owner:
        if not owner:
            return False
        run = RunFolder(folder).run()              # another sealer may have finished meanwhile
        message = dead_message(run)
        if message is None:
            return False
        try:
            RunWriter(folder).end("aborted", message, run.get("finished_at") or utc_now())
        except (OSError, DamagedFile, pa.ArrowException):
            return False                       # read-only, full, damaged: readers show it aborted
    return True


def _room_to_seal(folder: Path) -> bool:
    """Whether the disk holds a sealed copy of the run's parts and its end, with room to spare."""
    try:
        parts = sum(p.stat().st_size for p in RunFolder(folder).ops_files())
        return shutil.disk_usage(folder).free > 2 * parts + 2 * RESERVE_BYTES
    except OSError:                     # a part sealed away meanwhile, or no such disk
        return False
