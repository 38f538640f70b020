"""Users on a Dask cluster vs users as local processes: the harness's cost per operation, the
records per second that reach the results store, and the clock-offset error per host.

The cluster is a real one on loopback (a scheduler and ``--hosts`` ``dask worker`` processes,
``workloads.distributed.local_cluster``). Each run is the no-op workload for ``--seconds`` with
``--users`` users, so the time per operation is the harness's own: the worker's loop, its records,
the relay (local pipe; or pipe -> host task -> Dask Queue -> scheduler -> run -> pipe) and the
collector writing them to the store.

    .venv/bin/python benchmarks/bench_distributed.py [--seconds 5] [--users 2] [--hosts 2]
"""
from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from workloads.distributed.cluster import describe_scheduler  # noqa: E402
from workloads.distributed.local_cluster import start  # noqa: E402
from workloads.run.runner import Runner  # noqa: E402
from workloads.scenario import Scenario  # noqa: E402
from workloads.results.store import ResultsStore  # noqa: E402


def run_noop(store: ResultsStore, seconds: float, users: int, scheduler: str = "") -> dict:
    scenario = Scenario(name="bench", workload="noop", users=(users,), operations=0, duration_s=seconds,
                        warmup_ops=0, probe_ops=0, scheduler=scheduler)
    result = Runner(scenario, store).run()
    if result.status != "completed":
        raise SystemExit(f"the {'Dask' if scheduler else 'local'} run {result.status}: {result.message}")
    figures = result.figures.iloc[0]
    stored = int(store.frame(f"SELECT count(*) AS n FROM ops WHERE run_id = '{result.run_id}'")["n"].iloc[0])
    return {"ops": int(figures["ops"]), "window_s": float(figures["window_s"]),
            "per_op_us": figures["window_s"] * users / figures["ops"] * 1e6,
            "records_per_s": stored / figures["window_s"]}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--users", type=int, default=2)
    parser.add_argument("--hosts", type=int, default=2)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        store = ResultsStore(Path(folder) / "results")
        cluster = start(Path(folder) / "dask", workers=args.hosts)
        try:
            view = describe_scheduler(cluster.scheduler)
            local = run_noop(store, args.seconds, args.users)
            dask = run_noop(store, args.seconds, args.users, cluster.scheduler)
        finally:
            cluster.stop()
            store.close()
    print(f"no-op workload, {args.users} users, {args.seconds:g} s; Dask: {args.hosts} workers on loopback")
    print(f"{'':8} {'ops':>10} {'harness µs/op per user':>24} {'records/s stored':>18}")
    for name, figures in (("local", local), ("Dask", dask)):
        print(f"{name:8} {figures['ops']:>10,} {figures['per_op_us']:>24.1f} {figures['records_per_s']:>18,.0f}")
    print("clock offsets (host - run, from the tightest of 15 round trips through the scheduler):")
    for host in view.hosts:
        print(f"  {host.address} ({host.name}): {host.clock_offset_s * 1e3:+.3f} ms ± {host.clock_error_s * 1e3:.3f} ms")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
