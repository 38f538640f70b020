"""LiveDashboard: snapshots in, figures out; cheap show_snapshot; gating; readable errors; state."""
import pytest
from PySide6.QtCore import QTimer

from widgets.run.dashboard import LiveDashboard
from widgets.run.header import format_elapsed, readable_message
from workloads.run.snapshot import (LatencyPoint, LiveSnapshot, ResourcePoint, SweepPoint,
                                ThroughputPoint)

TRACEBACK = """Traceback (most recent call last):
  File "/work/workloads/runner.py", line 120, in run
    frame = session.run(query)
  File "/venv/dolphindb/session.py", line 88, in run
    raise RuntimeError(msg)
RuntimeError: Server response: 'The table quotes does not exist' host 127.0.0.1:8848"""


def snapshot(n_points=5, run_id="run-1", **overrides):
    fields = dict(
        run_id=run_id, status="running", target="duckdb", workload="read_day", step_index=1,
        steps_total=4, users=2, elapsed_s=65.0, ops_done=1234, ops_failed=0, progress=0.4,
        throughput=[ThroughputPoint(t, 1e6 * (t + 1), 45e6 * (t + 1), 40.0) for t in range(n_points)],
        latency=[LatencyPoint(t, 0.01, 0.02, 0.03 + t / 1000) for t in range(n_points)],
        phase_means={"query": 0.004, "decode": 0.006},
        phase_percentiles={"query": {"p50": 0.003, "p95": 0.005, "p99": 0.009}},
        sweep=[SweepPoint(1, 1e6, 45e6, 40, 0.01, 0.03, True),
               SweepPoint(2, 1.5e6, 67e6, 60, 0.012, 0.04, False)],
        workers={0: "running", 1: "running"},
        resources=[ResourcePoint(t, 50.0 + t, 400_000_000) for t in range(n_points)],
    )
    fields.update(overrides)
    return LiveSnapshot(**fields)


@pytest.fixture
def dashboard(make_widget):
    return make_widget(LiveDashboard, size=(1280, 800))


def test_snapshot_data_reaches_every_chart(dashboard, qtbot):
    dashboard.show_snapshot(snapshot())
    qtbot.waitUntil(lambda: dashboard.apply_count == 1, timeout=2000)
    for chart in (dashboard.rows_chart, dashboard.latency_chart, dashboard.breakdown_chart,
                  dashboard.cpu_chart):
        qtbot.waitUntil(lambda c=chart: c.render_count >= 1 and not c.is_dirty, timeout=2000)
    assert dashboard.rows_chart.plotted_data("rows/s")[1].tolist() == [1e6, 2e6, 3e6, 4e6, 5e6]
    assert dashboard.bytes_chart.plotted_data("B/s")[1][0] == 45e6
    assert dashboard.latency_chart.plotted_data("p99")[1][-1] == pytest.approx(0.034)
    assert dashboard.cpu_chart.plotted_data("CPU %")[1].tolist() == [50, 51, 52, 53, 54]
    assert dashboard.breakdown_chart.data()[0] == {"duckdb": {"query": 0.004, "decode": 0.006}}
    assert dashboard.worker_grid.worker_ids() == [0, 1]
    assert dashboard.phase_table.item(0, 0).text() == "query"
    assert dashboard.phase_table.item(0, 5).text() == "9 ms"


def test_idle_seconds_between_steps_are_gaps_in_the_lines_not_zeros(dashboard, qtbot):
    import math
    throughput = [ThroughputPoint(t, 0.0 if t in (3, 4) else 1e6, 0.0 if t in (3, 4) else 8e6, 1.0,
                                  measuring=t not in (3, 4)) for t in range(1, 7)]
    latency = [LatencyPoint(t, 0.01, 0.02, 0.03) for t in (1, 2, 5, 6)]          # none at 3-4
    dashboard.show_snapshot(snapshot(throughput=throughput, latency=latency))
    qtbot.waitUntil(lambda: dashboard.apply_count == 1, timeout=2000)
    rows = dashboard.rows_chart.series_data("rows/s")[1].tolist()
    assert rows[:2] == [1e6, 1e6] and all(math.isnan(v) for v in rows[2:4]) and rows[4:] == [1e6, 1e6]
    xs, ys = dashboard.latency_chart.series_data("p50")
    assert xs.tolist()[:2] == [1, 2] and xs.tolist()[3:] == [5, 6] and math.isnan(ys[2])   # not bridged


