"""Tickbench's figure beside each engine's fastest documented client path: for every installed
engine and for read-day, read-slice, minute-bars and the tick pack's as-of join and snapshot,
Tickbench's measured operations (real runs: a worker process, warm-up apart, the stored figures)
beside the same operations made by hand with that engine's own client (``workloads.practitioner``)
on the same days and symbols. Prints this machine's noise (one fixed call's spread) first, each
cell's ratio with the interval a re-run of the benchmark falls in, how many cells reached the
precision and whether every cell meets the goal (ratio <= 1.05, interval's top <= 1.10), and last
``worst ratio R (engine operation, 95 % lo-hi)``.

    .venv/bin/python benchmarks/bench_practitioner.py [--targets duckdb,parquet,...]
        [--servers questdb,postgres,druid] [--days 2] [--rows-per-day 1000000] [--symbols 500]
        [--rounds 8] [--max-rounds 60] [--ops 3] [--max-ops 30] [--precision 0.03]
        [--budget 18] [--server-budget 18] [--start spawn] [--seed 0]

A cell (engine, operation) runs in rounds (``workloads.practitioner.rounds``): each round one
Tickbench run (one user, warm) and a fresh process making the same calls by hand, started as the
run's user is and warmed up alike, each pair of a cell's rounds in both orders (a seeded coin
picks which first); a round measures ``--ops``
operations, a fast operation as many as make 120 ms (``--max-ops`` at most). The ratio
(``workloads.practitioner.paired``): per round the median of each operation's ratio to its twin,
across rounds their Hodges-Lehmann centre, and the interval where 95 % of re-runs' ratios fall.
Each engine has a share of the budget (``--budget`` minutes for the local engines, ``--server-budget``
for the servers, shared over the engines left, its data's preparation counted): the cells play
``--rounds`` rounds in turns (on a host too slow for them all in the share, at least the six
rounds that give an interval), then the cell whose interval is widest, while wider than
+-``--precision`` of its ratio, plays one more, as long as one fits the share and ``--max-rounds``
allows (a noisy cell's rounds are bounded by the budget, not by a count it reaches first: a JVM
engine's 4 ms cells reached 30 rounds at +-7 % with half their share left). ``--servers``
starts each of those engines as a local engine in the benchmark's home just before it is measured
and stops it after, so no engine's background work (a JVM's housekeeping) runs beside another's
figures.
"""
from __future__ import annotations

import argparse
import math
import os
import statistics
import sys
import time
import zlib
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from bench_engines import RunFailed, bench_home, local_servers, machine, run  # noqa: E402  (a sibling script)

WORKLOADS = {"read_day": "read-day", "read_slice": "slice-download", "minute_bars": "minute-bars",
             "asof_join": "asof-join", "snapshot": "snapshot"}
EVERYTHING = 10**10     # slice-download's rows per user: the round ends on its operations instead


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
    parser.add_argument("--rounds", type=int, default=8, help="rounds every cell makes (6 at least: the interval's)")
    parser.add_argument("--max-rounds", type=int, default=60, help="rounds a cell makes at most")
    parser.add_argument("--ops", type=int, default=3, help="measured operations per round")
    parser.add_argument("--max-ops", type=int, default=30,
                        help="measured operations per round at most: a fast operation gets as many as make 120 ms")
    parser.add_argument("--precision", type=float, default=0.03,
                        help="after --rounds, a cell goes on while a re-run's interval is wider than +- this "
                             "fraction of its ratio (0: never)")
    parser.add_argument("--budget", type=float, default=18.0, help="minutes for the local engines' cells")
    parser.add_argument("--server-budget", type=float, default=18.0, help="minutes for the servers' cells")
    parser.add_argument("--seed", type=int, default=0, help="the rounds' order")
    parser.add_argument("--home", type=Path, help="keep data and results here (default: a temporary folder)")
    parser.add_argument("--start", choices=("forkserver", "spawn"), default="forkserver",
                        help="how Tickbench's users and the hand-written processes start "
                             "(workloads.run.processes): forked (default) or spawned")
    parser.add_argument("--save", action="store_true",
                        help="merge the figures into resources/practitioner/measured.json, which every run's "
                             "environment (and report) quotes for its target")
    args = parser.parse_args()
    args.max_rounds = max(args.rounds, args.max_rounds)
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
    return measure(args, home, targets, servers, configs, scale, operations)


class Budget:
    """Minutes shared by a group of engines: each engine's share is what is left over the engines
    left, its data's preparation (and a server's start) counted against it."""

    def __init__(self, minutes: float, engines: int):
        self.ends = time.monotonic() + 60 * minutes
        self.engines = max(1, engines)

    def next_share(self) -> float:
        share = max(0.0, self.ends - time.monotonic()) / self.engines
        self.engines = max(1, self.engines - 1)
        return share


