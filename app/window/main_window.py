"""The main window: composes the widgets and the controllers that own them, and wires their signals.
Nothing more.

Here: the composition, the wiring and the window's own events (show, resize, activation, close).
Each job has an owner beside it, which talks to the others only through the signals wired below
and the shared ``Shell``: the scenario form and Run toolbar (``scenario``), the Run tab
(``runs``), History and Compare (``history``), the report gallery (``gallery``), run bundles
opened (``bundles``), exports (``exports``), the View menu (``view``), the narrated demo
(``presenting``); the menu bar is laid out in ``menus`` and the layout kept in ``settings``."""
from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QEvent, QSettings, Qt, QTimer
from PySide6.QtGui import QKeySequence
from PySide6.QtWidgets import QApplication, QDockWidget, QLabel, QMainWindow, QMessageBox, QTabWidget

from app.demo.mode import DemoMode
from app.window.background import Background
from app.window.bundles import BundlesController
from app.window.comparing import ComparingController
from app.window.exports import ExportsController
from app.window.gallery import GalleryController
from app.window.history import StoredRunsController
from app.window.menus import build_menus
from app.window.presenting import PresentingController
from app.window.run_controller import RunController
from app.window.runs import RunsController
from app.window.scenario import ScenarioController
from app.window.settings import WindowLayout
from app.window.shell import Shell
from app.window.view import ViewController
from widgets.history.compare_view import CompareView
from widgets.hosts.load_generators import LoadGeneratorsPanel
from widgets.reports.gallery import ReportGallery
from widgets.history.run_history import RunHistoryView
from widgets.run.dashboard import LiveDashboard
from widgets.scenario.builder import ScenarioBuilder
from widgets.targets.panel import TargetsPanel
from workloads.results.store import ResultsStore
from workloads.targets.registry import TargetRegistry


