"""A step's collector: reads every worker's pipe (``workloads.run.messages``), writes the records to
the run's store and the live aggregates, watches for deaths, and owns the workers' states:
starting -> ready -> running -> measured -> done, or failed / cancelled from any of them.

What it needs of the run comes in a ``RunContext``; it never reaches into the runner."""
from __future__ import annotations

import time
from dataclasses import dataclass
from multiprocessing.connection import wait
from typing import Any, Callable

import numpy as np

from workloads.operations import StepPlan
from workloads.run.messages import Done, Failed, MeasuredDone, Ready, Records
from workloads.run.metrics import LiveAggregates
from workloads.run.records import MEASURED, Columns, batch_length
from workloads.run.sampler import ResourceSampler

CANCEL_GRACE_S = 0.7        # then workers still busy in an operation are killed (cancel <= 1 s)
STORE_FLUSH_S = 0.05      # records on disk within ~0.1 s: a kill -9 loses no more (tests/test_faults_catalog.py)


def exit_description(code: int | None) -> str:
    import signal
    if code is None:
        return "still running"
    if code < 0:
        try:
            return f"killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"killed by signal {-code}"
    return f"exited with code {code}"


@dataclass
class RunContext:
    """The run as its collectors see it."""
    run_id: str
    store: Any                                  # workloads.results.store.ResultsStore (its writers)
    metrics: LiveAggregates
    sampler: ResourceSampler | None
    cancelled: Callable[[], bool]
    clock: Callable[[], float]                  # seconds since the run started
    progress: Callable[[StepPlan, int, int, float], float]   # (step, ops, rows, elapsed) -> 0..1


@dataclass
class WorkerHandle:
    """One worker process of a step, as its collector knows it."""
    index: int
    process: Any
    conn: Any
    state: str = "starting"
    pid: int | None = None
    node: str = ""
    error: str = ""
    traceback: str = ""
    host: str = ""              # the load generator it runs on ("" = the run's own machine)




_LIVE = ("starting", "ready", "running", "measured")   # states in which a worker's pipe is read


