"""The report of a comparison leads with its verdicts: for each run against the first, why they
cannot be compared (if so), what differs around them, and each figure's ratio with its interval
and verdict (``workloads.results.compare``)."""
from __future__ import annotations

import math

from collections import Counter
from dataclasses import dataclass

from app.report.as_html import Cell, Table
from workloads.results.compare import FASTER, LARGER, SLOWER, SMALLER, Comparison, compare_runs, figure_text

VERDICT_CSS = {FASTER: "holds", SMALLER: "holds", SLOWER: "not-hold", LARGER: "not-hold"}


@dataclass
class VerdictView:
    title: str
    refusals: list[str]
    environment: Table
    changes: Table | None
    summary: str


def verdict_views(store, run_ids: list[str], labels: dict[str, str]) -> list[VerdictView]:
    """Each run after the first against the first; none for a single run."""
    return [_view(compare_runs(store, run_ids[0], other), labels) for other in run_ids[1:]]


def _view(comparison: Comparison, labels: dict[str, str]) -> VerdictView:
    base, new = labels.get(comparison.base_run, comparison.base_run), labels.get(comparison.new_run, comparison.new_run)
    environment = Table(["", Cell(base, sub=comparison.base_run), Cell(new, sub=comparison.new_run)],
                        [[what, b, n] for what, b, n in comparison.environment], wrap=(1, 2))
    changes, summary = None, ""
    if comparison.comparable:
        changes = Table(["Step", "Figure", "Base", "New", "New / base", "95 % across runs", "Verdict"],
                        [[c.step, c.figure, figure_text(c.figure, c.base), figure_text(c.figure, c.new),
                          f"{c.ratio:.3f}×" if math.isfinite(c.ratio) else "—", c.interval, Cell(c.verdict, css=VERDICT_CSS.get(c.verdict, "not-measured"))]
                         for c in comparison.changes], numeric_from=2, numeric_to=5)
        moved = [c for c in comparison.changes if c.verdict in VERDICT_CSS]
        counts = Counter(c.verdict for c in moved)
        summary = (f"{len(moved)} of {len(comparison.changes)} figures changed beyond this machine's noise: "
                   + ", ".join(f"{n} {verdict}" for verdict, n in counts.most_common()) + "."
                   if moved else f"No difference this machine can see in any of {len(comparison.changes)} figures.")
        summary += f" Noise model across runs: {comparison.noise}."
    return VerdictView(f"{new} against {base}", comparison.refusals, environment, changes, summary)
