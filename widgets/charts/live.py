"""TimeSeriesChart: named series over time, growing live, drawn at most 30 times a second.

Data lives in preallocated arrays that double when full (pyqtgraph examples/scrollingPlots.py),
so appending a point is O(1) amortised and the plot items get array views, not copies.
Units go on the axes: give base units ("s", "B/s", "rows/s") and the axis picks ms / MB/s /
M rows/s from the range shown.

Short runs: a series with few points draws a marker on each (one point is visible on its own, where
a line would draw nothing), and style="points" draws markers only, no line (one point per
operation, say). Markers go away by themselves once a series has more than FEW_POINTS points.

A series may have a provisional last point (``set_tail``: the second under way), drawn after its
stored points and replaced by the next call, never stored.

Before an audience a chart can hold its time axis from 0 to the run's planned length (``set_horizon``:
the line grows across a still axis instead of an axis that rescales under it) and mark where each
step begins (``set_marks``).
"""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QWidget

from widgets.charts.base import DEFAULT_MAX_FPS, ChartBase
from widgets.common.theme import Theme, current_theme, series_colour
from workloads.text import plural

_INITIAL_CAPACITY = 256
FEW_POINTS = 30          # markers="auto": a marker on each point up to this many points
MARKER_SIZE = 8
MARKER_MODES = ("auto", "always", "never")


class GrowingSeries:
    """x/y float arrays with spare room at the end; capacity doubles when full."""

    def __init__(self, capacity: int = _INITIAL_CAPACITY) -> None:
        self._xs = np.empty(capacity, dtype=np.float64)
        self._ys = np.empty(capacity, dtype=np.float64)
        self.size = 0

    @property
    def capacity(self) -> int:
        return len(self._xs)

    @property
    def xs(self) -> np.ndarray:
        return self._xs[: self.size]

    @property
    def ys(self) -> np.ndarray:
        return self._ys[: self.size]

    def last_x(self) -> float | None:
        return float(self._xs[self.size - 1]) if self.size else None

    def extend(self, xs: Sequence[float] | np.ndarray, ys: Sequence[float] | np.ndarray) -> None:
        xs = np.asarray(xs, dtype=np.float64).ravel()
        ys = np.asarray(ys, dtype=np.float64).ravel()
        if xs.shape != ys.shape:
            raise ValueError(f"x and y differ in length: {plural(len(xs), 'x value')}, "
                             f"{plural(len(ys), 'y value')}")
        needed = self.size + len(xs)
        if needed > self.capacity:
            capacity = self.capacity
            while capacity < needed:
                capacity *= 2
            # New arrays (not resize in place): the plot items may still hold views of the old ones.
            new_x, new_y = np.empty(capacity), np.empty(capacity)
            new_x[: self.size], new_y[: self.size] = self.xs, self.ys
            self._xs, self._ys = new_x, new_y
        self._xs[self.size:needed] = xs
        self._ys[self.size:needed] = ys
        self.size = needed

    def replace(self, xs, ys) -> None:
        fresh = GrowingSeries(max(_INITIAL_CAPACITY, len(xs)))
        fresh.extend(xs, ys)
        self._xs, self._ys, self.size = fresh._xs, fresh._ys, fresh.size


