"""Two stored runs compared figure by figure, with a verdict a machine's noise cannot fake.

For each step the two runs share (the same users, or the same offered rate) and each figure both
measured, the ratio new / base of the figures as stored (``workloads.results.figures``), its 95 %
interval from a bootstrap over the runs' operations (``workloads.results.compare_stats``), and a
verdict: the figure got better ("faster", "smaller") or worse ("slower", "larger") only when the
whole interval lies beyond the noise band either side of 1; otherwise "no difference this machine
can see". The band is the change two runs of one scenario on this machine show without any cause,
measured from the catalog's repeats where there are some (``workloads.results.repeat_noise``). A
footprint, one value per run, is judged on its ratio against the band; a first operation with one
fresh process each is too few to tell.

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
from workloads.results.figures import cache_words, step_figures
from workloads.results.history import opened_from, users_started
from workloads.results.repeat_noise import DEFAULT_NOISE, Bands, machine_bands
from workloads.results.suite_figures import geometric_mean, run_footprints
from workloads.targets.base import PHASES

NOISE = DEFAULT_NOISE
SAME = "no difference this machine can see"
TOO_FEW = "too few to tell"
FASTER, SLOWER, SMALLER, LARGER = "faster", "slower", "smaller", "larger"
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
    low: float | None            # 95 % interval of the ratio (None: one value each, no interval)
    high: float | None
    higher_is_better: bool
    verdict: str
    basis: str                   # "412 and 398 operations", "one value each"

    @property
    def interval(self) -> str:
        return f"{self.low:.3f}-{self.high:.3f}" if self.low is not None else "—"


@dataclass
class Comparison:
    base_run: str
    new_run: str
    refusals: list[str] = field(default_factory=list)      # why the runs do not measure the same thing
    environment: list[tuple[str, str, str]] = field(default_factory=list)   # (what, base, new)
    changes: list[FigureChange] = field(default_factory=list)
    unmatched: list[str] = field(default_factory=list)     # steps only one run has
    noise: str = ""                                        # the band the verdicts used, and from what

    @property
    def comparable(self) -> bool:
        return not self.refusals

    def to_dict(self) -> dict:
        return {"base_run": self.base_run, "new_run": self.new_run, "comparable": self.comparable,
                "noise_band": self.noise,
                "refusals": self.refusals, "unmatched_steps": self.unmatched,
                "environment": [{"what": w, "base": b, "new": n} for w, b, n in self.environment],
                "figures": [{**asdict(c), "interval": [c.low, c.high]} for c in self.changes]}


def verdict(ratio: float, low: float | None, high: float | None, higher_is_better: bool, sizes: bool = False,
            noise: float = NOISE) -> str:
    """Better or worse only when the whole interval (or the one ratio) is beyond the noise band."""
    low = ratio if low is None else low
    high = ratio if high is None else high
    up, down = low > 1 + noise, high < 1 / (1 + noise)
    if not (up or down):
        return SAME
    better = up == higher_is_better
    if sizes:
        return SMALLER if better else LARGER
    return FASTER if better else SLOWER


def compare_runs(store, base_id: str, new_id: str, noise: float | None = None) -> Comparison:
    """``noise``: a band for every figure; None: this machine's, from the base scenario's repeats."""
    base, new = store.run(base_id), store.run(new_id)
    found = Comparison(base["run_id"], new["run_id"])
    noise = Bands(noise, fixed=True) if noise is not None else machine_bands(store, base, (new["run_id"],))
    found.noise = noise.basis()
    found.refusals = refusals(store, base, new)
    found.environment = environment_differences(store, base, new)
    base_steps, new_steps = step_figures(store, base["run_id"]), step_figures(store, new["run_id"])
    pairs, found.unmatched = _matched_steps(base_steps, new_steps)
    if not pairs and not found.refusals:
        found.refusals.append("no step of one run matches a step of the other (their users or rates differ)")
    base_ops, new_ops = _ops(store, base["run_id"]), _ops(store, new["run_id"])
    for b, n in pairs:
        label = str(n["label"])
        found.changes += _step_changes(label, b, n, base_ops, new_ops, noise)
    found.changes += _footprint_changes(store, base["run_id"], new["run_id"], noise)
    return found


# ---- comparable? -----------------------------------------------------------------------------------
def refusals(store, base: dict, new: dict) -> list[str]:
    """Why these runs do not measure the same thing, each in words; [] when they do."""
    out = []
    b_scn, n_scn = base.get("scenario") or {}, new.get("scenario") or {}
    if base["dataset"] != new["dataset"]:
        out.append(f"another dataset: {base['dataset']} against {new['dataset']}")
    elif b_scn.get("scale") != n_scn.get("scale"):
        out.append(f"another scale: {_scale(b_scn)} against {_scale(n_scn)}")
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


def _ops(store, run_id: str) -> pd.DataFrame:
    frame = store.ops(run_id, kinds=("measured", "probe", "warmup"))
    return frame[frame["ok"].astype(bool)]


def _number(value) -> float | None:
    return None if value is None or pd.isna(value) else float(value)


def _step_changes(label: str, b: dict, n: dict, base_ops: pd.DataFrame, new_ops: pd.DataFrame,
                  noise: float) -> list[FigureChange]:
    out = []
    b_meas = base_ops[(base_ops["step"] == b["step"]) & (base_ops["kind"] == "measured")]
    n_meas = new_ops[(new_ops["step"] == n["step"]) & (new_ops["kind"] == "measured")]
    b_rounds, n_rounds = _rounds(b_meas), _rounds(n_meas)
    basis = f"{_units(b_meas, b_rounds)} and {_units(n_meas, n_rounds)}"
    for name, (column, amount) in RATES.items():
        bv, nv = _number(b.get(column)), _number(n.get(column))
        if not bv or not nv:
            continue                     # 0 rows (a no-op) or not measured: nothing to divide
        samples = [Sample(ops[amount].to_numpy(float) if amount else np.ones(len(ops)), ops["total_s"].to_numpy(float),
                          ops["worker"].to_numpy(), rounds) for ops, rounds in ((b_meas, b_rounds), (n_meas, n_rounds))]
        low, high = ratio_of_sums_interval(nv / bv, *samples)
        out.append(_change(label, name, bv, nv, low, high, True, basis, noise))
    for name, (column, q) in PERCENTILES.items():
        bv, nv = _number(b.get(column)), _number(n.get(column))
        if not bv or not nv:
            continue
        low, high = quantile_interval(nv / bv, b_meas["total_s"], n_meas["total_s"], q, base_rounds=b_rounds,
                                      new_rounds=n_rounds)
        out.append(_change(label, name, bv, nv, low, high, False, basis, noise))
    out += _phase_changes(label, b, n, base_ops, new_ops, noise)
    out += _first_op_change(label, b, n, base_ops, new_ops, noise)
    out += _query_changes(label, b_meas, n_meas, noise)
    return out


def _rounds(measured: pd.DataFrame) -> np.ndarray | None:
    """Each operation's round, where its step ran in rounds: a cold step's k-th operation of every
    user is its round k (``workloads.run.cold``: they start together after one clear)."""
    held = measured["extra"].astype(str).str.contains('"cold"', regex=False) if "extra" in measured else None
    if held is None or not held.any():
        return None
    return measured["seq"].to_numpy()


def _units(measured: pd.DataFrame, rounds: np.ndarray | None) -> str:
    if rounds is None:
        return f"{len(measured):,} operations"
    return f"{len(np.unique(rounds)):,} rounds ({len(measured):,} operations)"


def _phase_changes(label, b, n, base_ops, new_ops, noise) -> list[FigureChange]:
    out = []
    for phase in PHASES:
        bv, nv = _number(b.get(f"{phase}_s")), _number(n.get(f"{phase}_s"))
        if not bv or not nv:
            continue
        sides = []
        for row, ops in ((b, base_ops), (n, new_ops)):
            kind = "probe" if row.get("phase_source") == "probe" else "measured"
            part = ops[(ops["step"] == row["step"]) & (ops["kind"] == kind) & ops[f"{phase}_s"].notna()]
            sides.append(Sample(part[f"{phase}_s"].to_numpy(float), np.ones(len(part)), part["worker"].to_numpy()))
        low, high = ratio_of_sums_interval(nv / bv, *sides)
        out.append(_change(label, f"phase {phase}", bv, nv, low, high, False,
                           f"{len(sides[0]):,} and {len(sides[1]):,} {b.get('phase_source') or 'measured'} operations",
                           noise))
    return out


def _first_op_change(label, b, n, base_ops, new_ops, noise) -> list[FigureChange]:
    bv, nv = _number(b.get("first_op_s")), _number(n.get("first_op_s"))
    if not bv or not nv:
        return []
    firsts = [ops[(ops["step"] == row["step"]) & (ops["kind"] == "warmup") & (ops["seq"] == 0)]["total_s"]
              for row, ops in ((b, base_ops), (n, new_ops))]
    if min(len(f) for f in firsts) < 2:         # one fresh process each: one value, no interval
        return [FigureChange(label, "first op", bv, nv, nv / bv, None, None, False, TOO_FEW,
                             "one fresh process each: a single value says nothing of its spread")]
    low, high = quantile_interval(nv / bv, firsts[0], firsts[1], 0.5)
    return [_change(label, "first op", bv, nv, low, high, False,
                    f"{len(firsts[0])} and {len(firsts[1])} fresh processes", noise)]


def _query_changes(label, b_meas: pd.DataFrame, n_meas: pd.DataFrame, noise) -> list[FigureChange]:
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
        low, high = ratio_of_sums_interval(nv / bv, *samples)
        out.append(_change(label, f"query {query}", bv, nv, low, high, False,
                           f"{len(b_q):,} and {len(n_q):,} runs", noise))
    if len(b_means) > 1:
        bv, nv = geometric_mean(b_means), geometric_mean(n_means)
        # the geometric mean's ratio is the geometric mean of the queries' ratios: its log interval
        # is theirs averaged, a conservative bound (the queries' errors taken as moving together)
        logs = [(math.log(c.low / c.ratio), math.log(c.high / c.ratio)) for c in out if c.low and c.high]
        low = high = None
        if len(logs) == len(out):
            ratio = nv / bv
            low, high = ratio * math.exp(np.mean([lo for lo, _ in logs])), ratio * math.exp(np.mean([hi for _, hi in logs]))
        out.append(_change(label, "suite geometric mean", bv, nv, low, high, False,
                           f"{len(b_means)} queries", noise))
    return out


def _footprint_changes(store, base_id: str, new_id: str, noise: float) -> list[FigureChange]:
    b, n = run_footprints(store, base_id)["layout"], run_footprints(store, new_id)["layout"]
    if not b or not n:
        return []
    ratio = n["bytes"] / b["bytes"]
    return [FigureChange("laid-out data", "footprint", float(b["bytes"]), float(n["bytes"]), ratio, None, None,
                         False, verdict(ratio, None, None, False, sizes=True, noise=noise.of("footprint")),
                         "one value each")]


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


def _change(step, figure, base, new, low, high, higher_is_better, basis, noise: Bands) -> FigureChange:
    ratio = new / base
    return FigureChange(step, figure, base, new, ratio, low, high, higher_is_better,
                        verdict(ratio, low, high, higher_is_better, noise=noise.of(figure)), basis)
