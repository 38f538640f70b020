"""TimeSeriesChart: growing arrays, data reaching the plot items, units, repaint gating."""
import time

import numpy as np
import pyqtgraph as pg
import pytest
from PySide6.QtCore import Qt, QTimer

from widgets.charts.live import GrowingSeries, TimeSeriesChart


def test_growing_series_doubles_capacity_and_keeps_data():
    s = GrowingSeries(capacity=4)
    for i in range(9):
        s.extend([i], [i * 10])
    assert s.capacity == 16
    assert s.xs.tolist() == list(range(9))
    assert s.ys.tolist() == [i * 10 for i in range(9)]
    with pytest.raises(ValueError, match="3 x values, 2 y values"):
        s.extend([1, 2, 3], [1, 2])


def test_growing_series_does_not_mutate_arrays_already_handed_out():
    s = GrowingSeries(capacity=2)
    s.extend([1, 2], [10, 20])
    view = s.ys
    s.extend([3], [30])            # reallocates
    s.replace([7], [70])
    assert view.tolist() == [10, 20]


def test_appended_points_reach_the_plot_item_after_a_repaint(make_widget, qtbot):
    chart = make_widget(TimeSeriesChart, "Latency", y_label="latency", y_unit="s")
    for t in range(50):
        chart.append("p99", t, 0.001 * t)
    with qtbot.waitSignal(chart.rendered, timeout=2000):
        pass
    xs, ys = chart.plotted_data("p99")
    np.testing.assert_allclose(xs, np.arange(50))
    np.testing.assert_allclose(ys, 0.001 * np.arange(50))
    assert chart.series_names() == ["p99"]
    curve = chart.plot_item.listDataItems()[0]
    assert curve.opts["downsampleMethod"] == "peak" and curve.opts["autoDownsample"]
    assert curve.opts["clipToView"]


def test_set_series_replaces_data(make_widget, qtbot):
    chart = make_widget(TimeSeriesChart)
    chart.extend("a", [0, 1, 2], [5, 5, 5])
    chart.set_series("a", [10, 11], [1, 2])
    chart.render_now()
    assert chart.plotted_data("a")[0].tolist() == [10, 11]
    assert chart.last_x("a") == 11
    chart.clear()
    chart.render_now()
    assert chart.plotted_data("a")[0].size == 0 and chart.last_x("a") is None


def test_axis_labels_carry_units_with_si_prefixes(make_widget):
    chart = make_widget(TimeSeriesChart, "Rows", y_label="throughput", y_unit="rows/s")
    chart.set_series("r", [0, 1, 2], [1e6, 2e6, 3e6])
    chart.render_now()
    chart.plot_item.getViewBox().autoRange()
    assert chart.axis_label("left") == "throughput (M rows/s)"
    assert chart.axis_label("bottom") == "elapsed (s)"
    latency = make_widget(TimeSeriesChart, "Latency", y_label="latency", y_unit="s")
    latency.set_series("p50", [0, 1], [0.010, 0.030])
    latency.render_now()
    latency.plot_item.getViewBox().autoRange()
    assert latency.axis_label("left") == "latency (ms)"
    mb = make_widget(TimeSeriesChart, "Data", y_label="", y_unit="B/s")
    mb.set_series("b", [0, 1], [100e6, 300e6])
    mb.render_now()
    mb.plot_item.getViewBox().autoRange()
    assert mb.axis_label("left") == "MB/s"


def test_hidden_chart_does_not_repaint_until_shown(make_widget, qtbot):
    chart = make_widget(TimeSeriesChart, show=False)
    chart.append("a", 0, 1)
    # the timer fires while hidden: nothing is drawn, the data waits
    qtbot.waitUntil(lambda: not chart._timer.isActive(), timeout=2000)
    assert chart.render_count == 0 and chart.is_dirty
    assert chart.plotted_data("a")[0].size == 0
    with qtbot.waitSignal(chart.rendered, timeout=2000):
        chart.show()
    assert chart.render_count == 1
    assert chart.plotted_data("a")[1].tolist() == [1]


