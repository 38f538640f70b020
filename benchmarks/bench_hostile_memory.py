"""Peak memory of every command a hostile bundle of at most 10 MB can reach, and of the window
started on a catalog holding it (the budget: under 1 GB each).

Makes a real run (DuckDB, real workers), its bundle, then: the 200-million-record Parquet bomb; the
most real-looking records a 10 MB bundle holds ("real": times as measured, ~14 bytes a record);
the most records a 10 MB bundle the budgets accept can hold ("densest": times rounded until a
record takes just over the budget's bytes, twice); one just under ("too dense", refused); and the bomb planted in the
catalog by hand (no open, no check). Each command runs as its own process (``tickbench open | runs | show |
compare``; the window for ``--window-s`` seconds, offscreen); its peak resident memory comes from
the kernel's accounting of the ended child (``wait4``'s ``ru_maxrss``).

    .venv/bin/python benchmarks/bench_hostile_memory.py [--bomb 200000000] [--window-s 20] [--keep DIR]
"""
from __future__ import annotations

import argparse
import io
import json
import os
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.hostile_corpus import make, parquet_bomb, read_bundle, renamed  # noqa: E402


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
    run = json.loads(files["run.json"])
    run["finished_at"] = run["created_at"][:10] + "T23:59:59"
    files["run.json"] = json.dumps(run).encode()
    manifest["counts"]["ops"] = pq.read_metadata(io.BytesIO(files["ops.parquet"])).num_rows
    return make(files, manifest)


def densest_accepted(good: Path) -> bytes:
    """The bundle of 10 MB with the most records the bytes-a-record budget accepts: times rounded
    ever finer until a record takes just over ``MIN_FILE_BYTES_PER_RECORD`` (file and zip alike)."""
    from workloads.results.record_budget import MIN_FILE_BYTES_PER_RECORD
    for quantum in (3e-4, 1e-4, 5e-5, 3e-5, 2e-5, 1e-5, 5e-6, 2e-6, 1e-6, 1e-7, 0.0):     # coarsest (densest) first
        bundle = largest_real(good, quantum=quantum)
        records = read_bundle(bundle)[1]["counts"]["ops"]
        with zipfile.ZipFile(io.BytesIO(bundle)) as z:
            info = z.getinfo("ops.parquet")
            if min(info.compress_size, info.file_size) >= 1.005 * MIN_FILE_BYTES_PER_RECORD * records:
                return bundle
    raise RuntimeError("no quantum gave an accepted bundle")


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
                   "densest": renamed("densest-a")(*read_bundle(densest_accepted(good))),
                   "too dense": renamed("dense-run")(*read_bundle(largest_real(good, quantum=1e-3)))}
        bundles["densest again"] = renamed("densest-b")(*read_bundle(bundles["densest"]))
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
                               ("show real", ["show", "real-run"]), ("show densest", ["show", "densest-a"]),
                               ("compare real and densest", ["compare", "real-run", "densest-a"]),
                               ("compare the two densest", ["compare", "densest-a", "densest-b"]),
                               ("delete the planted bomb", ["delete", manifest["run_id"]])):
            print(f"{label:32} exit %d  %6.1f s  peak %5d MB  %s" % peak(command, home))
        planted.mkdir()
        for name, data in files.items():
            (planted / name).write_bytes(data)
        print(f"{'the window, ' + str(args.window_s) + ' s':32} exit %d  %6.1f s  peak %5d MB  %s"
              % peak([], home, seconds=args.window_s))


if __name__ == "__main__":
    main()
