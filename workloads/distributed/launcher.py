"""A run's users on a Dask cluster: per step, one task per host (``host_task.run_host``) pinned to
its Dask worker; the release, probes and stop as Dask ``Event``s; the users' messages back through
a Dask ``Queue``, relayed onto one local pipe per user so the step's collector reads remote users
exactly as local ones. A host whose Dask worker leaves the cluster fails its users with the
reason, after everything it had already sent has been relayed."""
from __future__ import annotations

import itertools
import threading
import time
from contextlib import suppress
from typing import Any

import multiprocessing as mp

from workloads.run.collector import WorkerHandle
from workloads.distributed.cluster import ClusterView, connect, describe, workers
from workloads.distributed.host_task import run_host, step_names, unpack
from workloads.distributed.placement import place_users
from workloads.run.messages import Done, Failed, Ready
from workloads.run.worker import WorkerSpec, describe_error

HOST_CHECK_S = 0.5            # how often the relay asks the scheduler which hosts are still there
RELAY_WAIT_S = 0.2


class RemoteUser:
    """A user process on another host, as the collector sees a process: alive until its last
    message has been relayed (or its host was lost)."""

    def __init__(self, worker: int, host: str, on_kill):  # on_kill(worker)
        self.worker, self.host = worker, host
        self.pid: int | None = None
        self.exitcode: int | None = None
        self._ended = threading.Event()
        self._on_kill = on_kill

    def is_alive(self) -> bool:
        return not self._ended.is_set()

    def join(self, timeout: float | None = None) -> None:
        self._ended.wait(timeout)

    def kill(self) -> None:
        """Have its host kill it."""
        self._on_kill(self.worker)

    def end(self, exitcode: int) -> None:
        if not self._ended.is_set():
            self.exitcode = exitcode
            self._ended.set()


class DaskLauncher:
    """Users placed across a Dask cluster's workers (``placement``); one per run."""

    def __init__(self, scheduler: str, placement: str = "spread", pins: dict[str, int] | None = None):
        self.scheduler, self.placement, self.pins = scheduler, placement, dict(pins or {})
        self.client = connect(scheduler)
        self.cluster: ClusterView | None = None

    def describe(self) -> ClusterView:
        self.cluster = describe(self.client, self.scheduler)
        return self.cluster

    def host_for(self, users: int) -> list[str]:
        cluster = self.cluster or self.describe()
        return place_users(users, [h.host for h in cluster.hosts], self.placement, self.pins)

    def offset_of(self, address: str) -> float:
        cluster = self.cluster or self.describe()
        return next(h.clock_offset_s for h in cluster.hosts if h.address == address)

    def begin_step(self, key: str) -> "DaskStep":
        return DaskStep(self, key)

    def close(self) -> None:
        self.client.close()


