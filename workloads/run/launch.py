"""How a step's users are started and released: as processes on this machine (``LocalLauncher``:
forked from a preloaded forkserver, or spawned, ``workloads.run.processes``), or across a Dask
cluster's hosts (``workloads.distributed.launcher``). The runner sees only this interface; the
collector sees only ``WorkerHandle``s (a pipe and something process-like)."""
from __future__ import annotations

import os
import time
from typing import Protocol

from workloads.run import processes
from workloads.run.cold import ColdRounds
from workloads.run.collector import WorkerHandle
from workloads.run.worker import StepEvents, WorkerSpec, worker_main


class UsersNotStarted(RuntimeError):
    """Not every user of a step could be started (a fork refused: out of memory or processes)."""


class StartersLost(RuntimeError):
    """The process that starts the users (the forkserver) died during the run: the run ends."""


class StepLaunch(Protocol):
    stop: object                                   # .set() stops every user (cancel)

    def start(self, specs: list[WorkerSpec]) -> list[WorkerHandle]: ...
    def release(self, t0: float) -> None: ...      # t0: the run host's time.monotonic() of the release
    def release_probes(self) -> None: ...
    def abort(self) -> None: ...                   # a user stopped for good: no other may wait for it
    def trouble(self) -> str: ...                  # "" or why the step's users cannot be trusted to run
    def close(self) -> None: ...


class Launcher(Protocol):
    def host_for(self, users: int) -> list[str]: ...     # the host of each user of a step
    def begin_step(self, key: str) -> StepLaunch: ...
    def close(self) -> None: ...


class LocalStep:
    """Users as processes of this machine (forked or spawned), released by multiprocessing events."""

    def __init__(self, context, server_pid: int | None = None):
        self._context = context
        self.context = context                  # what a step's shared objects (turns) are made from
        self._server_pid = server_pid           # the forkserver the users are forked from, or None
        self.events = StepEvents.make(context)
        self.stop = self.events.stop
        self._t0 = context.RawValue("d", 0.0)   # no lock: see StopFlag
        self._rounds: ColdRounds | None = None

    def start(self, specs: list[WorkerSpec]) -> list[WorkerHandle]:
        first = specs[0] if specs else None
        if first is not None and first.scenario.get("cache") == "cold" and first.layout is not None:
            self._rounds = ColdRounds(self._context, len(specs), len(first.layout.days))
        started: list[WorkerHandle] = []
        for spec in specs:
            try:
                started.append(self._spawn(spec))
            except Exception as exc:    # the forkserver's fork failed (and it ended) or it was gone
                self.stop.set()
                for handle in started:
                    handle.process.kill()
                    handle.process.join(2.0)
                why = self._server_end() or f"{type(exc).__name__}: {exc}"
                raise UsersNotStarted(f"{len(started)} of {len(specs)} users started, then: {why}") from None
        return started

    def _spawn(self, spec: WorkerSpec) -> WorkerHandle:
        parent_conn, child_conn = self._context.Pipe(duplex=False)
        # a forked user takes the run's environment as it is now, not as its server found it
        environ = dict(os.environ) if self._server_pid is not None else None
        process = self._context.Process(target=worker_main, name=f"tickbench-worker-{spec.worker}",
                                        args=(spec, child_conn, self.events, self._t0, self._rounds, environ),
                                        daemon=True)
        process.start()
        child_conn.close()
        return WorkerHandle(index=spec.worker, process=process, conn=parent_conn)

    def release(self, t0: float) -> None:
        self._t0.value = t0
        self.events.start.set()

    def release_probes(self) -> None:
        self.events.probe.set()

    def abort(self) -> None:
        if self._rounds is not None:
            self._rounds.abort()

    def _server_end(self, wait_s: float = 2.0) -> str:
        """How the forkserver ended, once it has (a failed fork's reply comes as its exit begins)."""
        deadline = time.monotonic() + wait_s
        while not self.trouble() and time.monotonic() < deadline:
            time.sleep(0.02)
        return self.trouble()

    def trouble(self) -> str:
        if self._server_pid is None:
            return ""
        return processes.server_end(self._server_pid)

    def close(self) -> None:
        """Nothing to let go of: the collector has joined the step's processes."""


class LocalLauncher:
    """A step's users on this machine, forked from a forkserver that preloaded ``preload`` (the
    server is started once; one that died is started again only for a step after one whose fork
    failed), or spawned."""

    def __init__(self, start: str = "spawn", preload: tuple[str, ...] = ()):
        self.start, self.preload = processes.available_start(start), preload
        self._server_pid: int | None = None

    def host_for(self, users: int) -> list[str]:
        return [""] * users

    def begin_step(self, key: str) -> LocalStep:
        if self.start != "forkserver":
            return LocalStep(processes.user_context("spawn"))
        if self._server_pid is not None:
            ended = processes.server_end(self._server_pid)
            if ended and not ended.startswith(processes.FORK_FAILED_WORDS):
                raise StartersLost(ended)
        context = processes.user_context("forkserver", self.preload)
        self._server_pid = processes.forkserver_pid()
        return LocalStep(context, self._server_pid)

    def close(self) -> None:
        """Nothing to let go of: no connection outlives a step."""