def test_a_steps_first_second_is_drawn_from_the_second_under_way(dashboard, qtbot):
    """No whole second yet, only the second under way: the rows/s chart is not empty while the
    header gives a rate; the next snapshot's whole second replaces that provisional point."""
    dashboard.show_snapshot(snapshot(throughput=[], throughput_tail=ThroughputPoint(5.0, 8.04e6, 64e6, 8.0, 0.7)))
    qtbot.waitUntil(lambda: dashboard.apply_count == 1, timeout=2000)
    qtbot.waitUntil(lambda: dashboard.rows_chart.render_count >= 1 and not dashboard.rows_chart.is_dirty,
                    timeout=2000)
    assert dashboard.rows_chart.plotted_data("rows/s")[1].tolist() == [8.04e6]
    assert dashboard.bytes_chart.series_data("B/s")[0].size == 0          # provisional: never stored
    dashboard.show_snapshot(snapshot(throughput=[ThroughputPoint(6.0, 7.9e6, 63e6, 8.0)], throughput_tail=None))
    qtbot.waitUntil(lambda: dashboard.rows_chart.plotted_data("rows/s")[0].tolist() == [6.0], timeout=2000)


def test_header_shows_the_run_at_a_glance(dashboard, qtbot):
    dashboard.show_snapshot(snapshot())
    qtbot.waitUntil(lambda: dashboard.apply_count == 1, timeout=2000)
    header = dashboard.header_text()
    for part in ("run-1", "running", "read_day", "duckdb", "step 2/4", "2 users", "elapsed 1:05",
                 "1,234 ops", "0 errors"):
        assert part in header, part
    assert dashboard.progress.value() == 400
    assert dashboard.message_label.text() == "" and dashboard.message_label.isVisibleTo(dashboard)   # an empty slot, kept


def test_later_snapshots_append_only_new_points(dashboard, qtbot):
    dashboard.show_snapshot(snapshot(3))
    qtbot.waitUntil(lambda: dashboard.apply_count == 1, timeout=2000)
    dashboard.show_snapshot(snapshot(6))          # full history again, three points newer
    qtbot.waitUntil(lambda: dashboard.apply_count == 2, timeout=2000)
    xs, _ = dashboard.rows_chart.series_data("rows/s")
    assert xs.tolist() == [0, 1, 2, 3, 4, 5]


def test_a_new_run_starts_the_charts_afresh(dashboard, qtbot):
    dashboard.show_snapshot(snapshot(6))
    qtbot.waitUntil(lambda: dashboard.apply_count == 1, timeout=2000)
    dashboard.show_snapshot(snapshot(2, run_id="run-2"))
    qtbot.waitUntil(lambda: dashboard.apply_count == 2, timeout=2000)
    assert dashboard.rows_chart.series_data("rows/s")[0].tolist() == [0, 1]
    assert "run-2" in dashboard.header_text()


def test_show_snapshot_is_cheap_and_applies_only_the_newest(dashboard, qtbot):
    snaps = [snapshot(i + 1, ops_done=i) for i in range(300)]
    for s in snaps:
        dashboard.show_snapshot(s)
    assert dashboard.apply_count == 0            # nothing drawn inside show_snapshot
    qtbot.waitUntil(lambda: dashboard.apply_count >= 1, timeout=2000)
    assert dashboard.apply_count == 1
    assert "299 ops" in dashboard.header_text()
    assert dashboard.rows_chart.series_data("rows/s")[0].size == 300


def test_applies_stay_at_the_timer_rate_under_a_flood(make_widget, qtbot):
    dash = make_widget(LiveDashboard, apply_interval_ms=50, size=(1000, 700))
    snaps = [snapshot(i + 1, ops_done=i) for i in range(150)]
    state = {"i": 0, "done": False}
    feeder = QTimer()
    feeder.setInterval(1)     # up to 1000 snapshots a second, far above the 20 Hz apply rate

    def feed():
        dash.show_snapshot(snaps[state["i"]])
        state["i"] += 1
        if state["i"] == len(snaps):
            feeder.stop()
            state["done"] = True

    import time
    start = time.perf_counter()
    feeder.timeout.connect(feed)
    feeder.start()
    try:
        qtbot.waitUntil(lambda: state["done"], timeout=20000)
    finally:
        feeder.stop()           # a wait that times out must not leave it feeding the next tests
    elapsed = time.perf_counter() - start
    assert 1 <= dash.apply_count <= elapsed * 1000 / 50 + 2
    assert dash.apply_count < len(snaps)


