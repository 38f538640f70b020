"""Save a chart as PNG, SVG or CSV: one function per format, taking the widget and a path.

PNG uses pyqtgraph's ImageExporter on the chart's whole scene, so the title, legend and note are
in the picture. SVG is drawn here, item by item, into Qt's QSvgGenerator: pyqtgraph 0.14's
SVGExporter cannot parse the closed paths ("... Z") Qt 6 writes for every ViewBox (pyqtgraph issue
#3495), and rendering the whole view into QSvgGenerator in one call was not faithful in a browser:

- scatter markers come from a pixmap atlas (``drawPixmapFragments``); the SVG engine ignores the
  source rectangle and drew the whole atlas, every marker kind, at each point, as a bitmap;
- axes and grid are replayed from QPictures, scaled by the generator's 72 dpi against the
  screen's 96, so points stood off their axes;
- the engine keeps a stale clip after a ``restore()``, so axes were clipped to the title's box.

So the items are put in export mode (scatter markers become vector paths, as pyqtgraph's own
exporters do), the generator takes the picture resolution, and each item is painted with its
transform and its clip set explicitly (``QGraphicsItem.clipPath``), in stacking order.

CSV holds what the chart shows, in the units its axes show: one x column (the union of the
series' x where they differ, blank cells where a series has no point), then one column per series
named ``<series> <unit>`` ("p50 ms", "duckdb M rows/s"). Bar charts write their `table_rows()`
with seconds and bytes in the unit of the bar axis.

A caption (run, target, cache: `run_caption`) can be drawn under the chart in PNG and SVG files,
and `suggest_filename` names a file after the run and the chart. Accepts our charts (ChartBase),
a pg.PlotWidget / GraphicsLayoutWidget or a pg.PlotItem. Exports at a slide's size or for print,
vector PDF and the clipboard, legend inside the plot: widgets/charts/export_sizes.py.
"""
from __future__ import annotations

import csv
import math
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pyqtgraph as pg
import pyqtgraph.exporters as pg_exporters
from PySide6.QtCore import QBuffer, QIODevice, QRect, QRectF, QSettings, QSize, Qt
from PySide6.QtGui import QColor, QFont, QFontInfo, QFontMetrics, QImage, QPainter, QPen, QPicture
from PySide6.QtSvg import QSvgGenerator
from PySide6.QtWidgets import QApplication, QGraphicsItem, QStyleOptionGraphicsItem

from widgets.charts.base import ChartBase
from widgets.charts.footprint import KINDS as FOOTPRINT_KINDS, FootprintChart
from widgets.charts.live import TimeSeriesChart
from widgets.charts.svg_strokes import bake_non_scaling_strokes
from widgets.charts.sweep import SweepChart
from widgets.common.theme import current_theme
from workloads.text import spreadsheet_safe

FOLDER_KEY = "export/folder"      # QSettings key of the folder the last export went to


def _prepare(chart) -> None:
    """Export what the data says, not what the last repaint showed: render, let the scene lay out
    what that added, and render again if the layout changed what fits (a bar chart's value labels
    depend on the plot's width, which its axis labels change)."""
    for _ in range(4):
        if isinstance(chart, ChartBase) and chart.is_dirty:
            chart.render_now()
        QApplication.processEvents()
        if not (isinstance(chart, ChartBase) and chart.is_dirty):
            return


def _scene_of(chart):
    if isinstance(chart, ChartBase):
        return chart.graphics.scene()
    if isinstance(chart, pg.GraphicsView):
        return chart.scene()
    if isinstance(chart, pg.PlotItem):
        return chart
    raise TypeError(f"cannot export {type(chart).__name__}: expected a Tickbench chart, a pyqtgraph "
                    "PlotWidget/GraphicsLayoutWidget or a PlotItem")


def _view_of(chart) -> pg.GraphicsView:
    if isinstance(chart, ChartBase):
        return chart.graphics
    if isinstance(chart, pg.GraphicsView):
        return chart
    if isinstance(chart, pg.PlotItem) and chart.scene() is not None and chart.scene().views():
        return chart.scene().views()[0]
    raise TypeError(f"cannot draw {type(chart).__name__} as SVG: expected a Tickbench chart, a pyqtgraph "
                    "PlotWidget/GraphicsLayoutWidget or a PlotItem shown in one")


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


def _title_of(chart) -> str:
    return getattr(chart, "title", "") if isinstance(chart, ChartBase) else ""


