"""A finding's verdict only where its ratio's spread allows: a bootstrap interval of a ratio of
medians from known operation times, and verdicts from stored runs whose truth is known (a cold arm
faster than its warm one; a noisy pair straddling a verdict; a tight pair that keeps it)."""
from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from tests.test_history import handmade_run
from workloads.run.records import OpRecord
from workloads.reproduce.confidence import median_ratio_interval
from workloads.reproduce.findings import FINDINGS, HOLDS, INCONCLUSIVE, NOT_HOLD
from workloads.reproduce.measured import ArmRun
from workloads.results.run_summary import run_answer
from workloads.results.store import ResultsStore

COLD = json.dumps({"cold": True, "cleared_kinds": "host page cache"})           # pickle files: their pages dropped
ENGINE_ONLY = json.dumps({"cold": True, "cleared_kinds": "engine caches"})     # a server without an agent


def test_a_ratio_of_identical_operations_has_no_spread():
    assert median_ratio_interval([2.0] * 5, [1.0] * 5) == (2.0, 2.0)


def test_the_interval_holds_the_ratio_and_narrows_with_more_operations():
    rng = np.random.default_rng(7)
    few = median_ratio_interval(rng.normal(3.0, 0.6, 5), rng.normal(1.0, 0.2, 5))
    many = median_ratio_interval(rng.normal(3.0, 0.6, 500), rng.normal(1.0, 0.2, 500))
    assert few[0] < many[0] <= 3.0 <= many[1] < few[1]
    assert many[1] - many[0] < 0.5 * (few[1] - few[0])
    # the same operations give the same interval: a verdict does not flicker between views
    top, bottom = rng.normal(3.0, 0.6, 9), rng.normal(1.0, 0.2, 9)
    assert median_ratio_interval(top, bottom) == median_ratio_interval(top, bottom)
    with pytest.raises(ValueError, match="operations on both sides"):
        median_ratio_interval([], [1.0])


def _ops(times, cold=False, facts=COLD):
    return [OpRecord(step=0, worker=0, seq=i, op="read_day", t_start=float(i), total_s=t, rows=100, bytes=800,
                     ok=True, extra=facts if cold else "") for i, t in enumerate(times)]


def _arm(store, run_id, times, cache, facts=COLD, repeats=()):
    """One run of an arm from its operation times; ``repeats``: earlier runs of it, by their times."""
    handmade_run(store, run_id, [(1, 10.0, _ops(times, cold=cache == "cold", facts=facts))], workload="read-day",
                 target="pickle", cache=cache)
    arm = ArmRun(run_id, pd.Timestamp.now(), run_answer(store, run_id), {}, {})
    arm.repeats = tuple(_arm(store, f"{run_id}-{k}", earlier, cache, facts) for k, earlier in enumerate(repeats, 1))
    return arm


def _pickle_cold_warm():
    return next(f for f in FINDINGS["000"] if f.statement == "pickle cold / warm (L1)")


@pytest.fixture
def store(tmp_path):
    s = ResultsStore(tmp_path / "results")
    yield s
    s.close()


def test_cold_reads_faster_than_every_warm_one_are_inconclusive_not_a_verdict(store):
    """Issue 26's run: every cold op (0.22-0.38 s) beat every warm one (0.47-0.62 s)."""
    runs = {("day-l1", "pickle-cold"): _arm(store, "cold", [0.22, 0.30, 0.25, 0.38, 0.27], "cold"),
            ("day-l1", "pickle-warm"): _arm(store, "warm", [0.47, 0.55, 0.62, 0.50, 0.58], "warm")}
    finding = _pickle_cold_warm().evaluate("000", runs, store)
    assert finding.measured_value == pytest.approx(0.27 / 0.55)
    assert finding.verdict == INCONCLUSIVE, finding.line
    assert "cold operations were faster than the warm ones" in finding.why and "5 and 5 operations" in finding.why


