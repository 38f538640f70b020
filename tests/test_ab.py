"""``tickbench ab``: A and B as randomly interleaved pairs of real runs of the no-op (a target whose
truth is known: every operation takes a set time), verdicts from the pairs' ratios, an early stop
only when the answer is clear, failed repetitions dropped and counted, Ctrl-C keeping what ran; and
the known slowdowns (the no-op's ``work_s``, every workload's ``added_work_s``) in stored p50."""
from __future__ import annotations

import json
import itertools
import math
import os
import subprocess
import sys
import threading
from pathlib import Path

import numpy as np
import pytest

from app.cli.common import CliError
from workloads.datasets.schema import Scale
from workloads.operations import get_workload
from workloads.results.evidence import CANNOT_TELL, SAME, SLOWER
from workloads.results.figures import step_figures
from workloads.results.store import ResultsStore
from workloads.run import ab
from workloads.run.ab import Pair, Repetition, load_ab, orders, run_ab, verdicts_of
from workloads.run.runner import Runner
from workloads.scenario import Scenario

ROOT = Path(__file__).resolve().parents[1]
STEP = (1, None)


def held(hold_s: float = 0.010, duration_s: float = 0.4, **params) -> Scenario:
    return Scenario(name="held", workload="noop", users=(1,), operations=0, duration_s=duration_s, probe_ops=0,
                    params={"hold_s": hold_s, **params})


@pytest.fixture
def store(tmp_path):
    store = ResultsStore(tmp_path / "results")
    yield store
    store.close()


def _tickbench(folder: Path, *args: str, timeout: float = 120) -> subprocess.CompletedProcess:
    env = {**os.environ, "TICKBENCH_HOME": str(folder), "COLUMNS": "200"}
    return subprocess.run([sys.executable, "-m", "app", "--results", str(folder / "results"), *args],
                          capture_output=True, text=True, timeout=timeout, env=env, cwd=ROOT)


# ---- interleaving and pairing: no runs ---------------------------------------------------------
def test_each_pair_runs_a_or_b_first_at_random_and_another_seed_gives_another_order():
    seen = {seed: orders(12, seed) for seed in range(5)}
    for order in seen.values():
        assert set(order) == {"AB", "BA"}           # both orders occur: never always A first
        assert all(sorted(pair) == ["A", "B"] for pair in order)
    assert len({tuple(order) for order in seen.values()}) == len(seen)
    assert orders(12, 3) == seen[3]                 # seeded: recorded and repeatable


def _pairs(a_values, b_values, failed_b: set[int] = frozenset()) -> list[Pair]:
    pairs = []
    for i, (x, y) in enumerate(zip(a_values, b_values)):
        a = Repetition(i, "A", f"a{i}", "completed", "", {STEP: {"p50": x, "rows/s": 0.0}}, {STEP: "1 user"})
        b = Repetition(i, "B", f"b{i}", "failed" if i in failed_b else "completed", "boom" if i in failed_b else "",
                       {STEP: {"p50": y, "rows/s": 0.0}}, {STEP: "1 user"})
        pairs.append(Pair(i, "AB", a, b))
    return pairs


def test_the_verdict_is_the_centre_of_the_pairs_ratios_never_of_the_sides_apart():
    # the pairs' ratios 2.5, 1, 1.1, 1, 1, 1.2: the median of their pairwise (log) means is 1.095;
    # sorted sides would pair 20 with 10
    a = [10.0, 20.0, 30.0, 40.0, 50.0, 60.0, 1.0]
    b = [25.0, 20.0, 33.0, 40.0, 50.0, 72.0, 9.0]
    verdicts = verdicts_of(_pairs(a, b, failed_b={6}))      # pair 7's B failed: its A goes too
    assert [v.figure for v in verdicts] == ["p50"]          # rows/s 0 on both sides: left out
    (p50,) = verdicts
    ratios = np.log(np.array(b[:6]) / np.array(a[:6]))
    means = [(x + y) / 2 for x, y in itertools.combinations_with_replacement(ratios, 2)]
    assert p50.evidence.ratio == pytest.approx(math.exp(np.median(means)))
    assert p50.evidence.ratio == pytest.approx(1.0954, abs=1e-4)
    assert (p50.evidence.low, p50.evidence.high) == pytest.approx((1.0, 2.5))
    assert p50.evidence.basis == "6 paired repetitions"


