"""The reports' findings as ratios, published beside yours, with a one-line verdict.

Absolute times on other hardware mislead; ratios travel. Each finding names how its ratio is
measured from the gallery's stored runs (``workloads.reproduce.measured``), the published ratio,
and why it may not hold here. Verdicts: "holds more strongly", "holds", "holds, more weakly",
"does not hold on this machine, because ...", or "not measured: ..." with what is missing.

A verdict holds only when repetitions would agree. A timed ratio gets one only when its whole
interval across runs (``workloads.reproduce.confidence.across_runs``) gets the same one: with
``MIN_REPEATS`` or more runs of each arm on this host (repeats of one scenario), the union of each
repetition's 95 % interval; with fewer, that widened by ``CROSS_RUN_BAND`` (how far a repeat of a
whole run lands here). Otherwise "inconclusive" with the figures and what would settle it. A knee
is stated only when every sweep the same band allows (or the runs' own spread) gives the same one
(``workloads.results.run_summary.sweep_knees``). A cold/warm ratio whose interval lies under 1 (the
cold reads faster, which no cache explains) is inconclusive too. Byte counts are exact: no band.
"""
from __future__ import annotations

import dataclasses
import math
import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from workloads.reproduce.measured import (ArmRun, Runs, _Median, _Spread, _footprint_ratio, _quotient,  # noqa: F401
                                          _seconds, _string_share, _suite_speedup, _window_ratio)
from workloads.results.figures import larger_card_size
from workloads.reproduce.confidence import CROSS_RUN_BAND, MIN_REPEATS, across_runs
from workloads.results.run_summary import KNEE_BAND, Knee, knees_within, sweep_knees
from workloads.text import plural

HOLDS, STRONGER, WEAKER, NOT_HOLD, NOT_MEASURED, INCONCLUSIVE = (
    "holds", "holds more strongly", "holds, more weakly", "does not hold on this machine", "not measured",
    "inconclusive")
STRONGER_BY = 1.25        # 25 % beyond the published ratio
WEAKER_BELOW = 0.5        # under half of it (on a log scale from 1): still the same direction, weaker
NO_EFFECT_BELOW = 1.1     # a ratio under 1.1 is no effect at all


@dataclass(frozen=True)
class Finding:
    report: str
    statement: str                # "API time / server-side time"
    published: str                # "5.8×"
    measured: str                 # "4.1×" or "—"
    verdict: str                  # one of the verdicts above
    why: str                      # the plain one-line explanation
    run_ids: tuple[str, ...]      # the runs behind the measured number
    published_value: float | None = None
    measured_value: float | None = None

    @property
    def line(self) -> str:
        return f"{self.statement}: published {self.published}, yours {self.measured} — {self.verdict}" + \
            (f", {self.why}" if self.why else "")



