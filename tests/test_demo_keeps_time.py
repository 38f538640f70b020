"""The narrated demo keeps the presenter's minutes and its word before an audience: beats that no
longer fit are left out, the summary holds to the end and the demo ends by itself; a pause is shown
on screen; a title card never has the last beat's run behind it; the run screen shows no internals."""
from __future__ import annotations

import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path

from PySide6.QtCore import Qt

import app.demo.presenter as presenting
from app.demo.presenter import ENDED, RESULT, RUNNING, SUMMARY, TITLE
from widgets.common.full_screen import is_full_screen
from tests.demo_window import window  # noqa: F401  (the fixture)
from workloads.reproduce.story import narrated_playlist
from workloads.scenario import Scenario

ROOT = Path(__file__).resolve().parent.parent


def _noop_beats(count: int, run_s: float, estimate_s: float):
    beat = narrated_playlist(5)[0]
    return [replace(beat, title=f"beat {n}", seconds=estimate_s,
                    scenarios=(Scenario(name=f"Report 000 · beat {n} · arm {n} · tiny · demo", workload="noop",
                                        users=(1,), operations=0, duration_s=run_s),))
            for n in range(1, count + 1)]


def test_a_demo_with_minutes_leaves_out_what_no_longer_fits_and_ends_by_itself_on_time(qtbot, window, monkeypatch):
    monkeypatch.setattr(presenting, "SUMMARY_S", 3.0)
    budget = 40.0           # room for the first beat and the next on a loaded 2-core machine too
    # each beat is estimated at 2 s and takes more (a process, a warm-up, cards): the pace tells
    beats = _noop_beats(14, run_s=1.0, estimate_s=2.0)
    beats[1] = replace(beats[1], seconds=100.0)    # estimated far past the minutes: left out, the next played
    played, ended = [], []
    window.presenting.begin(beats, None, "", budget / 60)    # 5, 10 or 20 minutes: the same rule
    presenter = window.presenting.presenter
    started = time.monotonic() - (budget - presenter.seconds_left())    # its clock, from its first card
    presenter.state_changed.connect(lambda state: played.append(presenter.index) if state == RUNNING else None)
    presenter.finished.connect(lambda: ended.append(time.monotonic()))
    states = []
    presenter.state_changed.connect(lambda state: states.append((round(time.monotonic() - started, 1), state,
                                                                 presenter.index)))
    qtbot.waitUntil(lambda: presenter.state == SUMMARY, timeout=budget * 1000 * 2)
    assert played[:2] == [0, 2] and len(played) < len(beats) - 1   # nor would all the rest at their pace
    qtbot.waitUntil(lambda: bool(ended), timeout=budget * 1000 * 2)
    assert abs((ended[0] - started) - budget) <= 0.1 * budget, states
    assert window.presenting.presenter is None and not window.controller.busy


def test_without_minutes_the_summary_waits_for_the_presenter(qtbot, window, monkeypatch):
    monkeypatch.setattr(presenting, "SUMMARY_S", 0.5)
    window.presenting.begin(_noop_beats(1, run_s=0.5, estimate_s=1.0), None, "")
    presenter = window.presenting.presenter
    qtbot.waitUntil(lambda: presenter.state == SUMMARY, timeout=60_000)
    qtbot.wait(1500)
    assert presenter.state == SUMMARY and window.presenting.presenter is presenter


def test_a_pause_shows_on_the_charts_and_the_run_screen_shows_no_internals(qtbot, window):
    beats = _noop_beats(2, run_s=4.0, estimate_s=5.0)
    window.presenting.begin(beats, None, "")
    presenter = window.presenting.presenter
    qtbot.waitUntil(lambda: presenter.state == RUNNING and window.dashboard.snapshot is not None
                    and window.dashboard.snapshot.ops_done > 0, timeout=60_000)
    qtbot.waitUntil(lambda: "p50" in window.dashboard.figures_label.text(), timeout=30_000)
    header, figures = window.dashboard.header_text(), window.dashboard.figures_label.text()
    assert header.startswith("arm 1") and "1 user" in header
    for internal in ("tiny", "demo", "noop", "step 1/1", "running", window.presenting.presenter._beat_runs[0]):
        assert internal not in header
    assert "exact" not in figures and "estimate" not in figures and "Step" not in figures
    assert not presenter.pause_sign.isVisible()
    qtbot.keyClick(window, Qt.Key.Key_Space)
    assert presenter.pause_sign.isVisible() and "Paused" in presenter.pause_sign.text()
    sign = presenter.pause_sign.geometry()
    assert window.rect().contains(sign) and not presenter.card.isVisible()
    qtbot.keyClick(window, Qt.Key.Key_Space)
    assert not presenter.pause_sign.isVisible()
    # the next title: the last beat's run is not behind it, nor is "Watch:" ever shown empty
    texts = []
    presenter.state_changed.connect(lambda state: texts.append(presenter.card.text()) if state == RESULT else None)
    qtbot.waitUntil(lambda: presenter.state == TITLE and presenter.index == 1, timeout=60_000)
    assert window.dashboard.snapshot is None and window.dashboard.header_text() == "beat 2"
    assert texts and not any("Watch:" in text for text in texts)
    qtbot.keyClick(window, Qt.Key.Key_H)
    assert not presenter.card.isVisible() and window.dashboard.header_text() == "beat 2"
    qtbot.keyClick(window, Qt.Key.Key_Escape)
    assert window.presenting.presenter is None or presenter.state == ENDED


