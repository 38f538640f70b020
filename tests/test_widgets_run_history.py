"""RunHistoryView: rows in, filtering, sorting by value, selection and the three request signals."""
import pytest
from PySide6.QtCore import Qt

from widgets.common.plain_text import tooltip_words
from widgets.history.run_history import COLUMNS, RunHistoryView

ROWS = [
    {"run_id": "r1", "started_at": "2025-01-01 10:00", "workload": "read_day", "dataset": "taq",
     "target": "duckdb", "users": 1, "status": "completed", "rows_per_s": 9_000_000.0,
     "mb_per_s": 405.0, "p50_ms": 12.0, "p99_ms": 40.0},
    {"run_id": "r2", "started_at": "2025-01-02 10:00", "scenario": "read_day", "dataset": "taq",
     "target": "pickle", "users": 4, "status": "failed", "rows_per_s": 200_000.0,
     "mb_per_s": 9.0, "p50_ms": 100.0, "p99_ms": 300.0, "message": "disk full"},
    {"run_id": "r3", "started_at": "2025-01-03 10:00", "workload": "sweep", "dataset": "l2",
     "target": "dolphindb", "users": [1, 2, 4], "status": "completed", "rows_per_s": 30_000_000.0,
     "mb_per_s": 1350.0, "p50_ms": 5.0, "p99_ms": 20.0},
]


@pytest.fixture
def view(make_widget):
    v = make_widget(RunHistoryView, size=(1000, 400))
    v.set_rows(ROWS)
    return v


def test_newest_first_and_readable_numbers(view):
    assert view.visible_run_ids() == ["r3", "r2", "r1"]
    col = [k for k, _ in COLUMNS].index("rows_per_s")
    assert view.proxy.index(0, col).data() == "30 M"
    assert view.proxy.index(1, [k for k, _ in COLUMNS].index("workload")).data() == "read_day"
    assert view.proxy.index(0, [k for k, _ in COLUMNS].index("users")).data() == "1, 2, 4"
    assert view.count_label.text() == "3 runs"


def test_numbers_sort_by_value_not_text(view):
    col = [k for k, _ in COLUMNS].index("rows_per_s")
    view.table.sortByColumn(col, Qt.SortOrder.AscendingOrder)
    assert view.visible_run_ids() == ["r2", "r1", "r3"]      # 200 k < 9 M < 30 M


def test_filter_matches_words_in_any_column(view, qtbot):
    view.set_filter_text("completed duckdb")
    assert view.visible_run_ids() == ["r1"]
    view.set_filter_text("TAQ")
    assert set(view.visible_run_ids()) == {"r1", "r2"}
    assert view.count_label.text() == "2 of 3 runs"
    view.set_filter_text("")
    assert len(view.visible_run_ids()) == 3


def test_buttons_follow_the_selection(view):
    assert not view.open_button.isEnabled() and not view.delete_button.isEnabled()
    view.select_run_ids(["r1"])
    assert view.open_button.isEnabled() and not view.compare_button.isEnabled()
    view.select_run_ids(["r1", "r3"])
    assert not view.open_button.isEnabled() and view.compare_button.isEnabled()
    assert view.delete_button.isEnabled()


def test_open_compare_delete_emit_run_ids(view, qtbot):
    view.select_run_ids(["r2"])
    with qtbot.waitSignal(view.open_requested, timeout=1000) as blocker:
        qtbot.mouseClick(view.open_button, Qt.MouseButton.LeftButton)
    assert blocker.args == ["r2"]
    view.select_run_ids(["r1", "r3"])
    with qtbot.waitSignal(view.compare_requested, timeout=1000) as blocker:
        qtbot.mouseClick(view.compare_button, Qt.MouseButton.LeftButton)
    assert sorted(blocker.args[0]) == ["r1", "r3"]
    with qtbot.waitSignal(view.delete_requested, timeout=1000) as blocker:
        qtbot.mouseClick(view.delete_button, Qt.MouseButton.LeftButton)
    assert sorted(blocker.args[0]) == ["r1", "r3"]


