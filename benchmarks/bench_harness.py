"""What the harness costs per operation and how fast the catalog takes records, beside Locust.

1. Per operation: the no-op workload through the real runner (a worker process, its record
   columns, the pipe, the collector, the run's record stream), operations per window, against a
   bare Python loop timing the same no-op the way the worker does, and against Locust's own cost
   per request (``locust_noop.py``: one user, no wait, a no-op timed and fired through Locust's
   request event) in the same run. Each is the median of ``--repeats`` runs.
2. Ingest: batches of 4,096 records as a worker sends them (``workloads.run.record_buffer``) appended
   to a run's catalog folder (``ResultsStore.add_ops``), records per second sustained over
   ``--records``.

    .venv/bin/python benchmarks/bench_harness.py [--seconds 3] [--repeats 3] [--records 2000000]

Last line: ``harness X us/op, ingest Y records/s, locust Z us/op`` (X and Z the whole cost of a
no-op operation, the bare loop included).
"""
from __future__ import annotations

import argparse
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from workloads.run.record_buffer import RecordBuffer  # noqa: E402
from workloads.run.records import MEASURED  # noqa: E402
from workloads.run.runner import Runner  # noqa: E402
from workloads.scenario import Scenario  # noqa: E402
from workloads.results.store import ResultsStore  # noqa: E402
from workloads.targets.base import OpResult  # noqa: E402

HERE = Path(__file__).resolve().parent


def bare_loop(seconds: float) -> float:
    """Seconds per call of a no-op operation, timed the way the worker times one (a perf_counter
    pair), the loop checking a deadline as the worker's does."""
    empty = OpResult(rows=0, nbytes=0)

    def op():
        return empty

    count, clock = 0, time.perf_counter
    start = now = clock()
    deadline = start + seconds
    while now < deadline:
        began = clock()
        op()
        now = clock()
        now - began
        count += 1
    return (now - start) / count


def engine(seconds: float, store: ResultsStore) -> tuple[float, int]:
    result = Runner(Scenario(workload="noop", users=(1,), operations=0, duration_s=seconds), store).run()
    if result.status != "completed":
        raise SystemExit(f"the no-op run {result.status}: {result.message}")
    figures = result.figures.iloc[0]
    return figures["window_s"] / figures["ops"], int(figures["ops"])


def locust_missing() -> str:
    """Why Locust's figure cannot be had here ("" when it can): it is an optional comparison."""
    import importlib.util
    return "" if importlib.util.find_spec("locust") else "Locust is not installed (pip install locust)"


def locust(seconds: float) -> float:
    done = subprocess.run([sys.executable, str(HERE / "locust_noop.py"), "--seconds", str(seconds)],
                          capture_output=True, text=True, timeout=seconds + 120)
    found = re.search(r"([\d.]+) us per request", done.stdout)
    if not found:
        raise SystemExit(f"locust_noop.py printed no figure:\n{done.stdout}\n{done.stderr}")
    return float(found.group(1)) * 1e-6


def ingest(records: int, store: ResultsStore, batch_size: int = 4096) -> float:
    """Records per second into a run's catalog folder, in a worker's batches."""
    buffer = RecordBuffer(step=0, worker=0)
    buffer.begin(MEASURED)
    result = OpResult(rows=100, nbytes=4500)
    for i in range(batch_size):
        buffer.add(MEASURED, i, i * 1e-3, 1e-3, result, "", buffer.code("read_day"))
    batch = buffer.take()
    store.delete_run("ingest")
    store.create_run("ingest", {"dataset": "taq", "target": "x", "workload": "x", "users": [1],
                                "cache": "warm"}, {})
    batches = max(1, records // batch_size)
    start = time.perf_counter()
    for n in range(batches):
        batch["seq"] += batch_size
        store.add_ops("ingest", batch)
    return batches * batch_size / (time.perf_counter() - start)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=3.0)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--records", type=int, default=2_000_000)
    args = parser.parse_args()
    missing = locust_missing()
    with tempfile.TemporaryDirectory() as tmp:
        store = ResultsStore(Path(tmp) / "results")
        bares, ours, theirs, counts = [], [], [], []
        for _ in range(args.repeats):       # interleaved: the machine's drift touches all three alike
            bares.append(bare_loop(args.seconds))
            per_op, ops = engine(args.seconds, store)
            ours.append(per_op)
            counts.append(ops)
            if not missing:
                theirs.append(locust(args.seconds))
        bare, per_op = statistics.median(bares), statistics.median(ours)
        per_request = statistics.median(theirs) if theirs else None
        print(f"bare loop:            {bare * 1e6:7.2f} us per no-op call (runs: "
              f"{', '.join(f'{v * 1e6:.2f}' for v in bares)})")
        print(f"Tickbench (1 worker): {per_op * 1e6:7.2f} us per no-op operation, {per_op * 1e6 - bare * 1e6:.2f} "
              f"over the bare loop (runs: {', '.join(f'{v * 1e6:.2f}' for v in ours)}; "
              f"{statistics.median(counts):,.0f} operations a run, every one stored)")
        if per_request is None:
            print(f"Locust (1 user):      not measured: {missing}")
        else:
            print(f"Locust (1 user):      {per_request * 1e6:7.2f} us per no-op request, "
                  f"{per_request * 1e6 - bare * 1e6:.2f} over the bare loop "
                  f"(runs: {', '.join(f'{v * 1e6:.2f}' for v in theirs)})")
        rates = [ingest(args.records, store) for _ in range(args.repeats)]
        rate = statistics.median(rates)
        print(f"results ingest:       {rate:,.0f} records/s in batches of 4,096 into a run's record stream "
              f"(runs: {', '.join(f'{v:,.0f}' for v in rates)})")
        store.close()
    theirs_text = "not measured" if per_request is None else f"{per_request * 1e6:.2f} us/op"
    print(f"harness {per_op * 1e6:.2f} us/op, ingest {rate:,.0f} records/s, locust {theirs_text}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
