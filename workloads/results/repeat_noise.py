"""The change this machine shows between runs of one scenario with no cause: the noise model that
every verdict between stored runs is judged by (``workloads.results.evidence``).

A figure's spread is the standard deviation of a run's log figure across runs of one scenario on
one host, pooled over the groups that hold such repeats: each side's own runs (when a side has
several) and the catalog's newest ``MAX_REPEATS`` completed runs of the base scenario (the same
data, engine and settings, the name aside) on the base run's host. It is robust: a run that is an
outlier in its group (over ``OUTLIER_MADS`` robust deviations and over ``OUTLIER_FLOOR`` from the
group's median) and a run begun on a busy machine (``busy_note``, while at least two quiet ones
remain in its group) are left out of the spread, so one bad run never widens the band the others
are judged by (an outlier as a whole: its median time or throughput; a tail figure's own scatter
between runs is the noise the next run will show, so it stays in). A figure that is missing, zero, NaN or infinite in a run is left out of that run.

With no spread measured (one run a side and no repeats here) a verdict needs the ratio beyond
``evidence.ONE_RUN_BAND``; with ``--noise`` a fixed band replaces the model for every figure.

Runs that took turns (``tickbench ab``: each base run's users with one new run's, operation by
operation, ``workloads.run.turns``) are judged as the pairs they are, as ``ab`` judges them
(``evidence.paired``), when every run of both sides has its partner on the other side and there are
``MIN_PAIRS`` pairs or more: the drift they shared cancels in each pair's ratio.
"""
from __future__ import annotations

import json
import math
from dataclasses import dataclass, field

import numpy as np

from workloads.results.evidence import (MIN_PAIRS, ONE_RUN_BAND, OPERATIONS, Evidence, band_family, finite_positive,
                                        one_run_each, paired, sides, too_few_operations)

MAX_REPEATS = 10                       # the newest: a machine changes over months
OUTLIER_MADS = 3.5
OUTLIER_FLOOR = 0.10                   # a run within 10 % of its group's median is never an outlier
_NOT_THE_QUESTION = ("name", "experiment")      # fields two repeats may differ in
_COLUMNS = {"rows/s": "rows_per_s", "MB/s": "mb_per_s", "ops/s": "ops_per_s", "p50": "p50_s", "p95": "p95_s",
            "p99": "p99_s", "first op": "first_op_s", "phase io": "io_s", "phase read": "read_s",
            "phase query": "query_s", "phase server": "server_s", "phase transfer": "transfer_s",
            "phase decode": "decode_s"}

Key = tuple[tuple[int, float | None], str]          # ((users, offered rate), figure)
CENTRAL = ("p50", "ops/s")                          # the figures that say a whole run was off


def scenario_key(scenario: dict) -> str:
    """What makes two runs repeats: every setting but the name and the gallery slot (a simulated
    server's pace counts: a no-op answering in 11 ms is no repeat of one answering in 10 ms)."""
    return json.dumps({k: v for k, v in (scenario or {}).items() if k not in _NOT_THE_QUESTION},
                      sort_keys=True, default=str)


def step_key(row: dict) -> tuple[int, float | None]:
    rate = row.get("rate")
    return int(row["users"]), None if rate is None or rate != rate else float(rate)


# each query's mean time per step, from the run's own records (``run_frame``: not the catalog's)
_QUERY_MEANS_SQL = """
SELECT step, op, avg(total_s) AS mean_s FROM ops
WHERE run_id = ? AND kind = 'measured' AND ok GROUP BY step, op ORDER BY step, op
"""


def run_figures(store, run_id: str) -> dict[Key, float]:
    """Every figure of a run a verdict can judge, finite and above 0, by step and figure name; and
    each step's count of operations (``OPERATIONS``)."""
    from workloads.results.figures import step_figures
    out: dict[Key, float] = {}
    frame = step_figures(store, run_id)
    steps = {}
    wanted = [c for c in ("step", "users", "rate", "ops", *_COLUMNS.values()) if c in frame.columns]
    for row in frame[wanted].to_dict("records"):          # the columns judged: records of all are slow
        steps[int(row["step"])] = key = step_key(row)
        out[(key, OPERATIONS)] = int(row.get("ops") or 0)
        for figure, column in _COLUMNS.items():
            if finite_positive(row.get(column)):
                out[(key, figure)] = float(row[column])
    means = store.run_frame(run_id, _QUERY_MEANS_SQL, [run_id])
    for step, part in means.groupby("step"):
        if len(part) < 2 or int(step) not in steps:
            continue
        for query, mean in zip(part["op"], part["mean_s"]):
            if finite_positive(mean):
                out[(steps[int(step)], f"query {query}")] = float(mean)
        if all(finite_positive(m) for m in part["mean_s"]):
            out[(steps[int(step)], "suite geometric mean")] = float(np.exp(np.mean(np.log(part["mean_s"].to_numpy(float)))))
    return out


