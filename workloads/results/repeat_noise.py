"""The change this machine shows with no cause: the band a comparison's interval must clear.

An interval from one run's operations says how sure that run's figure is, not how much a second
run of the same scenario would differ: a process's allocator, the files' place on disk and the
neighbours' load move a whole run at once. ``benchmarks/bench_compare_noise.py`` measured it here:
two runs of a no-op with a 10 ms answer differ by under 1 % (p99 6 %), two warm DuckDB reads of
one scenario by up to 12 % (p95 of slice downloads with 2 users up to 64 %).

So the band is measured where it can be: when the catalog holds ``MIN_REPEATS`` or more completed
runs of the base run's scenario on its host (the same data, engine and settings, the name aside),
each figure's band is the largest change between consecutive repeats; else ``DEFAULT_NOISE``,
and the comparison says how to measure it (run the scenario a few times).
"""
from __future__ import annotations

import json
import math
from dataclasses import dataclass, field

DEFAULT_NOISE = 0.10
MIN_REPEATS = 3
MAX_REPEATS = 10                       # the newest: a machine changes over months
_NOT_THE_QUESTION = ("name", "experiment")      # fields two repeats may differ in


@dataclass(frozen=True)
class Bands:
    default: float = DEFAULT_NOISE
    measured: dict[str, float] = field(default_factory=dict)     # figure -> band, from the repeats
    repeats: int = 0
    fixed: bool = False                 # given by the user (--noise): used for every figure

    def of(self, figure: str) -> float:
        if self.fixed:
            return self.default
        return max(self.default, self.measured.get(_family(figure), 0.0))

    def basis(self) -> str:
        if self.fixed:
            return f"±{self.default:.0%} for every figure, as given"
        if self.measured:
            widest = max(self.measured.items(), key=lambda kv: kv[1])
            return (f"this machine's own: {self.repeats} repeats of the base run's scenario here; at least "
                    f"±{self.default:.0%}, widest {widest[0]} ±{widest[1]:.0%}")
        return (f"±{self.default:.0%}, the default: run the base scenario {MIN_REPEATS} times or more here "
                "and the band is measured from its repeats")


def _family(figure: str) -> str:
    return "query" if figure.startswith("query ") else figure


def scenario_key(scenario: dict) -> str:
    """What makes two runs repeats: every setting but the name and the gallery slot, and but a
    simulated server's settings (the no-op's answer time, ``Workload.system_params``), which stand
    for the machine under test as a real server's own pace does."""
    from workloads.operations import get_workload
    scenario = dict(scenario or {})
    try:
        simulated = get_workload(str(scenario.get("workload"))).system_params
    except (KeyError, ValueError):
        simulated = frozenset()
    scenario["params"] = {k: v for k, v in (scenario.get("params") or {}).items() if k not in simulated}
    return json.dumps({k: v for k, v in scenario.items() if k not in _NOT_THE_QUESTION}, sort_keys=True, default=str)


def machine_bands(store, base: dict, leave_out: tuple[str, ...] = ()) -> Bands:
    """The bands measured from the repeats of ``base``'s scenario on its host (``leave_out``: the
    runs under comparison besides the base, which must not widen the band they are judged by)."""
    from workloads.results.figures import step_figures
    key, host = scenario_key(base.get("scenario") or {}), (base.get("environment") or {}).get("host")
    frame = store.frame("SELECT run_id, scenario, environment FROM runs WHERE status = 'completed' "
                        "ORDER BY created_at DESC")
    repeats = []
    for run_id, scenario, environment in frame.itertuples(index=False):
        if run_id in leave_out:
            continue
        scenario = json.loads(scenario) if isinstance(scenario, str) and scenario else (scenario or {})
        environment = json.loads(environment) if isinstance(environment, str) and environment else (environment or {})
        if scenario_key(scenario) == key and environment.get("host") == host:
            repeats.append(run_id)
        if len(repeats) == MAX_REPEATS:
            break
    if len(repeats) < MIN_REPEATS:
        return Bands(repeats=len(repeats))
    figures = [step_figures(store, run_id).drop_duplicates("users").set_index("users") for run_id in repeats]
    measured: dict[str, float] = {}
    for a, b in zip(figures, figures[1:]):
        for figure, column in _COLUMNS.items():
            if column not in a or column not in b:
                continue
            for users in a.index.intersection(b.index):
                x, y = a.at[users, column], b.at[users, column]
                if x and y and x == x and y == y and x > 0 and y > 0:
                    change = math.exp(abs(math.log(float(y) / float(x)))) - 1
                    measured[figure] = max(measured.get(figure, 0.0), change)
    return Bands(measured=measured, repeats=len(repeats))


_COLUMNS = {"rows/s": "rows_per_s", "MB/s": "mb_per_s", "ops/s": "ops_per_s", "p50": "p50_s", "p95": "p95_s",
            "p99": "p99_s", "first op": "first_op_s", "phase io": "io_s", "phase read": "read_s",
            "phase query": "query_s", "phase server": "server_s", "phase transfer": "transfer_s",
            "phase decode": "decode_s"}
