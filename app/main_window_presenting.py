"""The main window's narrated demo (View → Present the reports, or ``tickbench demo``): demo mode,
a clean screen (no toolbar, status bar or side panels), and a ``Presenter`` playing the beats."""
from __future__ import annotations

from app.demo_presenter import Presenter
from workloads.reproduce.story import narrated_playlist, recorded_runs


class MainWindowPresenting:
    """Starts and ends the narrated demo for MainWindow."""

    presenter: Presenter | None = None

    def present(self, minutes: int = 10, replay: bool = False) -> None:
        """The narrated demo of ``minutes``; ``replay``: the stored runs of an earlier one, at their pace."""
        if self.presenter is not None or self.controller.busy:
            self.show_error("a run is going: stop it before the demo")
            return
        beats = narrated_playlist(minutes, self.data_dir)
        if not replay:
            self._begin_presentation(beats, None, "")
            return
        store = self.store

        def find():                       # the catalog is read off the GUI thread
            recorded = recorded_runs(store, beats)
            times = [store.run(run_id)["created_at"] for run_id in recorded.values()]
            return recorded, f"recorded {min(times):%Y-%m-%d}" if times else ""

        def found(answer) -> None:
            recorded, when = answer
            if not recorded:
                self.show_error("no recorded demo to replay: play the narrated demo once first")
                return
            self._begin_presentation(beats, recorded, when)

        self.background.run("demo-recorded", find, found, lambda exc: self.show_error(str(exc)))

    def show_run_tab(self) -> None:
        self.tabs.setCurrentWidget(self.dashboard)

    def _begin_presentation(self, beats, recorded, when: str) -> None:
        if not self.demo.active:
            self.toggle_demo()
        self._clean_screen(True)
        self.presenter = Presenter(self, beats, recorded, when)
        self.presenter.finished.connect(self._end_presentation)
        self.presenter.start()

    def _end_presentation(self) -> None:
        self._clean_screen(False)
        self.presenter.deleteLater()
        self.presenter = None

    def _clean_screen(self, presenting: bool) -> None:
        """What an audience need not see goes while the demo plays: the toolbar (its form echo), the
        status bar (run ids), the menu bar; Esc belongs to the presenter meanwhile."""
        self.run_toolbar.setVisible(not presenting)
        self.statusBar().setVisible(not presenting)
        self.menuBar().setVisible(not presenting)
        self.stop_action.setShortcut("" if presenting else "Esc")
