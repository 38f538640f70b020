"""Reports 001 and 004 on every local target: CSV import, CSV export, footprint and the query
suites, through Tickbench's runner with real worker processes, at a stated scale; answers checked
with ``verify`` first. Prints what it measured; nothing is compared with the published figures
here (their machines and datasets are far larger).

    .venv/bin/python benchmarks/bench_analytics.py [--targets duckdb,parquet,pickle,feather]
        [--days 4] [--rows-per-day 1000000] [--symbols 500] [--devices 3000] [--repetitions 5]

Every run goes into a results file in a temporary Tickbench home (``--home`` keeps one), so
``tickbench --results <home>/results show <run>`` reads any of them afterwards.
"""
from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

SUITES = {"taq": ("taq001", "taq004"), "devices": ("devices004",)}


def config(kind: str, data: Path) -> dict:
    return {"path": str(data / "bench.duckdb")} if kind == "duckdb" else {"root": str(data)}


def run(store, scenario) -> str:
    from workloads.run.runner import Runner

    result = Runner(scenario, store).run()
    if result.status != "completed":
        raise SystemExit(f"{scenario.name}: {result.status}: {result.message}")
    return result.run_id


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--targets", default="duckdb,parquet,pickle,feather")
    parser.add_argument("--days", type=int, default=4)
    parser.add_argument("--rows-per-day", type=int, default=1_000_000)
    parser.add_argument("--symbols", type=int, default=500)
    parser.add_argument("--devices", type=int, default=3_000)
    parser.add_argument("--repetitions", type=int, default=5)
    parser.add_argument("--home", type=Path, help="keep data and results here (default: a temporary folder)")
    args = parser.parse_args()
    home = args.home or Path(tempfile.mkdtemp(prefix="tickbench-analytics-"))
    os.environ["TICKBENCH_HOME"] = str(home)

    from workloads.datasets.schema import Scale
    from workloads.scenario import Scenario
    from workloads.results.store import ResultsStore
    from workloads.results.suite_figures import query_figures, run_footprints, suite_summary
    from workloads.results.figures import step_figures
    from workloads.queries.verify import verify

    targets = [t.strip() for t in args.targets.split(",") if t.strip()]
    scales = {"taq": Scale(days=args.days, rows_per_day=args.rows_per_day, symbols=args.symbols),
              "devices": Scale(days=args.days, rows_per_day=args.rows_per_day, symbols=args.devices)}
    data = home / "data"
    data.mkdir(parents=True, exist_ok=True)
    store = ResultsStore(home / "results")
    print(f"# Tickbench analytics: {', '.join(targets)}; {args.days} days x {args.rows_per_day:,} rows per day "
          f"(TAQ {args.symbols} symbols, devices {args.devices} devices); {args.repetitions} runs per query")
    print(f"# home {home}\n")

    for dataset, scale in scales.items():
        started = time.perf_counter()
        verdicts = verify(dataset, scale, [(t, t, config(t, data)) for t in targets])
        states = {v for row in verdicts.verdicts.values() for v in row.values()}
        print(f"verify {dataset}: {len(verdicts.queries)} queries x {len(targets)} targets: "
              f"{'all the same' if verdicts.agree else 'DIFFERENCES'} {sorted(states)} "
              f"({time.perf_counter() - started:.0f} s, data laid out included)")
    print()

    transfers = []
    for dataset, scale in scales.items():
        for target in targets:
            for workload in ("import", "export"):
                scenario = Scenario(name=f"{workload} {target} {dataset}", dataset=dataset, scale=scale, target=target,
                                    target_config=config(target, data), workload=workload, users=(1,))
                run_id = run(store, scenario)
                step = step_figures(store, run_id).iloc[0]
                footprint = run_footprints(store, run_id)
                transfers.append((dataset, target, workload, step, footprint))
    print("## Import and export (one user, one file or day per operation)")
    print(f"{'dataset':8} {'target':8} {'workload':7} {'files':>5} {'CSV MB/s':>9} {'M rows/s':>9} "
          f"{'s/file':>7} {'1st op s':>8}")
    for dataset, target, workload, step, _ in transfers:
        print(f"{dataset:8} {target:8} {workload:7} {int(step['ops']):5d} {step['wire_mb_per_s']:9.1f} "
              f"{step['rows_per_s'] / 1e6:9.2f} {step['mean_s']:7.2f} {step['first_op_s']:8.2f}")
    print()
    print("## Footprint of the laid-out table (and of the import table)")
    print(f"{'dataset':8} {'target':8} {'on disk MB':>10} {'CSV/disk':>8} {'mem/disk':>8} {'import MB':>9}  method")
    for dataset, target, workload, _, footprint in transfers:
        if workload != "import":
            continue
        layout = footprint["layout"] or {}
        imported = next(iter(footprint["steps"].values()), {}) or {}
        print(f"{dataset:8} {target:8} {layout.get('bytes', 0) / 1e6:10.1f} {layout.get('csv_ratio') or 0:8.2f} "
              f"{layout.get('logical_ratio') or 0:8.2f} {imported.get('bytes', 0) / 1e6:9.1f}  {layout.get('method', '')}")
    print()

    for dataset, scale in scales.items():
        for suite in SUITES[dataset]:
            means, geomeans = {}, {}
            for target in targets:
                scenario = Scenario(name=f"{suite} {target}", dataset=dataset, scale=scale, target=target,
                                    target_config=config(target, data), workload="query-suite",
                                    params={"suite": suite, "repetitions": args.repetitions})
                run_id = run(store, scenario)
                figures = query_figures(store, run_id)
                means[target] = dict(zip(figures["query"], zip(figures["mean_s"], figures["status"])))
                geomeans[target] = suite_summary(figures)["geomean_s"].iloc[0]
            print(f"## {suite} on {dataset}: mean ms per query ({args.repetitions} runs each, warm)")
            print(f"{'query':6} {'category':44} " + " ".join(f"{t:>9}" for t in targets))
            for _, q in figures.iterrows():
                cells = []
                for t in targets:
                    mean, status = means[t].get(q["query"], (None, "?"))
                    cells.append(f"{mean * 1000:9.2f}" if status == "ok" else f"{status:>9}")
                print(f"{q['query']:6} {q['category'][:44]:44} " + " ".join(cells))
            print(f"{'geomean':6} {'':44} " + " ".join(f"{geomeans[t] * 1000:9.2f}" for t in targets))
            print()
    store.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
