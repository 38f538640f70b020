"""Peak memory of every command a hostile bundle of at most 10 MB can reach, and of the window
started on a catalog holding it (the budget: under 1 GB each).

Makes a real run (DuckDB, real workers), its bundle, then: the 200-million-record Parquet bomb, the
largest bundle of real-looking records that fits in 10 MB, and the bomb planted in the catalog by
hand (no open, no check). Each command runs as its own process (``tickbench open | runs | show |
compare``; the window for ``--window-s`` seconds, offscreen); its peak resident memory comes from
the kernel's accounting of the ended child (``wait4``'s ``ru_maxrss``).

    .venv/bin/python benchmarks/bench_hostile_memory.py [--bomb 200000000] [--window-s 20]
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
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.hostile_corpus import make, parquet_bomb, read_bundle, renamed  # noqa: E402


def peak(args: list[str], home: Path, seconds: float | None = None) -> tuple[int, float, int, str]:
    """(exit code, wall seconds, peak RSS MB, last line of stderr) of ``tickbench *args``."""
    env = {**os.environ, "TICKBENCH_HOME": str(home), "QT_QPA_PLATFORM": "offscreen"}
    started = time.perf_counter()
    child = subprocess.Popen([sys.executable, "-m", "app", *args], env=env, cwd=ROOT,
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    if seconds is not None:
        time.sleep(seconds)
        child.terminate()
    stderr = child.stderr.read().decode(errors="replace")
    _, status, usage = os.wait4(child.pid, 0)
    code = os.waitstatus_to_exitcode(status)
    return code, time.perf_counter() - started, usage.ru_maxrss // 1024, (stderr.strip().splitlines() or [""])[-1]


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


def largest_real(good: Path, limit: int = 10 << 20) -> bytes:
    """Real-looking records (every start and time distinct), as many as a 10 MB bundle holds, over a
    day-long run (so the records-per-second budget lets them in)."""
    files, manifest = read_bundle(good.read_bytes())
    first = pq.read_table(io.BytesIO(files["ops.parquet"])).slice(0, 1)
    records = 400_000
    while True:
        rng = np.random.default_rng(1)
        table = first.take(pa.array(np.zeros(records, dtype=np.int64)))
        for column, values in (("t_start", np.sort(rng.uniform(0, 80_000, records))),
                               ("total_s", rng.uniform(0.001, 0.01, records))):
            table = table.set_column(table.schema.get_field_index(column), column, pa.array(values))
        out = io.BytesIO()
        pq.write_table(table, out)
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bomb", type=int, default=200_000_000)
    parser.add_argument("--window-s", type=float, default=20.0)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch)
        good = genuine(folder)
        bomb = parquet_bomb(args.bomb)(*read_bundle(good.read_bytes()))
        (folder / "bomb.tbrun").write_bytes(bomb)
        real = largest_real(good)
        (folder / "real.tbrun").write_bytes(real)
        (folder / "real2.tbrun").write_bytes(renamed("second-real")(*read_bundle(real)))
        print(f"bundles: bomb {len(bomb):,} bytes ({args.bomb:,} records declared), "
              f"real {len(real):,} bytes ({read_bundle(real)[1]['counts']['ops']:,} records)")
        home = folder / "receiver"
        steps = [("open the bomb", ["open", str(folder / "bomb.tbrun")]),
                 ("open the 10 MB real one", ["open", str(folder / "real.tbrun")]),
                 ("open a second 10 MB one", ["open", str(folder / "real2.tbrun")])]
        for label, command in steps:
            print(f"{label:32} exit %d  %6.1f s  peak %5d MB  %s" % peak(command, home))
        files, manifest = read_bundle(bomb)
        planted = home / "results" / "runs" / manifest["run_id"]
        planted.mkdir()
        for name, data in files.items():
            (planted / name).write_bytes(data)
        real_id = read_bundle(real)[1]["run_id"]
        for label, command in (("runs (bomb planted)", ["runs"]), ("show the planted bomb", ["show", manifest["run_id"]]),
                               ("show the 10 MB one", ["show", real_id]),
                               ("compare the two 10 MB ones", ["compare", real_id, "second-real"]),
                               ("delete the planted bomb", ["delete", manifest["run_id"]])):
            print(f"{label:32} exit %d  %6.1f s  peak %5d MB  %s" % peak(command, home))
        planted.mkdir()
        for name, data in files.items():
            (planted / name).write_bytes(data)
        print(f"{'the window, ' + str(args.window_s) + ' s':32} exit %d  %6.1f s  peak %5d MB  %s"
              % peak([], home, seconds=args.window_s))


if __name__ == "__main__":
    main()