def measure(args, home: Path, targets: list[str], servers: list[str], configs: dict, scale, operations) -> int:
    from workloads.results.store import ResultsStore

    store = ResultsStore(home / "results")
    print(f"# Tickbench beside each engine's fastest client path: {', '.join(targets + servers)}")
    print(f"# TAQ: {args.days} days x {args.rows_per_day:,} rows per day, {args.symbols} symbols; "
          f"{args.rounds}-{args.max_rounds} rounds a cell x {args.ops}-{args.max_ops} operations, "
          f"warm, one user; a fresh hand-written process a round, both orders in each pair of rounds "
          f"(seed {args.seed})")
    print(f"# budget: {args.budget:g} min local engines, {args.server_budget:g} min servers; "
          f"precision +-{args.precision:.0%} of a re-run")
    print(f"# {machine()}; Tickbench's users and the hand-written processes: {args.start}")
    args.noise = machine_noise()
    print(f"# this machine's noise: {args.noise}")
    print(f"# load average at start: {' '.join(f'{v:.2f}' for v in os.getloadavg())}")
    print(f"# home {home}\n", flush=True)

    rows, failures, spent = [], [], {}
    for group, kinds, minutes in (("local engines", targets, args.budget), ("servers", servers, args.server_budget)):
        if not kinds:
            continue
        began = time.monotonic()
        budget = Budget(minutes, len(kinds))
        for kind in kinds:
            failures += measure_engine(args, store, kind, configs.get(kind), scale, operations, budget, rows, home)
        spent[group] = time.monotonic() - began

    print(f"\n# load average at end: {' '.join(f'{v:.2f}' for v in os.getloadavg())}")
    print("# " + "; ".join(f"{group}: {seconds / 60:.1f} min" for group, seconds in spent.items()) + "\n")
    print("| engine | operation | Tickbench median ms | by hand median ms | ratio (a re-run's 95 %) "
          "| rounds | rounds' own | practitioner path |")
    print("|---|---|---:|---:|---:|---:|---:|---|")
    for kind, op, ours, theirs, paired, how in rows:
        print(f"| {kind} | {op} | {ours * 1000:.2f} | {theirs * 1000:.2f} | {paired.ratio:.2f} "
              f"({paired.low:.2f}-{paired.high:.2f}) | {paired.rounds} | {paired.round_low:.2f}-"
              f"{paired.round_high:.2f} | {how} |")
    for failure in failures:
        print(f"failed: {failure}")
    store.close()
    if args.save and rows:
        save_figures(args, rows)
    if rows:
        from workloads.practitioner.paired import run_summary
        print("\n" + "\n".join(run_summary([(f"{kind} {op}", paired) for kind, op, _, _, paired, _ in rows],
                                            args.precision)))
        kind, op, _, _, paired, _ = max(rows, key=lambda r: r[4].ratio)
        print(f"\nworst ratio {paired.ratio:.2f} ({kind} {op}, 95 % {paired.low:.2f}-{paired.high:.2f})")
    return 1 if failures else 0


def machine_noise(calls: int = 100) -> str:
    """One fixed single-threaded call (sorting the same 1 M floats) timed ``calls`` times before
    anything is measured: how far this machine moves the same call from one time to the next, so a
    run's intervals can be read against the host it ran on."""
    import numpy as np

    from workloads.practitioner.paired import call_spread

    values = np.random.default_rng(0).random(1_000_000)
    seconds = []
    for _ in range(calls):
        began = time.perf_counter()
        np.sort(values)
        seconds.append(time.perf_counter() - began)
    low, high = call_spread(seconds)
    return (f"one fixed call (sorting 1 M floats, {calls} times) {low:.2f}-{high:.2f} of its median "
            f"(5th-95th percentile)")