def test_demo_mode_takes_the_theme_it_is_given_and_text_keeps_its_share_of_the_screen(qtbot, window):
    from app.demo.mode import DEMO_FONT_SCALE, demo_font_scale
    from app.gui import enter_demo_mode
    from widgets.common.theme import current_theme
    assert demo_font_scale(600) == DEMO_FONT_SCALE and demo_font_scale(768) == 1.56 and demo_font_scale(1080) == 2.2
    assert demo_font_scale(2160) == 4.0                             # the theme's ceiling
    enter_demo_mode(window, None)                  # its own unless told: white on black
    assert window.demo.active and current_theme().name == "dark"
    assert current_theme().font_scale == demo_font_scale(window.screen().geometry().height())
    window.view.toggle_demo()
    assert current_theme().name == "light" and current_theme().font_scale == 1.0
    enter_demo_mode(window, "light")
    assert window.demo.active and current_theme().name == "light"
    window.view.toggle_demo()


def test_a_replay_with_nothing_recorded_says_so_and_opens_nothing(tmp_path):
    env = {"PATH": "/usr/bin:/bin", "TICKBENCH_HOME": str(tmp_path), "QT_QPA_PLATFORM": "offscreen",
           "XDG_CONFIG_HOME": str(tmp_path / "config")}
    done = subprocess.run([sys.executable, "-m", "app", "demo", "--replay", "--minutes", "5"], cwd=ROOT,
                          capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 2, done.stderr
    assert done.stderr.strip().splitlines()[-1] == ("tickbench demo: no recorded demo on duckdb to replay: play "
                                                    "it once first (tickbench demo --minutes 5)")
    assert "ready" not in done.stdout


def test_full_screen_without_a_window_manager_covers_the_screen_and_gives_the_window_back(qtbot, window,
                                                                                         monkeypatch):
    # a bare X server (no window manager): Qt records the state, nobody resizes the window
    monkeypatch.setattr(window, "showFullScreen",
                        lambda: window.overrideWindowState(window.windowState() | Qt.WindowState.WindowFullScreen))
    window.showNormal()
    window.setGeometry(40, 30, 900, 600)
    before = window.geometry()
    window.view.toggle_full_screen()
    screen = window.screen().geometry()        # (offscreen's is narrower than the window's least width)
    qtbot.waitUntil(lambda: window.geometry().height() == screen.height(), timeout=5000)
    assert window.geometry().top() <= screen.top() + 2 and is_full_screen(window)
    window.view.toggle_full_screen()
    qtbot.waitUntil(lambda: window.geometry() == before, timeout=5000)


def test_a_replay_from_the_window_shows_the_audiences_screen_at_once_and_gives_the_window_back_if_none(qtbot, window):
    window.presenting.present(5, True, window.presenting.demo_engines("duckdb", None, replay=True))
    assert not window.menuBar().isVisible() and not window.scenario.toolbar.isVisible()     # while the runs are read
    qtbot.waitUntil(lambda: "no recorded demo on duckdb" in window.statusBar().currentMessage(), timeout=30_000)
    assert window.menuBar().isVisible() and window.presenting.presenter is None


def test_a_beat_that_would_overrun_the_minutes_a_little_is_played_rather_than_a_minute_of_summary(window):
    """A light demo at 1920x1080 left its last beat out (54 s at its pace, 52 s left before the
    summary) and held the summary 67 s: a beat within 5 % of the minutes over is played."""
    window.presenting.begin(_noop_beats(3, run_s=1.0, estimate_s=52.0), None, "", 5)
    presenter = window.presenting.presenter
    presenter._taken_s, presenter._estimated_s = 104.0, 100.0    # the beats so far took 4 % longer
    presenter._deadline = time.monotonic() + 67.2                 # as that demo stood after its 4th beat
    assert presenter.next_that_fits(0) == 1
    presenter._deadline = time.monotonic() + 45.0                 # 54 s against 30 + 15: too far over
    assert presenter.next_that_fits(0) is None