def test_chart_hidden_again_stops_repainting(make_widget, qtbot):
    chart = make_widget(TimeSeriesChart)
    chart.append("a", 0, 1)
    qtbot.waitUntil(lambda: chart.render_count == 1, timeout=2000)
    chart.hide()
    for i in range(1, 100):
        chart.append("a", i, i)
    qtbot.waitUntil(lambda: not chart._timer.isActive(), timeout=2000)
    assert chart.render_count == 1


def test_a_burst_of_points_costs_one_repaint(make_widget, qtbot):
    chart = make_widget(TimeSeriesChart)
    for i in range(5000):
        chart.append("a", i, i)
    with qtbot.waitSignal(chart.rendered, timeout=10_000):    # a loaded 2-core machine: the count is the claim
        pass
    qtbot.waitUntil(lambda: not chart._timer.isActive(), timeout=2000)
    assert chart.render_count == 1
    assert chart.plotted_data("a")[0].size == 5000


def test_repaints_stay_at_or_below_the_timer_rate_under_a_flood(make_widget, qtbot):
    chart = make_widget(TimeSeriesChart, max_fps=30)
    state = {"i": 0, "start": time.perf_counter(), "end": None}
    feeder = QTimer()
    feeder.setInterval(0)   # as fast as the event loop goes: far above 30 Hz

    def feed():
        for _ in range(20):
            chart.append("a", state["i"], state["i"])
            state["i"] += 1
        if state["i"] >= 20 * 400:
            feeder.stop()
            state["end"] = time.perf_counter()

    feeder.timeout.connect(feed)
    feeder.start()
    try:
        qtbot.waitUntil(lambda: state["end"] is not None, timeout=20000)
    finally:
        feeder.stop()           # a wait that times out must not leave it feeding the next tests
    elapsed = state["end"] - state["start"]
    max_renders = elapsed * 1000 / chart.repaint_interval_ms + 2
    assert 1 <= chart.render_count <= max_renders, (chart.render_count, elapsed)
    assert chart.repaint_interval_ms >= 33


def test_max_fps_is_bounded():
    with pytest.raises(ValueError, match="max_fps"):
        TimeSeriesChart(max_fps=500)


def test_unknown_line_style_is_refused(make_widget):
    chart = make_widget(TimeSeriesChart, show=False)
    with pytest.raises(ValueError, match="'wavy' is not one of"):
        chart.add_series("a", style="wavy")


def test_a_steady_series_is_drawn_against_zero_not_zoomed_into_noise(make_widget):
    from widgets.charts.live import TimeSeriesChart

    chart = make_widget(TimeSeriesChart, "Rows per second", y_unit="rows/s")
    chart.set_series("rows", [1, 2, 3, 4], [6000.0, 6000.4, 5999.6, 6000.0])
    chart.render_now()
    low, high = chart.plot_item.getViewBox().viewRange()[1]
    assert low == 0.0 and 6000.4 < high < 7000


