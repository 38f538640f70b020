"""WorkerGrid: colours per state, error tooltips, reflow for 1..128 workers."""
import pytest
from PySide6.QtCore import QEvent, QPoint, Qt
from PySide6.QtGui import QColor, QHelpEvent
from PySide6.QtWidgets import QApplication, QToolTip

from widgets.common.theme import worker_state_colour
from widgets.run.worker_grid import WorkerGrid
from workloads.run.snapshot import WORKER_STATES

TRACEBACK = ("Traceback (most recent call last):\n  File \"w.py\", line 3, in run\n    go()\n"
             "OSError: [Errno 28] No space left on device: '/data/day.pkl'")


def test_cells_take_the_colour_of_their_state(make_widget):
    grid = make_widget(WorkerGrid, size=(300, 200))
    states = dict(enumerate(WORKER_STATES))
    grid.set_workers(states)
    for wid, state in states.items():
        assert grid.cell_colour(wid) == QColor(worker_state_colour(state))
    assert grid.counts() == dict.fromkeys(WORKER_STATES, 1)
    # the painted pixel at a cell's centre-left edge region is the state colour
    image = grid.grab().toImage()
    rect = grid.cell_rect(WORKER_STATES.index("done"))   # a plain cell, no glyph
    pixel = QColor(image.pixel(rect.left() + 3, rect.top() + 3))
    assert pixel == QColor(worker_state_colour("done"))


def test_failed_worker_tooltip_shows_the_error_line_not_the_traceback(make_widget):
    grid = make_widget(WorkerGrid, size=(300, 200))
    grid.set_workers({0: "running", 1: "failed"}, {1: TRACEBACK})
    text = grid.tooltip_for(1)
    assert text == "worker 1: failed\nOSError: [Errno 28] No space left on device: '/data/day.pkl'"
    assert grid.tooltip_for(0) == "worker 0: running"
    centre = grid.cell_rect(1).center()
    event = QHelpEvent(QEvent.Type.ToolTip, centre, grid.mapToGlobal(centre))
    QApplication.sendEvent(grid, event)
    assert QToolTip.text() == text


def test_click_on_a_cell_names_the_worker(make_widget, qtbot):
    grid = make_widget(WorkerGrid, size=(300, 200))
    grid.set_workers({7: "running", 9: "done"})
    with qtbot.waitSignal(grid.worker_clicked, timeout=1000) as blocker:
        qtbot.mouseClick(grid, Qt.MouseButton.LeftButton, pos=grid.cell_rect(9).center())
    assert blocker.args == [9]
    assert grid.worker_at(QPoint(-5, -5)) is None


@pytest.mark.parametrize("n", [1, 2, 7, 16, 33, 64, 128])
def test_reflow_keeps_every_cell_inside_and_apart(make_widget, n):
    grid = make_widget(WorkerGrid, size=(260, 420))
    grid.set_workers({i: "running" for i in range(n)})
    rects = [grid.cell_rect(i) for i in range(n)]
    for r in rects:
        assert grid.rect().contains(r), (n, r)
    for a, b in zip(rects, rects[1:]):
        assert not a.intersects(b)
    cols, rows, size = grid.grid_shape()
    assert cols * rows >= n and size >= 14
    if n == 1:
        assert size == 44          # one worker: a big cell, not a dot


def test_reflow_follows_the_width(make_widget):
    grid = make_widget(WorkerGrid, size=(600, 200))
    grid.set_workers({i: "ready" for i in range(24)})
    wide_cols = grid.grid_shape()[0]
    grid.resize(150, 600)
    assert grid.grid_shape()[0] < wide_cols
    assert grid.heightForWidth(150) > grid.heightForWidth(600)


def test_unknown_state_is_refused(make_widget):
    grid = make_widget(WorkerGrid, show=False)
    with pytest.raises(ValueError, match="worker 3: unknown state 'sleeping'"):
        grid.set_workers({3: "sleeping"})


def test_repeated_identical_states_do_not_repaint(make_widget, qtbot):
    grid = make_widget(WorkerGrid, size=(300, 200))
    grid.set_workers({0: "running"})
    qtbot.waitUntil(lambda: grid.paint_count >= 1, timeout=1000)
    grid.repaint()
    painted = grid.paint_count
    for _ in range(50):
        grid.set_workers({0: "running"})
    QApplication.processEvents()
    assert grid.paint_count == painted
