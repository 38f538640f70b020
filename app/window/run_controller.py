"""The window's side of a run: it starts the run's own process (``app.window.run_process``) and follows
it by reading the run's folder (``workloads.run.live``), turning what it reads into Qt signals.
Widgets only listen.

Nothing measured passes through this process: the run process owns its workers, its collector and
its writes to the results catalog, so the window can close, crash or freeze without losing a
record, and a window opened later attaches to a run still going (``attach_running``).
"""
from __future__ import annotations

import os
import shutil
import signal
import subprocess
import time
from collections import deque
from pathlib import Path

from PySide6.QtCore import QObject, QTimer, Signal

from app.window.run_process import log_tail, start_run_process
from workloads.run.live import read_live, request_stop
from workloads.results.run_files import LIVE_FILE, RunFolder
from workloads.run.runner import RunResult, check_scenario, new_run_id
from workloads.scenario import Scenario
from workloads.results.dead_runs import abort_if_dead, process_alive, run_process
from workloads.results.store import ResultsStore
from workloads.run.worker import describe_error
from workloads.text import error_words

POLL_MS = 200  # a snapshot five times a second is plenty for people; charts repaint on their own timers
REAP_MS = 500
NEXT_RUN_DELAY_MS = 1000      # a playlist's pause between runs: the end of one is seen before the next
STOP_WAIT_S = 5.0
FINAL_SNAPSHOT_WAIT_S = 3.0


