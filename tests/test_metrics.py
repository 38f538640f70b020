import numpy as np
import pytest

from workloads.run.histogram import LogHistogram
from workloads.run.metrics import LiveAggregates
from workloads.run.records import OpRecord


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


def _rec(worker, seq, t_start, total, rows=10, ok=True, kind="measured", io=None, decode=None):
    return OpRecord(step=0, worker=worker, seq=seq, op="x", t_start=t_start, total_s=total, rows=rows,
                    bytes=rows * 8, ok=ok, kind=kind, io_s=0.3 * total if io is None else io,
                    decode_s=0.7 * total if decode is None else decode, error="" if ok else "Err: x")


def test_live_aggregates_bin_throughput_per_second_and_track_sweep():
    agg = LiveAggregates("r", "duckdb", "read-day", steps_total=1)
    agg.begin_step(0, 2, "2 users", run_clock=0.0)
    agg.release_step(0.5)                  # the workers took 0.5 s to start: not in the window
    records = [_rec(w, i, i * 0.1, 0.05) for w in range(2) for i in range(30)]  # 3 s of ops
    agg.add(records, step_offset=0.5)
    agg.add([_rec(0, 99, 0.0, 0.01, ok=False)], step_offset=0.5)
    snap = agg.snapshot(run_clock=4.5)
    per_second = {p.t: p.ops_per_s for p in snap.throughput}
    # the half second after the release joins the next second: 30 operations over 1.5 s, the
    # workers' steady rate (a half-second bin of its own would have charted 10 a second)
    assert list(per_second) == [2.0, 3.0, 4.0]
    assert per_second[2.0] == 20 and per_second[3.0] == 20
    assert [p.span_s for p in snap.throughput] == [1.5, 1.0, 1.0]
    assert sum(p.rows_per_s * p.span_s for p in snap.throughput) == pytest.approx(600)
    assert snap.ops_done == 60 and snap.ops_failed == 1
    assert "Err: x" in snap.message
    assert snap.phase_means["io"] == pytest.approx(0.015)
    assert snap.phase_ops == 60 and snap.phase_source == "measured" and snap.phase_step == "2 users"
    assert snap.latency and snap.latency[-1].p50 == pytest.approx(0.05, rel=0.02)
    assert len(snap.sweep) == 1 and not snap.sweep[0].complete and not snap.sweep[0].exact
    # the window runs from the release to the last end (2.95 s after it), not from the spawn
    assert snap.sweep[0].rows_per_s == pytest.approx(600 / 2.95)
    agg.end_step({"rows_per_s": 123.0, "mb_per_s": 0.5, "ops_per_s": 7.0, "p50_s": 0.04, "p99_s": 0.06,
                  "short": False, "mean_s": 0.05, "first_op_s": 0.2,
                  "io_s": 0.01, "io_n": 4, "io_p50_s": 0.01, "phase_source": "measured"})
    final = agg.snapshot(run_clock=5.0)
    # the stored figures replace the estimate once the step ends: the live view ends on them
    assert final.sweep[0].complete and final.sweep[0].exact and final.sweep[0].rows_per_s == 123.0
    assert final.phase_means == {"io": 0.01} and final.phase_ops == 4 and final.phase_exact
    assert final.first_op_s == 0.2


def test_a_release_just_before_a_second_ends_charts_no_false_zero():
    agg = LiveAggregates("r", "duckdb", "read-day", steps_total=1)
    agg.begin_step(0, 1, "1 user", run_clock=0.0)
    agg.release_step(1.95)                 # 50 ms before the second ends: no operation ends in it
    agg.add([_rec(0, i, 0.08 * i, 0.08) for i in range(25)], step_offset=1.95)    # ends 2.03 .. 3.95
    points = agg.snapshot(run_clock=4.5).throughput
    assert [p.t for p in points] == [3.0, 4.0]
    assert all(p.ops_per_s > 0 for p in points)
    assert points[0].ops_per_s == pytest.approx(13 / 1.05)         # ends in [1.95, 3.0): 13 operations


