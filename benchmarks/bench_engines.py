"""Every local engine on the same generated TAQ days, through Tickbench's runner with real worker
processes: read a day, a key-day slice, appends, minute bars, CSV import, footprint and compression,
and the geometric mean of report 001's and 004's TAQ suites. Answers are checked with ``verify``
first. Prints what it measured, with the scale and the machine.

    .venv/bin/python benchmarks/bench_engines.py [--targets duckdb,clickhouse,...] [--servers questdb,postgres,druid]
        [--days 4] [--rows-per-day 1000000] [--symbols 500] [--operations 8] [--repetitions 5]

Default targets: every local engine whose client is installed (``tickbench targets``). ``--servers``
starts those server engines as local engines in the benchmark's home (``workloads.local_engines``),
measures them the same way and stops them (MongoDB is not offered: its only server here is a
wire-protocol stand-in, whose timings are not MongoDB's). Every run
goes into a results file in a temporary Tickbench home (``--home`` keeps it), so
``tickbench --results <home>/results show <run>`` reads any of them afterwards.
"""
from __future__ import annotations

import argparse
import os
import platform
import sys
import tempfile
import time
from contextlib import contextmanager, suppress
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

SUITES = ("taq001", "taq004")


def machine() -> str:
    import psutil
    return (f"{platform.node() or 'this machine'}: {psutil.cpu_count(logical=True)} logical CPUs ({cpu_model()}), "
            f"{psutil.virtual_memory().total / 2**30:.0f} GiB RAM, {platform.system()} {platform.release()}, "
            f"Python {platform.python_version()}")


def cpu_model() -> str:
    """The processor's name: two runs on machines of one kind but different hosts differ by 2x."""
    with suppress(OSError):         # not Linux: the platform's own word below
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    return platform.processor() or "processor unknown"


def bench_home(home: Path | None, prefix: str) -> Path:
    """The benchmark's Tickbench home (a temporary folder unless given), made the process's."""
    home = home or Path(tempfile.mkdtemp(prefix=prefix))
    home.mkdir(parents=True, exist_ok=True)
    home.chmod(0o755)       # a local PostgreSQL started as root runs as an unprivileged user: it must enter
    os.environ["TICKBENCH_HOME"] = str(home)
    return home


@contextmanager
def local_servers(home: Path, kinds: list[str]):
    """Start these server engines as local engines in the benchmark's home: yields kind -> config;
    every one started is stopped at the end, however it ends."""
    from workloads.local_engines import start_engine, stop_engine

    started = []
    try:
        for kind in kinds:
            engine = start_engine(home / "engines", kind, lambda text, kind=kind: print(f"# {kind}: {text}", flush=True))
            started.append(engine)
        yield {engine.kind: engine.config for engine in started}
    finally:
        for engine in started:
            stop_engine(home / "engines", engine.kind)


class RunFailed(RuntimeError):
    """A measurement that did not complete: its cell says "failed" and the reason is printed."""


def run(store, scenario) -> str:
    from workloads.run.runner import Runner

    result = Runner(scenario, store).run()
    if result.status != "completed":
        raise RunFailed(f"{scenario.name}: {result.status}: {result.message}")
    return result.run_id


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--targets", help="comma-separated (default: every installed local engine)")
    parser.add_argument("--servers", default="", help="local server engines to start and measure too: "
                                                      "questdb,postgres,druid (default: none)")
    parser.add_argument("--days", type=int, default=4)
    parser.add_argument("--rows-per-day", type=int, default=1_000_000)
    parser.add_argument("--symbols", type=int, default=500)
    parser.add_argument("--operations", type=int, default=8, help="measured operations per read workload")
    parser.add_argument("--append-rows", type=int, default=500_000, help="rows appended (25,000-row batches)")
    parser.add_argument("--repetitions", type=int, default=5, help="runs of each suite query")
    parser.add_argument("--home", type=Path, help="keep data and results here (default: a temporary folder)")
    args = parser.parse_args()
    home = bench_home(args.home, "tickbench-engines-")

    from workloads.datasets.schema import Scale
    from workloads.targets.engines import ENGINES, default_config, missing_client

    targets = ([t.strip() for t in args.targets.split(",") if t.strip()] if args.targets else
               [e.kind for e in ENGINES if e.local and missing_client(e.kind) is None])
    scale = Scale(days=args.days, rows_per_day=args.rows_per_day, symbols=args.symbols)
    data = home / "data"
    data.mkdir(parents=True, exist_ok=True)
    configs = {t: default_config(t, data) for t in targets}
    servers = [s.strip() for s in args.servers.split(",") if s.strip()]
    with local_servers(home, servers) as server_configs:
        configs.update(server_configs)
        return measure(args, home, targets + list(server_configs), configs, scale, data)