@dataclass(frozen=True)
class _Ratio:
    """A finding whose figure is a ratio above 1 in the published direction."""

    statement: str
    low: float
    high: float | None            # a published range ("2-3×"), or None
    measure: Callable[[Runs, object], tuple[float | None, tuple[str, ...], str]]
    because: str                  # why it may not hold, in words: "this machine's disk is an SSD"
    unit: str = "×"
    cold_over_warm: bool = False  # a cold time over a warm one: under 1 no cache explains

    exact: bool = False           # byte counts: no spread, and a repeat gives the same
    # what in the runs stands for a published part they lack (an embedded engine's query for the
    # server's time), in words; said with the measured figure
    stands_in: Callable[[Runs], str] | None = None

    def evaluate(self, report: str, runs: Runs, store) -> Finding:
        found = self._evaluate(report, runs, store)
        note = self.stands_in(runs) if self.stands_in and found.measured_value is not None else ""
        if not note:
            return found
        return dataclasses.replace(found, why=f"{found.why}; {note}" if found.why else note)

    def _evaluate(self, report: str, runs: Runs, store) -> Finding:
        value, run_ids, missing, spread = self.measure(runs, store)
        published = _ratio_text(self.low, self.high, self.unit)
        if value is None:
            return Finding(report, self.statement, published, "—", NOT_MEASURED, missing, run_ids, self.low)
        if self.exact:
            verdict, why = ratio_verdict(value, self.low, self.high, self.because)
            return Finding(report, self.statement, published, _ratio_text(value, None, self.unit), verdict, why,
                           run_ids, self.low, value)
        reps = [(value, spread)]
        for k in range(1, 1 + max((len(a.repeats) for a in runs.values()), default=0)):
            again = self.measure({key: a.repetition(k) for key, a in runs.items() if a.repetition(k)}, store)
            if again[0] is not None:
                reps.append((again[0], again[3]))
                run_ids = run_ids + tuple(r for r in again[1] if r not in run_ids)
        if len(reps) > 1:
            value = float(np.median([v for v, _ in reps]))
        verdict, why = ratio_verdict(value, self.low, self.high, self.because)
        verdict, why = _across(verdict, why, reps, self, runs)
        busy = [arm.answer.busy for arm in runs.values() if arm.run_id in run_ids and arm.answer.busy]
        if verdict == INCONCLUSIVE and busy:
            why += f"; {busy[0][:1].lower()}{busy[0][1:]}"          # mid-sentence: "; the machine was busy..."
        measured = _ratio_text(value, None, self.unit) + (f" (median of {len(reps)} runs)" if len(reps) > 1 else "")
        return Finding(report, self.statement, published, measured, verdict, why, run_ids, self.low, value)


def _across(verdict: str, why: str, reps: list[tuple[float, _Spread | None]], ratio: _Ratio,
            runs: Runs) -> tuple[str, str]:
    """The verdict if the whole interval across the repetitions (``across_runs``) gives it, else
    "inconclusive" with the figures and what would settle it."""
    own = [(s.low, s.high) if s else (v, v) for v, s in reps]
    newest = reps[0][1]
    ops = " and ".join(f"{n:,}" for n in newest.ops) if newest else ""
    if ratio.cold_over_warm and max(high for _, high in own) < 1.0:
        interval = f"{_ratio_text(newest.low, newest.high, ratio.unit)} at 95 %, {ops} operations" if newest else \
            _ratio_text(reps[0][0], None, ratio.unit)
        return INCONCLUSIVE, (f"the cold operations were faster than the warm ones ({interval}), which no cache "
                              "explains: run both again")
    low, high = across_runs(own)
    ends = [ratio_verdict(v, ratio.low, ratio.high)[0] for v in (low, high)]
    if set(ends) == {verdict}:
        return verdict, why
    if len(reps) == 1 and newest and {ratio_verdict(v, ratio.low, ratio.high)[0] for v in own[0]} != {verdict}:
        return INCONCLUSIVE, (f"noisy: {ops} operations give {_ratio_text(newest.low, newest.high, ratio.unit)} "
                              f"at 95 %; {_settle(runs, len(reps))}")
    interval = _ratio_text(low, high, ratio.unit)
    could = f"it could be “{ends[0]}” or “{ends[1]}”"
    if len(reps) < MIN_REPEATS:
        each = "one run each" if len(reps) == 1 else f"{len(reps)} runs each"
        return INCONCLUSIVE, (f"{_ratio_text(reps[0][0], None, ratio.unit)} ± {CROSS_RUN_BAND * 100:.0f} % from "
                              f"{each} (a repeat of a whole run lands that far here): {interval}, {could}; "
                              f"{_settle(runs, len(reps))}")
    return INCONCLUSIVE, f"its {len(reps)} runs each give {interval} together: {could}; {_settle(runs, len(reps))}"


def _settle(runs: Runs, repetitions: int) -> str:
    """What would settle an inconclusive finding: more runs of it here, or the next size."""
    larger = next((c for a in runs.values() if (c := larger_card_size(str(a.scenario.get("experiment", ""))))), None)
    size = f" or at the {larger[2]} size" if larger else ""
    if repetitions >= MIN_REPEATS:
        return f"the {larger[2]} size would settle it" if larger else "a larger size would settle it"
    more = MIN_REPEATS - repetitions
    return f"run it {plural(more, 'more time') if repetitions > 1 else f'{MIN_REPEATS} times'} here{size} to settle it"


