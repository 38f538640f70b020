"""How an A/B session judges its pairs (``workloads.run.ab``): each figure per step from the kept
pairs' runs, ``workloads.results.evidence.paired`` over them (the Hodges-Lehmann centre of the ratios
B / A with Wilcoxon's signed-rank 95 % interval) and ``verdict_of``; whether the primary figure is
settled (the early stop); how many pairs would settle it. A percentile of runs too short to have
one is "cannot tell", with why (``evidence.too_few_operations``), as ``compare`` says it.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from workloads.results.evidence import (LEVEL, NOISE_FLOOR, OPERATIONS, Evidence, finite_positive, paired, pairs_to_settle,
                                        too_few_operations, verdict_of)

STRICT_LEVEL = 0.99             # the early stop's interval: looked at after every pair
# (name shown, step_figures column, higher is better)
FIGURES = (("rows/s", "rows_per_s", True), ("MB/s", "mb_per_s", True), ("ops/s", "ops_per_s", True),
           ("p50", "p50_s", False), ("p95", "p95_s", False), ("p99", "p99_s", False))
FIGURE_NAMES = tuple(name for name, _column, _better in FIGURES)
_HIGHER = {name: better for name, _column, better in FIGURES}

StepKey = tuple  # (users, rate or None)


@dataclass
class Repetition:
    pair: int
    side: str                   # "A" | "B"
    run_id: str = ""
    status: str = ""            # completed | cancelled | failed | ... (the run's own)
    message: str = ""
    figures: dict[StepKey, dict[str, float]] = field(default_factory=dict)
    labels: dict[StepKey, str] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return self.status == "completed"


@dataclass
class Pair:
    index: int
    order: str                  # "AB" or "BA": which side ran first
    a: Repetition | None = None
    b: Repetition | None = None

    @property
    def kept(self) -> bool:
        return self.a is not None and self.b is not None and self.a.ok and self.b.ok


@dataclass
class FigureVerdict:
    step: str
    figure: str
    higher_is_better: bool
    a: float                    # the median of side A's values over the kept pairs
    b: float
    evidence: Evidence | None
    verdict: str
    why: str = ""               # why it cannot be told, where it cannot

    def to_dict(self) -> dict[str, Any]:
        e = self.evidence
        return {"step": self.step, "figure": self.figure, "higher_is_better": self.higher_is_better,
                "a": self.a, "b": self.b, "verdict": self.verdict,
                "ratio": e.ratio if e else None, "low": e.low if e else None, "high": e.high if e else None,
                "could_see": e.could_see if e else None, "basis": e.basis if e else self.why}


def step_key(row: dict) -> StepKey:
    """Steps match by users and offered rate (as ``workloads.results.compare`` matches them)."""
    rate = row.get("rate")
    return int(row["users"]), None if rate is None or pd.isna(rate) else float(rate)


def figures_of(frame: pd.DataFrame) -> tuple[dict[StepKey, dict[str, float]], dict[StepKey, str]]:
    """A run's figures per step (``step_figures``' rows): {step key: {figure name: value}}, and the
    steps' labels. Latencies in seconds, as stored."""
    figures, labels = {}, {}
    for row in frame.to_dict("records"):
        key = step_key(row)
        figures[key] = {name: _number(row.get(column)) for name, column, _better in FIGURES}
        figures[key][OPERATIONS] = _number(row.get("ops"))
        labels[key] = str(row.get("label") or key[0])
    return figures, labels


def _number(value) -> float:
    try:
        return float(value) if value is not None and not pd.isna(value) else math.nan
    except (TypeError, ValueError):
        return math.nan


def paired_values(pairs: list[Pair], step: StepKey, figure: str) -> tuple[list[float], list[float]]:
    """(A's values, B's values) of ``figure`` at ``step``, pair by pair over the kept pairs."""
    kept = [p for p in pairs if p.kept and step in p.a.figures and step in p.b.figures]
    a = [p.a.figures[step].get(figure, math.nan) for p in kept]
    b = [p.b.figures[step].get(figure, math.nan) for p in kept]
    return a, b


def too_short(pairs: list[Pair], step: StepKey, figure: str) -> str:
    """Why the kept pairs' runs are too short to have ``figure`` at ``step`` ("" when they are not)."""
    a, b = paired_values(pairs, step, OPERATIONS)
    return too_few_operations(figure, a + b)


def evidence_of(pairs: list[Pair], step: StepKey, figure: str, level: float = LEVEL) -> Evidence | None:
    """The paired evidence on ``figure`` at ``step``; None where there is none, runs too short included."""
    return None if too_short(pairs, step, figure) else paired(*paired_values(pairs, step, figure), level=level)


def steps_of(pairs: list[Pair]) -> list[tuple[StepKey, str]]:
    """The steps both sides ran in the kept pairs, in order, with their labels."""
    seen: dict[StepKey, str] = {}
    for p in pairs:
        if p.kept:
            for key in p.a.figures:
                if key in p.b.figures and key not in seen:
                    seen[key] = p.b.labels.get(key) or p.a.labels.get(key) or str(key[0])
    return list(seen.items())


def verdicts_of(pairs: list[Pair]) -> list[FigureVerdict]:
    """Every (step, figure) with a value on both sides of some kept pair: the paired evidence and
    its verdict. A figure 0 or missing on a side (a no-op's rows) is left out."""
    out = []
    for key, label in steps_of(pairs):
        for name in FIGURE_NAMES:
            a, b = paired_values(pairs, key, name)
            usable = [(x, y) for x, y in zip(a, b) if finite_positive(x) and finite_positive(y)]
            if not usable:
                continue
            evidence = evidence_of(pairs, key, name)
            out.append(FigureVerdict(label, name, _HIGHER[name], _median([x for x, _ in usable]),
                                     _median([y for _, y in usable]), evidence, verdict_of(evidence, _HIGHER[name]),
                                     too_short(pairs, key, name)))
    return out


def _median(values: list[float]) -> float:
    return float(pd.Series(values, dtype=float).median()) if values else math.nan


def settled(pairs: list[Pair], primary: str, smallest: float, strict_level: float = STRICT_LEVEL) -> bool:
    """True when the primary figure is clear at every step: its 99 % interval wholly beyond the
    noise floor (a difference), or its 95 % interval wholly within ±``smallest`` (no such change).
    The last look (no pair follows) needs no more than any verdict does: ``strict_level`` 95 %."""
    steps = steps_of(pairs)
    if not steps:
        return False
    for key, _label in steps:
        strict = evidence_of(pairs, key, primary, strict_level)
        if strict is not None and (strict.low > 1 + NOISE_FLOOR or strict.high < 1 / (1 + NOISE_FLOOR)):
            continue
        usual = evidence_of(pairs, key, primary)
        if usual is not None and usual.low >= 1 / (1 + smallest) and usual.high <= 1 + smallest:
            continue
        return False
    return True


def needed_pairs(pairs: list[Pair], primary: str, smallest: float) -> int | None:
    """About how many kept pairs in all would narrow every step's primary interval to ±``smallest``."""
    kept = sum(p.kept for p in pairs)
    wanted = []
    for key, _label in steps_of(pairs):
        evidence = evidence_of(pairs, key, primary)
        if evidence is None:
            return None
        wanted.append(pairs_to_settle(evidence, kept, smallest))
    return max(wanted) if wanted else None


