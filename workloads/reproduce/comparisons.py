"""Findings between engines, for a card with no published figures (the tick pack).

Nothing published stands beside them, so a finding is the measured ratio alone: the baseline's
median time over the database's for the same question at one user, with its 95 % interval
(``workloads.reproduce.confidence``, as the reports' findings), and a verdict only the whole
interval ACROSS RUNS gives (one run's interval widened by the band a repeat may land within,
``confidence.across_runs``, as every finding is judged): which is faster, "no difference" (the
interval within ``NO_EFFECT``), or "inconclusive" with the operations, the interval and what would
settle it.
"""
from __future__ import annotations

from dataclasses import dataclass

from workloads.reproduce.catalog import BASELINE, TICK_PACK
from workloads.reproduce.confidence import CROSS_RUN_BAND, across_runs
from workloads.reproduce.findings import INCONCLUSIVE, NOT_MEASURED, Finding, Runs, _Median, _quotient
from workloads.targets.engines import engine

NOT_PUBLISHED = "none (not from a report)"
NO_EFFECT = 1.1           # a ratio within 1/1.1 .. 1.1 is no difference worth a verdict
NO_DIFFERENCE = "no difference"


def faster(who: str) -> str:
    return f"{who} faster"


@dataclass(frozen=True)
class EngineRatio:
    """``top``'s median time over ``bottom``'s in one experiment, at ``users`` users."""

    experiment: str
    title: str
    top: str = "files"
    bottom: str = "db"
    users: int = 1

    def evaluate(self, report: str, runs: Runs, store) -> Finding:
        statement = f"{self.title}: Parquet files' time / the database's, {self.users} user" + \
            ("s" if self.users > 1 else "")
        measure = _quotient(_Median(0, self.users), _Median(1, self.users), (self.experiment, self.top),
                            (self.experiment, self.bottom), what="both times")
        value, run_ids, missing, spread = measure(runs, store)
        if value is None:
            return Finding(report, statement, NOT_PUBLISHED, "—", NOT_MEASURED, missing, run_ids)
        database = _database(runs.get((self.experiment, self.bottom)))
        measured = f"{_x(value)}"
        if spread is None:
            return Finding(report, statement, NOT_PUBLISHED, measured, INCONCLUSIVE,
                           "no operation times to give an interval", run_ids, None, value)
        measured += f" (95 % {_x(spread.low)}–{_x(spread.high)})"
        verdict, why = between_runs(spread.low, spread.high, database, spread.ops)
        return Finding(report, statement, NOT_PUBLISHED, measured, verdict, why, run_ids, None, value)


def between(low: float, high: float, database: str, ops: tuple[int, int]) -> tuple[str, str]:
    """The verdict of a Parquet-over-database ratio whose 95 % interval is ``low``..``high``."""
    counted = " and ".join(f"{n:,}" for n in ops) + " operations"
    if low > NO_EFFECT:
        return faster(database), counted
    if high < 1 / NO_EFFECT:
        return faster("Parquet with pandas"), counted
    if 1 / NO_EFFECT <= low and high <= NO_EFFECT:
        return NO_DIFFERENCE, f"within ±10 % ({counted})"
    return INCONCLUSIVE, f"noisy: {counted}; a larger size would settle it"


def between_runs(low: float, high: float, database: str, ops: tuple[int, int]) -> tuple[str, str]:
    """The verdict of one run's ratio across runs: its interval widened by the band a repeat of
    the run may land within, so a verdict never flips when the card is played again."""
    wide_low, wide_high = across_runs([(low, high)])
    verdict, why = between(wide_low, wide_high, database, ops)
    said = f"one run each, ±{CROSS_RUN_BAND:.0%} across runs: {_x(wide_low)}–{_x(wide_high)}".replace("%", " %")
    return verdict, f"{why}; {said}"


def _database(arm) -> str:
    kind = (arm.scenario.get("target") if arm is not None else "") or ""
    try:
        return engine(kind).label
    except (KeyError, ValueError):
        return kind or "the database"


def _x(value: float) -> str:
    return f"{value:.2f}×" if value < 10 else f"{value:.0f}×"


COMPARISONS = {TICK_PACK.report: tuple(EngineRatio(e.key, e.title) for e in TICK_PACK.experiments)}
assert all(arm.target == BASELINE for e in TICK_PACK.experiments for arm in e.arms if arm.key == "files")


def comparisons(report: str, runs: Runs, store) -> list[Finding]:
    """The card's findings between engines, from its runs at one size."""
    return [spec.evaluate(report, runs, store) for spec in COMPARISONS.get(report, ())]
