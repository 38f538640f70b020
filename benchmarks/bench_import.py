"""Importing a user's CSV beside pyarrow's own streaming CSV -> Parquet, and the import's peak memory.

    .venv/bin/python benchmarks/bench_import.py                      # 1 GB CSV, 3 pairs; then a 5 GB CSV once
    .venv/bin/python benchmarks/bench_import.py --gb 0.5 --pairs 5 --big-gb 0

The file is the trades shape a user brings (``ts,sym,price,qty,side,venue``, ISO timestamps with
nanoseconds and a -05:00 offset, a day after another). Each measurement is a fresh process, the two
kinds alternating (pyarrow first in odd pairs, Tickbench first in even ones), with the file in the page
cache for both (it is read once before the pairs). The baseline is what a user would write:
``pyarrow.csv.open_csv(path)`` -> ``pyarrow.parquet.ParquetWriter`` batch by batch, types inferred,
default options. Tickbench's is ``tick_import.import_source`` with the suggested roles: the same read with
the same types, plus splitting by day, counting keys and the manifest. The ratio is pyarrow's seconds over
Tickbench's (>= 0.8 is the goal). Peak memory is the child's high-water RSS (VmHWM).
"""
from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

_PYARROW = """
import sys, time
import pyarrow.csv as pcsv, pyarrow.parquet as pq
started = time.perf_counter()
reader = pcsv.open_csv(sys.argv[1])
rows = 0
with pq.ParquetWriter(sys.argv[2], reader.schema) as writer:
    for batch in reader:
        writer.write_batch(batch)
        rows += batch.num_rows
seconds = time.perf_counter() - started
print(rows, seconds, [l for l in open("/proc/self/status") if l.startswith("VmHWM")][0].split()[1])
"""

_TICKBENCH = """
import sys, time
from workloads.datasets.tick_import import import_source, preview_source
started = time.perf_counter()
dataset = import_source(sys.argv[1], "bench", preview_source(sys.argv[1]).suggested)
seconds = time.perf_counter() - started
print(dataset.rows, seconds, [l for l in open("/proc/self/status") if l.startswith("VmHWM")][0].split()[1])
"""


def write_csv(path: Path, gigabytes: float) -> int:
    """A trades CSV of about ``gigabytes``, 2 M rows a day, written chunk by chunk."""
    import pyarrow.csv as pcsv

    from tests.trades_file import as_written, trades_table
    target = gigabytes * 1e9
    rows, day = 0, 0
    with open(path, "wb") as sink:
        writer = None
        while sink.tell() < target:
            table = as_written(trades_table(rows=2_000_000, days=1, symbols=500, seed=day, first_day=day))
            if writer is None:
                writer = pcsv.CSVWriter(sink, table.schema, write_options=pcsv.WriteOptions(quoting_style="needed"))
            writer.write_table(table)
            rows += table.num_rows
            day += 1
        writer.close()
    return rows


def run_child(code: str, csv: Path, out: Path, home: Path) -> tuple[int, float, int]:
    """(rows, seconds the child timed, peak RSS bytes) of one fresh process: its VmHWM, which exec resets
    (``ru_maxrss`` would count the forking parent's pages)."""
    env = {**os.environ, "TICKBENCH_HOME": str(home), "PYTHONPATH": str(ROOT)}
    child = subprocess.Popen([sys.executable, "-c", code, str(csv), str(out)], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, env=env, cwd=ROOT)
    stdout, stderr = child.communicate()     # both pipes at once: a full stderr never blocks the child
    if child.returncode:
        raise SystemExit(f"child failed ({child.returncode}): {stderr.decode()[-2000:]}")
    rows, seconds, peak_kib = stdout.split()
    return int(rows), float(seconds), int(peak_kib) * 1024


def warm(path: Path) -> None:
    with open(path, "rb") as handle:
        while handle.read(64 << 20):
            pass


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--gb", type=float, default=1.0, help="size of the CSV for the rate pairs")
    parser.add_argument("--pairs", type=int, default=3)
    parser.add_argument("--big-gb", type=float, default=5.0, help="size of the CSV for the memory figure (0: skip)")
    parser.add_argument("--workdir", type=Path, default=None, help="where the CSVs and outputs go (default: a temp dir)")
    args = parser.parse_args()
    work = Path(args.workdir or tempfile.mkdtemp(prefix="bench_import_"))
    work.mkdir(parents=True, exist_ok=True)
    try:
        csv = work / "trades.csv"
        started = time.perf_counter()
        rows = write_csv(csv, args.gb)
        size = csv.stat().st_size
        print(f"CSV: {rows:,} rows, {size / 1e9:.2f} GB, written in {time.perf_counter() - started:.0f} s")
        warm(csv)
        theirs, ours, peaks = [], [], []
        for pair in range(args.pairs):
            order = ("pyarrow", "tickbench") if pair % 2 == 0 else ("tickbench", "pyarrow")
            for kind in order:
                home = work / f"home-{pair}"
                if kind == "pyarrow":
                    n, seconds, peak = run_child(_PYARROW, csv, work / "baseline.parquet", home)
                    theirs.append(seconds)
                else:
                    n, seconds, peak = run_child(_TICKBENCH, csv, work / "unused", home)
                    ours.append(seconds)
                    peaks.append(peak)
                    shutil.rmtree(home, ignore_errors=True)
                assert n == rows, (kind, n, rows)
                print(f"  pair {pair + 1} {kind:9}: {seconds:6.2f} s, {rows / seconds / 1e6:5.2f} M rows/s, "
                      f"{size / seconds / 1e6:6.1f} MB/s, peak RSS {peak / 2**20:,.0f} MiB")
        ratio = statistics.median(t / o for t, o in zip(theirs, ours))
        print(f"\nImport rate: Tickbench {rows / statistics.median(ours) / 1e6:.2f} M rows/s "
              f"({size / statistics.median(ours) / 1e6:.0f} MB/s), pyarrow open_csv -> ParquetWriter "
              f"{rows / statistics.median(theirs) / 1e6:.2f} M rows/s: Tickbench at {ratio:.2f}x pyarrow's rate "
              f"(median of {args.pairs} pairs' ratios; goal >= 0.80)")
        csv.unlink()
        if args.big_gb > 0:
            big = work / "big.csv"
            rows = write_csv(big, args.big_gb)
            warm(big)
            n, seconds, peak = run_child(_TICKBENCH, big, work / "unused", work / "home-big")
            print(f"Memory: a {big.stat().st_size / 1e9:.2f} GB CSV ({rows:,} rows) imported in {seconds:.0f} s "
                  f"with a peak RSS of {peak / 2**20:,.0f} MiB (goal: within 1,024 MiB)")
    finally:
        if args.workdir is None:
            shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
