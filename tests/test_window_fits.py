"""The real main window fits a laptop's screen (1280x800, 1366x768) without clipping anything.

Each tab is visited and every visible label, combo box, button and field is checked: a label whose
text does not fit (a single line wider than the label, a wrapped text taller than it, a word wider
than it), or a control cut by a parent that offers no scroll bar to reach the rest, fails the test.
The windows are saved as PNGs (``tmp_path``) for a person to look at.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from PySide6.QtCore import QPoint, QRect, QSettings
from PySide6.QtGui import QScreen
from PySide6.QtTest import QTest
from PySide6.QtWidgets import (QAbstractButton, QAbstractScrollArea, QAbstractSpinBox, QComboBox, QDockWidget,
                               QLabel, QLineEdit, QTabBar, QTreeWidget, QWidget)

from app.window.main_window import MainWindow
from workloads.datasets.schema import Scale
from workloads.results.store import ResultsStore
from workloads.run.runner import Runner
from workloads.scenario import Scenario

ROOT = Path(__file__).resolve().parent.parent
SCREENS = [(1280, 800), (1366, 768)]
MIN_TARGET_ROWS = 7           # the targets list: a local engine or two beside the embedded ones
CONTROLS = (QComboBox, QAbstractButton, QAbstractSpinBox, QLineEdit)


def _window_rect(widget: QWidget, window: QWidget) -> QRect:
    return QRect(widget.mapTo(window, QPoint(0, 0)), QWidget.size(widget))    # not a subclass's own size


def _scroll_area_of_viewport(widget: QWidget) -> QAbstractScrollArea | None:
    parent = widget.parentWidget()
    if isinstance(parent, QAbstractScrollArea) and parent.viewport() is widget:
        return parent
    return None


def clipped(widget: QWidget, window: QWidget) -> str | None:
    """Why ``widget`` is cut by one of its parents (none offering a scroll bar to reach the cut
    part), or None."""
    rect = _window_rect(widget, window)
    parent = widget.parentWidget()
    while parent is not None and parent is not window.parentWidget():
        area = _window_rect(parent, window)
        if not area.contains(rect):
            cut = []
            if rect.right() > area.right():
                cut.append(f"right by {rect.right() - area.right()} px")
            if rect.left() < area.left():
                cut.append(f"left by {area.left() - rect.left()} px")
            if rect.bottom() > area.bottom():
                cut.append(f"bottom by {rect.bottom() - area.bottom()} px")
            if rect.top() < area.top():
                cut.append(f"top by {area.top() - rect.top()} px")
            scroll = _scroll_area_of_viewport(parent)
            if scroll is not None:        # a scroll bar reaches what the viewport does not show
                across = rect.right() > area.right() or rect.left() < area.left()
                down = rect.bottom() > area.bottom() or rect.top() < area.top()
                bar_h = scroll.horizontalScrollBar()
                bar_v = scroll.verticalScrollBar()
                reachable = ((not across or (bar_h.isVisible() and bar_h.maximum() > 0))
                             and (not down or (bar_v.isVisible() and bar_v.maximum() > 0)))
                if reachable:     # as if scrolled to it: what is cut the other way still counts
                    if across:
                        rect = QRect(area.left(), rect.top(), area.width(), rect.height())
                    if down:
                        rect = QRect(rect.left(), area.top(), rect.width(), area.height())
                    parent = parent.parentWidget()
                    continue
            return f"cut at the {', '.join(cut)} by {_name(parent)}"
        parent = parent.parentWidget()
    return None


def _name(widget: QWidget) -> str:
    return f"{type(widget).__name__}#{widget.objectName() or '?'}"


def label_cut(label: QLabel) -> str | None:
    """Why a label's text does not fit it, or None."""
    if not label.text().strip() or label.pixmap() is not None and not label.pixmap().isNull():
        return None
    width, height = label.width(), label.height()
    if not label.wordWrap():
        needed = label.minimumSizeHint().width()
        if needed > width + 1:
            return f"needs {needed} px wide, has {width}"
        return None
    longest = label.minimumSizeHint().width()
    if longest > width + 1:
        return f"a word needs {longest} px wide, has {width}"
    needed = label.heightForWidth(width)
    if needed > height + 1:
        return f"its lines need {needed} px high, has {height}"
    return None


