"""Stored runs compared figure by figure, with a verdict a machine's noise cannot fake.

For each step the two sides share (the same users, or the same offered rate) and each figure both
measured: the ratio new / base, its 95 % interval ACROSS RUNS and a verdict from that interval
(``workloads.results.evidence``): "faster" or "slower" ("smaller", "larger") only when the whole
interval lies beyond the noise floor either side of 1, else "no difference this machine can see";
"cannot tell" where a figure is missing, NaN or infinite. The interval across runs comes from the
noise model (``workloads.results.repeat_noise``): each side's runs (one or several) and the spread
two runs of one scenario show on this machine, measured from the sides' own runs and the
catalog's repeats of the base scenario, robust to a busy or outlying run; with one run each and no
repeats, no verdict within a wide stated band. Each step's own bootstrap over its operations
(``workloads.results.compare_stats``) is kept beside (``run_low``/``run_high``): it says how sure
that run is, never how much the next run will differ, so no verdict uses it.

Runs that do not measure the same thing are not compared (``refusals``): another dataset or
scale, another workload or its settings, cold against warm, or caches cleared differently. What
differs in their environment is named beside the verdicts (``environment_differences``).
"""
from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field

import numpy as np
import pandas as pd

from workloads.results.compare_stats import Sample, quantile_interval, ratio_of_sums_interval
from workloads.results.dataset_size import dataset_size, record_of, size_text
from workloads.results.evidence import (CANNOT_TELL, FASTER, LARGER, SAME, SLOWER, SMALLER, Evidence,
                                        finite_positive, verdict_of)
from workloads.results.figures import cache_words, step_figures
from workloads.results.history import opened_from, users_started
from workloads.results.repeat_noise import CrossRun, cross_run, step_key
from workloads.results.strict_json import finite_only
from workloads.run.turns import took_turns_with
from workloads.results.suite_figures import geometric_mean, run_footprints
from workloads.scenario import has_own_size
from workloads.targets.base import PHASES

__all__ = ["CANNOT_TELL", "FASTER", "LARGER", "SAME", "SLOWER", "SMALLER", "TOO_FEW", "Comparison",
           "FigureChange", "compare_runs"]
TOO_FEW = "too few to tell"
# figure name -> (step_figures column, "higher" or "lower" is better, kind)
RATES = {"rows/s": ("rows_per_s", "rows"), "MB/s": ("mb_per_s", "bytes"), "ops/s": ("ops_per_s", None)}
PERCENTILES = {"p50": ("p50_s", 0.50), "p95": ("p95_s", 0.95), "p99": ("p99_s", 0.99)}


@dataclass(frozen=True)
class FigureChange:
    step: str                    # "4 users"
    figure: str                  # "rows/s", "p99", "phase decode", "query t01", "footprint"
    base: float
    new: float
    ratio: float                 # new / base
    low: float | None            # 95 % interval of the ratio across runs (None: cannot tell)
    high: float | None
    higher_is_better: bool
    verdict: str
    basis: str                   # "one run each: no verdict within ±50 %; 412 and 398 operations"
    run_low: float | None = None     # each run's own bootstrap over its operations: how sure that run is
    run_high: float | None = None
    untold: str = ""                 # why it cannot be told ("" when it can, or is too few to)

    @property
    def interval(self) -> str:
        return f"{self.low:.3f}-{self.high:.3f}" if self.low is not None else "—"

    @property
    def run_interval(self) -> str:
        return f"{self.run_low:.3f}-{self.run_high:.3f}" if self.run_low is not None else "—"