def test_hidden_dashboard_does_not_apply_until_shown(make_widget, qtbot):
    dash = make_widget(LiveDashboard, show=False)
    dash.show_snapshot(snapshot())
    qtbot.waitUntil(lambda: not dash._timer.isActive(), timeout=2000)
    assert dash.apply_count == 0
    dash.show()
    qtbot.waitUntil(lambda: dash.apply_count == 1, timeout=2000)
    assert "run-1" in dash.header_text()


def test_charts_on_a_hidden_tab_do_not_repaint(dashboard, qtbot):
    dashboard.tabs.setCurrentWidget(dashboard.live_page)
    dashboard.show_snapshot(snapshot())
    qtbot.waitUntil(lambda: dashboard.apply_count == 1 and dashboard.rows_chart.render_count >= 1,
                    timeout=2000)
    assert dashboard.sweep_chart.render_count == 0          # its tab is not shown
    assert dashboard.sweep_chart.is_dirty
    with qtbot.waitSignal(dashboard.sweep_chart.rendered, timeout=2000):
        dashboard.tabs.setCurrentWidget(dashboard.sweep_page)
    users, values, hollow = dashboard.sweep_chart.plotted_points("duckdb")
    assert users.tolist() == [1, 2] and hollow == [False, True]


def test_errors_are_shown_readably_never_as_a_traceback(dashboard, qtbot):
    dashboard.show_final(snapshot(status="failed", message=TRACEBACK, ops_failed=3,
                                  workers={0: "failed"}, worker_errors={0: TRACEBACK}))
    text = dashboard.message_label.text()
    assert text.startswith("RuntimeError: Server response: 'The table quotes does not exist'")
    assert "Traceback" not in text and "File " not in text
    assert dashboard.message_label.isVisibleTo(dashboard)
    assert "3 errors" in dashboard.header_text()


def test_failed_run_without_message_still_says_so(dashboard):
    dashboard.show_final(snapshot(status="failed", message=""))
    assert dashboard.message_label.text() == "The run failed."


def test_readable_message_helpers():
    assert readable_message(TRACEBACK).startswith("RuntimeError: Server response")
    assert readable_message("  plain\n text ") == "plain text"
    assert len(readable_message("x" * 5000)) == 400
    assert format_elapsed(65) == "1:05" and format_elapsed(3725) == "1:02:05"


def test_show_final_draws_at_once_and_clear_empties(dashboard, qtbot):
    dashboard.show_final(snapshot(status="completed", progress=1.0))
    assert dashboard.apply_count == 1 and dashboard.progress.value() == 1000
    dashboard.clear()
    assert dashboard.snapshot is None
    assert dashboard.rows_chart.series_data("rows/s")[0].size == 0
    assert dashboard.header_text().startswith("No run")
    assert dashboard.worker_grid.worker_ids() == []


def test_a_starting_run_is_named_not_no_run(dashboard, qtbot):
    """Between a report's experiments the live view is cleared, and says which run is starting."""
    dashboard.show_final(snapshot(status="completed", progress=1.0))
    dashboard.start_run("read-day on duckdb, 4 users")
    assert dashboard.snapshot is None and dashboard.rows_chart.series_data("rows/s")[0].size == 0
    assert dashboard.header_text().startswith("read-day on duckdb, 4 users  starting")
    assert dashboard.progress.value() == 0
    dashboard.show_snapshot(snapshot(status="running"))
    dashboard.clear()
    assert dashboard.header_text().startswith("No run")


def test_published_sweep_is_drawn_for_its_metric_only(dashboard, qtbot):
    dashboard.set_sweep_reference("8 nodes", [1, 2, 4], [1.45e6, 2.73e6, 5.4e6])
    dashboard.show_final(snapshot())
    assert dashboard.sweep_chart.series_names(reference=True) == ["8 nodes"]
    dashboard.sweep_metric.setCurrentIndex(dashboard.sweep_metric.findData("p99"))
    assert dashboard.sweep_chart.series_names(reference=True) == []
    assert dashboard.sweep_chart.axis_label("left").startswith("latency p99")
    with pytest.raises(ValueError, match="unknown sweep metric 'speed'"):
        dashboard.set_sweep_reference("x", [1], [1], metric="speed")


def test_published_breakdown_is_drawn_beside_the_same_target(dashboard):
    dashboard.set_breakdown_reference({"duckdb": {"query": 0.002, "decode": 0.003},
                                       "pickle": {"io": 1.0}})
    dashboard.show_final(snapshot())
    measured, published = dashboard.breakdown_chart.data()
    assert list(published) == ["duckdb"]