# --- names and captions ----------------------------------------------------------------------------

def run_caption(run: Mapping[str, Any] | None) -> str:
    """One line naming a run for a chart's caption band, from a run record (``ResultsStore.run``):
    "Run quick-start (20260101-120000-ab12) · read-day on duckdb · taq · cache cold · 2026-01-01 12:00".
    Missing fields are left out; None gives ""."""
    if not run:
        return ""
    run_id, name = str(run.get("run_id") or ""), str(run.get("name") or "")
    if name and name != "untitled" and run_id:
        head = f"Run {name} ({run_id})"
    else:
        head = f"Run {run_id or name}".rstrip()
    workload, target = run.get("workload"), run.get("target")
    parts = [head if head != "Run" else ""]
    if workload and target:
        parts.append(f"{workload} on {target}")
    else:
        parts.append(str(target or workload or ""))
    parts.append(str(run.get("dataset") or ""))
    if run.get("cache"):
        parts.append(f"cache {run['cache']}")
    when = run.get("created_at")
    if when is not None and str(when) not in ("", "NaT", "None"):
        parts.append(when.strftime("%Y-%m-%d %H:%M") if hasattr(when, "strftime") else str(when)[:16])
    # what a reader of the slide must know of its figures (steps too short, a busy machine): said on it
    warnings = [f"⚠ {w}" for w in run.get("warnings") or ()]
    return "\n".join([" · ".join(p for p in parts if p), *warnings])


def _safe(text: str) -> str:
    """Letters, digits, '.', '_' and '-' only: the rest becomes '-' (no spaces, slashes, colons)."""
    text = re.sub(r"[^A-Za-z0-9._-]+", "-", text.strip()).strip("-._")
    return re.sub(r"-{2,}", "-", text)


def suggest_filename(run: Mapping[str, Any] | None, chart_name: str, suffix: str = ".png") -> str:
    """A file name for ``chart_name`` of ``run`` (a run record, or None when no run is shown):
    "quick-start_20260101-120000-ab12_latency.png". Safe on every OS: lower-case ASCII letters,
    digits, '.', '_' and '-', at most 120 characters before the suffix."""
    suffix = suffix if suffix.startswith(".") else f".{suffix}"
    parts = []
    if run:
        name, run_id = _safe(str(run.get("name") or "")), _safe(str(run.get("run_id") or ""))
        if name and name != "untitled":
            parts.append(name)
        if run_id:
            parts.append(run_id)
    parts.append(_safe(chart_name) or "chart")
    stem = "_".join(parts).lower()[:120].rstrip("-._")
    return f"{stem}{suffix.lower()}"


def export_folder(settings: QSettings | None = None) -> Path:
    """The folder the last export was saved to (`remember_export_folder`), if it still exists;
    else the home folder."""
    settings = settings or QSettings()
    saved = settings.value(FOLDER_KEY)
    if saved and Path(str(saved)).is_dir():
        return Path(str(saved))
    return Path.home()


def remember_export_folder(path, settings: QSettings | None = None) -> None:
    """Remember the folder of ``path`` (a file just written) for the next export dialog."""
    settings = settings or QSettings()
    settings.setValue(FOLDER_KEY, str(Path(path).parent))


def _caption_font(pixel_size: int) -> QFont:
    font = QFont(QApplication.font())
    font.setPixelSize(max(8, pixel_size))
    return font


