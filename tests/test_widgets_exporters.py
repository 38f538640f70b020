"""Exporters: PNG, SVG and CSV files that are valid and hold the chart's data."""
import csv
import xml.etree.ElementTree as ET

import pytest
from PySide6.QtGui import QImage

from widgets.breakdown_chart import BreakdownChart
from widgets.exporters import export_chart, export_csv, export_png, export_svg
from widgets.live_chart import TimeSeriesChart
from widgets.sweep_chart import SweepChart
from widgets.theme import series_colour


@pytest.fixture
def chart(make_widget):
    c = make_widget(TimeSeriesChart, "Latency", y_label="latency", y_unit="s", size=(640, 400))
    c.extend("p50", [0, 1, 2], [0.010, 0.012, 0.011])
    c.extend("p99", [0, 1, 2], [0.030, 0.050, 0.040])
    return c


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


def test_csv_of_a_line_chart_has_every_point(chart, tmp_path):
    path = export_csv(chart, tmp_path / "latency.csv")
    rows = list(csv.reader(path.open()))
    assert rows[0] == ["p50_x", "p50_y", "p99_x", "p99_y"]
    assert len(rows) == 4
    assert [float(v) for v in rows[2]] == [1, 0.012, 1, 0.05]


def test_csv_is_written_even_before_the_first_repaint(make_widget, tmp_path):
    hidden = make_widget(TimeSeriesChart, show=False)
    hidden.extend("a", [0, 1], [5, 6])
    rows = list(csv.reader(export_csv(hidden, tmp_path / "h.csv").open()))
    assert [[float(v) for v in r] for r in rows[1:]] == [[0, 5], [1, 6]]


def test_csv_of_a_sweep_keeps_users_not_their_logarithm(make_widget, tmp_path):
    sweep = make_widget(SweepChart)
    sweep.set_series("duckdb", [1, 2, 4], [10, 20, 30])
    rows = list(csv.reader(export_csv(sweep, tmp_path / "s.csv").open()))
    assert [float(r[0]) for r in rows[1:]] == [1, 2, 4]


def test_bar_chart_csv_has_one_row_per_phase(make_widget, tmp_path):
    bars = make_widget(BreakdownChart)
    bars.set_data({"pickle": {"io": 0.5, "decode": 0.25}}, published={"pickle": {"io + decode": 20}})
    rows = list(csv.DictReader(export_csv(bars, tmp_path / "b.csv").open()))
    assert [(r["label"], r["kind"], r["phase"], float(r["seconds"])) for r in rows] == [
        ("pickle", "measured", "io", 0.5), ("pickle", "measured", "decode", 0.25),
        ("pickle", "published", "io + decode", 20.0)]
    image = QImage(str(export_png(bars, tmp_path / "b.png", width=800)))
    assert image.width() == 800


def test_export_chart_picks_the_format_and_refuses_others(chart, tmp_path):
    assert export_chart(chart, tmp_path / "x.SVG").read_text().lstrip().startswith("<")
    with pytest.raises(ValueError, match="use a .png, .svg or .csv"):
        export_chart(chart, tmp_path / "x.pdf")
    with pytest.raises(FileNotFoundError, match="does not exist"):
        export_png(chart, tmp_path / "missing" / "x.png")
    with pytest.raises(TypeError, match="cannot export str"):
        export_png("not a chart", tmp_path / "y.png")