def ratio_verdict(measured: float, low: float, high: float | None = None, because: str = "") -> tuple[str, str]:
    """Compare a measured ratio with a published one (or range) that says "more than 1"."""
    high = high or low
    if measured < NO_EFFECT_BELOW:
        return NOT_HOLD, f"because {because}" if because else ""
    if measured > high * STRONGER_BY:
        return STRONGER, ""
    if math.log(measured) >= WEAKER_BELOW * math.log(low):
        return HOLDS, ""
    return WEAKER, ""


def knee_verdict(knee: int | None, users: list[int] | int, low: int, high: int, threads: int | None,
                 published_threads: int | None = None, whose: str = "this machine's", shown: str = ""
                 ) -> tuple[str, str]:
    """Where a sweep's throughput stopped growing against a published knee of ``low``..``high``
    users, compared per hardware thread of the machine that served the load (``threads`` here,
    ``published_threads`` there): the published knee scaled to this machine. A sweep must reach one
    doubling past the scaled knee to show it; one that ends sooner is "not measurable at this size".
    The sweep's steps double, so a knee at a step stands for anywhere between its neighbours.
    ``shown``: what the sweep showed, where the knee is one of several it allows."""
    steps = sorted(set(users)) if isinstance(users, (list, tuple)) else [1, int(users)]
    top = steps[-1]
    if published_threads and not threads:
        return NOT_MEASURED, (f"not measurable here: {whose} hardware threads are not recorded, so the "
                              f"published knee ({_users_range(low, high)} on {published_threads} threads) cannot "
                              "be scaled to it (run `tickbench agent` on the server and name it in the profile "
                              "with `tickbench targets agents`: it reports them)")
    scale = threads / published_threads if threads and published_threads else 1.0
    lo, hi = low * scale, high * scale
    per = (f" ({_users_range(lo, hi)} on {whose} {plural(threads, 'hardware thread')}, "
           f"as {_users_range(low, high)} on the report's {published_threads})") if published_threads else ""
    machine = f" on {plural(threads, 'core')}" if threads and not published_threads else ""
    if published_threads and top < 2 * hi:
        shown = shown or (f"throughput stops growing at {plural(knee, 'user')}" if knee else
                          f"throughput still grows at {plural(top, 'user')}")
        needed = 2 ** math.ceil(math.log2(2 * hi))       # the sweep's doubling steps: the first one past it
        return NOT_MEASURED, (f"not measurable at this size: the published knee, {_users_range(low, high)} on the "
                              f"report's {published_threads} hardware threads, is {_users_range(lo, hi)} on {whose} "
                              f"{plural(threads, 'hardware thread')}, and a knee shows only in a sweep that goes a "
                              f"doubling past it; this one ends at {plural(top, 'user')} ({shown}): a sweep to "
                              f"{plural(needed, 'user')} (a larger size) would show it")
    if knee is None:
        if top < low * scale:
            return NOT_MEASURED, f"the sweep stops at {plural(top, 'user')}, before the published knee"
        return STRONGER, f"throughput still grows at {plural(top, 'user')}"
    below = max([u for u in steps if u < knee], default=0)
    above = min([u for u in steps if u > knee], default=knee)
    if not published_threads:
        below = above = knee
    if below <= hi and above >= lo:        # said per thread, or "64 users, here 2" reads as a contradiction
        return HOLDS, f"the published knee is {per.strip(' ()')}" if per else ""
    if above < lo:
        return NOT_HOLD, f"because throughput stops growing at {plural(knee, 'user')} here{machine}{per}"
    return STRONGER, f"throughput grows up to {plural(knee, 'user')}{per}"


def _server_stand_in(runs: Runs, key: tuple[str, str]) -> str:
    """Where the database ran in this process (an embedded engine has no server), what stood for the
    server-side time; "" on a server."""
    from workloads.targets.engines import engine
    arm = runs.get(key)
    kind = str((arm.scenario if arm else {}).get("target") or "")
    try:
        found = engine(kind)
    except (KeyError, ValueError):
        return ""
    if not found.local:
        return ""
    return (f"{found.label} has no server: its query phase, in the reading process, stands for the "
            f"server-side time")