@dataclass
class Comparison:
    base_run: str
    new_run: str
    refusals: list[str] = field(default_factory=list)      # why the runs do not measure the same thing
    environment: list[tuple[str, str, str]] = field(default_factory=list)   # (what, base, new)
    changes: list[FigureChange] = field(default_factory=list)
    unmatched: list[str] = field(default_factory=list)     # steps only one run has
    noise: str = ""                                        # the noise model the verdicts used, and from what
    base_runs: tuple[str, ...] = ()                        # every run of each side (the first is base_run)
    new_runs: tuple[str, ...] = ()

    @property
    def comparable(self) -> bool:
        return not self.refusals

    def to_dict(self) -> dict:
        """Strict JSON: a value that is NaN or infinite is null."""
        return {"base_run": self.base_run, "new_run": self.new_run, "comparable": self.comparable,
                "base_runs": list(self.base_runs), "new_runs": list(self.new_runs),
                "noise_band": self.noise,
                "refusals": self.refusals, "unmatched_steps": self.unmatched,
                "environment": [{"what": w, "base": b, "new": n} for w, b, n in self.environment],
                "figures": [finite_only({**asdict(c), "interval": [c.low, c.high], "run_interval": [c.run_low, c.run_high]})
                            for c in self.changes]}


def compare_runs(store, base_id: str | list[str], new_id: str | list[str], noise: float | None = None,
                 use_repeats: bool = True) -> Comparison:
    """``base_id``/``new_id``: a run, or several runs a side. ``noise``: one fixed band for every
    figure; None: the noise model from the sides' runs and the base scenario's repeats here
    (``use_repeats=False``: the sides' own runs only)."""
    base_ids = [base_id] if isinstance(base_id, str) else list(base_id)
    new_ids = [new_id] if isinstance(new_id, str) else list(new_id)
    base, new = store.run(base_ids[0]), store.run(new_ids[0])
    base_ids = [base["run_id"]] + [store.run(r)["run_id"] for r in base_ids[1:]]
    new_ids = [new["run_id"]] + [store.run(r)["run_id"] for r in new_ids[1:]]
    found = Comparison(base["run_id"], new["run_id"], base_runs=tuple(base_ids), new_runs=tuple(new_ids))
    for other in base_ids[1:] + new_ids[1:]:
        first = base if other in base_ids else new
        found.refusals += [f"{other} is no repeat of {first['run_id']}: {why}"
                           for why in refusals(store, first, store.run(other))]
    found.refusals += refusals(store, base, new)
    found.environment = environment_differences(store, base, new)
    cross = cross_run(store, base_ids, new_ids, noise, use_repeats)
    base_steps, new_steps = step_figures(store, base["run_id"]), step_figures(store, new["run_id"])
    pairs, found.unmatched = _matched_steps(base_steps, new_steps)
    if not pairs and not found.refusals:
        found.refusals.append("no step of one run matches a step of the other (their users or rates differ)")
    single = len(base_ids) == 1 and len(new_ids) == 1
    base_cold, new_cold = _cold_steps(store, base["run_id"]), _cold_steps(store, new["run_id"])
    for b, n in pairs:
        sides = (_StepRecords(store, base["run_id"], b["step"], b["step"] in base_cold),
                 _StepRecords(store, new["run_id"], n["step"], n["step"] in new_cold))
        found.changes += _step_changes(str(n["label"]), b, n, *sides, _Judge(cross, step_key(b), single))
    found.changes += _footprint_changes(store, base["run_id"], new["run_id"])
    found.noise = cross.basis()
    return found


@dataclass(frozen=True)
class _Judge:
    """Turns a figure of one step into a FigureChange judged across runs."""
    cross: CrossRun
    step: tuple[int, float | None]
    single: bool                 # one run a side: the step's own bootstrap is shown beside

    def __call__(self, label, figure, bv, nv, run_low, run_high, higher_is_better, basis) -> FigureChange:
        key = (self.step, figure)
        evidence = self.cross.evidence(key)
        if not self.single:
            sides = [self.cross.values(side, key) for side in (self.cross.base, self.cross.new)]
            if all(sides):
                bv, nv = (float(np.exp(np.mean(np.log(v)))) for v in sides)
            run_low = run_high = None
        ratio = evidence.ratio if evidence else (nv / bv if bv else math.nan)
        untold = "" if evidence else self.cross.too_few(key) or "not a finite figure above 0 in every run"
        said = f"{evidence.basis if evidence else untold}; {basis}"
        return FigureChange(label, figure, bv, nv, ratio, evidence and evidence.low, evidence and evidence.high,
                            higher_is_better, verdict_of(evidence, higher_is_better), said,
                            _or_none(run_low), _or_none(run_high), untold)