def test_state_round_trip(make_widget):
    first = make_widget(LiveDashboard)
    first.tabs.setCurrentWidget(first.sweep_page)
    first.sweep_metric.setCurrentIndex(first.sweep_metric.findData("bytes_per_s"))
    state = first.save_state()
    second = make_widget(LiveDashboard)
    second.restore_state(state)
    assert second.tabs.tabText(second.tabs.currentIndex()) == "Users sweep"
    assert second.sweep_metric.currentData() == "bytes_per_s"
    second.restore_state({"tab": "gone", "sweep_metric": "nope", "splitter": "junk"})   # ignored
    assert second.sweep_metric.currentData() == "bytes_per_s"


def test_snapshots_from_another_thread_are_refused(dashboard):
    import threading

    errors = []

    def worker():
        try:
            dashboard.show_snapshot(snapshot())
        except RuntimeError as exc:
            errors.append(str(exc))

    thread = threading.Thread(target=worker)
    thread.start()
    thread.join(5)
    assert errors and "another thread" in errors[0]
    assert dashboard.snapshot is None


def test_the_step_figures_line_names_its_step_and_sets_the_first_operation_apart(dashboard, qtbot):
    sweep = [SweepPoint(1, 2e6, 90e6, 40, 0.012, 0.02, True, label="1 user", exact=True),
             SweepPoint(2, 3e6, 135e6, 60, 0.015, 0.03, True, label="2 users", exact=True, short=True)]
    dashboard.show_final(snapshot(sweep=sweep, step_label="2 users", phase_step="2 users", phase_ops=8,
                                  phase_source="probe", phase_exact=True, first_op_s=0.06,
                                  steady_p50_s=0.015, mean_total_s=0.02,
                                  phase_means={"io": 0.008, "decode": 0.006}))
    line = dashboard.figures_label.text()
    assert "Step 2 users" in line and "3 M rows/s" in line and "p50 15 ms" in line
    assert "first operation in a fresh process 60 ms (4.0× the steady p50)" in line
    assert "exact" in line and "too short to measure" in line
    # the phases say which step and how many probe operations they rest on
    assert dashboard.phase_caption.text() == "Phases of step 2 users, 8 probe operations."
    assert dashboard.breakdown_chart.note.startswith("Phases of step 2 users, 8 probe operations.")
    # what of the measured mean no probe phase covers is drawn as "other", not hidden
    bars = dashboard.breakdown_chart.data()[0]["duckdb"]
    assert bars == pytest.approx({"io": 0.008, "decode": 0.006, "other": 0.006})
    assert dashboard.phase_table.item(0, 1).text() == "8"


def test_a_live_step_is_labelled_an_estimate(dashboard, qtbot):
    dashboard.show_final(snapshot(step_label="2 users", phase_step="2 users", phase_ops=3,
                                  phase_source="measured", phase_exact=False))
    assert "live estimate" in dashboard.figures_label.text()
    assert dashboard.phase_caption.text() == "Phases of step 2 users, 3 measured operations, live estimate."


def test_a_short_run_is_drawn_operation_by_operation_with_its_own_legend(dashboard, qtbot):
    from workloads.run.snapshot import LatencyPoint, ThroughputPoint
    snap = snapshot(per_operation=True,
                    throughput=[ThroughputPoint(0.4, 2e6, 90e6, 20.0), ThroughputPoint(0.9, 2.2e6, 99e6, 22.0)],
                    latency=[LatencyPoint(0.4, 0.05, 0.05, 0.05), LatencyPoint(0.9, 0.045, 0.045, 0.045)])
    dashboard.show_final(snap)
    qtbot.waitUntil(lambda: dashboard.rows_chart.render_count >= 1 and not dashboard.rows_chart.is_dirty, timeout=2000)
    assert dashboard.rows_chart.title == "Rows per second, each operation"
    assert dashboard.rows_chart.markers_shown("rows/s")
    assert dashboard.latency_chart.in_legend() == ["each operation"]
    assert dashboard.latency_chart.series_data("each operation")[1].tolist() == [0.05, 0.045]
    dashboard.show_final(snapshot(run_id="run-2"))              # a long run: per second again
    assert dashboard.latency_chart.in_legend() == ["p50", "p95", "p99"]
    assert dashboard.rows_chart.title == "Rows per second"


