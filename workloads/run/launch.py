"""How a step's users are started and released: as processes on this machine (``LocalLauncher``),
or across a Dask cluster's hosts (``workloads.distributed.launcher``). The runner sees only this
interface; the collector sees only ``WorkerHandle``s (a pipe and something process-like)."""
from __future__ import annotations

import multiprocessing as mp
from typing import Protocol

from workloads.run.cold import ColdRounds
from workloads.run.collector import WorkerHandle
from workloads.run.worker import StepEvents, WorkerSpec, worker_main


class StepLaunch(Protocol):
    stop: object                                   # .set() stops every user (cancel)

    def start(self, specs: list[WorkerSpec]) -> list[WorkerHandle]: ...
    def release(self, t0: float) -> None: ...      # t0: the run host's time.monotonic() of the release
    def release_probes(self) -> None: ...
    def abort(self) -> None: ...                   # a user stopped for good: no other may wait for it
    def close(self) -> None: ...


class Launcher(Protocol):
    def host_for(self, users: int) -> list[str]: ...     # the host of each user of a step
    def begin_step(self, key: str) -> StepLaunch: ...
    def close(self) -> None: ...


class LocalStep:
    """Users as spawned processes of this one, released by multiprocessing events."""

    def __init__(self, context):
        self._context = context
        self.events = StepEvents.make(context)
        self.stop = self.events.stop
        self._t0 = context.RawValue("d", 0.0)   # no lock: see StopFlag
        self._rounds: ColdRounds | None = None

    def start(self, specs: list[WorkerSpec]) -> list[WorkerHandle]:
        first = specs[0] if specs else None
        if first is not None and first.scenario.get("cache") == "cold" and first.layout is not None:
            self._rounds = ColdRounds(self._context, len(specs), len(first.layout.days))
        return [self._spawn(spec) for spec in specs]

    def _spawn(self, spec: WorkerSpec) -> WorkerHandle:
        parent_conn, child_conn = self._context.Pipe(duplex=False)
        process = self._context.Process(target=worker_main, name=f"tickbench-worker-{spec.worker}",
                                        args=(spec, child_conn, self.events, self._t0, self._rounds), daemon=True)
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

    def close(self) -> None:
        """Nothing to let go of: the collector has joined the step's processes."""


class LocalLauncher:
    def __init__(self):
        self._context = mp.get_context("spawn")

    def host_for(self, users: int) -> list[str]:
        return [""] * users

    def begin_step(self, key: str) -> LocalStep:
        return LocalStep(self._context)

    def close(self) -> None:
        """Nothing to let go of: no connection outlives a step."""
