"""The verdicts themselves, measured: false alarms on A/A, and power on a known slowdown.

For each scenario, ``--blocks`` blocks of three comparisons: A against A again (A/A), A against B
+10 % and A against B +5 %. The three of a block run side by side as ``tickbench ab`` runs one:
round after round, each round one pair of every comparison still open, the comparisons in a random
order; a pair is run as ``ab`` runs it (``workloads.run.ab.run_pair``: its two runs side by side,
their users taking turns operation by operation, the side going first at random; ``--by-runs``:
one run after the other); a comparison closes where ``ab`` would stop
(``workloads.run.ab.settled``, from 6 pairs on) or at ``--max-pairs``. Each block has a
catalog of its own, so no run serves in two comparisons. Each comparison is judged twice, the two
ways a team can:

- as ``tickbench ab`` judges (``workloads.run.ab``): its pairs, the paired verdict on the median
  time (p50);
- as ``tickbench compare`` judges stored runs (``workloads.results.compare``), the same A runs a
  side against the same B runs, with the catalog's other runs left out (``use_repeats=False``), and
  the CI gate of the documented flow (``--fail-if "p99 > 1.10x" --fail-if "rows/s < 0.95x"``).

The known slowdowns are real work: the no-op's answer is 1 ms of CPU (``work_s``) against 1.1 ms
and 1.05 ms (1 ms, not 10: a 0.4 s run then has some 150 operations taking turns, enough for a p99
of its own, where 10 ms gave 13 and a p99 that was the slowest of them); DuckDB's warm day read gets a busy loop inside each timed operation of 10 % and 5 %
of that operation's own time (``added_work_share``, ``--added-work 10%``): every read a tenth (a
twentieth) slower, as a release that does that much more work per call. (A fixed loop sized on a
pilot's median added 8.6 % to the series' medians, not 10: the pilot measured a quieter moment.)
Run it alone on the machine: a suite beside it measures the suite.

    .venv/bin/python benchmarks/bench_verdicts.py [--blocks 20] [--max-pairs 12] [--seconds 0.4] [--duckdb-seconds 1]
        [--duckdb-rows 50000] [--by-runs]

Last line: ``A/A: F false alarms of N; A/B +10 %: C of N caught; +5 %: C5 of N; gate: G false failures of N``
over both scenarios, read strictly: an A/A comparison counts as a false alarm when either way of
judging it called a central figure (p50, rows/s, ops/s) changed; an A/B one counts as caught only
when both ways called its p50 slower. The gate's count is of exit 1 on A/A; a comparison whose
runs are too short for a rule's figure (a p99 needs 100 operations a run) cannot be checked (exit 2),
and the line after says how many could not. The lines above it give each way and scenario apart.
"""
from __future__ import annotations

import argparse
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

from workloads.datasets.schema import Scale
from workloads.results.compare import CANNOT_TELL, SAME, SLOWER, TOO_FEW, compare_runs
from workloads.results.gate import BROKEN, CANNOT, Rule, check
from workloads.results.store import ResultsStore
from workloads.run.ab import MIN_PAIRS, Pair, run_pair, settled, verdicts_of
from workloads.scenario import Scenario

KINDS = ("A/A", "+10 %", "+5 %")
CI_RULES = [Rule.parse("p99 > 1.10x"), Rule.parse("rows/s < 0.95x")]
CENTRAL = ("p50", "rows/s", "ops/s")       # what a team reads as "faster" or "slower"


def noop(seconds: float, work_s: float) -> Scenario:
    return Scenario(name="verdicts no-op", workload="noop", users=(1,), operations=0, duration_s=seconds,
                    probe_ops=0, warmup_ops=1, params={"work_s": work_s, "rows": 1000})


def duckdb(root: Path, seconds: float, rows: int, added_share: float = 0.0) -> Scenario:
    params = {"added_work_share": added_share} if added_share else {}
    return Scenario(name="verdicts DuckDB", scale=Scale(days=2, rows_per_day=rows, symbols=100), target="duckdb",
                    target_config={"path": str(root / "d.duckdb")}, workload="read-day", users=(1,), operations=0,
                    duration_s=seconds, params=params)


RUN_SECONDS: list[float] = []           # each run's wall time, bookkeeping included