def test_multi_selection_with_ctrl_click(view, qtbot):
    table = view.table
    rect0 = table.visualRect(view.proxy.index(0, 0))
    rect2 = table.visualRect(view.proxy.index(2, 0))
    qtbot.mouseClick(table.viewport(), Qt.MouseButton.LeftButton, pos=rect0.center())
    with qtbot.waitSignal(view.selection_changed, timeout=1000) as blocker:
        qtbot.mouseClick(table.viewport(), Qt.MouseButton.LeftButton,
                         Qt.KeyboardModifier.ControlModifier, rect2.center())
    assert blocker.args == [["r3", "r1"]]


def test_double_click_opens(view, qtbot):
    rect = view.table.visualRect(view.proxy.index(1, 2))
    qtbot.mouseClick(view.table.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    with qtbot.waitSignal(view.open_requested, timeout=1000) as blocker:
        qtbot.mouseDClick(view.table.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    # Qt's double click ends on the second press: release the button as a hand would
    qtbot.mouseRelease(view.table.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    assert blocker.args == ["r2"]


def test_refresh_keeps_the_selection_of_remaining_runs(view):
    view.select_run_ids(["r1", "r2"])
    view.set_rows([r for r in ROWS if r["run_id"] != "r2"])
    assert view.selected_run_ids() == ["r1"]


def test_failed_status_is_highlighted_with_its_message(view):
    col = [k for k, _ in COLUMNS].index("status")
    index = view.proxy.index(1, col)
    assert index.data() == "failed"
    assert index.data(Qt.ItemDataRole.ForegroundRole) is not None
    assert tooltip_words(index.data(Qt.ItemDataRole.ToolTipRole)) == "disk full"


def test_rows_without_run_id_are_refused(view):
    with pytest.raises(ValueError, match="history row 0 has no run_id"):
        view.set_rows([{"target": "x"}])


def test_state_round_trip(make_widget, view):
    view.table.horizontalHeader().resizeSection(0, 222)
    view.table.sortByColumn(4, Qt.SortOrder.AscendingOrder)
    view.set_filter_text("taq")
    state = view.save_state()
    other = make_widget(RunHistoryView)
    other.restore_state(state)
    other.set_rows(ROWS)                      # a later fill must not undo restored widths
    assert other.table.horizontalHeader().sectionSize(0) == 222
    assert other.filter_edit.text() == "taq"
    assert other.visible_run_ids() == ["r1", "r2"]        # sorted by target: duckdb, pickle


def test_long_run_names_leave_the_figures_in_view_at_a_laptops_width(make_widget):
    """A report card's run name is ~80 characters: it is elided (whole in its tooltip) so that
    Users, Status, Rows/s and p50 stay on screen without scrolling in a 1280x800 window."""
    long = {**ROWS[0], "run_id": "r9", "name": "Report 000 · pickle vs API vs server, a TAQ day · "
            "pickle, cold cache · tiny", "headline_label": "1 user"}
    view = make_widget(RunHistoryView, size=(900, 400))
    view.set_rows([long, *ROWS[1:]])
    header = view.table.horizontalHeader()
    keys = [k for k, _ in COLUMNS]
    right = max(header.sectionPosition(keys.index(k)) + header.sectionSize(keys.index(k))
                for k in ("users", "status", "rows_per_s", "p50_ms"))
    assert right <= view.table.viewport().width(), (right, view.table.viewport().width())
    name = view.proxy.index(view.visible_run_ids().index("r9"), keys.index("name"))
    assert header.sectionSize(keys.index("name")) < view.table.sizeHintForColumn(keys.index("name"))
    assert long["name"] in tooltip_words(name.data(Qt.ItemDataRole.ToolTipRole))