# ---- zoom: the wheel zooms, the zoom holds, a visible button and a new run undo it --------------
def test_a_wheel_zoom_holds_until_reset_and_shows_a_reset_button(make_widget, qtbot):
    from tests.wheel_events import wheel_over_plot

    chart = make_widget(TimeSeriesChart, "Rows per second", y_unit="rows/s")
    chart.set_series("rows", np.arange(100), np.full(100, 1000.0))
    chart.render_now()
    view = chart.plot_item.getViewBox()
    home = view.viewRange()
    assert not chart.user_view and not chart.reset_button.isVisible()
    wheel_over_plot(chart, steps=2)                         # a real wheel turn over the plot
    zoomed = view.viewRange()
    assert chart.user_view and chart.reset_button.isVisible()
    assert zoomed[0][1] - zoomed[0][0] < home[0][1] - home[0][0]
    # the button sits inside the chart, in its top right corner
    button = chart.reset_button.geometry()
    assert chart.graphics.rect().contains(button) and button.left() > chart.graphics.width() / 2
    # more data does not undo the zoom (the y range used to snap back at every repaint)
    chart.extend("rows", np.arange(100, 200), np.full(100, 2000.0))
    chart.render_now()
    np.testing.assert_allclose(view.viewRange(), zoomed)
    qtbot.mouseClick(chart.reset_button, Qt.MouseButton.LeftButton)
    chart.render_now()
    assert not chart.user_view and not chart.reset_button.isVisible()
    (x0, x1), (y0, y1) = view.viewRange()
    assert x0 <= 0 and x1 >= 199 and y0 == 0 and 2000 < y1 < 2200


def test_clear_for_a_new_run_undoes_a_zoom(make_widget):
    from tests.wheel_events import wheel_over_plot

    chart = make_widget(TimeSeriesChart, y_unit="s")
    chart.set_series("p99", np.arange(50), np.linspace(0.1, 0.2, 50))
    chart.render_now()
    wheel_over_plot(chart, steps=3)
    assert chart.user_view and chart.reset_button.isVisible()
    chart.clear()                                           # what the dashboard does for a new run
    chart.set_series("p99", [0, 1, 2], [1.0, 2.0, 3.0])
    chart.render_now()
    assert not chart.user_view and not chart.reset_button.isVisible()
    (x0, x1), (y0, y1) = chart.plot_item.getViewBox().viewRange()
    assert x0 <= 0 and x1 >= 2 and y0 == 0 and y1 >= 3


# ---- short runs: markers on few points, a scatter style ----------------------------------------
def _pixels_of(chart, colour: str) -> int:
    """How many pixels of the chart's grab are (nearly) `colour`."""
    from PySide6.QtGui import QColor

    image = chart.graphics.grab().toImage()
    want = QColor(colour)
    count = 0
    for y in range(0, image.height()):
        for x in range(0, image.width()):
            c = image.pixelColor(x, y)
            if abs(c.red() - want.red()) + abs(c.green() - want.green()) + abs(c.blue() - want.blue()) < 40:
                count += 1
    return count


def test_one_point_is_visible_as_a_marker(make_widget):
    from widgets.charts.live import MARKER_SIZE
    from widgets.common.theme import series_colour

    chart = make_widget(TimeSeriesChart, "Latency", y_unit="s", show_legend=False, size=(400, 260))
    chart.append("latency", 0.42, 0.180)
    chart.render_now()
    assert chart.markers_shown("latency")
    # a line through one point draws nothing; the marker is a dot of about MARKER_SIZE² pixels
    assert _pixels_of(chart, series_colour(0)) >= MARKER_SIZE ** 2 // 4     # 0 without a marker


def test_markers_go_away_when_a_series_grows_long(make_widget):
    from widgets.charts.live import FEW_POINTS

    chart = make_widget(TimeSeriesChart, show=False)
    chart.extend("a", np.arange(FEW_POINTS), np.ones(FEW_POINTS))
    chart.render_now()
    assert chart.markers_shown("a")
    chart.append("a", FEW_POINTS, 1.0)
    chart.render_now()
    assert not chart.markers_shown("a")
    chart.clear()
    chart.append("a", 0, 1.0)
    chart.render_now()
    assert chart.markers_shown("a")                         # a new short run has them again


def test_points_style_is_a_scatter_and_markers_can_be_forced(make_widget):
    chart = make_widget(TimeSeriesChart, show=False)
    chart.add_series("op", style="points")
    chart.add_series("p50", markers="never")
    chart.add_series("p99", markers="always")
    for name in ("op", "p50", "p99"):
        chart.extend(name, np.arange(500), np.ones(500))
    chart.render_now()
    curve = chart._curves["op"]
    assert pg.mkPen(curve.opts["pen"]).style() == Qt.PenStyle.NoPen     # markers only, no line,
    assert chart.markers_shown("op")                                    # however many points
    assert not chart.markers_shown("p50") and chart.markers_shown("p99")
    with pytest.raises(ValueError, match="markers 'some' is not one of auto, always, never"):
        chart.add_series("x", markers="some")


