"""The Run tab's side of the main window: a scenario started with its server's password, a
playlist played, a run followed (also one an earlier window left going), stopped, and its end
shown; a stored run shown there with the seed reports' figures beside it."""
from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QObject, QTimer, Signal
from PySide6.QtWidgets import QFileDialog, QLabel, QMessageBox

from app.demo.mode import builtin_playlists
from app.window.shell import Shell
from workloads.playlists import load_playlist
from workloads.results.references import DISK, published_findings, published_sweeps
from workloads.results.suite_figures import REPORT_WORKLOADS
from workloads.scenario import Scenario, run_name
from workloads.text import plural

STOP_QUESTION_HOLD = "stop question"     # the playlist waits while the Stop question is open


class RunsController(QObject):
    running_changed = Signal(bool, str)  # a run is going (its name), or none is
    form_error = Signal(str)             # why a run did not start, or how it failed: under the form
    tab_wanted = Signal()                # the Run tab to the front
    run_ended = Signal(str)              # its id: stored, its figures exact
    newest_wanted = Signal()             # at start, nothing to follow: the newest stored run, if any

    def __init__(self, shell: Shell, dashboard, status_label: QLabel):
        super().__init__(shell)
        self._shell = shell
        self._runs = shell.runs
        self._dashboard = dashboard
        self._status = status_label
        self._running_name = ""
        self.playlist_actions = [shell.action(title, lambda _=False, p=path: self.play_playlist(p))
                                 for title, path in builtin_playlists().items()]
        self.playlist_file_action = shell.action("Playlist file…", self._open_playlist_dialog, name="open_playlist")
        self._runs.run_started.connect(self._on_run_started)
        self._runs.run_finished.connect(self._on_run_finished)
        self._runs.run_failed_to_start.connect(self._on_failed_to_start)
        self._runs.queue_changed.connect(self._on_queue_changed)
        self._runs.snapshot_ready.connect(dashboard.show_snapshot)

    # ---- starting ---------------------------------------------------------------------------
    def start(self, scenario: Scenario) -> bool:
        try:
            scenario = self._shell.with_password(scenario)
        except ValueError as exc:            # a local engine that is not running: how to start it
            self.form_error.emit(f"run not started: {exc}")
            return False
        if scenario is None:
            self.form_error.emit("run not started: no password given")
            return False
        return self._runs.start(scenario)

    def play_playlist(self, path: Path) -> None:
        try:
            title, scenarios = load_playlist(path)
        except ValueError as exc:
            self._shell.show_error(str(exc))
            return
        configs = {key: config for key, _label, _kind, config in self._shell.targets()}
        scenarios = [s if s.target_config or s.target not in configs
                     else s.with_changes(target_config=configs[s.target]) for s in scenarios]
        self._shell.say(f"Playing “{title}”: {len(scenarios)} scenarios", 5000)
        self._runs.start_playlist(scenarios)

    def _open_playlist_dialog(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self._shell.window, "Play a playlist", "", "Playlists (*.toml)")
        if path:
            self.play_playlist(Path(path))

    def attach_running(self) -> None:
        """A run left going by an earlier window (closed, or crashed) is followed again."""
        run_id = self._runs.attach_running()
        if run_id:
            self._shell.say(f"attached to run {run_id}, still going in its own process", 10000)
        else:
            self.newest_wanted.emit()     # the newest run, not an empty view

    # ---- following --------------------------------------------------------------------------
    def _on_run_started(self, run_id: str, scenario: Scenario) -> None:
        self._dashboard.start_run(run_name(scenario))
        self._show_references(scenario.workload, scenario.dataset)
        self._set_running(True, run_name(scenario))
        self.form_error.emit("")
        # in a later pass of the event loop: painting the tab is the start's longest step
        QTimer.singleShot(1, self, lambda: self.tab_wanted.emit())
        self._status.setText(f"running “{run_name(scenario)}” ({run_id})")

    def _set_running(self, running: bool, name: str = "") -> None:
        self._running_name = name
        self.running_changed.emit(running, name)

    def _on_run_finished(self, result) -> None:
        name = self._running_name
        self._set_running(self._runs.busy, self._running_name if self._runs.busy else "")
        text = f"“{name}” ({result.run_id}) {result.status}" + (f": {result.message}" if result.message else "")
        self._status.setText(text)
        if result.status == "failed":
            self.form_error.emit(result.message)
        self.run_ended.emit(result.run_id)

    def _on_failed_to_start(self, message: str) -> None:
        self.form_error.emit(message)
        self._set_running(self._runs.busy, self._running_name if self._runs.busy else "")

    def _on_queue_changed(self, waiting: int) -> None:
        if waiting:
            self._shell.say(f"{waiting} more scenario{'s' if waiting != 1 else ''} waiting in the playlist")
        else:
            self._shell.window.statusBar().clearMessage()

    def stop_run(self) -> None:
        """Stop is a cancel: what was measured is kept. With more experiments queued (a report's
        or a playlist's), ask whether to skip only this one or stop them all.

        The answer is about the run the question named: the playlist is held while it is open, so
        a run that ends meanwhile starts no next one, and "Skip this one" then stops nothing (the
        playlist goes on). "Stop all" drops the queue and stops whatever run is going: while held
        that can only be the named one, and every run of the playlist is what was asked to stop."""
        runs = self._runs
        if not runs.busy:
            return
        waiting = runs.waiting
        if not waiting:
            runs.stop()
            self._status.setText(f"stopping “{self._running_name}”… (its users end within a second)")
            return
        named_id, named = runs.current_run_id, self._running_name
        runs.hold(STOP_QUESTION_HOLD)
        try:
            box = QMessageBox(QMessageBox.Icon.Question, "Stop",
                              f"“{named}” is running and {plural(waiting, 'more experiment')} "
                              "wait after it. What was measured so far is kept either way.", parent=self._shell.window)
            skip = box.addButton("Skip this one", QMessageBox.ButtonRole.AcceptRole)
            stop_all = box.addButton(f"Stop all {waiting + 1}", QMessageBox.ButtonRole.DestructiveRole)
            box.addButton("Keep running", QMessageBox.ButtonRole.RejectRole)
            box.setDefaultButton(skip)
            box.exec()
            if box.clickedButton() is skip:
                stopped = runs.stop(keep_queue=True, run_id=named_id)
                self._status.setText(f"stopping “{named}”… (its users end within a second)" if stopped
                                     else f"“{named}” had already finished; the playlist goes on")
            elif box.clickedButton() is stop_all:
                going = self._running_name if runs.busy else ""
                if runs.stop(keep_queue=False):
                    self._status.setText(f"stopping “{going}”… (its users end within a second); "
                                         "nothing more is played")
                else:
                    self._status.setText(f"“{named}” had already finished; nothing more is played")
        finally:
            runs.release(STOP_QUESTION_HOLD)

    # ---- a stored run on the tab ------------------------------------------------------------
    def show_stored(self, snapshot, answer, over_a_shown_run: bool = True) -> None:
        """A stored run's final figures and answer; ``over_a_shown_run=False``: only if the tab
        still shows nothing (start-up). A run started meanwhile keeps its live view."""
        if self._runs.busy and self._runs.current_run_id != answer.run_id:
            return
        if not over_a_shown_run and self._dashboard.snapshot is not None:
            return
        self._show_references(answer.workload, answer.dataset)
        self._dashboard.show_final(snapshot)
        self._dashboard.show_results(answer)
        if over_a_shown_run:
            self.tab_wanted.emit()

    def _show_references(self, workload: str, dataset: str) -> None:
        """The seed reports' figures for this workload and dataset beside what is measured."""
        self._dashboard.clear_references()
        for sweep in published_sweeps(workload, dataset):
            self._dashboard.set_sweep_reference(sweep.label, sweep.users, sweep.values, sweep.metric)
        queries = published_findings("query-suite", dataset) if workload == "query-suite" else []
        footprint = published_findings(DISK, dataset) if workload in REPORT_WORKLOADS else []
        own = published_findings(workload, dataset) if workload in ("import", "export") else []
        self._dashboard.set_published_findings(own, queries, footprint)

    def shown_run_id(self) -> str | None:
        """The run the tab shows (the live one while it runs), if any."""
        return self._dashboard.snapshot.run_id if self._dashboard.snapshot is not None else None

    def clear(self) -> None:
        self._dashboard.clear()

    def charts(self) -> dict:
        return self._dashboard.charts()

    def chart_in_view(self) -> str:
        return self._dashboard.chart_in_view()
