"""The main window: composes the widgets and wires them to the run controller. Nothing more.

Here: the composition, the wiring and the window's own events (show, resize, activation, close).
Its jobs are mixins beside it: menus and toolbar (main_window_menus), run control
(main_window_runs), the report gallery (main_window_gallery), stored runs (main_window_history),
scenario files (main_window_files), run bundles opened (main_window_bundles), exports
(main_window_exports), settings (main_window_settings), the narrated demo (main_window_presenting)."""
from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QEvent, QSettings, Qt, QTimer
from PySide6.QtWidgets import QApplication, QDockWidget, QLabel, QMainWindow, QMessageBox, QTabWidget

from app.window.ab_dialog import open_compare_by_running
from app.window.background import Background
from app.demo.mode import DemoMode
from app.window.bundles import MainWindowBundles
from app.window.exports import MainWindowExports
from app.window.files import MainWindowFiles
from app.window.gallery import MainWindowGallery
from app.window.history import MainWindowHistory
from app.window.menus import MainWindowMenus
from app.window.presenting import MainWindowPresenting
from app.window.runs import MainWindowRuns
from app.window.settings import MainWindowSettings
from app.window.run_controller import RunController
from widgets.history.compare_view import CompareView
from widgets.run.dashboard import LiveDashboard
from widgets.hosts.load_generators import LoadGeneratorsPanel
from widgets.reports.gallery import ReportGallery
from widgets.history.run_history import RunHistoryView
from widgets.scenario.builder import ScenarioBuilder
from widgets.targets.panel import TargetsPanel
from workloads.targets.registry import TargetRegistry
from workloads.results.store import ResultsStore


class MainWindow(MainWindowMenus, MainWindowRuns, MainWindowGallery, MainWindowHistory, MainWindowFiles,
                 MainWindowBundles, MainWindowExports, MainWindowSettings, MainWindowPresenting, QMainWindow):
    def __init__(self, store: ResultsStore, data_dir: Path, settings: QSettings,
                 password_store=None, theme: str = "light"):
        super().__init__()
        self.setWindowTitle("Tickbench")
        self.setObjectName("tickbench_main_window")
        self.store = store
        self.data_dir = data_dir
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
        self.ab_dialog = None                     # Run → Compare by running…, made when first opened

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
        self._accept_bundle_drops()
        self._restore()
        self.builder.set_targets(self.targets_panel.targets())
        self.gallery.set_targets(self.targets_panel.targets())
        # a fresh start (no runs yet) opens on the gallery; later ones on the live dashboard
        self.tabs.setCurrentWidget(self.dashboard if self.store.run_ids() else self.gallery)
        QTimer.singleShot(0, self.refresh_history)
        QTimer.singleShot(0, self.refresh_gallery)
        QTimer.singleShot(0, self._attach_running)
        self._watch_catalog()

    # ---- composition ------------------------------------------------------------------------
    def _add_dock(self, title: str, widget, name: str) -> QDockWidget:
        dock = QDockWidget(title, self, objectName=name)
        dock.setWidget(widget)
        dock.setAllowedAreas(Qt.DockWidgetArea.LeftDockWidgetArea | Qt.DockWidgetArea.RightDockWidgetArea)
        self.addDockWidget(Qt.DockWidgetArea.LeftDockWidgetArea, dock)
        return dock

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
        self.targets_panel.compare_requested.connect(lambda key: open_compare_by_running(self, key))

    # ---- view -------------------------------------------------------------------------------
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

    # ---- closing ----------------------------------------------------------------------------
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
            self.catalog_changed()                   # runs made from a terminal meanwhile: listed at once

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
        if self.ab_dialog is not None:
            self.ab_dialog.shutdown()                    # a comparison going: stopped, what it measured kept
        self.background.wait()
        self.cluster_background.wait()
        if not keep_engines:
            self.targets_panel.stop_local_engines()      # local engines started from the window stop with it
        super().closeEvent(event)
