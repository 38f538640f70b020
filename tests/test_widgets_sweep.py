"""SweepChart: log2 users axis, hollow running point, dashed published series with labels."""
import math

import numpy as np
import pytest
from PySide6.QtCore import Qt

from widgets.sweep_chart import SweepChart


def test_users_axis_is_log2_with_power_of_two_ticks(make_widget):
    chart = make_widget(SweepChart)
    chart.set_series("duckdb", [1, 2, 4], [10, 19, 30])
    chart.render_now()
    ticks = chart.plot_item.getAxis("bottom")._tickLevels[0]
    assert [label for _, label in ticks] == ["1", "2", "4", "8"]      # no empty room up to 128
    assert ticks[3][0] == pytest.approx(math.log10(8))
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
    with pytest.raises(ValueError, match="sweep 'y': 2 users values, 1 metric values"):
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
