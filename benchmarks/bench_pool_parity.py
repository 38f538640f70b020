"""Users-sweep parity: Tickbench's step throughput vs a plain multiprocessing script.

For each users value N, a plain script starts N spawned processes that each make one warm-up
read, wait at a barrier with the parent, and then read ``--ops`` TAQ days with the target's own
file format (``pq.read_table(path).to_pandas()`` or ``pickle.load``), the day of read k of
process w being day (w + k) mod days, as Tickbench's read-day picks it, each frame freed before the
next read. Its throughput is rows read / (end of the last read - release), the definition of
``workloads.results.figures``. Right after it a Tickbench run does the same (read-day, same users, same
operations, one warm-up) and its stored step figure is set beside: pairs back to back, because
this machine's speed drifts by 20-30 % over minutes. Aim: within 3 %.

    .venv/bin/python benchmarks/bench_pool_parity.py [--target parquet] [--users 1,2,4] [--ops 30]
        [--rows 1000000] [--days 4] [--repeat 5]
"""
from __future__ import annotations

import argparse
import multiprocessing as mp
import pickle
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


def _read(kind: str, path: str):
    if kind == "pickle":
        with open(path, "rb") as f:
            return pickle.load(f)
    import pyarrow as pa
    import pyarrow.parquet as pq

    from benchmarks.bench_fidelity import to_pandas   # the same to_pandas options, written without Tickbench
    from workloads.datasets.schema import StringMode
    table = pq.read_table(path) if kind == "parquet" else pa.ipc.open_file(path).read_all()
    return to_pandas(table, StringMode.ARROW)


def _plain_worker(kind: str, paths: list[str], worker: int, ops: int, barrier, results) -> None:
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    frame = _read(kind, paths[worker % len(paths)])          # warm-up, before the release
    del frame
    barrier.wait()
    rows, end = 0, 0.0
    for k in range(ops):
        frame = _read(kind, paths[(worker + k) % len(paths)])
        rows += len(frame)
        end = time.monotonic()                               # one clock for every process
        del frame
    results.put((rows, end))


def plain_step(kind: str, paths: list[str], users: int, ops: int) -> float:
    ctx = mp.get_context("spawn")
    barrier, results = ctx.Barrier(users + 1), ctx.Queue()
    procs = [ctx.Process(target=_plain_worker, args=(kind, paths, w, ops, barrier, results))
             for w in range(users)]
    for p in procs:
        p.start()
    barrier.wait()
    released = time.monotonic()
    got = [results.get() for _ in procs]
    for p in procs:
        p.join()
    return sum(r for r, _ in got) / (max(e for _, e in got) - released)


def tickbench_steps(kind: str, root: Path, scale, users: list[int], ops: int) -> list[float]:
    from workloads.results.figures import step_figures
    from workloads.run.runner import Runner
    from workloads.scenario import Scenario
    from workloads.results.store import ResultsStore

    with tempfile.TemporaryDirectory() as tmp:
        store = ResultsStore(Path(tmp) / "results")
        scenario = Scenario(dataset="taq", scale=scale, strings="str", target=kind,
                            target_config={"root": str(root)}, workload="read-day", users=tuple(users),
                            operations=ops, warmup_ops=1, probe_ops=0)
        result = Runner(scenario, store).run()
        if result.status != "completed":
            raise RuntimeError(f"Tickbench run {result.status}: {result.message}")
        rates = list(step_figures(store, result.run_id)["rows_per_s"])
        store.close()
    return rates


def main(argv: list[str] | None = None) -> int:
    from workloads.datasets.schema import Scale, StringMode
    from workloads.targets import make_target

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--target", default="parquet", choices=("parquet", "feather", "pickle"))
    parser.add_argument("--users", default="1,2,4")
    parser.add_argument("--ops", type=int, default=30, help="measured reads per user per step")
    parser.add_argument("--rows", type=int, default=1_000_000, help="rows per day")
    parser.add_argument("--days", type=int, default=4)
    parser.add_argument("--repeat", type=int, default=5, help="back-to-back pairs per users value")
    parser.add_argument("--root", default="")
    args = parser.parse_args(argv)
    users = [int(u) for u in args.users.split(",")]
    root = Path(args.root or tempfile.mkdtemp(prefix="tickbench-parity-"))
    scale = Scale(days=args.days, rows_per_day=args.rows)
    target = make_target(args.target, {"root": str(root)})
    layout = target.prepare("taq", scale, StringMode.ARROW)
    paths = [str(target.day_path(layout, d)) for d in layout.days]

    plain: dict[int, list[float]] = {u: [] for u in users}
    ours: dict[int, list[float]] = {u: [] for u in users}
    for _ in range(args.repeat):
        for u in users:            # each pair back to back: this machine's speed drifts by 20-30 %
            plain[u].append(plain_step(args.target, paths, u, args.ops))
            ours[u].append(tickbench_steps(args.target, root, scale, [u], args.ops)[0])
    print(f"{args.target}, TAQ {args.days} days x {args.rows:,} rows, {args.ops} reads per user after one "
          f"warm-up; {args.repeat} back-to-back pairs (M rows/s)")
    print(f"{'users':>5} {'plain Pool':>11} {'Tickbench':>10} {'median gap of pairs':>20}   "
          "every pair (plain/Tickbench)")
    for u in users:
        a, b = statistics.median(plain[u]) / 1e6, statistics.median(ours[u]) / 1e6
        gaps = [100 * (t / p - 1) for p, t in zip(plain[u], ours[u])]
        pairs = " ".join(f"{p / 1e6:.1f}/{t / 1e6:.1f}" for p, t in zip(plain[u], ours[u]))
        print(f"{u:5d} {a:11.2f} {b:10.2f} {statistics.median(gaps):+19.1f}%   {pairs}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