class TimeSeriesChart(ChartBase):
    """Named series over time (x in seconds since the run started by default).

    chart = TimeSeriesChart("Latency", y_label="latency", y_unit="s")
    chart.add_series("p99", style="dash"); chart.append("p99", t, seconds)
    """

    _STYLES = {"solid": Qt.PenStyle.SolidLine, "dash": Qt.PenStyle.DashLine,
               "dot": Qt.PenStyle.DotLine, "points": Qt.PenStyle.NoPen}

    def __init__(self, title: str = "", *, x_label: str = "elapsed", x_unit: str = "s",
                 y_label: str = "", y_unit: str = "", y_si_prefix: bool = True,
                 y_min_zero: bool = True, show_legend: bool = True, legend_below: bool = False,
                 max_fps: float = DEFAULT_MAX_FPS, parent: QWidget | None = None) -> None:
        self._series: dict[str, GrowingSeries] = {}
        self._curves: dict[str, pg.PlotDataItem] = {}
        self._looks: dict[str, tuple[str | None, str, float, str]] = {}
        self._marked: dict[str, bool] = {}        # markers drawn on the series now
        self._tails: dict[str, tuple[float, float]] = {}
        self._changed: set[str] = set()
        self._horizon: float | None = None
        self._marks: list[pg.InfiniteLine] = []
        super().__init__(title, x_label=x_label, x_unit=x_unit, y_label=y_label, y_unit=y_unit,
                         y_si_prefix=y_si_prefix, show_legend=show_legend, legend_below=legend_below,
                         max_fps=max_fps, parent=parent)
        # Thousands of points stay cheap: draw only what is in view, peak-preserving downsampling.
        self.plot_item.setDownsampling(auto=True, mode="peak")
        self.plot_item.setClipToView(True)
        self._y_min_zero = y_min_zero
        if y_min_zero:
            # Throughput and latency start at zero; an axis that floats hides the scale of a change.
            self.plot_item.getViewBox().setLimits(yMin=0)
        if x_label == "elapsed":
            # time since the run began: auto-range padding around a first point must not show "-40 s"
            self.plot_item.getViewBox().setLimits(xMin=0)

    # ---- series -----------------------------------------------------------------------------
    def add_series(self, name: str, colour: str | None = None, style: str = "solid",
                   width: float = 2.0, markers: str = "auto") -> None:
        """Declare a series (optional: set_series/append create one with the next colour).

        style: "solid", "dash", "dot", or "points" for markers only (a scatter, no line).
        markers: "auto" (a marker on each point while the series has at most FEW_POINTS points),
        "always" or "never"; "points" always has them. Calling it again restyles the series."""
        if style not in self._STYLES:
            raise ValueError(f"line style {style!r} is not one of {', '.join(self._STYLES)}")
        if markers not in MARKER_MODES:
            raise ValueError(f"markers {markers!r} is not one of {', '.join(MARKER_MODES)}")
        if name in self._series:
            self._looks[name] = (colour, style, width, markers)
            self._apply_look(name)
            return
        self._series[name] = GrowingSeries()
        self._looks[name] = (colour, style, width, markers)
        curve = pg.PlotDataItem(name=name)
        self._curves[name] = curve
        self.plot_item.addItem(curve)
        curve.setDownsampling(auto=True, method="peak")
        curve.setClipToView(True)
        # pyqtgraph starts downsampling at 5 points per pixel; "peak" keeps each pixel's min and
        # max, so 1 bin per pixel looks the same and draws a fifth of the segments.
        curve.opts["autoDownsampleFactor"] = 1.0
        # A 2 px antialiased polyline is drawn by Qt's raster engine at ~400 ms for 3,600 points;
        # as separate segments it takes ~17 ms (measured: benchmarks/render_widgets.py). pyqtgraph
        # only segments non-antialiased pens by itself, for faint overlaps at the joins.
        curve.curve.setSegmentedLineMode("on")
        self._apply_look(name)

    def series_names(self) -> list[str]:
        return list(self._series)

    def set_series(self, name: str, xs, ys) -> None:
        """Replace a series' data."""
        self._ensure(name)
        self._series[name].replace(xs, ys)
        self._touch(name)

    def append(self, name: str, x: float, y: float) -> None:
        self.extend(name, (x,), (y,))

    def extend(self, name: str, xs, ys) -> None:
        self._ensure(name)
        self._series[name].extend(xs, ys)
        self._touch(name)

    def set_tail(self, name: str, point: tuple[float, float] | None) -> None:
        """A provisional point (x, y) drawn after the series' own, or None for none."""
        self._ensure(name)
        if self._tails.get(name) != point:
            if point is None:
                self._tails.pop(name, None)
            else:
                self._tails[name] = point
            self._touch(name)

    def last_x(self, name: str) -> float | None:
        """Last x appended to a series (None if empty or unknown): lets a feeder append only news."""
        series = self._series.get(name)
        return series.last_x() if series else None

    def series_data(self, name: str) -> tuple[np.ndarray, np.ndarray]:
        """The series' data as stored (drawn or pending)."""
        s = self._series[name]
        return s.xs.copy(), s.ys.copy()

    def plotted_data(self, name: str) -> tuple[np.ndarray, np.ndarray]:
        """The data the plot item holds now (what the last repaint drew)."""
        xs, ys = self._curves[name].getOriginalDataset()
        if xs is None:
            return np.empty(0), np.empty(0)
        return np.asarray(xs).copy(), np.asarray(ys).copy()

    def set_in_legend(self, name: str, shown: bool) -> None:
        """List the series in the legend or not (a series not fed in this view says nothing)."""
        self._ensure(name)
        curve = self._curves[name]
        listed = any(sample.item is curve for sample, _label in self.legend.items)
        if shown and not listed:
            self.legend.addItem(curve, name)
        elif not shown and listed:
            self.legend.removeItem(curve)

    def in_legend(self) -> list[str]:
        return [getattr(label, "full_text", label.text) for _sample, label in self.legend.items]

    def markers_shown(self, name: str) -> bool:
        """Whether the plot draws a marker on each point of the series now."""
        return self._curves[name].opts["symbol"] is not None

    def clear(self) -> None:
        """Empty every series (keeps their names and colours) and undo a zoom: a new run is seen
        whole."""
        for name, series in self._series.items():
            series.replace((), ())
            self._changed.add(name)
        self._tails.clear()
        self.set_marks([])
        self.reset_view()
        # with no data, auto-range keeps the last run's axes until the first point: start from 0 now
        self.plot_item.getViewBox().setRange(xRange=(0.0, 1.0), yRange=(0.0, 1.0), padding=0,
                                             disableAutoRange=False)

    # ---- internals --------------------------------------------------------------------------
    def _ensure(self, name: str) -> None:
        if name not in self._series:
            self.add_series(name)

    def _touch(self, name: str) -> None:
        self._changed.add(name)
        self.mark_dirty()

    def _render(self) -> None:
        for name in self._changed:
            if self._wants_markers(name) != self._marked.get(name):
                self._apply_look(name)
            self._curves[name].setData(*self._drawn(name))
        self._changed.clear()
        if self._y_min_zero and not self.user_view:
            # From zero to just above the top: auto-range would zoom a steady series into noise
            # (6,000.4 vs 5,999.6 rows/s looking like a cliff).
            tops = [float(np.nanmax(ys)) for ys in (self._drawn(name)[1] for name in self._series) if len(ys)]
            top = max(tops, default=0.0)
            self.plot_item.setYRange(0.0, top * 1.08 if top > 0 else 1.0, padding=0)
        if self._horizon and not self.user_view:
            last = max((x for x in (self.last_x(name) for name in self._series) if x is not None), default=0.0)
            self.plot_item.setXRange(0.0, max(self._horizon, last * 1.02), padding=0)

    # ---- before an audience -----------------------------------------------------------------------
    def set_horizon(self, seconds: float | None) -> None:
        """The time axis from 0 to ``seconds`` (longer if the run is), or back to following the data."""
        self._horizon = seconds if seconds and seconds > 0 else None
        if self._horizon is None:
            self.plot_item.enableAutoRange(axis="x")
        self.mark_dirty()

    def marks(self) -> list[tuple[float, str]]:
        return [(m.value(), m.label.format if m.label else "") for m in self._marks]

    def set_marks(self, marks: list[tuple[float, str]]) -> None:
        """A labelled vertical line at each ``(t, label)``: where each step begins."""
        if self.marks() == list(marks):
            return
        for mark in self._marks:
            self.plot_item.removeItem(mark)
        colour = current_theme().muted
        self._marks = [pg.InfiniteLine(t, angle=90, movable=False, pen=pg.mkPen(colour, style=Qt.PenStyle.DashLine),
                                       label=label, labelOpts={"position": 0.92, "color": colour,
                                                               "anchors": [(0, 0), (0, 0)]})
                       for t, label in marks]
        for mark in self._marks:
            self.plot_item.addItem(mark, ignoreBounds=True)
        self.mark_dirty()

    def _drawn(self, name: str) -> tuple[np.ndarray, np.ndarray]:
        """The stored points (views, no copy), and the tail after them when it is newer."""
        s, tail = self._series[name], self._tails.get(name)
        last = s.last_x()
        if tail is None or (last is not None and tail[0] <= last):
            return s.xs, s.ys
        return np.append(s.xs, tail[0]), np.append(s.ys, tail[1])

    def _wants_markers(self, name: str) -> bool:
        _colour, style, _width, markers = self._looks[name]
        if style == "points" or markers == "always":
            return True
        return markers == "auto" and len(self._drawn(name)[0]) <= FEW_POINTS

    def _apply_look(self, name: str) -> None:
        colour, style, width, _markers = self._looks[name]
        index = list(self._series).index(name)
        colour = colour or series_colour(index)
        curve = self._curves[name]
        if style == "points":
            curve.setPen(None)
        else:
            pen = pg.mkPen(colour, width=width, style=self._STYLES[style])
            # Flat caps: drawn as segments (see add_series), square caps would overlap at every
            # joint and their antialiased edges would show as dots along flat stretches.
            pen.setCapStyle(Qt.PenCapStyle.FlatCap)
            curve.setPen(pen)
        marked = self._wants_markers(name)
        self._marked[name] = marked
        if marked:
            # filled, with a rim of the background so markers that touch stay apart
            curve.setSymbol("o")
            curve.setSymbolSize(MARKER_SIZE)
            curve.setSymbolBrush(pg.mkBrush(colour))
            curve.setSymbolPen(pg.mkPen(current_theme().window, width=1))
        else:
            curve.setSymbol(None)

    def _restyle_items(self, theme: Theme) -> None:
        for name in self._series:
            self._apply_look(name)
