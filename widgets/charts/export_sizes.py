"""Charts fit for slides and print: a chart re-laid out at the size asked (1920x1080, 3840x2160,
or as shown), its legend inside the plot, written as PNG (with its DPI), SVG, vector PDF or CSV,
or copied to the clipboard as an image.

How a size is honoured: the chart's view is resized to a *layout size* of about 960x540 (the
size's aspect, never smaller than the chart's fonts need) and the scene is drawn into the image
with a scale of (asked width / layout width). So a 1920x1080 slide is the chart laid out at
960x540 and drawn twice as fine, and 3840x2160 the same chart four times as fine: the text is a
sensible share of the slide (an 18 pt font on a 1080 p slide), not a tiny on-screen chart's
text blown up, nor a 4K canvas with 9 pt text lost in it. Nothing is upscaled: lines, text and
markers (vector paths while exporting) are drawn at the output resolution.

Legend inside: a chart whose keys sit in a row under the plot (latency, sweep, bars) gets, for the
export only, a pyqtgraph LegendItem anchored in the ViewBox, and the view gains room for it (a
band on top of a line chart, a strip on the right of a bar chart) so it covers no data. The chart
on screen is restored afterwards: its size, legend and view range.

DPI is metadata for print (the PNG's physical size); it does not change the pixels.
"""
from __future__ import annotations

import re
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pyqtgraph as pg
from PySide6.QtCore import QEvent, QMarginsF, QPointF, QRect, QRectF, QSize, QSizeF, Qt
from PySide6.QtGui import QColor, QGuiApplication, QImage, QPageLayout, QPageSize, QPainter, QPdfWriter
from PySide6.QtGui import QResizeEvent
from PySide6.QtWidgets import QApplication, QGraphicsWidget

from widgets.charts.base import BarChartBase, ChartBase
from widgets.charts.items import PlainLegend
from widgets.charts.exporters import (_caption_height, _caption_pixels, _draw_caption, _prepare, _set_export_mode,
                               _target, _title_of, _view_of, export_csv, export_svg)
from widgets.common.theme import current_theme

LAYOUT_WIDTH = 960          # a slide's chart is laid out this wide (pixels at scale 1), then drawn finer
LAYOUT_HEIGHT = 540
AS_SHOWN = "as shown"
SIZE_PRESETS: dict[str, tuple[int, int] | None] = {
    "1920x1080 (slide, Full HD)": (1920, 1080),
    "3840x2160 (slide, 4K)": (3840, 2160),
    f"{AS_SHOWN} (the chart's size on screen)": None,
}
DPI_CHOICES = (96, 150, 300, 600)
FORMATS = ("png", "svg", "pdf", "csv")
MAX_SIDE = 16384            # QImage and memory: a 16k x 16k ARGB image is 1 GB already
_LEGEND_MARGIN = 10         # pixels (layout size) between the legend and the plot's edges


@dataclass(frozen=True)
class ExportOptions:
    """What the user asked of an export: the size in pixels (None: as shown) and the DPI for print.
    `scale` fixes how much finer than its layout the chart is drawn (a report's chart: laid out as
    on screen, drawn twice as fine); None lays a slide size out at about 960x540."""

    size: tuple[int, int] | None = None
    dpi: int = 96
    scale: float | None = None


def parse_size(text: str) -> tuple[int, int]:
    """"1920x1080" (or "1920X1080", "1920×1080") -> (1920, 1080); a clear ValueError otherwise."""
    match = re.fullmatch(r"\s*(\d{1,6})\s*[xX×]\s*(\d{1,6})\s*", str(text))
    if not match:
        raise ValueError(f"size {text!r}: expected WIDTHxHEIGHT in pixels, e.g. 1920x1080")
    width, height = int(match.group(1)), int(match.group(2))
    if not (64 <= width <= MAX_SIDE and 64 <= height <= MAX_SIDE):
        raise ValueError(f"size {text!r}: each side must be 64 to {MAX_SIDE} pixels")
    return width, height


def layout_scale(width: int, height: int) -> float:
    """How much finer than its layout the chart is drawn: 2 for 1920x1080, 4 for 3840x2160, and
    never below 1 (a small export is laid out at its own size)."""
    return max(1.0, min(width / LAYOUT_WIDTH, height / LAYOUT_HEIGHT))