def test_the_early_stop_looks_at_the_stricter_99_percent_interval_for_a_difference():
    # nine pairs, seven at 1.1 and two at 0.99: the 95 % interval starts at their mean sqrt(1.1 x 0.99),
    # the 99 % one at 0.99
    pairs = _pairs([10.0] * 9, [11.0] * 7 + [9.9] * 2)
    (p50,) = verdicts_of(pairs)
    assert p50.verdict == SLOWER and p50.evidence.low == pytest.approx(math.sqrt(1.1 * 0.99))
    assert not ab.settled(pairs, "p50", 0.05)
    assert ab.settled(_pairs([10.0] * 8, [11.0] * 8), "p50", 0.05)           # 99 %: [1.1, 1.1]
    assert ab.settled(_pairs([10.0] * 6, [10.0, 10.1, 9.9, 10.2, 9.8, 10.0]), "p50", 0.05)   # within ±5 %


class _Scripted:
    """A stand-in Runner whose B answers are scripted ratios of A's (no processes)."""
    ratios: list[float] = []

    def __init__(self, scenario, store, **_given):
        self.scenario, self.run_id = scenario, f"fake-{id(self)}"
        self.side = scenario.name[-1]

    def cancel(self):
        pass

    def run(self):
        import pandas as pd
        from workloads.run.runner import RunResult
        counts = _Scripted.counts
        counts[self.side] += 1
        p50 = 0.010 * (self.ratios[counts["B"] - 1] if self.side == "B" else 1.0)
        frame = pd.DataFrame([{"users": 1, "rate": None, "label": "1 user", "rows_per_s": 0.0, "mb_per_s": 0.0,
                               "ops_per_s": 1 / p50, "p50_s": p50, "p95_s": p50, "p99_s": p50,
                               "ops": getattr(self, "ops", None)}])
        return RunResult(self.run_id, "completed", "", frame)


def test_a_session_that_is_not_clear_runs_to_its_last_pair_and_says_how_many_would_settle_it(store, monkeypatch):
    _Scripted.ratios = [1.10, 0.92, 1.08, 0.95, 1.12, 0.90, 1.05, 0.97]
    _Scripted.counts = {"A": 0, "B": 0}
    monkeypatch.setattr(ab, "Runner", _Scripted)
    result = run_ab(held(), held(), store, max_pairs=8, seed=2, interleave="runs")
    assert result.outcome == "inconclusive" and len(result.pairs) == 8 and result.kept == 8
    (p50,) = [v for v in result.verdicts if v.figure == "p50"]
    assert p50.verdict == SAME and result.answered()
    assert result.needs_pairs > 8
    assert result.stop == f"inconclusive after 8 pairs: needs about {result.needs_pairs} to see ±5 %"


def test_the_last_look_needs_only_the_95_percent_interval_of_any_verdict(store, monkeypatch):
    # six pairs at 1.3x: no 99 % interval exists yet (the signed-rank one needs eight), the 95 % one is clear
    _Scripted.ratios = [1.30, 1.31, 1.29, 1.30, 1.32, 1.28]
    _Scripted.counts = {"A": 0, "B": 0}
    monkeypatch.setattr(ab, "Runner", _Scripted)
    result = run_ab(held(), held(), store, max_pairs=6, seed=3, interleave="runs")
    assert result.outcome == "clear" and result.stop.startswith("clear after 6 pairs"), result.stop