def test_a_noisy_pair_straddling_a_verdict_is_inconclusive_and_a_tight_one_keeps_it(store):
    # published 72/34 = 2.1x; medians 2.2 / 1.0 but each side spread wide: the interval reaches
    # under 1.1 (no effect) and over 2.6 (more strongly)
    noisy = {("day-l1", "pickle-cold"): _arm(store, "noisy-cold", [0.9, 1.3, 2.2, 3.1, 4.0], "cold"),
             ("day-l1", "pickle-warm"): _arm(store, "noisy-warm", [0.5, 0.8, 1.0, 1.4, 2.1], "warm")}
    finding = _pickle_cold_warm().evaluate("000", noisy, store)
    assert finding.measured_value == pytest.approx(2.2)
    assert finding.verdict == INCONCLUSIVE and finding.why.startswith("noisy: 5 and 5 operations give "), finding.line
    # a tight pair keeps its verdict where three runs of each agree (one run each: see below)
    tight = {("day-l1", "pickle-cold"): _arm(store, "tight-cold", [2.18, 2.2, 2.21, 2.19, 2.2], "cold",
                                             repeats=([2.2, 2.19, 2.21, 2.2, 2.18], [2.21, 2.2, 2.2, 2.19, 2.2])),
             ("day-l1", "pickle-warm"): _arm(store, "tight-warm", [0.99, 1.0, 1.01, 1.0, 1.0], "warm",
                                             repeats=([1.0, 1.01, 0.99, 1.0, 1.0], [1.0, 1.0, 0.99, 1.01, 1.0]))}
    assert _pickle_cold_warm().evaluate("000", tight, store).verdict == HOLDS
    flat = {("day-l1", "pickle-cold"): _arm(store, "flat-cold", [1.0, 1.01, 0.99, 1.0, 1.02], "cold",
                                            repeats=([1.0, 1.0, 1.01, 0.99, 1.0],) * 2),
            ("day-l1", "pickle-warm"): _arm(store, "flat-warm", [1.0, 0.99, 1.01, 1.0, 1.0], "warm",
                                            repeats=([1.0, 1.0, 0.99, 1.01, 1.0],) * 2)}
    assert _pickle_cold_warm().evaluate("000", flat, store).verdict == NOT_HOLD


def test_a_cold_arm_that_cleared_the_engine_caches_only_gives_no_cold_figure_and_says_why(store):
    """A server's cold round without agents keeps its hosts' page caches: not the reports' cold."""
    runs = {("day-l1", "pickle-cold"): _arm(store, "engine-cold", [2.2, 2.3, 2.1, 2.4, 2.2], "cold", ENGINE_ONLY),
            ("day-l1", "pickle-warm"): _arm(store, "warm", [1.0, 1.1, 0.9, 1.0, 1.0], "warm")}
    finding = _pickle_cold_warm().evaluate("000", runs, store)
    assert finding.measured_value is None
    assert "cleared the engine's caches only" in finding.why and "tickbench agent" in finding.why
    step = runs[("day-l1", "pickle-cold")].answer.steps[0]
    assert step.cold_line() == "cold: 5 of 5 operations (cleared: engine caches only)"
    assert (step.cold_ops, step.host_cold_ops) == (5, 0)


def test_history_and_compare_say_what_a_cold_run_cleared(store):
    from workloads.results.history import compare_frame, history_rows
    _arm(store, "engine-cold", [2.2, 2.3, 2.1, 2.4, 2.2], "cold", ENGINE_ONLY)
    _arm(store, "disk-cold", [3.2, 3.3, 3.1, 3.4, 3.2], "cold")
    caches = {row["run_id"]: row["cache"] for row in history_rows(store)}
    assert caches == {"engine-cold": "cold: engine caches only", "disk-cold": "cold: host page cache"}
    frame = compare_frame(store, ["engine-cold", "disk-cold"]).set_index("run_id")
    assert frame.loc["engine-cold", "cleared"] == "engine caches only"
    assert frame.loc["disk-cold", "cleared"] == "host page cache"
    assert list(frame["host_cold_ops"]) == [0, 5]
    # an exported chart's caption says it too
    from workloads.results.figures import cache_words
    assert cache_words(store, store.run("engine-cold")) == "cold (engine caches only)"
    assert cache_words(store, store.run("disk-cold")) == "cold (host page cache)"


# ---- across runs: a verdict only where repetitions agree (issue 52) ------------------------------
def _two_fold():
    """A finding published at 2×: one arm's median time over another's."""
    from workloads.reproduce.findings import _Ratio, _quotient, _seconds
    return _Ratio("slow / fast", 2.0, None, _quotient(_seconds(0), _seconds(1), ("x", "slow"), ("x", "fast")),
                  "the two arms are as fast here")