def test_a_run_drawn_per_operation_at_its_end_keeps_no_per_second_line_of_the_live_view(dashboard, qtbot):
    from workloads.run.snapshot import LatencyPoint, ThroughputPoint
    live = snapshot(throughput=[ThroughputPoint(t, 1e6, 50e6, 10.0) for t in (1.0, 2.0, 3.0, 4.0)],
                    latency=[LatencyPoint(t, 0.02, 0.03, 0.04) for t in (1.0, 2.0, 3.0, 4.0)])
    dashboard.show_snapshot(live)                       # drawn on the view's next tick
    qtbot.waitUntil(lambda: len(dashboard.latency_chart.series_data("p99")[1]) == 4, timeout=3000)
    final = snapshot(per_operation=True,
                     throughput=[ThroughputPoint(0.4, 2e6, 90e6, 20.0), ThroughputPoint(0.9, 2.2e6, 99e6, 22.0)],
                     latency=[LatencyPoint(0.4, 0.05, 0.05, 0.05), LatencyPoint(0.9, 0.045, 0.045, 0.045)])
    dashboard.show_final(final)
    for name in ("p50", "p95", "p99"):
        assert len(dashboard.latency_chart.series_data(name)[0]) == 0      # nothing an export would draw
    assert dashboard.latency_chart.series_data("each operation")[0].tolist() == [0.4, 0.9]
    assert dashboard.rows_chart.series_data("rows/s")[0].tolist() == [0.4, 0.9]   # no second 1-4 left
    # drawn with their new titles at once: a screen grabbed before the next repaint showed the
    # live per-second points under "Rows per second, each operation"
    assert dashboard.rows_chart.plotted_data("rows/s")[0].tolist() == [0.4, 0.9]
    assert dashboard.latency_chart.plotted_data("each operation")[0].tolist() == [0.4, 0.9]


def test_a_finished_runs_empty_lines_give_their_room_to_the_charts_and_a_live_run_keeps_their_slots(dashboard):
    """A live run keeps each line's two-line slot (a message appearing would move every chart); a
    finished run's empty message and published lines take no room (a blank band under the header)."""
    dashboard.show_final(snapshot(status="completed", progress=1.0, message=""))
    assert dashboard.message_label.text() == "" and dashboard.message_label.height() == 0
    assert dashboard.header_label.height() > 0
    dashboard.start_run("next")
    slot = 2 * dashboard.fontMetrics().lineSpacing() + 4
    assert dashboard.message_label.height() == slot and dashboard.published_label.height() == slot


def test_before_an_audience_the_time_axes_hold_from_zero_to_the_runs_length_and_mark_each_step(dashboard, qtbot):
    # the first point's span begins at the release, 0.6 s (the part of its first second joins it)
    throughput = [ThroughputPoint(t, 1e6, 8e6, 1.0, 1.4 if t == 2 else 1.0) for t in range(2, 7)]
    dashboard.spotlight(("Rows per second", "Latency"))
    dashboard.set_time_horizon(20.0)
    for step, seen in ((0, 5), (1, 9)):           # the second step is first seen at 7.4 s
        dashboard.show_snapshot(snapshot(throughput=throughput[:seen] + [ThroughputPoint(t, 2e6, 8e6, 1.0)
                                                                         for t in range(7, seen + 2)],
                                         step_index=step, steps_total=2, elapsed_s=7.4 if step else 6.5,
                                         step_label=f"{step + 1} user{'s' if step else ''}"))
        qtbot.waitUntil(lambda s=step: dashboard.apply_count >= s + 1, timeout=2000)
    for chart in (dashboard.rows_chart, dashboard.latency_chart):
        chart.render_now()
        (low, high), _ = chart.plot_item.getViewBox().viewRange()
        assert low == pytest.approx(0.0, abs=1e-6) and high == pytest.approx(20.0)
        assert chart.marks() == [(pytest.approx(0.6), "1 user"), (7.4, "2 users")]
    dashboard.set_time_horizon(None)             # back to following the data, no marks once cleared
    dashboard.clear()
    assert dashboard.rows_chart.marks() == []


def test_before_an_audience_a_live_runs_header_keeps_no_empty_slots(dashboard):
    """Spotlit, a live run's header had three empty two-line slots under its first line (a blank
    band of ~110 px at 1366x768): only the figures line keeps one; a message (an error) still shows."""
    slot = 2 * dashboard.fontMetrics().lineSpacing() + 4
    dashboard.spotlight(("Rows per second", "Latency"))
    dashboard.start_run("next")
    assert dashboard.message_label.height() == 0 and dashboard.published_label.height() == 0
    assert dashboard.figures_label.height() == slot
    dashboard.show_snapshot(snapshot(status="failed", message="worker 1 died"))
    dashboard._apply()
    assert dashboard.message_label.text() and dashboard.message_label.height() >= slot
    dashboard.spotlight(())
    dashboard.start_run("again")
    assert dashboard.message_label.height() == slot           # the window's own view keeps its slots
