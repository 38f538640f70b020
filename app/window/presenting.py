"""The main window's narrated demo (View → Present the reports…, or ``tickbench demo``): demo mode,
a clean screen (no toolbar, status bar or side panels), and a ``Presenter`` playing the beats."""
from __future__ import annotations

from dataclasses import replace

from app.demo.presenter import Presenter
from widgets.reports.experiment_row import scenario_target_config
from workloads.reproduce.story import LENGTHS_MIN, Beat, Engines, narrated_playlist, recorded_engines, recorded_runs


class MainWindowPresenting:
    """Starts and ends the narrated demo for MainWindow."""

    presenter: Presenter | None = None
    close_after_presenting = False

    def open_present_dialog(self) -> None:
        """Length, live or replayed, and the engines; the recorded demos are read off the GUI thread."""
        from widgets.reports.present_dialog import PresentDialog
        dialog = PresentDialog(LENGTHS_MIN, self.targets_panel.targets(), self)
        store = self.store
        self.background.run("demo-engines", lambda: recorded_engines(store), dialog.set_recorded,
                            lambda exc: dialog.set_recorded([]))
        if not dialog.exec():
            return
        engines = Engines(*self._side(dialog.subject()), *self._side(dialog.comparator()))
        self.present(dialog.minutes, dialog.replay, engines)

    def demo_engines(self, subject_key: str, comparator_key: str | None, replay: bool) -> Engines:
        """``tickbench demo --target KEY --versus KEY``: configured targets by key; a replay also takes
        an engine kind alone (its runs were recorded elsewhere). ValueError names what is not known."""
        targets = {t[0]: t for t in self.targets_panel.targets()}

        def side(key: str | None):
            if key is None:
                return None
            if key in targets:
                return targets[key]
            if replay:
                return key, key, key, None
            raise ValueError(f"no target {key!r} is configured here: give one of {', '.join(sorted(targets))}")
        return Engines(*self._side(side(subject_key)), *self._side(side(comparator_key)))

    @staticmethod
    def _side(target) -> tuple[str | None, dict | None]:
        if target is None:
            return None, None
        key, _label, kind, config = target
        return kind, scenario_target_config(key, kind, config)

    def present(self, minutes: int = 10, replay: bool = False, engines: Engines = Engines()) -> None:
        """The narrated demo of ``minutes`` on ``engines``; ``replay``: the stored runs of an earlier
        one on the same engines, at their pace."""
        if self.presenter is not None or self.controller.busy:
            self.show_error("a run is going: stop it before the demo")
            return
        beats = narrated_playlist(minutes, self.data_dir, engines)
        if not replay:
            beats = self._with_passwords(beats)
            if beats:
                self._begin_presentation(beats, None, "", minutes)
            return
        store = self.store

        def find():                       # the catalog is read off the GUI thread
            recorded = recorded_runs(store, beats)
            times = [store.run(run_id)["created_at"] for run_id in recorded.values()]
            return recorded, f"recorded {min(times):%Y-%m-%d}" if times else ""

        def found(answer) -> None:
            recorded, when = answer
            if not recorded:
                not_found(f"no recorded demo on {engines.subject} to replay: play the narrated demo on it once first")
                return
            self._begin_presentation(beats, recorded, when, minutes)

        def not_found(message: str) -> None:
            self._clean_screen(False)
            self.show_error(message)

        self._enter_audience_screen()       # at once: reading the runs takes a few seconds
        self.dashboard.clear()
        self.background.run("demo-recorded", find, found, lambda exc: not_found(str(exc)))

    def _with_passwords(self, beats: list[Beat]) -> list[Beat] | None:
        """A server's password asked for once, up front, as for the gallery's runs (None: not given)."""
        ready = []
        for beat in beats:
            scenarios = []
            for scenario in beat.scenarios:
                try:
                    scenario = self._with_password(scenario)
                except ValueError as exc:     # a local engine that is not running: how to start it
                    self.show_error(f"demo not started: {exc}")
                    return None
                if scenario is None:          # cancelled: not asked again for every run
                    self.show_error("demo not started: no password given")
                    return None
                scenarios.append(scenario)
            ready.append(replace(beat, scenarios=tuple(scenarios)))
        return ready

    def show_run_tab(self) -> None:
        self.tabs.setCurrentWidget(self.dashboard)

    def _enter_audience_screen(self) -> None:
        """Demo mode and a clean screen: no window menus, toolbar or tabs before an audience."""
        if not self.demo.active:
            self.toggle_demo()
        self._clean_screen(True)

    def _begin_presentation(self, beats, recorded, when: str, minutes: int | None = None) -> None:
        self._enter_audience_screen()
        self.presenter = Presenter(self, beats, recorded, when, minutes * 60.0 if minutes else None)
        self.presenter.finished.connect(self._end_presentation)
        self.presenter.start()

    def _end_presentation(self) -> None:
        self._clean_screen(False)
        self.presenter.deleteLater()
        self.presenter = None
        if self.close_after_presenting:      # ``tickbench demo``: the demo was the command
            self.close()

    def _clean_screen(self, presenting: bool) -> None:
        """What an audience need not see goes while the demo plays: the toolbar (its form echo), the
        status bar (run ids), the menu bar; Esc belongs to the presenter meanwhile."""
        self.run_toolbar.setVisible(not presenting)
        self.statusBar().setVisible(not presenting)
        self.menuBar().setVisible(not presenting)
        self.tabs.tabBar().setVisible(not presenting)           # the demo shows the run and its cards
        self.stop_action.setShortcut("" if presenting else "Esc")
