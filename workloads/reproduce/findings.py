"""The reports' findings as ratios, published beside yours, with a one-line verdict.

Absolute times on other hardware mislead; ratios travel. Each finding names how its ratio is
measured from the gallery's stored runs (``workloads.reproduce.measured``), the published ratio,
and why it may not hold here. Verdicts: "holds more strongly", "holds", "holds, more weakly",
"does not hold on this machine, because ...", or "not measured: ..." with what is missing. A
ratio of median times gets a verdict only when its whole 95 % interval (``workloads.reproduce
.confidence``) gets the same one; otherwise "inconclusive: noisy" with the operations and the
interval. A cold/warm ratio whose interval lies under 1 (the cold reads faster, which no cache
explains) is inconclusive too.
"""
from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from workloads.reproduce.measured import ArmRun
from workloads.results.figures import larger_card_size
from workloads.reproduce.confidence import median_ratio_interval
from workloads.results.run_summary import sweep_knee
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


Runs = dict[tuple[str, str], ArmRun]


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

    def evaluate(self, report: str, runs: Runs, store) -> Finding:
        value, run_ids, missing, spread = self.measure(runs, store)
        published = _ratio_text(self.low, self.high, self.unit)
        if value is None:
            return Finding(report, self.statement, published, "—", NOT_MEASURED, missing, run_ids, self.low)
        verdict, why = ratio_verdict(value, self.low, self.high, self.because)
        if spread is not None:
            verdict, why = _with_confidence(verdict, why, spread, self)
            busy = [arm.answer.busy for arm in runs.values() if arm.run_id in run_ids and arm.answer.busy]
            if verdict == INCONCLUSIVE and busy:
                why += f"; {busy[0]}"
        return Finding(report, self.statement, published, _ratio_text(value, None, self.unit), verdict, why,
                       run_ids, self.low, value)


@dataclass(frozen=True)
class _Spread:
    """A measured ratio's 95 % interval and the operations on each side behind it."""

    low: float
    high: float
    ops: tuple[int, int]


def _with_confidence(verdict: str, why: str, spread: _Spread, ratio: _Ratio) -> tuple[str, str]:
    """The verdict if the whole interval gives it, else "inconclusive" with the figures."""
    interval = f"{_ratio_text(spread.low, spread.high, ratio.unit)} at 95 %"
    ops = " and ".join(f"{n:,}" for n in spread.ops)
    if ratio.cold_over_warm and spread.high < 1.0:
        return INCONCLUSIVE, (f"the cold operations were faster than the warm ones ({interval}, {ops} "
                              "operations), which no cache explains: run both again")
    ends = {ratio_verdict(v, ratio.low, ratio.high)[0] for v in (spread.low, spread.high)}
    if ends != {verdict}:
        return INCONCLUSIVE, f"noisy: {ops} operations give {interval}; a larger size would settle it"
    return verdict, why


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
                 published_threads: int | None = None, whose: str = "this machine's") -> tuple[str, str]:
    """Where a sweep's throughput stopped growing against a published knee of ``low``..``high``
    users, compared per hardware thread of the machine that served the load (``threads`` here,
    ``published_threads`` there): the published knee scaled to this machine. A sweep must reach one
    doubling past the scaled knee to show it; one that ends sooner is "not measurable at this size".
    The sweep's steps double, so a knee at a step stands for anywhere between its neighbours."""
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
        shown = f"throughput stops growing at {plural(knee, 'user')}" if knee else \
            f"throughput still grows at {plural(top, 'user')}"
        return NOT_MEASURED, (f"not measurable at this size: the published knee is {_users_range(lo, hi)} here"
                              f"{per}; a sweep to {plural(top, 'user')} cannot show it ({shown})")
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


def _users_range(low: float, high: float) -> str:
    fmt = (lambda v: f"{v:.0f}" if v >= 10 or float(v).is_integer() else f"{v:.2g}")
    return f"{fmt(low)} users" if abs(high - low) < 1e-9 else f"{fmt(low)}–{fmt(high)} users"


def _ratio_text(low: float, high: float | None, unit: str) -> str:
    def fmt(v: float) -> str:
        return f"{v:.0f}" if v >= 10 else f"{v:.2g}" if v < 1 else f"{v:.1f}"
    return f"{fmt(low)}–{fmt(high)}{unit}" if high else f"{fmt(low)}{unit}"


# ---- measures ------------------------------------------------------------------------------------
def _need(runs: Runs, *slots: tuple[str, str]) -> tuple[list[ArmRun] | None, str]:
    missing = [f"{e}/{a}" for e, a in slots if (e, a) not in runs]
    if missing:
        return None, f"no completed run of {', '.join(missing)} at this size yet"
    return [runs[s] for s in slots], ""


