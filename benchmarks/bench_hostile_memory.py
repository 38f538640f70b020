"""Peak memory of every command a hostile bundle of at most 10 MB can reach, and of the window
started on a catalog holding it (the budget: under 1 GB each).

Makes a real run (DuckDB, real workers), its bundle, then: the 200-million-record Parquet bomb; the
most real-looking records a 10 MB bundle holds ("real": times as measured, ~14 bytes a record);
the most records the budgets accept at all ("at the bound": just over 4 bytes a record, file and
deflated, all one cold step whose every record is its own round, twice); one just under ("too
dense", refused); and the bomb planted in the
catalog by hand (no open, no check). Each command runs as its own process (``tickbench open | runs | show |
compare``; the window for ``--window-s`` seconds, offscreen); its peak resident memory comes from
the kernel's accounting of the ended child (``wait4``'s ``ru_maxrss``).

    .venv/bin/python benchmarks/bench_hostile_memory.py [--bomb 200000000] [--window-s 20] [--keep DIR]
"""
from __future__ import annotations

import argparse
import io
import os
import subprocess
import sys
import tempfile
import time
import zlib
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.hostile_corpus import day_long, parquet_bomb, read_bundle, renamed  # noqa: E402


# Started from a small launcher: a child's peak counts what it inherited at fork (the kernel carries
# the parent's high-water mark across exec), and this script holds the corpus in memory.
LAUNCHER = """
import os, subprocess, sys, time
seconds = float(sys.argv[1])
child = subprocess.Popen(sys.argv[2:], stdout=subprocess.DEVNULL)
if seconds > 0:
    time.sleep(seconds)
    child.terminate()
_, status, usage = os.wait4(child.pid, 0)
print(os.waitstatus_to_exitcode(status), usage.ru_maxrss // 1024)
"""


def peak(args: list[str], home: Path, seconds: float = 0.0) -> tuple[int, float, int, str]:
    """(exit code, wall seconds, peak RSS MB, last line of stderr) of ``tickbench *args``."""
    env = {**os.environ, "TICKBENCH_HOME": str(home), "QT_QPA_PLATFORM": "offscreen"}
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", LAUNCHER, str(seconds), sys.executable, "-m", "app", *args],
                          env=env, cwd=ROOT, capture_output=True, text=True)
    code, megabytes = (int(v) for v in done.stdout.split())
    return code, time.perf_counter() - started, megabytes, (done.stderr.strip().splitlines() or [""])[-1]


def genuine(folder: Path) -> Path:
    from workloads.datasets.schema import Scale
    from workloads.results.bundle import write_bundle
    from workloads.results.store import ResultsStore
    from workloads.run.runner import Runner
    from workloads.scenario import Scenario
    os.environ["TICKBENCH_HOME"] = str(folder / "home")
    store = ResultsStore(folder / "sender")
    scenario = Scenario(dataset="taq", scale=Scale(days=1, rows_per_day=5_000, symbols=10), target="duckdb",
                        workload="read-day", users=(1, 2), operations=5,
                        target_config={"path": str(folder / "data.duckdb")})
    run_id = Runner(scenario, store).run().run_id
    return write_bundle(store, run_id, folder / "good.tbrun")


def largest_real(good: Path, limit: int = 10 << 20, quantum: float = 0.0) -> bytes:
    """Real-looking records (every start distinct, times to ``quantum`` seconds if given), as many
    as a 10 MB bundle holds, over a day-long run (so the records-per-second budget lets them in)."""
    files, manifest = read_bundle(good.read_bytes())
    first = pq.read_table(io.BytesIO(files["ops.parquet"])).slice(0, 1)
    records = 400_000
    while True:
        rng = np.random.default_rng(1)
        table = first.take(pa.array(np.zeros(records, dtype=np.int64)))
        for column, values in (("t_start", np.sort(rng.uniform(0, 80_000, records))),
                               ("total_s", _rounded(rng.uniform(0.001, 0.01, records), quantum))):
            table = table.set_column(table.schema.get_field_index(column), column, pa.array(values))
        out = io.BytesIO()
        pq.write_table(table, out, compression="zstd")      # as a run writes its records
        size = len(out.getvalue())
        if size <= limit - (256 << 10):
            files["ops.parquet"] = out.getvalue()
            if size > 0.97 * (limit - (256 << 10)):
                break
        records = int(records * 0.99 * (limit - (256 << 10)) / size)
    return day_long(files, manifest, files["ops.parquet"], pq.read_metadata(io.BytesIO(files["ops.parquet"])).num_rows)


