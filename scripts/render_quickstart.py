"""Render the real window at each stage of the quick start, as a new user meets it, to PNG.

A fresh home, the window as it first opens, Run clicked on its default scenario (the embedded
DuckDB), a shot while it runs, one when it has finished (its answer first), then the same run on
pickle files and the two compared. Nothing is synthetic: real runs in their own processes.

    QT_QPA_PLATFORM=offscreen .venv/bin/python scripts/render_quickstart.py [--out docs/screenshots]
        [--width 1440 --height 900]

Writes quickstart_1_start.png, quickstart_2_running.png, quickstart_3_finished.png and
quickstart_4_compare.png.
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

from PySide6.QtCore import QEventLoop, QSettings, QTimer  # noqa: E402
from PySide6.QtWidgets import QApplication  # noqa: E402

from app.main_window import MainWindow  # noqa: E402
from widgets.theme import apply_theme  # noqa: E402
from workloads.results.store import ResultsStore  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path("docs/screenshots"))
    parser.add_argument("--width", type=int, default=1440)
    parser.add_argument("--height", type=int, default=900)
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    app = QApplication(sys.argv[:1])
    apply_theme(app, "light")
    home = Path(tempfile.mkdtemp(prefix="tickbench-quickstart-"))
    os.environ["TICKBENCH_HOME"] = str(home)
    store = ResultsStore(home / "results")
    window = MainWindow(store, home / "data", QSettings(str(home / "settings.ini"), QSettings.Format.IniFormat))
    window.resize(args.width, args.height)
    window.show()

    def wait(seconds: float = 0.6) -> None:
        loop = QEventLoop()           # the charts' paint timers fire, reads off the GUI thread land
        QTimer.singleShot(int(seconds * 1000), loop.quit)
        loop.exec()
        while window.background.busy:
            app.processEvents()
            time.sleep(0.01)

    def save(name: str) -> None:
        wait()
        path = args.out / f"quickstart_{name}.png"
        window.grab().save(str(path))
        print(f"wrote {path}", flush=True)

    def run_and_wait(mid_shot: str = "") -> str:
        finished = []
        window.controller.run_finished.connect(finished.append)
        window.run_action.trigger()
        if mid_shot:
            deadline = time.monotonic() + 300
            while time.monotonic() < deadline and not finished:
                snap = window.dashboard.snapshot
                # once a whole second is charted: the first part-second joins the next one
                if snap is not None and snap.status == "running" and snap.throughput:
                    save(mid_shot)
                    break
                wait(0.1)
        while not finished:
            wait(0.2)
        window.controller.run_finished.disconnect(finished.append)
        wait(1.0)
        return finished[0].run_id

    wait(1.0)
    save("1_start")
    first = run_and_wait("2_running")
    save("3_finished")
    combo = window.builder.target_combo
    combo.setCurrentIndex(combo.findData("pickle"))
    second = run_and_wait()
    window.history.select_run_ids([first, second])
    window.compare_runs([first, second])
    save("4_compare")
    window.close()
    store.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
