"""What the run's own process costs the measured operations while they run: the same Tickbench run
(one user, warm, the same seeded draws every time) made with the collector writing its records
as it does (appended to the run's stream every ``STORE_FLUSH_S``), and with those writes held to
the step's end; alternated, each run in a fresh process. Prints each pair's run medians, the median of them per mode, and the
run process's CPU seconds.

    .venv/bin/python benchmarks/bench_parent_writes.py [--target parquet] [--workload minute-bars]
        [--operations 120] [--pairs 6] [--days 2] [--rows-per-day 1000000] [--symbols 500] [--home DIR]

Holding the writes is a measuring device here, not a mode of Tickbench: a kill -9 of a run then
loses everything its stream would have kept (``tests/test_faults_catalog.py``).
"""
from __future__ import annotations

import argparse
import json
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from bench_engines import bench_home  # noqa: E402  (a sibling script)

MODES = ("writes as they go", "writes held to the end")


def one_run(args) -> dict:
    """One run in this (fresh) process; its measured operations' median and this process's CPU."""
    from workloads.datasets.schema import Scale
    from workloads.results.store import ResultsStore
    from workloads.run import collector
    from workloads.run.records import MEASURED
    from workloads.run.runner import Runner
    from workloads.scenario import Scenario
    from workloads.targets.engines import default_config

    if args.mode == MODES[1]:
        collector.STORE_FLUSH_S = float("inf")       # the records wait in memory until the step ends
    home = Path(args.home)
    store = ResultsStore(home / "results")
    scale = Scale(days=args.days, rows_per_day=args.rows_per_day, symbols=args.symbols)
    params = {"rows_per_user": args.operations * args.rows_per_day // args.symbols} \
        if args.workload == "slice-download" else {}
    scenario = Scenario(name=f"{args.mode} {args.target}", dataset="taq", scale=scale, target=args.target,
                        target_config=default_config(args.target, home / "data"), workload=args.workload,
                        users=(1,), operations=args.operations, warmup_ops=1, probe_ops=0, params=params)
    before = resource.getrusage(resource.RUSAGE_SELF)
    result = Runner(scenario, store).run()
    after = resource.getrusage(resource.RUSAGE_SELF)
    if result.status != "completed":
        raise SystemExit(f"{args.mode}: {result.status}: {result.message}")
    seconds = store.ops(result.run_id, (MEASURED,))["total_s"]
    return {"median_ms": 1000 * float(seconds.median()), "ops": len(seconds),
            "cpu_s": after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--target", default="parquet")
    parser.add_argument("--workload", default="minute-bars")
    parser.add_argument("--operations", type=int, default=120)
    parser.add_argument("--pairs", type=int, default=6)
    parser.add_argument("--days", type=int, default=2)
    parser.add_argument("--rows-per-day", type=int, default=1_000_000)
    parser.add_argument("--symbols", type=int, default=500)
    parser.add_argument("--home", type=Path)
    parser.add_argument("--mode", help=argparse.SUPPRESS)        # one run, in the child process
    args = parser.parse_args()
    if args.mode:
        print(json.dumps(one_run(args)))
        return 0
    home = bench_home(args.home, "tickbench-parent-writes-")
    print(f"# {args.target} {args.workload}, {args.operations} operations a run, {args.pairs} pairs, "
          f"one user, warm; home {home}", flush=True)
    figures = {mode: [] for mode in MODES}
    started = time.monotonic()
    for pair in range(args.pairs):
        for mode in (MODES if pair % 2 == 0 else MODES[::-1]):       # who goes first alternates
            child = [sys.executable, __file__, "--mode", mode, "--home", str(home),
                     *(f"--{k.replace('_', '-')}={getattr(args, k)}" for k in
                       ("target", "workload", "operations", "days", "rows_per_day", "symbols"))]
            done = subprocess.run(child, capture_output=True, text=True)
            if done.returncode:                 # the child's own words: what failed and where
                print(done.stdout + done.stderr, file=sys.stderr)
                return 1
            figures[mode].append(json.loads(done.stdout.strip().splitlines()[-1]))
        print(f"pair {pair + 1}: " + ", ".join(f"{mode} {figures[mode][-1]['median_ms']:.2f} ms"
                                                for mode in MODES), flush=True)
    for mode in MODES:
        runs = figures[mode]
        print(f"{mode}: median of the runs' medians {statistics.median(r['median_ms'] for r in runs):.2f} ms, "
              f"run process CPU {statistics.median(r['cpu_s'] for r in runs):.2f} s a run")
    ahead = sum(a["median_ms"] > b["median_ms"] for a, b in zip(figures[MODES[0]], figures[MODES[1]]))
    print(f"the runs writing as they go were slower in {ahead} of {args.pairs} pairs "
          f"({time.monotonic() - started:.0f} s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