def _times(median, n=9, spread=0.01):
    return [median * (1 + spread * (k - n // 2) / n) for k in range(n)]


def _pair(store, name, ratios):
    """Runs of two arms whose medians are ``ratios[k]`` apart in repetition k (the newest first)."""
    slow, *earlier = [_times(r) for r in ratios]
    return {("x", "slow"): _arm(store, f"{name}-slow", slow, "warm", repeats=earlier),
            ("x", "fast"): _arm(store, f"{name}-fast", _times(1.0), "warm", repeats=[_times(1.0)] * len(earlier))}


def test_one_run_each_near_no_effect_is_inconclusive_not_does_not_hold(store):
    """Issue 52: a bootstrap over one run's operations is sure of that run (1.08× within ±1 %), not
    of a repeat, which lands up to ±35 % away: 1.08× against a published 2× is no "does not hold"."""
    finding = _two_fold().evaluate("000", _pair(store, "once", [1.08]), store)
    assert finding.measured_value == pytest.approx(1.08)
    assert finding.verdict == INCONCLUSIVE, finding.line
    assert "1.1× ± 35 % from one run each" in finding.why and "run it 3 times here" in finding.why, finding.line
    assert "0.8–1.5×, it could be “does not hold on this machine” or “holds”" in finding.why, finding.line


def test_a_verdict_stands_where_three_runs_each_agree_and_not_on_one(store):
    from workloads.reproduce.findings import STRONGER
    # 3× against 2×: one run each could be 2.2-4.1×, "holds" or "holds more strongly"
    assert _two_fold().evaluate("000", _pair(store, "one", [3.0]), store).verdict == INCONCLUSIVE
    agreed = _two_fold().evaluate("000", _pair(store, "three", [3.0, 2.9, 3.1]), store)
    assert agreed.verdict == STRONGER and agreed.measured == "3.0× (median of 3 runs)", agreed.line
    assert len(agreed.run_ids) == 6 and agreed.run_ids[:2] == ("three-slow", "three-fast")
    # three runs that disagree (1.0×, 2.0×, 3.0×) settle nothing
    split = _two_fold().evaluate("000", _pair(store, "split", [1.0, 2.0, 3.0]), store)
    assert split.verdict == INCONCLUSIVE and split.why.startswith("its 3 runs each give "), split.line
    assert "could be “does not hold on this machine” or “holds more strongly”" in split.why, split.line
    # two runs that agree still carry the band: one more run would do
    two = _two_fold().evaluate("000", _pair(store, "two", [1.0, 1.0]), store)
    assert two.verdict == INCONCLUSIVE and "from 2 runs each" in two.why and "run it 1 more time" in two.why, two.line
    # and three that agree on no effect say "does not hold"
    assert _two_fold().evaluate("000", _pair(store, "none", [1.0, 1.01, 0.99]), store).verdict == NOT_HOLD


def _gallery_run(store, run_id, experiment, host, times, workload="read-day"):
    store.create_run(run_id, {"name": run_id, "dataset": "taq", "target": "pickle", "workload": workload,
                              "users": [1], "cache": "warm", "experiment": experiment}, {"host": host})
    store.add_step(run_id, 0, 1, "1 users", {})
    store.add_ops(run_id, _ops(times))
    store.finish_step(run_id, 0, 10.0, "completed", [])
    store.finish_run(run_id, "completed")


def test_the_gallery_reads_earlier_runs_of_a_slot_here_as_its_repeats(store):
    from workloads.reproduce.measured import gallery_runs
    slot = "000/day-l1/pickle-warm/tiny"
    for run_id, host, workload in (("a", "here", "read-day"), ("b", "elsewhere", "read-day"),
                                   ("c", "here", "slice-download"), ("d", "here", "read-day"),
                                   ("e", "here", "read-day")):
        _gallery_run(store, run_id, slot, host, _times(1.0), workload)
    arm = gallery_runs(store, "000").at("tiny")[("day-l1", "pickle-warm")]
    # the newest counts; the earlier runs of its scenario on its host are its repeats, newest first
    assert arm.run_id == "e" and [r.run_id for r in arm.repeats] == ["d", "a"]
    assert arm.repetition(0) is arm and arm.repetition(2).run_id == "a" and arm.repetition(3) is None
