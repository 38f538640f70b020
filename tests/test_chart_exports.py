"""Charts fit for slides (widgets.charts.export_sizes, app.cli.chart_export): a chart exported at a size is
that size, laid out again with its legend inside the plot, as PNG (with its DPI), vector PDF, or an
image on the clipboard; and `tickbench export RUN --chart` draws a stored run's chart without a window."""
from __future__ import annotations

import re
import subprocess
import sys
import zlib
from pathlib import Path

import numpy as np
import pyqtgraph as pg
import pytest
from PySide6.QtCore import QPointF
from PySide6.QtGui import QGuiApplication, QImage

from widgets.charts import export_sizes
from widgets.charts.breakdown import BreakdownChart
from widgets.charts.export_sizes import ExportOptions, copy_to_clipboard, export_chart_as, laid_out, parse_size
from widgets.charts.live import TimeSeriesChart
from widgets.charts.sweep import SweepChart

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture
def latency(make_widget):
    """The dashboard's latency chart as it is on screen: small, its keys in a row under the plot."""
    chart = make_widget(TimeSeriesChart, "Latency per operation", y_label="latency", y_unit="s",
                        legend_below=True, size=(324, 248))
    t = np.arange(60.0)
    for name, k in (("p50", 1), ("p95", 2), ("p99", 3)):
        chart.set_series(name, t, 0.01 * k + 0.002 * k * np.sin(t / 5))
    return chart


@pytest.fixture
def sweep(make_widget):
    chart = make_widget(SweepChart, size=(324, 248))
    chart.set_series("duckdb", [1, 2, 4, 8], [1e6, 1.9e6, 3.5e6, 3.6e6])
    chart.set_series("report 002", [1, 4, 16, 64], [1e6, 3e6, 8e6, 9e6], reference=True)
    return chart


def _legend_geometry(chart, size):
    """(legend's rectangle, the plot's rectangle, the highest data point's y) in scene pixels,
    while the chart is laid out for an export of `size`."""
    layout, _scale, _pixels, _band = export_sizes._layout_size(chart, ExportOptions(size), None)
    with laid_out(chart, layout.width(), layout.height()):
        box = chart.plot_item.getViewBox()
        legends = [c for c in box.childItems() if isinstance(c, pg.LegendItem)]
        assert len(legends) == 1
        highest = max(float(np.nanmax(item.getData()[1])) for item in chart.plot_item.listDataItems())
        return legends[0].sceneBoundingRect(), box.sceneBoundingRect(), box.mapViewToScene(QPointF(0, highest)).y()


@pytest.mark.parametrize("size", [(1920, 1080), (3840, 2160)])
@pytest.mark.parametrize("which", ["latency", "sweep"])
def test_a_chart_exported_at_a_slide_size_is_that_size_with_its_legend_inside_the_plot(
        request, which, size, tmp_path):
    chart = request.getfixturevalue(which)
    qtbot = request.getfixturevalue("qtbot")
    chart.render_now()
    qtbot.wait(50)                        # the keys' row laid out under the plot
    before = chart.graphics.grab().toImage()
    written = export_chart_as(chart, tmp_path / "chart.png", ExportOptions(size), caption="Run r1 · read-day")
    image = QImage(str(written))
    assert (image.width(), image.height()) == size
    legend, plot, highest = _legend_geometry(chart, size)
    assert plot.contains(legend), f"legend {legend} is not inside the plot {plot}"
    assert legend.bottom() < highest, "the legend covers the data: room was made for it above the highest point"
    # laid out again, not the on-screen chart blown up: the plot fills the slide's layout width
    assert plot.width() > 700
    # and the chart on screen is as it was: its size, its keys under the plot again, its picture
    assert chart.graphics.size().width() == 324 and chart.legend.isVisible()
    assert chart.legend.scene() is chart.graphics.scene()
    qtbot.wait(50)
    assert chart.graphics.grab().toImage() == before