def _or_none(value):
    return value if value is not None and finite_positive(value) else None


# ---- comparable? -----------------------------------------------------------------------------------
def refusals(store, base: dict, new: dict) -> list[str]:
    """Why these runs do not measure the same thing, each in words; [] when they do."""
    out = []
    b_scn, n_scn = base.get("scenario") or {}, new.get("scenario") or {}
    if base["dataset"] != new["dataset"]:
        out.append(f"another dataset: {base['dataset']} against {new['dataset']}")
    elif b_scn.get("scale") != n_scn.get("scale"):
        out.append(f"another scale: {_scale(b_scn)} against {_scale(n_scn)}")
    elif has_own_size(base["dataset"]):
        changed = other_data(base, new)
        if changed:
            out.append(changed)
    if base["workload"] != new["workload"]:
        out.append(f"another workload: {base['workload']} against {new['workload']}")
    else:
        b_par, n_par = b_scn.get("params") or {}, n_scn.get("params") or {}
        differ = [k for k in sorted(set(b_par) | set(n_par))
                  if b_par.get(k) != n_par.get(k) and k not in _system_params(base["workload"])]
        if differ:
            out.append("another workload setting: " + ", ".join(
                f"{k} {b_par.get(k)!r} against {n_par.get(k)!r}" for k in differ))
    if base.get("cache") != new.get("cache"):
        out.append(f"{base.get('cache')} cache against {new.get('cache')}: a cold read and a warm one are different questions")
    elif base.get("cache") == "cold":
        b_words, n_words = cache_words(store, base), cache_words(store, new)
        if b_words != n_words:
            out.append(f"caches cleared differently: {b_words} against {n_words}")
    return out


def other_data(base: dict, new: dict) -> str:
    """Other data under one dataset's name (an import made again, a table that changed): its size and
    content as each run found them, in words; "" when they agree or were not recorded."""
    sizes = [size_text(dataset_size(run)) for run in (base, new)]
    contents = [record_of(run.get("layout")).get("content") for run in (base, new)]
    if sizes[0] and sizes[1] and sizes[0] != sizes[1]:
        return f"other data under the name {base['dataset']}: {sizes[0]} against {sizes[1]}"
    if all(contents) and contents[0] != contents[1]:
        return f"other data under the name {base['dataset']}: as large ({sizes[0]}), other rows (imported again)"
    return ""


def _system_params(workload: str) -> frozenset[str]:
    from workloads.operations import get_workload
    try:
        return get_workload(workload).system_params
    except (KeyError, ValueError):
        return frozenset()


def _scale(scenario: dict) -> str:
    scale = scenario.get("scale") or {}
    return f"{scale.get('days')} days x {scale.get('rows_per_day'):,} rows, {scale.get('symbols')} keys" \
        if isinstance(scale.get("rows_per_day"), int) else str(scale)


# ---- what differs around them ------------------------------------------------------------------------
def environment_differences(store, base: dict, new: dict) -> list[tuple[str, str, str]]:
    """(what, base, new) for each fact of the runs' environments that differs, and the load on
    the client during each run, which is named whether or not it differs."""
    b_env, n_env = base.get("environment") or {}, new.get("environment") or {}
    out = []
    for key, name in (("host", "host"), ("cpu", "CPU"), ("cores_logical", "hardware threads"),
                      ("ram_bytes", "memory"), ("os", "operating system"), ("python", "Python"),
                      ("server_version", "engine version"), ("string_mode", "string columns"),
                      ("allocator", "allocator")):
        b, n = b_env.get(key), n_env.get(key)
        if b != n:
            out.append((name, _text(key, b), _text(key, n)))
    b_users, n_users = users_process(b_env.get("process")), users_process(n_env.get("process"))
    if b_users != n_users:          # a plain process or a spawned user changes what a call costs
        out.append(("users' process", b_users, n_users))
    b_turns, n_turns = turns_text(b_env), turns_text(n_env)
    if b_turns != n_turns:          # a read between another process's reads finds colder caches
        out.append(("users' operations", b_turns, n_turns))
    if base["target"] != new["target"]:
        out.append(("target", str(base["target"]), str(new["target"])))
    b_from, n_from = opened_from(b_env), opened_from(n_env)
    if b_from or n_from:
        out.append(("came from", b_from.strip("()") or "this catalog", n_from.strip("()") or "this catalog"))
    b_lib, n_lib = b_env.get("libraries") or {}, n_env.get("libraries") or {}
    for lib in sorted(set(b_lib) | set(n_lib)):
        if b_lib.get(lib) != n_lib.get(lib):
            out.append((f"{lib} version", str(b_lib.get(lib, "—")), str(n_lib.get(lib, "—"))))
    out.append(("load during the run", _load(store, base), _load(store, new)))
    return out


