"""A gate for CI: rules such as ``p99 > 1.10x`` or ``rows/s < 0.95x`` over a comparison.

A rule names a figure (as ``compare`` names them: rows/s, MB/s, ops/s, p50, p95, p99, first op,
phase decode, query t01, suite geometric mean, footprint), a direction and a ratio new / base. It
is broken only when the whole 95 % interval of that figure's ratio ACROSS RUNS is past the
threshold, in some step the runs share, and the comparison's verdict on that figure is a change the
same way: the gate and the verdict column read one interval by one rule, so they never disagree,
and noise the noise model knows of never fails a build. A rule cannot be checked (exit 2, never
"holds") where its figure is missing from both runs, has one value a run, or is NaN, infinite,
zero or negative in a run, or is a percentile of runs too short to have one (a p99 needs 100
operations a run: ``evidence.too_few_operations``).
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from workloads.results.compare import CANNOT_TELL, TOO_FEW, Comparison, FigureChange
from workloads.results.evidence import NOISE_FLOOR

PASSED, BROKEN, CANNOT = 0, 1, 2          # the command's exit codes
_RULE = re.compile(r"^\s*(?P<figure>.+?)\s*(?P<op>[<>])\s*(?P<value>\d+(?:\.\d+)?)\s*x\s*$", re.IGNORECASE)


@dataclass(frozen=True)
class Rule:
    figure: str
    above: bool                 # ">": broken when the ratio is above the threshold
    threshold: float
    text: str

    @classmethod
    def parse(cls, text: str) -> "Rule":
        match = _RULE.match(text)
        if not match:
            raise ValueError(f"--fail-if {text!r}: write a figure, > or <, and a ratio ending in x, "
                             "e.g. \"p99 > 1.10x\" or \"rows/s < 0.95x\"")
        threshold = float(match["value"])
        if not 0 < threshold < float("inf"):
            raise ValueError(f"--fail-if {text!r}: the ratio must be above 0")
        return cls(match["figure"].strip(), match["op"] == ">", threshold, text.strip())

    def broken_by(self, change: FigureChange) -> bool:
        """The whole interval across runs past the threshold, and past the noise floor the same
        way (where the verdict calls it a change): never on a figure that cannot be told."""
        if change.low is None or change.high is None or change.verdict in (TOO_FEW, CANNOT_TELL):
            return False
        if self.above:
            return change.low > self.threshold and change.low > 1 + NOISE_FLOOR
        return change.high < self.threshold and change.high < 1 / (1 + NOISE_FLOOR)


@dataclass(frozen=True)
class RuleResult:
    rule: Rule
    broken: list[FigureChange]      # the steps where it is broken
    checked: list[FigureChange]     # every step where its figure was measured enough to judge
    named: bool = True              # the runs have the figure (perhaps too few values to judge)
    untold: tuple[FigureChange, ...] = ()    # steps where the figure is NaN, infinite or not above 0

    @property
    def holds(self) -> bool:
        return bool(self.checked) and not self.broken and not self.untold

    def line(self) -> str:
        if self.untold and not self.broken:
            bad = self.untold[0]
            return (f"cannot check {self.rule.text!r}: {bad.figure} at {bad.step}: "
                    f"{bad.untold or 'not a finite figure above 0 in every run'} ({_plain(bad.base)} -> {_plain(bad.new)})")
        if not self.checked and self.named:
            return f"cannot check {self.rule.text!r}: {self.rule.figure} has one value per run, too few to tell"
        if not self.checked:
            return f"cannot check {self.rule.text!r}: neither run has the figure {self.rule.figure!r}"
        shown = self.broken or self.checked
        worst = max(shown, key=lambda c: c.ratio if self.rule.above else -c.ratio)
        state = "broken" if self.broken else "holds"
        return (f"{state}: {self.rule.text} — {worst.figure} at {worst.step}: {worst.ratio:.3f}x "
                f"(95 % across runs {worst.interval}), {worst.base:.6g} -> {worst.new:.6g}")


def _plain(value) -> str:
    try:
        return f"{float(value):.6g}"
    except (TypeError, ValueError):
        return str(value)


def check(comparison: Comparison, rules: list[Rule]) -> tuple[int, list[RuleResult]]:
    """(exit code, each rule's result): 2 when the runs cannot be compared or a rule cannot be
    checked, else 1 when a rule is broken, else 0."""
    results = []
    for rule in rules:
        named = [c for c in comparison.changes if c.figure.lower() == rule.figure.lower()]
        checked = [c for c in named if c.verdict not in (TOO_FEW, CANNOT_TELL)]
        untold = tuple(c for c in named if c.verdict == CANNOT_TELL)
        results.append(RuleResult(rule, [c for c in checked if rule.broken_by(c)], checked, bool(named), untold))
    if not comparison.comparable or any(not r.checked for r in results):
        return CANNOT, results
    if any(r.broken for r in results):
        return BROKEN, results            # broken where it could be told, whatever another step holds
    return (CANNOT if any(r.untold for r in results) else PASSED), results


def figure_names(comparison: Comparison) -> list[str]:
    return list(dict.fromkeys(c.figure for c in comparison.changes))
