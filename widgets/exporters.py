"""Save a chart as PNG, SVG or CSV: one function per format, taking the widget and a path.

PNG and SVG use pyqtgraph's own exporters on the chart's whole scene, so the title, legend and
note are in the picture. pyqtgraph 0.14's SVGExporter cannot parse closed paths ("... Z"), which
Qt 6.12 writes for every ViewBox (pyqtgraph issue #3495); when it fails that way the scene is
drawn straight into Qt's QSvgGenerator instead. CSV uses pyqtgraph's CSVExporter for line charts (original data, not
the downsampled view); bar charts, which it cannot read, write their `table_rows()`.
Accepts our charts (ChartBase), a pg.PlotWidget / GraphicsLayoutWidget or a pg.PlotItem.
"""
from __future__ import annotations

import csv
from pathlib import Path

import pyqtgraph as pg
import pyqtgraph.exporters as pg_exporters
from PySide6.QtCore import QRectF
from PySide6.QtGui import QPainter
from PySide6.QtSvg import QSvgGenerator
from PySide6.QtWidgets import QApplication

from widgets.chart_base import ChartBase


def _prepare(chart) -> None:
    if isinstance(chart, ChartBase) and chart.is_dirty:
        chart.render_now()          # export what the data says, not what the last repaint showed
    QApplication.processEvents()    # let the scene lay out items added by that repaint


def _scene_of(chart):
    if isinstance(chart, ChartBase):
        return chart.graphics.scene()
    if isinstance(chart, pg.GraphicsView):
        return chart.scene()
    if isinstance(chart, pg.PlotItem):
        return chart
    raise TypeError(f"cannot export {type(chart).__name__}: expected a Tickbench chart, a pyqtgraph "
                    "PlotWidget/GraphicsLayoutWidget or a PlotItem")


def _plot_item_of(chart) -> pg.PlotItem:
    if isinstance(chart, ChartBase):
        return chart.plot_item
    if isinstance(chart, pg.PlotItem):
        return chart
    if isinstance(chart, pg.PlotWidget):
        return chart.getPlotItem()
    raise TypeError(f"cannot export data of {type(chart).__name__}: expected a chart with a plot")


def _target(path) -> Path:
    path = Path(path)
    if not path.parent.is_dir():
        raise FileNotFoundError(f"cannot save to {path}: folder {path.parent} does not exist")
    return path


def export_png(chart, path, width: int | None = None) -> Path:
    """Write a PNG; `width` in pixels (height keeps the chart's proportions), default as on screen."""
    path = _target(path)
    _prepare(chart)
    exporter = pg_exporters.ImageExporter(_scene_of(chart))
    if width is not None:
        if width < 16:
            raise ValueError(f"PNG width {width} px is too small (at least 16)")
        exporter.parameters()["width"] = int(width)
    exporter.export(str(path))
    if not path.exists():
        raise OSError(f"the PNG exporter did not write {path}")
    return path


def export_svg(chart, path) -> Path:
    """Write an SVG (vector: for reports and slides)."""
    path = _target(path)
    _prepare(chart)
    try:
        pg_exporters.SVGExporter(_scene_of(chart)).export(str(path))
    except ValueError:
        _svg_with_qt(chart, path)    # pyqtgraph issue #3495: closed paths it cannot parse
    return path


def _svg_with_qt(chart, path: Path) -> None:
    view = chart.graphics if isinstance(chart, ChartBase) else chart
    if not isinstance(view, pg.GraphicsView):
        raise TypeError(f"cannot draw {type(chart).__name__} as SVG: expected a chart widget")
    rect = view.viewport().rect()
    generator = QSvgGenerator()
    generator.setFileName(str(path))
    generator.setSize(rect.size())
    generator.setViewBox(rect)
    generator.setTitle(getattr(chart, "title", "") or "Tickbench chart")
    generator.setDescription("Exported by Tickbench")
    painter = QPainter(generator)
    try:
        view.render(painter, QRectF(rect), rect)
    finally:
        painter.end()


def export_csv(chart, path) -> Path:
    """Write the chart's data. Line charts: columns <series>_x, <series>_y per series."""
    path = _target(path)
    _prepare(chart)
    if hasattr(chart, "table_rows"):
        rows = chart.table_rows()
        fields = list(rows[0]) if rows else ["label", "kind", "phase", "seconds"]
        with open(path, "w", newline="", encoding="utf-8") as f:
            writer = csv.DictWriter(f, fieldnames=fields)
            writer.writeheader()
            writer.writerows(rows)
        return path
    pg_exporters.CSVExporter(_plot_item_of(chart)).export(str(path))
    return path


EXPORTERS = {"png": export_png, "svg": export_svg, "csv": export_csv}


def export_chart(chart, path) -> Path:
    """Pick the format from the file suffix (.png, .svg, .csv)."""
    suffix = Path(path).suffix.lower().lstrip(".")
    if suffix not in EXPORTERS:
        raise ValueError(f"cannot export to {Path(path).name}: use a .png, .svg or .csv file name")
    return EXPORTERS[suffix](chart, path)