def test_a_bar_charts_legend_goes_inside_beside_the_longest_bar(make_widget, tmp_path):
    chart = make_widget(BreakdownChart, size=(324, 248))
    chart.set_data({"duckdb": {"query": 0.2, "decode": 0.3}, "pickle": {"io": 0.1, "decode": 0.4}})
    layout, *_ = export_sizes._layout_size(chart, ExportOptions((1920, 1080)), None)
    with laid_out(chart, layout.width(), layout.height()):
        box = chart.plot_item.getViewBox()
        legend = next(c for c in box.childItems() if isinstance(c, pg.LegendItem)).sceneBoundingRect()
        assert box.sceneBoundingRect().contains(legend)
        longest_end = max(item.mapRectToScene(item.boundingRect()).right() for item in chart.bar_items())
        assert legend.left() > longest_end
    image = QImage(str(export_chart_as(chart, tmp_path / "bars.png", ExportOptions((1920, 1080)))))
    assert (image.width(), image.height()) == (1920, 1080)


def test_a_bar_charts_legend_too_wide_for_a_strip_goes_under_its_bars_and_covers_no_label(make_widget):
    """The report's published-beside-measured chart: long keys, so no strip beside the bars; the
    legend sits in a band under the last bar and hides no bar or value label."""
    import pyqtgraph as pg

    from app.report.charts import PairedShareChart

    chart = make_widget(PairedShareChart, "read users sweep",
                        "published, report 003's hardware (clusters of 1-4 servers): % of 7.02 M rows/s",
                        "measured, this machine (2 hardware threads): % of 0.172 M rows/s", size=(680, 326))
    chart.set_rows([(f"2 nodes, {n} users", share, f"{share:.3g} M rows/s", measured, f"{measured:.3g} M rows/s")
                    for n, share, measured in ((1, 29.3, 67.4), (2, 49.3, 100.0), (4, 77.8, 64.0), (8, 100.0, 69.2))])
    chart.render_now()
    with export_sizes._legend_inside(chart) as legend:
        assert legend is not None
        area = legend.sceneBoundingRect()
        assert chart.plot_item.getViewBox().sceneBoundingRect().contains(area)
        drawn = [item.sceneBoundingRect() for item in chart.plot_item.items
                 if isinstance(item, (pg.TextItem, pg.BarGraphItem)) and item.isVisible()]
        assert drawn and not [rect for rect in drawn if rect.intersects(area)]


def test_the_dpi_asked_is_recorded_in_the_png(latency, tmp_path):
    written = export_chart_as(latency, tmp_path / "print.png", ExportOptions((1920, 1080), dpi=300))
    image = QImage(str(written))
    assert round(image.dotsPerMeterX() * 0.0254) == 300 and round(image.dotsPerMeterY() * 0.0254) == 300
    assert b"pHYs" in written.read_bytes()


def test_a_pdf_export_is_one_vector_page_not_a_picture(latency, tmp_path):
    written = export_chart_as(latency, tmp_path / "chart.pdf", ExportOptions((1920, 1080)), caption="Run r1")
    data = written.read_bytes()
    assert data[:5] == b"%PDF-"
    assert b"/Subtype /Image" not in data and b"/Subtype/Image" not in data      # no bitmap in it
    assert data.count(b"/Type /Page\n") + data.count(b"/Type /Page ") + data.count(b"/Type/Page\n") >= 1
    assert b"/Font" in data                                                        # text as text
    drawn = b"".join(zlib.decompress(stream) for stream in re.findall(rb"stream\r?\n(.*?)\r?\nendstream", data, re.S)
                     if stream[:1] == b"x")
    assert len(re.findall(rb"\s(?:l|c|m|re)\n", drawn)) > 200                     # lines, grid, axes as paths


def test_copy_to_clipboard_holds_an_image_of_the_asked_size(latency):
    copy_to_clipboard(latency, ExportOptions((1920, 1080)))
    held = QGuiApplication.clipboard().image()
    assert (held.width(), held.height()) == (1920, 1080)


