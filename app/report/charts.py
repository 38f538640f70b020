"""Charts of the run report, drawn offscreen with the widgets the live view uses (or the
caller's own widgets), as PNG bytes with a caption; and the reproduction's paired bars (published
beside measured, each side as a share of its own largest figure: never on one axis)."""
from __future__ import annotations

import tempfile
from dataclasses import dataclass
from pathlib import Path

import pandas as pd
import pyqtgraph as pg
from PySide6.QtCore import QBuffer, QIODevice, Qt
from PySide6.QtGui import QBrush, QColor
from PySide6.QtWidgets import QApplication, QTabWidget, QWidget

from widgets.charts.breakdown import MEASURED_LABEL, BreakdownChart
from widgets.charts.base import BarChartBase, ChartBase
from widgets.run.dashboard import LiveDashboard
from widgets.run.dashboard_charts import GAP
from widgets.charts.export_sizes import ExportOptions, render_image
from widgets.charts.exporters import export_png
from widgets.charts.live import TimeSeriesChart
from widgets.charts.sweep import SweepChart
from widgets.common.theme import OKABE_ITO, current_theme
from workloads.results.figures import breakdown
from workloads.reproduce.published import Pair
from workloads.run.snapshot import LiveSnapshot
from workloads.targets.base import PHASES

CHART_PX = 680            # on-screen width of a chart drawn for the report
EXPORT_PX: int | None = None
# The report's own charts are laid out at CHART_PX and drawn this many times as fine, for print
# (2 x 96 = 192 DPI, 680 px on the page); their legends inside the plot (widgets.charts.export_sizes).
PRINT_SCALE = 2
_QAPP: QApplication | None = None            # made on demand for headless use, kept alive here


@dataclass
class Figure:
    """A chart as PNG bytes with a caption; without PNG bytes, a note where charts were left out."""

    title: str
    png: bytes
    caption: str = ""


def render_run_charts(snapshot: LiveSnapshot) -> list[Figure]:
    """One run's time series as the live view draws them, from a LiveDashboard fed the snapshot."""
    dashboard = LiveDashboard()
    offscreen(dashboard, 2 * CHART_PX + 300, 1050)
    try:
        dashboard.show_final(snapshot)
        front_tab_of(dashboard.rows_chart)         # laid out at their size, not a hidden tab's
        moved_rows = any(p.rows_per_s for p in snapshot.throughput)
        # a line needs two points: a run whose operations all ended within one second has none
        seconds, samples = len(snapshot.throughput) > 1, len(snapshot.resources) > 1
        # a short run is drawn operation by operation (workloads.results.history), a longer one per second
        each = bool(getattr(snapshot, "per_operation", False))
        wanted: list[tuple[QWidget, str, bool]] = [
            (dashboard.rows_chart, "each operation's rows over its own time, at its end" if each else
             "rows per second, by second of operation end", moved_rows and seconds),
            (dashboard.bytes_chart, "each operation's bytes over its own time, at its end" if each else
             "bytes per second, by second of operation end", moved_rows and seconds),
            (dashboard.latency_chart, "each operation's time, at its end" if each else
             "exact percentiles of the operations that ended in the last 5 s", len(snapshot.latency) > 1),
            (dashboard.cpu_chart, "client machine, parent and worker processes; 100% = one core",
             samples),
            (dashboard.memory_chart, "resident memory of the parent and worker processes", samples),
        ]
        figures = [Figure(chart.title, chart_png(chart), caption) for chart, caption, show in wanted if show]
    finally:
        dispose(dashboard)
    if not seconds:
        figures.append(Figure("", b"", "No throughput or latency over time: every operation of this run "
                                       "ended within one second (the step table has its figures)."))
    if not moved_rows and len(snapshot.throughput) > 1:
        # no rows moved (the no-op workload): operations per second say what happened instead
        chart = TimeSeriesChart("Operations per second", y_label="", y_unit="ops/s", show_legend=False)
        offscreen(chart, CHART_PX, 300)
        try:
            tp = snapshot.throughput
            chart.set_series("ops/s", [p.t for p in tp], [p.ops_per_s if p.measuring else GAP for p in tp])
            figures.insert(0, Figure(chart.title, chart_png(chart), "operations per second, by "
                                     "second of operation end"))
        finally:
            dispose(chart)
    return figures