def _users_range(low: float, high: float) -> str:
    fmt = (lambda v: f"{v:.0f}" if v >= 10 or float(v).is_integer() else f"{v:.2g}")
    return f"{fmt(low)} users" if abs(high - low) < 1e-9 else f"{fmt(low)}–{fmt(high)} users"


def _ratio_text(low: float, high: float | None, unit: str) -> str:
    def fmt(v: float) -> str:
        return f"{v:.0f}" if v >= 10 else f"{v:.2g}" if v < 1 else f"{v:.1f}"
    return f"{fmt(low)}–{fmt(high)}{unit}" if high else f"{fmt(low)}{unit}"


LOCAL_HOSTS = ("", "localhost", "127.0.0.1", "::1")


def serving_threads(arm: ArmRun) -> tuple[int | None, str]:
    """The hardware threads of the machine that served the arm's load, and whose they are: a
    server's where its target recorded them, None for a server elsewhere that did not, else this
    machine's (an embedded engine, a local server) from the run's environment."""
    target = (arm.environment or {}).get("target") or {}
    for key in ("server_threads", "server_cores_logical"):
        if target.get(key):
            return int(target[key]), "the server's"
    config = arm.scenario.get("target_config") or {}
    hosts = [str(config.get("host") or "")] + [str(n.get("host") or "") for n in
                                               ((config.get("profile") or {}).get("nodes") or []) if isinstance(n, dict)]
    if any(h.strip().lower() not in LOCAL_HOSTS for h in hosts):
        return None, "the server's"
    cores = (arm.environment or {}).get("cores_logical")
    return (int(cores) if cores else None), "this machine's"


@lru_cache(maxsize=8)
def published_threads(report: str) -> int | None:
    """The hardware threads of the report's database server, from its environment ("24 cores/48 threads")."""
    from workloads.results.references import load_references
    for ref in load_references():
        if ref.report == report:
            found = re.search(r"(\d+)\s*threads", ref.environment)
            return int(found.group(1)) if found else None
    return None


