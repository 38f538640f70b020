"""SweepChart: log2 users axis, hollow running point, dashed published series with labels."""
import math

import numpy as np
import pytest
from PySide6.QtCore import Qt

from widgets.common.plain_text import tooltip_words
from widgets.charts.sweep import SweepChart


def test_users_axis_is_log2_with_power_of_two_ticks(make_widget):
    chart = make_widget(SweepChart)
    chart.set_series("duckdb", [1, 2, 4], [10, 19, 30])
    chart.render_now()
    ticks = chart.plot_item.getAxis("bottom")._tickLevels[0]
    assert [label for _, label in ticks] == ["1", "2", "4"]           # no empty room past the data
    assert ticks[2][0] == pytest.approx(math.log10(4))
    chart.set_series("published", [1, 128], [5, 50], reference=True)
    chart.render_now()
    ticks = chart.plot_item.getAxis("bottom")._tickLevels[0]
    assert [label for _, label in ticks][-1] == "128"
    assert chart.plot_item.getAxis("bottom").logMode


def test_points_grow_and_the_incomplete_one_is_hollow(make_widget):
    chart = make_widget(SweepChart)
    chart.set_series("duckdb", [1, 2], [10, 5], complete=[True, False])
    chart.render_now()
    users, values, hollow = chart.plotted_points("duckdb")
    assert users.tolist() == [1, 2] and values.tolist() == [10, 5]
    assert hollow == [False, True]
    chart.set_series("duckdb", [1, 2, 4], [10, 19, 3], complete=[True, True, False])
    chart.render_now()
    users, values, hollow = chart.plotted_points("duckdb")
    assert users.tolist() == [1, 2, 4] and hollow == [False, False, True]


def test_published_series_is_dashed_and_labelled_apart_from_measured(make_widget):
    chart = make_widget(SweepChart)
    chart.set_series("8 nodes", [1, 2, 4, 128], [1.45e6, 2.73e6, 5.4e6, 36.5e6], reference=True)
    chart.set_series("duckdb", [1, 2], [1e6, 2e6])
    chart.render_now()
    labels = chart.legend_labels()
    assert "8 nodes: published (their hardware)" in labels
    assert "duckdb: measured (your hardware)" in labels
    ref_curve = chart._curves[("8 nodes", True)]
    measured_curve = chart._curves[("duckdb", False)]
    assert ref_curve.opts["pen"].style() == Qt.PenStyle.DashLine
    assert measured_curve.opts["pen"].style() == Qt.PenStyle.SolidLine
    np.testing.assert_allclose(chart.plotted_points("8 nodes", reference=True)[0], [1, 2, 4, 128])
    chart.clear(keep_references=True)
    assert chart.series_names(reference=True) == ["8 nodes"] and chart.series_names() == []


def test_axis_reaches_beyond_128_users_when_data_does(make_widget):
    chart = make_widget(SweepChart)
    chart.set_series("big", [1, 256], [1, 2])
    chart.render_now()
    labels = [label for _, label in chart.plot_item.getAxis("bottom")._tickLevels[0]]
    assert labels[-1] == "256"


def test_points_are_sorted_by_users_and_bad_input_is_named(make_widget):
    chart = make_widget(SweepChart, show=False)
    chart.set_series("x", [4, 1, 2], [40, 10, 20])
    chart.render_now()
    assert chart.plotted_points("x")[1].tolist() == [10, 20, 40]
    with pytest.raises(ValueError, match="sweep 'y': 2 users counts, 1 metric value and 2 complete flags"):
        chart.set_series("y", [1, 2], [1])
    with pytest.raises(ValueError, match="users must be >= 1"):
        chart.set_series("z", [0, 2], [1, 2])


def test_y_axis_unit_follows_the_metric(make_widget):
    chart = make_widget(SweepChart)
    chart.set_y_axis("latency p99", "s")
    chart.set_series("a", [1, 2], [0.01, 0.02])
    chart.render_now()
    chart.plot_item.getViewBox().autoRange()
    assert chart.axis_label("left") == "latency p99 (ms)"


