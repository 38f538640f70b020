"""The scenario side of the main window: the Scenario and Load generators docks, the Run toolbar
(Run and Stop always in reach, with the name of what Run would start), and the scenario files of
the File menu (a scenario opened or saved, a built-in one, a tick file imported)."""
from __future__ import annotations

import html
from pathlib import Path

from PySide6.QtCore import QObject, Qt, Signal
from PySide6.QtGui import QKeySequence
from PySide6.QtWidgets import QFileDialog, QLabel, QToolBar

from app.demo.mode import builtin_scenarios
from app.window.shell import Shell
from workloads.run.worker import describe_error
from workloads.scenario import Scenario


class ScenarioController(QObject):
    run_requested = Signal(object)       # the form's scenario, with the Load generators panel's cluster
    stop_requested = Signal()

    def __init__(self, shell: Shell, builder, load_generators):
        super().__init__(shell)
        self._shell = shell
        self._builder = builder
        self._load_generators = load_generators
        self._running_name = ""
        action = shell.action
        self.open_action = action("Open scenario…", self._open_dialog, QKeySequence.StandardKey.Open)
        self.save_action = action("Save scenario…", self._save_dialog, QKeySequence.StandardKey.Save)
        self.builtin_actions = [action(title, lambda _=False, p=path: self.load_scenario(p))
                                for title, path in builtin_scenarios().items()]
        self.import_action = action("Import data…", self.import_data_dialog, "Ctrl+I", "import_data")
        self.run_action = action("Run", builder.run_button.click, "F5", "run")
        self.stop_action = action("Stop", lambda: self.stop_requested.emit(), "Esc", "stop")
        # F5 works whatever widget has focus, even in a dock floated apart (Esc stays the window's:
        # in a dialog it must close the dialog, not stop a run)
        self.run_action.setShortcutContext(Qt.ShortcutContext.ApplicationShortcut)
        self.toolbar = self._build_toolbar()
        builder.run_requested.connect(self.start)
        builder.stop_requested.connect(self.stop_requested)
        builder.changed.connect(self.show_scenario_name)
        builder.changed.connect(self.place_users)
        load_generators.connect_requested.connect(self._describe_cluster)
        shell.runs.snapshot_ready.connect(
            lambda snapshot: load_generators.show_live(snapshot.host_users, snapshot.host_rows_per_s))

    def _build_toolbar(self) -> QToolBar:
        bar = QToolBar("Run", self._shell.window, objectName="run_toolbar")
        bar.setMovable(False)
        bar.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextOnly)
        bar.addAction(self.run_action)
        bar.addAction(self.stop_action)
        bar.addSeparator()
        self.scenario_label = QLabel(objectName="toolbar_scenario")
        bar.addWidget(self.scenario_label)
        self.stop_action.setEnabled(False)
        return bar

    # ---- the form ---------------------------------------------------------------------------
    def _with_load_generators(self, scenario: Scenario) -> Scenario:
        """The Load generators panel's cluster, when it is on; ValueError if its values are wrong."""
        scheduler = self._load_generators.scheduler()
        if not scheduler:
            return scenario
        return scenario.with_changes(scheduler=scheduler, placement=self._load_generators.placement(),
                                     pins=self._load_generators.pins())

    def start(self, scenario: Scenario) -> bool:
        """Run pressed: ``scenario`` with the Load generators panel's cluster asked for; False, and
        why under the form, if the panel's values are wrong."""
        try:
            scenario = self._with_load_generators(scenario)
        except ValueError as exc:
            self.show_error(f"run not started: {exc}")
            return False
        self.run_requested.emit(scenario)
        return True

    def set_targets(self, targets: list) -> None:
        self._builder.set_targets(targets)
        self.show_scenario_name()

    def show_error(self, message: str) -> None:
        self._builder.show_error(message)

    def set_running(self, running: bool, name: str = "") -> None:
        self._running_name = name
        self._builder.set_running(running)
        self.run_action.setEnabled(not running)
        self.stop_action.setEnabled(running)
        self.show_scenario_name()

    def set_presenting(self, presenting: bool) -> None:
        """Before an audience the toolbar (its form echo) goes, and Esc belongs to the presenter."""
        self.toolbar.setVisible(not presenting)
        self.stop_action.setShortcut("" if presenting else "Esc")

    def show_scenario_name(self) -> None:
        """The form's scenario; while a run goes, the run's name, and the form's when it differs
        (being edited for later: nothing is queued)."""
        try:
            form = f"<b>{html.escape(self._builder.scenario().name)}</b>"
        except ValueError as exc:
            form = html.escape(str(exc))
        running = f"<b>{html.escape(self._running_name)}</b>"
        if not self._shell.runs.busy:
            text = f"Scenario: {form}"
        elif form == running:
            text = f"Running: {running}"
        else:
            text = f"Running: {running}&nbsp;&nbsp;·&nbsp;&nbsp;in the form: {form}"
        self.scenario_label.setText(text)

    def place_users(self) -> None:
        try:
            self._load_generators.set_users(max(self._builder.scenario().users))
        except ValueError:
            pass                      # the builder shows what is wrong when Run is pressed

    def _describe_cluster(self, scheduler: str) -> None:
        """The panel's Connect: the cluster's hosts, asked off the GUI thread."""
        from workloads.distributed.cluster import ClusterError, describe_scheduler

        def failed(exc: Exception) -> None:
            clear = isinstance(exc, (ClusterError, ImportError))       # their messages say what to do
            self._load_generators.show_error(str(exc) if clear else f"cannot describe {scheduler}: "
                                             f"{describe_error(exc)}")
        self._load_generators.set_connecting(True)
        self._shell.cluster_background.run("cluster", lambda: describe_scheduler(scheduler),
                                           self._load_generators.show_cluster, failed)

    # ---- files ------------------------------------------------------------------------------
    def load_scenario(self, path: Path) -> None:
        try:
            scenario = self._builder.load_from(path)
        except ValueError as exc:
            self._shell.show_error(str(exc))
            return
        self._load_generators.set_values(scenario.scheduler, scenario.placement, scenario.pins)

    def _open_dialog(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self._shell.window, "Open scenario", "", "Scenarios (*.toml)")
        if path:
            self.load_scenario(Path(path))

    def _save_dialog(self) -> None:
        path, _ = QFileDialog.getSaveFileName(self._shell.window, "Save scenario", "scenario.toml",
                                              "Scenarios (*.toml)")
        if path:
            try:
                self._with_load_generators(self._builder.scenario()).save_toml(Path(path))
            except (ValueError, OSError) as exc:
                self._shell.show_error(f"cannot save scenario: {exc}")

    def import_data_dialog(self):
        """File → Import data…: the dialog previews and imports off the GUI thread; the builder then lists it."""
        from app.imports.dialog import ImportDialog  # loaded on first use: keeps start-up light
        dialog = ImportDialog(self._shell.window)
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.imported.connect(lambda name: self._builder.refresh_datasets(select=name))
        dialog.open()
        return dialog
