"""Render every documentation screenshot from real runs: the one script behind docs/screenshots.

    QT_QPA_PLATFORM=offscreen .venv/bin/python scripts/render_screenshots.py --out docs/screenshots
        --set main|reports|engines|dialogs|all

``main``: read-day sweeps (running, after, history, compare: verdicts and overlaid, demo mode); ``reports``: reports 001
and 004's experiments (a query suite on DuckDB and Parquet side by side, with one query whose
Parquet answer differs on purpose, its answers dialog, footprints, an import); ``engines``: the
targets panel with every engine and a saved ClickHouse server, and report 001's suite on the
embedded engines compared; ``dialogs``: File > Import data... and Existing table...
(scripts/screenshot_dialogs.py); ``all``: each set in turn, each in its own process.
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from PySide6.QtCore import QEventLoop, QSettings, QTimer  # noqa: E402
from PySide6.QtWidgets import QApplication, QWidget  # noqa: E402

from app.window.main_window import MainWindow  # noqa: E402
from widgets.common.theme import apply_theme  # noqa: E402
from workloads.datasets.schema import Scale  # noqa: E402
from workloads.scenario import Scenario  # noqa: E402
from workloads.results.store import ResultsStore  # noqa: E402

SCALE = Scale(days=2, rows_per_day=400_000, symbols=300)


REPORT_SCALE = Scale(days=3, rows_per_day=300_000, symbols=200)
# an import is an operation per day file: enough days that each step measures over a second
IMPORT_SCALE = Scale(days=8, rows_per_day=300_000, symbols=200)
# A user suite with report 001's spread sums, and the same question asked wrongly in SQL, so the
# compare view has a differing answer to show (the real suites agree: tickbench verify).
SKEWED_SUITE = """
dataset = "taq"
title = "Spread sums, and one asked wrongly"
[[query]]
id = "spread"
category = "group by symbol"
description = "sum of spreads per symbol on the last day"
params = { day = "day:-1" }
columns = ["symbol", "spread"]
days = "day"
duckdb = "SELECT symbol, sum(ofr - bid) AS spread FROM {quotes} WHERE date = $day GROUP BY symbol"
pandas = "taq_spread_sum"

