"""Render the widgets with SYNTHETIC data and save screenshots, to look at them.

    QT_QPA_PLATFORM=offscreen .venv/bin/python benchmarks/render_widgets.py [--out /tmp] [--size 1280x800]

Writes widgets_dashboard.png (light), widgets_dashboard_dark.png, widgets_dashboard_demo.png (dark,
font scale 1.5), widgets_sweep.png, widgets_breakdown.png, widgets_history.png,
widgets_params.png, and prints how long feeding and drawing took. Nothing here is a measurement:
the figures are made up and every window says so.
"""
from __future__ import annotations

import argparse
import math
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np  # noqa: E402
from PySide6.QtCore import QEventLoop, QTimer  # noqa: E402
from PySide6.QtWidgets import QApplication, QLabel, QVBoxLayout, QWidget  # noqa: E402

from widgets.charts.breakdown import BreakdownChart  # noqa: E402
from widgets.run.dashboard import LiveDashboard  # noqa: E402
from widgets.scenario.param_form import ParamForm  # noqa: E402
from widgets.history.run_history import RunHistoryView  # noqa: E402
from widgets.common.theme import apply_theme  # noqa: E402
from workloads.operations.params import Param  # noqa: E402
from workloads.run.snapshot import (LatencyPoint, LiveSnapshot, ResourcePoint, SweepPoint,  # noqa: E402
                                ThroughputPoint)

TITLE = "Tickbench widgets: SYNTHETIC data, not a measurement"
SWEEP_USERS = [1, 2, 4, 8, 16, 32, 64]


