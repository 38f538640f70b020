"""``tickbench --self-test``: prove a build works end to end, then exit 0 (or 1 with a reason).

Builds the real main window offscreen (every GUI module must import), prints the "ready" line,
then runs a small scenario on the embedded default with two worker processes into a temporary
results file and checks the stored run.
"""
from __future__ import annotations

import os
import sys
import tempfile
import time
from pathlib import Path


def run_self_test(results: Path | None = None) -> int:
    started = time.perf_counter()
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    with tempfile.TemporaryDirectory(prefix="tickbench-selftest-") as tmp:
        tmp_path = Path(tmp)
        os.environ["TICKBENCH_HOME"] = str(tmp_path / "home")
        try:
            window_ok = _open_window(tmp_path)
            print(f"tickbench ready in {time.perf_counter() - started:.3f} s ({window_ok})", flush=True)
            return _run_scenario(results or tmp_path / "selftest", tmp_path / "data")
        except Exception as exc:
            print(f"self-test FAILED: {type(exc).__name__}: {exc}", flush=True)
            return 1


def _open_window(tmp_path: Path) -> str:
    from PySide6.QtCore import QCoreApplication, QEvent, QSettings
    from PySide6.QtWidgets import QApplication

    from workloads.passwords import KeyringPasswords
    from app.window.main_window import MainWindow
    from widgets.common.theme import apply_theme
    from workloads.results.store import ResultsStore

    app = QApplication.instance() or QApplication(sys.argv[:1])
    apply_theme(app, "light")
    store = ResultsStore(tmp_path / "results")
    settings = QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat)
    window = MainWindow(store, tmp_path / "data", settings, KeyringPasswords())
    window.show()
    app.processEvents()
    size = f"window {window.width()}x{window.height()}"
    window.close()
    # Delete the window while Python is alive: left to interpreter shutdown, Qt destroys
    # pyqtgraph's items and calls back into a half-finalised Python (SIGSEGV at exit).
    window.deleteLater()
    QCoreApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete)
    store.close()
    return size


def _run_scenario(results: Path, data_dir: Path) -> int:
    from workloads.datasets.schema import Scale
    from workloads.run.runner import Runner
    from workloads.scenario import Scenario
    from workloads.results.store import ResultsStore

    store = ResultsStore(results)
    scenario = Scenario(name="self-test", dataset="taq", scale=Scale(days=1, rows_per_day=20_000, symbols=20),
                        target="duckdb", target_config={"path": str(data_dir / "selftest_data.duckdb")},
                        workload="read-day", users=(2,), operations=2)
    result = Runner(scenario, store, ready_timeout_s=120).run()
    workers = store.workers(result.run_id)
    pids = sorted(int(p) for p in workers["pid"].dropna())
    ops = len(store.ops(result.run_id))
    store.close()
    print(f"self-test run {result.run_id}: {result.status}; workers {pids}; {ops} operations stored in {results}",
          flush=True)
    if result.status != "completed" or len(pids) < 2 or ops < 4 or os.getpid() in pids:
        print(f"self-test FAILED: {result.message or 'run incomplete'}", flush=True)
        return 1
    print("self-test OK", flush=True)
    return 0