# --- laying the chart out at a size, legend inside -------------------------------------------------

def _resize_view(chart, size: QSize) -> None:
    view = _view_of(chart)
    before = view.size()
    view.resize(size)
    if not view.isVisible():     # a hidden widget gets its resize events only when shown: lay out now
        QApplication.sendEvent(view, QResizeEvent(size, before))        # the scroll area sizes its viewport,
        viewport = view.viewport()                                      # whose resize lays the scene out
        QApplication.sendEvent(viewport, QResizeEvent(viewport.size(), before))
    if isinstance(chart, ChartBase):    # the chart wraps its note and names its bars to the view's width
        QApplication.sendEvent(chart, QResizeEvent(chart.size(), chart.size()))
    _settle(chart)


def _settle(chart) -> None:
    """Lay the scene out now (no event loop: the window must not paint a half-resized chart)."""
    view = _view_of(chart)
    for _ in range(3):
        if isinstance(chart, ChartBase):
            chart.render_now()          # bar labels that fit depend on the width just set
        _paint_to_measure(view)
        for item in view.scene().items():       # the plot's own layout takes the widths the axes found
            if isinstance(item, QGraphicsWidget):
                QApplication.sendPostedEvents(item, QEvent.Type.LayoutRequest)
        central = view.centralWidget
        if central is not None and hasattr(central, "layout") and central.layout is not None:
            central.layout.activate()
        view.scene().prepareForPaint()


def _paint_to_measure(view) -> None:
    """Paint the scene once where nobody sees it: pyqtgraph's axes learn how wide their tick labels
    are while painting them, and an axis never painted (a chart on a tab not in front) has no room
    for its labels, which it then leaves out of the export."""
    scratch = QImage(max(1, view.width()), max(1, view.height()), QImage.Format.Format_ARGB32)
    painter = QPainter(scratch)
    try:
        view.scene().render(painter, QRectF(scratch.rect()), view.sceneRect())
    finally:
        painter.end()


def _legend_entries(legend) -> list[tuple[object, str]]:
    return [(_key_item(sample.item), getattr(label, "full_text", label.text)) for sample, label in legend.items]


def _key_item(item):
    """What a key draws: a sweep's series has a brush per point (hollow while a step runs), and the
    legend's sample drew pyqtgraph's default grey-blue; its key gets the first point's brush."""
    opts = getattr(item, "opts", {})
    brushes = opts.get("symbolBrush") if isinstance(item, pg.PlotDataItem) else None
    if not isinstance(brushes, list) or not brushes:
        return item
    # one point: pyqtgraph passes a symbol's brush on to its scatter only once there is data
    return pg.PlotDataItem([0.0], [0.0], pen=opts.get("pen"), symbol=opts.get("symbol"), symbolSize=opts.get("symbolSize"),
                           symbolPen=opts.get("symbolPen"), symbolBrush=brushes[0])


def _fit_columns(legend: pg.LegendItem, count: int, max_width: float) -> None:
    """As many keys a row as fit in `max_width` (a line chart's legend: one band on top)."""
    for columns in range(count, 0, -1):
        legend.setColumnCount(columns)
        legend.updateSize()
        if legend.layout.preferredWidth() <= max_width:
            return