# ---- real runs of the no-op ------------------------------------------------------------------
def test_ten_against_twelve_ms_is_slower_with_its_interval_above_1_and_stops_early(store):
    result = run_ab(held(0.010), held(0.012), store, max_pairs=10, seed=7)
    assert result.status == "completed" and result.outcome == "clear", result.stop
    assert result.kept < 10 and result.stop == f"clear after {result.kept} pairs"
    (p50,) = [v for v in result.verdicts if v.figure == "p50"]
    assert p50.verdict == SLOWER and p50.evidence.low > 1.1 and p50.evidence.high < 1.3
    assert result.answered()
    # interleaved: each pair one A and one B run, both orders seen; every run in the catalog by name
    assert {p.order for p in result.pairs} == {"AB", "BA"}
    runs = {r["run_id"]: r for r in store.runs().to_dict("records")}
    for pair in result.pairs:
        assert runs[pair.a.run_id]["name"] == f"A/B {result.ab_id} · A"
        assert runs[pair.b.run_id]["name"] == f"A/B {result.ab_id} · B"
    record = load_ab(store, result.ab_id)
    assert record == json.loads(json.dumps(result.to_dict(), allow_nan=False))
    assert [p["order"] for p in record["pairs"]] == [p.order for p in result.pairs]


def test_a_against_itself_is_no_difference_and_json_is_alone_and_strict_on_stdout(tmp_path):
    done = _tickbench(tmp_path, "ab", "--workload", "noop", "--param", "hold_s=0.010", "--users", "1",
                      "--duration", "0.4", "--probes", "0", "--max-pairs", "6", "--order-seed", "1", "--json")
    assert done.returncode == 0, done.stderr[-2000:]

    def refuse(constant):
        raise ValueError(f"not strict JSON: {constant}")
    record = json.loads(done.stdout, parse_constant=refuse)
    assert record["kept_pairs"] == 6 and record["outcome"] == "clear"
    p50 = next(v for v in record["verdicts"] if v["figure"] == "p50")
    assert p50["verdict"] == SAME and p50["low"] < 1.02 < 1 / 0.98 and p50["high"] > 1 / 1.02
    assert record["scenario_a"]["params"] == record["scenario_b"]["params"]


def test_a_repetition_that_fails_is_dropped_with_its_reason_and_its_pair_and_counted(store, monkeypatch):
    made = []

    class Failing(Runner):
        def run(self):
            made.append(self.run_id)
            if len(made) == 2:
                raise RuntimeError("the server went away")
            return super().run()
    monkeypatch.setattr(ab, "Runner", Failing)
    result = run_ab(held(duration_s=0.2), held(duration_s=0.2), store, max_pairs=3, seed=1, interleave="runs")
    assert len(result.pairs) == 3 and result.kept == 2
    (dropped,) = [d for d in result.dropped() if d["run_id"] == made[1]]
    assert dropped["reason"] == "failed: RuntimeError: the server went away"
    partner = [d for d in result.dropped() if d["run_id"] != made[1]]
    assert all(d["reason"].startswith("its pair's") for d in partner)
    assert result.outcome == "too few" and not result.answered()
    assert result.stop == "too few pairs: kept 2 of 3; a verdict needs 6"
    assert all(v.verdict == CANNOT_TELL for v in result.verdicts)


def test_should_stop_cancels_the_run_under_way_and_keeps_every_completed_run(store):
    stop = threading.Event()
    started = []

    def progress(event):
        if event.runner is not None:
            started.append(event.runner.run_id)
            if len(started) == 2:       # the second repetition: stop it mid-run
                threading.Timer(0.8, stop.set).start()
    result = run_ab(held(duration_s=3.0), held(duration_s=3.0), store, max_pairs=4, seed=1,
                    on_progress=progress, should_stop=stop.is_set, interleave="runs")
    assert result.status == "cancelled" and result.outcome == "cancelled"
    assert len(started) == 2 and result.kept == 0
    statuses = {r["run_id"]: r["status"] for r in store.runs().to_dict("records")}
    assert statuses == {started[0]: "completed", started[1]: "cancelled"}
    assert load_ab(store, result.ab_id)["status"] == "cancelled"


def test_an_unknown_versus_target_exits_2_with_one_line(tmp_path):
    done = _tickbench(tmp_path, "ab", "--workload", "noop", "--versus-target", "nosuch", "--json")
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.strip().count("\n") == 0 and "Traceback" not in done.stderr
    assert "nosuch" in done.stderr


# ---- known slowdowns ---------------------------------------------------------------------------
def _p50(store, scenario) -> float:
    result = Runner(scenario, store).run()
    assert result.status == "completed", result.message
    return float(step_figures(store, result.run_id)["p50_s"].iloc[0])


