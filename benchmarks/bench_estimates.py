"""Does every report's tiny card finish within the range its estimate shows?

For each report's card, experiment by experiment in the gallery's order, on the embedded default
(DuckDB, no comparator, as a newcomer's card runs): the estimate the card shows at that moment
(calibrated on the runs made so far in the results store, as the window calibrates it), then the
experiment's runs, timed from the first run's start to the last one's end (what the user waits),
printed beside the range. Last line: ``N of M experiments within their range``.

Starts from an empty results store (the first experiment's range is the uncalibrated one) unless
``--results`` names one whose runs should calibrate it. State the machine's load with the figures.

    .venv/bin/python benchmarks/bench_estimates.py [--reports 000,001,002,003,004] [--size tiny]
        [--results DIR] [--data-dir DIR]
"""
from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from workloads.reproduce.calibration import calibration  # noqa: E402
from workloads.reproduce.catalog import GALLERY as REPORTS  # noqa: E402
from workloads.reproduce.estimate import duration_text, estimate  # noqa: E402
from workloads.reproduce.run_report import planned_runs, run_planned  # noqa: E402
from workloads.results.store import ResultsStore  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reports", default=",".join(REPORTS))
    parser.add_argument("--size", default="tiny")
    parser.add_argument("--results", type=Path, help="a results store to calibrate on and add to")
    parser.add_argument("--data-dir", type=Path, help="where the local targets lay out data")
    args = parser.parse_args()
    scratch = tempfile.TemporaryDirectory(prefix="tickbench-estimates-")
    root = Path(scratch.name)
    os.environ.setdefault("TICKBENCH_HOME", str(root / "home"))
    store = ResultsStore(args.results or root / "results")
    data_dir = args.data_dir or root / "data"
    print(f"load average at start: {' '.join(f'{x:.2f}' for x in os.getloadavg())} on {os.cpu_count()} cores")
    print(f"{'report/experiment':<28} {'estimate shown':<34} {'waited':>10}  within")
    inside = total = 0
    for report in args.reports.split(","):
        for experiment in REPORTS[report].experiments:
            calibrated = calibration(store)
            shown = estimate(experiment, args.size, subject="duckdb", data_dir=data_dir, comparator=None,
                             calibration=calibrated)
            planned = planned_runs(report, args.size, "duckdb", None, data_dir, experiments=[experiment.key])
            start = time.perf_counter()
            results = run_planned(store, planned)
            waited = time.perf_counter() - start
            ok = shown.low_s <= waited <= shown.high_s
            inside += ok
            total += 1
            failed = [r for r in results if r.status != "completed"]
            note = f"  ({len(failed)} run(s) {failed[0].status}: {failed[0].message[:60]})" if failed else ""
            print(f"{report}/{experiment.key:<24} {duration_text(shown.low_s) + ' to ' + duration_text(shown.high_s):<20}"
                  f"{'(' + str(calibrated.runs) + ' runs)':<14} {waited:9.1f}s  "
                  f"{'yes' if ok else 'NO'}{note}", flush=True)
    print(f"load average at end: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print(f"{inside} of {total} experiments within their range")
    store.close()
    scratch.cleanup()
    return 0 if inside == total else 1


if __name__ == "__main__":
    sys.exit(main())
