"""The narrated demo, played: for each beat (``workloads.reproduce.story``) a title card, its runs
with the charts that matter alone on screen, a result card; a summary at the end.

Live, the runs go through the window's run controller like any playlist; with ``replay`` they are
the stored runs of an earlier demo played back at their pace (``app.demo_replay``), and every screen
says so. The presenter keeps control from the keyboard: Space pauses and resumes (a card's clock
stops; a live run finishes, the next one waits; a replay stops where it is), Right and Left go to
the next and previous beat, H hides the card, F toggles full screen, Esc ends the demo.
"""
from __future__ import annotations

from PySide6.QtCore import QEvent, QObject, Qt, QTimer, Signal
from PySide6.QtGui import QKeySequence, QShortcut

from app.demo_replay import ReplayDriver
from widgets.demo_card import DemoCard
from workloads.reproduce.story import RESULT_S, TITLE_S, Beat, result_card, summary

TITLE, RUNNING, RESULT, SUMMARY, ENDED = "title", "running", "result", "summary", "ended"
PAUSED = "the presenter paused"          # the run controller's hold reason


class Presenter(QObject):
    state_changed = Signal(str)
    finished = Signal()

    def __init__(self, window, beats: list[Beat], recorded: dict[str, str] | None = None, replayed_from: str = ""):
        """``window``: the main window (its controller, dashboard, store and background reader).
        ``recorded``: for a replay, each beat scenario's name -> its stored run (story.recorded_runs);
        beats without one are left out."""
        super().__init__(window)
        self._window = window
        self.replay = recorded is not None
        self.beats = [b for b in beats if not self.replay or all(s.name in recorded for s in b.scenarios)]
        self._recorded = recorded or {}
        self.replayed_from = replayed_from
        self.index, self.state, self.paused = 0, ENDED, False
        self._reading = False                           # a result card waiting for its figures
        self._beat_runs: list[str] = []                 # this beat's runs that started
        self._report_runs: dict[str, list[str]] = {}    # every demo run so far, per report
        self._findings: dict[tuple[str, str], object] = {}
        self.card = DemoCard(window)
        self.card.hide()
        window.installEventFilter(self)
        if window.centralWidget() is not None:          # its place changes as docks and bars go
            window.centralWidget().installEventFilter(self)
        self._clock = QTimer(self, singleShot=True)
        self._clock.timeout.connect(self._card_over)
        self._remaining_ms = 0
        self._replayer = ReplayDriver(window.store, window.background, window.dashboard, self)
        self._replayer.run_started.connect(self._beat_runs.append)
        self._replayer.done.connect(self._runs_over)
        self._replayer.failed.connect(self._replay_failed)
        controller = window.controller
        controller.run_started.connect(self._on_run_started)
        controller.run_finished.connect(self._on_run_finished)        # bound slots: gone with the presenter
        controller.snapshot_ready.connect(self._on_snapshot)
        controller.run_failed_to_start.connect(self._on_failed_to_start)
        self._keys = [self._key(key, slot) for key, slot in (
            (Qt.Key.Key_Space, self.toggle_pause), (Qt.Key.Key_Right, self.next), (Qt.Key.Key_Left, self.previous),
            (Qt.Key.Key_Escape, self.stop), (Qt.Key.Key_H, self.toggle_card), (Qt.Key.Key_F, window.toggle_full_screen))]

    # ---- the presenter's controls ---------------------------------------------------------------
    def start(self) -> None:
        if not self.beats:
            self._show_summary()
            return
        self._title(0)

    def toggle_pause(self) -> None:
        self.paused = not self.paused
        if self.paused:
            if self._clock.isActive():
                self._remaining_ms = self._clock.remainingTime()
                self._clock.stop()
            self._window.controller.hold(PAUSED)
            self._replayer.pause()
        else:
            if self.state in (TITLE, RESULT):
                self._clock.start(max(self._remaining_ms, 500))
            self._window.controller.release(PAUSED)
            self._replayer.resume()
        self._show_state()

    def next(self) -> None:
        if self.state == SUMMARY:
            self.stop()
        elif self.state == TITLE:
            self._clock.stop()
            self._run_beat()
        else:
            self._stop_runs()
            self._after(self.index)

    def previous(self) -> None:
        """The previous beat's title card (the first beat's, from the first), its runs played again."""
        if self.state == ENDED or not self.beats:
            return
        self._stop_runs()
        self._title(len(self.beats) - 1 if self.state == SUMMARY else max(0, self.index - 1))

    def toggle_card(self) -> None:
        self.card.setVisible(not self.card.isVisible())

    def stop(self) -> None:
        if self.state == ENDED:
            return
        self._stop_runs()
        self._clock.stop()
        self._window.controller.release(PAUSED)
        self.paused = False
        self._set_state(ENDED)
        self.card.hide()
        self._window.dashboard.spotlight(())
        # the keys and the card belong to the window (their context and their place): gone with the demo
        for shortcut in self._keys:
            shortcut.setEnabled(False)
            shortcut.deleteLater()
        self.card.deleteLater()
        self.finished.emit()

    # ---- the beats --------------------------------------------------------------------------------
    def _title(self, index: int) -> None:
        self.index = index
        beat = self.beats[index]
        self.card.show_title(beat.title, beat.question, beat.watch, self._position())
        self._show_card(TITLE, TITLE_S)

    def _run_beat(self) -> None:
        beat = self.beats[self.index]
        self._beat_runs.clear()
        self._set_state(RUNNING)
        self.card.hide()
        self._window.dashboard.spotlight(beat.charts)
        self._window.show_run_tab()
        if self.replay:
            self._replayer.play([self._recorded[s.name] for s in beat.scenarios])
        else:
            self._window.controller.start_playlist(list(beat.scenarios))

    def _on_run_started(self, run_id: str, scenario) -> None:
        beat = self.beats[self.index] if self.state == RUNNING else None
        if beat is not None and scenario.name in {s.name for s in beat.scenarios}:
            self._beat_runs.append(run_id)
            # no empty axes while its process lays out data and warms up: say which run comes
            parts = scenario.name.split(" · ")
            self.card.show_starting(parts[2] if len(parts) > 2 else scenario.name, self._position())
            self._fit_card()
            self.card.show()
            self.card.raise_()

    def _on_snapshot(self, snapshot) -> None:
        if self.state == RUNNING and self.card.kind == "starting" and snapshot.ops_done > 0:
            self.card.hide()                        # its first operations: the charts have lines

    def _on_run_finished(self, result) -> None:
        self._on_run_over(result.run_id)

    def _on_failed_to_start(self, _message: str) -> None:
        self._on_run_over("")

    def _on_run_over(self, run_id: str) -> None:
        """A run of the controller ended (or failed to start): the beat is over once none waits."""
        controller = self._window.controller
        if self.state == RUNNING and not self.replay and (not run_id or run_id in self._beat_runs) \
                and not controller.waiting and not controller.busy:
            self._runs_over()

    def _runs_over(self) -> None:
        if self.state != RUNNING:
            return
        beat, runs, index = self.beats[self.index], list(self._beat_runs), self.index
        self._report_runs.setdefault(beat.report, []).extend(runs)
        report_runs = list(self._report_runs[beat.report])
        self._window.dashboard.spotlight(())
        self.card.show_title(beat.title, "", "", self._position())
        self._reading = True
        self._show_card(RESULT, 0)
        store, replayed = self._window.store, self.replay
        self._window.background.run("demo-result", lambda: result_card(beat, store, report_runs, runs, replayed),
                                    lambda card: self._show_result(card, index),
                                    lambda exc: self._show_result(None, index, exc))

    def _show_result(self, card, index: int, error: Exception | None = None) -> None:
        if self.state != RESULT or index != self.index:
            return                                  # the presenter moved on meanwhile
        self._reading = False
        if card is None:
            self.card.show_title(self.beats[index].title, f"The result could not be read: {str(error).strip()[:200]}",
                                 "", self._position())
        else:
            self.card.show_result(card, self._position())
            for finding in card.findings:
                self._findings[(finding.report, finding.statement)] = finding
        self._show_card(RESULT, RESULT_S)

    def _after(self, index: int) -> None:
        if index + 1 < len(self.beats):
            self._title(index + 1)
        else:
            self._show_summary()

    def _show_summary(self) -> None:
        self.card.show_summary(summary(list(self._findings.values())),
                               f"replay of runs {self.replayed_from}" if self.replay and self.replayed_from else "")
        self._show_card(SUMMARY, 0)

    def _card_over(self) -> None:
        if self.state == TITLE:
            self._run_beat()
        elif self.state == RESULT:
            self._after(self.index)

    # ---- helpers ------------------------------------------------------------------------------
    def _show_card(self, state: str, seconds: float) -> None:
        self._set_state(state)
        self._fit_card()
        self.card.show()
        self.card.raise_()
        self._clock.stop()
        self._remaining_ms = int(seconds * 1000)
        if seconds and not self.paused:
            self._clock.start(self._remaining_ms)
        self._show_state()

    def _show_state(self) -> None:
        words = []
        if self.replay:
            words.append("REPLAY of recorded runs" + (f" ({self.replayed_from})" if self.replayed_from else ""))
        if self.paused:
            words.append("paused: Space resumes")
        if self._reading and self.state == RESULT:
            words.append("reading the result…")
        self.card.set_state(" · ".join(words))

    def _stop_runs(self) -> None:
        if self.state != RUNNING:
            return
        if self.replay:
            self._replayer.stop()
        else:
            self._window.controller.stop(keep_queue=False)     # this beat's run and its queue
        self._window.dashboard.spotlight(())

    def _replay_failed(self, message: str) -> None:
        self.card.set_state(message)
        self._runs_over()

    def _position(self) -> str:
        return f"Experiment {self.index + 1} of {len(self.beats)}"

    def _set_state(self, state: str) -> None:
        self.state = state
        self.state_changed.emit(state)

    def _key(self, key: Qt.Key, slot) -> QShortcut:
        shortcut = QShortcut(QKeySequence(key), self._window)
        shortcut.setContext(Qt.ShortcutContext.WindowShortcut)
        shortcut.activated.connect(slot)
        return shortcut

    def _fit_card(self) -> None:
        central = self._window.centralWidget()
        self.card.setGeometry(central.geometry() if central is not None else self._window.rect())

    def eventFilter(self, watched, event) -> bool:
        if self.state != ENDED and event.type() in (QEvent.Type.Resize, QEvent.Type.Move) and self.card.isVisible():
            self._fit_card()
        return False
