"""LoadLatencyChart: an open-loop run's latency against the load offered (``workloads.run.schedule``).

Per offered rate (x, operations per second) the p50 and p99 latency counted from each
operation's intended start, and the p99 service time (from when it really began) beside them.
While the server keeps up the lines lie together; where the p99 latency departs from the service
time (a queue building up: ``workloads.results.run_summary.load_knee``) a dashed vertical line marks the
knee and says its rate. Both axes are logarithmic: rates span decades, latencies from
microseconds to the seconds of a stall.
"""
from __future__ import annotations

import math

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QWidget

from widgets.charts.base import DEFAULT_MAX_FPS, ChartBase
from widgets.common.theme import Theme, current_theme, series_colour
from workloads.text import rate

SERIES = ("latency p99 (from intended start)", "latency p50 (from intended start)", "service time p99")


class LoadLatencyChart(ChartBase):
    def __init__(self, title: str = "Latency against offered load", *, max_fps: float = DEFAULT_MAX_FPS,
                 parent: QWidget | None = None) -> None:
        self._rates = np.empty(0)
        self._lines: dict[str, np.ndarray] = {}
        self._knee: float | None = None
        self._items: list = []
        super().__init__(title, x_label="offered load", x_unit="ops/s", y_label="latency", y_unit="s",
                         legend_below=True, max_fps=max_fps, parent=parent)
        self.plot_item.setLogMode(x=True, y=True)

    def set_steps(self, rates, latency_p99, latency_p50, service_p99, knee: float | None = None) -> None:
        """One point per offered rate; ``knee`` the rate where latency departs (None: nowhere)."""
        rates = np.asarray(rates, dtype=np.float64)
        order = np.argsort(rates, kind="stable")
        self._rates = rates[order]
        self._lines = {name: np.asarray(values, dtype=np.float64)[order]
                       for name, values in zip(SERIES, (latency_p99, latency_p50, service_p99))}
        self._knee = knee
        self.mark_dirty()

    def clear(self) -> None:
        self.set_steps([], [], [], [], None)
        self.reset_view()

    def knee_text(self) -> str:
        """What the knee marker says ("" when there is none)."""
        return f"knee: {self._knee:,.6g} ops/s" if self._knee else ""

    def plotted(self, name: str) -> tuple[np.ndarray, np.ndarray]:
        """(rates, seconds) of one series as drawn (points without a figure left out)."""
        for item in self._items:
            if isinstance(item, pg.PlotDataItem) and item.name() == name:
                xs, ys = item.getOriginalDataset()
                return np.asarray(xs), np.asarray(ys)
        return np.empty(0), np.empty(0)

    def _render(self) -> None:
        for item in self._items:
            self.plot_item.removeItem(item)
        self._items = []
        self.legend.clear()
        theme = current_theme()
        for index, name in enumerate(SERIES):
            values = self._lines.get(name, np.empty(0))
            shown = np.isfinite(values) & (values > 0)
            colour = series_colour(index, theme)
            style = Qt.PenStyle.DotLine if name.startswith("service") else Qt.PenStyle.SolidLine
            curve = pg.PlotDataItem(self._rates[shown], values[shown], name=name,
                                    pen=pg.mkPen(colour, width=2, style=style), symbol="o", symbolSize=8,
                                    symbolPen=pg.mkPen(colour), symbolBrush=pg.mkBrush(colour))
            self.plot_item.addItem(curve)
            self._items.append(curve)
        if self._knee:
            marker = pg.InfiniteLine(pos=math.log10(self._knee), angle=90,
                                     pen=pg.mkPen(theme.text, width=1, style=Qt.PenStyle.DashLine),
                                     label=self.knee_text(), labelOpts={"position": 0.92, "color": theme.text})
            self.plot_item.addItem(marker)
            self._items.append(marker)
        # ticks at the rates offered, read as numbers ("3.2 k"), not pyqtgraph's powers of ten
        self.plot_item.getAxis("bottom").setTicks([[(math.log10(r), rate(r)) for r in self._rates if r > 0], []])
        if not self.user_view:
            self.plot_item.enableAutoRange()

    def _restyle_items(self, theme: Theme) -> None:
        self.mark_dirty()