def at_the_bound(good: Path, share: float = 1.01, distinct: int = 16, limit: int = 10 << 20) -> bytes:
    """The most records the budgets accept in 10 MB (``share`` 1.01: each takes just over
    ``MIN_FILE_BYTES_PER_RECORD``, file and deflated alike; 0.98: just under, refused): ``distinct``
    times; starts over a day to the second, a share found by bisection to the tenth; all
    measured records of one step and each its own cold round (``seq`` distinct, "cold" in ``extra``):
    the most a comparison's resample of rounds could be asked to hold."""
    from workloads.results.record_budget import MIN_FILE_BYTES_PER_RECORD
    target = share * MIN_FILE_BYTES_PER_RECORD
    files, manifest = read_bundle(good.read_bytes())
    ops = pq.read_table(io.BytesIO(files["ops.parquet"]))
    first = ops.filter(pc.equal(ops["kind"], "measured")).slice(0, 1)
    records = int((limit - (256 << 10)) / target)
    rng = np.random.default_rng(4)
    table = first.take(pa.array(np.zeros(records, dtype=np.int64)))
    fixed = {"seq": np.arange(records, dtype=np.int32), "extra": ['{"cold": true}'] * records,
             "total_s": rng.uniform(0.001, 0.01, distinct)[rng.integers(0, distinct, records)]}
    for column, values in fixed.items():
        at = table.schema.get_field_index(column)
        table = table.set_column(at, column, pa.array(values, type=table.schema.field(at).type))
    starts = np.sort(rng.uniform(0, 80_000, records))
    low, high = 0.0, 1.0                                   # the share of starts to the tenth of a second, not the second
    for _ in range(40):
        share_fine = (low + high) / 2
        fine = int(share_fine * records)
        out = io.BytesIO()
        pq.write_table(table.set_column(table.schema.get_field_index("t_start"), "t_start", pa.array(
            np.r_[np.round(starts[:fine] * 10) / 10, np.round(starts[fine:])])), out, compression="zstd")
        per_record = min(len(out.getvalue()), len(zlib.compress(out.getvalue()))) / records
        if abs(per_record / target - 1) < 0.005:
            break
        low, high = (share_fine, high) if per_record < target else (low, share_fine)
    else:
        raise RuntimeError(f"no share of finer starts gives {target:.2f} bytes a record")
    return day_long(files, manifest, out.getvalue(), records)


def _rounded(values: np.ndarray, quantum: float) -> np.ndarray:
    return np.round(values / quantum) * quantum if quantum else values


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bomb", type=int, default=200_000_000)
    parser.add_argument("--window-s", type=float, default=20.0)
    parser.add_argument("--keep", type=Path, help="a new folder to build in and keep (its receiver/ catalog)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        folder = args.keep or Path(scratch)
        folder.mkdir(parents=True, exist_ok=bool(args.keep is None))
        good = genuine(folder)
        bomb = parquet_bomb(args.bomb)(*read_bundle(renamed("bomb-run")(*read_bundle(good.read_bytes()))))
        (folder / "bomb.tbrun").write_bytes(bomb)
        bundles = {"real": renamed("real-run")(*read_bundle(largest_real(good))),          # times as measured
                   "at the bound": renamed("bound-a")(*read_bundle(at_the_bound(good))),
                   "too dense": renamed("dense-run")(*read_bundle(at_the_bound(good, share=0.98, distinct=8)))}
        bundles["at the bound again"] = renamed("bound-b")(*read_bundle(bundles["at the bound"]))
        print(f"the bomb: {len(bomb):,} bytes ({args.bomb:,} records declared)")
        for name, data in bundles.items():
            (folder / f"{name}.tbrun").write_bytes(data)
            print(f"{name}: {len(data):,} bytes ({read_bundle(data)[1]['counts']['ops']:,} records)")
        home = folder / "receiver"
        for label, command in [("open the bomb", ["open", str(folder / "bomb.tbrun")]),
                               *((f"open {name}", ["open", str(folder / f"{name}.tbrun")]) for name in bundles)]:
            print(f"{label:32} exit %d  %6.1f s  peak %5d MB  %s" % peak(command, home))
        files, manifest = read_bundle(bomb)
        planted = home / "results" / "runs" / manifest["run_id"]
        planted.mkdir()
        for name, data in files.items():
            (planted / name).write_bytes(data)
        for label, command in (("runs (bomb planted)", ["runs"]), ("show the planted bomb", ["show", manifest["run_id"]]),
                               ("show real", ["show", "real-run"]), ("show at the bound", ["show", "bound-a"]),
                               ("compare real and at the bound", ["compare", "real-run", "bound-a"]),
                               ("compare the two at the bound", ["compare", "bound-a", "bound-b"]),
                               ("delete the planted bomb", ["delete", manifest["run_id"]])):
            print(f"{label:32} exit %d  %6.1f s  peak %5d MB  %s" % peak(command, home))
        planted.mkdir()
        for name, data in files.items():
            (planted / name).write_bytes(data)
        print(f"{'the window, ' + str(args.window_s) + ' s':32} exit %d  %6.1f s  peak %5d MB  %s"
              % peak([], home, seconds=args.window_s))


if __name__ == "__main__":
    main()
