"""Open-loop load (``workloads.run.schedule``): operations start on a schedule, latency counts from the
intended start, late and missed starts are counted, and a stall is counted for every operation it
delayed where a closed loop counts it once."""
from __future__ import annotations

import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

from workloads.results.figures import step_figures
from workloads.run.records import MEASURED, MISSED
from workloads.results.run_summary import load_knee, run_answer
from workloads.run.runner import Runner
from workloads.scenario import Scenario
from workloads.run.schedule import LATE_S, Schedule
from workloads.results.store import ResultsStore


@pytest.fixture
def store(tmp_path):
    s = ResultsStore(tmp_path / "results")
    yield s
    s.close()


def test_a_constant_schedule_spaces_the_steps_users_evenly():
    users = [Schedule(100.0, "constant", u, 4, np.random.SeedSequence([1, 0, u])) for u in range(4)]
    starts = sorted(s.next_start() for s in users for _ in range(25))
    assert np.allclose(np.diff(starts), 1 / 400)          # 4 users x 100/s: one start every 2.5 ms in all
    assert starts[0] == 0.0


def test_a_poisson_schedule_draws_exponential_gaps_of_the_rate():
    schedule = Schedule(500.0, "poisson", 0, 1, np.random.SeedSequence([7, 0, 0]))
    starts = np.array([schedule.next_start() for _ in range(20_000)])
    gaps = np.diff(starts)
    assert gaps.mean() == pytest.approx(1 / 500, rel=0.03)
    assert gaps.std() == pytest.approx(1 / 500, rel=0.05)      # an exponential's spread is its mean
    again = Schedule(500.0, "poisson", 0, 1, np.random.SeedSequence([7, 0, 0]))
    assert [again.next_start() for _ in range(5)] == starts[:5].tolist()


def _stalling(**changes) -> Scenario:
    # every 1 s the no-op "server" stops answering for 0.3 s: a known delay
    return Scenario(workload="noop", users=(1,), operations=0, duration_s=2.0, warmup_ops=0, probe_ops=0,
                    params={"stall_every_s": 1.0, "stall_s": 0.3}, **changes)


def test_the_open_loop_counts_a_stall_for_every_operation_it_delayed_where_the_closed_loop_counts_it_once(store):
    closed = Runner(_stalling(), store).run()
    opened = Runner(_stalling(rate=(200.0,)), store).run()
    assert closed.status == opened.status == "completed"
    shut = step_figures(store, closed.run_id).iloc[0]
    open_ = step_figures(store, opened.run_id).iloc[0]
    # closed: one operation per stall window waited (the user sent nothing meanwhile), so of its
    # ~10^5 operations two or three were slow and its p99 knows nothing of the stalls
    # (a window's first operation waits what is left of it: 0.1 s is slow enough to tell; on a loaded
    # machine the user's first operation can start so late that the first window's rest is shorter)
    stalled = store.ops(closed.run_id, (MEASURED,))["total_s"] > 0.1
    assert 1 <= stalled.sum() <= 3 and shut.ops > 10_000
    assert shut.p99_s < 0.01 and pd.isna(shut.latency_p99_s) and pd.isna(shut.late_ops)
    # open: 30 % of the schedule falls inside a stall window and waits up to 0.3 s for its end
    ops = store.ops(opened.run_id, (MEASURED,))
    waited = ops["t_start"] + ops["total_s"] - ops["intended_s"]
    assert open_.latency_p99_s == pytest.approx(float(np.quantile(waited, 0.99)), rel=1e-9)
    assert open_.latency_p99_s > 0.2                              # the stall, for the operations it delayed
    assert open_.p99_s < 0.35                                     # their service times: the stalled ones only
    assert 0.2 * 400 < open_.late_ops < 0.45 * 400                # ~ 0.3 s of every 1 s at 200/s over 2 s
    assert open_.rate == 200.0 and open_.scheduled_ops == open_.ops + open_.missed_ops


def test_a_user_held_past_the_steps_end_leaves_its_scheduled_starts_counted_as_missed(store):
    # a stall of 1.2 s from the start of a 1-s step: the user cannot reach the starts of its end
    scenario = Scenario(workload="noop", users=(1,), operations=0, duration_s=1.0, warmup_ops=0, probe_ops=0,
                        params={"stall_every_s": 10.0, "stall_s": 1.2}, rate=(100.0,))
    result = Runner(scenario, store).run()
    figures = step_figures(store, result.run_id).iloc[0]
    missed = store.ops(result.run_id, (MISSED,))
    assert figures.missed_ops == len(missed) > 50
    assert figures.scheduled_ops == 100                    # 1 s at 100/s, every start either run or missed
    assert missed["intended_s"].between(0, 1.0).all() and missed["total_s"].isna().all()


def test_latency_departs_from_service_time_at_the_knee():
    assert load_knee([100, 200, 400, 800], [0.002, 0.0021, 0.009, 0.5], [0.002, 0.002, 0.002, 0.002]) == 400
    assert load_knee([100, 200], [0.002, 0.0024], [0.002, 0.002]) is None
    # a late wake-up of under LATE_S on a microsecond service time is not a queue
    assert load_knee([1000], [LATE_S * 0.9], [1e-6]) is None


def test_a_rate_sweep_is_a_step_per_rate_and_its_answer_has_a_knee(store):
    scenario = Scenario(workload="noop", users=(1,), operations=0, duration_s=1.0, warmup_ops=0, probe_ops=0,
                        params={"stall_every_s": 0.5, "stall_s": 0.2}, rate=(20.0, 400.0))
    result = Runner(scenario, store).run()
    answer = run_answer(store, result.run_id)
    assert [s.rate for s in answer.steps] == [20.0, 400.0] and answer.is_open_loop and not answer.is_sweep
    assert [s.label for s in answer.steps] == ["1 user at 20 ops/s", "1 user at 400 ops/s"]
    assert answer.load_knee_rate is not None and "departs" in answer.load_note


@pytest.mark.parametrize("rate, message", [("fast", "rate: expected operations per second"),
                                           (-5, "a rate is a positive number"),
                                           ([100, 0], "a rate is a positive number")])
def test_a_bad_rate_is_refused_with_what_a_rate_is(rate, message):
    with pytest.raises(ValueError, match=message):
        Scenario.from_dict({"workload": "noop", "rate": rate})


def test_a_workload_that_sweeps_its_own_steps_refuses_a_rate(store):
    with pytest.raises(ValueError, match="sweeps steps of its own"):
        Runner(Scenario(workload="upload-sweep", rate=(10.0,)), store)


def test_the_command_line_runs_an_open_loop_and_prints_its_table(tmp_path):
    done = subprocess.run([sys.executable, "-m", "app", "run", "--workload", "noop", "--duration", "1",
                           "--rate", "300", "--schedule", "poisson", "--warmup", "0", "--probes", "0"],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "Open loop" in done.stdout and "offered ops/s" in done.stdout
    bad = subprocess.run([sys.executable, "-m", "app", "run", "--workload", "noop", "--rate", "soon"],
                         capture_output=True, text=True, timeout=60)
    assert bad.returncode != 0 and "--rate" in bad.stdout + bad.stderr
