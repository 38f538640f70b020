"""What every Tickbench chart shares: a pyqtgraph plot with unit axes, a legend, an optional note,
theme following, repaint gating, and a way back from a zoom.

Zoom: the wheel (or a drag) over a chart zooms or pans it, and from then on the chart keeps the
user's view instead of following its data. A "Reset zoom" button shows in the chart's top right
corner while it does; it (or `reset_view()`, which a chart's `clear()` calls for a new run) brings
back the chart's own view: all its data, from zero where the chart starts at zero.

Repaint gating (friture's habit, pyqtgraph issue #3092): feeding data only marks the chart dirty
and starts a single-shot timer; when it fires (at most `max_fps` times a second) the chart joins
the render queue, which pushes one chart's data to its plot items, if it is visible, and the next
chart's only after that one has painted. So six charts due at once paint one after another with
other events between them, never in one long pass (`widgets.render_queue`). A hidden chart
(closed dock, other tab) keeps its data and draws once when it is shown again. All of this runs on
the GUI thread.
"""
from __future__ import annotations

import html
from abc import abstractmethod

import pyqtgraph as pg
from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtGui import QFont, QFontMetricsF
from PySide6.QtWidgets import QSizePolicy, QToolButton, QVBoxLayout, QWidget

from widgets.render_queue import render_queue
from widgets.theme import Theme, chart_point_size, current_theme, theme_notifier

DEFAULT_MAX_FPS = 30
RESET_ZOOM_TEXT = "Reset zoom"


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
        self.setToolTip(name if shortened else "")


class RowLegend(pg.LegendItem):
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
            if not hasattr(label, "full_text"):      # a key just added: its text is in full
                label.full_text = label.text
            full = label.full_text
            room = self.available_width - sample.boundingRect().width() - 24
            text = elide(full, label_font(label), room)
            shown = full if text == full else html.escape(text)
            if label.text != shown:
                label.setText(shown)
                label.setToolTip("" if text == full else full)

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


