"""Run control in the main window: a scenario started with its server's password and the Load
generators panel's cluster, a playlist played, a run followed (also one an earlier window left
going), stopped, and its end shown."""
from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QMessageBox

from workloads.scenario import Scenario, run_name
from workloads.playlists import load_playlist
from workloads.run.worker import describe_error
from workloads.text import plural

STOP_QUESTION_HOLD = "stop question"     # the playlist waits while the Stop question is open


class MainWindowRuns:
    """Starting, following and stopping runs for MainWindow."""

    def _with_password(self, scenario: Scenario) -> Scenario | None:
        """Server profiles need their password at run time; local targets pass through."""
        key = scenario.target_config.get("target_key")
        if not key or key not in {p.key for p in self.targets_panel.registry.profiles()}:
            return scenario
        config = self.targets_panel.resolve_config(key)
        if config is None:
            return None
        return scenario.with_changes(target_config={**config, "target_key": key})

    def _with_load_generators(self, scenario: Scenario) -> Scenario:
        """The Load generators panel's cluster, when it is on; ValueError if its values are wrong."""
        scheduler = self.load_generators.scheduler()
        if not scheduler:
            return scenario
        return scenario.with_changes(scheduler=scheduler, placement=self.load_generators.placement(),
                                     pins=self.load_generators.pins())

    def start_scenario(self, scenario: Scenario) -> bool:
        try:
            scenario = self._with_load_generators(scenario)
        except ValueError as exc:
            self.builder.show_error(f"run not started: {exc}")
            return False
        try:
            scenario = self._with_password(scenario)
        except ValueError as exc:            # a local engine that is not running: how to start it
            self.builder.show_error(f"run not started: {exc}")
            return False
        if scenario is None:
            self.builder.show_error("run not started: no password given")
            return False
        return self.controller.start(scenario)

    def describe_cluster(self, scheduler: str) -> None:
        """The panel's Connect: the cluster's hosts, asked off the GUI thread."""
        from workloads.distributed.cluster import ClusterError, describe_scheduler

        def failed(exc: Exception) -> None:
            clear = isinstance(exc, (ClusterError, ImportError))       # their messages say what to do
            self.load_generators.show_error(str(exc) if clear else f"cannot describe {scheduler}: "
                                            f"{describe_error(exc)}")
        self.load_generators.set_connecting(True)
        self.cluster_background.run("cluster", lambda: describe_scheduler(scheduler),
                                    self.load_generators.show_cluster, failed)

    def _place_builder_users(self) -> None:
        try:
            self.load_generators.set_users(max(self.builder.scenario().users))
        except ValueError:
            pass                      # the builder shows what is wrong when Run is pressed

    def play_playlist(self, path: Path) -> None:
        try:
            title, scenarios = load_playlist(path)
        except ValueError as exc:
            self.show_error(str(exc))
            return
        local = self.targets_panel.targets()
        configs = {key: config for key, _label, _kind, config in local}
        scenarios = [s if s.target_config or s.target not in configs
                     else s.with_changes(target_config=configs[s.target]) for s in scenarios]
        self.statusBar().showMessage(f"Playing “{title}”: {len(scenarios)} scenarios", 5000)
        self.controller.start_playlist(scenarios)

    def _attach_running(self) -> None:
        """A run left going by an earlier window (closed, or crashed) is followed again."""
        run_id = self.controller.attach_running()
        if run_id:
            self.statusBar().showMessage(f"attached to run {run_id}, still going in its own process", 10000)
        else:
            self.open_run(None, over_a_shown_run=False)     # the newest run, not an empty view

    def _on_run_started(self, run_id: str, scenario: Scenario) -> None:
        self.dashboard.start_run(run_name(scenario))
        self._show_references(scenario.workload, scenario.dataset)
        self._set_running(True, run_name(scenario))
        self.builder.show_error("")
        # in a later pass of the event loop: painting the tab is the start's longest step
        QTimer.singleShot(1, self, lambda: self.tabs.setCurrentWidget(self.dashboard))
        self.status_label.setText(f"running “{run_name(scenario)}” ({run_id})")

    def _set_running(self, running: bool, name: str = "") -> None:
        self._running_name = name
        self.builder.set_running(running)
        self.run_action.setEnabled(not running)
        self.stop_action.setEnabled(running)
        self._show_scenario_name()

    def _on_run_finished(self, result) -> None:
        name = self._running_name
        self._set_running(self.controller.busy, self._running_name if self.controller.busy else "")
        text = f"“{name}” ({result.run_id}) {result.status}" + (f": {result.message}" if result.message else "")
        self.status_label.setText(text)
        if result.status == "failed":
            self.builder.show_error(result.message)
        self.refresh_history()
        self.open_run(result.run_id)          # its answer first: the stored, exact figures

    def stop_run(self) -> None:
        """Stop is a cancel: what was measured is kept. With more experiments queued (a report's
        or a playlist's), ask whether to skip only this one or stop them all.

        The answer is about the run the question named: the playlist is held while it is open, so
        a run that ends meanwhile starts no next one, and "Skip this one" then stops nothing (the
        playlist goes on). "Stop all" drops the queue and stops whatever run is going: while held
        that can only be the named one, and every run of the playlist is what was asked to stop."""
        if not self.controller.busy:
            return
        waiting = self.controller.waiting
        if not waiting:
            self.controller.stop()
            self.status_label.setText(f"stopping “{self._running_name}”… (its users end within a second)")
            return
        named_id, named = self.controller.current_run_id, self._running_name
        self.controller.hold(STOP_QUESTION_HOLD)
        try:
            box = QMessageBox(QMessageBox.Icon.Question, "Stop",
                              f"“{named}” is running and {plural(waiting, 'more experiment')} "
                              "wait after it. What was measured so far is kept either way.", parent=self)
            skip = box.addButton("Skip this one", QMessageBox.ButtonRole.AcceptRole)
            stop_all = box.addButton(f"Stop all {waiting + 1}", QMessageBox.ButtonRole.DestructiveRole)
            box.addButton("Keep running", QMessageBox.ButtonRole.RejectRole)
            box.setDefaultButton(skip)
            box.exec()
            if box.clickedButton() is skip:
                stopped = self.controller.stop(keep_queue=True, run_id=named_id)
                self.status_label.setText(f"stopping “{named}”… (its users end within a second)" if stopped
                                          else f"“{named}” had already finished; the playlist goes on")
            elif box.clickedButton() is stop_all:
                going = self._running_name if self.controller.busy else ""
                if self.controller.stop(keep_queue=False):
                    self.status_label.setText(f"stopping “{going}”… (its users end within a second); "
                                              "nothing more is played")
                else:
                    self.status_label.setText(f"“{named}” had already finished; nothing more is played")
        finally:
            self.controller.release(STOP_QUESTION_HOLD)

    def _on_failed_to_start(self, message: str) -> None:
        self.builder.show_error(message)
        self._set_running(self.controller.busy, self._running_name if self.controller.busy else "")

    def _on_queue_changed(self, waiting: int) -> None:
        if waiting:
            self.statusBar().showMessage(f"{waiting} more scenario{'s' if waiting != 1 else ''} "
                                         "waiting in the playlist")
        else:
            self.statusBar().clearMessage()