@contextmanager
def _legend_inside(chart):
    """For the export only: the chart's keys in a LegendItem anchored in the ViewBox, with room
    made for it in the view's range; everything put back afterwards."""
    old = getattr(chart, "legend", None)
    plot = getattr(chart, "plot_item", None)
    if old is None or plot is None or not old.isVisible() or not old.items:
        yield None
        return
    box = plot.getViewBox()
    entries = _legend_entries(old)
    layout = chart.graphics.ci
    in_row = old.parentItem() is layout or old in getattr(layout, "items", {})
    theme = current_theme()
    legend = PlainLegend(offset=None, brush=pg.mkBrush(theme.window + "E0"), pen=pg.mkPen(theme.muted, width=1),
                           labelTextColor=theme.text, labelTextSize=old.opts.get("labelTextSize") or "9pt")
    # pyqtgraph's legend ignores transformations (it keeps its size as the view zooms): the export
    # scales the whole scene, and an unscaled legend read half the size of the axes' text
    legend.setFlag(legend.GraphicsItemFlag.ItemIgnoresTransformations, False)
    legend.setParentItem(box)
    for item, text in entries:
        legend.addItem(item, text)      # the legend's samples hold their items: proxies stay alive
    state = box.getState(copy=True)
    old.setVisible(False)
    if in_row:
        layout.removeItem(old)
    try:
        _settle(chart)
        bars = isinstance(chart, BarChartBase)
        width, height = box.width(), box.height()
        if bars:
            legend.setColumnCount(1 if len(entries) * 22 < height * 0.8 else 2)
            legend.updateSize()
        else:
            _fit_columns(legend, len(entries), width - 2 * _LEGEND_MARGIN)
        legend_w, legend_h = legend.layout.preferredWidth(), legend.layout.preferredHeight()
        legend.anchor(itemPos=(1, 0), parentPos=(1, 0), offset=(-_LEGEND_MARGIN, _LEGEND_MARGIN))
        (x0, x1), (y0, y1) = box.viewRange()
        if bars and legend_w + 2 * _LEGEND_MARGIN > width * 0.5:
            # too wide for a strip beside the bars (long keys): a band under the last bar instead
            legend.anchor(itemPos=(1, 1), parentPos=(1, 1), offset=(-_LEGEND_MARGIN, -_LEGEND_MARGIN))
            room = max(height - legend_h - 2 * _LEGEND_MARGIN, height * 0.4)
            box.setYRange(y0, y0 + (y1 - y0) * height / room, padding=0)
        elif bars:     # a strip on the right, beyond the longest bar and its value labels
            _clear_right_of_content(chart, box, legend_w + 2 * _LEGEND_MARGIN)
        elif not box.state["logMode"][1]:     # a band on top, above the highest point
            room = max(height - legend_h - 2 * _LEGEND_MARGIN, height * 0.5)
            box.setYRange(y0, y0 + (y1 - y0) * height / room, padding=0)
        _settle_scene(chart)
        yield legend
    finally:
        legend.setParentItem(None)
        if legend.scene() is not None:
            legend.scene().removeItem(legend)
        if in_row:
            layout.addItem(old, row=1, col=0)
            layout.layout.setAlignment(old, Qt.AlignmentFlag.AlignLeft)
        old.setVisible(True)
        box.setState(state)


def _clear_right_of_content(chart, box, strip: float) -> None:
    """Widen a bar chart's x range until its bars and value labels end left of a strip `strip`
    pixels wide at the plot's right. Labels keep their size in pixels while bars scale with the
    range, so this takes a few steps."""
    limit = box.sceneBoundingRect().right() - min(strip, box.width() * 0.5)
    for _ in range(6):
        drawn = [item.sceneBoundingRect().right() for item in chart.plot_item.items if item.isVisible()]
        right = max(drawn, default=0.0)
        if right <= limit:
            return
        (x0, x1), _y = box.viewRange()
        data_right = box.mapSceneToView(QPointF(right, 0)).x()
        data_limit = box.mapSceneToView(QPointF(limit - 4, 0)).x()
        if data_limit <= x0:
            return
        box.setXRange(x0, x0 + (x1 - x0) * (data_right - x0) / (data_limit - x0), padding=0)
        _settle_scene(chart)


def _settle_scene(chart) -> None:
    view = _view_of(chart)
    view.centralWidget.layout.activate() if getattr(view.centralWidget, "layout", None) else None
    view.scene().prepareForPaint()


@contextmanager
def _lines_for_scale(chart, scale: float):
    """Data lines as thick on a 4K image as on a 1080 p one: pyqtgraph's pens are cosmetic (device
    pixels whatever the scale), so a 2 px line drawn 4 times as fine would read as a hairline."""
    factor = max(1.0, scale / 2)
    plot = getattr(chart, "plot_item", None)
    changed = []
    if plot is not None and factor > 1:
        for item in plot.listDataItems():
            pen = item.opts.get("pen") if isinstance(item, pg.PlotDataItem) else None
            if pen is None:
                continue
            pen = pg.mkPen(pen)
            if pen.isCosmetic() and pen.style() != Qt.PenStyle.NoPen:
                wider = pg.mkPen(pen)
                wider.setWidthF(max(1.0, pen.widthF()) * factor)
                changed.append((item, item.opts["pen"]))
                item.setPen(wider)
    try:
        yield
    finally:
        for item, pen in changed:
            item.setPen(pen)


