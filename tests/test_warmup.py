"""The warm-up rule (``workloads.run.warmup``): a warm step's worker warms up until its process is
steady, then stops; the measured operations that follow are the steady ones."""
from __future__ import annotations

import time
from types import SimpleNamespace

import pandas as pd
import pytest

from tests.warmup_reference import assert_warmups_follow_rule
from workloads.run.records import MEASURED
from workloads.targets.base import OpResult
from workloads.run.warmup import BUDGET_S, MAX_OPS, more_warmup, steady
from workloads.run.worker import _Operations


def test_steady_needs_three_times_within_fifteen_percent_of_their_median():
    assert not steady([0.1, 0.1])                            # too few to tell
    assert steady([0.5, 0.100, 0.110, 0.090])
    assert not steady([0.100, 0.100, 0.120])                 # 0.12 is 20 % above the median
    assert steady([0.100, 0.100, 0.114])


@pytest.mark.parametrize("times, made", [
    ([0.219, 0.221, 0.072, 0.067, 0.061, 0.060], 5),        # DuckDB's fresh process: steady after 5
    ([0.069, 0.016, 0.013, 0.089, 0.011, 0.009, 0.010, 0.008], 7),   # chDB's compile on the 4th run
    ([6.0, 5.0], 1),                                         # past the budget: warmed once, as before
    ([0.3, 0.1] * 10, MAX_OPS),                              # never steady: capped
])
def test_a_warm_worker_warms_up_until_the_rule_says_steady(times, made):
    count = 0
    while more_warmup(times[:count], minimum=1):
        count += 1
    assert count == made


def test_the_minimum_comes_first_and_zero_means_none():
    assert more_warmup([0.1, 0.1, 0.1], minimum=4)           # the scenario's minimum always runs
    assert not more_warmup([], minimum=0)                    # no warm-up asked: none at all
    assert not more_warmup([BUDGET_S], minimum=1)


class _Scheduled:
    """A workload whose operation ``seq`` sleeps a known time: slow at first, then steady."""

    name = op_name = "scheduled"
    uses_target = True
    bounded_by_operations = True

    def __init__(self, warmups, measured):
        self.warmups, self.measured, self.seqs = warmups, measured, []

    def next_op(self, ctx, seq):
        self.seqs.append(seq)
        delay = self.warmups[min(seq, len(self.warmups) - 1)] if ctx.state["warming"] else self.measured

        def op():
            time.sleep(delay)
            return OpResult(rows=1, nbytes=1)
        return op


class _Pipe:
    def __init__(self):
        self.sent = []

    def send(self, message):
        self.sent.append(message)


def _operations(cache: str, warmup_ops: int, warmups, measured=0.02):
    scenario = SimpleNamespace(cache=cache, warmup_ops=warmup_ops, operations=3, duration_s=0.0, probe_ops=0)
    target = SimpleNamespace(drop_cache=lambda layout: ["dropped"], probed_ops=frozenset(), config={},
                             engine_caches_data=False)
    ctx = SimpleNamespace(scenario=scenario, target=target, layout=None, rows_done=0, params={},
                          step=SimpleNamespace(users=1, rate=0.0), state={"warming": True})
    spec = SimpleNamespace(worker=0, step={"index": 0}, host="", turn=None)
    workload = _Scheduled(warmups, measured)
    return _Operations(spec, ctx, workload, _Pipe()), ctx


def _warmup_frame(ops: _Operations) -> pd.DataFrame:
    return pd.DataFrame(ops._warmups.take())


def test_a_worker_that_starts_slow_warms_up_past_the_slow_operations():
    # 300 and 200 ms, then 40 ms: no three of the first four can agree within 15 %
    ops, ctx = _operations("warm", 1, [0.3, 0.2, 0.04])
    ops.warm_up()
    frame = _warmup_frame(ops)
    assert len(frame) >= 5 and list(frame["total_s"][:2] > 0.15) == [True, True]
    assert_warmups_follow_rule(frame.assign(kind="warmup"), minimum=1)


def test_a_cold_step_warms_up_its_minimum_only():
    ops, _ = _operations("cold", 2, [0.3, 0.2, 0.04])
    ops.warm_up()
    assert len(ops._warmups) == 2


def test_measured_operations_start_after_the_warm_up_and_are_the_steady_ones():
    ops, ctx = _operations("warm", 1, [0.3, 0.04], measured=0.04)
    ops.warm_up()
    ctx.state["warming"] = False
    stop = SimpleNamespace(is_set=lambda: False)
    ops.run(MEASURED, time.monotonic(), stop)
    measured = [r for batch in ops.conn.sent for r in _records(batch)]
    assert len(measured) == 3 and all(r["total_s"] < 0.2 for r in measured)


def _records(batch):
    columns = batch.batch
    names = list(columns)
    return [dict(zip(names, values)) for values in zip(*(columns[n] for n in names))]


def test_estimates_count_the_warm_ups_a_worker_is_likely_to_make():
    from workloads.run.warmup import expected_warmup_ops

    assert expected_warmup_ops(1, 0.05, cold=True) == 1          # a cold step: its minimum
    assert expected_warmup_ops(1, 0.05, cold=False) == 4         # a slow first, then three that agree
    assert expected_warmup_ops(1, 3.0, cold=False) == 1          # past the budget after one
    assert expected_warmup_ops(6, 0.05, cold=False) == 6         # the scenario's minimum first
    assert expected_warmup_ops(0, 0.05, cold=False) == 0         # none asked, none made
