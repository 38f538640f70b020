"""How fast the stored-run readers are on a large results catalog.

Builds a results catalog of N runs (3 steps each) holding M operation records in all, written
through the store's writer, then times ``history_rows`` (the run history table, one
query for all runs), ``snapshot_from_store`` of the largest run and ``compare_frame`` of five
runs. Prints best and median of each. Aim: history_rows well under a second at 500 runs / 1M ops.

    .venv/bin/python benchmarks/bench_history.py [--runs 500] [--ops 1000000] [--repeat 5] [--file F]
"""
from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from workloads.results.history import compare_frame, history_rows, snapshot_from_store  # noqa: E402
from workloads.run.records import to_columns  # noqa: E402
from workloads.results.store import ResultsStore  # noqa: E402

STEPS = 3


def build(path: Path, runs: int, ops: int) -> None:
    """N runs written through the store's own writer, as the run processes write them."""
    store = ResultsStore(path)
    per_step = max(1, ops // (runs * STEPS))
    rng = np.random.default_rng(7)
    scenario = {"name": "bench", "dataset": "taq", "target": "duckdb", "workload": "read-day",
                "users": [1 << s for s in range(STEPS)], "cache": "warm"}
    for r in range(runs):
        run_id = f"run-{r:04d}"
        store.create_run(run_id, scenario, {})
        records = []
        for s in range(STEPS):
            store.add_step(run_id, s, 1 << s, f"{1 << s} users", {})
            i = np.arange(per_step)
            batch = to_columns([])
            batch = {**batch, "step": np.full(per_step, s, np.int32), "worker": (i % 4).astype(np.int32),
                     "seq": i.astype(np.int32), "op": np.full(per_step, "read_day"), "t_start": i * 0.001,
                     "total_s": 0.001 + rng.random(per_step) * 0.01, "rows": 1000 + i % 7,
                     "bytes": np.full(per_step, 45000), "ok": np.ones(per_step, bool),
                     "kind": np.full(per_step, "measured"), "io_s": np.full(per_step, np.nan),
                     "read_s": np.full(per_step, np.nan), "query_s": rng.random(per_step) * 0.004,
                     "server_s": np.full(per_step, np.nan), "transfer_s": np.full(per_step, np.nan),
                     "decode_s": rng.random(per_step) * 0.006, "wire_bytes": np.full(per_step, -1),
                     "error": np.full(per_step, ""), "node": np.full(per_step, ""), "extra": np.full(per_step, "")}
            records.append(batch)
            store.release_step(run_id, s, float(s))
            store.finish_step(run_id, s, 1.0 + s, "completed", [])
        for batch in records:
            store.add_ops(run_id, batch)
        store.finish_run(run_id, "completed")
    total = store.query("SELECT count(*) FROM ops")[0][0]
    store.close()
    print(f"results catalog: {runs} runs x {STEPS} steps, {total:,} op records")


def timed(label: str, repeat: int, fn) -> None:
    seconds = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        seconds.append(time.perf_counter() - start)
    print(f"{label:<34} best {min(seconds) * 1000:8.1f} ms   median {statistics.median(seconds) * 1000:8.1f} ms")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=500)
    parser.add_argument("--ops", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--file", type=Path, help="results catalog to build (default: a temp folder)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        path = args.file or Path(tmp) / "bench_results"
        if path.exists():
            shutil.rmtree(path)
        build(path, args.runs, args.ops)
        store = ResultsStore(path)
        rows = history_rows(store)
        assert len(rows) == args.runs and rows[0]["rows_per_s"], "history rows incomplete"
        timed("history_rows (all runs)", args.repeat, lambda: history_rows(store))
        timed("snapshot_from_store (one run)", args.repeat, lambda: snapshot_from_store(store, "run-0000"))
        ids = [f"run-{i:04d}" for i in range(min(5, args.runs))]
        timed(f"compare_frame ({len(ids)} runs)", args.repeat, lambda: compare_frame(store, ids))
        store.close()


if __name__ == "__main__":
    main()
