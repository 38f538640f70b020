"""Tickbench's figure beside each engine's fastest documented client path: for every installed
engine and for read-day, read-slice, minute-bars and the tick pack's as-of join and snapshot, the stored median of Tickbench's measured
operations (real runs, a worker process, warm-up apart) beside the same operations made by hand
with that engine's own client (``workloads.practitioner``), timed interleaved in one loop over the
same days and symbols. Prints each path, the two medians and their ratio, and last
``worst ratio R (engine, operation)``.

    .venv/bin/python benchmarks/bench_practitioner.py [--targets duckdb,parquet,...]
        [--servers questdb,postgres,druid] [--days 2] [--rows-per-day 1000000] [--symbols 500]
        [--rounds 7] [--ops 3] [--slice-ops 9] [--precision 0.05] [--max-rounds 21] [--start spawn]

Each round runs one Tickbench run of ``--ops`` measured operations per operation kind
(``--slice-ops`` for slices, whose few milliseconds are the noisiest figure; one user, warm,
warm-ups until steady), then the hand-written path on the same (day, symbol) sequence the
run's worker drew for its measured operations (its seeded generator replayed), after one warm-up
call, in a long-lived process of its own (a child of the benchmark, as the workers are, idle while
Tickbench measures) whose allocator is settled as the workers' are (``workloads.run.allocator``). A
slice-download round stops on rows, so its rounds go on until it too has rounds x ops operations.
A ratio above 1 is what Tickbench's harness and path cost beyond the practitioner's. The ratio is
paired (``workloads.practitioner.paired``): each Tickbench operation beside the hand-written call on
the same (day, symbol) in the same round, the median of those ratios with a 95 % interval that
resamples rounds; the two sides' own medians and the range of the rounds' ratios are printed beside
it, the noise pairing sees through. A kind whose interval is still wider than +-``--precision`` of
its ratio after ``--rounds`` gets more rounds, up to ``--max-rounds``: how many it took is printed.
``--servers`` starts each of those engines as a local engine in the benchmark's home just before
it is measured and stops it after, so no engine's background work (a JVM's housekeeping) runs
beside another's figures.
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from bench_engines import RunFailed, bench_home, local_servers, machine, run  # noqa: E402  (a sibling script)

WORKLOADS = {"read_day": "read-day", "read_slice": "slice-download", "minute_bars": "minute-bars",
             "asof_join": "asof-join", "snapshot": "snapshot"}
DAYS_IN_TURN = ("read-day", "asof-join", "snapshot")     # user 0 asks about the days in turn from the first


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--targets", help="comma-separated, \"\" for none (default: every installed local engine)")
    parser.add_argument("--servers", default="", help="local server engines to start and measure too: "
                                                      "questdb,postgres,druid (default: none)")
    parser.add_argument("--operations", default=",".join(WORKLOADS),
                        help="which of read_day,read_slice,minute_bars,asof_join,snapshot (an engine without a "
                             "hand-written path for one says so and goes on)")
    parser.add_argument("--days", type=int, default=2)
    parser.add_argument("--rows-per-day", type=int, default=1_000_000)
    parser.add_argument("--symbols", type=int, default=500)
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--ops", type=int, default=3, help="measured operations per round and kind")
    parser.add_argument("--slice-ops", type=int, help="measured slices per round (default: 3 x --ops)")
    parser.add_argument("--precision", type=float, default=0.05,
                        help="after --rounds, a kind gets more rounds while its paired ratio's 95 %% interval is "
                             "wider than +- this fraction of it, up to --max-rounds (0: no more)")
    parser.add_argument("--max-rounds", type=int, help="at most this many rounds a kind (default: 3 x --rounds)")
    parser.add_argument("--home", type=Path, help="keep data and results here (default: a temporary folder)")
    parser.add_argument("--start", choices=("forkserver", "spawn"), default="forkserver",
                        help="how Tickbench's users start (workloads.run.processes): forked (default) or spawned")
    parser.add_argument("--save", action="store_true",
                        help="merge the figures into resources/practitioner/measured.json, which every run's "
                             "environment (and report) quotes for its target")
    args = parser.parse_args()
    args.slice_ops = args.slice_ops or 3 * args.ops
    args.max_rounds = max(args.rounds, args.max_rounds or 3 * args.rounds)
    home = bench_home(args.home, "tickbench-practitioner-")

    from workloads.datasets.schema import Scale
    from workloads.practitioner import MODULES
    from workloads.targets.engines import ENGINES, default_config, missing_client

    targets = ([t.strip() for t in args.targets.split(",") if t.strip()] if args.targets is not None else
               [e.kind for e in ENGINES if e.local and missing_client(e.kind) is None and e.kind in MODULES])
    scale = Scale(days=args.days, rows_per_day=args.rows_per_day, symbols=args.symbols)
    data = home / "data"
    data.mkdir(parents=True, exist_ok=True)
    configs = {t: default_config(t, data) for t in targets}
    servers = [s.strip() for s in args.servers.split(",") if s.strip()]
    operations = [o.strip() for o in args.operations.split(",") if o.strip()]
    return measure(args, home, targets + servers, configs, scale, operations)


def drawn_sequence(workload: str, layout, scale, warmups: int, measured: int) -> tuple[list, list]:
    """The (day, key) of each warm-up and each measured operation of user 0 in step 0: the worker's
    seeded generator replayed (``workloads.run.worker``: SeedSequence([seed, step, worker])); its
    warm-ups, as many as it made (``workloads.run.warmup``), draw first."""
    import numpy as np

    if workload in DAYS_IN_TURN:      # user 0 reads days in turn from the first, warm-ups and measured alike
        turn = [(layout.days[i % len(layout.days)], "") for i in range(max(warmups, measured))]
        return turn[:warmups], turn[:measured]
    rng = np.random.default_rng(np.random.SeedSequence([scale.seed, 0, 0]))
    drawn = [(layout.days[int(rng.integers(len(layout.days)))],
              layout.keys_sample[int(rng.integers(len(layout.keys_sample)))]) for _ in range(warmups + measured)]
    return drawn[:warmups], drawn[warmups:]


def measure(args, home: Path, targets: list[str], configs: dict, scale, operations: list[str]) -> int:
    from workloads.results.store import ResultsStore
    from workloads.targets import make_target
    from workloads.datasets.schema import StringMode

    store = ResultsStore(home / "results")
    print(f"# Tickbench beside each engine's fastest client path: {', '.join(targets)}")
    print(f"# TAQ: {args.days} days x {args.rows_per_day:,} rows per day, {args.symbols} symbols; "
          f"{args.rounds} rounds x {args.ops} operations per kind ({args.slice_ops} slices), warm, one user, "
          "interleaved")
    print(f"# {machine()}; Tickbench's users: {args.start}")
    print(f"# load average at start: {' '.join(f'{v:.2f}' for v in os.getloadavg())}")
    print(f"# home {home}\n", flush=True)

    rows, failures = [], []
    for kind in targets:
        # a server runs only while it is measured: no other engine's background work beside any figure
        with local_servers(home, [kind] if kind not in configs else []) as server:
            config = configs.get(kind) or server[kind]
            target = make_target(kind, config)
            layout = target.prepare("taq", scale, StringMode.ARROW)
            target.close()      # embedded engines allow one process per folder: the workers' turn
            practitioner = PractitionerProcess(kind, config, layout)
            try:
                failures += measure_engine(args, store, kind, config, scale, layout, operations, practitioner, rows)
            finally:
                practitioner.close()

    print(f"\n# load average at end: {' '.join(f'{v:.2f}' for v in os.getloadavg())}\n")
    print("| engine | operation | Tickbench median ms | practitioner median ms | paired ratio (95 %) "
          "| medians' ratio | practitioner path |")
    print("|---|---|---:|---:|---:|---:|---|")
    for kind, op, ours, theirs, paired, how in rows:
        print(f"| {kind} | {op} | {ours * 1000:.2f} | {theirs * 1000:.2f} | {paired.ratio:.2f} "
              f"({paired.low:.2f}-{paired.high:.2f}) | {ours / theirs:.2f} | {how} |")
    for failure in failures:
        print(f"failed: {failure}")
    store.close()
    if args.save and rows:
        save_figures(args, rows)
    if rows:
        kind, op, _, _, paired, _ = max(rows, key=lambda r: r[4].ratio)
        print(f"\nworst ratio {paired.ratio:.2f} ({kind}, {op}; 95 % {paired.low:.2f}-{paired.high:.2f})")
    return 1 if failures else 0


def measure_engine(args, store, kind, config, scale, layout, operations, practitioner, rows) -> list[str]:
    """Each operation of one engine: rounds of a Tickbench run, then the same draws by hand."""
    from workloads.practitioner.paired import paired_ratio
    from workloads.run.records import MEASURED, WARMUP
    from workloads.scenario import Scenario

    failures = []
    for op in operations:
        workload = WORKLOADS[op]
        if op not in practitioner.ops:
            print(f"{kind} {op}: no hand-written path (the engine cannot ask it: see its suite texts)", flush=True)
            continue
        ours, theirs, how, per_round, pairs = [], [], "", [], []
        # slices, the cheapest and noisiest operation, get --slice-ops a round; slice-download
        # stops on rows, not operations: about that many slices' worth of rows
        ops = args.slice_ops if workload == "slice-download" else args.ops
        params = ({"rows_per_user": max(1, (ops - 1) * args.rows_per_day // args.symbols + 1)}
                  if workload == "slice-download" else {})
        rounds = 0
        try:
            # a slice-download round stops on rows, so one large symbol ends it early: rounds go on
            # until the kind has its rounds x ops operations (at most 4x the rounds); and a noisy
            # kind goes on until its interval is as narrow as --precision asks (the stop looks at
            # the interval's width, never at the ratio's value)
            while (rounds < args.rounds or (len(ours) < args.rounds * ops and rounds < 4 * args.rounds)
                   or (rounds < args.max_rounds and paired_ratio(pairs).half_width > args.precision)):
                rounds += 1
                scenario = Scenario(name=f"{op} {kind}", dataset="taq", scale=scale, target=kind,
                                    target_config=config, workload=workload, users=(1,),
                                    operations=ops, warmup_ops=1, probe_ops=0, params=params, start=args.start)
                run_id = run(store, scenario)
                stored = store.ops(run_id, (MEASURED,))
                round_ours = [float(s) for s in stored["total_s"]]
                warmups, measured = drawn_sequence(workload, layout, scale, len(store.ops(run_id, (WARMUP,))),
                                                   len(stored))
                how, seconds = practitioner.time(op, (warmups or measured)[0], measured)
                ours += round_ours
                theirs += seconds
                pairs.append((round_ours, seconds))
                per_round.append(statistics.median(round_ours) / statistics.median(seconds))
        except RunFailed as exc:
            failures.append(str(exc))
            continue
        paired = paired_ratio(pairs)
        rows.append((kind, op, statistics.median(ours), statistics.median(theirs), paired, how))
        print(f"{kind} {op}: paired ratio {paired}; Tickbench {statistics.median(ours) * 1000:.2f} ms, path "
              f"{statistics.median(theirs) * 1000:.2f} ms (medians' ratio "
              f"{statistics.median(ours) / statistics.median(theirs):.2f}, rounds' own "
              f"{min(per_round):.2f}-{max(per_round):.2f})",
              flush=True)
    return failures


class PractitionerProcess:
    """The hand-written paths run in a process of their own, a long-lived one like a user's script:
    a child of this benchmark as Tickbench's workers are, settled the same way, idle while a
    Tickbench run measures (this benchmark's own process holds the results store and runs the
    runs' collector)."""

    def __init__(self, kind: str, config: dict, layout):
        import multiprocessing as mp
        context = mp.get_context("spawn")
        self.conn, child = context.Pipe()
        self.process = context.Process(target=_practitioner_main, args=(kind, config, layout, child), daemon=True)
        self.process.start()
        child.close()
        self.ops = self.conn.recv()              # the operations the engine has a path for

    def time(self, op: str, warmup: tuple, measured: list[tuple]) -> tuple[str, list[float]]:
        """(the path's description, the seconds of each measured call) after one warm-up call."""
        self.conn.send((op, warmup, measured))
        answer = self.conn.recv()
        if isinstance(answer, BaseException):
            raise answer
        return answer

    def close(self) -> None:
        self.conn.send(None)
        self.process.join(30)
        if self.process.is_alive():
            self.process.kill()


def _practitioner_main(kind: str, config: dict, layout, conn) -> None:
    from workloads.run.allocator import settle_allocator
    settle_allocator()                  # as every Tickbench worker does first
    from workloads.practitioner import paths_for
    from workloads.targets import make_target

    practitioner = paths_for(kind, make_target(kind, config), layout)
    practitioner.open()
    try:
        conn.send(tuple(practitioner.paths()))
    finally:
        practitioner.close()
    while (asked := conn.recv()) is not None:
        op, warmup, measured = asked
        try:
            practitioner.open()         # untimed, after the run's workers have let the folder go
            try:
                path = practitioner.paths()[op]
                path.call(*warmup)      # one warm-up call: this process is long-lived
                seconds = []
                for day, key in measured:
                    began = time.perf_counter()
                    result = path.call(day, key)
                    seconds.append(time.perf_counter() - began)
                    del result
            finally:
                practitioner.close()
            conn.send((path.how, seconds))
        except Exception as exc:        # the benchmark says what failed, and stops
            conn.send(RuntimeError(f"{kind} {op} by hand: {type(exc).__name__}: {exc}"))


def save_figures(args, rows) -> None:
    """Merge this run's engines into the shipped record (engines measured before and not now stay)."""
    import datetime as dt

    from workloads.practitioner.measured import load, save

    record = load()
    engines = record.get("engines") or {}
    kept = [a for a in sys.argv[1:] if a != "--save"]
    if "--home" in kept:              # a temporary folder says nothing about the figures
        at = kept.index("--home")
        del kept[at:at + 2]
    command = " ".join(["benchmarks/bench_practitioner.py", *kept])
    measured = {"command": command, "date": dt.date.today().isoformat(), "machine": machine(),
                "load": " ".join(f"{v:.2f}" for v in os.getloadavg())}
    for kind, op, ours, theirs, paired, how in rows:
        engines.setdefault(kind, {})[op] = {
            "tickbench_ms": round(ours * 1000, 3), "path_ms": round(theirs * 1000, 3),
            "ratio": round(paired.ratio, 3), "interval": [round(paired.low, 3), round(paired.high, 3)],
            "pairs": paired.pairs, "medians_ratio": round(ours / theirs, 3), "path": how, **measured}
    print(f"saved to {save({'engines': engines})}")


if __name__ == "__main__":
    raise SystemExit(main())
