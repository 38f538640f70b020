"""The pyqtgraph items every chart is built of (``widgets.charts.base``): an axis with readable word
units and named ticks for bars, a legend row under the plot, a wrapped note that never holds the
chart wide, and `elide`, which shortens a label in the middle to fit.
"""
from __future__ import annotations

import html

import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtGui import QFont, QFontMetricsF

from widgets.common.plain_text import tooltip


def elide(text: str, font: QFont, max_px: float) -> str:
    """`text` shortened in the middle to at most `max_px` pixels ("Quick start…(r-2024)"): run
    labels differ at their ends (a run id, a step), so both ends stay."""
    metrics = QFontMetricsF(font)
    if metrics.horizontalAdvance(text) <= max_px:
        return text
    return metrics.elidedText(text, Qt.TextElideMode.ElideMiddle, max(max_px, 24.0))


def label_font(label: pg.LabelItem) -> QFont:
    """The font a LabelItem draws with (its size option is CSS, e.g. "9.0pt")."""
    font = QFont(label.item.font())
    size = str(label.opts.get("size") or "")
    if size.endswith("pt"):
        font.setPointSizeF(float(size[:-2]))
    return font


class UnitAxis(pg.AxisItem):
    """An axis whose label reads "Throughput (M rows/s)" rather than "(Mrows/s)".

    pyqtgraph glues the SI prefix to the unit; that is right for "MB/s" or "ms" but unreadable
    for word units such as "rows/s" or "ops/s".
    """

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        # Room for tick labels grows but never shrinks: shrinking after a clear() resized the axis
        # at its next paint, and that relayout repainted the chart once more.
        self.setStyle(autoReduceTextSpace=False)

    def labelString(self) -> str:
        units = self.labelUnits
        if units:
            prefix = self.labelUnitPrefix
            word_unit = len(units.split("/")[0]) > 1   # "rows/s", not "B/s" or "s"
            units = f"{prefix}{' ' if prefix and word_unit else ''}{units}"
            # with no text the unit alone is the label: "M rows/s", not "(M rows/s)"
            units = f" ({units})" if self.labelText else units
        elif self.autoSIPrefix and self.autoSIPrefixScale != 1.0:
            units = f" (x{1.0 / self.autoSIPrefixScale:g})"
        style = ";".join(f"{k}: {v}" for k, v in self.labelStyle.items())
        return f"<span style='{style}'>{self.labelText}{units}</span>"

    # ---- named ticks (the bars of a bar chart) ----------------------------------------------
    _categories: list[tuple[float, str]] = []
    _category_px = 0.0

    def set_categories(self, ticks: list[tuple[float, str]], max_px: float) -> None:
        """Named ticks, each shortened to `max_px` pixels (the full name shows on hover), so a
        long run name never pushes the plot out of its chart."""
        self._categories = [(float(v), str(t)) for v, t in ticks]
        self._category_px = max_px
        self.setStyle(autoReduceTextSpace=True)    # names fit the chart's width as it changes
        self.setAcceptHoverEvents(True)
        self._elide_categories()

    def set_category_width(self, max_px: float) -> None:
        if self._categories and abs(max_px - self._category_px) >= 1:
            self._category_px = max_px
            self._elide_categories()

    def categories(self) -> list[str]:
        """The full tick names (what is drawn may be shortened)."""
        return [t for _, t in self._categories]

    def _elide_categories(self) -> None:
        font = self.style.get("tickFont") or self.font()
        self.setTicks([[(v, elide(t, font, self._category_px)) for v, t in self._categories], []])

    def setTickFont(self, font) -> None:
        super().setTickFont(font)
        if self._categories:
            self._elide_categories()

    def category_at(self, pos) -> str | None:
        """The name of the tick nearest a point of the axis (item coordinates)."""
        view = self.linkedView()
        if not self._categories or view is None:
            return None
        point = view.mapSceneToView(self.mapToScene(pos))
        value = point.y() if self.orientation in ("left", "right") else point.x()
        nearest = min(self._categories, key=lambda tick: abs(tick[0] - value))
        return nearest[1] if abs(nearest[0] - value) <= 0.5 else None

    def hoverMoveEvent(self, event) -> None:
        name = self.category_at(event.pos())
        shown = dict(self._tickLevels[0]) if self._tickLevels else {}
        shortened = name is not None and name not in shown.values()
        self.setToolTip(tooltip(name) if shortened else "")


