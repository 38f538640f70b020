"""The run controller's playlist and the processes it starts, with real run processes (noop):
the Stop question acts on the run it named, a held playlist waits, an ended run's process is reaped."""
from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import QSettings, QTimer
from PySide6.QtWidgets import QMessageBox

from app.window.main_window import MainWindow
from app.window.run_controller import RunController
from tests.test_main_window import DictPasswords
from workloads.results.dead_runs import run_process
from workloads.results.store import ResultsStore
from workloads.scenario import Scale, Scenario

RUN_TIMEOUT_MS = 180_000


def _noop(name: str, seconds: float) -> Scenario:
    return Scenario(name=name, workload="noop", users=(1,), operations=0, duration_s=seconds)


@pytest.fixture
def controller(qtbot, tmp_path):
    store = ResultsStore(tmp_path / "results")
    made = RunController(store)
    yield made
    made.shutdown()
    store.close()


@pytest.fixture
def window(qtbot, tmp_path, light_theme):
    store = ResultsStore(tmp_path / "results")
    settings = QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat)
    made = MainWindow(store, tmp_path / "data", settings, DictPasswords())
    qtbot.addWidget(made)
    made.resize(1280, 800)
    made.show()
    qtbot.waitExposed(made)
    yield made
    made.ask_close_during_run = lambda: "stop"     # a run left by a failed test: no question at close
    made.close()
    store.close()


def _answer_the_stop_question_once(window, button: str, ready) -> None:
    """Click ``button`` of the Stop question once it is up and ``ready()`` holds (the question runs
    its own event loop: runs end and start behind it meanwhile)."""
    def click() -> None:
        box = next((b for b in window.findChildren(QMessageBox) if b.isVisible()), None)
        if box is None or not ready():
            QTimer.singleShot(50, click)
            return
        next(b for b in box.buttons() if b.text() == button).click()
    QTimer.singleShot(50, click)


def _stop_and_wait(qtbot, controller: RunController) -> None:
    if controller.busy:
        with qtbot.waitSignal(controller.run_finished, timeout=30_000):
            controller.stop()


def test_skip_this_one_skips_nothing_once_the_named_run_has_finished(qtbot, window):
    controller = window.controller
    started, finished = [], []
    controller.run_started.connect(lambda run_id, scenario: started.append((run_id, scenario.name)))
    controller.run_finished.connect(finished.append)
    window.reports.start_runs([_noop("long 1", 4.0), _noop("long 2", 120.0)])
    qtbot.waitUntil(lambda: len(started) == 1, timeout=RUN_TIMEOUT_MS)
    first_id = started[0][0]
    ended_at = []

    def first_over_a_while_ago() -> bool:
        # long enough for the playlist's next run to have started, had the question not held it
        if finished and not ended_at:
            ended_at.append(len(started))
            QTimer.singleShot(3000, lambda: ended_at.append("waited"))
        return "waited" in ended_at

    _answer_the_stop_question_once(window, "Skip this one", first_over_a_while_ago)
    window.scenario.stop_action.trigger()                    # returns once the question is answered
    assert [r.run_id for r in finished] == [first_id] and finished[0].status == "completed"
    assert len(started) == 1, "the next run started while the question was open"
    assert window.status_label.text() == "“long 1” had already finished; the playlist goes on"
    qtbot.waitUntil(lambda: len(started) == 2, timeout=RUN_TIMEOUT_MS)      # the playlist goes on
    second_id = started[1][0]
    assert started[1][1] == "long 2" and controller.current_run_id == second_id
    qtbot.waitUntil(lambda: window.dashboard.snapshot is not None and window.dashboard.snapshot.run_id == second_id
                    and window.dashboard.snapshot.ops_done > 50, timeout=RUN_TIMEOUT_MS)
    assert window.dashboard.snapshot.status == "running" and len(finished) == 1     # not cancelled by the skip
    _stop_and_wait(qtbot, controller)


def test_a_held_playlist_starts_nothing_until_released(qtbot, controller):
    started, finished = [], []
    controller.run_started.connect(lambda run_id, scenario: started.append(run_id))
    controller.run_finished.connect(finished.append)
    controller.start_playlist([_noop("short", 2.0), _noop("next", 120.0)])
    qtbot.waitUntil(lambda: len(started) == 1, timeout=RUN_TIMEOUT_MS)
    controller.hold("pause")
    controller.hold("pause")                # the same reason twice is one hold
    controller.release("never held")        # a reason not held changes nothing
    qtbot.waitUntil(lambda: len(finished) == 1, timeout=RUN_TIMEOUT_MS)
    qtbot.wait(2500)                        # past the playlist's one-second pause between runs
    assert len(started) == 1 and not controller.busy and controller.waiting == 1 and controller.held
    with qtbot.waitSignal(controller.run_started, timeout=RUN_TIMEOUT_MS):
        controller.release("pause")
    assert not controller.held and controller.waiting == 0 and controller.current_run_id == started[1]
    _stop_and_wait(qtbot, controller)


