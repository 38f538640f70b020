"""A run's strings reach the window as text (issue 55): a name, target, dataset, host or message
holding HTML (an image 20,000 px wide, a link) is shown as written in every label, tooltip, table
cell and legend, never rendered. The test walks every widget of the window after History, the run
view and Compare have shown two such runs."""
from __future__ import annotations

import json

from PySide6.QtCore import Qt
from PySide6.QtGui import Qt as GuiQt
from PySide6.QtWidgets import QAbstractItemView, QGraphicsTextItem, QGraphicsView, QLabel, QWidget

from tests.test_main_window import window_factory  # noqa: F401  (the fixture)
from workloads.results.store import ResultsStore
from workloads.run.runner import Runner
from workloads.scenario import Scenario

MARK = "<img src=x width=20000 height=20000><a href='file:/etc'>zz</a><b>bold</b>"


def _hostile_runs(folder) -> list[str]:
    store = ResultsStore(folder / "results")
    ids = [Runner(Scenario(name=f"n{i} {MARK}", workload="noop", users=(1, 2), operations=5), store).run().run_id
           for i in range(2)]
    store.close()
    for run_file in (folder / "results" / "runs").glob("*/run.json"):
        run = json.loads(run_file.read_text())
        for field in ("target", "dataset", "message", "host"):     # as a run from another machine may say
            run[field] = f"{field[0]} {MARK}"
        run_file.write_text(json.dumps(run))
    (folder / "results" / "catalog.json").unlink(missing_ok=True)
    return ids


def _rendered(text: str, rich: bool) -> bool:
    """Whether the hostile mark would be drawn as markup in this text."""
    return rich and "<img" in text


def _texts(widget: QWidget):
    """(where, text, drawn as rich text) of a widget: its tooltip, a label's text, an item view's
    cells and their tooltips."""
    tip = widget.toolTip()
    if tip:
        yield f"{type(widget).__name__} tooltip", tip, GuiQt.mightBeRichText(tip)
    if isinstance(widget, QLabel):
        rich = widget.textFormat() == Qt.TextFormat.RichText or (
            widget.textFormat() == Qt.TextFormat.AutoText and GuiQt.mightBeRichText(widget.text()))
        yield f"label {widget.objectName()}", widget.text(), rich
    if isinstance(widget, QGraphicsView) and widget.scene() is not None:     # charts: legends, titles
        for item in widget.scene().items():
            if item.toolTip():
                yield "chart item tooltip", item.toolTip(), GuiQt.mightBeRichText(item.toolTip())
            if isinstance(item, QGraphicsTextItem):                         # pyqtgraph's labels draw HTML
                yield "chart text", item.toHtml() if "&lt;img" not in item.toHtml() else "&lt;img", \
                    "<img" in item.toHtml()
    if isinstance(widget, QAbstractItemView) and widget.model() is not None:
        model = widget.model()
        for row in range(model.rowCount()):
            for column in range(model.columnCount()):
                index = model.index(row, column)
                tip = model.data(index, Qt.ItemDataRole.ToolTipRole)
                if isinstance(tip, str) and tip:
                    yield f"{type(widget).__name__} cell tooltip", tip, GuiQt.mightBeRichText(tip)


def test_no_widget_of_the_window_renders_a_runs_html(qtbot, tmp_path, window_factory):
    ids = _hostile_runs(tmp_path)
    window = window_factory()                 # on tmp_path's results, as made above
    qtbot.waitUntil(lambda: set(ids) <= set(window.history.visible_run_ids()), timeout=15_000)
    window.stored.open_run(ids[0])
    qtbot.waitUntil(lambda: window.dashboard.snapshot is not None and window.dashboard.snapshot.run_id == ids[0],
                    timeout=15_000)
    window.stored.compare_runs(ids)
    qtbot.wait(1500)                          # the comparison is read off the GUI thread
    seen, rendered, places = 0, [], set()
    for widget in [window, *window.findChildren(QWidget)]:
        for where, text, rich in _texts(widget):
            if "<img" in text or "&lt;img" in text:
                seen += 1
                places.add(where)
                if _rendered(text, rich):
                    rendered.append(f"{where}: {text[:120]!r}")
    # the walk found the runs' strings: History's cells, the run view's message, Compare's table
    assert {"QTableView cell tooltip", "QTableWidget cell tooltip", "label ", "chart text"} <= places, places
    assert rendered == [], "\n".join(rendered)
    assert window.width() <= 1280 and window.height() <= 800


def test_every_legend_draws_a_key_as_the_text_it_is(qtbot):
    """The floating legends (time series, an exported chart's) as well as the row under a bar chart."""
    import pyqtgraph as pg
    from widgets.charts.items import PlainLegend, RowLegend
    for legend in (PlainLegend(offset=(8, 8)), RowLegend()):
        legend.addItem(pg.PlotDataItem([1, 2], [1, 2]), MARK)
        label = legend.items[0][1]
        assert label.item.toPlainText() == MARK and label.full_text == MARK


def test_history_deletes_a_damaged_run_off_the_gui_thread(qtbot, tmp_path, window_factory, monkeypatch):
    from PySide6.QtWidgets import QMessageBox
    ids = _hostile_runs(tmp_path)
    steps = tmp_path / "results" / "runs" / ids[0] / "steps.json"
    rows = json.loads(steps.read_text())
    rows[0]["facts"] = "[1, 2]"                           # a list where a record belongs: a damaged run
    steps.write_text(json.dumps(rows))
    window = window_factory()
    qtbot.waitUntil(lambda: set(ids) <= set(window.history.visible_run_ids()), timeout=15_000)
    monkeypatch.setattr(QMessageBox, "question", lambda *a, **k: QMessageBox.StandardButton.Yes)
    window.stored.delete_runs([ids[0]])
    qtbot.waitUntil(lambda: ids[0] not in window.history.visible_run_ids(), timeout=15_000)
    assert not (tmp_path / "results" / "runs" / ids[0]).exists()
    assert ids[1] in window.history.visible_run_ids()