@dataclass(frozen=True)
class _Knee:
    statement: str
    experiment: str
    low: int
    high: int
    metric: str = "rows_per_s"

    def evaluate(self, report: str, runs: Runs, _store) -> Finding:
        published = f"{self.low}–{self.high} users" if self.high != self.low else f"{self.low} users"
        arm = runs.get((self.experiment, "subject"))
        if arm is None:
            return Finding(report, self.statement, published, "—", NOT_MEASURED,
                           f"no completed run of {self.experiment} at this size yet", ())
        points = arm.sweep(self.metric) or arm.sweep("ops_per_s")
        if len({u for u, _ in points}) < 3:
            short = sum(1 for s in arm.answer.steps if s.short)
            card = larger_card_size(arm.scenario.get("experiment", ""))
            advice = (f"run the card at {card[2]} size" if card else "give the run more rows or time")
            why = (f"{plural(short, 'step')} too short to measure: {advice}" if short
                   else "the sweep needs at least three user counts")
            return Finding(report, self.statement, published, "—", NOT_MEASURED, why, (arm.run_id,))
        knee, run_ids = self._knees(arm, points)
        top = knee.users[-1]
        threads, whose = serving_threads(arm)
        shown = "" if knee.settled else knee.note()
        each = [knee_verdict(k, list(knee.users), self.low, self.high, threads, published_threads(report), whose,
                             shown) for k in knee.could_be]
        verdict, why = each[0]
        if len({v for v, _ in each}) > 1:
            ends = [v for v, _ in (each[0], each[-1])]
            verdict, why = INCONCLUSIVE, (f"{shown}, so the verdict could be “{ends[0]}” or “{ends[1]}”; "
                                          f"{_settle(runs, len(run_ids))}")
        elif not knee.settled and verdict != NOT_MEASURED:
            why = f"{why}; {shown}" if why else shown
        stops = [u for u in knee.could_be if u is not None]
        measured = (plural(knee.at, "user") if knee.at else f"still growing at {plural(top, 'user')}") \
            if knee.settled else f"{plural(stops[0], 'user')} or more" if None in knee.could_be else \
            f"{stops[0]}–{plural(stops[-1], 'user')}"
        return Finding(report, self.statement, published, measured, verdict, why, run_ids,
                       float(self.low), float(knee.at) if knee.at else None)

    def _knees(self, arm: ArmRun, points: list[tuple[int, float]]) -> tuple[Knee, tuple[str, ...]]:
        """The knees the sweep allows: one run's figures +- the band (``sweep_knees``); with repeats
        of it here, what they measured at each step (widened by the band while under MIN_REPEATS)."""
        runs = [(arm.run_id, dict(points))]
        for repeat in arm.repeats:
            again = repeat.sweep(self.metric) or repeat.sweep("ops_per_s")
            if len({u for u, _ in again}) >= 3:
                runs.append((repeat.run_id, dict(again)))
        if len(runs) == 1:
            return sweep_knees([u for u, _ in points], [v for _, v in points]), (arm.run_id,)
        users = sorted(set.intersection(*(set(sweep) for _, sweep in runs)))
        low = [min(sweep[u] for _, sweep in runs) for u in users]
        high = [max(sweep[u] for _, sweep in runs) for u in users]
        basis = f"what its {len(runs)} runs measured"
        if len(runs) < MIN_REPEATS:
            each = math.sqrt(1 + KNEE_BAND)
            low, high = [v / each for v in low], [v * each for v in high]
            basis += f" ± {KNEE_BAND * 100:.0f} %"
        return knees_within(users, low, high, basis=basis), tuple(r for r, _ in runs)


@dataclass(frozen=True)
class _NodeScaling:
    """Report 003: throughput on the largest cluster over the smallest, per added node (1.0 = linear)."""

    statement: str
    experiment: str
    published: float
    users: int | None = None

    def evaluate(self, report: str, runs_by_nodes: dict[int, ArmRun], _store) -> Finding:
        if len(runs_by_nodes) < 2:
            seen = ", ".join(plural(n, "node") for n in sorted(runs_by_nodes)) or "none"
            return Finding(report, self.statement, f"{self.published:.2f}", "—", NOT_MEASURED,
                           f"needs {self.experiment} runs on DolphinDB clusters of two or more sizes "
                           f"(runs so far: {seen})", tuple(r.run_id for r in runs_by_nodes.values()))
        small, large = min(runs_by_nodes), max(runs_by_nodes)
        a, b = runs_by_nodes[small], runs_by_nodes[large]
        top = max(u for u, _ in a.sweep())
        users = self.users if self.users in dict(a.sweep()) else top
        va, vb = dict(a.sweep()).get(users), dict(b.sweep()).get(users)
        if not va or not vb:
            return Finding(report, self.statement, f"{self.published:.2f}", "—", NOT_MEASURED,
                           f"both clusters need a step at {plural(users, 'user')}", (a.run_id, b.run_id))
        efficiency = (vb / va) / (large / small)
        verdict = STRONGER if efficiency > self.published * STRONGER_BY else \
            HOLDS if efficiency >= self.published * 0.75 else NOT_HOLD
        why = "" if verdict != NOT_HOLD else "because adding nodes adds less throughput here than there"
        return Finding(report, self.statement, f"{self.published:.2f}", f"{efficiency:.2f}", verdict, why,
                       (a.run_id, b.run_id), self.published, efficiency)


