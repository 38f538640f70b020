import numpy as np
import pytest

from workloads.histogram import LogHistogram
from workloads.metrics import LiveAggregates
from workloads.records import OpRecord


def test_histogram_percentiles_within_one_percent():
    rng = np.random.default_rng(1)
    values = rng.lognormal(mean=-4, sigma=1.0, size=50_000)
    hist = LogHistogram()
    hist.add_many(values)
    for q in (50, 95, 99):
        exact = np.percentile(values, q)
        assert hist.percentile(q) == pytest.approx(exact, rel=0.02)


def test_histogram_merge_and_empty():
    a, b = LogHistogram(), LogHistogram()
    assert a.percentile(50) == 0.0
    a.add_many(np.full(10, 0.001))
    b.add_many(np.full(10, 1.0))
    a.merge(b)
    assert a.total == 20
    assert a.percentile(25) == pytest.approx(0.001, rel=0.02)
    assert a.percentile(90) == pytest.approx(1.0, rel=0.02)


def _rec(worker, seq, t_start, total, rows=10, ok=True):
    return OpRecord(0, worker, seq, "x", t_start, total, 0.3 * total, None, None, None, 0.7 * total,
                    rows, rows * 8, ok, "" if ok else "Err: x", "")


def test_live_aggregates_bin_throughput_per_second_and_track_sweep():
    agg = LiveAggregates("r", "duckdb", "read-day", steps_total=1)
    agg.begin_step(0, 2, run_clock=0.0)
    records = [_rec(w, i, i * 0.1, 0.05) for w in range(2) for i in range(30)]  # 3 s of ops
    agg.add(records, step_offset=0.0)
    agg.add([_rec(0, 99, 0.0, 0.01, ok=False)], step_offset=0.0)
    snap = agg.snapshot(run_clock=4.0)
    per_second = {p.t: p.ops_per_s for p in snap.throughput}
    assert per_second[1.0] == 20 and per_second[2.0] == 20 and per_second[3.0] == 20
    assert sum(p.rows_per_s for p in snap.throughput) == 600
    assert snap.ops_done == 60 and snap.ops_failed == 1
    assert "Err: x" in snap.message
    assert snap.phase_means["io"] == pytest.approx(0.015)
    assert snap.latency and snap.latency[-1].p50 == pytest.approx(0.05, rel=0.02)
    assert len(snap.sweep) == 1 and not snap.sweep[0].complete
    agg.end_step()
    assert agg.snapshot(run_clock=5.0).sweep[0].complete


def test_worker_states_and_errors_reach_the_snapshot():
    agg = LiveAggregates("r", "pickle", "read-day", steps_total=2)
    agg.begin_step(1, 3, run_clock=1.0)
    agg.set_worker(0, "running")
    agg.set_worker(2, "failed", "worker process killed by SIGKILL")
    snap = agg.snapshot(2.0)
    assert snap.workers == {0: "running", 1: "starting", 2: "failed"}
    assert snap.worker_errors[2].endswith("SIGKILL") and snap.step_index == 1