# ---- axes: y from zero, x over every users count present (published series included) ----------
def test_y_axis_starts_at_zero(make_widget):
    chart = make_widget(SweepChart)
    chart.set_series("duckdb", [1, 2, 4], [1.0e6, 1.5e6, 2.0e6])
    chart.render_now()
    low, high = chart.plot_item.getViewBox().viewRange()[1]
    assert low == 0.0 and 2.0e6 < high < 2.3e6      # auto-range started near 1e6, hiding the scale


@pytest.mark.parametrize("measured, published, span", [
    ([1, 2], None, (1, 2)),                  # a 1-2 user sweep ends at 2 users, not at an empty 8
    ([1], None, (1, 2)),                     # one user: one doubling, so the point is not alone
    ([16, 32, 64], None, (16, 64)),          # no empty doublings before the data nor after it
    ([16, 32, 64], [1, 2, 4, 128], (1, 128)),
    ([3, 5], [256], (2, 256)),
])
def test_x_axis_spans_the_fewest_to_the_most_users(make_widget, measured, published, span):
    chart = make_widget(SweepChart)
    chart.set_series("duckdb", measured, [1.0] * len(measured))
    if published:
        chart.set_series("8 nodes", published, [2.0] * len(published), reference=True)
    chart.render_now()
    fewest, most = chart.x_span()
    everyone = measured + (published or [])
    assert fewest < min(everyone) and most > max(everyone)        # the end markers are not cut
    assert fewest > span[0] / 2 ** 0.5 and most < span[1] * 2 ** 0.5   # ... and nothing much more
    labels = [label for _, label in chart.plot_item.getAxis("bottom")._tickLevels[0]]
    assert labels[0] == str(span[0]) and labels[-1] == str(span[1])


# ---- zoom ------------------------------------------------------------------------------------
def test_a_wheel_zoom_holds_through_redraws_until_reset(make_widget):
    from tests.wheel_events import wheel_over_plot

    chart = make_widget(SweepChart)
    chart.set_series("duckdb", [1, 2, 4, 8], [1, 2, 3, 4])
    chart.render_now()
    view = chart.plot_item.getViewBox()
    home = view.viewRange()
    wheel_over_plot(chart, steps=2)
    zoomed = view.viewRange()
    assert chart.user_view and chart.reset_button.isVisible() and zoomed != home
    # the dashboard redraws the sweep through clear() + set_series on every update
    chart.clear(keep_references=True)
    chart.set_series("duckdb", [1, 2, 4, 8, 16], [1, 2, 3, 4, 5])
    chart.render_now()
    np.testing.assert_allclose(view.viewRange(), zoomed)
    chart.reset_view()                                  # the button's action; a new run calls it
    chart.render_now()
    assert not chart.reset_button.isVisible()
    fewest, most = chart.x_span()
    assert fewest < 1 and most > 16 and view.viewRange()[1][0] == 0


# ---- legend: long names shortened, in full on hover; "measured" said only beside "published" -----
def test_measured_is_said_only_beside_published_series(make_widget):
    chart = make_widget(SweepChart)
    chart.set_series("duckdb", [1, 2], [1, 2])
    chart.render_now()
    assert chart.legend_labels() == ["duckdb"]
    chart.set_series("8 nodes", [1, 2], [1, 2], reference=True)
    chart.render_now()
    assert chart.legend_labels() == ["8 nodes: published (their hardware)", "duckdb: measured (your hardware)"]


def test_a_long_run_name_is_shortened_in_the_legend_with_a_tooltip(make_widget, qtbot):
    long_name = "Quick start: read a TAQ day from Parquet with 1 and 2 users, cold cache (r-20240501-123456)"
    chart = make_widget(SweepChart, size=(420, 400))
    chart.set_series(long_name, [1, 2], [1, 2])
    chart.set_series("duckdb", [1, 2], [2, 3])
    chart.render_now()
    assert chart.legend_labels() == [long_name, "duckdb"]
    (_, long_label), (_, short_label) = chart.legend.items
    assert "…" in long_label.text and long_label.text.endswith("123456)")    # both ends kept
    assert tooltip_words(long_label.toolTip()) == long_name and short_label.toolTip() == ""
    qtbot.waitUntil(lambda: chart.legend.sceneBoundingRect().right() <= chart.graphics.width(), timeout=2000)
    chart.resize(1400, 400)                             # wide enough: the name in full again
    chart.render_now()
    assert chart.legend.items[0][1].text == long_name
