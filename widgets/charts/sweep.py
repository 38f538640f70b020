"""SweepChart: throughput (or latency) against concurrent users on a log2 axis 1, 2, 4 ... 128.

One line per series (a run or a target). The point of the step still running is drawn hollow
and moves as it grows; it fills in when the step completes. Published reference series from the
reports are dashed and labelled "published (their hardware)", and then the measured ones "measured
(your hardware)", so nobody reads a published figure as their own.

Axes: y from zero to just above the highest point; x from the power of two at or below the fewest
users to the one at or above the most (published series included), at least three doublings wide
so a 1-2 user sweep still shows where more users would go. A zoom with the wheel holds until
"Reset zoom" or `reset_view()`; `clear()` does not reset it, since the dashboard redraws the
sweep through clear() on every update: call reset_view() when a new run starts.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QWidget

from widgets.charts.breakdown import MEASURED_LABEL, PUBLISHED_LABEL
from widgets.charts.base import DEFAULT_MAX_FPS, ChartBase
from widgets.common.theme import Theme, current_theme, series_colour
from workloads.text import plural

_MIN_DOUBLINGS = 1   # the x axis spans at least one doubling (a 1-user run: 1-2) and no more than
                     # the data: a 1-2 user sweep on a slide ends at 2, not at an empty 8
_X_MARGIN = 0.08     # log10 units each side, so the end markers are not cut in half
_Y_HEADROOM = 1.08


@dataclass
class _Sweep:
    users: np.ndarray
    values: np.ndarray
    complete: np.ndarray    # bool per point
    reference: bool


class SweepChart(ChartBase):
    """Lines of a metric against users; x axis in powers of two."""

    def __init__(self, title: str = "Scaling with concurrent users", *, y_label: str = "throughput",
                 y_unit: str = "rows/s", max_fps: float = DEFAULT_MAX_FPS,
                 parent: QWidget | None = None) -> None:
        self._sweeps: dict[tuple[str, bool], _Sweep] = {}
        self._curves: dict[tuple[str, bool], pg.PlotDataItem] = {}
        self._colour_order: list[str] = []
        self._changed = True
        super().__init__(title, x_label="concurrent users", x_unit="", y_label=y_label,
                         y_unit=y_unit, x_si_prefix=False, legend_below=True, max_fps=max_fps,
                         parent=parent)
        self.plot_item.setLogMode(x=True, y=False)
        self.plot_item.getViewBox().setLimits(yMin=0)
        self._legend_keys: list = []
        self._apply_range()

    def set_y_axis(self, label: str, unit: str) -> None:
        self.set_axis_label("left", label, unit)

    # ---- data -------------------------------------------------------------------------------
    def set_series(self, name: str, users, values, complete=None, *, reference: bool = False) -> None:
        """Replace one series. `complete` (bools) defaults to all True; reference=True for published."""
        users = np.asarray(users, dtype=np.float64).ravel()
        values = np.asarray(values, dtype=np.float64).ravel()
        done = (np.ones(len(users), dtype=bool) if complete is None
                else np.asarray(complete, dtype=bool).ravel())
        if not (len(users) == len(values) == len(done)):
            raise ValueError(f"sweep {name!r}: {plural(len(users), 'users count')}, "
                             f"{plural(len(values), 'metric value')} and "
                             f"{plural(len(done), 'complete flag')}; they must be equally many")
        if len(users) and users.min() < 1:
            raise ValueError(f"sweep {name!r}: users must be >= 1, got {users.min():g}")
        order = np.argsort(users, kind="stable")
        self._sweeps[(name, reference)] = _Sweep(users[order], values[order], done[order], reference)
        if name not in self._colour_order:
            self._colour_order.append(name)
        self._changed = True
        self.mark_dirty()

    def remove_series(self, name: str, *, reference: bool = False) -> None:
        if self._sweeps.pop((name, reference), None) is not None:
            self._changed = True
            self.mark_dirty()

    def clear(self, *, keep_references: bool = False) -> None:
        for key in [k for k in self._sweeps if not (keep_references and k[1])]:
            del self._sweeps[key]
        self._changed = True
        self.mark_dirty()

    def series_names(self, *, reference: bool = False) -> list[str]:
        return [name for name, ref in self._sweeps if ref == reference]

    def plotted_points(self, name: str, *, reference: bool = False):
        """(users, values, hollow) as drawn now; hollow marks incomplete points."""
        curve = self._curves[(name, reference)]
        xs, ys = curve.getOriginalDataset()
        brushes = curve.opts["symbolBrush"]
        window = pg.mkColor(current_theme().window)
        hollow = [pg.mkBrush(b).color() == window for b in brushes] if isinstance(brushes, list) else []
        return np.asarray(xs), np.asarray(ys), hollow

    def legend_labels(self) -> list[str]:
        """The legend's keys in full (a long one is drawn shortened, in full on hover)."""
        return self.legend.full_texts()

    def x_span(self) -> tuple[float, float]:
        """(fewest, most) users the x axis shows now, read from the view (log2 axis)."""
        low, high = self.plot_item.getViewBox().viewRange()[0]
        return 10 ** low, 10 ** high

    # ---- drawing ----------------------------------------------------------------------------
    @staticmethod
    def legend_label(name: str, reference: bool, *, with_kind: bool = True) -> str:
        """The key of a series: "duckdb: measured (your hardware)" beside published series, just
        the name when nothing published is on the chart (nothing to tell apart)."""
        if not with_kind:
            return name
        return f"{name}: {PUBLISHED_LABEL if reference else MEASURED_LABEL}"

    def _render(self) -> None:
        if not self._changed:
            return
        for curve in self._curves.values():
            self.plot_item.removeItem(curve)
        self._curves.clear()
        self.legend.clear()
        theme = current_theme()
        with_kind = any(reference for _, reference in self._sweeps)
        keys = []
        # references first so measured lines are drawn on top of them
        for key in sorted(self._sweeps, key=lambda k: (not k[1], self._colour_order.index(k[0]))):
            name, reference = key
            sweep = self._sweeps[key]
            colour = series_colour(self._colour_order.index(name), theme)
            style = Qt.PenStyle.DashLine if reference else Qt.PenStyle.SolidLine
            brushes = [pg.mkBrush(colour if done else theme.window) for done in sweep.complete]
            curve = pg.PlotDataItem(
                sweep.users, sweep.values,
                pen=pg.mkPen(colour, width=2, style=style),
                symbol="s" if reference else "o", symbolSize=10 if reference else 11,
                symbolPen=pg.mkPen(colour, width=2), symbolBrush=brushes)
            self.plot_item.addItem(curve)    # unnamed: the legend is filled below, in draw order
            self._curves[key] = curve
            keys.append((curve, self.legend_label(name, reference, with_kind=with_kind)))
        for curve, label in keys:
            self.legend.addItem(curve, label)
        self._apply_range()
        self._changed = False

    def _home_view(self) -> None:
        self._apply_range()

    def _apply_range(self) -> None:
        """Ticks at the powers of two the data spans and, unless the user zoomed, the view."""
        users = [s.users for s in self._sweeps.values() if len(s.users)]
        fewest = min((float(u.min()) for u in users), default=1.0)
        most = max((float(u.max()) for u in users), default=1.0)
        low_power = max(0, math.floor(math.log2(fewest)))
        top_power = max(math.ceil(math.log2(most)), low_power + _MIN_DOUBLINGS)
        ticks = [(math.log10(2 ** k), str(2 ** k)) for k in range(low_power, top_power + 1)]
        self.plot_item.getAxis("bottom").setTicks([ticks, []])
        if self.user_view:
            return
        self.plot_item.setXRange(math.log10(2 ** low_power) - _X_MARGIN,
                                 math.log10(2 ** top_power) + _X_MARGIN, padding=0)
        values = [s.values[np.isfinite(s.values)] for s in self._sweeps.values()]
        top = max((float(v.max()) for v in values if len(v)), default=0.0)
        self.plot_item.setYRange(0.0, top * _Y_HEADROOM if top > 0 else 1.0, padding=0)

    def _restyle_items(self, theme: Theme) -> None:
        self._changed = True
        self.mark_dirty()
