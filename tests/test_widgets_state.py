"""Widget state kept in QSettings (which the fixtures point at a temp dir)."""
from PySide6.QtCore import QSettings

from widgets.run.dashboard import LiveDashboard
from widgets.history.run_history import RunHistoryView
from widgets.common.state import load_state, store_state


def test_settings_live_in_the_test_temp_dir(isolated_qt_settings):
    assert QSettings().fileName().startswith(str(isolated_qt_settings))


def test_state_survives_a_round_trip_through_qsettings(make_widget):
    first = make_widget(LiveDashboard)
    first.tabs.setCurrentIndex(2)
    store_state("dashboard", first)
    second = make_widget(LiveDashboard)
    assert load_state("dashboard", second)
    assert second.tabs.currentIndex() == 2


def test_missing_or_corrupt_state_is_ignored(make_widget, caplog):
    view = make_widget(RunHistoryView)
    assert not load_state("nothing-here", view)
    QSettings().setValue("history", "{not json")
    assert not load_state("history", view)
    assert "unreadable saved state 'history'" in caplog.text
    QSettings().setValue("history", "[1, 2]")
    assert not load_state("history", view)