def test_the_second_under_way_is_a_provisional_point_while_the_first_whole_one_is_not_over():
    """Released at 4.3 s, operations ending from 4.4 s: at 5.0 s no whole second is charted, yet the
    header gives a rate; the snapshot carries the rate so far (ended rows over 4.3 .. 5.0 s)."""
    agg = LiveAggregates("r", "duckdb", "read-day", steps_total=1)
    agg.begin_step(0, 1, "1 user", run_clock=0.0)
    agg.release_step(4.3)
    agg.add([_rec(0, i, 0.1 * i, 0.1, rows=1_000) for i in range(6)], step_offset=4.3)   # end 4.4 .. 4.9
    early = agg.snapshot(run_clock=5.0)
    assert early.throughput == [] and early.sweep[0].rows_per_s > 0
    assert early.throughput_tail.t == 5.0 and early.throughput_tail.span_s == pytest.approx(0.7)
    assert early.throughput_tail.rows_per_s == pytest.approx(6_000 / 0.7)
    agg.add([_rec(0, 6 + i, 0.7 + 0.1 * i, 0.1, rows=1_000) for i in range(9)], step_offset=4.3)  # 5.1 .. 5.9
    later = agg.snapshot(run_clock=6.5)
    assert [p.t for p in later.throughput] == [6.0]                # 4.3 .. 6.0 as one point
    assert later.throughput_tail is None                          # nothing ended after 6.0 yet
    agg.set_status("completed")
    assert agg.snapshot(run_clock=7.0).throughput_tail is None     # a finished run has no second under way


def test_warm_up_and_probe_records_stay_out_of_throughput_and_latency():
    agg = LiveAggregates("r", "pickle", "read-day", steps_total=1)
    agg.begin_step(0, 1, "1 user", run_clock=0.0)
    agg.release_step(1.0)
    agg.add([_rec(0, 0, -0.9, 0.8, kind="warmup")], step_offset=1.0)
    agg.add([_rec(0, i, 0.1 * i, 0.1, io=None, decode=None) for i in range(5)], step_offset=1.0)
    snap = agg.snapshot(run_clock=2.0)
    assert snap.ops_done == 5 and snap.first_op_s == pytest.approx(0.8)
    assert snap.phase_source == "measured"
    agg.add([_rec(0, i, 0.6 + 0.2 * i, 0.2, kind="probe", io=0.15, decode=0.05) for i in range(2)],
            step_offset=1.0)
    snap = agg.snapshot(run_clock=3.0)
    assert snap.ops_done == 5                                   # probes are not operations of the step
    assert sum(p.rows_per_s for p in snap.throughput) == 50     # nor are warm-ups
    assert snap.sweep[0].rows_per_s == pytest.approx(50 / 0.5)  # window: release -> last measured end
    # phases come from the probes once there are any (the target splits them only there)
    assert snap.phase_source == "probe" and snap.phase_ops == 2
    assert snap.phase_means == pytest.approx({"io": 0.15, "decode": 0.05})


def test_worker_states_and_errors_reach_the_snapshot():
    agg = LiveAggregates("r", "pickle", "read-day", steps_total=2)
    agg.begin_step(1, 3, "3 users", run_clock=1.0)
    agg.set_worker(0, "running")
    agg.set_worker(2, "failed", "worker process killed by SIGKILL")
    snap = agg.snapshot(2.0)
    assert snap.workers == {0: "running", 1: "starting", 2: "failed"}
    assert snap.worker_errors[2].endswith("SIGKILL") and snap.step_index == 1


def test_a_run_shorter_than_a_second_ends_with_its_throughput_drawn():
    # released at 0.3 s, nine operations of 10 rows ending by 0.3 + 0.45 s, the run then over: no
    # record will come, so the partial second is a point, its rate over the time the run ran
    agg = LiveAggregates("r", "duckdb", "read-day", steps_total=1)
    agg.begin_step(0, 1, "1 user", run_clock=0.0)
    agg.release_step(0.3)
    agg.add([_rec(0, i, i * 0.05, 0.05) for i in range(9)], step_offset=0.3)
    assert agg.snapshot(run_clock=0.8).throughput == []          # running: the second is not over
    agg.set_status("completed")
    points = agg.snapshot(run_clock=0.8).throughput
    assert len(points) == 1 and points[0].span_s == pytest.approx(0.45)
    assert points[0].rows_per_s == pytest.approx(90 / 0.45)


def test_the_second_under_way_crosses_the_live_file_as_a_point():
    """The run process publishes snapshots as JSON; the window reads them back (workloads.run.live)."""
    import json

    from workloads.run.live import snapshot_from_dict, snapshot_to_dict

    agg = LiveAggregates("r", "duckdb", "read-day", steps_total=1)
    agg.begin_step(0, 1, "1 user", run_clock=0.0)
    agg.release_step(4.3)
    agg.add([_rec(0, i, 0.1 * i, 0.1, rows=1_000) for i in range(6)], step_offset=4.3)
    sent = agg.snapshot(run_clock=5.0)
    read = snapshot_from_dict(json.loads(json.dumps(snapshot_to_dict(sent))))
    assert read.throughput_tail == sent.throughput_tail and read.throughput_tail.rows_per_s > 0