def _least_p50(store, scenario, runs: int = 3) -> float:
    """The least p50 of a few runs: a machine busy with other tests only ever adds to a run's times."""
    return min(_p50(store, scenario) for _ in range(runs))


def test_the_noops_cpu_work_and_added_work_show_in_stored_p50(store):
    work = {ms: _least_p50(store, held(0.0, 0.3, work_s=ms / 1000)) for ms in (10, 11)}
    assert 0.0005 < work[11] - work[10] < 0.002
    assert 0.010 <= work[10] < 0.013
    # a share of the operation's own time: 10 ms of work and half as much again
    shared = _least_p50(store, held(0.0, 0.3, work_s=0.010, added_work_share=0.5))
    assert 1.4 < shared / work[10] < 1.6
    # a workload that does real work: a day read from pickle, with 5 ms added to each operation
    day = Scenario(name="day", workload="read-day", target="pickle", dataset="devices", users=(1,), operations=12,
                   probe_ops=0, scale=Scale(days=1, rows_per_day=2000),
                   target_config={"root": str(store.path.parent / "data")})
    plain = _least_p50(store, day)
    added = _least_p50(store, day.with_changes(params={"added_work_s": 0.005}))
    assert 0.004 < added - plain < 0.008


def test_added_work_is_given_in_milliseconds_to_run_and_ab_and_recorded_as_a_parameter():
    from app.cli.main import build_parser
    for command in ("run", "ab"):
        args = build_parser().parse_args([command, "--param", "rows=5", "--added-work", "2.5"])
        assert args.param == ["rows=5", "added_work_s=0.0025"]
        args = build_parser().parse_args([command, "--added-work", "10%"])
        assert args.param == ["added_work_share=0.1"]
    assert build_parser().parse_args(["ab", "--versus-added-work", "5 %"]).versus_added_work == "added_work_share=0.05"
    for wrong in ("-1", "nan", "ten", "2000%", "70000"):
        with pytest.raises(CliError, match="milliseconds from 0 to 60000, or a share"):
            build_parser().parse_args(["run", "--added-work", wrong])
    assert get_workload("read-day").validate({"added_work_share": "0.1"})["added_work_share"] == 0.1
    assert get_workload("read-day").validate({"added_work_s": "0.0025"})["added_work_s"] == 0.0025
    assert "added_work_s" not in get_workload("read-day").validate({})
    with pytest.raises(ValueError, match="below the minimum"):
        get_workload("noop").validate({"added_work_s": -1})


def test_a_percentile_of_pairs_too_short_to_have_one_is_cannot_tell_with_why():
    pairs = _pairs([10.0] * 8, [11.0] * 8)
    for p in pairs:
        for rep in (p.a, p.b):
            rep.figures[STEP].update({"p99": rep.figures[STEP]["p50"] * 2, "operations": 40.0})
    p50, p99 = verdicts_of(pairs)
    assert p50.verdict == SLOWER and p99.figure == "p99" and p99.verdict == CANNOT_TELL
    assert p99.why.startswith("a run of 40 operations has no p99 of its own") and p99.to_dict()["basis"] == p99.why
    assert not ab.settled(pairs, "p99", 0.05) and ab.needed_pairs(pairs, "p99", 0.05) is None
    for p in pairs:
        p.b.figures[STEP]["operations"] = p.a.figures[STEP]["operations"] = 100.0
    assert verdicts_of(pairs)[1].verdict == SLOWER and ab.settled(pairs, "p99", 0.05)


def test_a_session_on_a_percentile_its_runs_are_too_short_for_ends_at_once_and_says_so(store, monkeypatch):
    _Scripted.ratios = [1.0] * 8
    _Scripted.counts = {"A": 0, "B": 0}
    monkeypatch.setattr(_Scripted, "ops", 30, raising=False)
    monkeypatch.setattr(ab, "Runner", _Scripted)
    result = run_ab(held(), held(), store, max_pairs=8, seed=2, interleave="runs", primary="p99")
    assert result.outcome == "too few" and len(result.pairs) == 1, result.stop
    assert result.stop == "p99: a run of 30 operations has no p99 of its own (it takes 100: in fewer, the " \
                          "slowest operation stands in for it); make each run longer"
