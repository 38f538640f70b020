"""The narrated demo played in the real window: title, runs with the charts that matter alone, a
result card measured beside published, a summary; the presenter's keys; the same cards replayed."""
from __future__ import annotations

import socket
from dataclasses import replace

import pytest
from PySide6.QtCore import Qt

from app.demo.presenter import ENDED, RESULT, RUNNING, SUMMARY, TITLE
from tests.demo_window import window  # noqa: F401  (the fixture)
from workloads.reproduce.findings import NOT_MEASURED
from workloads.reproduce.story import narrated_playlist
from workloads.scenario import Scenario

RUNS_MS = 120_000


def _short(beat, seconds: float = 1.0):
    """The beat with each run a second long: the story is the same, the test quick."""
    return replace(beat, scenarios=tuple(s.with_changes(duration_s=seconds) for s in beat.scenarios))


def _present(window, beats, recorded=None, when=""):
    window.presenting.begin(beats, recorded, when)
    return window.presenting.presenter


def _states(presenter) -> list[str]:
    seen: list[str] = []
    presenter.state_changed.connect(seen.append)
    return seen


def test_a_beat_tells_its_question_runs_with_its_charts_alone_then_shows_measured_beside_published(qtbot, window):
    beat = _short(narrated_playlist(5)[0])                          # report 000, a day of L1 quotes
    presenter = _present(window, [beat])
    seen = _states(presenter)
    assert presenter.state == TITLE and beat.question in presenter.card.text()
    assert "Watch:" in presenter.card.text() and not window.scenario.toolbar.isVisible()
    qtbot.waitUntil(lambda: presenter.state == RUNNING, timeout=5000)
    assert window.dashboard.spotlit == beat.charts
    # while a run's process lays out data and warms up, a card names it (no empty axes), then goes
    qtbot.waitUntil(lambda: presenter.card.kind == "starting" and presenter.card.isVisible(), timeout=10_000)
    assert presenter.card.heading.text() == "pickle, cold cache"              # the first arm, by its name
    qtbot.waitUntil(lambda: not presenter.card.isVisible(), timeout=RUNS_MS)
    assert window.dashboard.snapshot.ops_done > 0
    assert not window.dashboard.latency_chart.isVisible() and window.dashboard.rows_chart.isVisible()
    qtbot.waitUntil(lambda: bool(presenter._beat_runs) and window.dashboard.snapshot is not None,
                    timeout=RUNS_MS)
    assert window.dashboard.header_text().startswith("pickle, cold cache")  # the header names the arm
    assert presenter._beat_runs[-1] not in window.dashboard.header_text()    # but not its run id
    qtbot.waitUntil(lambda: presenter.state == RESULT and "published" in presenter.card.text(), timeout=RUNS_MS)
    shown = presenter.card.text()
    assert "pickle.load, cold cache" in shown and presenter.card.kind == "result"
    assert "Compare the ratios, not the seconds" in shown and "reading the result" not in shown
    assert "The machine was busy" not in shown                             # no load warnings on screen
    assert len(presenter._beat_runs) == len(beat.scenarios)
    assert not any(run_id in shown for run_id in presenter._beat_runs)     # no run ids before an audience
    qtbot.waitUntil(lambda: presenter.state == SUMMARY, timeout=10_000)
    assert "findings hold on this machine" in presenter.card.text()
    assert f"<b>{NOT_MEASURED}</b>" not in presenter.card.text()           # none that no run measured
    assert seen == [RUNNING, RESULT, RESULT, SUMMARY]
    qtbot.keyClick(window, Qt.Key.Key_Escape)
    assert presenter.state == ENDED or window.presenting.presenter is None
    assert window.scenario.toolbar.isVisible() and window.dashboard.spotlit == ()


def _noop_beat(beat, name: str, seconds: float):
    return replace(beat, scenarios=(Scenario(name=name, workload="noop", users=(1,), operations=0,
                                             duration_s=seconds),), title=name)