def _caption_height(text: str, width: int, pixel_size: int) -> int:
    metrics = QFontMetrics(_caption_font(pixel_size))
    pad = max(4, pixel_size // 2)
    box = metrics.boundingRect(QRect(0, 0, max(1, width - 2 * pad), 100_000),
                               int(Qt.TextFlag.TextWordWrap | Qt.AlignmentFlag.AlignLeft), text)
    return box.height() + 2 * pad


def _draw_caption(painter: QPainter, band: QRect, text: str, pixel_size: int) -> None:
    """The caption band: the chart's background, a rule on top, the text wrapped in muted colour."""
    theme = current_theme()
    pad = max(4, pixel_size // 2)
    painter.save()
    painter.fillRect(band, QColor(theme.window))
    painter.setPen(QPen(QColor(theme.muted), 1))
    painter.drawLine(band.left(), band.top(), band.right(), band.top())
    painter.setFont(_caption_font(pixel_size))
    painter.setPen(QColor(theme.text))
    painter.drawText(band.adjusted(pad, pad, -pad, -pad),
                     int(Qt.TextFlag.TextWordWrap | Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter),
                     text)
    painter.restore()


def _caption_pixels(width: int, screen_width: int) -> int:
    """The caption's text height in pixels: the chart's text size, scaled as the export is."""
    base = QFontInfo(QApplication.font()).pixelSize() or 12
    return max(9, round(base * width / max(screen_width, 1)))


# --- PNG ---------------------------------------------------------------------------------------------

def export_png(chart, path, width: int | None = None, caption: str | None = None) -> Path:
    """Write a PNG; `width` in pixels (height keeps the chart's proportions), default as on screen.
    `caption` (e.g. `run_caption(run)`) is drawn in a band under the chart and stored in the PNG's
    text ("Description"); the chart's title is stored as "Title"."""
    path = _target(path)
    _prepare(chart)
    exporter = pg_exporters.ImageExporter(_scene_of(chart))
    if width is not None:
        if width < 16:
            raise ValueError(f"PNG width {width} px is too small (at least 16)")
        exporter.parameters()["width"] = int(width)
    image = exporter.export(toBytes=True)
    if not isinstance(image, QImage) or image.isNull():
        raise OSError(f"the PNG exporter drew nothing for {path}")
    if caption:
        screen_width = int(exporter.getSourceRect().width()) or image.width()
        pixels = _caption_pixels(image.width(), screen_width)
        band = _caption_height(caption, image.width(), pixels)
        framed = QImage(image.width(), image.height() + band, QImage.Format.Format_ARGB32)
        framed.fill(QColor(current_theme().window))
        painter = QPainter(framed)
        try:
            painter.setRenderHint(QPainter.RenderHint.TextAntialiasing)
            painter.drawImage(0, 0, image)
            _draw_caption(painter, QRect(0, image.height(), image.width(), band), caption, pixels)
        finally:
            painter.end()
        image = framed
        image.setText("Description", caption)
    if _title_of(chart):
        image.setText("Title", _title_of(chart))
    image.setText("Software", "Tickbench")
    if not image.save(str(path), "PNG"):
        raise OSError(f"cannot write {path}")
    return path


# --- SVG ---------------------------------------------------------------------------------------------

def _set_export_mode(scene, on: bool) -> None:
    for item in scene.items():
        if hasattr(item, "setExportMode"):
            item.setExportMode(on, {"antialias": True} if on else None)


def _paint_items(view: pg.GraphicsView, painter: QPainter) -> None:
    """Paint the view's scene item by item, as QGraphicsView would, but with every item's clip
    set explicitly (the SVG engine loses track of clips a paint() call restores)."""
    canvas = QRectF(view.viewport().rect())
    background = view.backgroundBrush()
    if background.style() != Qt.BrushStyle.NoBrush:
        painter.fillRect(canvas, background)
    to_device = view.viewportTransform()
    no_contents = QGraphicsItem.GraphicsItemFlag.ItemHasNoContents
    for item in view.scene().items(Qt.SortOrder.AscendingOrder):      # bottom first
        if not item.isVisible() or item.flags() & no_contents:
            continue
        opacity = item.effectiveOpacity()
        if opacity <= 0:
            continue
        option = QStyleOptionGraphicsItem()
        bounds = item.boundingRect()
        painter.save()
        painter.resetTransform()
        painter.setClipRect(canvas)                 # a clip of its own for every item, never a stale one
        painter.setTransform(item.deviceTransform(to_device))
        if item.isClipped():
            clip = item.clipPath()
            if clip.isEmpty():
                painter.restore()
                continue
            painter.setClipPath(clip)
            bounds = bounds.intersected(clip.boundingRect())
        option.exposedRect = bounds                 # text items clip themselves to this
        painter.setOpacity(opacity)
        try:
            item.paint(painter, option, None)
        finally:
            painter.restore()


def _css_fonts(svg: str) -> str:
    """Qt names the font it asked for ("Sans Serif", a Qt alias browsers do not know and draw as
    serif): name the family Qt really used, then the generic one."""
    resolved: dict[str, str] = {}

    def family(match: re.Match) -> str:
        asked = match.group(1)
        if asked not in resolved:
            real = QFontInfo(QFont(asked)).family()
            names = [n for n in dict.fromkeys((real, asked)) if n and n.lower() not in ("sans serif", "sans")]
            resolved[asked] = ", ".join([*(f"'{n}'" for n in names), "sans-serif"])
        return f'font-family="{resolved[asked]}"'

    return re.sub(r'font-family="([^"]*)"', family, svg)


def export_svg(chart, path, caption: str | None = None, size: tuple[int, int] | None = None) -> Path:
    """Write an SVG (vector: for reports and slides), sized in pixels as the chart is on screen, or
    shown at ``size`` (width, height: the drawing scales to it); `caption` is drawn in a band under
    the chart and kept as the SVG's description."""
    path = _target(path)
    _prepare(chart)
    view = _view_of(chart)
    rect = view.viewport().rect()
    pixels = _caption_pixels(rect.width(), rect.width())
    band = _caption_height(caption, rect.width(), pixels) if caption else 0
    buffer = QBuffer()
    buffer.open(QIODevice.OpenModeFlag.WriteOnly)
    generator = QSvgGenerator(QSvgGenerator.SvgVersion.Svg11)      # 1.1: clip paths (Tiny 1.2 has none)
    generator.setOutputDevice(buffer)
    generator.setSize(QSize(rect.width(), rect.height() + band))
    generator.setViewBox(QRect(0, 0, rect.width(), rect.height() + band))
    # the axes replay QPictures recorded at this resolution; any other one scales them
    generator.setResolution(QPicture().logicalDpiX())
    generator.setTitle(_title_of(chart) or "Tickbench chart")
    generator.setDescription(caption or "Exported by Tickbench")
    scene = view.scene()
    _set_export_mode(scene, True)
    painter = QPainter(generator)
    try:
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        _paint_items(view, painter)
        if band:
            painter.resetTransform()
            painter.setClipRect(QRect(0, 0, rect.width(), rect.height() + band))
            _draw_caption(painter, QRect(0, rect.height(), rect.width(), band), caption, pixels)
    finally:
        painter.end()
        _set_export_mode(scene, False)
    svg = bytes(buffer.data()).decode("utf-8")
    # pixels, not millimetres at the generator's resolution: a browser shows it at its real size
    width, height = size or (rect.width(), rect.height() + band)
    svg = re.sub(r'<svg width="[^"]*" height="[^"]*"', f'<svg width="{width}" height="{height}"', svg, count=1)
    path.write_text(_css_fonts(bake_non_scaling_strokes(svg)), encoding="utf-8")
    return path


# --- CSV ---------------------------------------------------------------------------------------------

def _axis_unit(axis: pg.AxisItem) -> tuple[str, float]:
    """(unit as the axis shows it, factor from base units): ("ms", 1000.0), ("M rows/s", 1e-6)."""
    units = axis.labelUnits or ""
    scale = float(axis.autoSIPrefixScale) if axis.autoSIPrefix else 1.0
    if not units:
        return "", 1.0
    prefix = axis.labelUnitPrefix if scale != 1.0 else ""
    word_unit = len(units.split("/")[0]) > 1            # as UnitAxis: "M rows/s", "MB/s"
    return f"{prefix}{' ' if prefix and word_unit else ''}{units}", scale


def _header(name: str, base_unit: str, shown_unit: str) -> str:
    """"p50" + "ms" -> "p50 ms"; a series named after its unit ("rows/s") -> just "M rows/s"."""
    name = name.strip()
    if base_unit and (name == base_unit or name.endswith(" " + base_unit)):
        name = name[: len(name) - len(base_unit)].strip()
    return " ".join(p for p in (name, shown_unit) if p)


def _number(value: float) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    value = float(value)
    return str(int(value)) if value.is_integer() and abs(value) < 1e15 else f"{value:.10g}"


def _line_series(chart) -> tuple[str, list[tuple[str, np.ndarray, np.ndarray]]]:
    """(x header, [(series header, xs, ys in the axis' shown unit)])."""
    plot = _plot_item_of(chart)
    left = plot.getAxis("left")
    base_y = left.labelUnits or ""
    shown_y, scale = _axis_unit(left)
    series: list[tuple[str, np.ndarray, np.ndarray]] = []
    if isinstance(chart, SweepChart):
        x_header = "users"
        for reference in (False, True):
            for name in chart.series_names(reference=reference):
                xs, ys, _hollow = chart.plotted_points(name, reference=reference)
                label = f"{name} published" if reference else name
                series.append((_header(label, base_y, shown_y), xs, ys * scale))
        return x_header, series
    bottom = plot.getAxis("bottom")
    shown_x, x_scale = _axis_unit(bottom)
    x_header = " ".join(p for p in (bottom.labelText, shown_x) if p) or "x"
    if isinstance(chart, TimeSeriesChart):
        for name in chart.series_names():
            xs, ys = chart.series_data(name)
            series.append((_header(name, base_y, shown_y), xs * x_scale, ys * scale))
        return x_header, series
    for i, item in enumerate(plot.listDataItems()):
        xs, ys = item.getOriginalDataset()
        if xs is None:
            continue
        name = item.name() or f"series {i + 1}"
        series.append((_header(name, base_y, shown_y), np.asarray(xs, float) * x_scale,
                       np.asarray(ys, float) * scale))
    return x_header, series


def _write_line_csv(chart, path: Path) -> None:
    x_header, series = _line_series(chart)
    xs_all = np.unique(np.concatenate([s[1] for s in series])) if series else np.empty(0)
    columns = []
    for _header_text, xs, ys in series:
        by_x = {}
        for x, y in zip(xs.tolist(), ys.tolist()):
            by_x[x] = y               # a repeated x keeps its last value, as the line ends there
        columns.append(by_x)
    with open(path, "w", newline="", encoding="utf-8") as f:
        writer = csv.writer(f)
        writer.writerow([spreadsheet_safe(header) for header in (x_header, *(s[0] for s in series))])
        for x in xs_all.tolist():
            writer.writerow([_number(x), *(_number(c.get(x)) for c in columns)])


def _table_columns(chart, rows: list[dict]) -> tuple[list[str], list[list]]:
    """Bar chart rows with seconds and bytes in the unit its bar axis shows, headers in words."""
    fields = list(rows[0]) if rows else ["label", "kind", "phase", "seconds"]
    axis = _plot_item_of(chart).getAxis("bottom")
    shown, scale = _axis_unit(axis)
    base = axis.labelUnits or ""
    kinds = {key: text for key, text, _colour in FOOTPRINT_KINDS} if isinstance(chart, FootprintChart) else {}
    headers, convert = [], []
    for field in fields:
        is_seconds = base == "s" and (field == "seconds" or field.endswith("_s"))
        is_bytes = base == "B" and (field == "bytes" or field.endswith("_bytes"))
        if is_seconds or is_bytes:
            stem = "" if field in ("seconds", "bytes") else field.rsplit("_", 1)[0]
            stem = kinds.get(field, stem.replace("_", " "))
            headers.append(" ".join(p for p in (stem, shown or base) if p))
            convert.append(scale)
        else:
            headers.append({"csv_ratio": "CSV / disk", "logical_ratio": "memory / disk"}.get(
                field, field.replace("_", " ")))
            convert.append(None)
    table = []
    for row in rows:
        cells = []
        for field, factor in zip(fields, convert):
            value = row.get(field)
            if factor is not None and isinstance(value, (int, float)) and not isinstance(value, bool):
                cells.append(_number(value * factor))
            else:                  # a label is text: a spreadsheet shows it, never runs it
                cells.append("" if value is None else spreadsheet_safe(value))
        table.append(cells)
    return headers, table


def export_csv(chart, path) -> Path:
    """Write the chart's data in the units its axes show. Line charts: one x column, then one
    column per series ("users", "duckdb M rows/s"; "elapsed s", "p50 ms"). Bar charts: one row
    per bar (their `table_rows()`)."""
    path = _target(path)
    _prepare(chart)
    if hasattr(chart, "table_rows"):
        headers, table = _table_columns(chart, chart.table_rows())
        with open(path, "w", newline="", encoding="utf-8") as f:
            writer = csv.writer(f)
            writer.writerow([spreadsheet_safe(header) for header in headers])
            writer.writerows(table)
        return path
    _write_line_csv(chart, path)
    return path


EXPORTERS = {"png": export_png, "svg": export_svg, "csv": export_csv}


def export_chart(chart, path, caption: str | None = None) -> Path:
    """Pick the format from the file suffix (.png, .svg, .csv); `caption` goes under the chart in
    PNG and SVG files (a CSV holds data only)."""
    suffix = Path(path).suffix.lower().lstrip(".")
    if suffix not in EXPORTERS:
        raise ValueError(f"cannot export to {Path(path).name}: use a .png, .svg or .csv file name")
    if suffix == "csv":
        return export_csv(chart, path)
    return EXPORTERS[suffix](chart, path, caption=caption)