def turns_text(environment: dict) -> str:
    """Whether a run's users took turns with another run's (``tickbench ab``), in words."""
    return "taking turns with another run's" if took_turns_with(environment) else "alone"


def users_process(conditions: dict | None) -> str:
    """How a run's users were started and run, in two words ("forked, settled"); a run recorded
    before its conditions were had spawned, settled users."""
    conditions = conditions or {}
    return f"{users_started(conditions)}, {conditions.get('process', 'settled')}"


def _text(key: str, value) -> str:
    if value is None:
        return "—"
    if key == "ram_bytes":
        return f"{value / 2**30:.1f} GiB"
    return str(value)


def _load(store, run: dict) -> str:
    load = (run.get("environment") or {}).get("load_average") or []
    cores = (run.get("environment") or {}).get("cores_logical") or 0
    said = [f"load average {load[0]:.1f} at its start" + (f" on {cores} threads" if cores else "")] if load else []
    samples = store.resources(run["run_id"])
    if not samples.empty and samples["cpu_percent"].notna().any():
        said.append(f"client CPU {samples['cpu_percent'].mean():.0f} % on average")
    return ", ".join(said) or "not recorded"


# ---- the figures ---------------------------------------------------------------------------------------
def _matched_steps(base: pd.DataFrame, new: pd.DataFrame) -> tuple[list[tuple[dict, dict]], list[str]]:
    """Steps paired by users and offered rate (a sweep's 4-user step with the other's 4-user step)."""
    def key(row) -> tuple:
        rate = row.get("rate")
        return int(row["users"]), None if rate is None or pd.isna(rate) else float(rate)
    b_rows = {key(r): r for r in base.to_dict("records")}
    n_rows = {key(r): r for r in new.to_dict("records")}
    pairs = [(b_rows[k], n_rows[k]) for k in n_rows if k in b_rows]
    unmatched = [str(r["label"]) for k, r in {**b_rows, **n_rows}.items() if not (k in b_rows and k in n_rows)]
    return pairs, unmatched


# what a comparison reads of a step's successful measured records: their numbers and query (``op``),
# never their text; phases and first operations are read apart, only where a figure asks
MEASURED_COLUMNS = ("worker", "seq", "op", "total_s", "rows", "bytes")


class _StepRecords:
    """One run's step, its successful records read when a figure asks for them: a comparison holds
    the records of one pair of steps at a time, never a whole run's (a step of a hostile run may
    hold millions)."""

    def __init__(self, store, run_id: str, step: int, cold: bool):
        self.store, self.run_id, self.step, self.cold = store, run_id, int(step), cold
        self.measured = self._records(("measured",), MEASURED_COLUMNS)

    def _records(self, kinds: tuple[str, ...], columns: tuple[str, ...]) -> pd.DataFrame:
        return self.store.ops(self.run_id, kinds=kinds, columns=columns, ok_only=True, step=self.step)

    def phase(self, kind: str, phase: str) -> pd.DataFrame:
        part = self._records((kind,), ("worker", f"{phase}_s"))
        return part[part[f"{phase}_s"].notna()]

    def first_ops(self) -> pd.Series:
        """Each fresh process's first operation's time (the warm-up's record 0)."""
        warmup = self._records(("warmup",), ("seq", "total_s"))
        return warmup.loc[warmup["seq"] == 0, "total_s"]


