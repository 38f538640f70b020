"""Exporters: PNG, SVG and CSV files that are valid and hold the chart's data."""
import csv
import math
import re
import xml.etree.ElementTree as ET

import pandas as pd
import pytest
from PySide6.QtCore import QPointF, QSettings
from PySide6.QtGui import QColor, QImage

from widgets.charts.breakdown import BreakdownChart
from widgets.charts.exporters import (export_chart, export_csv, export_folder, export_png, export_svg,
                               remember_export_folder, run_caption, suggest_filename)
from widgets.charts.live import TimeSeriesChart
from widgets.charts.sweep import SweepChart
from widgets.common.theme import phase_colour, series_colour

RUN = {"run_id": "20260101-120000-ab12", "name": "Quick start: 1/2 users", "target": "duckdb",
       "workload": "read-day", "dataset": "taq", "cache": "cold",
       "created_at": pd.Timestamp("2026-01-01 12:00")}


@pytest.fixture
def chart(make_widget):
    c = make_widget(TimeSeriesChart, "Latency", y_label="latency", y_unit="s", size=(640, 400))
    c.extend("p50", [0, 1, 2], [0.010, 0.012, 0.011])
    c.extend("p99", [0, 1, 2], [0.030, 0.050, 0.040])
    return c


@pytest.fixture
def sweep(make_widget):
    s = make_widget(SweepChart, size=(900, 560))
    s.set_series("duckdb", [1, 2, 4, 8], [2.1e6, 3.9e6, 6.5e6, 7.0e6], [True, True, True, False])
    s.set_series("report 003", [1, 2, 4, 8, 16], [1e6, 2e6, 3.5e6, 5e6, 6e6], reference=True)
    return s


# --- reading an SVG as a browser would place it ----------------------------------------------------

def _matrix(text: str | None) -> tuple[float, ...]:
    if not text:
        return (1, 0, 0, 1, 0, 0)
    found = re.fullmatch(r"\s*matrix\(([^)]*)\)\s*", text)
    assert found, f"unexpected transform {text!r}"
    return tuple(float(v) for v in found.group(1).split(","))


def _compose(outer, inner):
    a, b, c, d, e, f = outer
    a2, b2, c2, d2, e2, f2 = inner
    return (a * a2 + c * b2, b * a2 + d * b2, a * c2 + c * d2, b * c2 + d * d2,
            a * e2 + c * f2 + e, b * e2 + d * f2 + f)


def _walk(element, matrix=(1, 0, 0, 1, 0, 0), clips=()):
    """(element, its transform to the canvas, ids of the clip paths around it), document order."""
    tag = element.tag.rsplit("}", 1)[-1]
    if tag == "defs":
        return
    matrix = _compose(matrix, _matrix(element.get("transform")))
    clip = element.get("clip-path")
    if clip:
        clips = (*clips, clip[len("url(#"):-1])
    yield element, matrix, clips
    for child in element:
        yield from _walk(child, matrix, clips)


def _numbers(d: str) -> list[float]:
    return [float(v) for v in re.findall(r"-?\d+(?:\.\d+)?(?:e[-+]?\d+)?", d)]


def _markers(root) -> list[tuple[float, float]]:
    """Centres of the scatter markers: closed paths (circles, squares) 4-30 px square on the canvas."""
    centres = []
    for element, (a, b, c, d, e, f), _clips in _walk(root):
        path = element.get("d", "")
        if element.tag.endswith("path") and path.rstrip().endswith("Z") and b == c == 0:
            values = _numbers(path)
            xs = [a * x + e for x in values[0::2]]
            ys = [d * y + f for y in values[1::2]]
            width, height = max(xs) - min(xs), max(ys) - min(ys)
            if 4 <= width <= 30 and abs(width - height) < 1e-3:
                centres.append(((max(xs) + min(xs)) / 2, (max(ys) + min(ys)) / 2))
    return centres


def _clip_rects(root) -> dict[str, tuple[float, float, float, float]]:
    """Clip path id -> (left, top, right, bottom) of its path."""
    rects = {}
    for clip in root.iter():
        if clip.tag.endswith("clipPath"):
            values = [v for p in clip for v in _numbers(p.get("d", ""))]
            xs, ys = values[0::2], values[1::2]
            rects[clip.get("id")] = (min(xs), min(ys), max(xs), max(ys))
    return rects


