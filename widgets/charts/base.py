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
other events between them, never in one long pass (`widgets.charts.render_queue`). A hidden chart
(closed dock, other tab) keeps its data and draws once when it is shown again. All of this runs on
the GUI thread.
"""
from __future__ import annotations

from abc import abstractmethod

import pyqtgraph as pg
from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtGui import QFont
from PySide6.QtWidgets import QSizePolicy, QToolButton, QVBoxLayout, QWidget

from widgets.charts.items import NoteItem, PlainLegend, RowLegend, UnitAxis
from widgets.charts.render_queue import render_queue
from widgets.common.theme import Theme, chart_point_size, current_theme, theme_notifier

DEFAULT_MAX_FPS = 30
RESET_ZOOM_TEXT = "Reset zoom"


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
            self.legend = PlainLegend(offset=(8, 8))
            self.legend.setParentItem(self.plot_item.vb)
            self.plot_item.legend = self.legend
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
            self._span_title()
        else:
            self.plot_item.setTitle(None)

    def _span_title(self) -> None:
        """The title over the whole chart, the y axis's column too: pyqtgraph centres it over the
        plot column only, which cuts a long title on a narrow chart (a laptop's Run tab)."""
        layout, label = self.plot_item.layout, self.plot_item.titleLabel
        if getattr(self, "_title_spanned", False):
            return
        layout.removeItem(label)
        layout.addItem(label, 0, 0, 1, layout.columnCount())
        self._title_spanned = True

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
        if event.oldSize().width() != event.size().width():
            self.mark_dirty()           # value labels and the room for them depend on the width

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