def _cold_steps(store, run_id: str) -> set[int]:
    """The steps that ran in cold rounds (asked once a run, not of every record)."""
    return set(store.run_frame(run_id, "SELECT DISTINCT step FROM ops WHERE run_id = ? AND kind = 'measured' AND ok "
                               "AND contains(extra, '\"cold\"')", [run_id])["step"])


def _number(value) -> float | None:
    return None if value is None or pd.isna(value) else float(value)


def _step_changes(label: str, b: dict, n: dict, base_ops: _StepRecords, new_ops: _StepRecords,
                  judge: _Judge) -> list[FigureChange]:
    out = []
    b_meas, n_meas = base_ops.measured, new_ops.measured
    b_rounds, n_rounds = _rounds(base_ops), _rounds(new_ops)
    basis = f"{_units(b_meas, b_rounds)} and {_units(n_meas, n_rounds)}"
    for name, (column, amount) in RATES.items():
        bv, nv = _number(b.get(column)), _number(n.get(column))
        if not bv or not nv:
            continue                     # 0 rows (a no-op) or not measured: nothing to divide
        samples = [Sample(ops[amount].to_numpy(float) if amount else np.ones(len(ops)), ops["total_s"].to_numpy(float),
                          ops["worker"].to_numpy(), rounds) for ops, rounds in ((b_meas, b_rounds), (n_meas, n_rounds))]
        low, high = _own(lambda: ratio_of_sums_interval(nv / bv, *samples), bv, nv)
        out.append(judge(label, name, bv, nv, low, high, True, basis))
    for name, (column, q) in PERCENTILES.items():
        bv, nv = _number(b.get(column)), _number(n.get(column))
        if not bv or not nv:
            continue
        low, high = _own(lambda: quantile_interval(nv / bv, b_meas["total_s"], n_meas["total_s"], q,
                                                   base_rounds=b_rounds, new_rounds=n_rounds), bv, nv)
        out.append(judge(label, name, bv, nv, low, high, False, basis))
    out += _phase_changes(label, b, n, base_ops, new_ops, judge)
    out += _first_op_change(label, b, n, base_ops, new_ops, judge)
    out += _query_changes(label, b_meas, n_meas, judge)
    return out


def _own(interval, bv: float, nv: float) -> tuple[float | None, float | None]:
    """A step's own bootstrap interval, where both figures are finite and above 0."""
    if not (finite_positive(bv) and finite_positive(nv)):
        return None, None
    with np.errstate(all="ignore"):
        return interval()


def _rounds(records: _StepRecords) -> np.ndarray | None:
    """Each operation's round, where its step ran in rounds: a cold step's k-th operation of every
    user is its round k (``workloads.run.cold``: they start together after one clear)."""
    return records.measured["seq"].to_numpy() if records.cold else None


def _units(measured: pd.DataFrame, rounds: np.ndarray | None) -> str:
    if rounds is None:
        return f"{len(measured):,} operations"
    return f"{len(np.unique(rounds)):,} rounds ({len(measured):,} operations)"


def _phase_changes(label, b, n, base_ops, new_ops, judge: _Judge) -> list[FigureChange]:
    out = []
    for phase in PHASES:
        bv, nv = _number(b.get(f"{phase}_s")), _number(n.get(f"{phase}_s"))
        if not bv or not nv:
            continue
        sides = []
        for row, ops in ((b, base_ops), (n, new_ops)):
            part = ops.phase("probe" if row.get("phase_source") == "probe" else "measured", phase)
            sides.append(Sample(part[f"{phase}_s"].to_numpy(float), np.ones(len(part)), part["worker"].to_numpy()))
        low, high = _own(lambda: ratio_of_sums_interval(nv / bv, *sides), bv, nv)
        out.append(judge(label, f"phase {phase}", bv, nv, low, high, False,
                         f"{len(sides[0]):,} and {len(sides[1]):,} {b.get('phase_source') or 'measured'} operations"))
    return out