def test_space_pauses_a_card_and_the_next_run_and_right_left_move_between_beats(qtbot, window):
    first, second = (_noop_beat(b, f"beat {n}", 1.0) for n, b in enumerate(narrated_playlist(5)[:2], 1))
    presenter = _present(window, [first, second])
    qtbot.keyClick(window, Qt.Key.Key_Space)                              # paused on the first title
    assert presenter.paused and "paused" in presenter.card.text()
    qtbot.wait(1000)                                                      # > the card's 0.3 s
    assert presenter.state == TITLE and not window.controller.busy
    qtbot.keyClick(window, Qt.Key.Key_Space)
    qtbot.waitUntil(lambda: presenter.state == RUNNING, timeout=5000)
    qtbot.keyClick(window, Qt.Key.Key_Right)                              # skip the first beat's run
    assert presenter.state == TITLE and presenter.index == 1
    qtbot.keyClick(window, Qt.Key.Key_Left)
    assert presenter.state == TITLE and presenter.index == 0 and "beat 1" in presenter.card.text()
    qtbot.keyClick(window, Qt.Key.Key_H)
    assert not presenter.card.isVisible()
    qtbot.keyClick(window, Qt.Key.Key_H)
    assert presenter.card.isVisible()
    qtbot.keyClick(window, Qt.Key.Key_Escape)
    qtbot.waitUntil(lambda: not window.controller.busy, timeout=30_000)
    assert window.presenting.presenter is None


def test_a_replay_of_the_recorded_runs_shows_the_same_cards_and_says_it_is_a_replay(qtbot, window):
    beat = _short(narrated_playlist(5)[0])
    live = _present(window, [beat])
    cards = []
    live.state_changed.connect(lambda state: cards.append(live.card.text()) if state == SUMMARY else None)
    qtbot.waitUntil(lambda: live.state == RESULT and "published" in live.card.text(), timeout=RUNS_MS)
    live_result = live.card.text()
    qtbot.waitUntil(lambda: live.state == SUMMARY, timeout=10_000)
    live_summary = live.card.text()
    live.stop()
    from workloads.reproduce.story import recorded_runs
    recorded = recorded_runs(window.store, [beat])
    assert len(recorded) == len(beat.scenarios)
    replayed = _present(window, [beat], recorded, "recorded today")
    qtbot.waitUntil(lambda: replayed.state == RUNNING, timeout=5000)
    qtbot.waitUntil(lambda: "REPLAY" in window.dashboard.header_text(), timeout=10_000)   # the live view says so
    assert not window.controller.busy                                     # nothing runs: it is played back
    first = beat.scenarios[0]                        # as live: its time axes held to the run's planned length
    assert window.dashboard.rows_chart._horizon == pytest.approx(first.duration_s * len(first.users))
    qtbot.waitUntil(lambda: replayed.state == RESULT and "published" in replayed.card.text(), timeout=RUNS_MS)
    strip = lambda text: [line for line in text.splitlines() if "REPLAY" not in line]   # noqa: E731
    here = f"Measured on {socket.gethostname()}, "               # made earlier: where, not "this machine"
    assert here in replayed.card.text() and "Measured here" not in replayed.card.text()
    assert strip(replayed.card.text().replace(here, "Measured here: this machine, ")) == strip(live_result)
    assert "REPLAY" in replayed.card.text()
    qtbot.waitUntil(lambda: replayed.state == SUMMARY, timeout=10_000)
    assert strip(replayed.card.text().replace(" · replay of runs recorded today", "")) == strip(live_summary)


def _refused_port() -> int:
    with socket.socket() as probe:               # bound, then closed: nothing listens there
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def test_a_demo_on_a_server_asks_its_password_once_up_front_and_none_given_starts_nothing(qtbot, window,
                                                                                            monkeypatch):
    from PySide6.QtWidgets import QInputDialog
    key = window.targets_panel.add_profile(
        {"profile": {"name": "office", "nodes": [{"host": "127.0.0.1", "port": _refused_port(), "role": "single"}],
                     "user": "admin"}})
    asked = []
    monkeypatch.setattr(QInputDialog, "getText", lambda *a, **k: (asked.append(a) or "", False))
    engines = window.presenting.demo_engines(key, None, replay=False)
    assert engines.subject == "dolphindb" and engines.subject_config["target_key"] == key
    window.presenting.present(5, False, engines)
    assert len(asked) == 1 and window.presenting.presenter is None and not window.controller.busy
    assert window.statusBar().currentMessage() == "demo not started: no password given"
    monkeypatch.setattr(QInputDialog, "getText", lambda *a, **k: (asked.append(a) or "s3cret", True))
    window.presenting.present(5, False, engines)
    assert len(asked) == 2                                    # once for the whole demo, not per run
    presenter = window.presenting.presenter
    servers = [s for b in presenter.beats for s in b.scenarios if s.target == "dolphindb"]
    assert len(servers) > 1 and all(s.target_config.get("password") == "s3cret" for s in servers)
    presenter.stop()
