"""Run → Compare by running… in the real window: ``tickbench ab`` in a child process on the no-op
(every operation takes a set time: a known truth), its verdict in the view, Stop keeping what was
measured, and a target that cannot be reached in one line."""
from __future__ import annotations

import socket
import sys

import pytest
from PySide6.QtCore import QSettings, Qt

from app.window.ab_dialog import AbDialog
from app.window.main_window import MainWindow
from workloads.datasets.schema import Scale
from workloads.results.evidence import SLOWER
from workloads.results.store import ResultsStore
from workloads.scenario import Scenario

SESSION_MS = 45_000


def held(duration_s: float = 0.3) -> Scenario:
    return Scenario(name="held", workload="noop", users=(1,), operations=0, duration_s=duration_s, probe_ops=0,
                    warmup_ops=0, params={"hold_s": 0.010})


@pytest.fixture
def window(qtbot, tmp_path, light_theme):
    store = ResultsStore(tmp_path / "results")
    window = MainWindow(store, tmp_path / "data", QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat))
    qtbot.addWidget(window)
    window.resize(1280, 800)
    window.show()
    qtbot.waitExposed(window)
    yield window
    window.close()
    store.close()


def _open(window, scenario: Scenario) -> AbDialog:
    window.builder.set_scenario(scenario)
    window.findChild(type(window.scenario.run_action), "compare_by_running").trigger()
    dialog = window.comparing.dialog
    assert dialog is not None and dialog.isVisible()
    return dialog


def test_compare_by_running_a_changed_parameter_shows_the_verdict_from_the_child(qtbot, window):
    dialog = _open(window, held())
    dialog.choose_param("hold_s", "0.013")          # B: every operation 3 ms longer, p50 ×1.3
    dialog.pairs_spin.setValue(6)
    progress = []
    dialog.job.progressed.connect(progress.append)
    with qtbot.waitSignal(dialog.session_finished, timeout=SESSION_MS) as done:
        dialog.start_button.click()
        assert not dialog.start_button.isEnabled() and dialog.stop_button.isEnabled()
    outcome = done.args[0]
    assert outcome.data is not None, outcome.line
    assert any(line.startswith("6/6") for line in progress)      # the child's stderr, line by line
    assert not dialog.view.progress_label.text().startswith("6/6")    # said in words, then the answer
    shown = {(step, figure): verdict for step, figure, verdict in dialog.view.verdicts()}
    assert shown[("1 user", "p50")] == SLOWER
    ratio = next(v["ratio"] for v in outcome.data["verdicts"] if v["figure"] == "p50")
    assert 1.2 < ratio < 1.4
    assert "could see changes of ±" in dialog.view.could_see_label.text()
    assert dialog.view.pairs_label.text().startswith("kept 6 of 6 pairs")
    assert dialog.view.stop_label.text() == outcome.data["stop"]
    assert "params.hold_s 0.01 → 0.013" in dialog.view.sides_label.text()
    assert dialog.start_button.isEnabled() and not dialog.stop_button.isEnabled()


def test_stop_ends_the_child_with_sigint_and_shows_the_kept_pairs(qtbot, window):
    dialog = _open(window, held(duration_s=0.4))
    dialog.pairs_spin.setValue(6)
    started = []
    dialog.job.progressed.connect(started.append)
    dialog.start_button.click()
    qtbot.waitUntil(lambda: any(line.startswith("1/6: pair 2: ") and "(" in line for line in started),
                    timeout=SESSION_MS)             # pair 2 under way: pair 1 is kept
    with qtbot.waitSignal(dialog.session_finished, timeout=SESSION_MS) as done:
        dialog.stop_button.click()
    outcome = done.args[0]
    assert outcome.exit_code == 130 and outcome.data is not None, outcome.line
    assert outcome.data["status"] == "cancelled" and outcome.data["kept_pairs"] == 1
    assert dialog.view.progress_label.text().startswith("stopped: 2 pairs run")
    assert dialog.view.pairs_label.text().startswith("kept 1 of 2 pairs")
    assert "what was measured is kept" in dialog.view.stop_label.text()
    kept = outcome.data["pairs"][0]
    assert {kept["a"], kept["b"]} <= set(window.store.run_ids())      # the runs are in the catalog


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_an_unreachable_target_is_one_line_and_the_form_stays(qtbot, window):
    key = window.targets_panel.add_profile({"kind": "clickhouse", "profile": {
        "name": "nowhere", "host": "127.0.0.1", "port": _closed_port()}}, password="x")
    scenario = Scenario(name="read", workload="read-day", users=(1,), operations=2,
                        scale=Scale(days=1, rows_per_day=2_000, symbols=5))
    window.builder.set_scenario(scenario)
    # the Targets dock's context menu on that row: "Compare by running with…", A on it
    (entry,) = window.targets_panel.target_menu(key).actions()
    assert entry.text() == "Compare by running with…"
    entry.trigger()
    dialog = window.comparing.dialog
    assert dialog is not None and dialog.isVisible()
    assert dialog.a_target.currentData() == key and dialog.b_target.currentData() != key
    dialog.b_target.setCurrentIndex(dialog.b_target.findData("duckdb"))
    with qtbot.waitSignal(dialog.session_finished, timeout=SESSION_MS) as done:
        dialog.start_button.click()
    outcome = done.args[0]
    shown = dialog.view.progress_label.text()
    assert dialog.view.progress_label.property("role") == "error"
    assert shown and "\n" not in shown and "Traceback" not in shown
    assert "127.0.0.1" in shown or "connect" in shown.lower() or "refused" in shown.lower(), shown
    assert dialog.view.table.rowCount() == 0
    assert dialog.a_target.currentData() == key and dialog.start_button.isEnabled()     # nothing lost


def test_a_crashed_child_is_one_line(qtbot, tmp_path, light_theme, monkeypatch):
    from app.window import ab_job
    monkeypatch.setattr(ab_job, "ab_command", lambda *a, **k: [
        sys.executable, "-c", "import sys; sys.stderr.write('Traceback\\nRuntimeError: <b>boom</b>\\n'); sys.exit(1)"])
    dialog = AbDialog(tmp_path / "results")
    qtbot.addWidget(dialog)
    dialog.set_sides(held(), [("duckdb", "DuckDB", "duckdb", {}), ("parquet", "Parquet", "parquet", {})])
    dialog.show()
    with qtbot.waitSignal(dialog.session_finished, timeout=SESSION_MS):
        dialog.start_button.click()
    line = dialog.view.progress_label.text()
    assert line == "the comparison ended without an answer (exit 1): RuntimeError: <b>boom</b>"
    assert dialog.view.progress_label.property("role") == "error"
    assert dialog.view.progress_label.textFormat() == Qt.TextFormat.PlainText     # markup shown, never obeyed