def _device_rect(chart, item):
    rect = chart.graphics.viewportTransform().mapRect(item.sceneBoundingRect())
    return rect.left(), rect.top(), rect.right(), rect.bottom()


# --- PNG -------------------------------------------------------------------------------------------

def test_png_has_the_requested_width_and_the_chart_proportions(chart, tmp_path):
    path = export_png(chart, tmp_path / "latency.png", width=1200)
    image = QImage(str(path))
    assert not image.isNull()
    assert image.width() == 1200
    view = chart.graphics
    assert image.height() == pytest.approx(1200 * view.height() / view.width(), abs=2)


def test_png_default_size_is_the_on_screen_size(chart, tmp_path):
    image = QImage(str(export_png(chart, tmp_path / "a.png")))
    assert (image.width(), image.height()) == (chart.graphics.width(), chart.graphics.height())


def test_png_caption_names_the_run_in_a_band_under_the_chart(chart, tmp_path):
    caption = run_caption(RUN)
    plain = QImage(str(export_png(chart, tmp_path / "plain.png")))
    image = QImage(str(export_png(chart, tmp_path / "captioned.png", caption=caption)))
    assert image.width() == plain.width()
    band = image.height() - plain.height()
    assert 12 <= band <= 80                               # one line of text, not a page
    background = QColor("#FFFFFF").rgb()
    text_pixels = sum(image.pixel(x, y) != background
                      for y in range(plain.height() + 3, image.height()) for x in range(0, image.width(), 2))
    assert text_pixels > 50                               # the caption is drawn, not only stored
    assert image.text("Description") == caption           # and kept in the PNG's text chunk
    assert image.text("Title") == "Latency"


# --- SVG -------------------------------------------------------------------------------------------

def test_svg_is_xml_with_the_series_and_labels(chart, tmp_path):
    path = export_svg(chart, tmp_path / "latency.svg")
    root = ET.parse(path).getroot()
    assert root.tag.endswith("svg")
    texts = {"".join(e.itertext()).strip() for e in root.iter() if e.tag.endswith("text")}
    assert {"p50", "p99", "Latency"} <= texts                          # legend and title
    # a line in each series colour (the stroke sits on the element or on its group)
    stroked = {e.get("stroke", "").upper() for e in root.iter()
               if any(c.tag.endswith(("path", "polyline")) for c in [e, *e])}
    assert {series_colour(0).upper(), series_colour(1).upper()} <= stroked


def test_svg_draws_each_marker_once_on_its_point(sweep, tmp_path):
    root = ET.parse(export_svg(sweep, tmp_path / "sweep.svg")).getroot()
    assert not [e for e in root.iter() if e.tag.endswith("image")]     # vector markers, no bitmaps
    view_box = sweep.plot_item.getViewBox()
    to_device = sweep.graphics.viewportTransform()
    expected = [to_device.map(view_box.mapViewToScene(QPointF(math.log10(u), v)))
                for u, v in [(1, 2.1e6), (2, 3.9e6), (4, 6.5e6), (8, 7.0e6),
                             (1, 1e6), (2, 2e6), (4, 3.5e6), (8, 5e6), (16, 6e6)]]
    left, top, right, bottom = _device_rect(sweep, view_box)
    legend = _device_rect(sweep, sweep.legend)
    markers = [(x, y) for x, y in _markers(root)
               if not (legend[0] <= x <= legend[2] and legend[1] <= y <= legend[3])]   # legend keys
    assert len(markers) == len(expected)                               # not 3 per point
    for point in expected:
        assert any(abs(x - point.x()) < 1.5 and abs(y - point.y()) < 1.5 for x, y in markers), \
            f"no marker at {point.x():.1f}, {point.y():.1f}; markers at {markers}"
    assert all(left <= x <= right and top <= y <= bottom for x, y in markers)


def _pixels_near(image: QImage, colour: str, within: int = 40) -> int:
    import numpy as np
    image = image.convertToFormat(QImage.Format.Format_RGB888)
    rgb = np.frombuffer(image.constBits(), np.uint8).reshape(image.height(), image.bytesPerLine())
    rgb = rgb[:, :image.width() * 3].reshape(image.height(), image.width(), 3).astype(int)
    target = QColor(colour)
    distance = np.abs(rgb - [target.red(), target.green(), target.blue()]).sum(axis=2)
    return int((distance <= within).sum())