class DaskStep:
    """One step's users on the cluster."""

    def __init__(self, launcher: DaskLauncher, key: str):
        from distributed import Event, Queue, Variable

        self.launcher, self.key = launcher, key
        client = launcher.client
        names = step_names(key)
        self._start, self._probe = Event(names["start"], client), Event(names["probe"], client)
        self.stop = Event(names["stop"], client)
        self._t0 = Variable(names["t0"], client)
        self._heartbeat = Variable(names["heartbeat"], client)
        self._killed = Variable(names["killed"], client)        # users the collector gave up on
        self._queue = Queue(names["records"], client)
        self._users: dict[int, RemoteUser] = {}
        self._pipes: dict[int, Any] = {}
        self._futures: dict[str, Any] = {}
        self._lost: dict[str, str] = {}
        self._closing = threading.Event()
        self._relay: threading.Thread | None = None

    # --- the runner's side ---------------------------------------------------------------
    def start(self, specs: list[WorkerSpec]) -> list[WorkerHandle]:
        context = mp.get_context("spawn")
        handles = []
        for spec in specs:
            reader, writer = context.Pipe(duplex=False)
            user = RemoteUser(spec.worker, spec.host, self._kill)
            self._users[spec.worker], self._pipes[spec.worker] = user, writer
            handles.append(WorkerHandle(index=spec.worker, process=user, conn=reader, host=spec.host))
        self._heartbeat.set(0)
        self._killed.set([])
        by_host: dict[str, list[WorkerSpec]] = {}
        for spec in specs:
            by_host.setdefault(spec.host, []).append(spec)
        for host, host_specs in by_host.items():
            self._futures[host] = self.launcher.client.submit(
                run_host, host_specs, self.key, self.launcher.offset_of(host), self.launcher.client.id,
                workers=[host],
                allow_other_workers=False, pure=False, retries=0, key=f"{self.key}-host-{host}")
        self._relay = threading.Thread(target=self._relay_loop, name=f"relay {self.key}", daemon=True)
        self._relay.start()
        return handles

    def release(self, t0: float) -> None:
        self._t0.set(t0)                     # before the event: a host reads it as it is released
        self._start.set()

    def release_probes(self) -> None:
        self._probe.set()

    def abort(self) -> None:
        """Users on other hosts run a cold step without rounds (``workloads.run.cold``): none waits."""

    def trouble(self) -> str:
        """Nothing here: a host whose users cannot run reports them failed, each (``host_task``)."""
        return ""

    def close(self) -> None:
        self.stop.set()
        deadline = time.monotonic() + 5.0
        for user in self._users.values():
            user.join(max(0.0, deadline - time.monotonic()))
        self._closing.set()
        if self._relay is not None:
            self._relay.join(5.0)
        for future in self._futures.values():
            future.cancel()
        for variable in (self._t0, self._heartbeat, self._killed):
            try:
                variable.delete()
            except Exception:       # the scheduler may have gone with the hosts
                pass
        for writer in self._pipes.values():
            writer.close()

    def _kill(self, worker: int) -> None:
        """Its host kills that one user's process (the others go on); nothing more of it is relayed."""
        user = self._users[worker]
        if user.is_alive():
            user.end(-9)
            self._safely(lambda: self._killed.set(sorted(w for w, u in self._users.items() if u.exitcode == -9)))

    # --- the relay thread ----------------------------------------------------------------
    def _relay_loop(self) -> None:
        last_check = beat_at = 0.0
        beats = itertools.count(1)
        while not self._closing.is_set() and any(u.is_alive() for u in self._users.values()):
            self._forward(timeout=RELAY_WAIT_S)
            now = time.monotonic()
            if now - beat_at >= 1.0:
                beat_at = now
                self._safely(lambda: self._heartbeat.set(next(beats)))
            if now - last_check >= HOST_CHECK_S:
                last_check = now
                self._check_hosts()

    def _forward(self, timeout: float) -> None:
        """Relay what the hosts sent: wait up to ``timeout`` for the first item, then take the rest."""
        try:
            items = [self._queue.get(timeout=timeout)]
        except Exception:          # nothing came within the wait (TimeoutError), or no answer
            return
        with suppress(Exception):  # no answer this time: the rest comes on the next pass, the first is kept
            items += self._queue.get(batch=True)
        for item in items:
            for worker, message in unpack(item):
                self._deliver(worker, message)

    def _deliver(self, worker: int, message) -> None:
        user = self._users.get(worker)
        if user is None or not user.is_alive():
            return
        if isinstance(message, Ready):
            user.pid = message.pid
        try:
            self._pipes[worker].send(message)
        except OSError:                            # the collector closed its end: nothing to tell
            pass
        if isinstance(message, Done):
            user.end(0)
        elif isinstance(message, Failed):
            user.end(1)

    def _check_hosts(self) -> None:
        present = self._safely(lambda: set(workers(self.launcher.client)))
        for host, future in self._futures.items():
            if host in self._lost:
                continue
            reason = ""
            if present is not None and host not in present:
                reason = f"host {host} lost: its Dask worker left the cluster"
            elif future.status == "error":
                reason = f"host {host} failed: {describe_error(future.exception())}"
            elif future.status == "cancelled":
                reason = f"host {host}: its task was cancelled"
            if reason:
                self._lose(host, reason)

    def _lose(self, host: str, reason: str) -> None:
        self._lost[host] = reason
        self._forward(timeout=0.5)                 # what the host sent before it went is kept
        for worker, user in self._users.items():
            if user.host == host and user.is_alive():
                self._deliver(worker, Failed(worker, reason))
                user.exitcode = -9

    @staticmethod
    def _safely(call):
        try:
            return call()
        except Exception:          # the scheduler did not answer this time; ask again later
            return None

