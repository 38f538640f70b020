"""SweepChart: throughput (or latency) against concurrent users on a log2 axis 1, 2, 4 ... 128.

One line per series (a run or a target). The point of the step still running is drawn hollow
and moves as it grows; it fills in when the step completes. Published reference series from the
reports are dashed and labelled "published (their hardware)", measured ones "measured (your
hardware)", so nobody reads a published figure as their own.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QWidget

from widgets.breakdown_chart import MEASURED_LABEL, PUBLISHED_LABEL
from widgets.chart_base import DEFAULT_MAX_FPS, ChartBase
from widgets.theme import Theme, current_theme, series_colour

MIN_AXIS_USERS = 8   # a 1-2 user sweep still shows where more users would go


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
        self._set_user_ticks(MIN_AXIS_USERS)

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
            raise ValueError(f"sweep {name!r}: {len(users)} users values, {len(values)} metric values "
                             f"and {len(done)} complete flags; they must be equally many")
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
        return [label.text for _, label in self.legend.items]

    # ---- drawing ----------------------------------------------------------------------------
    @staticmethod
    def legend_label(name: str, reference: bool) -> str:
        return f"{name}: {PUBLISHED_LABEL if reference else MEASURED_LABEL}"

    def _render(self) -> None:
        if not self._changed:
            return
        for curve in self._curves.values():
            self.plot_item.removeItem(curve)
        self._curves.clear()
        theme = current_theme()
        # references first so measured lines are drawn on top of them
        for key in sorted(self._sweeps, key=lambda k: (not k[1], self._colour_order.index(k[0]))):
            name, reference = key
            sweep = self._sweeps[key]
            colour = series_colour(self._colour_order.index(name), theme)
            style = Qt.PenStyle.DashLine if reference else Qt.PenStyle.SolidLine
            brushes = [pg.mkBrush(colour if done else theme.window) for done in sweep.complete]
            curve = pg.PlotDataItem(
                sweep.users, sweep.values, name=self.legend_label(name, reference),
                pen=pg.mkPen(colour, width=2, style=style),
                symbol="s" if reference else "o", symbolSize=10 if reference else 11,
                symbolPen=pg.mkPen(colour, width=2), symbolBrush=brushes)
            self.plot_item.addItem(curve)    # named: PlotItem adds it to the legend
            self._curves[key] = curve
        top = max((s.users.max() for s in self._sweeps.values() if len(s.users)), default=1)
        self._set_user_ticks(max(MIN_AXIS_USERS, top))   # the data, published series included
        self._changed = False

    def _set_user_ticks(self, max_users: float) -> None:
        top_power = max(0, math.ceil(math.log2(max_users)))
        ticks = [(math.log10(2 ** k), str(2 ** k)) for k in range(top_power + 1)]
        axis = self.plot_item.getAxis("bottom")
        axis.setTicks([ticks, []])
        # a little margin so the end markers are not cut in half
        self.plot_item.setXRange(-0.08, math.log10(2 ** top_power) + 0.08, padding=0)

    def _restyle_items(self, theme: Theme) -> None:
        self._changed = True
        self.mark_dirty()