def test_svg_is_drawn_by_another_renderer_as_qt_draws_it(chart, make_widget, tmp_path):
    """resvg, like librsvg (GNOME viewers, ImageMagick), ignores non-scaling strokes: a pen drawn
    in data coordinates grew with the data's scale into blobs, a bar's outline covered the bar.
    Each series' colour covers as many pixels in resvg's drawing as in the PNG export."""
    import resvg_py
    bars = make_widget(BreakdownChart, "Phases", size=(640, 240))
    bars.set_data({"duckdb": {"io": 0.002, "decode": 0.008}, "parquet": {"io": 0.004, "decode": 0.010}})
    for name, widget, colours in (("lines", chart, [series_colour(0), series_colour(1)]),
                                  ("bars", bars, [phase_colour("io"), phase_colour("decode")])):
        qt = QImage(str(export_png(widget, tmp_path / f"{name}.png")))
        drawn = QImage.fromData(bytes(resvg_py.svg_to_bytes(svg_path=str(export_svg(widget, tmp_path / f"{name}.svg")))))
        assert (drawn.width(), drawn.height()) == (qt.width(), qt.height())
        for colour in colours:
            in_qt, elsewhere = _pixels_near(qt, colour), _pixels_near(drawn, colour)
            assert in_qt > 100 and 0.6 < elsewhere / in_qt < 1.6, f"{name} {colour}: {elsewhere} px vs Qt's {in_qt}"


def test_svg_axes_line_up_with_the_data_and_size_is_in_pixels(sweep, tmp_path):
    root = ET.parse(export_svg(sweep, tmp_path / "sweep.svg")).getroot()
    assert (root.get("width"), root.get("height")) == (str(sweep.graphics.width()), str(sweep.graphics.height()))
    view_box = sweep.plot_item.getViewBox()
    x16 = sweep.graphics.viewportTransform().map(view_box.mapViewToScene(QPointF(math.log10(16), 0))).x()
    ticks = [matrix[0] * float(e.get("x")) + matrix[4] for e, matrix, _ in _walk(root)
             if e.tag.endswith("text") and "".join(e.itertext()).strip() == "16"]
    assert ticks and abs(ticks[0] - x16) < 20       # the "16" tick label under the point at 16 users


def test_svg_clips_lines_to_the_plot_area(chart, tmp_path):
    chart.plot_item.setXRange(0.5, 1.5, padding=0)       # zoomed in: the lines run past both edges
    chart.render_now()
    root = ET.parse(export_svg(chart, tmp_path / "zoomed.svg")).getroot()
    rects = _clip_rects(root)
    left, top, right, bottom = _device_rect(chart, chart.plot_item.getViewBox())
    stroked = [g for g in root.iter() if g.get("stroke", "").upper() == series_colour(0).upper()]
    lines = [(e, clips) for e, _m, clips in _walk(root)
             if e.tag.endswith(("path", "polyline")) and any(e in list(g) for g in stroked)]
    assert len(lines) >= 2          # the p50 segments (and its legend key, which sits over the plot)
    for _element, clips in lines:
        assert clips, "a series line without a clip path"
        l, t, r, b = rects[clips[-1]]
        assert l >= left - 1 and r <= right + 1 and t >= top - 1 and b <= bottom + 1


def test_svg_fonts_are_ones_a_browser_knows(chart, tmp_path):
    text = export_svg(chart, tmp_path / "fonts.svg").read_text()
    families = re.findall(r'font-family="([^"]*)"', text)
    assert families and all(f.endswith("sans-serif") for f in families)
    assert 'font-family="Sans Serif"' not in text


def test_svg_caption_is_drawn_and_described(chart, tmp_path):
    caption = run_caption(RUN)
    root = ET.parse(export_svg(chart, tmp_path / "c.svg", caption=caption)).getroot()
    assert int(root.get("height")) > chart.graphics.height()
    texts = ["".join(e.itertext()).strip() for e in root.iter() if e.tag.endswith("text")]
    assert caption in " ".join(texts)                     # wrapped to the chart's width
    assert [e.text for e in root if e.tag.endswith("desc")] == [caption]


# --- CSV -------------------------------------------------------------------------------------------

