"""The main window: composes the widgets and wires them to the run controller. Nothing more."""
from __future__ import annotations

import html
from pathlib import Path

from PySide6.QtCore import QEvent, QSettings, Qt, QTimer
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import (QApplication, QDockWidget, QFileDialog, QInputDialog, QLabel,
                               QMainWindow, QMessageBox, QTabWidget, QToolBar)

from app.background import Background
from app.demo import DemoMode, builtin_playlists, builtin_scenarios
from app.run_controller import RunController
from widgets.compare_view import CompareView
from widgets.dashboard import LiveDashboard
from widgets.exporters import (export_chart, export_folder, remember_export_folder, run_caption,
                               suggest_filename)
from widgets.load_generators import LoadGeneratorsPanel
from widgets.report_gallery import ReportGallery
from widgets.run_history import RunHistoryView
from widgets.scenario_builder import ScenarioBuilder
from widgets.state import load_state, store_state
from widgets.targets_panel import TargetsPanel
from workloads.target_registry import TargetRegistry
from workloads.history import compare_frame, history_rows, newest_run_id, run_labels, snapshot_from_store
from workloads.run_summary import run_answer
from workloads.suite_figures import REPORT_WORKLOADS
from workloads.suite_history import suite_comparison
from workloads.references import DISK, published_findings, published_sweeps
from workloads.reproduce.calibration import calibration
from workloads.reproduce.catalog import REPORTS, parse_slot
from workloads.reproduce.reproduction import reproduction
from workloads.scenario import Scenario, load_playlist, run_name
from workloads.store import ResultsStore, StoreError
from workloads.worker import describe_error
from workloads.text import plural

STATE_KEYS = {"builder": "state/scenario_builder", "targets": "state/targets_panel",
              "dashboard": "state/dashboard", "history": "state/run_history",
              "load_generators": "state/load_generators"}
LEGACY_DOCKS = "targets_dock,scenario_dock"     # the docks of a layout saved before "window/docks"
DOCK_HEIGHTS = (36, 64)         # % of the height: targets (load generators behind), the scenario form