def chart_title_cut(widget: QWidget) -> str | None:
    """A chart's title drawn beyond its view's edges (pyqtgraph clips it there), or None."""
    plot, view = getattr(widget, "plot_item", None), getattr(widget, "graphics", None)
    if plot is None or view is None or not isinstance(view, QWidget):
        return None
    title = plot.titleLabel
    if not title.isVisible() or not title.text:
        return None
    drawn = title.item.mapRectToScene(title.item.boundingRect())
    shown = view.mapToScene(view.viewport().rect()).boundingRect()
    if drawn.left() < shown.left() - 1 or drawn.right() > shown.right() + 1:
        return f"its title {title.text!r} is {drawn.width():.0f} px wide, cut by its {view.width()} px view"
    return None


def problems(window: QWidget, where: str) -> list[str]:
    found = []
    for widget in window.findChildren(QWidget):
        if not widget.isVisible() or widget.window() is not window or _behind_a_dock_tab(widget, window):
            continue
        if any(isinstance(p, QTabBar) for p in _ancestors(widget)) or isinstance(widget.parentWidget(), QTabBar):
            continue       # a tab bar's own scroll buttons
        text = ""
        if isinstance(widget, QLabel):
            text = widget.text()[:70]
            why = label_cut(widget)
            if why:
                found.append(f"{where}: label {_name(widget)} {text!r}: {why}")
        elif not isinstance(widget, CONTROLS):
            continue
        if isinstance(widget, QAbstractButton):
            text = widget.text()
        why = clipped(widget, window) or drawn_over(widget)
        if why:
            found.append(f"{where}: {_name(widget)} {text!r}: {why}")
    return found


def _laid_out(layout) -> list[QWidget]:
    """The widgets a layout (and the layouts in it) places."""
    widgets = []
    for index in range(layout.count() if layout is not None else 0):
        item = layout.itemAt(index)
        if item.widget() is not None:
            widgets.append(item.widget())
        elif item.layout() is not None:
            widgets += _laid_out(item.layout())
    return widgets


def drawn_over(widget: QWidget) -> str | None:
    """A widget its parent's layout placed over another one it placed (squeezed below its
    minimum, a layout overlaps them), or None."""
    parent = widget.parentWidget()
    placed = _laid_out(parent.layout()) if parent is not None else []
    if widget not in placed:
        return None
    for other in placed:
        if other is not widget and other.isVisible() and QWidget.geometry(other).intersects(QWidget.geometry(widget)):
            return f"drawn over {_name(other)}"
    return None


def _behind_a_dock_tab(widget: QWidget, window: QWidget) -> bool:
    """A dock tabbed behind another is moved out of the window, not hidden."""
    docks = [p for p in _ancestors(widget) if isinstance(p, QDockWidget)]
    return any(not dock.geometry().intersects(window.rect()) for dock in docks)


def _ancestors(widget: QWidget):
    parent = widget.parentWidget()
    while parent is not None:
        yield parent
        parent = parent.parentWidget()


def _settle(qtbot, ms: int = 150) -> None:
    qtbot.wait(ms)


def rows_shown(tree: QTreeWidget) -> float:
    return tree.viewport().height() / max(tree.sizeHintForRow(0), 1)


@pytest.fixture(scope="module")
def stored_runs(tmp_path_factory):
    """A results store with one real run (worker processes, a pickle dataset), so the Run tab's
    header and results show a run's lines as a person would see them after a run: a step too short
    to measure adds a third line under the figures."""
    folder = tmp_path_factory.mktemp("fits")
    store = ResultsStore(folder / "results")
    scenario = Scenario(name="pickle read-day sweep", dataset="taq", scale=Scale(days=2, rows_per_day=20_000, symbols=30),
                        target="pickle", target_config={"root": str(folder / "data")}, workload="read-day",
                        users=(1, 2), operations=3, strings="object")
    result = Runner(scenario, store).run()
    assert result.status == "completed", result.message
    store.close()
    return folder