class ChartBase(QWidget):
    """Base of the charts: subclasses keep their own data and implement `_render()`."""

    rendered = Signal()   # after the plot items received new data (tests and the exporters wait on it)

    def __init__(self, title: str = "", *, x_label: str = "", x_unit: str = "",
                 y_label: str = "", y_unit: str = "", x_si_prefix: bool = False,
                 y_si_prefix: bool = True, show_legend: bool = True, legend_below: bool = False,
                 max_fps: float = DEFAULT_MAX_FPS, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        if not 0 < max_fps <= 60:
            raise ValueError(f"max_fps must be in (0, 60], got {max_fps}")
        self._title = title
        self._axis_text = {"bottom": (x_label, x_unit), "left": (y_label, y_unit)}
        self.render_count = 0
        self._dirty = False

        # A layout widget rather than a PlotWidget so a note can sit under the plot and still be
        # part of the scene, hence part of PNG/SVG exports.
        self.graphics = pg.GraphicsLayoutWidget()
        self.graphics.ci.setContentsMargins(4, 4, 8, 4)
        self.plot_item: pg.PlotItem = self.graphics.addPlot(
            row=0, col=0, axisItems={"left": UnitAxis("left"), "bottom": UnitAxis("bottom")})
        self.plot_item.getAxis("bottom").enableAutoSIPrefix(x_si_prefix)
        self.plot_item.getAxis("left").enableAutoSIPrefix(y_si_prefix)
        self.plot_item.showGrid(x=True, y=True, alpha=0.25)
        self.plot_item.setMenuEnabled(False)      # pyqtgraph's menu offers nothing a user needs here
        self.plot_item.hideButtons()
        self._legend_below = legend_below
        if legend_below:
            # A row of keys under the plot, for charts whose data fills the whole view (bars).
            self.legend = RowLegend(colCount=6, frame=False)
            self.legend.available_width = 600.0   # until the first resize says the real width
            self.plot_item.legend = self.legend   # PlotItem.addItem puts named items here
            self.graphics.ci.addItem(self.legend, row=1, col=0)
            # keep the keys together on the left instead of spread over the whole width
            self.legend.setSizePolicy(QSizePolicy.Policy.Maximum, QSizePolicy.Policy.Maximum)
            self.graphics.ci.layout.setAlignment(self.legend, Qt.AlignmentFlag.AlignLeft)
        else:
            self.legend = self.plot_item.addLegend(offset=(8, 8))
        self.legend.setVisible(show_legend)   # a one-series chart says what it shows in its title
        self._note = NoteItem("", justify="left")
        self._note_row = 2 if legend_below else 1
        self._note_text = ""

        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.graphics)

        # Over the view, not in the scene: never part of a PNG/SVG export.
        self._user_view = False
        self.reset_button = QToolButton(self.graphics)
        self.reset_button.setObjectName("reset_zoom")
        self.reset_button.setText(RESET_ZOOM_TEXT)
        self.reset_button.setToolTip("Show all the data again; the chart follows new data again")
        self.reset_button.setCursor(Qt.CursorShape.PointingHandCursor)
        self.reset_button.clicked.connect(self.reset_view)
        self.reset_button.hide()
        self.plot_item.getViewBox().sigRangeChangedManually.connect(self._on_user_zoom)

        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._min_interval_ms = max(1, round(1000 / max_fps))
        self._timer.setInterval(self._min_interval_ms)
        self._timer.timeout.connect(self._on_timer)

        theme_notifier().changed.connect(self._on_theme_changed)
        self._on_theme_changed(current_theme())

    # ---- repaint gating -------------------------------------------------------------------
    @property
    def is_dirty(self) -> bool:
        return self._dirty

    @property
    def repaint_interval_ms(self) -> int:
        return self._timer.interval()

    def mark_dirty(self) -> None:
        self._dirty = True
        if not self._timer.isActive():
            self._timer.start()

    def _on_timer(self) -> None:
        if self._dirty and self.isVisible():
            render_queue().add(self)
        # if hidden, stay dirty: showEvent restarts the timer

    def showEvent(self, event) -> None:
        super().showEvent(event)
        if self._dirty and not self._timer.isActive():
            self._timer.start()

    def render_now(self) -> None:
        """Push pending data to the plot items immediately (used before exporting)."""
        self._render()
        # ranges and axes settle now, in this pass: left to the paint, their changes ask for
        # another paint of the window, and chains of those kept the event loop busy for 0.1 s
        self.graphics.scene().prepareForPaint()
        self._dirty = False
        self.render_count += 1
        self.rendered.emit()

    @abstractmethod
    def _render(self) -> None:
        """Supplied by each concrete chart."""

    # ---- zoom -------------------------------------------------------------------------------
    @property
    def user_view(self) -> bool:
        """True while the view is the user's (zoomed or panned) rather than the chart's own."""
        return self._user_view

    def reset_view(self) -> None:
        """Back to the chart's own view (all its data, following new data) and hide the button.
        Each chart's clear() calls it, so a new run starts with a view of its own data."""
        self._user_view = False
        self.reset_button.hide()
        self.plot_item.enableAutoRange()
        for item in self.plot_item.listDataItems():
            item.viewRangeChanged()      # forget the data clipped to the zoomed view: range over all
        self.plot_item.getViewBox().updateAutoRange()    # now, not at the next paint
        self._home_view()
        self.mark_dirty()

    def _home_view(self) -> None:
        """Subclasses whose view is not pyqtgraph's auto-range (fixed axes) set it here; their
        _render keeps it only while `user_view` is False."""

    def _on_user_zoom(self, _mask=None) -> None:
        self._user_view = True
        self._place_reset_button()
        self.reset_button.show()
        self.reset_button.raise_()

    def _place_reset_button(self) -> None:
        button = self.reset_button
        button.adjustSize()
        button.move(max(0, self.graphics.width() - button.width() - 6), 4)

    # ---- labels -----------------------------------------------------------------------------
    @property
    def title(self) -> str:
        return self._title

    def set_title(self, title: str) -> None:
        self._title = title
        self._style_title(current_theme())

    def set_axis_label(self, axis: str, text: str, unit: str = "") -> None:
        """axis: "left" or "bottom"; unit is shown in brackets, with an SI prefix when enabled."""
        self._axis_text[axis] = (text, unit)
        self._style_axes(current_theme())

    def axis_label(self, axis: str) -> str:
        """The label as drawn, e.g. "Throughput (M rows/s)" (HTML removed)."""
        s = self.plot_item.getAxis(axis).labelString()
        return s.split(">", 1)[1].rsplit("<", 1)[0]

    def set_note(self, text: str) -> None:
        """A line of explanation under the plot (part of exports); empty text removes it."""
        self._note_text = text
        in_layout = self._note.scene() is not None
        if text and not in_layout:
            self.graphics.ci.addItem(self._note, row=self._note_row, col=0)
        elif not text and in_layout:
            self.graphics.ci.removeItem(self._note)
        self._style_note(current_theme())

    @property
    def note(self) -> str:
        return self._note_text

    # ---- theme ------------------------------------------------------------------------------
    def _font(self, scale: float = 1.0) -> QFont:
        font = QFont(self.font())
        font.setPointSizeF(chart_point_size() * scale)
        return font

    def _on_theme_changed(self, theme: Theme) -> None:
        self.graphics.setBackground(theme.window)
        self._style_axes(theme)
        self._style_title(theme)
        self._style_note(theme)
        self.legend.setLabelTextColor(theme.text)
        self.legend.setLabelTextSize(f"{chart_point_size():.1f}pt")
        for _sample, label in self.legend.items:  # pyqtgraph stores the new colour but keeps old text
            label.setText(label.text)
        if not self._legend_below:
            self.legend.setBrush(pg.mkBrush(theme.window + "D0"))   # mostly opaque over the lines
            self.legend.setPen(pg.mkPen(theme.muted, width=1))
        self._restyle_items(theme)
        self.mark_dirty()

    def _style_axes(self, theme: Theme) -> None:
        pt = chart_point_size()
        for name, (text, unit) in self._axis_text.items():
            axis = self.plot_item.getAxis(name)
            axis.setPen(pg.mkPen(theme.muted))
            axis.setTextPen(pg.mkPen(theme.text))
            axis.setTickFont(self._font())
            axis.setLabel(text, units=unit or None, **{"color": theme.text, "font-size": f"{pt:.1f}pt"})

    def _style_title(self, theme: Theme) -> None:
        if self._title:
            self.plot_item.setTitle(self._title, color=theme.text, size=f"{chart_point_size() * 1.15:.1f}pt",
                                    bold=True)
        else:
            self.plot_item.setTitle(None)

    def _style_note(self, theme: Theme) -> None:
        if self._note_text:
            self._note.setText(self._note_text, color=theme.muted, size=f"{chart_point_size() * 0.95:.1f}pt")
            self._wrap_note()

    def _wrap_note(self) -> None:
        # LabelItem does not wrap by itself: give its text item the chart's width, then let the
        # layout take the resulting height.
        self._note.item.setTextWidth(max(80, self.graphics.width() - 24))
        self._note.updateMin()

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        if not self.reset_button.isHidden():    # placed when shown; sizing it costs ~2 ms a chart
            self._place_reset_button()
        if self._note_text:
            self._wrap_note()
        if isinstance(self.legend, RowLegend):
            self.legend.fit_width(self.graphics.width() - 24)

    def _restyle_items(self, theme: Theme) -> None:
        """Subclasses recolour their series here."""


