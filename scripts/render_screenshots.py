"""Render the real main window to PNG mid-run and after runs (README pictures, visual checks).

Runs real scenarios on the embedded default in a temporary home, so nothing is synthetic:

    QT_QPA_PLATFORM=offscreen .venv/bin/python scripts/render_screenshots.py [--out docs/screenshots]
"""
from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
# A 1920x1080 offscreen screen, so demo mode (full screen) looks as it would on a projector.
_SCREEN = Path(tempfile.gettempdir()) / "tickbench_offscreen_screen.json"
_SCREEN.write_text('{"screens": [{"name": "demo", "x": 0, "y": 0, "width": 1920, "height": 1080, '
                   '"logicalDpi": 96, "logicalBaseDpi": 96, "dpr": 1}]}')
os.environ.setdefault("QT_QPA_PLATFORM", f"offscreen:configfile={_SCREEN}")

from PySide6.QtCore import QEventLoop, QSettings, QTimer  # noqa: E402
from PySide6.QtWidgets import QApplication  # noqa: E402

from app.main_window import MainWindow  # noqa: E402
from widgets.theme import apply_theme  # noqa: E402
from workloads.datasets.schema import Scale  # noqa: E402
from workloads.scenario import Scenario  # noqa: E402
from workloads.store import ResultsStore  # noqa: E402

SCALE = Scale(days=2, rows_per_day=400_000, symbols=300)


def scenarios(data: Path) -> list[Scenario]:
    duck = {"path": str(data / "tickbench_data.duckdb")}
    files = {"root": str(data)}
    return [
        Scenario(name="DuckDB read-day sweep", scale=SCALE, target="duckdb", target_config=duck,
                 workload="read-day", users=(1, 2, 4), operations=0, duration_s=3.0, strings="object"),
        Scenario(name="pickle read-day sweep", scale=SCALE, target="pickle", target_config=files,
                 workload="read-day", users=(1, 2, 4), operations=0, duration_s=3.0, strings="object"),
    ]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path("docs/screenshots"))
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    app = QApplication(sys.argv[:1])
    apply_theme(app, "light")
    tmp = Path(tempfile.mkdtemp(prefix="tickbench-shots-"))
    os.environ["TICKBENCH_HOME"] = str(tmp)
    store = ResultsStore(tmp / "results.duckdb")
    settings = QSettings(str(tmp / "settings.ini"), QSettings.Format.IniFormat)
    window = MainWindow(store, tmp / "data", settings)
    window.resize(1440, 900)
    window.show()
    queue = scenarios(tmp / "data")
    shots = {"mid": False}

    def save(name: str) -> None:
        loop = QEventLoop()  # let the charts' paint timers fire before grabbing
        QTimer.singleShot(500, loop.quit)
        loop.exec()
        path = args.out / f"{name}.png"
        window.grab().save(str(path))
        print(f"wrote {path}")

    def on_snapshot(snapshot) -> None:
        all_running = snapshot.workers and all(s == "running" for s in snapshot.workers.values())
        if not shots["mid"] and snapshot.step_index == 2 and all_running:
            shots["mid"] = True
            QTimer.singleShot(1500, lambda: save("main_window_running"))

    def next_or_finish(_result=None) -> None:
        if queue:
            scenario = queue.pop(0)
            window.builder.set_scenario(scenario)
            window.start_scenario(scenario)
            return
        save("main_window_after_run")
        window.refresh_history()
        window.tabs.setCurrentWidget(window.history)
        save("history")
        ids = list(store.runs()["run_id"])
        window.compare_runs(ids)
        save("compare")
        window.tabs.setCurrentWidget(window.dashboard)
        window.open_run(ids[0])
        window.set_theme("dark")
        window.toggle_demo()
        save("demo_dark")
        window.close()
        app.quit()

    window.controller.snapshot_ready.connect(on_snapshot)
    window.controller.run_finished.connect(lambda r: QTimer.singleShot(300, next_or_finish))
    QTimer.singleShot(100, next_or_finish)
    app.exec()
    store.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