def test_a_stop_naming_a_run_that_has_ended_stops_nothing(qtbot, controller):
    with qtbot.waitSignal(controller.run_finished, timeout=RUN_TIMEOUT_MS) as first:
        assert controller.start(Scenario(name="quick", workload="noop", users=(1,), operations=5))
    old_id = first.args[0].run_id
    snapshots = []
    controller.snapshot_ready.connect(snapshots.append)
    assert controller.start(_noop("long", 120.0))
    assert controller.stop(run_id=old_id) is False
    qtbot.waitUntil(lambda: bool(snapshots) and snapshots[-1].ops_done > 50, timeout=RUN_TIMEOUT_MS)
    assert controller.stop(run_id=old_id) is False
    qtbot.wait(1500)
    assert controller.busy and snapshots[-1].status == "running"
    with qtbot.waitSignal(controller.run_finished, timeout=30_000) as second:
        assert controller.stop(run_id=controller.current_run_id) is True
    assert second.args[0].status == "cancelled"


def _zombie(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] == "Z"        # the name in parentheses may hold spaces


def test_an_ended_runs_process_is_reaped(qtbot, controller):
    # a cancelled run's record says so while its process still takes its workers down
    snapshots = []
    controller.snapshot_ready.connect(snapshots.append)
    assert controller.start(_noop("long", 120.0))
    qtbot.waitUntil(lambda: bool(snapshots) and snapshots[-1].ops_done > 20, timeout=RUN_TIMEOUT_MS)
    with qtbot.waitSignal(controller.run_finished, timeout=30_000) as finished:
        controller.stop()
    result = finished.args[0]
    assert result.status == "cancelled", result.message
    pid = run_process(controller.store.run(result.run_id)).pid
    qtbot.waitUntil(lambda: not _zombie(pid), timeout=5000)


def test_a_process_that_outlives_its_runs_record_is_reaped_when_it_exits(qtbot, controller):
    """The record can say "over" while the process still takes its workers down: the controller then
    lets go of the run at once and collects the exit later, off the GUI thread's way (no zombie)."""
    import subprocess
    import sys

    from workloads.run.runner import RunResult

    lingering = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(1.5)"])
    controller._follow("lingering-run", lingering)
    with qtbot.waitSignal(controller.run_finished, timeout=5000):
        controller._end(RunResult("lingering-run", "completed", ""))
    assert not controller.busy and lingering.returncode is None            # not waited for
    pid = lingering.pid
    del lingering                                                         # only the controller holds it
    qtbot.waitUntil(lambda: not Path(f"/proc/{pid}").exists(), timeout=10_000)   # exited and reaped


def test_a_playlist_says_why_a_scenario_cannot_start_starts_no_process_for_it_and_goes_on(qtbot, controller):
    started, failed, finished = [], [], []
    controller.run_started.connect(lambda run_id, scenario: started.append(scenario.name))
    controller.run_failed_to_start.connect(failed.append)
    controller.run_finished.connect(finished.append)
    refused = Scenario(name="as-of join on devices", dataset="devices", workload="asof-join", users=(1,), operations=1)
    # the dataset fits the workload; its own check refuses the scenario (more days than the data has)
    checked = Scenario(name="three days of one", dataset="taq", workload="spread-by-minute", params={"days": 3},
                       scale=Scale(days=1, rows_per_day=1_000, symbols=5), users=(1,), operations=1)
    controller.start_playlist([refused, checked, _noop("after it", 0.5)])
    qtbot.waitUntil(lambda: len(finished) == 1, timeout=RUN_TIMEOUT_MS)
    assert failed == ["asof-join asks quotes with their trades: the taq dataset, or your trades paired with your "
                      "quotes (tickbench import TRADES --name NAME --trades-of QUOTES ...), not devices",
                      "spread-by-minute: 3 days per operation, but the dataset has only 1 day"]
    assert started == ["after it"] and finished[0].status == "completed"     # no process for the refused one