@contextmanager
def _markers_for_scale(chart, scale: float):
    """A PDF's markers as large as the PNG's: pyqtgraph sizes markers in device pixels, which the
    PNG's device pixel ratio enlarges by `scale` and a PDF painter's scaling does not."""
    plot = getattr(chart, "plot_item", None)
    changed = []
    if plot is not None and scale != 1:
        for item in plot.listDataItems():
            size = item.opts.get("symbolSize") if isinstance(item, pg.PlotDataItem) and item.opts.get("symbol") else None
            if isinstance(size, (int, float)):
                # the scatter's own size, not the item's: a legend key reads the item's, and the
                # legend is scaled with the page already
                changed.append((item, size))
                item.scatter.setSize(size * scale)
    try:
        yield
    finally:
        for item, size in changed:
            item.scatter.setSize(size)


@contextmanager
def laid_out(chart, width: int, height: int):
    """The chart laid out at width x height pixels (layout size) with its legend inside; yields the
    scene rectangle to draw. The chart is as it was afterwards."""
    _prepare(chart)
    view = _view_of(chart)
    shown = view.size()
    _resize_view(chart, QSize(int(width), int(height)))
    try:
        with _legend_inside(chart):
            yield QRectF(0, 0, int(width), int(height))
    finally:
        _resize_view(chart, shown)


def _paint_scene(chart, painter: QPainter, source: QRectF, target: QRectF) -> None:
    view = _view_of(chart)
    scene = view.scene()
    painter.fillRect(target, view.backgroundBrush() if view.backgroundBrush().style() != Qt.BrushStyle.NoBrush
                     else QColor(current_theme().window))
    _set_export_mode(scene, True)        # scatter markers as vector paths, not a bitmap atlas
    try:
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        painter.setRenderHint(QPainter.RenderHint.TextAntialiasing)
        scene.render(painter, target, source, Qt.AspectRatioMode.IgnoreAspectRatio)
    finally:
        _set_export_mode(scene, False)


def _layout_size(chart, options: ExportOptions, caption: str | None) -> tuple[QSize, float, int, int]:
    """(layout size of the chart, scale, caption pixels, caption band height in output pixels)."""
    if options.size is None:
        shown = _view_of(chart).size()
        width, height = shown.width(), shown.height()
        scale = 1.0
        pixels = _caption_pixels(width, width)
        band = _caption_height(caption, width, pixels) if caption else 0
        return QSize(width, height), scale, pixels, band
    width, height = options.size
    scale = options.scale or layout_scale(width, height)
    pixels = _caption_pixels(width, round(width / scale))
    band = _caption_height(caption, width, pixels) if caption else 0
    if band > height // 3:
        raise ValueError(f"the caption needs {band} of {height} pixels: ask a taller size")
    return QSize(round(width / scale), round((height - band) / scale)), scale, pixels, band


def render_image(chart, options: ExportOptions = ExportOptions(), caption: str | None = None) -> QImage:
    """The chart as an image of exactly the size asked (as shown: the view's size plus the caption
    band), legend inside, caption band at the bottom; DPI in its physical size."""
    layout, scale, pixels, band = _layout_size(chart, options, caption)
    out_w = options.size[0] if options.size else layout.width()
    out_h = options.size[1] if options.size else layout.height() + band
    image = QImage(out_w, out_h, QImage.Format.Format_ARGB32)
    image.fill(QColor(current_theme().window))
    with laid_out(chart, layout.width(), layout.height()) as source:
        # drawn at a device pixel ratio, not through a scaled painter: Qt then widens the cosmetic
        # pens (lines, axes, grid) with everything else, where a scaled painter drew 2 px lines
        # as hairlines on a 4K image
        image.setDevicePixelRatio(scale)
        painter = QPainter(image)
        try:
            with _lines_for_scale(chart, scale):
                _paint_scene(chart, painter, source, QRectF(0, 0, out_w / scale, (out_h - band) / scale))
        finally:
            painter.end()
        image.setDevicePixelRatio(1.0)
        if band:
            painter = QPainter(image)
            try:
                _draw_caption(painter, QRect(0, out_h - band, out_w, band), caption, pixels)
            finally:
                painter.end()
    dots_per_metre = round(options.dpi / 0.0254)
    image.setDotsPerMeterX(dots_per_metre)
    image.setDotsPerMeterY(dots_per_metre)
    if caption:
        image.setText("Description", caption)
    if _title_of(chart):
        image.setText("Title", _title_of(chart))
    image.setText("Software", "Tickbench")
    return image


