"""The main window's narrated demo (View → Present the reports…, or ``tickbench demo``): demo mode,
a clean screen (no toolbar, status bar or side panels), and a ``Presenter`` playing the beats."""
from __future__ import annotations

from dataclasses import replace

from PySide6.QtCore import QObject, Signal
from PySide6.QtWidgets import QMessageBox

from app.demo.presenter import Presenter, Stage
from app.window.shell import Shell
from widgets.reports.demo_card import PRESENTER_KEYS
from widgets.reports.experiment_row import scenario_target_config
from workloads.reproduce.story import LENGTHS_MIN, Beat, Engines, narrated_playlist, recorded_engines, recorded_runs


class PresentingController(QObject):
    presenting_changed = Signal(bool)    # what an audience need not see goes, and comes back
    demo_wanted = Signal()               # demo mode on (large fonts, high contrast)
    run_view_cleared = Signal()          # the Run tab emptied while recorded runs are looked for

    def __init__(self, shell: Shell, dashboard, show_run_tab, toggle_full_screen):
        """``dashboard``, ``show_run_tab``, ``toggle_full_screen``: the run view and the window's
        calls the demo drives, handed over by the window that owns them."""
        super().__init__(shell)
        self._shell = shell
        self._stage = Stage(shell.window, dashboard, shell.runs, shell.store, shell.background, show_run_tab,
                            toggle_full_screen)
        self.presenter: Presenter | None = None
        self.close_after = False         # ``tickbench demo``: the demo is the command
        self.present_action = shell.action("Present the reports (narrated demo)…", self._open_present_dialog,
                                           name="present")
        self.keys_action = shell.action("Keys of the narrated demo", self._show_presenter_keys, name="presenter_keys")

    def _show_presenter_keys(self) -> None:
        rows = "".join(f"<tr><td><b>{key}</b></td><td>&nbsp;&nbsp;{what}</td></tr>" for key, _short, what in PRESENTER_KEYS)
        QMessageBox.information(self._shell.window, "Keys of the narrated demo",
                                "<p>View → Present the reports, or <code>tickbench demo</code>:</p>"
                                f"<table>{rows}</table><p>More in docs/demo.md.</p>")

    def _open_present_dialog(self) -> None:
        """Length, live or replayed, and the engines; the recorded demos are read off the GUI thread."""
        from widgets.reports.present_dialog import PresentDialog
        dialog = PresentDialog(LENGTHS_MIN, self._shell.targets(), self._shell.window)
        store = self._shell.store
        self._shell.background.run("demo-engines", lambda: recorded_engines(store), dialog.set_recorded,
                                   lambda exc: dialog.set_recorded([]))
        if not dialog.exec():
            return
        engines = Engines(*_side(dialog.subject()), *_side(dialog.comparator()))
        self.present(dialog.minutes, dialog.replay, engines)

    def demo_engines(self, subject_key: str, comparator_key: str | None, replay: bool) -> Engines:
        """``tickbench demo --target KEY --versus KEY``: configured targets by key; a replay also takes
        an engine kind alone (its runs were recorded elsewhere). ValueError names what is not known."""
        targets = {t[0]: t for t in self._shell.targets()}

        def side(key: str | None):
            if key is None:
                return None
            if key in targets:
                return targets[key]
            if replay:
                return key, key, key, None
            raise ValueError(f"no target {key!r} is configured here: give one of {', '.join(sorted(targets))}")
        return Engines(*_side(side(subject_key)), *_side(side(comparator_key)))

    def present(self, minutes: int = 10, replay: bool = False, engines: Engines = Engines()) -> None:
        """The narrated demo of ``minutes`` on ``engines``; ``replay``: the stored runs of an earlier
        one on the same engines, at their pace."""
        if self.presenter is not None or self._shell.runs.busy:
            self._shell.show_error("a run is going: stop it before the demo")
            return
        beats = narrated_playlist(minutes, self._shell.data_dir, engines)
        if not replay:
            beats = self._with_passwords(beats)
            if beats:
                self.begin(beats, None, "", minutes)
            return
        store = self._shell.store

        def find():                       # the catalog is read off the GUI thread
            recorded = recorded_runs(store, beats)
            times = [store.run(run_id)["created_at"] for run_id in recorded.values()]
            return recorded, f"recorded {min(times):%Y-%m-%d}" if times else ""

        def found(answer) -> None:
            recorded, when = answer
            if not recorded:
                not_found(f"no recorded demo on {engines.subject} to replay: play the narrated demo on it once first")
                return
            self.begin(beats, recorded, when, minutes)

        def not_found(message: str) -> None:
            self.presenting_changed.emit(False)
            self._shell.show_error(message)

        self._enter_audience_screen()       # at once: reading the runs takes a few seconds
        self.run_view_cleared.emit()
        self._shell.background.run("demo-recorded", find, found, lambda exc: not_found(str(exc)))

    def _with_passwords(self, beats: list[Beat]) -> list[Beat] | None:
        """A server's password asked for once, up front, as for the gallery's runs (None: not given)."""
        ready = []
        for beat in beats:
            scenarios = []
            for scenario in beat.scenarios:
                try:
                    scenario = self._shell.with_password(scenario)
                except ValueError as exc:     # a local engine that is not running: how to start it
                    self._shell.show_error(f"demo not started: {exc}")
                    return None
                if scenario is None:          # cancelled: not asked again for every run
                    self._shell.show_error("demo not started: no password given")
                    return None
                scenarios.append(scenario)
            ready.append(replace(beat, scenarios=tuple(scenarios)))
        return ready

    def _enter_audience_screen(self) -> None:
        """Demo mode and a clean screen: no window menus, toolbar or tabs before an audience."""
        self.demo_wanted.emit()
        self.presenting_changed.emit(True)

    def begin(self, beats, recorded, when: str, minutes: int | None = None) -> None:
        """The beats played (``recorded``: their stored runs replayed, recorded ``when``)."""
        self._enter_audience_screen()
        self.presenter = Presenter(self._stage, beats, recorded, when, minutes * 60.0 if minutes else None)
        self.presenter.finished.connect(self._end)
        self.presenter.start()

    def _end(self) -> None:
        self.presenting_changed.emit(False)
        self.presenter.deleteLater()
        self.presenter = None
        if self.close_after:              # ``tickbench demo``: the demo was the command
            self._shell.window.close()


def _side(target) -> tuple[str | None, dict | None]:
    if target is None:
        return None, None
    key, _label, kind, config = target
    return kind, scenario_target_config(key, kind, config)
