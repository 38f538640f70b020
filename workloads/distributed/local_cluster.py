"""A Dask cluster on this machine's loopback: a scheduler and N worker processes, each started as
``dask scheduler`` / ``dask worker`` would be on client machines, stopped by their PIDs. For the
tests, the benchmark and demos; a real multi-host run starts the same commands on each host."""
from __future__ import annotations

import sys
from dataclasses import dataclass, field
from pathlib import Path

from workloads.local_engines.base import LOOPBACK, free_port, port_open, spawn, stop_pids, wait_until

START_TIMEOUT_S = 120.0


@dataclass
class LocalCluster:
    scheduler: str                    # tcp://127.0.0.1:PORT
    scheduler_pid: int
    worker_pids: dict[str, int] = field(default_factory=dict)    # worker name -> its (nanny) process
    folder: Path | None = None

    @property
    def pids(self) -> list[int]:
        return [self.scheduler_pid, *self.worker_pids.values()]

    def stop(self) -> None:
        stop_pids(self.pids)


def start_worker(scheduler: str, name: str, folder: Path, threads: int = 1, nanny: bool = True) -> int:
    command = [sys.executable, "-m", "dask", "worker", scheduler, "--host", LOOPBACK, "--name", name,
               "--nthreads", str(threads), "--nworkers", "1", "--no-dashboard",
               "--local-directory", str(folder / name), "--nanny" if nanny else "--no-nanny"]
    return spawn(command, folder / f"{name}.log").pid


def start(folder: Path, workers: int = 2, threads: int = 1, nanny: bool = True) -> LocalCluster:
    """Start the scheduler and ``workers`` workers; return once every worker has joined."""
    folder.mkdir(parents=True, exist_ok=True)
    port = free_port()
    scheduler = f"tcp://{LOOPBACK}:{port}"
    log = folder / "scheduler.log"
    process = spawn([sys.executable, "-m", "dask", "scheduler", "--host", LOOPBACK, "--port", str(port),
                     "--no-dashboard"], log)
    cluster = LocalCluster(scheduler, process.pid, folder=folder)
    try:
        wait_until(lambda: port_open(port), START_TIMEOUT_S, "the Dask scheduler", [process], log)
        for i in range(workers):
            name = f"host-{i + 1}"
            cluster.worker_pids[name] = start_worker(scheduler, name, folder, threads, nanny)
        wait_until(lambda: _joined(scheduler) >= workers, START_TIMEOUT_S, f"{workers} Dask workers",
                   [], folder / "host-1.log", poll_s=0.5)
    except BaseException:
        cluster.stop()
        raise
    return cluster


def _joined(scheduler: str) -> int:
    from workloads.distributed.cluster import connect, workers
    client = connect(scheduler, timeout_s=5)
    try:
        return len(workers(client))
    finally:
        client.close()
