"""The stored runs behind a report's reproduction, and the measured figures its findings need.

A gallery run is found by its slot (``Scenario.experiment``: report/experiment/arm/size); for each
slot the newest completed run counts, and the earlier runs of the same scenario on the same host
ride along as its repeats (a finding's verdict needs them to agree: ``workloads.reproduce.findings``).
Figures are read through ``run_answer`` (the same step figures every other view shows), so a number
here is the number the run's own view shows.
"""
from __future__ import annotations

import json
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from workloads.reproduce.confidence import median_ratio_interval

from workloads.scenario import SIZES, parse_slot
from workloads.results.figures import op_times
from workloads.results.repeat_noise import MAX_REPEATS, scenario_key
from workloads.results.run_summary import RunAnswer, StepAnswer, run_answer
from workloads.run.records import OK
from workloads.results.suite_figures import query_figures, run_footprints

SERVER_PHASES = ("server", "query")     # the part of a read the database does before sending


@dataclass
class ArmRun:
    """The newest completed run of one arm, with what the findings read from it."""

    run_id: str
    created_at: pd.Timestamp
    answer: RunAnswer
    environment: dict[str, Any]
    scenario: dict[str, Any]
    _cache: dict[str, Any] = field(default_factory=dict)
    repeats: tuple["ArmRun", ...] = ()      # earlier runs of the same scenario on the same host, newest first

    def repetition(self, k: int) -> "ArmRun | None":
        """This run (0) or its k-th earlier repeat, if there is one."""
        return self if k == 0 else self.repeats[k - 1] if k <= len(self.repeats) else None

    def step(self, users: int | None = None) -> StepAnswer | None:
        """The step with ``users`` users (default: the first), if it measured anything."""
        steps = [s for s in self.answer.steps if (users is None or s.users == users) and s.ops > 0]
        return steps[0] if steps else None

    def seconds(self, users: int | None = None) -> float | None:
        """The median time of one operation (a day's load, a computation); of a cold run, over the
        operations cold in the reports' sense only: held cold with the host page cache holding their
        data dropped too (``workloads.targets.common.cleared``; None when none was)."""
        step = self.step(users)
        if step is None:
            return None
        return step.host_cold_p50_s if self.answer.cache == "cold" else step.p50_s

    def op_seconds(self, store, users: int | None = None):
        """The operation times whose median ``seconds(users)`` is (a cold run's: those cold in the
        reports' sense), for a finding's confidence interval."""
        step = self.step(users)
        if step is None:
            return op_times(store, self.run_id, -1)
        return op_times(store, self.run_id, step.index, host_cold=self.answer.cache == "cold")

    def server_seconds(self, users: int | None = None) -> float | None:
        """The mean server-side part of one operation, where the target splits it out."""
        step = self.step(users)
        if step is None:
            return None
        parts = [step.phases[p] for p in SERVER_PHASES if p in step.phases]
        return sum(parts) if parts else None

    def bytes_per_op(self, users: int | None = None) -> float | None:
        step = self.step(users)
        if not step or not step.mb_per_s or not step.ops_per_s:
            return None
        return step.mb_per_s * 1e6 / step.ops_per_s

    def window_seconds(self) -> float | None:
        """The whole measured step of a workload that ends on its own (every file imported once):
        its operations over its operation rate, summed over steps."""
        total = [s.ops / s.ops_per_s for s in self.answer.steps if s.ops and s.ops_per_s]
        return sum(total) if total else None

    def sweep(self, metric: str = "rows_per_s") -> list[tuple[int, float]]:
        return [(s.users, getattr(s, metric)) for s in self.answer.steps
                if getattr(s, metric) is not None and not s.short]

    def peak(self, metric: str = "mb_per_s", measured_only: bool = False) -> float | None:
        """The highest step's figure; ``measured_only``: of the steps long enough to measure."""
        values = [getattr(s, metric) for s in self.answer.steps
                  if getattr(s, metric) and not (measured_only and s.short)]
        return max(values) if values else None

    def data_nodes(self) -> int | None:
        nodes = ((self.environment or {}).get("target") or {}).get("nodes")
        if not nodes:
            return None
        data = [n for n in nodes if "data" in str(n.get("mode", n.get("role", "data"))).lower()]
        return len(data) or len(nodes)

    def query_seconds(self, store) -> dict[str, float]:
        """Per answered query of a suite run, its median seconds (the last step)."""
        if "queries" not in self._cache:
            frame = query_figures(store, self.run_id)
            if not frame.empty:
                frame = frame[(frame["step"] == frame["step"].max()) & (frame["status"] == OK)]
            self._cache["queries"] = {str(q): float(s) for q, s in zip(frame.get("query", []), frame.get("p50_s", []))
                                      if s == s and s > 0}
        return self._cache["queries"]

    def footprint_bytes(self, store) -> float | None:
        if "footprint" not in self._cache:
            layout = run_footprints(store, self.run_id)["layout"] or {}
            self._cache["footprint"] = float(layout["bytes"]) if layout.get("bytes") else None
        return self._cache["footprint"]


