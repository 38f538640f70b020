"""How fast the dataset generators produce rows, per dataset and string mode (one core).

    .venv/bin/python benchmarks/bench_generator.py                      # 5,000,000 rows each
    .venv/bin/python benchmarks/bench_generator.py --datasets taq --rows 20000000 --to-disk /tmp/taq

Rows/s counts generating the frames chunk by chunk (what a target's ``prepare`` consumes).
``--to-disk`` also streams one TAQ day into a Parquet file and reports the peak memory, to show
a seed-size day (230 million rows) never has to fit in RAM. ``--walk-days N`` times the daily price
walk of TAQ's keys over days 0..N-1 in order (what ``prepare`` pays over a layout's days; report
002's full size is 1,250 days of 8,000 symbols): the first and the last tenth of the days, per day.
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import psutil

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from workloads.datasets import DATASETS, get_dataset  # noqa: E402
from workloads.datasets.schema import Scale, StringMode  # noqa: E402


def measure(name: str, scale: Scale, strings: StringMode, chunk_rows: int, repeat: int) -> tuple[float, float]:
    """Best rows/s over ``repeat`` runs of generating day 0: by the wall clock, and by this
    process's CPU time (the one-core figure, fair on a machine others are using too)."""
    dataset = get_dataset(name)
    best_wall = best_cpu = 0.0
    for _ in range(repeat):
        wall, cpu = time.perf_counter(), time.process_time()
        rows = sum(len(chunk) for chunk in dataset.generate_day(0, scale, strings, chunk_rows))
        best_wall = max(best_wall, rows / (time.perf_counter() - wall))
        best_cpu = max(best_cpu, rows / (time.process_time() - cpu))
    return best_wall, best_cpu


def to_disk(directory: Path, scale: Scale, chunk_rows: int) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"taq_{scale.key()}.parquet"
    process = psutil.Process()
    base_rss = process.memory_info().rss
    peak_rss = base_rss
    writer = None
    rows = 0
    started = time.perf_counter()
    for chunk in get_dataset("taq").generate_day(0, scale, StringMode.CATEGORY, chunk_rows):
        table = pa.Table.from_pandas(chunk, preserve_index=False)
        if writer is None:
            writer = pq.ParquetWriter(path, table.schema)
        writer.write_table(table)
        rows += len(chunk)
        peak_rss = max(peak_rss, process.memory_info().rss)
    writer.close()
    seconds = time.perf_counter() - started
    print(f"\nTAQ day to Parquet: {rows:,} rows in {seconds:.1f} s ({rows / seconds / 1e6:.2f} M rows/s), "
          f"{path.stat().st_size / 1e6:,.0f} MB at {path}")
    print(f"peak RSS {peak_rss / 1e6:,.0f} MB (before: {base_rss / 1e6:,.0f} MB); "
          f"the whole day as a DataFrame would take ~{rows * 50 / 1e6:,.0f} MB")


def walk(days: int, symbols: int) -> None:
    """Per-day cost of the daily levels early and late in a long run: flat when the walk is
    continued, growing with the day when each day draws its prefix again."""
    import numpy as np

    from workloads.datasets._shapes import daily_levels
    levels = np.random.default_rng(1)
    base, vol = levels.uniform(5, 500, symbols), levels.uniform(0.01, 0.05, symbols)
    tenth = max(1, days // 10)
    timings = []
    for day in range(days):
        started = time.perf_counter()
        daily_levels(np.random.default_rng(20070823), base, vol, day)    # a fresh seeded stream, as a dataset passes
        timings.append(time.perf_counter() - started)
    print(f"daily walk, {symbols:,} keys, days 0..{days - 1} in order: {sum(timings):.2f} s; "
          f"first {tenth} days {sum(timings[:tenth]) / tenth * 1e3:.2f} ms a day, "
          f"last {tenth} {sum(timings[-tenth:]) / tenth * 1e3:.2f} ms a day")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, default=5_000_000, help="rows per dataset (one day)")
    parser.add_argument("--datasets", nargs="+", default=list(DATASETS), choices=list(DATASETS))
    parser.add_argument("--modes", nargs="+", default=[m.value for m in StringMode],
                        choices=[m.value for m in StringMode], help="string representations")
    parser.add_argument("--symbols", type=int, default=0,
                        help="keys per dataset (default: the seed report's count, e.g. 8000 for TAQ)")
    parser.add_argument("--chunk-rows", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=2, help="runs per figure; the best is shown")
    parser.add_argument("--to-disk", type=Path, default=None, metavar="DIR",
                        help="also stream a TAQ day of --rows rows to a Parquet file in DIR")
    parser.add_argument("--walk-days", type=int, default=0, metavar="N",
                        help="also time the daily price walk over N days (of --symbols keys, default 8000)")
    args = parser.parse_args(argv)
    if args.walk_days:
        walk(args.walk_days, args.symbols or 8000)
        return 0

    print(f"{args.rows:,} rows per dataset, chunks of {args.chunk_rows:,}, best of {args.repeat}; "
          f"pid {os.getpid()}, {psutil.cpu_count()} CPUs")
    print(f"load average before: {', '.join(f'{x:.1f}' for x in os.getloadavg())}")
    print(f"{'dataset':<8} {'keys':>6} {'strings':<9} {'M rows/s wall':>14} {'M rows/s CPU':>13} "
          f"{'MB/s (DolphinDB bytes, CPU)':>28}")
    for name in args.datasets:
        info = get_dataset(name).info
        symbols = args.symbols or info.extra.get("seed_symbols", 500)
        scale = Scale(rows_per_day=args.rows, symbols=symbols)
        row_bytes = info.extra.get("row_bytes", info.schema.row_bytes())
        for mode in args.modes:
            wall, cpu = measure(name, scale, StringMode(mode), args.chunk_rows, args.repeat)
            print(f"{name:<8} {symbols:>6} {mode:<9} {wall / 1e6:>14.2f} {cpu / 1e6:>13.2f} "
                  f"{cpu * row_bytes / 1e6:>28,.0f}")
    if args.to_disk is not None:
        to_disk(args.to_disk, Scale(rows_per_day=args.rows, symbols=args.symbols or 8000), args.chunk_rows)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
