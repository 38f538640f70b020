"""GUI responsiveness during a run: lateness of a 10 ms timer while N users stream records.

The real main window, the real run controller and N real worker processes running the no-op
workload (the fastest record stream the engine can produce). Prints the timer's lateness
percentiles while all workers are running, and how often the dashboard repainted.

    QT_QPA_PLATFORM=offscreen .venv/bin/python benchmarks/bench_event_loop.py [--users 32] [--seconds 10]
"""
from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import numpy as np  # noqa: E402
from PySide6.QtCore import QSettings, Qt, QTimer  # noqa: E402
from PySide6.QtWidgets import QApplication  # noqa: E402

from app.main_window import MainWindow  # noqa: E402
from widgets.theme import apply_theme  # noqa: E402
from workloads.scenario import Scenario  # noqa: E402
from workloads.store import ResultsStore  # noqa: E402

TICK_MS = 10


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--users", type=int, default=32)
    parser.add_argument("--seconds", type=float, default=10.0)
    args = parser.parse_args()
    app = QApplication(sys.argv[:1])
    apply_theme(app, "light")
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["TICKBENCH_HOME"] = tmp
        store = ResultsStore(Path(tmp) / "results.duckdb")
        settings = QSettings(str(Path(tmp) / "settings.ini"), QSettings.Format.IniFormat)
        window = MainWindow(store, Path(tmp) / "data", settings)
        window.resize(1400, 880)
        window.show()
        lateness: list[float] = []
        last = [time.perf_counter()]
        state = {"running": False, "ops": 0}

        def tick() -> None:
            now = time.perf_counter()
            if state["running"]:
                lateness.append(now - last[0] - TICK_MS / 1000)
            last[0] = now

        def on_snapshot(snapshot) -> None:
            state["running"] = snapshot.status == "running" and snapshot.workers and all(
                s == "running" for s in snapshot.workers.values())
            state["ops"] = snapshot.ops_done

        timer = QTimer()
        timer.setTimerType(Qt.TimerType.PreciseTimer)
        timer.timeout.connect(tick)
        timer.start(TICK_MS)
        window.controller.snapshot_ready.connect(on_snapshot)
        window.controller.run_finished.connect(lambda _r: app.quit())
        scenario = Scenario(name="event-loop bench", workload="noop", users=(args.users,), operations=0,
                            duration_s=args.seconds)
        window.start_scenario(scenario)
        started = time.perf_counter()
        app.exec()
        wall = time.perf_counter() - started
        window.close()
        store.close()
    late_ms = np.array(lateness) * 1000
    if late_ms.size == 0:
        print("no samples: the workers never all ran")
        return 1
    print(f"{args.users} users, no-op workload, {state['ops']:,} records streamed; run wall {wall:.1f} s")
    print(f"10 ms timer lateness while all workers ran ({late_ms.size} ticks): "
          f"p50 {np.percentile(late_ms, 50):.2f} ms, p99 {np.percentile(late_ms, 99):.2f} ms, "
          f"max {late_ms.max():.2f} ms")
    print(f"dashboard applies: {window.dashboard.apply_count}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