def test_the_text_is_drawn_finer_not_blown_up(latency, tmp_path):
    """A 4K export is the 1080 p one drawn twice as fine: the same picture, not a bigger canvas."""
    small = QImage(str(export_chart_as(latency, tmp_path / "hd.png", ExportOptions((1920, 1080)))))
    large = QImage(str(export_chart_as(latency, tmp_path / "4k.png", ExportOptions((3840, 2160)))))
    halved = large.scaled(1920, 1080)
    same = sum(small.pixelColor(x, y).lightness() // 32 == halved.pixelColor(x, y).lightness() // 32
               for x in range(0, 1920, 37) for y in range(0, 1080, 29))
    assert same / ((1920 // 37 + 1) * (1080 // 29 + 1)) > 0.9


@pytest.mark.parametrize("text, error", [("1920", "WIDTHxHEIGHT"), ("10x10", "64 to"), ("axb", "WIDTHxHEIGHT")])
def test_a_bad_size_says_what_a_size_is(text, error):
    assert parse_size("3840X2160") == (3840, 2160)
    with pytest.raises(ValueError, match=error):
        parse_size(text)


def test_export_refuses_an_unknown_extension(latency, tmp_path):
    with pytest.raises(ValueError, match=r"\.png, \.svg, \.pdf or \.csv"):
        export_chart_as(latency, tmp_path / "chart.bmp")


# --- the command line, on a real stored run --------------------------------------------------------

def _tickbench(*args: str, home: Path) -> subprocess.CompletedProcess:
    env = {"TICKBENCH_HOME": str(home), "PATH": "/usr/bin:/bin", "QT_QPA_PLATFORM": "offscreen", "COLUMNS": "200"}
    return subprocess.run([sys.executable, "-m", "app", *args], capture_output=True, text=True, timeout=240,
                          env=env, cwd=ROOT)


@pytest.fixture(scope="module")
def stored_run(tmp_path_factory):
    """A real tiny pickle read-day run over 1 and 2 users (so it has a sweep), in a results store."""
    from workloads.datasets.schema import Scale
    from workloads.results.store import ResultsStore
    from workloads.run.runner import Runner
    from workloads.scenario import Scenario

    folder = tmp_path_factory.mktemp("stored")
    store = ResultsStore(folder / "results")
    scenario = Scenario(dataset="taq", scale=Scale(days=2, rows_per_day=20_000, symbols=40), target="pickle",
                        target_config={"root": str(folder / "pickle")}, workload="read-day", users=(1, 2),
                        operations=4, cache="warm")
    result = Runner(scenario, store).run()
    assert result.status == "completed", result.message
    path = store.path
    store.close()
    return folder, path, result.run_id


def _export_sweep(stored_run, name: str, size: str) -> Path:
    """``tickbench export RUN --chart sweep --size SIZE --out NAME``, which must succeed."""
    folder, results, run_id = stored_run
    out = folder / name
    done = _tickbench("--results", str(results), "export", run_id, "--chart", "sweep", "--size", size,
                      "--out", str(out), home=folder)
    assert done.returncode == 0, done.stderr
    return out


def test_the_command_line_writes_a_stored_runs_chart_at_1920x1080(stored_run):
    run_id = stored_run[2]
    image = QImage(str(_export_sweep(stored_run, "sweep.png", "1920x1080")))
    assert (image.width(), image.height()) == (1920, 1080)
    assert run_id in image.text("Description")
    # a step too short to measure is said on the slide, under the chart, as the window says it
    from workloads.results.figures import step_figures
    from workloads.results.store import ResultsStore
    store = ResultsStore(stored_run[1])
    try:
        short = [f"⚠ {row.label}: {row.short_reason}" for row in step_figures(store, run_id).itertuples() if row.short]
    finally:
        store.close()
    assert short, "4 operations a user: the 1-user step is too short"
    assert all(line in image.text("Description").splitlines() for line in short), image.text("Description")


@pytest.mark.parametrize("args, message", [
    (["--chart", "pie", "--out", "x.png"], "has no chart 'pie'; its charts: throughput, data, latency"),
    (["--chart", "sweep", "--size", "big", "--out", "x.png"], "--size: size 'big': expected WIDTHxHEIGHT"),
    (["--chart", "sweep", "--out", "x.bmp"], "a chart is written to a .png, .svg, .pdf or .csv file"),
])
def test_the_command_line_refuses_a_bad_chart_export_in_one_line(stored_run, args, message):
    folder, results, run_id = stored_run
    args = [str(folder / a) if a.startswith("x.") else a for a in args]
    done = _tickbench("--results", str(results), "export", run_id, *args, home=folder)
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert done.returncode == 2 and len(lines) == 1 and message in lines[0], done.stderr
    if "pie" in message:
        assert "sweep" in lines[0]


def test_the_command_line_refuses_an_unknown_run(stored_run):
    folder, results, _run_id = stored_run
    done = _tickbench("--results", str(results), "export", "no-such-run", "--chart", "sweep",
                      "--out", str(folder / "x.png"), home=folder)
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert done.returncode == 2 and len(lines) == 1 and "no-such-run" in lines[0]


def test_records_export_still_works_beside_charts(stored_run, tmp_path):
    folder, results, run_id = stored_run
    done = _tickbench("--results", str(results), "export", run_id, "--out", str(tmp_path), home=folder)
    assert done.returncode == 0, done.stderr
    assert sorted(tmp_path.glob(f"{run_id}_*.csv"))


# --- the window's dialog ---------------------------------------------------------------------------

def test_the_export_dialog_offers_sizes_dpi_and_formats_and_remembers_them(qapp, light_theme):
    from PySide6.QtCore import QSettings

    from app.report.export_chart_dialog import COPY, ExportChartDialog

    settings = QSettings()
    dialog = ExportChartDialog(None, ["Latency", "Users sweep"], "Users sweep", settings)
    assert dialog.chart.currentText() == "Users sweep"
    assert [dialog.format.itemData(i) for i in range(dialog.format.count())] == ["png", "svg", "pdf", "csv"]
    dialog.size.setCurrentIndex(dialog.size.findText("3840x2160 (slide, 4K)"))
    dialog.dpi.setCurrentIndex(dialog.dpi.findText("300 DPI"))
    dialog.format.setCurrentIndex(dialog.format.findData("pdf"))
    dialog.copy_button.click()
    choice = dialog.choice()
    assert (choice.chart, choice.options, choice.format, choice.action) == (
        "Users sweep", ExportOptions((3840, 2160), 300), "pdf", COPY)
    again = ExportChartDialog(None, ["Latency"], "Latency", settings)
    assert again.choice().options == ExportOptions((3840, 2160), 300) and again.choice().format == "pdf"
    again.format.setCurrentIndex(again.format.findData("svg"))
    assert again.size.isEnabled() and not again.dpi.isEnabled()       # a drawing has a size, no DPI
    again.format.setCurrentIndex(again.format.findData("csv"))
    assert not again.size.isEnabled()          # a CSV has no picture to size


def test_the_reports_charts_are_drawn_at_print_resolution(make_widget):
    """A report's chart keeps its layout (680 px on the page) and is drawn twice as fine (192 DPI);
    a caller's own widget is embedded as it is on screen."""
    from app.report.charts import PRINT_SCALE, chart_png

    chart = make_widget(TimeSeriesChart, "Rows per second", y_unit="rows/s", size=(680, 300))
    chart.set_series("rows/s", [0, 1, 2], [10, 30, 20])
    image = QImage.fromData(chart_png(chart), "PNG")
    view = chart.graphics.size()
    assert PRINT_SCALE == 2 and (image.width(), image.height()) == (2 * view.width(), 2 * view.height())
    assert round(image.dotsPerMeterX() * 0.0254) == 192
    as_shown = QImage.fromData(chart_png(chart, scale=1), "PNG")
    assert (as_shown.width(), as_shown.height()) == (view.width(), view.height())


def test_an_svg_export_has_the_legend_inside_too_and_leaves_the_chart_as_it_was(latency, tmp_path):
    latency.resize(640, 400)
    written = export_chart_as(latency, tmp_path / "chart.svg", caption="Run r1")
    text = written.read_text(encoding="utf-8")
    assert text.startswith("<?xml") and all(f">{key}<" in text for key in ("p50", "p95", "p99"))
    assert latency.legend.isVisible() and latency.legend.scene() is latency.graphics.scene()


@pytest.mark.parametrize("size", [(1280, 720), (1920, 1080)])
def test_an_svg_export_at_a_size_is_that_size(latency, tmp_path, size):
    latency.resize(640, 400)
    written = export_chart_as(latency, tmp_path / "chart.svg", ExportOptions(size), caption="Run r1")
    text = written.read_text(encoding="utf-8")
    root = _svg_root(text)
    assert (int(root["width"]), int(root["height"])) == size
    layout, *_ = export_sizes._layout_size(latency, ExportOptions(size), "Run r1")
    assert root["viewBox"].split()[2] == str(layout.width())     # laid out as the PNG of that size, then scaled
    assert all(f">{key}<" in text for key in ("p50", "p95", "p99"))
    assert latency.graphics.size().width() == 640     # the chart on screen as it was


def test_the_command_line_writes_an_svg_at_the_size_asked(stored_run):
    root = _svg_root(_export_sweep(stored_run, "sweep.svg", "1280x720").read_text(encoding="utf-8"))
    assert (root["width"], root["height"]) == ("1280", "720")


def _svg_root(text: str) -> dict[str, str]:
    return dict(re.findall(r'(\w+)="([^"]*)"', re.search(r"<svg\b[^>]*>", text)[0]))


def test_a_sweeps_keys_wear_their_series_colour(sweep):
    """A sweep's series have a brush per point; the exported legend's keys take their series' colour
    (pyqtgraph's own sample drew its default grey-blue)."""
    from widgets.common.theme import series_colour

    layout, *_ = export_sizes._layout_size(sweep, ExportOptions((1920, 1080)), None)
    with laid_out(sweep, layout.width(), layout.height()):
        legend = next(c for c in sweep.plot_item.getViewBox().childItems() if isinstance(c, pg.LegendItem))
        colours = {label.text: sample.item.scatter.opts["brush"].color().name() for sample, label in legend.items}
    assert colours["duckdb: measured (your hardware)"] == series_colour(0).lower()


def _series_pixels(pixels: np.ndarray, colour: str) -> int:
    """How many pixels wear a series' colour (lines and markers), RGB array in."""
    rgb = np.array([int(colour[i:i + 2], 16) for i in (1, 3, 5)])
    return int((np.abs(pixels[..., :3].astype(int) - rgb).sum(-1) < 60).sum())


@pytest.mark.parametrize("which", ["latency", "sweep"])
@pytest.mark.parametrize("size", [(1920, 1080), (3840, 2160)])
def test_png_and_pdf_of_one_chart_draw_lines_and_markers_the_same_size(which, size, request, tmp_path):
    """The PDF drawn by PDFium (pypdfium2) at the PNG's pixel size wears as much of each series'
    colour as the PNG: markers sized in device pixels were half as large in the PDF at 1920x1080."""
    import pypdfium2 as pdfium

    from widgets.common.theme import series_colour
    chart = request.getfixturevalue(which)
    png = QImage(str(export_chart_as(chart, tmp_path / "c.png", ExportOptions(size)))).convertToFormat(
        QImage.Format.Format_RGB888)
    png_pixels = np.frombuffer(png.constBits(), np.uint8).reshape(png.height(), png.bytesPerLine())
    png_pixels = png_pixels[:, :png.width() * 3].reshape(png.height(), png.width(), 3)
    page = pdfium.PdfDocument(str(export_chart_as(chart, tmp_path / "c.pdf", ExportOptions(size))))[0]
    pdf_pixels = page.render(scale=size[0] / page.get_width()).to_numpy()[..., 2::-1]      # BGR(A) -> RGB
    for index in range(1 if which == "sweep" else 3):
        in_png, in_pdf = _series_pixels(png_pixels, series_colour(index)), _series_pixels(pdf_pixels, series_colour(index))
        assert in_png > 500 and 0.9 < in_pdf / in_png < 1.1, (index, in_png, in_pdf)


def test_a_charts_csv_writes_a_label_that_looks_like_a_formula_as_text(make_widget, tmp_path):
    """A bar named by a run from elsewhere ("=HYPERLINK(...)"): a spreadsheet shows the cell, never runs
    it (a leading apostrophe); the figures stay numbers."""
    import csv
    chart = make_widget(BreakdownChart, size=(324, 248))
    chart.set_data({'=HYPERLINK("http://127.0.0.1:1/x","click")': {"query": 0.02, "decode": 0.01}})
    rows = list(csv.reader(export_chart_as(chart, tmp_path / "bars.csv").open()))
    assert rows[1][0] == '\'=HYPERLINK("http://127.0.0.1:1/x","click")' and float(rows[1][3]) > 0


def _series_columns(path: Path, colour: str) -> tuple[int, int]:
    """The leftmost and rightmost pixel columns wearing a series' colour in a PNG."""
    image = QImage(str(path)).convertToFormat(QImage.Format.Format_RGB888)
    pixels = np.frombuffer(image.constBits(), np.uint8).reshape(image.height(), image.bytesPerLine())
    pixels = pixels[:, :image.width() * 3].reshape(image.height(), image.width(), 3)
    rgb = np.array([int(colour[i:i + 2], 16) for i in (1, 3, 5)])
    columns = np.nonzero((np.abs(pixels.astype(int) - rgb).sum(-1) < 60).any(axis=0))[0]
    return int(columns.min()), int(columns.max())


@pytest.mark.parametrize("chart_class", [SweepChart, TimeSeriesChart])
def test_a_chart_not_on_screen_is_exported_laid_out_as_the_one_on_screen(make_widget, tmp_path, chart_class):
    """The dashboard's charts on tabs not in front (the Users sweep behind Results) and a chart never
    shown are exported as the chart in front: a QGraphicsView lays its scene out on its viewport's
    resize, which a hidden one never gets; its slide held the chart at 640x480 in the top-left corner."""
    from PySide6.QtWidgets import QTabWidget, QVBoxLayout, QWidget

    from widgets.common.theme import series_colour
    tabs = make_widget(QTabWidget, size=(700, 500))
    charts = []
    for _ in range(2):
        chart, page = chart_class(), QWidget()
        QVBoxLayout(page).addWidget(chart)
        tabs.addTab(page, "chart")
        charts.append(chart)
    charts.append(chart_class())                # never shown, in no window
    for chart in charts:
        chart.set_series("duckdb", np.array([1.0, 2.0, 4.0, 8.0]), np.array([1e6, 1.9e6, 3.5e6, 3.6e6]))
    assert charts[0].isVisible() and not charts[1].isVisible()
    spans = [_series_columns(export_chart_as(chart, tmp_path / f"{i}.png", ExportOptions((1920, 1080))),
                             series_colour(0)) for i, chart in enumerate(charts)]
    assert spans[0][1] > 0.8 * 1920, spans                      # the chart in front fills the slide
    for left, right in spans[1:]:
        assert abs(left - spans[0][0]) < 20 and abs(right - spans[0][1]) < 20, spans
