"""BreakdownChart: stacked phase bars, value labels, published bars, the DolphinDB note."""
import numpy as np
import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QColor

from widgets.charts.breakdown import (OVERLAP_NOTE, PUBLISHED_LABEL, BreakdownChart, format_seconds,
                                     ordered_phases)
from widgets.common.theme import phase_colour

MEASURED = {"pickle": {"decode": 0.4, "io": 0.8},
            "duckdb": {"query": 0.2, "decode": 0.3},
            "dolphindb": {"server": 0.1, "transfer": 0.3, "decode": 0.9}}


def _bars_by_colour(chart):
    out = {}
    for item in chart.bar_items():
        brush = item.opts["brush"]
        out.setdefault((brush.color().name().upper(), brush.style()), []).append(item)
    return out


def test_segments_stack_in_data_flow_order_with_phase_colours(make_widget):
    chart = make_widget(BreakdownChart, size=(900, 400))
    chart.set_data(MEASURED)
    chart.render_now()
    bars = _bars_by_colour(chart)
    io = bars[(phase_colour("io").upper(), Qt.BrushStyle.SolidPattern)][0]
    decode = bars[(phase_colour("decode").upper(), Qt.BrushStyle.SolidPattern)][0]
    # io comes before decode for pickle even though the dict lists decode first
    np.testing.assert_allclose(io.opts["x0"][0], 0.0)
    np.testing.assert_allclose(decode.opts["x0"], [0.8, 0.2, 0.4])      # after io / query / server+transfer
    np.testing.assert_allclose(decode.opts["width"], [0.4, 0.3, 0.9])
    ticks = [t[1] for t in chart.plot_item.getAxis("left")._tickLevels[0]]
    assert ticks == ["pickle", "duckdb", "dolphindb"]


def test_value_labels_and_totals_are_drawn(make_widget):
    chart = make_widget(BreakdownChart, size=(900, 400))
    chart.set_data(MEASURED)
    chart.render_now()
    labels = chart.label_texts()
    for total in ("1.2 s", "500 ms", "1.3 s"):
        assert f" {total}" in labels
    assert "900 ms" in labels and "800 ms" in labels


def test_legend_lists_each_phase_once(make_widget):
    chart = make_widget(BreakdownChart)
    chart.set_data(MEASURED)
    chart.render_now()
    names = [label.text for _, label in chart.legend.items]
    assert names == ["io", "query", "server", "transfer", "decode"]


def test_dolphindb_overlap_note_appears_only_with_transfer_and_decode(make_widget):
    chart = make_widget(BreakdownChart)
    chart.set_data({"pickle": {"io": 1, "decode": 1}})
    assert chart.note == ""
    chart.set_data(MEASURED)
    assert chart.note == OVERLAP_NOTE
    assert "transfer and decode overlap in the client" in chart.note
    chart.render_now()
    assert chart._note.scene() is chart.graphics.scene()     # part of the scene, so of exports


def test_published_bars_are_hatched_beside_the_measured_ones(make_widget):
    chart = make_widget(BreakdownChart, size=(900, 400))
    chart.set_data(MEASURED, published={"dolphindb": {"server": 5.0, "transfer + decode": 17.0}})
    chart.render_now()
    hatched = [i for i in chart.bar_items() if i.opts["brush"].style() == Qt.BrushStyle.BDiagPattern]
    assert len(hatched) == 2
    server_pub = [i for i in hatched if QColor(i.opts["brush"].color()) == QColor(phase_colour("server"))][0]
    measured_server = [i for i in chart.bar_items() if i not in hatched
                       and i.opts["brush"].color() == QColor(phase_colour("server"))][0]
    assert server_pub.opts["y"][0] > measured_server.opts["y"][0]     # drawn just below (inverted y)
    names = [label.text for _, label in chart.legend.items]
    assert PUBLISHED_LABEL in names and "transfer + decode" in names
    ticks = [t[1] for t in chart.plot_item.getAxis("left")._tickLevels[0]]
    assert "dolphindb (published)" in ticks
    kinds = {(r["label"], r["kind"]) for r in chart.table_rows()}
    assert ("dolphindb", "published") in kinds and ("pickle", "measured") in kinds


def test_bad_seconds_are_refused_with_the_place_named(make_widget):
    chart = make_widget(BreakdownChart, show=False)
    with pytest.raises(ValueError, match="'duckdb': phase 'query' has -1"):
        chart.set_data({"duckdb": {"query": -1}})
    with pytest.raises(ValueError, match="phase 'io' has nan"):
        chart.set_data({"pickle": {"io": float("nan")}})


def test_format_seconds_and_phase_order():
    assert format_seconds(0.0123) == "12.3 ms"
    assert format_seconds(1.5) == "1.5 s"
    assert format_seconds(0.0000042) == "4.2 µs"
    assert format_seconds(250) == "250 s"
    assert ordered_phases({"a": {"decode": 1, "zzz": 1, "io": 1}}) == ["io", "decode", "zzz"]


def test_a_narrow_charts_longest_total_is_drawn_whole_inside_it(make_widget, qtbot):
    """Compare's phases chart is narrow: the total past the longest bar must not run off its edge."""
    chart = make_widget(BreakdownChart, size=(200, 300))
    chart.set_data({"duckdb": {"query": 0.0412, "decode": 0.0333}, "pickle": {"io": 0.0201}})
    qtbot.waitUntil(lambda: chart.plot_item.getViewBox().width() > 50, timeout=2000)
    chart.render_now()
    view = chart.plot_item.getViewBox()
    total = next(i for i in chart._items if getattr(i, "textItem", None) is not None
                 and i.textItem.toPlainText() == f" {format_seconds(0.0745)}")
    assert total.sceneBoundingRect().right() <= view.sceneBoundingRect().right() + 1
