"""Closed loop against open loop on a target that stalls: what each one's p99 says.

The target is DuckDB, its users appending batches to one table (each append takes Tickbench's
writer turn on the file, ``workloads.targets.duckdb``). Beside them another writer, in a
process of its own, takes the same turn and holds the file open read-write for ``--hold`` seconds
every ``--every`` seconds: a real writer holding its lock. The same step runs twice:
- closed loop: one user appending as fast as it is answered; a stall delays its one pending
  append and nothing else is sent meanwhile, so the stall enters one operation of hundreds;
- open loop at ``--rate`` appends a second (default: half of what the closed loop achieved),
  latency counted from each append's intended start: every append scheduled during a stall
  waits for it, and its p99 says so.

    .venv/bin/python benchmarks/bench_open_loop.py [--seconds 20] [--every 5] [--hold 1] [--rate R]

Prints each loop's operations, p50 / p99 / p99.9 of what a client waited, and how many operations
a stall delayed (waited over half a stall); last line ``closed p99 X ms, open p99 Y ms``.
"""
from __future__ import annotations

import argparse
import multiprocessing as mp
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


def stalling_writer(path: str, every: float, hold: float, stop) -> None:
    """Every ``every`` s: take the writers' turn on the file, hold it open read-write ``hold`` s."""
    import duckdb

    from workloads.targets.common.turns import take_turn

    lock = Path(path).with_name(Path(path).name + ".writers.lock")
    while not stop.wait(every - hold):
        descriptor, _ = take_turn(lock, 60.0, "the stalling writer got no turn")
        try:
            con = duckdb.connect(path)
            time.sleep(hold)
            con.close()
        finally:
            if descriptor is not None:
                os.close(descriptor)


def waited(store, run_id: str) -> np.ndarray:
    from workloads.run.records import MEASURED

    ops = store.ops(run_id, (MEASURED,))
    ops = ops[ops["ok"]]
    late = (ops["t_start"] - ops["intended_s"]).fillna(0.0)
    return (ops["total_s"] + late).to_numpy()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument("--every", type=float, default=5.0)
    parser.add_argument("--hold", type=float, default=1.0)
    parser.add_argument("--rate", type=float, help="the open loop's appends per second (default: half the closed loop's)")
    parser.add_argument("--batch-rows", type=int, default=1_000)
    args = parser.parse_args()

    from workloads.datasets.schema import Scale, StringMode
    from workloads.run.runner import Runner
    from workloads.scenario import Scenario
    from workloads.results.store import ResultsStore
    from workloads.targets.engines import default_config
    from workloads.targets import make_target

    with tempfile.TemporaryDirectory() as tmp:
        config = default_config("duckdb", Path(tmp) / "data")
        scale = Scale(days=1, rows_per_day=50_000, symbols=50)
        target = make_target("duckdb", config)
        target.prepare("taq", scale, StringMode.ARROW)
        target.close()
        store = ResultsStore(Path(tmp) / "results")
        print(f"# DuckDB appends of {args.batch_rows:,} rows, one user, {args.seconds:g} s a loop; another writer "
              f"holds the file {args.hold:g} s every {args.every:g} s")
        print(f"# load average at start: {' '.join(f'{v:.2f}' for v in os.getloadavg())}")
        context = mp.get_context("spawn")
        figures = {}
        rate = args.rate
        for loop in ("closed", "open"):
            scenario = Scenario(name=f"{loop} loop", dataset="taq", scale=scale, target="duckdb", target_config=config,
                                workload="concurrent-append", users=(1,), operations=0, duration_s=args.seconds,
                                warmup_ops=1, probe_ops=0,
                                params={"rows_per_user": 10**9, "batch_rows": args.batch_rows},
                                rate=(rate,) if loop == "open" else ())
            stop = context.Event()
            writer = context.Process(target=stalling_writer, args=(config["path"], args.every, args.hold, stop),
                                     daemon=True)
            writer.start()
            try:
                result = Runner(scenario, store).run()
            finally:
                stop.set()
                writer.join(args.hold + 5)
            if result.status != "completed":
                raise SystemExit(f"the {loop} loop {result.status}: {result.message}")
            seconds = waited(store, result.run_id)
            row = result.figures.iloc[0]
            p50, p99, p999 = np.quantile(seconds, [0.5, 0.99, 0.999])
            delayed = int((seconds > args.hold / 2).sum())
            figures[loop] = p99
            extra = (f", offered {rate:,.1f}/s, late {int(row['late_ops'])}, missed {int(row['missed_ops'])}"
                     if loop == "open" else "")
            print(f"{loop:6} loop: {len(seconds):,} appends ({row['ops_per_s']:,.1f}/s{extra}); waited p50 "
                  f"{p50 * 1e3:,.1f} ms, p99 {p99 * 1e3:,.1f} ms, p99.9 {p999 * 1e3:,.1f} ms; "
                  f"{delayed} delayed by a stall (over {args.hold / 2:g} s)", flush=True)
            if rate is None:
                rate = round(row["ops_per_s"] / 2, 1)
        store.close()
    print(f"# load average at end: {' '.join(f'{v:.2f}' for v in os.getloadavg())}")
    print(f"closed p99 {figures['closed'] * 1e3:,.1f} ms, open p99 {figures['open'] * 1e3:,.1f} ms")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
