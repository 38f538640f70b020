"""The Present dialog: live on the configured targets, replayed on the engines the catalog recorded
(so a laptop replays a cluster's demo); and ``tickbench demo`` refusing a target it does not know."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from PySide6.QtWidgets import QDialogButtonBox

from widgets.reports.present_dialog import NONE_LABEL, PresentDialog

ROOT = Path(__file__).resolve().parents[1]
TARGETS = [("pickle", "pickle files", "pickle", {}), ("duckdb", "DuckDB (embedded)", "duckdb", None),
           ("ddb:office", "office cluster", "dolphindb", {"host": "127.0.0.1", "port": 9}),
           ("druid:local", "local Druid", "druid", {"host": "127.0.0.1", "port": 9})]


def _items(combo):
    return [(combo.itemText(i), combo.itemData(i)) for i in range(combo.count())]


def test_live_offers_the_targets_with_the_embedded_default_first_and_comparators_apart(qtbot):
    dialog = PresentDialog((5, 10, 20), TARGETS)
    qtbot.addWidget(dialog)
    assert [d for _t, d in _items(dialog.subject_combo)] == ["duckdb", "pickle", "ddb:office"]
    assert _items(dialog.comparator_combo) == [(NONE_LABEL, None), ("local Druid", "druid:local")]
    assert dialog.minutes == 10 and not dialog.replay and dialog.comparator() is None
    dialog.subject_combo.setCurrentIndex(2)
    dialog.comparator_combo.setCurrentIndex(1)
    assert dialog.subject() == TARGETS[2] and dialog.comparator() == TARGETS[3]


def test_replay_offers_only_what_was_recorded_and_waits_for_the_catalog(qtbot):
    dialog = PresentDialog((5, 10, 20), TARGETS)
    qtbot.addWidget(dialog)
    ok = dialog.buttons.button(QDialogButtonBox.StandardButton.Ok)
    dialog.replay_check.setChecked(True)
    assert not ok.isEnabled() and "Reading" in dialog.note.text()            # still being read
    dialog.set_recorded([])
    assert not ok.isEnabled() and "No demo has been recorded" in dialog.note.text()
    dialog.set_recorded([("duckdb", None), ("dolphindb", None), ("dolphindb", "druid")])
    assert ok.isEnabled()
    assert [d for _t, d in _items(dialog.subject_combo)] == ["duckdb", "dolphindb"]
    assert [d for _t, d in _items(dialog.comparator_combo)] == [None]         # duckdb never ran against one
    dialog.subject_combo.setCurrentIndex(1)
    assert [d for _t, d in _items(dialog.comparator_combo)] == [None, "druid"]
    dialog.comparator_combo.setCurrentIndex(1)
    # a cluster this laptop has no profile for: its kind alone is enough to find its runs
    assert dialog.subject() == ("dolphindb", "dolphindb", "dolphindb", None)
    assert dialog.comparator() == ("druid", "druid", "druid", None)


def test_the_demo_command_refuses_a_target_it_does_not_know_before_a_window_opens(tmp_path):
    env = {**os.environ, "TICKBENCH_HOME": str(tmp_path), "QT_QPA_PLATFORM": "offscreen"}
    done = subprocess.run([sys.executable, "-m", "app", "demo", "--target", "ddb:nowhere", "--results",
                           str(tmp_path / "results")], capture_output=True, text=True, timeout=120, env=env, cwd=ROOT)
    assert done.returncode == 2, done.stderr
    assert "no target 'ddb:nowhere' is configured here: give one of" in done.stderr and "duckdb" in done.stderr


def test_view_present_passes_the_dialogs_choices_to_the_demo(qtbot, tmp_path, monkeypatch):
    from PySide6.QtCore import QSettings
    from PySide6.QtGui import QAction

    from app.window.main_window import MainWindow
    from tests.test_main_window import DictPasswords
    from workloads.results.store import ResultsStore
    store = ResultsStore(tmp_path / "results")
    window = MainWindow(store, tmp_path / "data", QSettings(str(tmp_path / "s.ini"), QSettings.Format.IniFormat),
                        DictPasswords())
    try:
        key = window.targets_panel.add_profile(
            {"profile": {"name": "office", "nodes": [{"host": "127.0.0.1", "port": 9, "role": "single"}],
                         "user": "admin"}})

        def choose(dialog):
            dialog.length_combo.setCurrentIndex(dialog.length_combo.findData(5))
            dialog.subject_combo.setCurrentIndex(dialog.subject_combo.findData(key))
            return 1
        monkeypatch.setattr(PresentDialog, "exec", choose)
        asked = []
        monkeypatch.setattr(window.presenting, "present", lambda *args: asked.append(args))
        window.findChild(QAction, "present").trigger()
        (minutes, replay, engines), = asked
        assert (minutes, replay, engines.subject, engines.comparator) == (5, False, "dolphindb", None)
        assert engines.subject_config["target_key"] == key and "password" not in engines.subject_config
    finally:
        window.close()
        store.close()