def repeats_of(store, base: dict, leave_out: tuple[str, ...] = ()) -> list[dict]:
    """The newest completed runs of ``base``'s scenario on its host, ``leave_out`` left out."""
    key, host = scenario_key(base.get("scenario") or {}), (base.get("environment") or {}).get("host")
    frame = store.frame("SELECT run_id, scenario, environment FROM runs WHERE status = 'completed' "
                        "ORDER BY created_at DESC")
    found = []
    for run_id, scenario, environment in frame.itertuples(index=False):
        if run_id in leave_out:
            continue
        scenario = _json(scenario)
        environment = _json(environment)
        if scenario_key(scenario) == key and environment.get("host") == host:
            found.append({"run_id": run_id, "environment": environment})
        if len(found) == MAX_REPEATS:
            break
    return found


def _json(value) -> dict:
    if isinstance(value, str) and value:
        try:
            value = json.loads(value)
        except ValueError:
            return {}
    return value if isinstance(value, dict) else {}


@dataclass
class CrossRun:
    """The evidence for each figure of a comparison of ``base`` runs against ``new`` runs."""
    base: dict[str, dict[Key, float]]            # run id -> its figures, the base side
    new: dict[str, dict[Key, float]]
    groups: list[dict[str, dict[Key, float]]]    # runs of one scenario each, for the spread
    busy: set[str] = field(default_factory=set)
    fixed: float | None = None                   # --noise: one band for every figure
    repeats: int = 0
    left_out: dict[str, set[str]] = field(default_factory=dict)     # run id -> figures it was left out of
    pairs: list[tuple[str, str]] = field(default_factory=list)      # (base, new) runs that took turns

    def values(self, side: dict[str, dict[Key, float]], key: Key) -> list[float]:
        return [figures[key] for figures in side.values() if key in figures]

    def spread(self, key: Key) -> tuple[float, int]:
        """(the pooled robust standard deviation of the log figure, its degrees of freedom)."""
        squares, df = 0.0, 0
        for group in self.groups:
            kept = self._kept(group, key)
            if len(kept) >= 2:
                logs = np.log(kept)
                squares += float(((logs - logs.mean()) ** 2).sum())
                df += len(kept) - 1
        return (math.sqrt(squares / df), df) if df else (math.nan, 0)

    def _kept(self, group: dict[str, dict[Key, float]], key: Key) -> list[float]:
        """The group's values of ``key`` from the runs that stand for the scenario: every run but the
        busy ones (while two quiet ones remain) and the runs that are outliers as a whole (their
        median time or their throughput far from the group's). A tail figure's own scatter is
        kept: it is the noise the next run will show."""
        present = {run: figures[key] for run, figures in group.items() if key in figures}
        quiet = {run: v for run, v in present.items() if run not in self.busy}
        chosen = quiet if len(quiet) >= 2 else present
        outlying = _outlying(group, key[0]) if len(chosen) >= 3 else set()
        kept = {run: v for run, v in chosen.items() if run not in outlying}
        if len(kept) < 2:
            kept = chosen
        for run in set(present) - set(kept):
            self.left_out.setdefault(run, set()).add(key[1])
        return list(kept.values())

    def too_few(self, key: Key) -> str:
        """Why the sides' runs are too short for this figure ("" when they are not)."""
        counts = [figures.get((key[0], OPERATIONS)) for side in (self.base, self.new) for figures in side.values()]
        return too_few_operations(key[1], counts)

    def evidence(self, key: Key) -> Evidence | None:
        if self.too_few(key):
            return None
        base, new = self.values(self.base, key), self.values(self.new, key)
        if not base or not new or len(base) < len(self.base) or len(new) < len(self.new):
            return None                  # a run of a side lacks the figure (or it is NaN, infinite, 0)
        if self.pairs and self.fixed is None:
            found = paired([self.base[b].get(key, math.nan) for b, _ in self.pairs],
                           [self.new[n].get(key, math.nan) for _, n in self.pairs])
            return found and Evidence(found.ratio, found.low, found.high,
                                      found.basis.replace("repetitions", "runs that took turns"))
        if self.fixed is not None:
            b, n = float(np.exp(np.mean(np.log(base)))), float(np.exp(np.mean(np.log(new))))
            found = one_run_each(b, n, self.fixed)
            return found and Evidence(found.ratio, found.low, found.high, f"±{self.fixed:.0%} as given")
        spread, df = self.spread(key)
        if df == 0:
            if len(base) == 1 and len(new) == 1:
                return one_run_each(base[0], new[0], ONE_RUN_BAND[band_family(key[1])])
            return None
        sides_text = f"{len(base)} run{'s' if len(base) > 1 else ''} against {len(new)}"
        tail = band_family(key[1]) == "tail"
        return sides(base, new, spread, df,
                     f"{sides_text}; runs of one scenario here differ by ±{math.expm1(spread):.1%} (sd, {df} df)"
                     + ("; a tail, judged at 99.5 %" if tail else ""), tail=tail)

    def basis(self) -> str:
        """The noise model in one line, for the comparison's caption."""
        if self.fixed is not None:
            return f"±{self.fixed:.0%} for every figure, as given"
        if self.pairs:
            return (f"{len(self.pairs)} pairs of runs whose users took turns operation by operation "
                    "(tickbench ab): judged pair by pair")
        sides_text = f"{len(self.base)} run{'s' if len(self.base) > 1 else ''} against {len(self.new)}"
        if not self.repeats and len(self.base) == 1 and len(self.new) == 1:
            rate, tail = ONE_RUN_BAND["rate"], ONE_RUN_BAND["tail"]
            return (f"one run each: no verdict within ±{rate:.0%} (p95, p99, first op ±{tail:.0%}); run each side "
                    "3 times, or the base scenario 3 times here, and the band is measured")
        said = f"{sides_text}; spread across runs from " + (
            f"{self.repeats} repeats of the base scenario here" if self.repeats else "the sides' own runs")
        if self.left_out:
            said += f"; {len(self.left_out)} run(s) left out of the spread (busy or outlying)"
        return said