def _visit(qtbot, window: MainWindow, shots: Path, size: str) -> list[str]:
    """Every main tab (and the Run tab's own tabs) with each of the tabbed docks in front."""
    found = []
    for dock_name in ("targets_dock", "load_generators_dock"):
        dock = window.findChild(QDockWidget, dock_name)
        dock.raise_()
        for index in range(window.tabs.count()):
            window.tabs.setCurrentIndex(index)
            page = window.tabs.widget(index)
            inner = [None]
            if page is window.dashboard and dock_name == "targets_dock":
                inner = [i for i in range(window.dashboard.tabs.count()) if window.dashboard.tabs.isTabVisible(i)]
            for sub in inner:
                name = window.tabs.tabText(index)
                if sub is not None:
                    window.dashboard.tabs.setCurrentIndex(sub)
                    name += f" / {window.dashboard.tabs.tabText(sub)}"
                _settle(qtbot)
                found += problems(window, f"{size} {name} tab, {dock.windowTitle()} in front")
                window.grab().save(str(shots / f"{size}_{name.replace(' / ', '_').replace(' ', '-')}_{dock_name}.png"))
    return list(dict.fromkeys(found))


@pytest.mark.parametrize("screen", SCREENS, ids=lambda s: f"{s[0]}x{s[1]}")
def test_every_tab_fits_a_laptop_screen_without_clipping(qtbot, tmp_path, light_theme, stored_runs, screen,
                                                         monkeypatch):
    """The window as it opens on a laptop's screen, then maximized to all of it."""
    available = QRect(0, 0, *screen)
    monkeypatch.setattr(QScreen, "availableGeometry", lambda _screen: QRect(available))
    store = ResultsStore(stored_runs / "results")
    settings = QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat)
    window = MainWindow(store, stored_runs / "data", settings)
    qtbot.addWidget(window)
    found = []
    try:
        window.show()
        qtbot.waitExposed(window)
        qtbot.waitUntil(lambda: bool(window.history.visible_run_ids()), timeout=10_000)
        opened = window.frameGeometry()
        assert available.contains(opened), f"opened at {opened.getRect()}, outside the screen's {screen}"
        assert opened.width() >= 0.9 * screen[0] and opened.height() >= 0.9 * screen[1]   # most of it
        for size in (window.size().toTuple(), screen):       # as it opens, then maximized
            window.resize(*size)
            _settle(qtbot, 600)
            assert window.size().toTuple() == size
            label = f"{size[0]}x{size[1]}"
            found += _visit(qtbot, window, tmp_path, label)
            window.findChild(QDockWidget, "targets_dock").raise_()
            _settle(qtbot)
            shown = rows_shown(window.targets_panel.tree)
            if shown < MIN_TARGET_ROWS:
                found.append(f"{label}: the targets list shows {shown:.1f} rows, fewer than {MIN_TARGET_ROWS}")
        print(f"PNGs in {tmp_path}")
        assert not found, "\n".join(found)
    finally:
        window.close()
        store.close()


OPEN_SCRIPT = """
import json, sys
from PySide6.QtCore import QSettings
from PySide6.QtWidgets import QApplication
app = QApplication([])
from pathlib import Path
from app.window.main_window import MainWindow
from workloads.results.store import ResultsStore
home = Path(sys.argv[1])
settings = QSettings(str(home / "settings.ini"), QSettings.Format.IniFormat)
if len(sys.argv) > 2:                   # a layout saved on a larger screen
    settings.setValue("window/geometry", bytes.fromhex(sys.argv[2]))
store = ResultsStore(home / "results")
window = MainWindow(store, home / "data", settings)
window.show()
app.processEvents()
frame, area = window.frameGeometry(), window.screen().availableGeometry()
print(json.dumps({"frame": frame.getRect(), "area": area.getRect(),
                  "geometry": window.saveGeometry().toHex().data().decode()}))
window.close()
store.close()
"""


