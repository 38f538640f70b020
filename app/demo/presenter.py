"""The narrated demo, played: for each beat (``workloads.reproduce.story``) a title card, its runs
with the charts that matter alone on screen, a result card; a summary at the end.

Live, the runs go through the window's run controller like any playlist; with ``replay`` they are
the stored runs of an earlier demo played back at their pace (``app.demo.replay``), and every screen
says so. The presenter keeps control from the keyboard: Space pauses and resumes (a card's clock
stops; a live run finishes, the next one waits; a replay stops where it is), Right and Left go to
the next and previous beat, H hides the card, F toggles full screen, Esc ends the demo.

A demo given its minutes keeps them: before each beat it checks the beat still fits the time left at
the pace the beats so far kept (their runs' processes and warm-ups take what they take), else it goes
on to the next that fits, or to the summary; the summary stays until the minutes are up, then the demo
ends by itself. A beat still going when only the summary's time is left is cut for it. Paused time
does not count.
"""
from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any, Callable

from PySide6.QtCore import QEvent, QObject, Qt, QTimer, Signal
from PySide6.QtGui import QKeySequence, QShortcut

from app.demo.replay import ReplayDriver
from widgets.reports.demo_card import DemoCard, PauseSign
from workloads.reproduce.story import RESULT_S, TITLE_S, Beat, result_card, summary

TITLE, RUNNING, RESULT, SUMMARY, ENDED = "title", "running", "result", "summary", "ended"
PAUSED = "the presenter paused"          # the run controller's hold reason
SUMMARY_S = 15.0                         # the summary, at the least: read aloud, then the demo ends
# a beat that overruns the minutes by this share of them is still played: a light demo at 1920x1080
# left its last beat out for 2 s and held its summary 67 s, where 5 s over would have shown it
OVERRUN_SHARE = 0.05


def arm_title(name: str) -> str:
    """A demo run's arm as its audience knows it: "pickle, cold cache" of "Report 000 · a day, L1
    quotes · pickle, cold cache · tiny · demo"."""
    parts = name.split(" · ")
    return parts[2] if len(parts) > 2 else name


@dataclass(frozen=True)
class Stage:
    """What a presenter drives, handed to it by the window that composes it (never read off the window)."""
    window: Any                         # the cards cover it; the presenter's keys are its shortcuts
    dashboard: Any                      # the Run tab's live view: charts spotlit, the arm's title, cleared
    runs: Any                           # the run controller the beats' playlists go through
    store: Any                          # the catalog: recorded runs, result cards' figures
    background: Any                     # reads off the GUI thread
    show_run_tab: Callable[[], None]
    toggle_full_screen: Callable[[], None]