def measure_engine(args, store, kind, config, scale, operations, budget, rows, home) -> list[str]:
    """One engine's cells within its share of the budget: ``--rounds`` rounds of each, in turns,
    while they fit (six at least), then one more round at a time for the cell whose interval is
    widest (and wider than ``--precision``) while another of its rounds fits. A server runs only while it is measured: no other engine's
    background work beside any figure."""
    from workloads.datasets.schema import StringMode
    from workloads.practitioner.paired import more_rounds
    from workloads.practitioner.rounds import HandProcess
    from workloads.targets import make_target

    began, share = time.monotonic(), budget.next_share()
    with local_servers(home, [] if config else [kind]) as server:
        config = config or server[kind]
        target = make_target(kind, config)
        layout = target.prepare("taq", scale, StringMode.ARROW)
        target.close()      # embedded engines allow one process per folder: the rounds' turn
        first = HandProcess(kind, config, layout, args.start)
        first.close()
        cells, failures = [], []
        for op in operations:
            if op in first.facts["ops"]:
                cells.append(Cell(args, kind, config, scale, layout, op))
            else:
                print(f"{kind} {op}: no hand-written path (the engine cannot ask it: see its suite texts)", flush=True)

        def wanted(cell):
            left = share - (time.monotonic() - began)
            return more_rounds(cell.paired, cell.rounds, least=args.rounds, most=args.max_rounds,
                               precision=args.precision, spent_s=cell.seconds, allowance_s=cell.seconds + left)

        try:
            # the least rounds in turns, so a share spent early (a slow host) leaves every cell its
            # fewest rounds with an interval, not the first cells eight and the last none
            while due := [c for c in cells if c.rounds < args.rounds and wanted(c)]:
                min(due, key=lambda c: c.rounds).play(store)
            while extra := [c for c in cells if wanted(c)]:
                max(extra, key=lambda c: c.paired.half_width).play(store)
        except (RunFailed, RuntimeError) as exc:
            failures.append(str(exc))
        for cell in cells:
            if cell.rounds:
                rows.append(cell.report())
        print(f"# {kind}: {time.monotonic() - began:.0f} s (share {share:.0f} s)", flush=True)
        return failures


class Cell:
    """One (engine, operation): its scenario and the rounds it has played. After its first round a
    cell's rounds measure as many operations as make ``ROUND_S`` (``--ops`` at least, ``--max-ops``
    at most): a slice of 4 ms gets 30 a round, a day of 2 s gets 3, so a round's own ratio is the
    median of enough pairs to say something; a round's fixed cost (a run, a process) is ~0.7 s, so
    its operations are cheap beside it."""

    ROUND_S = 0.12

    def __init__(self, args, kind, config, scale, layout, op):
        from workloads.practitioner.rounds import CellRounds, orders, warmups_for
        from workloads.scenario import Scenario

        self.args, self.kind, self.layout, self.op = args, kind, layout, op
        workload = WORKLOADS[op]
        self.scenario = Scenario(name=f"{op} {kind}", dataset="taq", scale=scale, target=kind,
                                 target_config=config, workload=workload, users=(1,), operations=args.ops,
                                 warmup_ops=warmups_for(workload), probe_ops=0, start=args.start,
                                 params=self._params(args.ops))
        self.played, self.seconds, self.paired = CellRounds(), 0.0, None
        self.orders = orders([args.seed, zlib.crc32(f"{kind} {op}".encode())])     # the cell's own coin

    def _params(self, ops: int) -> dict:
        return {"max_operations": ops, "rows_per_user": EVERYTHING} if WORKLOADS[self.op] == "slice-download" else {}

    @property
    def rounds(self) -> int:
        return len(self.played.pairs)

    def play(self, store) -> None:
        from dataclasses import replace

        from workloads.practitioner.paired import paired_ratio
        from workloads.practitioner.rounds import play_round

        started = time.monotonic()
        play_round(lambda s: run(store, s), store, self.scenario, self.layout, self.op, next(self.orders),
                   self.played)
        self.seconds += time.monotonic() - started
        self.paired = paired_ratio(self.played.pairs)
        if self.rounds == 1:
            op_s = statistics.median(self.played.pairs[0][0])
            ops = max(self.args.ops, min(self.args.max_ops, math.ceil(self.ROUND_S / max(op_s, 1e-6))))
            self.scenario = replace(self.scenario, operations=ops, params=self._params(ops))

    def report(self):
        from workloads.practitioner.rounds import HAND_FIRST

        ours = statistics.median(s for round_ours, _ in self.played.pairs for s in round_ours)
        theirs = statistics.median(s for _, by_hand in self.played.pairs for s in by_hand)
        print(f"{self.kind} {self.op}: {self.paired}; Tickbench {ours * 1000:.2f} ms, by hand {theirs * 1000:.2f} ms; "
              f"{self.scenario.operations} a round, {self.played.orders.count(HAND_FIRST)} of {self.rounds} "
              f"rounds by hand first; {self.seconds:.0f} s", flush=True)
        return self.kind, self.op, ours, theirs, self.paired, self.played.how


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
    measured = {"command": command, "date": dt.date.today().isoformat(), "machine": machine(), "noise": args.noise,
                "load": " ".join(f"{v:.2f}" for v in os.getloadavg())}
    for kind, op, ours, theirs, paired, how in rows:
        engines.setdefault(kind, {})[op] = {
            "tickbench_ms": round(ours * 1000, 3), "path_ms": round(theirs * 1000, 3),
            "ratio": round(paired.ratio, 3), "interval": [round(paired.low, 3), round(paired.high, 3)],
            "interval_of": "a re-run's ratio", "pairs": paired.pairs, "rounds": paired.rounds,
            "medians_ratio": round(ours / theirs, 3), "path": how, **measured}
    print(f"saved to {save({'engines': engines})}")


if __name__ == "__main__":
    raise SystemExit(main())