def _open(tmp_path: Path, screen: tuple[int, int], saved: str = "") -> tuple[tuple, tuple, str]:
    config = tmp_path / f"screen_{screen[0]}x{screen[1]}.json"
    config.write_text(json.dumps({"screens": [{"name": "laptop", "x": 0, "y": 0, "width": screen[0],
                                               "height": screen[1], "logicalDpi": 96, "logicalBaseDpi": 96,
                                               "dpr": 1}]}))
    home = tmp_path / f"home_{screen[0]}x{screen[1]}_{bool(saved)}"
    home.mkdir()
    env = {**os.environ, "QT_QPA_PLATFORM": f"offscreen:configfile={config}", "TICKBENCH_HOME": str(home)}
    done = subprocess.run([sys.executable, "-c", OPEN_SCRIPT, str(home), *([saved] if saved else [])],
                          capture_output=True, text=True, env=env, cwd=ROOT, timeout=120)
    assert done.returncode == 0, done.stderr
    opened = json.loads(done.stdout.strip().splitlines()[-1])
    return tuple(opened["frame"]), tuple(opened["area"]), opened["geometry"]


def test_the_window_opens_within_the_screens_free_area_and_a_larger_screens_layout_is_brought_in(tmp_path):
    """On a real (offscreen) screen of each size: the first start, and a start whose saved layout
    came from a 2560x1440 screen."""
    big_frame, _area, big_geometry = _open(tmp_path, (2560, 1440))
    assert big_frame[2] > 1400 and big_frame[3] > 900              # the saved layout is larger than a laptop
    for screen in SCREENS:
        for saved in ("", big_geometry):
            frame, area, _geometry = _open(tmp_path, screen, saved)
            assert area == (0, 0, *screen)
            x, y, width, height = frame
            assert x >= 0 and y >= 0 and x + width <= screen[0] and y + height <= screen[1], \
                f"opened at {frame} on a {screen} screen ({'saved' if saved else 'first start'})"


def test_the_live_charts_titles_fit_the_run_tab_at_1280x800(make_widget):
    from widgets.run.dashboard import LiveDashboard

    dashboard = make_widget(LiveDashboard, size=(790, 680))     # the Run tab's room at 1280x800
    dashboard._set_per_operation(True)                           # a short run: the longest titles
    dashboard.tabs.setCurrentWidget(dashboard.live_page)
    QTest.qWait(300)
    cut = [f"{name}: {why}" for name, chart in dashboard.charts().items()
           if chart.isVisible() and (why := chart_title_cut(chart))]
    assert not cut, "\n".join(cut)


def test_the_import_dialogs_columns_line_is_never_drawn_over_its_table(make_widget, tmp_path):
    """Made shorter than its lines need (a small screen, a window manager), the built-in schema
    import dialog keeps the height they need: "10 of 10 columns found" stays in its own row."""
    from app.imports.builtin_dialog import BuiltinImportDialog
    from workloads.datasets import get_dataset
    from workloads.datasets.csvwrite import write_csv

    taq = get_dataset("taq")
    csv = tmp_path / "quotes.csv"
    write_csv(taq.generate_day(0, Scale(days=1, rows_per_day=500, symbols=5)), csv, taq.info.schema)
    dialog = make_widget(BuiltinImportDialog, path=csv, size=(720, 680))
    assert dialog.columns_hint.text().startswith("10 of 10 columns found")
    for height in (680, 520, 450):
        dialog.resize(720, height)
        QTest.qWait(100)
        found = problems(dialog, f"720x{height}")
        dialog.grab().save(str(tmp_path / f"import_builtin_720x{height}.png"))
        assert not found, "\n".join(found)