def _outlying(group: dict[str, dict[Key, float]], step: tuple[int, float | None]) -> set[str]:
    """Runs whose central figures at ``step`` (median time, throughput) lie over ``OUTLIER_MADS``
    robust deviations and over ``OUTLIER_FLOOR`` from the group's median: a run starved of CPU."""
    found: set[str] = set()
    for figure in CENTRAL:
        logs = {run: math.log(figures[(step, figure)]) for run, figures in group.items() if (step, figure) in figures}
        if len(logs) < 3:
            continue
        centre = float(np.median(list(logs.values())))
        mad = 1.4826 * float(np.median([abs(x - centre) for x in logs.values()]))
        limit = max(OUTLIER_MADS * mad, math.log1p(OUTLIER_FLOOR))
        found |= {run for run, x in logs.items() if abs(x - centre) > limit}
    return found


def cross_run(store, base_ids: list[str], new_ids: list[str], noise: float | None = None,
              use_repeats: bool = True) -> CrossRun:
    """The noise model for ``base_ids`` against ``new_ids`` (runs a side)."""
    from workloads.run.environment import busy_note
    runs = {run_id: store.run(run_id) for run_id in (*base_ids, *new_ids)}
    figures = {run_id: run_figures(store, run_id) for run_id in runs}
    busy = {run_id for run_id, run in runs.items() if busy_note(run.get("environment") or {})}
    base_group = {run_id: figures[run_id] for run_id in base_ids}
    repeats = repeats_of(store, runs[base_ids[0]], tuple(runs)) if use_repeats and noise is None else []
    for repeat in repeats:
        base_group[repeat["run_id"]] = run_figures(store, repeat["run_id"])
        if busy_note(repeat["environment"]):
            busy.add(repeat["run_id"])
    return CrossRun(base={r: figures[r] for r in base_ids}, new={r: figures[r] for r in new_ids},
                    groups=[base_group, {r: figures[r] for r in new_ids}], busy=busy, fixed=noise,
                    repeats=len(repeats), pairs=turn_pairs(runs, base_ids, new_ids))


def turn_pairs(runs: dict[str, dict], base_ids: list[str], new_ids: list[str]) -> list[tuple[str, str]]:
    """(base, new) runs that took turns with each other, when every run of both sides has its partner
    on the other side and there are enough of them for a paired verdict; else none."""
    from workloads.run.turns import took_turns_with
    partner = {run_id: took_turns_with(run.get("environment")) for run_id, run in runs.items()}
    pairs = [(b, partner[b]) for b in base_ids if partner[b] in new_ids and partner[partner[b]] == b]
    whole = len(pairs) == len(base_ids) == len(new_ids) == len({n for _, n in pairs})
    return pairs if whole and len(pairs) >= MIN_PAIRS else []