def test_csv_of_a_line_chart_has_one_x_column_and_the_units_of_the_axis(chart, tmp_path):
    path = export_csv(chart, tmp_path / "latency.csv")
    rows = list(csv.reader(path.open()))
    assert chart.axis_label("left") == "latency (ms)"
    assert rows[0] == ["elapsed s", "p50 ms", "p99 ms"]             # ms, as the axis shows
    assert len(rows) == 4
    assert [float(v) for v in rows[2]] == [1, 12, 50]


def test_csv_is_written_even_before_the_first_repaint(make_widget, tmp_path):
    hidden = make_widget(TimeSeriesChart, show=False)
    hidden.extend("a", [0, 1], [5, 6])
    rows = list(csv.reader(export_csv(hidden, tmp_path / "h.csv").open()))
    assert [[float(v) for v in r] for r in rows[1:]] == [[0, 5], [1, 6]]


def test_csv_of_a_sweep_has_plain_headers_and_users_not_their_logarithm(sweep, tmp_path):
    rows = list(csv.reader(export_csv(sweep, tmp_path / "s.csv").open()))
    assert rows[0] == ["users", "duckdb M rows/s", "report 003 published M rows/s"]
    assert rows[1:] == [["1", "2.1", "1"], ["2", "3.9", "2"], ["4", "6.5", "3.5"], ["8", "7", "5"],
                        ["16", "", "6"]]        # one users column; duckdb has no 16-user point


def test_bar_chart_csv_has_one_row_per_phase_in_the_axis_unit(make_widget, tmp_path):
    bars = make_widget(BreakdownChart)
    bars.set_data({"pickle": {"io": 0.005, "decode": 0.0025}}, published={"pickle": {"io + decode": 0.02}})
    rows = list(csv.DictReader(export_csv(bars, tmp_path / "b.csv").open()))
    assert bars.axis_label("bottom").endswith("(ms)")
    assert [(r["label"], r["kind"], r["phase"], float(r["ms"])) for r in rows] == [
        ("pickle", "measured", "io", 5.0), ("pickle", "measured", "decode", 2.5),
        ("pickle", "published", "io + decode", 20.0)]
    image = QImage(str(export_png(bars, tmp_path / "b.png", width=800)))
    assert image.width() == 800


# --- names, captions, folders ----------------------------------------------------------------------

def test_run_caption_names_run_target_and_cache():
    assert run_caption(RUN) == ("Run Quick start: 1/2 users (20260101-120000-ab12) · read-day on duckdb · "
                                "taq · cache cold · 2026-01-01 12:00")
    assert run_caption({"run_id": "r1", "name": "untitled", "target": "parquet"}) == "Run r1 · parquet"
    assert run_caption(None) == ""


def test_suggested_file_name_is_the_run_and_the_chart_in_safe_characters():
    name = suggest_filename(RUN, "Compare: throughput vs users", ".svg")
    assert name == "quick-start-1-2-users_20260101-120000-ab12_compare-throughput-vs-users.svg"
    assert re.fullmatch(r"[a-z0-9._-]+", name)
    assert suggest_filename(None, "Latency") == "latency.png"
    assert suggest_filename({"run_id": "r/../x", "name": "untitled"}, "Rows per second", "csv") == \
        "r-..-x_rows-per-second.csv"
    assert len(suggest_filename({"run_id": "x" * 300}, "Latency")) <= 124


def test_export_folder_is_remembered(tmp_path):
    settings = QSettings()
    assert export_folder(settings).is_dir()
    remember_export_folder(tmp_path / "chart.png", settings)
    assert export_folder(settings) == tmp_path
    remember_export_folder(tmp_path / "gone" / "chart.png", settings)
    assert export_folder(settings) != tmp_path / "gone"            # a folder since removed: home


def test_export_chart_picks_the_format_and_refuses_others(chart, tmp_path):
    assert export_chart(chart, tmp_path / "x.SVG").read_text().lstrip().startswith("<")
    assert export_chart(chart, tmp_path / "x.csv", caption="ignored").read_text().startswith("elapsed s,")
    with pytest.raises(ValueError, match="use a .png, .svg or .csv"):
        export_chart(chart, tmp_path / "x.pdf")
    with pytest.raises(FileNotFoundError, match="does not exist"):
        export_png(chart, tmp_path / "missing" / "x.png")
    with pytest.raises(TypeError, match="cannot export str"):
        export_png("not a chart", tmp_path / "y.png")
