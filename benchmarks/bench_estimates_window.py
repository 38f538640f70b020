"""Does every report's tiny card finish within the range it shows, in the window as a user runs it?

The real window (``MainWindow``, 1280x800 unless ``--size``; under Xvfb with ``QT_QPA_PLATFORM=xcb``,
or offscreen) on a fresh home and results store, the embedded default as a newcomer has it. For
each report's card, experiment by experiment in the gallery's order: the estimate its row shows
at that moment (the window calibrates it off the GUI thread on the runs made so far, as it does
for a user), then Run pressed on the row, timed until the window's run controller has finished
every run of it (what the user waits, the window's own run process and drawing included). Prints
each wait beside the range and the row's words, the load average at the start and the end, and
last ``N of M experiments within their range``. ``benchmarks/bench_estimates.py`` is the same
check without the window.

    xvfb-run -s "-screen 0 1600x1000x24" .venv/bin/python benchmarks/bench_estimates_window.py \
        [--reports 000,001,002,003,004] [--size 1280x800] [--screenshots DIR]
"""
from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

RUN_DEADLINE_S = 1800.0     # one experiment's runs; a card that takes longer has failed its estimate anyway


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reports", default="000,001,002,003,004")
    parser.add_argument("--size", default="1280x800", help="the window's size, WIDTHxHEIGHT")
    parser.add_argument("--screenshots", type=Path, help="save the gallery as PNG before and after each card")
    args = parser.parse_args()
    scratch = tempfile.TemporaryDirectory(prefix="tickbench-estimates-window-")
    root = Path(scratch.name)
    os.environ["TICKBENCH_HOME"] = str(root / "home")       # a newcomer's machine: no runs, no targets

    from PySide6.QtCore import QCoreApplication, QSettings
    from PySide6.QtWidgets import QApplication

    from app.window.main_window import MainWindow
    from widgets.common.theme import apply_theme
    from workloads.passwords import KeyringPasswords
    from workloads.reproduce.catalog import GALLERY as REPORTS
    from workloads.reproduce.estimate import duration_text
    from workloads.results.store import ResultsStore

    QCoreApplication.setOrganizationName("Tickbench-bench")
    app = QApplication.instance() or QApplication(sys.argv[:1])
    apply_theme(app, "light")
    store = ResultsStore(root / "results")
    settings = QSettings(str(root / "settings.ini"), QSettings.Format.IniFormat)
    window = MainWindow(store, root / "data", settings, KeyringPasswords(), "light")
    width, height = (int(x) for x in args.size.split("x"))
    window.resize(width, height)
    window.show()

    def pump_until(done, deadline_s: float) -> bool:
        end = time.monotonic() + deadline_s
        while not done():
            if time.monotonic() > end:
                return False
            app.processEvents()
            time.sleep(0.01)
        return True

    def settled() -> bool:          # nothing running, queued, or being read off the GUI thread
        return not window.controller.busy and not window.controller.waiting and not window.background.busy

    pump_until(settled, 60)
    print(f"load average at start: {' '.join(f'{x:.2f}' for x in os.getloadavg())} on {os.cpu_count()} cores; "
          f"window {width}x{height}, platform {app.platformName()}")
    print(f"{'report/experiment':<34} {'range shown':<22} {'waited':>8}  within  the row's words")
    inside = total = 0
    for report in args.reports.split(","):
        window.show_gallery()
        for experiment in REPORTS[report].experiments:
            row = window.gallery.row(report, experiment.key)
            row.set_size("tiny")
            pump_until(settled, 60)             # the calibration of the runs so far has reached the row
            shown, words = row.estimate(), row.estimate_label.text()
            finished = []
            window.controller.run_finished.connect(finished.append)
            start = time.perf_counter()
            row.run_button.click()
            ended = pump_until(lambda: finished and settled(), RUN_DEADLINE_S)
            waited = time.perf_counter() - start
            window.controller.run_finished.disconnect(finished.append)
            if args.screenshots:
                args.screenshots.mkdir(parents=True, exist_ok=True)
                window.show_gallery()
                app.processEvents()
                window.grab().save(str(args.screenshots / f"{report}_{experiment.key}.png"))
            ok = ended and shown.low_s <= waited <= shown.high_s
            inside += ok
            total += 1
            failed = [r for r in finished if r.status != "completed"]
            note = f"; {len(failed)} run(s) {failed[0].status}: {failed[0].message[:60]}" if failed else ""
            span = f"{duration_text(shown.low_s)} to {duration_text(shown.high_s)}"
            print(f"{report}/{experiment.key:<30} {span:<22} {waited:7.1f}s  {'yes' if ok else 'NO':<6}  "
                  f"{words}{'' if ended else '; not finished'}{note}", flush=True)
    print(f"load average at end: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print(f"{inside} of {total} experiments within their range")
    window.close()
    store.close()
    scratch.cleanup()
    return 0 if inside == total else 1


if __name__ == "__main__":
    sys.exit(main())