class Collector:
    """Reads every worker's pipe, feeds the store and the live aggregates, watches for deaths.

    It owns the workers' states: starting -> ready -> running -> measured -> done, or failed /
    cancelled from any of them.
    """

    def __init__(self, run: RunContext, step: StepPlan, workers: list[WorkerHandle],
                 on_lost: Callable[[], None] = lambda: None):
        self.run, self.step, self.workers = run, step, workers
        self.on_lost = on_lost       # a worker stopped for good: the others must not wait for it
        self.pending: list[Columns] = []
        self.last_end = 0.0          # release-relative end of the last measured operation
        self.cache_methods: list[str] = []
        self.failures: list[str] = []
        self.ops = self.rows = 0
        self.conditions: dict[str, Any] = {}   # the first ready user's process conditions
        self._last_flush = self._last_sample = time.monotonic()
        self._spans: list[tuple[np.ndarray, np.ndarray]] = []     # (starts, ends) of measured operations

    def _open(self) -> list[WorkerHandle]:
        return [w for w in self.workers if w.conn is not None]

    def set_state(self, w: WorkerHandle, state: str) -> None:
        w.state = state
        self.run.metrics.set_worker(w.index, state)

    def wait_ready(self, timeout_s: float) -> None:
        deadline = time.monotonic() + timeout_s
        while any(w.state == "starting" for w in self.workers):
            if self.run.cancelled() or time.monotonic() > deadline:
                for w in self.workers:
                    if w.state == "starting":
                        reason = "cancelled before it started" if self.run.cancelled() else \
                            f"not ready within {timeout_s:.0f} s"
                        self._fail(w, reason, state="cancelled" if self.run.cancelled() else "failed")
                        w.process.kill()
                return
            self._poll(0.1, None)
            self._sample()

    def collect(self, offset: float, stop_event, until: tuple[str, ...]) -> None:
        """Read records while any worker is in one of the ``until`` states (or cancel)."""
        cancel_deadline = None
        while any(w.state in until and w.conn is not None for w in self.workers):
            if self.run.cancelled() and cancel_deadline is None:
                stop_event.set()
                cancel_deadline = time.monotonic() + CANCEL_GRACE_S
            if cancel_deadline is not None and time.monotonic() > cancel_deadline:
                for w in self._open():
                    w.process.kill()
                    w.process.join(1.0)
                    self._drain(w, offset)
                    if w.conn is not None:
                        self._close(w, "cancelled", "stopped by the user during an operation")
                break
            self._poll(0.1, offset)
            self._flush_if_due()
            self._sample()
            elapsed = self.run.clock() - offset
            self.run.metrics.set_status(
                "running", progress=self.run.progress(self.step, self.ops, self.rows, elapsed))

    def busy_s(self) -> float:
        """Seconds during which at least one measured operation ran (a cold step's window: the
        clears between its rounds left out, ``workloads.results.figures``)."""
        if not self._spans:
            return 0.0
        starts = np.concatenate([s for s, _ in self._spans])
        ends = np.concatenate([e for _, e in self._spans])
        order = np.argsort(starts, kind="stable")
        busy, run_start, run_end = 0.0, float(starts[order[0]]), float(ends[order[0]])
        for i in order[1:]:
            if starts[i] > run_end:
                busy += run_end - run_start
                run_start, run_end = float(starts[i]), float(ends[i])
            else:
                run_end = max(run_end, float(ends[i]))
        return busy + run_end - run_start

    def finish(self) -> None:
        for w in self.workers:
            w.process.join(2.0)
            if w.process.is_alive():
                w.process.kill()
                w.process.join(2.0)
            if w.conn is not None:     # a worker that never said Done (stopped before the release)
                self._close(w, "cancelled" if self.run.cancelled() else w.state)
        self._flush()

    def _poll(self, timeout: float, offset: float | None) -> None:
        by_conn = {w.conn: w for w in self._open()}
        if not by_conn:
            time.sleep(timeout)
            return
        for conn in wait(list(by_conn), timeout=timeout):
            self._receive(by_conn[conn], offset)
        for w in self._open():  # a worker that died without a word (killed, crashed)
            if not w.process.is_alive() and not w.conn.poll():
                w.process.join(0.1)
                self._ended_without_a_word(w)

    def _ended_without_a_word(self, w: WorkerHandle) -> None:
        """A worker gone before saying Done: stopped by the user (Stop kills one still inside an
        operation after ``CANCEL_GRACE_S``), else a failure that names how it ended."""
        if w.state in _LIVE and self.run.cancelled():
            self._close(w, "cancelled", "stopped by the user during an operation")
        elif w.state in _LIVE:
            self._fail(w, f"worker process {exit_description(w.process.exitcode)}")
        else:
            self._close(w, w.state)

    def _drain(self, w: WorkerHandle, offset: float) -> None:
        while w.conn is not None and w.conn.poll():
            self._receive(w, offset)

    def _receive(self, w: WorkerHandle, offset: float | None) -> None:
        try:
            message = w.conn.recv()
        except (EOFError, OSError, Exception):  # closed or half-written by a dying worker
            w.process.join(0.5)
            self._ended_without_a_word(w)
            return
        if isinstance(message, Ready):
            w.pid, w.node = message.pid, message.node
            self.conditions = self.conditions or dict(message.conditions)
            self.set_state(w, "ready")
            self.run.store.set_worker(self.run.run_id, self.step.index, w.index, w.pid, w.node, "ready",
                                      host=w.host)
        elif isinstance(message, Records):
            self._add(message.batch, offset)
        elif isinstance(message, MeasuredDone):
            self.cache_methods = list(message.cache_methods) or self.cache_methods
            self.set_state(w, "measured")
        elif isinstance(message, Done):
            self.cache_methods = list(message.cache_methods) or self.cache_methods
            self._close(w, "cancelled" if self.run.cancelled() else "done")
        elif isinstance(message, Failed):
            self._fail(w, message.error, traceback=message.traceback)

    def _add(self, batch: Columns, offset: float | None) -> None:
        if not batch_length(batch) or offset is None:
            return
        self.pending.append(batch)
        self.run.metrics.add(batch, offset)
        measured = batch["kind"] == MEASURED
        ok = batch["ok"] & measured
        if measured.any():
            starts = batch["t_start"][measured]
            ends = starts + batch["total_s"][measured]
            self.last_end = max(self.last_end, float(ends.max()))
            self._spans.append((starts, ends))
        self.ops += int(ok.sum())
        self.rows += int(batch["rows"][ok].sum())

    def _fail(self, w: WorkerHandle, error: str, state: str = "failed", traceback: str = "") -> None:
        w.error, w.traceback = error, traceback
        self.on_lost()
        if state == "failed":
            self.failures.append(f"worker {w.index} (step {self.step.index + 1}): {error}")
        self._close(w, state)

    def _close(self, w: WorkerHandle, state: str, error: str = "") -> None:
        w.state = state
        w.error = w.error or error
        if w.conn is not None:
            w.conn.close()
            w.conn = None
        self.run.metrics.set_worker(w.index, state, w.error)
        self.run.store.set_worker(self.run.run_id, self.step.index, w.index, w.pid, w.node,
                                  state, w.error, w.process.exitcode, w.traceback, w.host)

    def _flush_if_due(self) -> None:
        if time.monotonic() - self._last_flush >= STORE_FLUSH_S:
            self._flush()

    def _flush(self) -> None:
        if self.pending:
            self.run.store.add_ops(self.run.run_id, self.pending)     # batch by batch: no copy to join them
            self.pending = []
        self._last_flush = time.monotonic()

    def _sample(self) -> None:
        now = time.monotonic()
        if now - self._last_sample < 1.0 or self.run.sampler is None:
            return
        self._last_sample = now
        point = self.run.sampler.sample(self.run.clock())
        self.run.metrics.add_resources(point)
        self.run.store.add_resource(self.run.run_id, point.t, point.cpu_percent, point.rss_bytes,
                                       point.read_bytes_per_s, point.write_bytes_per_s)