FINDINGS = {
    "000": (
        _Ratio("API time / server-side time (L1, warm)", 35 / 6, None,
               _quotient(_seconds(0), lambda a: a[0].server_seconds(), ("day-l1", "db-warm"),
                         what="a server-side part (the target does not split it)"),
               "the client decodes as fast as the server answers here",
               stands_in=lambda runs: _server_stand_in(runs, ("day-l1", "db-warm"))),
        _Ratio("pickle cold / warm (L1)", 72 / 34, None,
               _quotient(_seconds(0), _seconds(1), ("day-l1", "pickle-cold"), ("day-l1", "pickle-warm")),
               "reading the file from this disk costs little beside decoding it (an SSD, or a cache "
               "that could not be dropped)", cold_over_warm=True),
        _Ratio("the string columns' share of time / their share of bytes", 0.50 / 0.20, None, _string_share,
               "strings decode about as fast as numbers here"),
        _Ratio("three pickle readers on one disk / one reader (per reader)", 220.3 / 70, None,
               _quotient(_seconds(0, 3), _seconds(0, 1), ("readers", "pickle-3")),
               "the three files are read from a disk that does not slow down with three readers"),
    ),
    "001": (
        _Ratio("import: Druid's time / the database's", 30, None, _window_ratio("import", "import"),
               "the comparator imports this little data about as fast"),
        _Ratio("queries: Druid's time / the database's (geometric mean)", 3, 30, _suite_speedup("queries"),
               "the comparator answers these queries as fast on this data"),
        _Ratio("disk: the database's size / Druid's", 1.8, None, _footprint_ratio("queries", "subject", "comparator"),
               "the database compresses this data as well as Druid", exact=True),
    ),
    "002": (
        _Knee("concurrent appends: users where throughput stops growing", "append", 16, 32, "mb_per_s"),
        _Knee("slice downloads: users where throughput stops growing", "download", 64, 64),
        _Knee("minute bars: users where throughput stops growing", "bars", 64, 64, "ops_per_s"),
    ),
    "003": (
        _Ratio("spread by minute: cold / warm", 17_647 / 12_056, None,
               _quotient(_seconds(0), _seconds(1), ("compute", "spread-by-minute-cold"),
                         ("compute", "spread-by-minute-warm")),
               "the data is read from memory either way (the cold cache could not be dropped, or is small)",
               cold_over_warm=True),
        _Ratio("map-reduce minute bars: cold / warm", 181_508 / 33_808, None,
               _quotient(_seconds(0), _seconds(1), ("compute", "mapreduce-minute-bars-cold"),
                         ("compute", "mapreduce-minute-bars-warm")),
               "the data is read from memory either way", cold_over_warm=True),
        _Ratio("OLS: cold / warm", 21_482 / 10_834, None,
               _quotient(_seconds(0), _seconds(1), ("compute", "ols-spread-cold"), ("compute", "ols-spread-warm")),
               "the data is read from memory either way", cold_over_warm=True),
    ),
    "004": (
        _Ratio("import, devices: MongoDB's time / the database's", 3600 / 63, None,
               _window_ratio("devices", "import"), "the comparator imports this little data about as fast"),
        _Ratio("export, devices: MongoDB's time / the database's", 50, None, _window_ratio("devices", "export"),
               "the comparator exports this little data about as fast"),
        _Ratio("disk, devices: MongoDB's size / the database's", 2, 3,
               _footprint_ratio("devices", "comparator", "subject"), "the two store this data as compactly",
               exact=True),
        _Ratio("queries, TAQ: MongoDB's time / the database's (geometric mean)", 5, 20, _suite_speedup("taq"),
               "the comparator answers these queries as fast on this data"),
    ),
}
NODE_SCALING = {
    "003": (_NodeScaling("reads at 128 users: speed-up per added node (1.0 = linear)", "read", (36.50 / 9.98) / 4, 128),
            _NodeScaling("writes: speed-up per added node (1.0 = linear)", "write", (14.58 / 4.69) / 4)),
}


def findings(report: str, runs: Runs, store, runs_by_nodes: dict[str, dict[int, ArmRun]] | None = None
             ) -> list[Finding]:
    """The report's findings, from the gallery's runs at one size."""
    out = [spec.evaluate(report, runs, store) for spec in FINDINGS.get(report, ())]
    for spec in NODE_SCALING.get(report, ()):
        out.append(spec.evaluate(report, (runs_by_nodes or {}).get(spec.experiment, {}), store))
    return out