class Presenter(QObject):
    state_changed = Signal(str)
    finished = Signal()

    def __init__(self, stage: Stage, beats: list[Beat], recorded: dict[str, str] | None = None, replayed_from: str = "",
                 budget_s: float | None = None):
        """``stage``: what the demo drives (the window's run view, run controller, catalog, reader).
        ``recorded``: for a replay, each beat scenario's name -> its stored run (story.recorded_runs);
        beats without one are left out. ``budget_s``: the demo's length (None: each card waits for the
        presenter at the end)."""
        window = stage.window
        super().__init__(window)
        self._stage = stage
        self.replay = recorded is not None
        self.beats = [b for b in beats if not self.replay or all(s.name in recorded for s in b.scenarios)]
        self._recorded = recorded or {}
        self.replayed_from = replayed_from
        self.index, self.state, self.paused = 0, ENDED, False
        self._reading = False                           # a result card waiting for its figures
        self._beat_runs: list[str] = []                 # this beat's runs that started
        self._report_runs: dict[str, list[str]] = {}    # every demo run so far, per report
        self._findings: dict[tuple[str, str], object] = {}
        self.budget_s = budget_s
        self._deadline = 0.0                            # monotonic; moved on by paused time
        self._paused_at = 0.0
        self._beat_started = 0.0
        self._estimated_s = self._taken_s = 0.0         # the beats played so far: estimated, taken
        self.card = DemoCard(window)
        self.card.hide()
        self.pause_sign = PauseSign(window)
        window.installEventFilter(self)
        if window.centralWidget() is not None:          # its place changes as docks and bars go
            window.centralWidget().installEventFilter(self)
        self._clock = QTimer(self, singleShot=True)
        self._clock.timeout.connect(self._card_over)
        self._last_call = QTimer(self, singleShot=True)          # a beat still going then: the summary's turn
        self._last_call.timeout.connect(self._time_is_up)
        self._remaining_ms = 0
        self._replayer = ReplayDriver(stage.store, stage.background, stage.dashboard, self)
        self._replayer.run_started.connect(self._on_replay_started)
        self._replayer.done.connect(self._runs_over)
        self._replayer.failed.connect(self._replay_failed)
        controller = stage.runs
        controller.run_started.connect(self._on_run_started)
        controller.run_finished.connect(self._on_run_finished)        # bound slots: gone with the presenter
        controller.snapshot_ready.connect(self._on_snapshot)
        controller.run_failed_to_start.connect(self._on_failed_to_start)
        self._keys = [self._key(key, slot) for key, slot in (
            (Qt.Key.Key_Space, self.toggle_pause), (Qt.Key.Key_Right, self.next), (Qt.Key.Key_Left, self.previous),
            (Qt.Key.Key_Escape, self.stop), (Qt.Key.Key_H, self.toggle_card), (Qt.Key.Key_F, stage.toggle_full_screen))]

    # ---- the presenter's controls ---------------------------------------------------------------
    def start(self) -> None:
        self._deadline = time.monotonic() + (self.budget_s or 0.0)
        self._arm_last_call()
        if not self.beats:
            self._show_summary()
            return
        self._title(0)

    def toggle_pause(self) -> None:
        self.paused = not self.paused
        if self.paused:
            self._paused_at = time.monotonic()
            self._last_call.stop()
            if self._clock.isActive():
                self._remaining_ms = self._clock.remainingTime()
                self._clock.stop()
            self._stage.runs.hold(PAUSED)
            self._replayer.pause()
        else:
            self._deadline += time.monotonic() - self._paused_at
            self._beat_started += time.monotonic() - self._paused_at
            self._arm_last_call()
            if self.state in (TITLE, RESULT, SUMMARY) and self._remaining_ms:
                self._clock.start(max(self._remaining_ms, 500))
            self._stage.runs.release(PAUSED)
            self._replayer.resume()
        self._show_state()
        self._show_pause_sign()

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
        self._last_call.stop()
        self._stage.runs.release(PAUSED)
        self.paused = False
        self._set_state(ENDED)
        self.card.hide()
        self._stage.dashboard.spotlight(())
        self._stage.dashboard.set_time_horizon(None)
        # the keys and the card belong to the window (their context and their place): gone with the demo
        for shortcut in self._keys:
            shortcut.setEnabled(False)
            shortcut.deleteLater()
        self.card.deleteLater()
        self.pause_sign.deleteLater()
        self.finished.emit()

    # ---- the beats --------------------------------------------------------------------------------
    def _title(self, index: int) -> None:
        self.index = index
        beat = self.beats[index]
        self._beat_started = time.monotonic()
        self._stage.dashboard.clear()          # behind the card (H shows it): never the last beat's run
        self._stage.dashboard.set_audience_title(beat.title)      # what comes, not "No run"
        self.card.show_title(beat.title, beat.question, beat.watch, self._position())
        self._show_card(TITLE, TITLE_S)

    def _run_beat(self) -> None:
        beat = self.beats[self.index]
        self._beat_runs.clear()
        self._set_state(RUNNING)
        self.card.hide()
        self._stage.dashboard.spotlight(beat.charts)
        self._stage.show_run_tab()
        if self.replay:
            self._replayer.play([self._recorded[s.name] for s in beat.scenarios])
        else:
            self._stage.runs.start_playlist(list(beat.scenarios))

    def _on_run_started(self, run_id: str, scenario) -> None:
        beat = self.beats[self.index] if self.state == RUNNING else None
        if beat is not None and scenario.name in {s.name for s in beat.scenarios}:
            self._beat_runs.append(run_id)
            self._show_arm(scenario)
            # no empty axes while its process lays out data and warms up: say which run comes
            self.card.show_starting(arm_title(scenario.name), self._position(), beat.watch)
            self._fit_card()
            self.card.show()
            self.card.raise_()

    def _on_replay_started(self, run_id: str) -> None:
        self._beat_runs.append(run_id)
        names = {name for name, recorded in self._recorded.items() if recorded == run_id}
        scenario = next((s for s in self.beats[self.index].scenarios if s.name in names), None) \
            if self.state == RUNNING else None
        if scenario is not None:
            self._show_arm(scenario)            # as live: its name, its time axes held to its length
        else:
            self._stage.dashboard.set_audience_title("")

    def _show_arm(self, scenario) -> None:
        """The run screen names the arm and holds its time axes from 0 to the run's planned length."""
        self._stage.dashboard.set_audience_title(arm_title(scenario.name))
        self._stage.dashboard.set_time_horizon(scenario.duration_s * len(scenario.users) or None)

    def _on_snapshot(self, snapshot) -> None:
        if self.state == RUNNING and self.card.kind == "starting" and snapshot.ops_done > 0:
            self.card.hide()                        # its first operations: the charts have lines

    def _on_run_finished(self, result) -> None:
        self._on_run_over(result.run_id)

    def _on_failed_to_start(self, _message: str) -> None:
        self._on_run_over("")

    def _on_run_over(self, run_id: str) -> None:
        """A run of the controller ended (or failed to start): the beat is over once none waits."""
        controller = self._stage.runs
        if self.state == RUNNING and not self.replay and (not run_id or run_id in self._beat_runs) \
                and not controller.waiting and not controller.busy:
            self._runs_over()

    def _runs_over(self) -> None:
        if self.state != RUNNING:
            return
        beat, runs, index = self.beats[self.index], list(self._beat_runs), self.index
        self._report_runs.setdefault(beat.report, []).extend(runs)
        report_runs = list(self._report_runs[beat.report])
        self._stage.dashboard.spotlight(())
        self.card.show_title(beat.title, "", "", self._position())
        self._reading = True
        self._show_card(RESULT, 0)
        store, replayed = self._stage.store, self.replay
        self._stage.background.run("demo-result", lambda: result_card(beat, store, report_runs, runs, replayed),
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
        if self._beat_started:
            self._estimated_s += self.beats[index].seconds
            self._taken_s += time.monotonic() - self._beat_started
        following = self.next_that_fits(index)
        if following is not None:
            self._title(following)
        else:
            self._show_summary()

    def next_that_fits(self, index: int) -> int | None:
        """The beat after ``index`` to play: the next, or with a length, the next whose estimate at
        the pace kept so far fits the time left before the summary (None: the summary's turn)."""
        if self.budget_s is None:
            return index + 1 if index + 1 < len(self.beats) else None
        pace = self._taken_s / self._estimated_s if self._estimated_s else 1.0
        left = self._time_for_beats()
        return next((i for i in range(index + 1, len(self.beats)) if self.beats[i].seconds * pace <= left), None)

    def _time_for_beats(self) -> float:
        """Seconds a beat may still take: to the summary's least, plus the overrun allowed."""
        return self.seconds_left() - SUMMARY_S + OVERRUN_SHARE * self.budget_s

    def seconds_left(self) -> float:
        """Of the demo's length, paused time not counted (0 for a demo without one)."""
        if self.budget_s is None:
            return 0.0
        return self._deadline - (self._paused_at if self.paused else time.monotonic())

    def _arm_last_call(self) -> None:
        if self.budget_s is not None and self.state != SUMMARY:
            self._last_call.start(max(0, int(self._time_for_beats() * 1000)))

    def _time_is_up(self) -> None:
        if self.state in (TITLE, RUNNING, RESULT) and not self.paused:
            self._stop_runs()
            self._show_summary()

    def _show_summary(self) -> None:
        self.card.show_summary(summary(list(self._findings.values())),
                               f"replay of runs {self.replayed_from}" if self.replay and self.replayed_from else "")
        # a demo with a length ends by itself when it is up (the summary read at least); else on Esc
        self._show_card(SUMMARY, max(SUMMARY_S, self.seconds_left()) if self.budget_s is not None else 0)

    def _card_over(self) -> None:
        if self.state == TITLE:
            self._run_beat()
        elif self.state == RESULT:
            self._after(self.index)
        elif self.state == SUMMARY:
            self.stop()

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
            self._stage.runs.stop(keep_queue=False)     # this beat's run and its queue
        self._stage.dashboard.spotlight(())

    def _replay_failed(self, message: str) -> None:
        self.card.set_state(message)
        self._runs_over()

    def _position(self) -> str:
        return f"Experiment {self.index + 1} of {len(self.beats)}"

    def _set_state(self, state: str) -> None:
        self.state = state
        self.state_changed.emit(state)

    def _key(self, key: Qt.Key, slot) -> QShortcut:
        shortcut = QShortcut(QKeySequence(key), self._stage.window)
        shortcut.setContext(Qt.ShortcutContext.WindowShortcut)
        shortcut.activated.connect(slot)
        return shortcut

    def _fit_card(self) -> None:
        central = self._stage.window.centralWidget()
        self.card.setGeometry(central.geometry() if central is not None else self._stage.window.rect())
        self._show_pause_sign()

    def _show_pause_sign(self) -> None:
        self.pause_sign.setVisible(self.paused and self.state != ENDED)
        if self.paused:
            self.pause_sign.place(self.card.geometry())

    def eventFilter(self, watched, event) -> bool:
        if self.state != ENDED and event.type() in (QEvent.Type.Resize, QEvent.Type.Move) and \
                (self.card.isVisible() or self.paused):
            self._fit_card()
        return False
