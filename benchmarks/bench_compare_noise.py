"""How much two runs of one scenario differ on this machine with no cause: the noise band that
``tickbench compare`` must not call a change (``workloads.results.compare.NOISE``).

Runs ``--runs`` runs of each scenario back to back, compares each with the next, and prints per
figure the ratios seen and how many of the pairs the comparison calls a change at the band given.
Scenarios: the no-op with a known answer time (the test's target whose truth is known), a warm DuckDB
day read, and a warm DuckDB slice download with 2 users (real reads, with their cache and allocator
noise). Run it alone on the machine: a suite beside it measures the suite.

    .venv/bin/python benchmarks/bench_compare_noise.py [--runs 11] [--seconds 3] [--noise PCT]
"""
from __future__ import annotations

import argparse
import collections
import tempfile
from pathlib import Path

from workloads.datasets.schema import Scale
from workloads.results.compare import FASTER, LARGER, SLOWER, SMALLER, compare_runs

CALLED = (FASTER, SLOWER, SMALLER, LARGER)      # a change; "too few to tell" is not one
from workloads.results.store import ResultsStore
from workloads.run.runner import Runner
from workloads.scenario import Scenario


def scenarios(root: Path, seconds: float) -> dict[str, Scenario]:
    small = Scale(days=2, rows_per_day=200_000, symbols=100)
    duck = {"path": str(root / "d.duckdb")}
    return {
        "no-op, 10 ms answers, 2 users": Scenario(name="held", workload="noop", users=(2,), operations=0,
                                                  duration_s=seconds, probe_ops=0,
                                                  params={"hold_s": 0.01, "rows": 1000}),
        "DuckDB read-day, warm, 1 user": Scenario(name="day", scale=small, target="duckdb", target_config=duck,
                                                  workload="read-day", users=(1,), operations=0,
                                                  duration_s=seconds),
        "DuckDB slice-download, warm, 2 users": Scenario(name="slices", scale=small, target="duckdb",
                                                         target_config=duck, workload="slice-download",
                                                         users=(2,), operations=0, duration_s=seconds,
                                                         params={"rows_per_user": 100_000_000}),
    }


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=11)
    parser.add_argument("--seconds", type=float, default=3.0)
    parser.add_argument("--noise", type=float, help="a band for every figure, in per cent (default: this "
                        "machine's, measured from the catalog's repeats, as tickbench compare does)")
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="tickbench-noise-"))
    store = ResultsStore(root / "results")
    try:
        for title, scenario in scenarios(root, args.seconds).items():
            ids = []
            for _ in range(args.runs):
                result = Runner(scenario, store).run()
                if result.status != "completed":
                    print(f"{title}: a run {result.status}: {result.message}")
                    return 1
                ids.append(result.run_id)
            ratios, changed = collections.defaultdict(list), collections.Counter()
            quiet = 0
            for base, new in zip(ids, ids[1:]):
                found = compare_runs(store, base, new, noise=None if args.noise is None else args.noise / 100)
                moved = [c for c in found.changes if c.verdict in CALLED]
                quiet += not moved
                for c in found.changes:
                    ratios[c.figure].append(c.ratio)
                    changed[c.figure] += c.verdict in CALLED
            pairs = len(ids) - 1
            band = f"±{args.noise:g} %" if args.noise is not None else f"this machine's band ({found.noise})"
            print(f"\n{title}: {quiet} of {pairs} pairs with no figure called a change at {band}")
            for figure, seen in ratios.items():
                print(f"  {figure:<22} ratios {min(seen):.3f}-{max(seen):.3f}   called a change in {changed[figure]} of {pairs}")
    finally:
        store.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