def block(store, sides: dict[str, Scenario], max_pairs: int, smallest: float,
          rng: random.Random, together: bool) -> dict[str, list[Pair]]:
    """One block's three comparisons, run side by side as ``tickbench ab`` runs one: per kind, its
    pairs in time order, ended where ``ab`` would stop."""
    plan = {"A/A": ("A", "A"), "+10 %": ("A", "B10"), "+5 %": ("A", "B5")}
    pairs: dict[str, list[Pair]] = {kind: [] for kind in KINDS}
    open_kinds = list(KINDS)
    while open_kinds:
        index = len(pairs[open_kinds[0]])
        made = {kind: Pair(index, rng.choice(("AB", "BA"))) for kind in open_kinds}
        for kind in rng.sample(open_kinds, len(open_kinds)):
            started = time.monotonic()
            run_pair({"A": sides[plan[kind][0]], "B": sides[plan[kind][1]]}, store, made[kind], together)
            RUN_SECONDS.append((time.monotonic() - started) / 2)
        for kind in list(open_kinds):
            pairs[kind].append(made[kind])
            kept = [p for p in pairs[kind] if p.kept]
            last = len(pairs[kind]) >= max_pairs
            if last or (len(kept) >= MIN_PAIRS and settled(kept, "p50", smallest)):
                open_kinds.remove(kind)
    return pairs


def ab_verdict(pairs: list[Pair]) -> tuple[dict[str, str], int]:
    """As ``tickbench ab`` answered on these pairs: (verdict per figure, pairs kept)."""
    kept = [p for p in pairs if p.kept]
    return {v.figure: v.verdict for v in verdicts_of(kept)}, len(kept)


def stored_verdict(store, pairs: list[Pair]) -> tuple[dict[str, str], int]:
    """As ``tickbench compare A1,A2,... B1,B2,... --fail-if ...`` would: (verdict per figure, exit)."""
    kept = [p for p in pairs if p.kept]
    comparison = compare_runs(store, [p.a.run_id for p in kept], [p.b.run_id for p in kept], use_repeats=False)
    code, _results = check(comparison, CI_RULES)
    return {c.figure: c.verdict for c in comparison.changes}, code


def judge(store, chunks: dict[str, list[Pair]], counts: dict, ratios: dict) -> None:
    """Judge one block's three comparisons both ways; add to ``counts`` and the p50 pair ratios."""
    for kind in KINDS:
        chunk = chunks[kind]
        ab, used = ab_verdict(chunk)
        stored, code = stored_verdict(store, chunk)
        ratios[kind] += [p.b.figures[k]["p50"] / p.a.figures[k]["p50"] for p in chunk if p.kept
                         for k in p.a.figures if k in p.b.figures]
        ratios["A p50"] += [p.a.figures[k]["p50"] for p in chunk if p.kept for k in p.a.figures]
        said = counts[kind]
        said["n"] += 1
        said["pairs"] += used
        if kind == "A/A":
            alarms = (any(ab.get(f, SAME) != SAME for f in CENTRAL), any(stored.get(f, SAME) != SAME for f in CENTRAL))
            said["ab"] += alarms[0]
            said["stored"] += alarms[1]
            said["either"] += any(alarms)
            said["tails"] += any(v not in (SAME, CANNOT_TELL, TOO_FEW) for f, v in {**ab, **stored}.items()
                                 if f not in CENTRAL)                   # "cannot tell" is no change called
            said["gate"] += code == BROKEN
            said["unchecked"] += code == CANNOT
        else:
            caught = (ab.get("p50") == SLOWER, stored.get("p50") == SLOWER)
            said["ab"] += caught[0]
            said["stored"] += caught[1]
            said["both"] += all(caught)


def report(title: str, counts: dict, ratios: dict) -> None:
    if ratios["A p50"]:
        print(f"{title}: A's median operation {statistics.median(ratios['A p50']) * 1000:.2f} ms (median of its runs' p50)")
    for kind in KINDS:
        if ratios[kind]:
            print(f"{title} {kind}: pair ratio of p50 median {statistics.median(ratios[kind]):.3f}, "
                  f"spread (p10-p90) {_quantile(ratios[kind], 0.1):.3f}-{_quantile(ratios[kind], 0.9):.3f}")
    for kind in KINDS:
        said = counts[kind]
        what = "false alarms" if kind == "A/A" else "caught"
        print(f"{title} {kind}: ab {what} {said['ab']} of {said['n']} (mean {said['pairs'] / max(said['n'], 1):.1f} "
              f"pairs), stored compare {said['stored']} of {said['n']}"
              + (f", gate false failures {said['gate']} of {said['n']} (could not check {said['unchecked']}), "
                 f"tail figures called changed "
                 f"{said['tails']} of {said['n']}" if kind == "A/A" else ""), flush=True)