def _first_op_change(label, b, n, base_ops, new_ops, judge: _Judge) -> list[FigureChange]:
    bv, nv = _number(b.get("first_op_s")), _number(n.get("first_op_s"))
    if not bv or not nv:
        return []
    firsts = [base_ops.first_ops(), new_ops.first_ops()]
    if judge.single and min(len(f) for f in firsts) < 2:     # one fresh process each: one value, no interval
        return [FigureChange(label, "first op", bv, nv, nv / bv, None, None, False, TOO_FEW,
                             "one fresh process each: a single value says nothing of its spread")]
    low, high = _own(lambda: quantile_interval(nv / bv, firsts[0], firsts[1], 0.5), bv, nv) \
        if min(len(f) for f in firsts) >= 2 else (None, None)
    return [judge(label, "first op", bv, nv, low, high, False, f"{len(firsts[0])} and {len(firsts[1])} fresh processes")]


def _query_changes(label, b_meas: pd.DataFrame, n_meas: pd.DataFrame, judge: _Judge) -> list[FigureChange]:
    """A query suite's queries, each its mean; and the suite's geometric mean."""
    if b_meas["op"].nunique() < 2 or n_meas["op"].nunique() < 2:
        return []                                 # one operation name: not a suite
    out, b_means, n_means = [], [], []
    for query in sorted(set(b_meas["op"]) & set(n_meas["op"])):
        b_q, n_q = b_meas[b_meas["op"] == query], n_meas[n_meas["op"] == query]
        bv, nv = float(b_q["total_s"].mean()), float(n_q["total_s"].mean())
        b_means.append(bv)
        n_means.append(nv)
        samples = [Sample(q["total_s"].to_numpy(float), np.ones(len(q)), q["worker"].to_numpy()) for q in (b_q, n_q)]
        low, high = _own(lambda: ratio_of_sums_interval(nv / bv, *samples), bv, nv)
        out.append(judge(label, f"query {query}", bv, nv, low, high, False, f"{len(b_q):,} and {len(n_q):,} runs"))
    if len(b_means) > 1 and all(finite_positive(v) for v in (*b_means, *n_means)):
        bv, nv = geometric_mean(b_means), geometric_mean(n_means)
        # the geometric mean's ratio is the geometric mean of the queries' ratios: its log interval
        # is theirs averaged, a conservative bound (the queries' errors taken as moving together)
        logs = [(math.log(c.run_low / (nv_q / bv_q)), math.log(c.run_high / (nv_q / bv_q)))
                for c, bv_q, nv_q in zip(out, b_means, n_means) if c.run_low and c.run_high]
        low = high = None
        if len(logs) == len(out):
            ratio = nv / bv
            low, high = ratio * math.exp(np.mean([lo for lo, _ in logs])), ratio * math.exp(np.mean([hi for _, hi in logs]))
        out.append(judge(label, "suite geometric mean", bv, nv, low, high, False, f"{len(b_means)} queries"))
    return out


def _footprint_changes(store, base_id: str, new_id: str) -> list[FigureChange]:
    """The laid-out data's bytes: one value a run, a size rather than a time (the same data lays
    out to the same bytes), so its ratio is its own interval."""
    b, n = run_footprints(store, base_id)["layout"], run_footprints(store, new_id)["layout"]
    if not b or not n:
        return []
    if not (finite_positive(b["bytes"]) and finite_positive(n["bytes"])):
        return []
    ratio = n["bytes"] / b["bytes"]
    return [FigureChange("laid-out data", "footprint", float(b["bytes"]), float(n["bytes"]), ratio, ratio, ratio,
                         False, verdict_of(Evidence(ratio, ratio, ratio, ""), False, sizes=True),
                         "one value each: a size, the same for the same data")]


TIME_FIGURES = ("p50", "p95", "p99", "first op", "phase ", "query ", "suite geometric mean")


def figure_text(figure: str, value: float) -> str:
    """A figure's value as the tables show it: times in ms, a footprint in MB, rates as counts."""
    if figure.startswith(TIME_FIGURES):
        return f"{value * 1000:,.2f} ms"
    if figure == "footprint":
        return f"{value / 1e6:,.1f} MB"
    if figure == "MB/s":
        return f"{value:,.1f}"
    return f"{value:,.0f}"