def export_png_sized(chart, path, options: ExportOptions = ExportOptions(), caption: str | None = None) -> Path:
    path = _target(path)
    if not render_image(chart, options, caption).save(str(path), "PNG"):
        raise OSError(f"cannot write {path}")
    return path


def export_pdf(chart, path, options: ExportOptions = ExportOptions(), caption: str | None = None) -> Path:
    """A one-page vector PDF (text, lines and markers as vectors) the size of the chart: the size
    asked at its DPI (1920x1080 at 96 DPI is 20 x 11.25 inches), laid out as the PNG is."""
    path = _target(path)
    layout, scale, pixels, band = _layout_size(chart, options, caption)
    out_w = options.size[0] if options.size else layout.width()
    out_h = options.size[1] if options.size else layout.height() + band
    writer = QPdfWriter(str(path))
    writer.setResolution(int(options.dpi))
    writer.setPageLayout(QPageLayout(QPageSize(QSizeF(out_w * 72 / options.dpi, out_h * 72 / options.dpi),
                                               QPageSize.Unit.Point, "chart", QPageSize.SizeMatchPolicy.ExactMatch),
                                     QPageLayout.Orientation.Portrait, QMarginsF(0, 0, 0, 0)))
    writer.setTitle(_title_of(chart) or "Tickbench chart")
    writer.setCreator("Tickbench")
    with laid_out(chart, layout.width(), layout.height()) as source:
        painter = QPainter()
        if not painter.begin(writer):
            raise OSError(f"cannot write {path}")
        try:
            with _lines_for_scale(chart, scale), _markers_for_scale(chart, scale):
                _paint_scene(chart, painter, source, QRectF(0, 0, out_w, out_h - band))
            if band:
                painter.resetTransform()
                _draw_caption(painter, QRect(0, out_h - band, out_w, band), caption, pixels)
        finally:
            painter.end()
    return path


def copy_to_clipboard(chart, options: ExportOptions = ExportOptions(), caption: str | None = None) -> QImage:
    """Put the chart on the clipboard as an image of the size asked (paste it into a slide)."""
    image = render_image(chart, options, caption)
    QGuiApplication.clipboard().setImage(image)
    return image


def export_chart_as(chart, path, options: ExportOptions = ExportOptions(), caption: str | None = None) -> Path:
    """Pick the format from the suffix: .png (at the size asked), .svg (a drawing of the size asked,
    laid out as the PNG is; without a size, as shown), .pdf (vector, at the size asked) or .csv
    (data only)."""
    suffix = Path(path).suffix.lower().lstrip(".")
    if suffix not in FORMATS:
        raise ValueError(f"cannot export to {Path(path).name}: use a .png, .svg, .pdf or .csv file name")
    if suffix == "csv":
        return export_csv(chart, path)
    if suffix == "svg":      # legend inside as in the others
        if options.size is None:          # as shown
            shown = _view_of(chart).size()
            with laid_out(chart, shown.width(), shown.height()):
                return export_svg(chart, path, caption=caption)
        layout, _scale, _pixels, _band = _layout_size(chart, options, caption)
        with laid_out(chart, layout.width(), layout.height()):
            return export_svg(chart, path, caption=caption, size=options.size)
    if suffix == "pdf":
        return export_pdf(chart, path, options, caption)
    return export_png_sized(chart, path, options, caption)