@dataclass
class GalleryRuns:
    """Per size, per (experiment, arm), the newest completed run; and per cluster size (data
    nodes, for report 003's scaling), the newest run of each arm on each."""

    by_size: dict[str, dict[tuple[str, str], ArmRun]]
    by_nodes: dict[str, dict[tuple[str, str], dict[int, ArmRun]]] = field(default_factory=dict)

    def newest_size(self) -> str | None:
        newest = {size: max(r.created_at for r in runs.values()) for size, runs in self.by_size.items() if runs}
        return max(newest, key=newest.get) if newest else None

    def at(self, size: str) -> dict[tuple[str, str], ArmRun]:
        return self.by_size.get(size, {})

    def nodes_at(self, size: str) -> dict[tuple[str, str], dict[int, ArmRun]]:
        return self.by_nodes.get(size, {})


def gallery_runs(store, report: str) -> GalleryRuns:
    """Every completed gallery run of ``report`` in the store, newest per slot (and per slot and
    cluster size)."""
    frame = store.frame("SELECT run_id, created_at, scenario, environment FROM runs WHERE status = 'completed' "
                        "ORDER BY created_at")
    slots: dict[str, dict[tuple[str, str], list[tuple[str, Any, dict]]]] = {size: {} for size in SIZES}
    hosts: dict[str, str | None] = {}
    for run_id, created_at, scenario, environment in frame.itertuples(index=False):
        data = json.loads(scenario) if isinstance(scenario, str) and scenario else (scenario or {})
        slot = parse_slot(data.get("experiment", ""))
        if slot is None or slot[0] != report or slot[3] not in slots:
            continue
        environment = json.loads(environment) if isinstance(environment, str) and environment else (environment or {})
        hosts[run_id] = environment.get("host")
        slots[slot[3]].setdefault((slot[1], slot[2]), []).append((run_id, created_at, data))

    def arm_run(run_id: str, created_at, data: dict) -> ArmRun:
        run = store.run(run_id)
        return ArmRun(run_id, pd.Timestamp(created_at), run_answer(store, run_id), run.get("environment") or {}, data)

    by_size: dict[str, dict[tuple[str, str], ArmRun]] = {}
    by_nodes: dict[str, dict[tuple[str, str], dict[int, ArmRun]]] = {}
    for size, arms in slots.items():
        by_size[size], by_nodes[size] = {}, {}
        for key, candidates in arms.items():
            newest = by_size[size][key] = arm_run(*candidates[-1])      # ordered by time: the last is the newest
            same = scenario_key(candidates[-1][2])
            repeats = [c for c in reversed(candidates[:-1]) if hosts.get(c[0]) == hosts.get(newest.run_id)
                       and scenario_key(c[2]) == same][:MAX_REPEATS - 1]
            newest.repeats = tuple(arm_run(*c) for c in repeats)
            if report != "003":
                continue
            for candidate in candidates:                         # newest per cluster size wins
                arm = candidate is candidates[-1] and by_size[size][key] or arm_run(*candidate)
                nodes = arm.data_nodes()
                if nodes:
                    by_nodes[size].setdefault(key, {})[nodes] = arm
    return GalleryRuns(by_size, by_nodes)


Runs = dict[tuple[str, str], ArmRun]


# ---- the findings' measures ------------------------------------------------------------------------------------
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


@dataclass(frozen=True)
class _Spread:
    """A measured ratio's 95 % interval and the operations on each side behind it."""

    low: float
    high: float
    ops: tuple[int, int]