def test_charts_due_together_render_one_after_another_each_after_the_last_painted(qtbot):
    # Qt paints every dirty widget of a window in one pass: rendered back to back, six charts
    # painted together (~80 ms with no input served). The render queue waits for each paint.
    from PySide6.QtCore import QEvent, QObject
    from PySide6.QtWidgets import QHBoxLayout, QWidget

    window = QWidget()
    qtbot.addWidget(window)
    layout = QHBoxLayout(window)
    charts = [TimeSeriesChart(f"chart {i}") for i in range(3)]
    for chart in charts:
        layout.addWidget(chart)
    window.resize(900, 300)
    window.show()
    qtbot.waitExposed(window)
    qtbot.wait(200)
    log: list[tuple[str, int]] = []

    class Paints(QObject):
        def eventFilter(self, watched, event):
            if event.type() == QEvent.Type.Paint:
                log.append(("paint", next(i for i, c in enumerate(charts) if c.graphics.viewport() == watched)))
            return False

    paints = Paints()
    for index, chart in enumerate(charts):
        chart.graphics.viewport().installEventFilter(paints)
        chart.rendered.connect(lambda i=index: log.append(("render", i)))
    for chart in charts:
        chart.extend("a", [0, 1, 2], [1, 3, 2])            # all due at once
    qtbot.waitUntil(lambda: all(chart.render_count >= 1 and not chart.is_dirty for chart in charts), timeout=3000)
    renders = [i for kind, i in log if kind == "render"]
    assert sorted(renders) == [0, 1, 2]
    for earlier, later in zip(renders, renders[1:]):
        between = log[log.index(("render", earlier)) + 1:log.index(("render", later))]
        assert ("paint", earlier) in between, log


def test_a_cleared_chart_starts_the_next_run_from_zero_not_the_last_runs_axes(make_widget, qtbot):
    """Issue 41: the live charts kept the previous run's axes at the next run's start."""
    chart = make_widget(TimeSeriesChart, "Rows per second", y_unit="rows/s")
    chart.extend("rows/s", list(range(0, 120, 2)), [8e6] * 60)
    chart.render_now()
    qtbot.wait(20)
    (x0, x1), _ = chart.plot_item.getViewBox().viewRange()
    assert x1 >= 100                                       # the first run's two minutes
    chart.clear()
    chart.render_now()
    qtbot.wait(20)
    (x0, x1), (y0, y1) = chart.plot_item.getViewBox().viewRange()
    assert x1 <= 2 and y1 <= 2, (x0, x1, y0, y1)            # nothing of the last run's axes
    chart.extend("rows/s", [0, 1, 2, 3], [1e6, 2e6, 2e6, 2e6])    # the next run's first seconds
    chart.render_now()
    qtbot.wait(20)
    (x0, x1), (y0, y1) = chart.plot_item.getViewBox().viewRange()
    assert x1 < 10 and 2e6 <= y1 < 3e6, (x0, x1, y0, y1)


def test_elapsed_time_never_reads_negative_around_a_first_point(make_widget, qtbot):
    chart = make_widget(TimeSeriesChart, "Rows per second", x_label="elapsed", x_unit="s", y_unit="rows/s")
    chart.append("rows/s", 0.2, 1e6)                  # one point near 0: auto-range pads around it
    chart.render_now()
    view = chart.plot_item.getViewBox()
    qtbot.waitUntil(lambda: view.viewRange()[0][1] > 0.2, timeout=3000)     # ranged around the point
    assert view.viewRange()[0][0] >= 0.0
