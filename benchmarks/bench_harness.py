"""Harness overhead per operation and results-ingest rate.

1. Overhead: the no-op workload through the real runner (worker process, records, pipe,
   collector, DuckDB) vs a bare Python loop calling the same no-op: seconds per operation.
2. Ingest: OpRecords appended to a DuckDB results file, records per second.

    .venv/bin/python benchmarks/bench_harness.py [--seconds 5] [--records 200000]
"""
from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from workloads.records import OpRecord  # noqa: E402
from workloads.runner import Runner  # noqa: E402
from workloads.scenario import Scenario  # noqa: E402
from workloads.store import ResultsStore  # noqa: E402
from workloads.targets.base import OpResult  # noqa: E402


def bare_loop(seconds: float) -> float:
    """Seconds per call of a no-op operation, timed the way the worker times one."""
    empty = OpResult(rows=0, nbytes=0)
    op = lambda: empty  # noqa: E731
    count, deadline = 0, time.monotonic() + seconds
    start = time.perf_counter()
    while time.monotonic() < deadline:
        t0 = time.perf_counter()
        op()
        time.perf_counter() - t0
        count += 1
    return (time.perf_counter() - start) / count


def engine(seconds: float, store: ResultsStore) -> tuple[float, int]:
    result = Runner(Scenario(workload="noop", users=(1,), operations=0, duration_s=seconds), store).run()
    figures = result.figures.iloc[0]
    return figures["window_s"] / figures["ops"], int(figures["ops"])


def ingest(records: int, store: ResultsStore, batch_size: int) -> float:
    batch = [OpRecord(step=0, worker=0, seq=i, op="read_day", t_start=i * 1e-3, total_s=1e-3, rows=100,
                      bytes=4500, ok=True, query_s=5e-4, decode_s=5e-4) for i in range(batch_size)]
    store.delete_run("ingest")
    store.create_run("ingest", {"dataset": "taq", "target": "x", "workload": "x", "users": [1],
                                "cache": "warm"}, {})
    start = time.perf_counter()
    for _ in range(records // len(batch)):
        store.add_ops("ingest", batch)
    return (records // len(batch)) * len(batch) / (time.perf_counter() - start)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--records", type=int, default=200_000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        store = ResultsStore(Path(tmp) / "results")
        bare = bare_loop(args.seconds)
        per_op, ops = engine(args.seconds, store)
        print(f"bare loop:          {bare * 1e6:8.2f} µs per no-op operation")
        print(f"engine (1 worker):  {per_op * 1e6:8.2f} µs per no-op operation ({ops:,} ops in {args.seconds:g} s, "
              f"all stored)")
        print(f"harness overhead:   {(per_op - bare) * 1e6:8.2f} µs per operation")
        for size in (256, 4096):  # one worker flush; what the collector writes each 0.5 s under load
            print(f"results ingest:     {ingest(args.records, store, size):,.0f} records/s into the run's Parquet parts "
                  f"(batches of {size})")
        store.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