def synthetic_snapshots(seconds: int = 140, per_second: int = 4, stop_at: float | None = 132):
    """A made-up read sweep on 'dolphindb' that gets to 64 users, as the engine would report it."""
    rng = np.random.default_rng(7)
    step_len = seconds / len(SWEEP_USERS)
    tp, lat, res, sweep = [], [], [], []
    workers = {}
    for tick in range(seconds * per_second + 1):
        t = tick / per_second
        if stop_at is not None and t > stop_at:
            return                  # the screenshot shows a run in progress: last step still running
        step = min(int(t // step_len), len(SWEEP_USERS) - 1)
        users = SWEEP_USERS[step]
        capacity = 36e6 * (1 - math.exp(-users / 20))          # saturating throughput
        rows = capacity * (1 + 0.06 * rng.standard_normal())
        if tick % per_second == 0:
            tp.append(ThroughputPoint(t, rows, rows * 45, rows / 25_000))
            p50 = 0.012 * (1 + users / 24) * (1 + 0.05 * rng.standard_normal())
            lat.append(LatencyPoint(t, p50, p50 * 1.8, p50 * 3.1 * (1 + 0.2 * rng.random())))
            res.append(ResourcePoint(t, min(200.0, 12 + users * 2.5 + 4 * rng.random()),
                                     int(350e6 + users * 42e6)))
        done_steps = [SweepPoint(u, 36e6 * (1 - math.exp(-u / 20)), 36e6 * 45 * (1 - math.exp(-u / 20)),
                                 36e6 * (1 - math.exp(-u / 20)) / 25_000, 0.012 * (1 + u / 24),
                                 0.04 * (1 + u / 24), True) for u in SWEEP_USERS[:step]]
        partial = (t - step * step_len) / step_len
        current = SweepPoint(users, rows * min(1.0, 0.6 + partial), rows * 45, rows / 25_000,
                             0.012 * (1 + users / 24), 0.04 * (1 + users / 24), partial >= 0.999)
        sweep = done_steps + [current]
        workers = {w: "running" for w in range(users)}
        if users >= 8:
            workers[5] = "failed"
        yield LiveSnapshot(
            run_id="synthetic-0042", status="running", target="dolphindb",
            workload="read one stock-day", step_index=step, steps_total=len(SWEEP_USERS),
            users=users, elapsed_s=t, ops_done=int(t * 310), ops_failed=1 if users >= 8 else 0,
            progress=t / seconds,
            message=("Traceback (most recent call last):\n  File \"worker.py\", line 88, in run\n"
                     "    frame = session.run(query)\nConnectionResetError: [Errno 104] Connection reset "
                     "by peer (worker 5, 127.0.0.1:8848)") if users >= 8 else "",
            throughput=list(tp), latency=list(lat),
            phase_means={"server": 0.004, "transfer": 0.006, "decode": 0.011},
            phase_percentiles={"server": {"p50": 0.0035, "p95": 0.007, "p99": 0.011},
                               "transfer": {"p50": 0.005, "p95": 0.01, "p99": 0.016},
                               "decode": {"p50": 0.01, "p95": 0.018, "p99": 0.027}},
            sweep=sweep, workers=workers,
            worker_errors={5: "ConnectionResetError: [Errno 104] Connection reset by peer"} if users >= 8 else {},
            resources=list(res))


def wait_ms(app: QApplication, ms: int) -> None:
    """Run the event loop for `ms` so the paint timers fire (a script, not a test)."""
    loop = QEventLoop()
    QTimer.singleShot(ms, loop.quit)
    loop.exec()


def framed(widget: QWidget, size: tuple[int, int]) -> QWidget:
    window = QWidget()
    window.setWindowTitle(TITLE)
    banner = QLabel(f"<b>{TITLE}</b>")
    banner.setProperty("role", "warning")
    layout = QVBoxLayout(window)
    layout.setContentsMargins(4, 4, 4, 4)
    layout.addWidget(banner)
    layout.addWidget(widget, 1)
    window.resize(*size)
    return window


def render_dashboard(app, out: Path, size, theme: str, scale: float, name: str) -> dict:
    apply_theme(app, theme, scale)
    dash = LiveDashboard()
    # report 003 read scaling, 8 nodes (M rows/s), for contrast with the measured line
    dash.set_sweep_reference("8 nodes, report 003", [1, 2, 4, 8, 16, 32, 64, 128],
                             [v * 1e6 for v in (1.45, 2.73, 5.40, 9.65, 17.16, 25.29, 31.51, 36.50)])
    window = framed(dash, size)
    window.show()
    snaps = list(synthetic_snapshots())
    t0 = time.perf_counter()
    for snap in snaps:
        dash.show_snapshot(snap)
    feed_s = time.perf_counter() - t0
    wait_ms(app, 250)
    app.processEvents()
    window.grab().save(str(out / f"{name}.png"))
    dash.tabs.setCurrentIndex(1)
    wait_ms(app, 150)
    sweep_name = "widgets_sweep.png" if theme == "light" and scale == 1.0 else f"{name}_sweep.png"
    window.grab().save(str(out / sweep_name))
    dash.tabs.setCurrentIndex(2)
    wait_ms(app, 100)
    window.grab().save(str(out / f"{name}_phases.png"))
    figures = {"snapshots": len(snaps), "feed_ms": feed_s * 1e3, "applies": dash.apply_count,
               "rows_chart_repaints": dash.rows_chart.render_count}
    window.close()
    window.deleteLater()
    return figures


def measure_costs(app, size) -> None:
    """What one apply and one chart repaint cost with an hour of per-second history."""
    apply_theme(app, "light")
    dash = LiveDashboard()
    window = framed(dash, size)
    window.show()
    wait_ms(app, 50)
    base = list(synthetic_snapshots(seconds=3600, per_second=1, stop_at=None))[-1]
    applies, repaints = [], []
    for i in range(5):
        base.run_id = f"synthetic-cost-{i}"        # a new run: every series is filled afresh
        t0 = time.perf_counter()
        dash.show_final(base)
        applies.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        for chart in (dash.rows_chart, dash.bytes_chart, dash.latency_chart, dash.breakdown_chart,
                      dash.cpu_chart, dash.memory_chart):
            chart.render_now()
            chart.graphics.viewport().repaint()     # the paint itself, synchronously
        repaints.append(time.perf_counter() - t0)
    print(f"one hour of history ({len(base.throughput)} points per series): apply median "
          f"{sorted(applies)[2] * 1e3:.1f} ms, repaint of the six Live charts median "
          f"{sorted(repaints)[2] * 1e3:.1f} ms (offscreen, {size[0]}x{size[1]})")
    window.close()
    window.deleteLater()


def render_breakdown(app, out: Path, size) -> None:
    apply_theme(app, "light")
    chart = BreakdownChart("Read one trading day into pandas, L2 (mean seconds)")
    # published: report 000, L2 warm; only totals and the server share are in the text
    chart.set_data(
        {"pickle": {"io": 4.1, "decode": 15.2}, "duckdb": {"query": 2.2, "decode": 5.9},
         "dolphindb": {"server": 1.2, "transfer": 3.1, "decode": 12.4}},
        # the report gives totals, not io/decode splits: those phases keep their combined names
        published={"pickle": {"io + decode": 20.0}, "dolphindb": {"server": 5.0, "transfer + decode": 17.0}})
    window = framed(chart, (size[0], size[1] // 2))
    window.show()
    wait_ms(app, 150)
    window.grab().save(str(out / "widgets_breakdown.png"))
    window.close()
    window.deleteLater()


def render_history_and_form(app, out: Path) -> None:
    apply_theme(app, "light")
    view = RunHistoryView()
    rows = []
    for i, (target, status) in enumerate([("duckdb", "completed"), ("pickle", "completed"),
                                          ("dolphindb", "failed"), ("parquet", "completed"),
                                          ("dolphindb", "cancelled")]):
        rows.append({"run_id": f"synthetic-{i:04d}", "started_at": f"2025-01-0{i + 1} 10:1{i}:00",
                     "workload": "read one day", "dataset": "taq-l1 small", "target": target,
                     "users": 2 ** i, "status": status, "rows_per_s": 1.5e6 * (i + 1),
                     "mb_per_s": 67.5 * (i + 1), "p50_ms": 12.5 + i, "p99_ms": 40.2 + 3 * i})
    view.set_rows(rows)
    window = framed(view, (1000, 330))
    window.show()
    view.select_run_ids(["synthetic-0001", "synthetic-0003"])
    wait_ms(app, 50)
    window.grab().save(str(out / "widgets_history.png"))
    window.close()

    form = ParamForm([
        Param("batch_rows", "Batch size", "int", 25_000, 10, 1_000_000, "rows", help="rows per request"),
        Param("duration", "Duration", "float", 30.0, 1, 3600, "s"),
        Param("strings", "Strings as", "choice", "arrow", choices=("object", "arrow", "category")),
        Param("cold", "Cold cache", "bool", False),
        Param("users", "Users sweep", "int_list", [1, 2, 4, 8], 1, 128, "users"),
    ])
    form.editor("users").setText("1, 2, 400")
    window = framed(form, (560, 260))
    window.show()
    wait_ms(app, 50)
    window.grab().save(str(out / "widgets_params.png"))
    window.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="/tmp", type=Path)
    parser.add_argument("--size", default="1280x800")
    args = parser.parse_args()
    size = tuple(int(v) for v in args.size.lower().split("x"))
    app = QApplication.instance() or QApplication(sys.argv)
    app.setApplicationName("tickbench-render")
    for theme, scale, name in (("light", 1.0, "widgets_dashboard"), ("dark", 1.0, "widgets_dashboard_dark"),
                               ("dark", 1.5, "widgets_dashboard_demo")):
        figures = render_dashboard(app, args.out, size, theme, scale, name)
        print(f"{name}: {figures['snapshots']} synthetic snapshots fed in {figures['feed_ms']:.1f} ms; "
              f"{figures['applies']} dashboard applies, {figures['rows_chart_repaints']} chart repaints")
    render_breakdown(app, args.out, size)
    render_history_and_form(app, args.out)
    measure_costs(app, size)
    print(f"screenshots in {args.out}/widgets_*.png")


if __name__ == "__main__":
    main()
