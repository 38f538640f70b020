"""A gate for CI: rules such as ``p99 > 1.10x`` or ``rows/s < 0.95x`` over a comparison.

A rule names a figure (as ``compare`` names them: rows/s, MB/s, ops/s, p50, p95, p99, first op,
phase decode, query t01, suite geometric mean, footprint), a direction and a ratio new / base. It
is broken only when the whole 95 % interval of that figure's ratio is past the threshold, in some
step the runs share (a figure of one value per run: that value), so noise alone never fails a
build. A rule naming a figure neither run measured cannot be checked: the gate says so rather than
pass it.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from workloads.results.compare import TOO_FEW, Comparison, FigureChange

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
        if threshold <= 0:
            raise ValueError(f"--fail-if {text!r}: the ratio must be above 0")
        return cls(match["figure"].strip(), match["op"] == ">", threshold, text.strip())

    def broken_by(self, change: FigureChange) -> bool:
        """The whole interval (or the one value) past the threshold."""
        if self.above:
            return (change.low if change.low is not None else change.ratio) > self.threshold
        return (change.high if change.high is not None else change.ratio) < self.threshold


@dataclass(frozen=True)
class RuleResult:
    rule: Rule
    broken: list[FigureChange]      # the steps where it is broken
    checked: list[FigureChange]     # every step where its figure was measured enough to judge
    named: bool = True              # the runs have the figure (perhaps too few values to judge)

    @property
    def holds(self) -> bool:
        return bool(self.checked) and not self.broken

    def line(self) -> str:
        if not self.checked and self.named:
            return f"cannot check {self.rule.text!r}: {self.rule.figure} has one value per run, too few to tell"
        if not self.checked:
            return f"cannot check {self.rule.text!r}: neither run has the figure {self.rule.figure!r}"
        shown = self.broken or self.checked
        worst = max(shown, key=lambda c: c.ratio if self.rule.above else -c.ratio)
        state = "broken" if self.broken else "holds"
        return (f"{state}: {self.rule.text} — {worst.figure} at {worst.step}: {worst.ratio:.3f}x "
                f"(95 % {worst.interval}), {worst.base:.6g} -> {worst.new:.6g}")


def check(comparison: Comparison, rules: list[Rule]) -> tuple[int, list[RuleResult]]:
    """(exit code, each rule's result): 2 when the runs cannot be compared or a rule cannot be
    checked, else 1 when a rule is broken, else 0."""
    results = []
    for rule in rules:
        named = [c for c in comparison.changes if c.figure.lower() == rule.figure.lower()]
        checked = [c for c in named if c.verdict != TOO_FEW]
        results.append(RuleResult(rule, [c for c in checked if rule.broken_by(c)], checked, bool(named)))
    if not comparison.comparable or any(not r.checked for r in results):
        return CANNOT, results
    return (BROKEN if any(r.broken for r in results) else PASSED), results


def figure_names(comparison: Comparison) -> list[str]:
    return list(dict.fromkeys(c.figure for c in comparison.changes))