class RunController(QObject):
    run_started = Signal(str, object)           # run id, Scenario
    snapshot_ready = Signal(object)             # LiveSnapshot
    run_finished = Signal(object)               # RunResult
    run_failed_to_start = Signal(str)           # readable message
    queue_changed = Signal(int)                 # scenarios waiting (demo playlist)

    def __init__(self, store: ResultsStore, parent: QObject | None = None):
        super().__init__(parent)
        self.store = store
        self._run_id: str | None = None
        self._process: subprocess.Popen | None = None     # None when attached to another's run
        self._seen_live = None
        self._queue: deque[Scenario] = deque()
        self._holds: set[str] = set()
        self._timer = QTimer(self)
        self._timer.setInterval(POLL_MS)
        self._timer.timeout.connect(self._poll)
        # a run's record can say it is over before its process has exited: reaped later, never waited for
        self._unreaped: list[subprocess.Popen] = []
        self._reap_timer = QTimer(self)
        self._reap_timer.setInterval(REAP_MS)
        self._reap_timer.timeout.connect(self._reap)

    @property
    def busy(self) -> bool:
        return self._run_id is not None

    @property
    def current_run_id(self) -> str | None:
        return self._run_id

    @property
    def waiting(self) -> int:
        return len(self._queue)

    @property
    def held(self) -> bool:
        return bool(self._holds)

    def _folder(self) -> Path:
        return self.store.runs_dir / self._run_id

    # ---- starting and attaching -------------------------------------------------------------
    def start(self, scenario: Scenario) -> bool:
        """Start one scenario in its own process now; False (with a signal) if it cannot start."""
        if self.busy:
            self.run_failed_to_start.emit("a run is already going: stop it first")
            return False
        try:
            check_scenario(scenario)
        except Exception as exc:  # bad parameters, unknown target: say so, start nothing
            self.run_failed_to_start.emit(error_words(exc) if isinstance(exc, (ValueError, KeyError))
                                          else describe_error(exc))
            return False
        run_id = new_run_id()
        try:
            process = start_run_process(scenario, self.store.path, self.store.runs_dir, run_id)
        except OSError as exc:
            self.run_failed_to_start.emit(f"cannot start the run's process: {exc}")
            return False
        self._follow(run_id, process)
        self.run_started.emit(run_id, scenario)
        return True

    def attach_running(self) -> str | None:
        """Follow a run still going on this machine (started by an earlier window); its id."""
        if self.busy:
            return None
        for record in self.store.running():     # no catalog-wide read on the GUI thread
            process = run_process(record)
            if process is not None and process_alive(process):
                run = self.store.run(record["run_id"])
                self._follow(run["run_id"], None)
                self.run_started.emit(run["run_id"], Scenario.from_dict(run["scenario"]))
                return run["run_id"]
        return None

    def _follow(self, run_id: str, process: subprocess.Popen | None) -> None:
        self._run_id, self._process, self._seen_live = run_id, process, None
        self._last_status, self._final_deadline = "", 0.0
        self._timer.start()

    # ---- control ------------------------------------------------------------------------------
    def start_playlist(self, scenarios: list[Scenario]) -> None:
        """Run scenarios one after another, unattended (demo mode)."""
        self._queue.extend(scenarios)
        self.queue_changed.emit(len(self._queue))
        if not self.busy:
            self._start_next()

    def hold(self, reason: str = "held") -> None:
        """Freeze the playlist: a run that ends while held starts no next one until every reason
        given is released. The running run is not touched. Holding again for the same reason does
        nothing more, so one ``release(reason)`` undoes it; different reasons (the Stop question, a
        presenter's pause) each need their own release."""
        self._holds.add(reason)

    def release(self, reason: str = "held") -> None:
        """Undo ``hold(reason)`` (a reason not held is ignored). Once nothing holds the playlist
        and no run is going, its next scenario starts after the usual pause between runs."""
        self._holds.discard(reason)
        if not self._holds and self._queue and not self.busy:
            QTimer.singleShot(NEXT_RUN_DELAY_MS, self._start_next)

    def stop(self, keep_queue: bool = False, run_id: str | None = None) -> bool:
        """Cancel the running scenario (its workers stop within a second); the queued ones are
        dropped too unless ``keep_queue`` (skip this experiment, go on with the next).

        With ``run_id``, only if that run is still the current one: a request about a run that has
        already ended (a question left open meanwhile) does nothing at all, the queue included.
        True if a stop was sent."""
        if run_id is not None and run_id != self._run_id:
            return False
        if not keep_queue:
            self._queue.clear()
            self.queue_changed.emit(0)
        if not self.busy:
            return False
        request_stop(self._folder())
        if not RunFolder(self._folder()).run():
            return True    # its process is still starting: a signal now would kill it raw; it reads the stop file
        pid = self._process.pid if self._process is not None else run_process(self.store.run(self._run_id)).pid
        try:
            os.kill(pid, signal.SIGTERM)          # at once; the stop file covers a missed signal
        except (OSError, AttributeError):
            pass                                  # already gone: the stop file is there if not
        return True

    def detach(self) -> None:
        """Stop following; the run goes on in its own process and a later window attaches to it."""
        self._queue.clear()
        self._timer.stop()
        self._run_id = self._process = None
        self._reap()

    def shutdown(self) -> None:
        """On window close with the run stopped: ask it to stop and wait briefly for its end."""
        self._reap()
        if not self.busy:
            return
        process = self._process
        self.stop()
        if process is not None:
            try:
                process.wait(STOP_WAIT_S)
            except subprocess.TimeoutExpired:
                pass                              # it goes on stopping on its own; the window closes
        self.detach()

    # ---- following ----------------------------------------------------------------------------
    def _poll(self) -> None:
        if not self.busy:
            return
        folder = self._folder()
        self._publish_live(folder)
        run = RunFolder(folder).run()
        ended = self._process.poll() is not None if self._process is not None else not self._alive(run)
        status = run.get("status", "running")
        if status != "running":
            # the record says it is over; the last live snapshot follows a moment later
            self._final_deadline = self._final_deadline or time.monotonic() + FINAL_SNAPSHOT_WAIT_S
            if ended or self._last_status == status or time.monotonic() > self._final_deadline:
                self._publish_live(folder)
                self._end(RunResult(self._run_id, status, run.get("message") or ""))
        elif ended and not run:
            message = log_tail(self.store.runs_dir, self._run_id) or "the run's process ended at once"
            shutil.rmtree(folder, ignore_errors=True)
            self._end(None, f"run not started: {message}")
        elif ended:
            abort_if_dead(folder)
            run = RunFolder(folder).run()
            self._end(RunResult(self._run_id, run.get("status", "aborted"), run.get("message") or ""))

    def _alive(self, run: dict) -> bool:
        process = run_process(run)
        return process is not None and process_alive(process)

    def _publish_live(self, folder: Path) -> None:
        try:
            stamp = (folder / LIVE_FILE).stat().st_mtime_ns
        except FileNotFoundError:
            return
        if stamp != self._seen_live:
            snapshot = read_live(folder)
            if snapshot is not None:
                self._seen_live, self._last_status = stamp, snapshot.status
                self.snapshot_ready.emit(snapshot)

    def _end(self, result: RunResult | None, failure: str = "") -> None:
        self._timer.stop()
        if self._process is not None:
            self._unreaped.append(self._process)
            self._reap()
        self._run_id = self._process = None
        if result is None:
            self.run_failed_to_start.emit(failure)
        else:
            self.run_finished.emit(result)
        if self._queue:
            QTimer.singleShot(NEXT_RUN_DELAY_MS, self._start_next)     # unless held by then

    def _reap(self) -> None:
        """Collect the exit of ended runs' processes (no zombies), without waiting for any."""
        self._unreaped = [process for process in self._unreaped if process.poll() is None]
        if self._unreaped and not self._reap_timer.isActive():
            self._reap_timer.start()
        elif not self._unreaped:
            self._reap_timer.stop()

    def _start_next(self) -> None:
        # a scenario that cannot start (an engine refuses its question) is said and passed over:
        # the playlist goes on with the next
        while self._queue and not self.busy and not self._holds:
            scenario = self._queue.popleft()
            self.queue_changed.emit(len(self._queue))
            if self.start(scenario):
                return