def _quotient(top: Callable[[list[ArmRun]], float | None], bottom: Callable[[list[ArmRun]], float | None],
              *slots: tuple[str, str], what: str = "a figure"):
    """top / bottom; where both are medians of operation times (``_Median``), with its spread."""
    def measure(runs: Runs, store):
        arms, missing = _need(runs, *slots)
        if arms is None:
            return None, (), missing, None
        ids = tuple(a.run_id for a in arms)
        t, b = top(arms), bottom(arms)
        if t is None or b is None or b <= 0:
            never_cold = [a.run_id for a in arms if a.answer.cache == "cold"
                          and not any(step.cold_ops for step in a.answer.steps)]
            if never_cold:
                return None, ids, f"no operation of the cold run {never_cold[0]} held cold", None
            engine_only = [a.run_id for a in arms if a.answer.cache == "cold"
                           and not any(step.host_cold_ops for step in a.answer.steps)]
            if engine_only:
                return None, ids, (f"the cold run {engine_only[0]} cleared the engine's caches only: the reports' "
                                   "cold runs dropped the servers' page caches too (run `tickbench agent` on "
                                   "each database host and name it in the profile)"), None
            return None, ids, f"the runs do not give {what}", None
        spread = None
        if isinstance(top, _Median) and isinstance(bottom, _Median):
            spread = _spread(top.samples(arms, store), bottom.samples(arms, store))
        return t / b, ids, "", spread
    return measure


def _spread(top, bottom, combine=None) -> _Spread | None:
    if len(top) == 0 or len(bottom) == 0:
        return None
    low, high = median_ratio_interval(top, bottom, **({"combine": combine} if combine else {}))
    return _Spread(low, high, (len(top), len(bottom)))


def _string_share(runs: Runs, store):
    arms, missing = _need(runs, ("day-l1", "db-warm"), ("strings", "db-warm"))
    if arms is None:
        return None, (), missing, None
    full, lean = arms
    ids = (full.run_id, lean.run_id)
    t_full, t_lean, b_full, b_lean = full.seconds(), lean.seconds(), full.bytes_per_op(), lean.bytes_per_op()
    if None in (t_full, t_lean, b_full, b_lean) or b_full <= b_lean or t_full <= 0:
        return None, ids, "the runs do not give both times and byte counts", None
    byte_share = (b_full - b_lean) / b_full

    def share(t_all, t_without):
        return np.maximum(t_all - t_without, 0.0) / t_all / byte_share
    spread = _spread(full.op_seconds(store), lean.op_seconds(store), share)
    return float(share(t_full, t_lean)), ids, "", spread


def _suite_speedup(experiment: str):
    def measure(runs: Runs, store):
        arms, missing = _need(runs, (experiment, _arm(experiment, "subject", "query-suite")),
                              (experiment, _arm(experiment, "comparator", "query-suite")))
        if arms is None:
            return None, (), missing, None
        subject, comparator = (a.query_seconds(store) for a in arms)
        common = [q for q in subject if q in comparator]
        ids = tuple(a.run_id for a in arms)
        if not common:
            return None, ids, "no query was answered by both", None
        return math.exp(sum(math.log(comparator[q] / subject[q]) for q in common) / len(common)), ids, "", None
    return measure


def _footprint_ratio(experiment: str, bigger: str, smaller: str, workload: str = "query-suite"):
    def measure(runs: Runs, store):
        arms, missing = _need(runs, (experiment, _arm(experiment, bigger, workload)),
                              (experiment, _arm(experiment, smaller, workload)))
        if arms is None:
            return None, (), missing, None
        top, bottom = (a.footprint_bytes(store) for a in arms)       # exact byte counts: no spread
        ids = tuple(a.run_id for a in arms)
        if not top or not bottom:
            return None, ids, "a target did not report its size on disk", None
        return top / bottom, ids, "", None
    return measure


def _arm(experiment: str, side: str, workload: str) -> str:
    """Arm keys: report 001's experiments have one arm per side; report 004's one per side and workload."""
    return side if experiment in ("import", "queries") else f"{side}-{workload}"


def _window_ratio(experiment: str, workload: str):
    return _quotient(lambda a: a[1].window_seconds(), lambda a: a[0].window_seconds(),
                     (experiment, _arm(experiment, "subject", workload)),
                     (experiment, _arm(experiment, "comparator", workload)), what="both times")


@dataclass(frozen=True)
class _Median:
    """An arm's median operation time (``ArmRun.seconds``), and the operations it is the median of."""

    arm: int = 0
    users: int | None = None

    def __call__(self, arms: list[ArmRun]) -> float | None:
        return arms[self.arm].seconds(self.users)

    def samples(self, arms: list[ArmRun], store):
        return arms[self.arm].op_seconds(store, self.users)


_seconds = _Median


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
        knee = sweep_knee([u for u, _ in points], [v for _, v in points])
        top = max(u for u, _ in points)
        threads, whose = serving_threads(arm)
        verdict, why = knee_verdict(knee, [u for u, _ in points], self.low, self.high, threads,
                                    published_threads(report), whose)
        measured = plural(knee, "user") if knee else f"still growing at {plural(top, 'user')}"
        return Finding(report, self.statement, published, measured, verdict, why, (arm.run_id,),
                       float(self.low), float(knee) if knee else None)


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
               "the client decodes as fast as the server answers here"),
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
               "the database compresses this data as well as Druid"),
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
               _footprint_ratio("devices", "comparator", "subject"), "the two store this data as compactly"),
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