class MainWindow(QMainWindow):
    def __init__(self, store: ResultsStore, data_dir: Path, settings: QSettings,
                 password_store=None, theme: str = "light"):
        super().__init__()
        self.setWindowTitle("Tickbench")
        self.setObjectName("tickbench_main_window")
        self.store = store
        self.settings = settings
        self.controller = RunController(store, self)
        self.background = Background(self)
        self.cluster_background = Background(self)    # a scheduler's 10 s timeout must not hold the store's reads
        self._running_name = ""
        self.targets_panel = TargetsPanel(data_dir, registry=TargetRegistry.load(data_dir, password_store))
        self.builder = ScenarioBuilder(data_dir)
        self.load_generators = LoadGeneratorsPanel()
        self.dashboard = LiveDashboard()
        self.history = RunHistoryView()
        self.compare = CompareView()
        self._compared_run_ids: list[str] = []
        self.gallery = ReportGallery(data_dir)
        self.demo = DemoMode(self, theme)

        self.tabs = QTabWidget(objectName="main_tabs")
        self.tabs.addTab(self.gallery, "Reproduce")
        self.tabs.addTab(self.dashboard, "Run")
        self.tabs.addTab(self.history, "History")
        self.tabs.addTab(self.compare, "Compare")
        self.setCentralWidget(self.tabs)
        # The Run tab's first showing lays out a dozen charts (~0.13 s): done unseen while the window
        # is idle, not when Run is pressed (bench_event_loop found it the run's longest stall).
        self._run_tab_layout = QTimer(self, singleShot=True, interval=300)
        self._run_tab_layout.timeout.connect(self._lay_out_run_tab)
        self._run_tab_drawn = False
        self._docks = [self._add_dock("Targets", self.targets_panel, "targets_dock"),
                       self._add_dock("Scenario", self.builder, "scenario_dock"),
                       self._add_dock("Load generators", self.load_generators, "load_generators_dock")]
        self.status_label = QLabel()
        self.statusBar().addPermanentWidget(self.status_label)
        self._build_menus()
        self._build_toolbar()
        self._connect()
        self._restore()
        self.builder.set_targets(self.targets_panel.targets())
        self.gallery.set_targets(self.targets_panel.targets())
        # a fresh start (no runs yet) opens on the gallery; later ones on the live dashboard
        self.tabs.setCurrentWidget(self.dashboard if self.store.run_ids() else self.gallery)
        QTimer.singleShot(0, self.refresh_history)
        QTimer.singleShot(0, self.refresh_gallery)
        QTimer.singleShot(0, self._attach_running)

    # ---- composition ------------------------------------------------------------------------
    def _add_dock(self, title: str, widget, name: str) -> QDockWidget:
        dock = QDockWidget(title, self, objectName=name)
        dock.setWidget(widget)
        dock.setAllowedAreas(Qt.DockWidgetArea.LeftDockWidgetArea | Qt.DockWidgetArea.RightDockWidgetArea)
        self.addDockWidget(Qt.DockWidgetArea.LeftDockWidgetArea, dock)
        return dock

    def _action(self, menu, text: str, slot, shortcut=None, name: str = "") -> QAction:
        action = QAction(text, self, objectName=name or text)
        if shortcut:
            action.setShortcut(QKeySequence(shortcut))
        action.triggered.connect(slot)
        menu.addAction(action)
        return action

    def _build_menus(self) -> None:
        bar = self.menuBar()
        file_menu = bar.addMenu("&File")
        self._action(file_menu, "Open scenario…", self.open_scenario_dialog, QKeySequence.StandardKey.Open)
        self._action(file_menu, "Save scenario…", self.save_scenario_dialog, QKeySequence.StandardKey.Save)
        self._action(file_menu, "Reproduce a report…", self.show_gallery, name="reproduce_report")
        builtin = file_menu.addMenu("Built-in scenarios")
        for title, path in builtin_scenarios().items():
            self._action(builtin, title, lambda _=False, p=path: self.load_scenario(p))
        file_menu.addSeparator()
        self._action(file_menu, "Import CSV…", self.import_csv_dialog, "Ctrl+I", "import_csv")
        self._action(file_menu, "Export chart…", self.export_chart_dialog, "Ctrl+E", "export_chart")
        self._action(file_menu, "Export run report…", self.export_report_dialog, "Ctrl+R", "export_report")
        file_menu.addSeparator()
        self._action(file_menu, "Quit", self.close, QKeySequence.StandardKey.Quit)
        run_menu = bar.addMenu("&Run")
        self.run_action = self._action(run_menu, "Run", self.builder.run_button.click, "F5", "run")
        self.stop_action = self._action(run_menu, "Stop", self.stop_run, "Esc", "stop")
        # F5 works whatever widget has focus, even in a dock floated apart (Esc stays the window's:
        # in a dialog it must close the dialog, not stop a run)
        self.run_action.setShortcutContext(Qt.ShortcutContext.ApplicationShortcut)
        playlists = run_menu.addMenu("Play a playlist")
        for title, path in builtin_playlists().items():
            self._action(playlists, title, lambda _=False, p=path: self.play_playlist(p))
        playlists.addSeparator()
        self._action(playlists, "Playlist file…", self.open_playlist_dialog, name="open_playlist")
        view_menu = bar.addMenu("&View")
        self.full_screen_action = self._action(view_menu, "Full screen", self.toggle_full_screen, "F11", "full_screen")
        self.full_screen_action.setCheckable(True)
        self.full_screen_action.setShortcutContext(Qt.ShortcutContext.ApplicationShortcut)
        self.demo_action = self._action(view_menu, "Demo mode", self.toggle_demo, "Ctrl+Shift+D", "demo_mode")
        self.demo_action.setCheckable(True)
        self._action(view_menu, "Light theme", lambda: self.set_theme("light"), name="theme_light")
        self._action(view_menu, "Dark theme", lambda: self.set_theme("dark"), name="theme_dark")
        view_menu.addSection("Panels")
        for dock in self._docks:         # a closed panel comes back from here
            view_menu.addAction(dock.toggleViewAction())

    def _build_toolbar(self) -> None:
        """Run and Stop always in reach, with the name of what Run would start."""
        bar = QToolBar("Run", self, objectName="run_toolbar")
        bar.setMovable(False)
        bar.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextOnly)
        bar.addAction(self.run_action)
        bar.addAction(self.stop_action)
        bar.addSeparator()
        self.scenario_label = QLabel(objectName="toolbar_scenario")
        bar.addWidget(self.scenario_label)
        self.addToolBar(Qt.ToolBarArea.TopToolBarArea, bar)
        self.stop_action.setEnabled(False)
        self._show_scenario_name()

    def _show_scenario_name(self) -> None:
        """The form's scenario; while a run goes, the run's name, and the form's when it differs
        (being edited for later: nothing is queued)."""
        try:
            form = f"<b>{html.escape(self.builder.scenario().name)}</b>"
        except ValueError as exc:
            form = html.escape(str(exc))
        running = f"<b>{html.escape(self._running_name)}</b>"
        if not self.controller.busy:
            text = f"Scenario: {form}"
        elif form == running:
            text = f"Running: {running}"
        else:
            text = f"Running: {running}&nbsp;&nbsp;·&nbsp;&nbsp;in the form: {form}"
        self.scenario_label.setText(text)

    def _connect(self) -> None:
        self.targets_panel.targets_changed.connect(
            lambda: (self.builder.set_targets(self.targets_panel.targets()), self._show_scenario_name()))
        self.targets_panel.targets_changed.connect(lambda: self.gallery.set_targets(self.targets_panel.targets()))
        self.gallery.run_requested.connect(self.start_gallery_runs)
        self.gallery.run_clicked.connect(self.open_run)
        self.builder.run_requested.connect(self.start_scenario)
        self.builder.changed.connect(self._show_scenario_name)
        self.builder.changed.connect(self._place_builder_users)
        self.load_generators.connect_requested.connect(self.describe_cluster)
        self.builder.stop_requested.connect(self.stop_run)
        self.controller.run_started.connect(self._on_run_started)
        self.controller.snapshot_ready.connect(self.dashboard.show_snapshot)
        self.controller.snapshot_ready.connect(
            lambda snapshot: self.load_generators.show_live(snapshot.host_users, snapshot.host_rows_per_s))
        self.controller.run_finished.connect(self._on_run_finished)
        self.controller.run_finished.connect(lambda result: self.refresh_gallery_after(result.run_id))
        self.controller.run_failed_to_start.connect(self._on_failed_to_start)
        self.controller.queue_changed.connect(self._on_queue_changed)
        self.history.open_requested.connect(self.open_run)
        self.history.compare_requested.connect(self.compare_runs)
        self.history.delete_requested.connect(self.delete_runs)

    # ---- runs -------------------------------------------------------------------------------
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

    # ---- load generators ----------------------------------------------------------------------
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

    def start_gallery_runs(self, scenarios: list[Scenario]) -> None:
        """The gallery's runs, one after another; a server's password is asked for once, up front."""
        try:
            ready = [self._with_password(s) for s in scenarios]
        except ValueError as exc:
            self.show_error(f"runs not started: {exc}")
            return
        if any(s is None for s in ready):
            self.show_error("runs not started: no password given")
            return
        self.statusBar().showMessage(f"Reproducing: {plural(len(ready), 'run')}", 5000)
        self.controller.start_playlist(ready)

    # ---- the report gallery -------------------------------------------------------------------
    def show_gallery(self) -> None:
        self.tabs.setCurrentWidget(self.gallery)

    def refresh_gallery(self, reports=None) -> None:
        """Each report's published-vs-measured figures and findings, and the estimates calibrated
        on this machine's runs, read off the GUI thread."""
        self._recalibrate()
        for report in reports or list(REPORTS):
            self.background.run(f"gallery/{report}", lambda r=report: reproduction(self.store, r),
                                lambda found, r=report: self.gallery.set_reproduction(r, found),
                                lambda exc: self.statusBar().showMessage(
                                    f"cannot read the reports' runs: {describe_error(exc)}", 15000))

    def _recalibrate(self) -> None:
        self.background.run("calibration", lambda: calibration(self.store), self.gallery.set_calibration,
                            lambda exc: self.statusBar().showMessage(
                                f"cannot calibrate the estimates: {describe_error(exc)}", 15000))

    def refresh_gallery_after(self, run_id: str) -> None:
        """After a run: its report's card, if it was one of the gallery's runs (and the estimates,
        calibrated on one run more)."""
        self._recalibrate()

        def read():
            slot = parse_slot(self.store.run(run_id)["scenario"].get("experiment", ""))
            return (slot[0], reproduction(self.store, slot[0])) if slot and slot[0] in REPORTS else None

        def show(found) -> None:
            if found is not None:
                self.gallery.set_reproduction(*found)
        self.background.run(f"gallery-after/{run_id}", read, show, lambda exc: self.statusBar().showMessage(
            f"cannot read the reports' runs: {describe_error(exc)}", 15000))

    def _show_references(self, workload: str, dataset: str) -> None:
        """The seed reports' figures for this workload and dataset beside what is measured."""
        self.dashboard.clear_references()
        for sweep in published_sweeps(workload, dataset):
            self.dashboard.set_sweep_reference(sweep.label, sweep.users, sweep.values, sweep.metric)
        queries = published_findings("query-suite", dataset) if workload == "query-suite" else []
        footprint = published_findings(DISK, dataset) if workload in REPORT_WORKLOADS else []
        own = published_findings(workload, dataset) if workload in ("import", "export") else []
        self.dashboard.set_published_findings(own, queries, footprint)

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
        or a playlist's), ask whether to skip only this one or stop them all."""
        if not self.controller.busy:
            return
        keep_queue = False
        waiting = self.controller.waiting
        if waiting:
            box = QMessageBox(QMessageBox.Icon.Question, "Stop",
                              f"“{self._running_name}” is running and {plural(waiting, 'more experiment')} "
                              "wait after it. What was measured so far is kept either way.", parent=self)
            skip = box.addButton("Skip this one", QMessageBox.ButtonRole.AcceptRole)
            stop_all = box.addButton(f"Stop all {waiting + 1}", QMessageBox.ButtonRole.DestructiveRole)
            box.addButton("Keep running", QMessageBox.ButtonRole.RejectRole)
            box.setDefaultButton(skip)
            box.exec()
            if box.clickedButton() not in (skip, stop_all):
                return
            keep_queue = box.clickedButton() is skip
        self.controller.stop(keep_queue=keep_queue)
        self.status_label.setText(f"stopping “{self._running_name}”… (its users end within a second)")

    def _on_failed_to_start(self, message: str) -> None:
        self.builder.show_error(message)
        self._set_running(self.controller.busy, self._running_name if self.controller.busy else "")

    def _on_queue_changed(self, waiting: int) -> None:
        if waiting:
            self.statusBar().showMessage(f"{waiting} more scenario{'s' if waiting != 1 else ''} "
                                         "waiting in the playlist")
        else:
            self.statusBar().clearMessage()

    # ---- history ----------------------------------------------------------------------------
    def refresh_history(self) -> None:
        """Re-read the history off the GUI thread (a long run's records take a moment)."""
        self.background.run("history", lambda: history_rows(self.store), self.history.set_rows,
                            lambda exc: self.show_error(f"cannot read run history: {describe_error(exc)}"))

    def open_run(self, run_id: str | None, over_a_shown_run: bool = True) -> None:
        """Show a stored run on the Run tab (read off the GUI thread); ``None``: the newest.
        ``over_a_shown_run=False``: only if the tab still shows nothing by then (start-up)."""
        def read():
            wanted = run_id if run_id is not None else newest_run_id(self.store)
            if wanted is None:
                return None
            snapshot = snapshot_from_store(self.store, wanted)
            return snapshot, run_answer(self.store, snapshot.run_id)

        def show(found) -> None:
            if found is None:
                return
            snapshot, answer = found
            if self.controller.busy and self.controller.current_run_id != answer.run_id:
                return                    # a run started meanwhile: its live view stays
            if not over_a_shown_run and self.dashboard.snapshot is not None:
                return
            self._show_references(answer.workload, answer.dataset)
            self.dashboard.show_final(snapshot)
            self.dashboard.show_results(answer)
            if over_a_shown_run:
                self.tabs.setCurrentWidget(self.dashboard)
        what = run_id or "the newest run"
        self.background.run("open", read, show,
                            lambda exc: self.show_error(f"cannot open run {what}: {describe_error(exc)}"))

    def compare_runs(self, run_ids: list[str]) -> None:
        def read():
            frame = compare_frame(self.store, run_ids)
            return frame, suite_comparison(self.store, run_ids, run_labels(self.store, run_ids))

        def show(found) -> None:
            frame, suites = found
            self._compared_run_ids = list(run_ids)
            self.compare.show_runs(frame.to_dict("records"))
            self.compare.show_suites(suites.queries, suites.answers, suites.footprints)
            self.tabs.setCurrentWidget(self.compare)
        self.background.run("compare", read, show,
                            lambda exc: self.show_error(f"cannot compare runs: {describe_error(exc)}"))

    def delete_runs(self, run_ids: list[str]) -> None:
        if self.controller.current_run_id in run_ids and self.controller.busy:
            self.show_error("the running run cannot be deleted; stop it first")
            return
        answer = QMessageBox.question(self, "Delete runs", f"Delete {plural(len(run_ids), 'run')} and their records?")
        if answer != QMessageBox.StandardButton.Yes:
            return
        for run_id in run_ids:
            self.store.delete_run(run_id)
        self.refresh_history()

    # ---- files ------------------------------------------------------------------------------
    def load_scenario(self, path: Path) -> None:
        try:
            scenario = self.builder.load_from(path)
        except ValueError as exc:
            self.show_error(str(exc))
            return
        self.load_generators.set_values(scenario.scheduler, scenario.placement, scenario.pins)

    def open_scenario_dialog(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Open scenario", "", "Scenarios (*.toml)")
        if path:
            self.load_scenario(Path(path))

    def open_playlist_dialog(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Play a playlist", "", "Playlists (*.toml)")
        if path:
            self.play_playlist(Path(path))

    def save_scenario_dialog(self) -> None:
        path, _ = QFileDialog.getSaveFileName(self, "Save scenario", "scenario.toml", "Scenarios (*.toml)")
        if path:
            try:
                self._with_load_generators(self.builder.scenario()).save_toml(Path(path))
            except (ValueError, OSError) as exc:
                self.show_error(f"cannot save scenario: {exc}")

    def import_csv_dialog(self):
        """File → Import CSV…: the dialog imports off the GUI thread; the builder then lists it."""
        from app.import_dialog import ImportDialog  # loaded on first use: keeps start-up light
        dialog = ImportDialog(self)
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.imported.connect(lambda name: self.builder.refresh_datasets(select=name))
        dialog.open()
        return dialog

    def charts(self) -> dict:
        return {**self.dashboard.charts(), **self.compare.charts()}

    def chart_in_view(self) -> str:
        """The chart the user is looking at (the export dialog's default)."""
        return self.compare.chart_in_view() if self.tabs.currentWidget() is self.compare \
            else self.dashboard.chart_in_view()

    def _shown_run(self) -> dict | None:
        snapshot = self.dashboard.snapshot
        try:
            return self.store.run(snapshot.run_id) if snapshot is not None else None
        except StoreError:
            return None

    def export_chart_dialog(self) -> None:
        charts = list(self.charts())
        current = self.chart_in_view()
        name, ok = QInputDialog.getItem(self, "Export chart", "Chart:", charts,
                                        charts.index(current) if current in charts else 0, False)
        if not ok:
            return
        run = None if name.startswith("Compare") else self._shown_run()
        start = export_folder(self.settings) / suggest_filename(run, name, ".png")
        path, _ = QFileDialog.getSaveFileName(self, "Export chart", str(start),
                                              "PNG image (*.png);;SVG drawing (*.svg);;CSV data (*.csv)")
        if path:
            self.export_chart(name, Path(path), caption=run_caption(run) if run else None)

    def export_chart(self, name: str, path: Path, caption: str | None = None) -> Path | None:
        try:
            written = export_chart(self.charts()[name], path, caption=caption)
        except (OSError, ValueError, KeyError) as exc:
            self.show_error(f"cannot export {name}: {describe_error(exc)}")
            return None
        remember_export_folder(written, self.settings)
        self.statusBar().showMessage(f"saved {written}", 5000)
        return written

    def runs_in_view(self) -> list[str]:
        """The runs the visible tab shows: the compared runs on Compare, the selection on History,
        else the run on the Run tab (the live one while it runs)."""
        current = self.tabs.currentWidget()
        if current is self.compare and self._compared_run_ids:
            return list(self._compared_run_ids)
        if current is self.history and self.history.selected_run_ids():
            return self.history.selected_run_ids()
        if self.dashboard.snapshot is not None:
            return [self.dashboard.snapshot.run_id]
        return [self.controller.current_run_id] if self.controller.current_run_id else []

    def export_report_dialog(self) -> None:
        run_ids = self.runs_in_view()
        if not run_ids:
            self.show_error("open a run (History: double-click), compare runs or run one to report on")
            return
        labels = run_labels(self.store, run_ids)
        which = (f"run {labels[run_ids[0]]}" if len(run_ids) == 1
                 else f"{len(run_ids)} compared runs: " + ", ".join(labels[r] for r in run_ids))
        run = self.store.run(run_ids[0]) if len(run_ids) == 1 else None
        start = export_folder(self.settings) / suggest_filename(run, "report", ".html")
        path, _ = QFileDialog.getSaveFileName(self, f"Export report on {which}", str(start),
                                              "HTML report (*.html);;PDF report (*.pdf)")
        if path:
            self.export_report(run_ids, Path(path), which)

    def export_report(self, run_ids: list[str], path: Path, which: str = "") -> Path | None:
        from app.report import write_report
        try:
            written = write_report(self.store, run_ids, path)
        except Exception as exc:  # the report is a convenience: say what failed, keep the app
            self.show_error(f"cannot write report: {describe_error(exc)}")
            return None
        remember_export_folder(written, self.settings)
        self.statusBar().showMessage(f"saved {written}" + (f" (the report on {which})" if which else ""), 8000)
        return written

    # ---- view -------------------------------------------------------------------------------
    def toggle_demo(self) -> None:
        self.demo.set_active(not self.demo.active)
        self.demo_action.setChecked(self.demo.active)
        self.full_screen_action.setChecked(self.isFullScreen())

    def toggle_full_screen(self) -> None:
        """F11: full screen and back, in demo mode or not."""
        if self.isFullScreen():
            self.showNormal()
        else:
            self.showFullScreen()
        self.full_screen_action.setChecked(self.isFullScreen())

    def set_theme(self, name: str) -> None:
        self.demo.set_theme(name)
        self.settings.setValue("theme", name)

    def show_error(self, message: str) -> None:
        self.statusBar().showMessage(message, 15000)
        self.builder.show_error(message)

    def showEvent(self, event) -> None:
        super().showEvent(event)
        self._run_tab_layout.start()

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        self._run_tab_layout.start()      # a hidden tab is laid out anew when next shown

    def _lay_out_run_tab(self) -> None:
        """Show the Run tab and go back at once, never seen: it is laid out for the window's size and
        drawn once off screen, so its axes have sized their labels before a run paints them."""
        current = self.tabs.currentWidget()
        if current is self.dashboard or self.controller.busy or not self.isVisible():
            return
        focused = QApplication.focusWidget()
        self.tabs.setCurrentWidget(self.dashboard)
        if not self._run_tab_drawn:       # once: later its axes keep the label room they took
            self.dashboard.grab()
            self._run_tab_drawn = True
        self.tabs.setCurrentWidget(current)
        if focused is not None:
            focused.setFocus()

    # ---- persistence ------------------------------------------------------------------------
    def _restore(self) -> None:
        geometry = self.settings.value("window/geometry")
        if geometry is not None:
            self.restoreGeometry(geometry)
        else:  # first start: most of the screen, the charts need the room
            screen = self.screen().availableGeometry()
            self.resize(min(1600, int(screen.width() * 0.92)), min(1000, int(screen.height() * 0.92)))
        state = self.settings.value("window/state")
        if state is not None:
            self.restoreState(state)
            saved_docks = str(self.settings.value("window/docks", LEGACY_DOCKS)).split(",")
            newer = [dock for dock in self._docks if dock.objectName() not in saved_docks]
            if newer:       # docks the saved layout did not know come squeezed: a share, once shown
                QTimer.singleShot(0, lambda: self.resizeDocks(newer, [self.height() // 4] * len(newer),
                                                              Qt.Orientation.Vertical))
        else:   # first start: the charts get most of the width, the docks what their forms need
            targets, scenario, load_generators = self._docks
            # Dask load generators are for a few: a tab behind Targets, the scenario form the height
            self.tabifyDockWidget(targets, load_generators)
            targets.raise_()
            self.resizeDocks(self._docks, [max(420, self.width() * 3 // 10)] * len(self._docks),
                             Qt.Orientation.Horizontal)
            self.resizeDocks([targets, scenario], [self.height() * share // 100 for share in DOCK_HEIGHTS],
                             Qt.Orientation.Vertical)
        if not self.targets_panel.registry.profiles():   # profiles kept by versions before targets.json
            load_state(STATE_KEYS["targets"], self.targets_panel, self.settings)
        load_state(STATE_KEYS["dashboard"], self.dashboard, self.settings)
        load_state(STATE_KEYS["history"], self.history, self.settings)
        self.builder.set_targets(self.targets_panel.targets())
        load_state(STATE_KEYS["builder"], self.builder, self.settings)
        load_state(STATE_KEYS["load_generators"], self.load_generators, self.settings)
        self._place_builder_users()
        self._show_scenario_name()

    def save_settings(self) -> None:
        self.settings.setValue("window/geometry", self.saveGeometry())
        self.settings.setValue("window/state", self.saveState())
        self.settings.setValue("window/docks", ",".join(dock.objectName() for dock in self._docks))
        store_state(STATE_KEYS["dashboard"], self.dashboard, self.settings)
        store_state(STATE_KEYS["history"], self.history, self.settings)
        store_state(STATE_KEYS["builder"], self.builder, self.settings)
        store_state(STATE_KEYS["load_generators"], self.load_generators, self.settings)
        self.settings.sync()

    def ask_close_during_run(self) -> str | None:
        """'stop', 'background' or None (keep the window open)."""
        box = QMessageBox(QMessageBox.Icon.Question, "A run is going",
                          "A run is still going. Stop it, or let it finish in the background? "
                          "(Reopen Tickbench to follow it again; its local engines keep running.)",
                          parent=self)
        stop = box.addButton("Stop the run", QMessageBox.ButtonRole.DestructiveRole)
        background = box.addButton("Let it finish in the background", QMessageBox.ButtonRole.AcceptRole)
        box.addButton(QMessageBox.StandardButton.Cancel)
        box.exec()
        return {id(stop): "stop", id(background): "background"}.get(id(box.clickedButton()))

    def changeEvent(self, event) -> None:
        super().changeEvent(event)
        if event.type() == QEvent.Type.ActivationChange and self.isActiveWindow():
            self.targets_panel.recheck_clients()     # an extra installed meanwhile: offered at once

    def closeEvent(self, event) -> None:
        keep_engines = False
        if self.controller.busy:
            choice = self.ask_close_during_run()
            if choice is None:
                event.ignore()
                return
            if choice == "background":
                self.controller.detach()
                keep_engines = True
            else:
                self.controller.shutdown()
        self.save_settings()
        self.hide()             # gone at once for the person; a read under way finishes behind it
        self.background.wait()
        self.cluster_background.wait()
        if not keep_engines:
            self.targets_panel.stop_local_engines()      # local engines started from the window stop with it
        super().closeEvent(event)