def measure(args, home: Path, targets: list[str], configs: dict, scale, data: Path) -> int:
    from workloads.results.figures import step_figures
    from workloads.scenario import Scenario
    from workloads.results.store import ResultsStore
    from workloads.results.suite_figures import query_figures, run_footprints, suite_summary
    from workloads.queries.verify import verify

    started_at = time.perf_counter()
    store = ResultsStore(home / "results")
    print(f"# Tickbench engines: {', '.join(targets)}")
    print(f"# TAQ: {args.days} days x {args.rows_per_day:,} rows per day, {args.symbols} symbols; "
          f"{args.operations} operations per read figure, warm cache, one user")
    print(f"# {machine()}")
    print(f"# home {home}\n")

    started = started_at
    verdicts = verify("taq", scale, [(t, t, configs[t]) for t in targets])
    states = sorted({v for row in verdicts.verdicts.values() for v in row.values()})
    print(f"verify taq: {len(verdicts.queries)} queries x {len(targets)} targets: "
          f"{'all the same' if verdicts.agree else 'DIFFERENCES'} {states} "
          f"({time.perf_counter() - started:.0f} s, laying the data out included)\n")

    rows, failures = {}, []
    for target in targets:
        figures = {}

        def scenario(workload: str, **changes) -> Scenario:
            return Scenario(name=f"{workload} {target}", dataset="taq", scale=scale, target=target,
                            target_config=configs[target], workload=workload, users=(1,), **changes)

        def measured(key: str, compute) -> None:
            try:
                figures[key] = compute()
            except RunFailed as exc:
                failures.append(str(exc))

        for workload, key in (("read-day", "day"), ("slice-download", "slice"), ("minute-bars", "bars")):
            measured(key, lambda workload=workload: step_figures(
                store, run(store, scenario(workload, operations=args.operations))).iloc[0])
        measured("append", lambda: step_figures(store, run(store, scenario(
            "concurrent-append", operations=0,
            params={"rows_per_user": args.append_rows, "batch_rows": 25_000}))).iloc[0])

        def import_figures():
            imported = run(store, scenario("import"))
            figures["footprint"] = run_footprints(store, imported)["layout"] or {}
            return step_figures(store, imported).iloc[0]
        measured("import", import_figures)
        for suite in SUITES:
            measured(suite, lambda suite=suite: suite_summary(query_figures(store, run(store, scenario(
                "query-suite", params={"suite": suite, "repetitions": args.repetitions}))))["geomean_s"].iloc[0])
        rows[target] = figures
        print(f"{target}: done ({time.perf_counter() - started:.0f} s so far)", flush=True)

    print()
    print("| engine | read day ms | day MB/s | slice ms | minute bars ms | append k rows/s | import CSV MB/s "
          "| on disk MB | CSV / disk | memory / disk | taq001 geomean ms | taq004 geomean ms |")
    print("|---|" + "---:|" * 11)
    for target, f in rows.items():
        fp = f.get("footprint", {})

        def cell(key, value, digits):
            return f"{value(f[key]):.{digits}f}" if key in f else "failed"
        print(f"| {target} | {cell('day', lambda s: s['p50_s'] * 1000, 1)} | {cell('day', lambda s: s['mb_per_s'], 0)} "
              f"| {cell('slice', lambda s: s['p50_s'] * 1000, 2)} | {cell('bars', lambda s: s['p50_s'] * 1000, 2)} "
              f"| {cell('append', lambda s: s['rows_per_s'] / 1000, 0)} | {cell('import', lambda s: s['wire_mb_per_s'], 1)} "
              f"| {fp.get('bytes', 0) / 1e6:.1f} | {fp.get('csv_ratio') or 0:.2f} | {fp.get('logical_ratio') or 0:.2f} "
              f"| {cell('taq001', lambda v: v * 1000, 2)} | {cell('taq004', lambda v: v * 1000, 2)} |")
    for failure in failures:
        print(f"failed: {failure}")
    print("\nread day, slice and bars: p50 of the measured operations (warm-up apart); append and import: "
          "the step's rows or CSV bytes over its window; memory / disk: logical bytes (45 B/row) over the "
          "footprint; CSV / disk: the day CSVs' size over the footprint.")
    store.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