def render_shared_charts(frame: pd.DataFrame, snapshots: dict[str, LiveSnapshot],
                         labels: dict[str, str]) -> list[Figure]:
    """Phase breakdown (a bar per run and step) and, for users sweeps, throughput against users."""
    figures = []
    bars: dict[str, dict[str, float]] = {}
    several_steps = frame.groupby("run_id")["step"].nunique().to_dict()
    for row in frame.itertuples():
        phases = {p: getattr(row, f"{p}_ms") / 1000 for p in PHASES
                  if not pd.isna(getattr(row, f"{p}_ms"))}
        if phases:
            label = row.run if several_steps[row.run_id] == 1 else f"{row.run} · {row.step_label}"
            bars[label] = breakdown(phases, None if pd.isna(row.mean_ms) else row.mean_ms / 1000)
    if bars:
        chart = BreakdownChart("Phases per operation (mean)")
        offscreen(chart, CHART_PX, 130 + 42 * len(bars))
        try:
            chart.set_data(bars)
            figures.append(Figure(chart.title, chart_png(chart),
                                  f"{MEASURED_LABEL}: mean seconds per operation in each phase; "
                                  "'other' is the part of the measured mean no phase covers"))
        finally:
            dispose(chart)
    sweeps = {rid: s.sweep for rid, s in snapshots.items() if len({p.users for p in s.sweep}) > 1}
    if sweeps:
        moved_rows = any(p.rows_per_s for points in sweeps.values() for p in points)
        chart = SweepChart(y_label="throughput", y_unit="rows/s" if moved_rows else "ops/s")
        offscreen(chart, CHART_PX, 360)
        try:
            for rid, points in sweeps.items():
                chart.set_series(labels[rid], [p.users for p in points],
                                 [p.rows_per_s if moved_rows else p.ops_per_s for p in points])
            figures.append(Figure(chart.title, chart_png(chart),
                                  f"{MEASURED_LABEL}: throughput of each step over its measurement window"))
        finally:
            dispose(chart)
    return figures


class PairedShareChart(BarChartBase):
    """A published figure and the measured one, row by row, each as a percentage of the largest
    figure on its own side: the shapes compare across the two machines, the absolute values do
    not. Each bar is labelled with its figure itself. Published bars are hatched."""

    CATEGORY_SHARE = 0.5     # the figures' names are long ("mapreduce-minute-bars, cold cache (published: ...)")

    def __init__(self, title: str, published_key: str, measured_key: str) -> None:
        self._rows: list[tuple[str, float | None, str, float | None, str]] = []
        self._keys = (published_key, measured_key)
        super().__init__(title, x_label="share of the largest figure on its own side", x_unit="%",
                         x_si_prefix=False, y_si_prefix=False, legend_below=True)

    def set_rows(self, rows: list[tuple[str, float | None, str, float | None, str]]) -> None:
        """(figure, published share, published text, measured share, measured text), shares in %."""
        self._rows = list(rows)
        self.mark_dirty()

    def _render(self) -> None:
        self._remove_items()
        theme = current_theme()
        looks = (self._look(OKABE_ITO["orange"], hatched=True, edge=theme.window),
                 self._look(OKABE_ITO["blue"], hatched=False, edge=theme.window))
        for g, (_figure, *sides) in enumerate(self._rows):
            for i, (share, text) in enumerate((sides[0:2], sides[2:4])):
                y = g - 0.2 + 0.4 * i
                if share is None:
                    self._label(" not measured", 0, y, theme.muted)
                    continue
                self._add(pg.BarGraphItem(x0=[0], width=[share], y=[y], height=[0.36], **looks[i]))
                self._label(f" {text}", share, y, theme.text)
        self._legend_keys = [(pg.BarGraphItem(x0=[0], width=[0], y=[0], height=[0], **look), key)
                             for look, key in zip(looks, self._keys)]
        for sample, key in self._legend_keys:
            self.legend.addItem(sample, key)
        self.set_categories([(float(g), row[0]) for g, row in enumerate(self._rows)])
        self.plot_item.setXRange(0, 150, padding=0)         # room for the value labels
        self.plot_item.setYRange(-0.5, max(len(self._rows), 1) - 0.5, padding=0)

    @staticmethod
    def _look(colour: str, hatched: bool, edge: str) -> dict:
        if hatched:
            return {"brush": QBrush(QColor(colour), Qt.BrushStyle.BDiagPattern), "pen": pg.mkPen(colour, width=1.5)}
        return {"brush": pg.mkBrush(colour), "pen": pg.mkPen(edge, width=1)}


