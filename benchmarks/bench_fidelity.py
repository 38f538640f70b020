"""Timing fidelity: does the pickle target report what a plain ``pickle.load`` costs?

Report 000 timed ``pickle.load`` of a file holding one TAQ day. The pickle target splits the same
read into io (file -> bytes) + decode (``pickle.loads``). This script times both in one process
on the same file (warm cache, alternating so drift hits both alike) and prints best and median
of each and their difference in %. Aim: within 3%.

    .venv/bin/python benchmarks/bench_fidelity.py [--rows 2000000] [--repeat 9] [--root DIR]

To compare another way of timing (e.g. the runner's worker harness), add a function taking
(path, n) or (target, layout, day, n) and returning a list of seconds to ``METHODS``.
"""
from __future__ import annotations

import argparse
import gc
import pickle
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from workloads.datasets.schema import Scale, StringMode  # noqa: E402
from workloads.targets import make_target  # noqa: E402


def time_direct(path: Path, n: int) -> list[float]:
    """``pickle.load`` of the file, as report 000 did it: open + load, n times."""
    times = []
    for _ in range(n):
        gc.collect()
        start = time.perf_counter()
        with open(path, "rb") as f:
            frame = pickle.load(f)
        times.append(time.perf_counter() - start)
        del frame
    return times


def time_target(target, layout, day, n: int) -> list[float]:
    """What the target reports for ``read_day``: io + decode."""
    times = []
    for _ in range(n):
        gc.collect()
        result = target.read_day(layout, day)
        times.append(result.phases["io"] + result.phases["decode"])
        del result
    return times


def time_target_wall(target, layout, day, n: int) -> list[float]:
    """Wall time around ``read_day`` (what the reported phases leave out: bookkeeping)."""
    times = []
    for _ in range(n):
        gc.collect()
        start = time.perf_counter()
        result = target.read_day(layout, day)
        times.append(time.perf_counter() - start)
        del result
    return times


def time_engine(root: str, rows: int, strings: str, n: int) -> list[float]:
    """What a full engine run records: one worker process, read-day, the op's total_s."""
    import tempfile

    from workloads.runner import Runner
    from workloads.scenario import Scenario
    from workloads.store import ResultsStore

    with tempfile.TemporaryDirectory() as tmp:
        store = ResultsStore(Path(tmp) / "r.duckdb")
        scenario = Scenario(dataset="taq", scale=Scale(days=1, rows_per_day=rows), strings=strings,
                            target="pickle", target_config={"root": root} if root else {},
                            workload="read-day", users=(1,), operations=n)
        result = Runner(scenario, store).run()
        times = list(store.ops(result.run_id)["total_s"])
        store.close()
    return times


METHODS: dict[str, Callable[..., list[float]]] = {
    "engine run (worker process)": lambda ctx, n: time_engine(ctx["root"], ctx["rows"], ctx["strings"], n),
    "direct pickle.load": lambda ctx, n: time_direct(ctx["path"], n),
    "target read_day (io+decode)": lambda ctx, n: time_target(ctx["target"], ctx["layout"], ctx["day"], n),
    "target read_day (wall)": lambda ctx, n: time_target_wall(ctx["target"], ctx["layout"], ctx["day"], n),
}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=2_000_000, help="rows of the TAQ day")
    parser.add_argument("--repeat", type=int, default=9, help="timed reads per method")
    parser.add_argument("--strings", default="object", help="object (report 000), str or category")
    parser.add_argument("--root", default="", help="folder for the pickle layout (default: datasets dir)")
    args = parser.parse_args(argv)

    strings = StringMode.parse(args.strings)
    target = make_target("pickle", {"root": args.root} if args.root else {})
    started = time.perf_counter()
    layout = target.prepare("taq", Scale(days=1, rows_per_day=args.rows), strings)
    day = layout.days[0]
    path = target.day_path(layout, day)
    print(f"file: {path} ({path.stat().st_size / 1e6:.1f} MB, {layout.rows:,} rows, strings={strings.value}, "
          f"{'reused' if layout.reused else f'written in {time.perf_counter() - started:.1f} s'})")
    target.open(layout)
    ctx = {"path": path, "target": target, "layout": layout, "day": day, "root": args.root,
           "rows": args.rows, "strings": strings.value}

    for method in METHODS.values():  # warm-up: page cache and allocator, not counted
        method(ctx, 1)
    samples: dict[str, list[float]] = {name: [] for name in METHODS}
    for _ in range(args.repeat):  # alternate so machine noise hits every method alike
        for name, method in METHODS.items():
            samples[name] += method(ctx, 1)

    base_best = min(samples["direct pickle.load"])
    base_median = statistics.median(samples["direct pickle.load"])
    print(f"{'method':32} {'best s':>9} {'median s':>9} {'best vs direct':>15} {'median vs direct':>17}")
    for name, values in samples.items():
        best, median = min(values), statistics.median(values)
        print(f"{name:32} {best:9.4f} {median:9.4f} {100 * (best / base_best - 1):+14.1f}% "
              f"{100 * (median / base_median - 1):+16.1f}%")
    for name in ("target read_day (io+decode)", "engine run (worker process)"):
        gap = abs(min(samples[name]) / base_best - 1) * 100
        print(f"{name} vs direct (best): {gap:.1f}% -> {'within' if gap <= 3 else 'OUTSIDE'} the 3% aim")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
