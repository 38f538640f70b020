"""What a comparison holds in memory: one pair of steps' records at a time, and a resample bounded
whatever a run's records claim (a hostile run's millions of "rounds")."""
from __future__ import annotations

import tracemalloc

import numpy as np

from workloads.results.compare import compare_runs
from workloads.results.compare_stats import MAX_BLOCKS, Sample, quantile_interval, ratio_of_sums_interval, round_blocks
from workloads.results.store import ResultsStore
from workloads.run.runner import Runner
from workloads.scenario import Scenario


def test_a_comparison_holds_one_pair_of_steps_records_at_a_time(tmp_path):
    store = ResultsStore(tmp_path / "results")
    try:
        scenario = Scenario(name="steps", workload="noop", users=(1, 2, 3), operations=0, duration_s=0.5, probe_ops=0,
                            params={"hold_s": 0.002, "rows": 10})
        ids = [Runner(scenario, store).run().run_id for _ in range(2)]
        per_step = {(run, int(step)): int(count) for run in ids for step, count in store.query(
            "SELECT step, count(*) FROM ops WHERE run_id = ? AND ok GROUP BY step", [run])}
        assert len(per_step) == 6 and max(per_step.values()) < sum(per_step.values()) / 2
        read = []
        ops = store.ops

        def counted(run_id, *args, **kwargs):
            frame = ops(run_id, *args, **kwargs)
            read.append((run_id, kwargs.get("step"), len(frame)))
            return frame
        store.ops = counted
        found = compare_runs(store, *ids)
        assert found.comparable and {c.step for c in found.changes} == {"1 user", "2 users", "3 users"}
        assert read and all(step is not None and rows <= per_step[(run, step)] for run, step, rows in read), read
    finally:
        store.close()


def test_rounds_past_the_cap_are_merged_into_blocks_of_consecutive_rounds():
    few = np.repeat(np.arange(40), 3)
    assert (round_blocks(few) == few).all()                         # a real step's rounds: each its own
    many = np.repeat(np.arange(50_000), 2)
    blocks = round_blocks(many)
    assert blocks.max() + 1 == MAX_BLOCKS and (np.diff(blocks) >= 0).all()
    assert len(set(zip(many.tolist(), blocks.tolist()))) == 50_000  # a round is never split


def test_a_resample_of_a_hostile_runs_rounds_stays_small():
    rng = np.random.default_rng(5)
    n = 60_000                                                      # one operation a round, every round distinct
    rounds, seconds = np.arange(n), rng.lognormal(0, 0.3, n)
    sample = Sample(seconds, np.ones(n), np.zeros(n, dtype=np.int64), rounds)
    tracemalloc.start()
    try:
        low, high = ratio_of_sums_interval(1.0, sample, sample)
        q_low, q_high = quantile_interval(1.0, seconds, seconds, 0.5, base_rounds=rounds, new_rounds=rounds)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert low < 1 < high and q_low < 1 < q_high
    assert peak < 120 << 20, f"{peak / 2**20:.0f} MB"               # every round drawn 2,000 times: 960 MB


def test_a_quantile_of_whole_rounds_found_by_rank_is_the_one_concatenating_and_sorting_gives():
    from workloads.results.compare_stats import _round_quantile_draws
    rng = np.random.default_rng(11)
    for count, users in ((12, 4), (300, 7), (3_000, 2)):           # the last merged into 2,000 blocks
        rounds = np.repeat(np.arange(count), users)
        values = rng.lognormal(0, 1, rounds.size)
        values[::5] = values[1::5][:values[::5].size]                 # ties, as rounded times make
        block = round_blocks(rounds)
        groups = [values[block == g] for g in range(block.max() + 1)]
        for q in (0.5, 0.95, 0.99):
            found = _round_quantile_draws(values, rounds, q, np.random.default_rng(3), 300)
            picks = np.random.default_rng(3).integers(0, len(groups), size=(300, len(groups)))
            brute = [np.quantile(np.concatenate([groups[i] for i in row]), q) for row in picks]
            assert np.allclose(found, brute, rtol=0, atol=1e-12), (count, q)