def render_reproduction_charts(experiment: str, pairs: list[Pair], report: str) -> list[Figure]:
    """Paired bars of an experiment's published and measured figures, one chart per unit, where at
    least two figures were measured (a single pair is 100 % beside 100 %: nothing to see)."""
    figures = []
    units = list(dict.fromkeys(p.unit for p in pairs))
    for unit in units:
        rows = [p for p in pairs if p.unit == unit and p.measured_value is not None and p.published_value]
        if len(rows) < 2:
            continue
        top_published = max(p.published_value for p in rows)
        top_measured = max(p.measured_value for p in rows) or 1.0
        chart = PairedShareChart(f"{experiment} ({unit})" if len(units) > 1 else experiment,
                                 f"published, report {report}'s hardware: % of {_figure_text(top_published, unit)}",
                                 f"measured, this machine: % of {_figure_text(top_measured, unit)}")
        offscreen(chart, CHART_PX, 150 + 44 * len(rows))
        try:
            chart.set_rows([(p.figure, 100 * p.published_value / top_published, p.published,
                             100 * p.measured_value / top_measured, p.measured) for p in rows])
            figures.append(Figure(chart.title, chart_png(chart),
                                  f"Published (hatched, their hardware) and measured (solid, this machine), each as "
                                  f"a percentage of the largest {unit} figure on its own side; each bar is labelled "
                                  "with its figure. The shapes compare; the machines and data sizes do not."))
        finally:
            dispose(chart)
    return figures


def _figure_text(value: float, unit: str) -> str:
    return f"{value:,.0f} {unit}" if abs(value) >= 100 else f"{value:.3g} {unit}"


def widgets_as_figures(charts: dict[str, QWidget]) -> list[Figure]:
    """The caller's widgets as PNGs: charts through widgets/charts/exporters.py, others grabbed."""
    figures = []
    for title, widget in charts.items():
        figures.append(Figure(str(title), chart_png(widget, scale=1)))      # as they are on screen
    return figures


def chart_png(widget: QWidget, width: int | None = EXPORT_PX, scale: float = PRINT_SCALE) -> bytes:
    """PNG bytes of a chart or of any widget. A Tickbench chart with `scale` > 1 is drawn at print
    resolution (widgets.charts.export_sizes: its layout kept, every line and letter drawn `scale` times as
    fine, legend inside); otherwise through widgets/charts/exporters.py as on screen."""
    if isinstance(widget, ChartBase) and width is None and scale > 1:
        view = widget.graphics.size()
        image = render_image(widget, ExportOptions(size=(round(view.width() * scale), round(view.height() * scale)),
                                                   dpi=round(96 * scale), scale=scale))
        buffer = QBuffer()
        buffer.open(QIODevice.OpenModeFlag.WriteOnly)
        if not image.save(buffer, "PNG"):
            raise OSError(f"could not draw the chart {widget.title!r} as a PNG")
        return bytes(buffer.data())
    if isinstance(widget, (ChartBase, pg.GraphicsView, pg.PlotItem)):
        with tempfile.TemporaryDirectory(prefix="tickbench-report-") as folder:
            target = Path(folder) / "chart.png"
            export_png(widget, target, width=width)
            return target.read_bytes()
    if not isinstance(widget, QWidget):
        raise TypeError(f"cannot put a {type(widget).__name__} in a report: expected a chart or a widget")
    with tempfile.TemporaryDirectory(prefix="tickbench-report-") as folder:
        target = Path(folder) / "widget.png"
        if not widget.grab().save(str(target), "PNG"):
            raise OSError(f"could not draw the widget {type(widget).__name__} as a PNG")
        return target.read_bytes()


def front_tab_of(widget: QWidget) -> None:
    """Bring to the front every tab page that holds ``widget``: a chart in a hidden tab keeps
    the size it was made with and draws nothing new."""
    parent = widget.parentWidget()
    while parent is not None:
        if isinstance(parent, QTabWidget):
            for index in range(parent.count()):
                page = parent.widget(index)
                if page is widget or page.isAncestorOf(widget):
                    parent.setCurrentIndex(index)
        parent = parent.parentWidget()
    QApplication.processEvents()


def offscreen(widget: QWidget, width: int, height: int) -> None:
    """Lay a widget out at a size without putting a window on the screen."""
    widget.setAttribute(Qt.WidgetAttribute.WA_DontShowOnScreen, True)
    widget.resize(width, height)
    widget.show()


def dispose(widget: QWidget) -> None:
    widget.close()
    widget.deleteLater()


def application() -> QApplication:
    """The running QApplication, or one made here so the command line can write reports too."""
    global _QAPP
    app = QApplication.instance()
    if app is None:
        _QAPP = app = QApplication([])
    return app
