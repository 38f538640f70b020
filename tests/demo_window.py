"""The real main window for the narrated demo's tests, its cards as short as a test can afford (a
fixture: ``from tests.demo_window import window``)."""
from __future__ import annotations

import pytest
from PySide6.QtCore import QSettings

import app.demo.presenter as presenting
from app.window.main_window import MainWindow
from tests.test_main_window import DictPasswords
from workloads.results.store import ResultsStore


@pytest.fixture
def window(qtbot, tmp_path, light_theme, monkeypatch):
    monkeypatch.setattr(presenting, "TITLE_S", 0.3)
    monkeypatch.setattr(presenting, "RESULT_S", 0.5)
    store = ResultsStore(tmp_path / "results")
    made = MainWindow(store, tmp_path / "data", QSettings(str(tmp_path / "s.ini"), QSettings.Format.IniFormat),
                      DictPasswords())
    # closed here, not by qtbot.addWidget: pytest-qt closes its widgets before this fixture stops the
    # runs, and a window closed during a run asks a question nobody answers in a failed test
    made.resize(1280, 800)
    made.show()
    qtbot.waitExposed(made)
    yield made
    if made.presenting.presenter is not None:
        made.presenting.presenter.stop()
    made.controller.shutdown()
    made.close()
    store.close()
    # gone, not only closed: a theme change (demo mode) restyles every widget still alive, and a
    # dozen closed windows made entering demo mode take ~10 s (light_theme deletes it next)
    made.deleteLater()