class BarChartBase(ChartBase):
    """Base of the bar charts, which rebuild their items on every render: keeps the items, adds
    value labels, and rebuilds on a theme change (label colours come from the theme)."""

    def __init__(self, title: str = "", **kwargs) -> None:
        self._items: list[pg.GraphicsObject] = []
        self._legend_keys: list = []         # the legend only draws its samples: keep them alive
        super().__init__(title, **kwargs)
        self.plot_item.setMouseEnabled(x=False, y=False)
        self.plot_item.getViewBox().invertY(True)          # first label on top, reading order
        self.plot_item.showGrid(x=True, y=False, alpha=0.25)

    CATEGORY_SHARE = 0.4     # of the chart's width, at most, for the names of the bars

    def set_categories(self, ticks: list[tuple[float, str]]) -> None:
        """The names of the bars on the left axis, shortened to fit (in full on hover)."""
        self.plot_item.getAxis("left").set_categories(ticks, self._category_px())

    def categories(self) -> list[str]:
        """The bars' names in full, top to bottom."""
        return self.plot_item.getAxis("left").categories()

    def _category_px(self) -> float:
        return max(self.graphics.width(), 300) * self.CATEGORY_SHARE

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        self.plot_item.getAxis("left").set_category_width(self._category_px())

    def bar_items(self) -> list[pg.BarGraphItem]:
        """The bar items drawn now."""
        return [i for i in self._items if isinstance(i, pg.BarGraphItem)]

    def label_texts(self) -> list[str]:
        """The value labels drawn now."""
        return [i.textItem.toPlainText() for i in self._items if isinstance(i, pg.TextItem)]

    def _remove_items(self) -> None:
        for item in self._items:
            self.plot_item.removeItem(item)
        self._items.clear()
        self.legend.clear()

    def _label(self, text: str, x: float, y: float, colour: str, anchor=(0, 0.5), fill=None) -> None:
        item = pg.TextItem(text, color=colour, anchor=anchor, fill=fill)
        item.setFont(self._font())
        item.setPos(x, y)
        self._add(item)

    def _add(self, item) -> None:
        self.plot_item.addItem(item)
        self._items.append(item)

    def _restyle_items(self, theme: Theme) -> None:
        self.mark_dirty()