class PlainLegend(pg.LegendItem):
    """A legend whose keys are drawn as the text they are: pyqtgraph's labels draw HTML, and a
    run's name may hold some (``<img width=20000>``). ``full_text``: a key's text as given."""

    def addItem(self, item, name) -> None:
        super().addItem(item, html.escape(str(name)))
        self.items[-1][1].full_text = str(name)


class RowLegend(PlainLegend):
    """A legend placed in a layout row under the plot.

    pyqtgraph's LegendItem moves itself to (0, 0) whenever its entries change (it expects to float
    over the plot), which puts it over the title; this one keeps its place and asks the layout
    for the room it needs instead.
    """

    available_width = 0.0      # the chart's width: keys wrap into rows that fit it

    def full_texts(self) -> list[str]:
        """The keys' texts in full (what is drawn may be shortened)."""
        return [getattr(label, "full_text", label.text) for _, label in self.items]

    def _elide_labels(self) -> None:
        """A key longer than the chart is wide is shortened in the middle, in full on hover."""
        if not self.available_width:
            return
        for sample, label in self.items:
            if not hasattr(label, "full_text"):      # a key being added: its text in full, escaped
                label.full_text = html.unescape(label.text)
            full = label.full_text
            room = self.available_width - sample.boundingRect().width() - 24
            text = elide(full, label_font(label), room)
            shown = html.escape(text)
            if label.text != shown:
                label.setText(shown)
                label.setToolTip("" if text == full else tooltip(full))

    def updateSize(self) -> None:
        pos = self.pos()
        self._elide_labels()
        self._fit_columns()
        super().updateSize()
        self.setPos(pos)
        # LegendItem sums the heights its rows have now, without its grid's margins: a chart given
        # only that much room cut off the bottom of its last row of keys. The grid's own
        # preferred height counts the margins, and does not grow with the room it was given.
        self.layout.invalidate()
        height = self.layout.preferredHeight() if self.items else 0.0
        self.resize(self.width(), height)
        self.setMinimumHeight(height)
        self.setMinimumWidth(0)           # never hold the chart wider than its view
        self.setPreferredSize(min(self.width(), self.available_width or self.width()), height)
        self.updateGeometry()

    def _fit_columns(self) -> None:
        """As many keys per row as the width takes (long run names wrap instead of pushing the
        plot's right edge out of view)."""
        if not self.items or not self.available_width:
            return
        widest = max(sample.boundingRect().width() + label.boundingRect().width() + 24
                     for sample, label in self.items)
        columns = max(1, min(len(self.items), int(self.available_width // widest)))
        if columns != self.columnCount:
            self.columnCount = columns
            self._applyColumns()

    def _applyColumns(self) -> None:
        # LegendItem.setColumnCount's layout part, placing each key by its index (its own placement
        # reads the grid's column count, which a cleared grid keeps)
        for i in range(self.layout.count() - 1, -1, -1):
            self.layout.removeAt(i)
        for i, (sample, label) in enumerate(self.items):
            row, col = divmod(i, self.columnCount)
            self.layout.addItem(sample, row, col * 2, alignment=Qt.AlignmentFlag.AlignVCenter)
            self.layout.addItem(label, row, col * 2 + 1)
        self.rowCount = -(-len(self.items) // self.columnCount)

    def fit_width(self, width: float) -> None:
        self.available_width = max(0.0, width)
        self.updateSize()


class NoteItem(pg.LabelItem):
    """A wrapped line of text under the plot that never holds the chart wide.

    LabelItem makes its text's width its minimum width on every resize: a chart laid out wide once
    (in a hidden tab, before the docks took their room) could then never shrink to its view again
    and was cut off on the right. The note's height still follows its wrapped text."""

    def updateMin(self) -> None:
        super().updateMin()
        self.setMinimumWidth(0)
        self._sizeHint[Qt.SizeHint.MinimumSize] = (0, self._sizeHint[Qt.SizeHint.MinimumSize][1])