class MainWindow(QMainWindow):
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
        # the widgets, each owned by the controller that drives it
        self.targets_panel = TargetsPanel(data_dir, registry=TargetRegistry.load(data_dir, password_store))
        self.builder = ScenarioBuilder(data_dir)
        self.load_generators = LoadGeneratorsPanel()
        self.dashboard = LiveDashboard()
        self.history = RunHistoryView()
        self.compare = CompareView()
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
        self.status_label = QLabel(textFormat=Qt.TextFormat.PlainText)   # run names come from files
        self.statusBar().addPermanentWidget(self.status_label)

        shell = self.shell = Shell(self, store, data_dir, settings, self.controller, self.background, self.targets_panel)
        self.runs = RunsController(shell, self.dashboard, self.status_label)
        self.scenario = ScenarioController(shell, self.builder, self.load_generators)
        self.stored = StoredRunsController(shell, self.history, self.compare)
        self.reports = GalleryController(shell, self.gallery)
        self.bundles = BundlesController(shell)
        self.exports = ExportsController(shell, self._charts, self._chart_in_view, self._runs_in_view,
                                         self.runs.shown_run_id)
        self.view = ViewController(shell, self.demo)
        self.presenting = PresentingController(shell, self.dashboard, self.show_run_tab, self.view.toggle_full_screen)
        self.comparing = ComparingController(shell, self.builder.scenario)
        self.layout_kept = WindowLayout(self, settings, self._docks)
        build_menus(self, (self.scenario, self.runs, self.reports, self.bundles, self.exports, self.view,
                           self.presenting, self.comparing),
                    shell.action("Quit", self.close, QKeySequence.StandardKey.Quit), self._docks)
        self.addToolBar(Qt.ToolBarArea.TopToolBarArea, self.scenario.toolbar)
        self.scenario.show_scenario_name()
        self._connect()
        self._restore()
        self.scenario.set_targets(self.targets_panel.targets())
        self.reports.set_targets(self.targets_panel.targets())
        # a fresh start (no runs yet) opens on the gallery; later ones on the live dashboard
        self.tabs.setCurrentWidget(self.dashboard if self.store.run_ids() else self.gallery)
        QTimer.singleShot(0, self.stored.refresh_history)
        QTimer.singleShot(0, self.reports.refresh)
        QTimer.singleShot(0, self.runs.attach_running)

    # ---- composition ------------------------------------------------------------------------
    def _add_dock(self, title: str, widget, name: str) -> QDockWidget:
        dock = QDockWidget(title, self, objectName=name)
        dock.setWidget(widget)
        dock.setAllowedAreas(Qt.DockWidgetArea.LeftDockWidgetArea | Qt.DockWidgetArea.RightDockWidgetArea)
        self.addDockWidget(Qt.DockWidgetArea.LeftDockWidgetArea, dock)
        return dock

    def _connect(self) -> None:
        targets = self.targets_panel
        targets.targets_changed.connect(lambda: self.scenario.set_targets(targets.targets()))
        targets.targets_changed.connect(lambda: self.reports.set_targets(targets.targets()))
        targets.compare_requested.connect(self.comparing.open)
        self.shell.error.connect(self.show_error)
        self.scenario.run_requested.connect(self.runs.start)
        self.scenario.stop_requested.connect(self.runs.stop_run)
        self.runs.running_changed.connect(self.scenario.set_running)
        self.runs.form_error.connect(self.scenario.show_error)
        self.runs.tab_wanted.connect(self.show_run_tab)
        self.runs.run_ended.connect(self.stored.refresh_history)
        self.runs.run_ended.connect(self.stored.open_run)            # its answer first: the stored, exact figures
        self.runs.run_ended.connect(self.reports.refresh_after)
        self.runs.newest_wanted.connect(lambda: self.stored.open_run(None, over_a_shown_run=False))
        self.stored.run_read.connect(self.runs.show_stored)
        self.stored.compare_shown.connect(lambda: self.tabs.setCurrentWidget(self.compare))
        self.stored.catalog_read_again.connect(self.reports.refresh)
        self.reports.shown.connect(lambda: self.tabs.setCurrentWidget(self.gallery))
        self.gallery.run_clicked.connect(self.stored.open_run)
        self.bundles.opened.connect(self.stored.refresh_history)
        self.comparing.session_finished.connect(self.stored.refresh_history)
        self.presenting.demo_wanted.connect(self.view.enter_demo)
        self.presenting.presenting_changed.connect(self._clean_screen)
        self.presenting.run_view_cleared.connect(self.runs.clear)

    def _restore(self) -> None:
        layout = self.layout_kept
        layout.restore()
        if not self.targets_panel.registry.profiles():   # profiles kept by versions before targets.json
            layout.load("targets", self.targets_panel)
        layout.load("dashboard", self.dashboard)
        layout.load("history", self.history)
        self.scenario.set_targets(self.targets_panel.targets())
        layout.load("builder", self.builder)
        layout.load("load_generators", self.load_generators)
        self.scenario.place_users()
        self.scenario.show_scenario_name()

    def save_settings(self) -> None:
        self.layout_kept.save({"dashboard": self.dashboard, "history": self.history, "builder": self.builder,
                               "load_generators": self.load_generators})

    # ---- what is in view ----------------------------------------------------------------------
    def _charts(self) -> dict:
        return {**self.runs.charts(), **self.stored.charts()}

    def _chart_in_view(self) -> str:
        """The chart the user is looking at (the export dialog's default)."""
        if self.tabs.currentWidget() is self.compare:
            return self.stored.chart_in_view()
        return self.runs.chart_in_view()

    def _runs_in_view(self) -> list[str]:
        """The runs the visible tab shows: the compared runs on Compare, the selection on History,
        else the run on the Run tab (the live one while it runs)."""
        listed = self.stored.runs_in_view(self.tabs.currentWidget())
        if listed:
            return listed
        shown = self.runs.shown_run_id() or self.controller.current_run_id
        return [shown] if shown else []

    # ---- view -------------------------------------------------------------------------------
    def show_error(self, message: str) -> None:
        self.statusBar().showMessage(message, 15000)
        self.builder.show_error(message)

    def show_run_tab(self) -> None:
        self.tabs.setCurrentWidget(self.dashboard)

    def _clean_screen(self, presenting: bool) -> None:
        """What an audience need not see goes while the demo plays: the toolbar (its form echo), the
        status bar (run ids), the menu bar; Esc belongs to the presenter meanwhile."""
        self.scenario.set_presenting(presenting)
        self.statusBar().setVisible(not presenting)
        self.menuBar().setVisible(not presenting)
        self.tabs.tabBar().setVisible(not presenting)           # the demo shows the run and its cards

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
            if hasattr(self, "stored"):
                self.stored.catalog_changed()        # runs made from a terminal meanwhile: listed at once

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
        self.comparing.shutdown()                        # a comparison going: stopped, what it measured kept
        self.background.wait()
        self.shell.cluster_background.wait()
        if not keep_engines:
            self.targets_panel.stop_local_engines()      # local engines started from the window stop with it
        super().closeEvent(event)
