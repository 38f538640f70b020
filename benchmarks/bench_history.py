"""How fast the stored-run readers are on a large results file.

Builds a results file of N runs (3 steps each) holding M operation records in all, written by
SQL straight into the store's tables, then times ``history_rows`` (the run history table, one
query for all runs), ``snapshot_from_store`` of the largest run and ``compare_frame`` of five
runs. Prints best and median of each. Aim: history_rows well under a second at 500 runs / 1M ops.

    .venv/bin/python benchmarks/bench_history.py [--runs 500] [--ops 1000000] [--repeat 5] [--file F]
"""
from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

import duckdb

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from workloads.history import compare_frame, history_rows, snapshot_from_store  # noqa: E402
from workloads.store import ResultsStore  # noqa: E402

STEPS = 3


def build(path: Path, runs: int, ops: int) -> None:
    ResultsStore(path).close()                      # the schema, as the app makes it
    per_step = max(1, ops // (runs * STEPS))
    con = duckdb.connect(str(path))
    con.execute("""
        INSERT INTO runs SELECT printf('run-%04d', r), 'bench', now()::TIMESTAMP - INTERVAL (r) MINUTE,
               now()::TIMESTAMP, 'completed', 'taq', 'duckdb', 'read-day', '1,2,4', 'warm',
               '{}', '{}', '{}', '' FROM range(?) t(r)""", [runs])
    con.execute("""
        INSERT INTO steps SELECT printf('run-%04d', r), s, 1 << s, printf('%d users', 1 << s), '{}',
               now()::TIMESTAMP, 1.0 + s, 'completed', '' FROM range(?) a(r), range(?) b(s)""",
                [runs, STEPS])
    con.execute("""
        INSERT INTO ops SELECT printf('run-%04d', r), s, i % 4, i, 'read_day',
               i * 0.001, 0.001 + random() * 0.01, NULL, random() * 0.004, NULL, NULL, random() * 0.006,
               1000 + (i % 7), 45000, true, '', ''
        FROM range(?) a(r), range(?) b(s), range(?) c(i)""", [runs, STEPS, per_step])
    total = con.execute("SELECT count(*) FROM ops").fetchone()[0]
    con.close()
    print(f"results file: {runs} runs x {STEPS} steps, {total:,} op records")


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
    parser.add_argument("--file", type=Path, help="results file to build (default: a temp file)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        path = args.file or Path(tmp) / "bench_results.duckdb"
        if path.exists():
            path.unlink()
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