[[query]]
id = "spread_wrong"
category = "group by symbol"
description = "the same, with the SQL text summing every day"
params = { day = "day:-1" }
columns = ["symbol", "spread"]
days = "day"
duckdb = "SELECT symbol, sum(ofr - bid) AS spread FROM {quotes} GROUP BY symbol"
pandas = "taq_spread_sum"
"""


def report_scenarios(data: Path) -> list[Scenario]:
    duck = {"path": str(data / "tickbench_data.duckdb")}
    files = {"root": str(data)}
    imported = {"path": str(data / "imported.duckdb")}
    suite = {"suite": "taq001", "repetitions": 50}   # a window over a second: not "too short"
    return [
        Scenario(name="DuckDB import", scale=IMPORT_SCALE, target="duckdb", target_config=imported,
                 workload="import", users=(1, 2)),
        Scenario(name="DuckDB report 001 suite", scale=REPORT_SCALE, target="duckdb", target_config=duck,
                 workload="query-suite", params=suite),
        Scenario(name="Parquet report 001 suite", scale=REPORT_SCALE, target="parquet", target_config=files,
                 workload="query-suite", params=suite),
        Scenario(name="DuckDB skewed suite", scale=REPORT_SCALE, target="duckdb", target_config=duck,
                 workload="query-suite", params={"suite": "skewed", "repetitions": 100}),
        Scenario(name="Parquet skewed suite", scale=REPORT_SCALE, target="parquet", target_config=files,
                 workload="query-suite", params={"suite": "skewed", "repetitions": 100}),
    ]


def engine_scenarios(data: Path) -> list[Scenario]:
    from workloads.targets.engines import ENGINES, default_config, missing_client
    suite = {"suite": "taq001", "repetitions": 10}
    return [Scenario(name=f"{e.label}: report 001 suite", scale=REPORT_SCALE, target=e.kind,
                     target_config=default_config(e.kind, data), workload="query-suite", params=suite)
            for e in ENGINES if e.kind in ("duckdb", "clickhouse", "arcticdb", "hdf5") and not missing_client(e.kind)]


def scenarios(data: Path) -> list[Scenario]:
    duck = {"path": str(data / "tickbench_data.duckdb")}
    files = {"root": str(data)}
    return [
        Scenario(name="DuckDB read-day sweep", scale=SCALE, target="duckdb", target_config=duck,
                 workload="read-day", users=(1, 2, 4), operations=0, duration_s=3.0, strings="object"),
        Scenario(name="pickle read-day sweep", scale=SCALE, target="pickle", target_config=files,
                 workload="read-day", users=(1, 2, 4), operations=0, duration_s=3.0, strings="object"),
    ]


SETS = ("main", "reports", "engines", "dialogs")


def offscreen_screen(width: int, height: int) -> None:
    """The offscreen platform's screen is 800x800 unless told otherwise, and demo mode goes full
    screen: give it the window's size so full-screen shots are that size too."""
    if os.environ.get("QT_QPA_PLATFORM", "offscreen") != "offscreen":
        return                          # a real display, or a screen configured by the caller
    config = Path(tempfile.mkdtemp(prefix="tickbench-screen-")) / "screens.json"
    config.write_text(f'{{"screens": [{{"name": "shot", "x": 0, "y": 0, "width": {width}, '
                      f'"height": {height}, "logicalDpi": 96, "logicalBaseDpi": 96, "dpr": 1}}]}}')
    os.environ["QT_QPA_PLATFORM"] = f"offscreen:configfile={config}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path("docs/screenshots"))
    parser.add_argument("--set", choices=(*SETS, "all"), default="main")
    parser.add_argument("--size", default="1280x800", help="window size (default 1280x800, a laptop screen)")
    args = parser.parse_args()
    if args.set == "all":               # one process per set: each has its own home and window
        for name in SETS:
            started = time.monotonic()
            subprocess.run([sys.executable, __file__, "--out", str(args.out), "--set", name,
                            "--size", args.size], check=True)
            print(f"set {name}: {time.monotonic() - started:.0f} s", flush=True)
        return 0
    width, height = (int(v) for v in args.size.lower().split("x"))
    args.out.mkdir(parents=True, exist_ok=True)
    offscreen_screen(width, height)
    app = QApplication(sys.argv[:1])
    apply_theme(app, "light")
    tmp = Path(tempfile.mkdtemp(prefix="tickbench-shots-"))
    os.environ["TICKBENCH_HOME"] = str(tmp)
    if args.set == "dialogs":
        from screenshot_dialogs import render_dialogs
        render_dialogs(app, tmp, args.out, width, height)
        return 0
    (tmp / "queries").mkdir()
    (tmp / "queries" / "skewed.toml").write_text(SKEWED_SUITE)
    store = ResultsStore(tmp / "results")
    settings = QSettings(str(tmp / "settings.ini"), QSettings.Format.IniFormat)
    window = MainWindow(store, tmp / "data", settings)
    window.resize(width, height)
    window.show()
    queue = {"main": scenarios, "reports": report_scenarios, "engines": engine_scenarios}[args.set](tmp / "data")
    if args.set == "engines":     # a saved server (no traffic: nothing is tested) beside the engines
        window.targets_panel.add_profile({"kind": "clickhouse", "profile": {
            "name": "analytics", "host": "127.0.0.1", "port": 8123, "user": "reader", "database": "ticks"}})
    shots = {"mid": False}
    ran = list(queue)                   # so the form shows the scenario of the run opened

    def open_run(index: int) -> None:
        window.builder.set_scenario(ran[index])
        window.stored.open_run(ids_in_order()[index])
        settle()

    def ids_in_order() -> list[str]:
        return list(store.runs().sort_values("created_at")["run_id"])

    def save(name: str) -> None:
        loop = QEventLoop()  # let the charts' paint timers fire before grabbing
        QTimer.singleShot(500, loop.quit)
        loop.exec()
        path = args.out / f"{name}.png"
        window.grab().save(str(path))
        print(f"wrote {path}")

    def on_snapshot(snapshot) -> None:
        if args.set == "reports":
            done = sum(q.status != "pending" for q in snapshot.queries)
            if not shots["mid"] and snapshot.workload == "query-suite" and 3 <= done < len(snapshot.queries):
                shots["mid"] = True
                window.dashboard.tabs.setCurrentWidget(window.dashboard.query_chart)
                save("suite_running")
            return
        all_running = snapshot.workers and all(s == "running" for s in snapshot.workers.values())
        if not shots["mid"] and snapshot.step_index == 2 and all_running:
            shots["mid"] = True
            QTimer.singleShot(1500, lambda: save("main_window_running"))

    def settle() -> None:
        """Until the window's reads off the GUI thread have landed."""
        while window.background.busy:
            app.processEvents()
            time.sleep(0.01)

    def finish_reports() -> None:
        ids = ids_in_order()
        open_run(0)
        window.dashboard.tabs.setCurrentWidget(window.dashboard.footprint_chart)
        save("import_footprint")
        open_run(1)
        window.dashboard.tabs.setCurrentWidget(window.dashboard.query_chart)
        save("suite_after_run")
        window.stored.compare_runs(ids[1:3])
        settle()
        window.compare.tabs.setCurrentWidget(window.compare.query_chart)
        save("compare_suites")
        window.compare.tabs.setCurrentWidget(window.compare.footprint_chart)
        save("compare_footprints")
        window.stored.compare_runs(ids[3:5])
        settle()
        window.compare.tabs.setCurrentWidget(window.compare.query_chart)
        save("compare_differs")
        window.compare.show_answers("spread_wrong")
        loop = QEventLoop()
        QTimer.singleShot(500, loop.quit)
        loop.exec()
        path = args.out / "answers_dialog.png"
        window.compare.answers_dialog.grab().save(str(path))
        print(f"wrote {path}")
        window.close()
        app.quit()

    def finish_engines() -> None:
        ids = list(store.runs().sort_values("created_at")["run_id"])
        window.targets_panel.select("hdf5")
        window.stored.compare_runs(ids)
        settle()
        window.compare.tabs.setCurrentWidget(window.compare.query_chart)
        save("engines_compare")
        dock = window.findChild(QWidget, "targets_dock")
        loop = QEventLoop()
        QTimer.singleShot(300, loop.quit)
        loop.exec()
        window.resize(width, height + 200)     # the dock alone: tall enough for every target row
        loop = QEventLoop()
        QTimer.singleShot(300, loop.quit)
        loop.exec()
        window.targets_panel.grab().save(str(args.out / "targets_panel.png"))
        print(f"wrote {args.out / 'targets_panel.png'} ({dock is not None})")
        window.close()
        app.quit()

    def next_or_finish(_result=None) -> None:
        if queue:
            scenario = queue.pop(0)
            window.builder.set_scenario(scenario)
            window.runs.start(scenario)
            return
        if args.set == "engines":
            finish_engines()
            return
        if args.set == "reports":
            finish_reports()
            return
        save("main_window_after_run")
        window.stored.refresh_history()
        settle()
        window.tabs.setCurrentWidget(window.history)
        save("history")
        ids = list(store.runs()["run_id"])
        window.stored.compare_runs(ids)
        settle()
        save("compare_verdicts")                     # it opens on the verdicts
        window.compare.tabs.setCurrentWidget(window.compare.throughput_page)
        save("compare")
        window.tabs.setCurrentWidget(window.dashboard)
        open_run(len(ran) - 1)
        window.view.set_theme("dark")
        window.view.toggle_demo()
        # the sweep chart alone: in demo's large type the Results tab leaves its chart a sliver at 800 high
        tabs = window.dashboard.tabs
        tabs.setCurrentIndex(next(i for i in range(tabs.count()) if tabs.tabText(i) == "Users sweep"))
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