def _quantile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def new_counts() -> dict:
    return {kind: {"ab": 0, "stored": 0, "either": 0, "both": 0, "gate": 0, "unchecked": 0, "tails": 0, "n": 0,
                   "pairs": 0}
            for kind in KINDS}


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--blocks", type=int, default=20, help="comparisons of each kind per scenario")
    parser.add_argument("--max-pairs", type=int, default=12, help="pairs per comparison at most (ab's early stop ends most sooner)")
    parser.add_argument("--smallest", type=float, default=0.05, help="ab's --smallest, as a fraction")
    parser.add_argument("--seconds", type=float, default=0.4, help="each no-op run's measured seconds")
    parser.add_argument("--duckdb-seconds", type=float, default=1.0,
                        help="each DuckDB run's measured seconds (shorter runs of its read scatter more than they save)")
    parser.add_argument("--duckdb-rows", type=int, default=50_000,
                        help="rows of the day DuckDB reads (a 200,000-row read scatters twice as much per pair here)")
    parser.add_argument("--scenarios", default="noop,duckdb")
    parser.add_argument("--seed", type=int, default=52)
    parser.add_argument("--by-runs", action="store_true",
                        help="pairs run one run after the other (ab --interleave runs), not taking turns")
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="tickbench-verdicts-"))
    rng = random.Random(args.seed)
    totals = new_counts()
    t0 = time.monotonic()
    for name in args.scenarios.split(","):
        if name == "noop":
            sides = {"A": noop(args.seconds, 0.001), "B10": noop(args.seconds, 0.0011), "B5": noop(args.seconds, 0.00105)}
            title = "no-op, 1 ms of CPU"
        else:
            sides = {"A": duckdb(root, args.duckdb_seconds, args.duckdb_rows),
                     "B10": duckdb(root, args.duckdb_seconds, args.duckdb_rows, 0.10),
                     "B5": duckdb(root, args.duckdb_seconds, args.duckdb_rows, 0.05)}
            title = f"DuckDB read-day warm, {args.duckdb_rows:,}-row day (+10 % / +5 % of each read's time)"
        print(f"{title}: {args.blocks} blocks, at most {args.max_pairs} pairs a comparison", file=sys.stderr, flush=True)
        counts, ratios = new_counts(), {kind: [] for kind in (*KINDS, "A p50")}
        for number in range(args.blocks):
            # a catalog per block: its comparisons read only its runs, and a catalog that grew by
            # hundreds of runs would slow every run's bookkeeping
            store = ResultsStore(root / f"{name}-{number}")
            try:
                judge(store, block(store, sides, args.max_pairs, args.smallest, rng, not args.by_runs), counts, ratios)
            finally:
                store.close()
            print(f"  block {number + 1}/{args.blocks}: {(time.monotonic() - t0) / 60:.1f} min", file=sys.stderr,
                  flush=True)
        report(title, counts, ratios)
        per_run = statistics.mean(RUN_SECONDS)
        print(f"{title}: a run takes {per_run:.2f} s of wall time; a comparison alone as tickbench ab runs it: "
              + ", ".join(f"{kind} {counts[kind]['pairs'] / max(counts[kind]['n'], 1):.1f} pairs, about "
                          f"{2 * per_run * counts[kind]['pairs'] / max(counts[kind]['n'], 1):.0f} s" for kind in KINDS),
              flush=True)
        RUN_SECONDS.clear()
        for kind in KINDS:
            for key in totals[kind]:
                totals[kind][key] += counts[kind][key]
    print(f"elapsed {(time.monotonic() - t0) / 60:.1f} min; catalogs under {root}")
    aa, ten, five = totals["A/A"], totals["+10 %"], totals["+5 %"]
    # the strict reading: an A/A comparison is a false alarm if either way of judging it raised one;
    # an A/B one is caught only if both ways caught it
    print(f"the gate could not check {aa['unchecked']} of {aa['n']} A/A comparisons (runs too short for a rule's figure)")
    print(f"A/A: {aa['either']} false alarms of {aa['n']}; A/B +10 %: {ten['both']} of {ten['n']} caught; "
          f"+5 %: {five['both']} of {five['n']}; gate: {aa['gate']} false failures of {aa['n']}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
