"""The narrated demo's findings, played again: does any flip between "holds" and "does not hold"?

Plays the demo's experiments (``workloads.reproduce.story.narrated_playlist``: the beats of a
``--minutes`` demo on the embedded DuckDB, their runs as the window plays them, without the cards'
pauses) ``--plays`` times into one catalog, as a presenter who plays it again on the same laptop
does: a later play's findings read the earlier plays' runs of the same scenarios as repeats. After
each play, every report's findings from that play's runs (``demo_findings``, as the result cards
read them). A finding *flips* when one play says it holds (holds, more strongly, more weakly) and
another that it does not hold; "inconclusive" is no flip (it says what would settle it). Run it
alone on the machine.

    .venv/bin/python benchmarks/bench_demo_verdicts.py [--plays 3] [--minutes 5]

Last line: ``plays: P; findings: N; flips between holds and does not hold: F``
"""
from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

from workloads.reproduce.findings import HOLDS, NOT_HOLD, STRONGER, WEAKER
from workloads.reproduce.story import demo_findings, narrated_playlist
from workloads.results.store import ResultsStore
from workloads.run.runner import Runner

HOLDING = (HOLDS, STRONGER, WEAKER)


def play(store, beats, data_dir: Path) -> dict[tuple[str, str], tuple[str, str]]:
    """One play: every beat's runs in order; {(report, statement): (verdict, measured)}."""
    played: dict[str, list[str]] = {}
    for beat in beats:
        for scenario in beat.scenarios:
            result = Runner(scenario, store).run()
            played.setdefault(beat.report, []).append(result.run_id)
            print(f"  {beat.title}: {scenario.name} {result.status}", file=sys.stderr, flush=True)
    verdicts = {}
    for report, run_ids in played.items():
        _pairs, found = demo_findings(store, report, run_ids)
        for finding in found:
            verdicts[(report, finding.statement)] = (finding.verdict, finding.measured)
    return verdicts


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--plays", type=int, default=3)
    parser.add_argument("--minutes", type=int, default=5, choices=(5, 10, 20))
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="tickbench-demo-verdicts-"))
    beats = narrated_playlist(args.minutes, data_dir=root / "data")
    store = ResultsStore(root / "results")
    t0 = time.monotonic()
    plays = []
    try:
        for number in range(args.plays):
            print(f"play {number + 1}/{args.plays}", file=sys.stderr, flush=True)
            plays.append(play(store, beats, root / "data"))
    finally:
        store.close()
    statements = sorted({key for verdicts in plays for key in verdicts})
    flips = 0
    for key in statements:
        said = [verdicts.get(key, ("—", "—")) for verdicts in plays]
        holding = any(v in HOLDING for v, _ in said)
        not_holding = any(v == NOT_HOLD for v, _ in said)
        flips += holding and not_holding
        print(f"{key[0]} {key[1]}: " + " | ".join(f"{v} ({m})" for v, m in said)
              + ("  <- FLIP" if holding and not_holding else ""))
    print(f"elapsed {(time.monotonic() - t0) / 60:.1f} min; catalog under {root}")
    print(f"plays: {args.plays}; findings: {len(statements)}; flips between holds and does not hold: {flips}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
