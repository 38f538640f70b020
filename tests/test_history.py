"""Stored runs read back: snapshots, comparison frames and history rows from a real results file.

Exact values come from hand-made records; real runs (worker processes, a DuckDB target) check
that what the runner stored reads back consistently with the store's own SQL figures.
"""
from __future__ import annotations

from datetime import datetime, timedelta

import numpy as np
import pandas as pd
import pytest

from tests.figures_reference import reference_steps
from workloads.datasets.schema import Scale
from workloads.results.figures import step_figures
from workloads.results.history import (HISTORY_KEYS, compare_frame, history_rows, latency_points,
                               run_labels, snapshot_from_store, step_offsets)
from workloads.run.records import OpRecord
from workloads.run.runner import Runner
from workloads.scenario import Scenario
from workloads.results.store import ResultsStore

TINY = Scale(days=1, rows_per_day=2_000, symbols=10)


def op(step, worker, seq, end, total, rows=10, ok=True, query=None, decode=None, kind="measured"):
    """A record ending ``end`` seconds after its step's release."""
    return OpRecord(step=step, worker=worker, seq=seq, op="read_day", t_start=end - total, total_s=total,
                    rows=rows if ok else 0, bytes=rows * 8 if ok else 0, ok=ok, kind=kind,
                    query_s=query, decode_s=decode, error="" if ok else "ValueError: boom")


def handmade_run(store: ResultsStore, run_id: str, steps: list[tuple[int, float, list[OpRecord]]],
                 target="duckdb", workload="read-day", name="untitled", status="completed",
                 cache="warm", environment: dict | None = None) -> str:
    """A run of (users, duration_s, records) steps, written through the store's own writers."""
    users = [u for u, _, _ in steps]
    store.create_run(run_id, {"name": name, "dataset": "taq", "target": target, "workload": workload,
                              "users": users, "cache": cache}, environment or {"host": "test-host"})
    for index, (n_users, duration, records) in enumerate(steps):
        store.add_step(run_id, index, n_users, f"{n_users} users", {})
        store.add_ops(run_id, records)
        if duration is not None:
            store.finish_step(run_id, index, duration, "completed", [])
    store.finish_run(run_id, status)
    return run_id


@pytest.fixture
def store(tmp_path):
    s = ResultsStore(tmp_path / "results")
    yield s
    s.close()


# --- exact figures from hand-made records --------------------------------------------------

STEP0 = [op(0, 0, 0, 0.5, 0.10, query=0.04, decode=0.06), op(0, 0, 1, 0.7, 0.20, query=0.05, decode=0.15),
         op(0, 1, 0, 1.2, 0.30, query=0.10, decode=0.20), op(0, 1, 1, 2.9, 0.40, query=0.10, decode=0.30),
         op(0, 1, 2, 2.95, 9.0, ok=False)]
# step 1 is released when step 0 ends (3 s): these end at 3.5, 4.5 and 10.5 on the run clock
STEP1 = [op(1, 0, 0, 0.5, 0.05, rows=100, query=0.01, decode=0.04),
         op(1, 1, 0, 1.5, 0.50, rows=100, query=0.20, decode=0.30),
         op(1, 2, 0, 7.5, 0.70, rows=100, query=0.30, decode=0.40)]


@pytest.fixture
def exact_run(store):
    run_id = handmade_run(store, "exact", [(2, 3.0, STEP0), (3, 8.0, STEP1)])
    for worker in (0, 1):
        store.set_worker(run_id, 0, worker, 100 + worker, "", "done")
    store.set_worker(run_id, 1, 0, 200, "", "done")
    store.set_worker(run_id, 1, 1, 201, "", "failed", "worker process killed by SIGKILL", -9)
    store.set_worker(run_id, 1, 2, 202, "", "done")
    store.add_resource(run_id, 1.0, 50.0, 1_000_000, 10.0, 20.0)
    store.add_resource(run_id, 2.0, 75.0, 2_000_000, 30.0, 40.0)
    return run_id


@pytest.fixture
def binned(monkeypatch):
    """Per-second bins even for these few operations (a long run's series)."""
    import workloads.results.history
    monkeypatch.setattr(workloads.results.history, "PER_OPERATION_MAX", 0)


def test_seconds_between_steps_are_gaps_live_and_from_the_store_alike(store, binned):
    """Step 0 is released at 0 and its last operation ends at 1.5; step 1 is released at 5.2
    (its workers started and warmed up meanwhile): seconds 2-5 hold no operation and no step was
    measuring, so they are gaps, not zero throughput. Step 1's empty second (6-7, inside its
    window) is a real zero."""
    from workloads.run.metrics import LiveAggregates
    steps = [(0.0, [op(0, 0, 0, 0.4, 0.3), op(0, 0, 1, 1.5, 0.5)]),
             (5.2, [op(1, 0, 0, 0.5, 0.3), op(1, 0, 1, 2.3, 0.4)])]       # end at 5.7 and 7.5
    store.create_run("gaps", {"name": "gaps", "dataset": "taq", "target": "duckdb", "workload": "read-day",
                              "users": [1, 1], "cache": "warm"}, {"host": "test-host"})
    live = LiveAggregates("gaps", "duckdb", "read-day", steps_total=2)
    for index, (released, records) in enumerate(steps):
        store.add_step("gaps", index, 1, "1 user", {})
        store.release_step("gaps", index, released)
        store.add_ops("gaps", records)
        last = max(r.t_start + r.total_s for r in records)
        store.finish_step("gaps", index, last, "completed", [])
        live.begin_step(index, 1, "1 user", run_clock=released)
        live.release_step(released)
        live.add(records, step_offset=released)
        live.end_step({})
    store.finish_run("gaps", "completed")
    live.set_status("completed")
    expected = {1.0: True, 2.0: True, 3.0: False, 4.0: False, 5.0: False, 6.0: True, 7.0: True, 8.0: True}
    stored = snapshot_from_store(store, "gaps").throughput
    assert {p.t: p.measuring for p in stored} == expected
    assert {p.t: p.measuring for p in live.snapshot(run_clock=8.0).throughput} == expected
    # step 1 measured 5.2 .. 6 of its first second: 1 operation over 0.8 s, not over a whole second
    # (a false drop where a step begins); then the real zero; live and stored alike
    assert [p.ops_per_s for p in stored if p.t in (6.0, 7.0)] == [pytest.approx(1 / 0.8), 0.0]
    assert [p.ops_per_s for p in live.snapshot(run_clock=8.0).throughput if p.t in (6.0, 7.0)] == \
        [pytest.approx(1 / 0.8), 0.0]


def test_throughput_is_binned_per_second_of_end_time_with_steps_one_after_the_other(store, exact_run, binned):
    snap = snapshot_from_store(store, exact_run)
    assert not snap.per_operation
    # timestamps only microseconds apart cannot place the steps: step 1 starts where step 0 ended
    # each point's rate over the part of its second a step was measuring (a whole second but where
    # a step began or ended): rate x span gives back the operations and rows that ended in it
    got = [(p.t, p.rows_per_s * p.span_s, p.bytes_per_s * p.span_s, p.ops_per_s * p.span_s) for p in snap.throughput]
    expected_ops = {1: 2, 2: 1, 3: 1, 4: 1, 5: 1, 11: 1}      # second's end -> ok ops ending in it
    rows_per_op = {1: 10, 2: 10, 3: 10, 4: 100, 5: 100, 11: 100}
    assert [t for t, *_ in got] == [float(t) for t in range(1, 12)]   # empty seconds drawn as 0
    for t, rows, nbytes, ops in got:
        n = expected_ops.get(int(t), 0)
        assert ops == pytest.approx(n) and rows == pytest.approx(n * rows_per_op.get(int(t), 0))
        assert nbytes == pytest.approx(rows * 8)
    assert snap.throughput[-1].span_s == pytest.approx(0.5)      # step 1's window ends at 10.5
    assert snap.ops_done == 7 and snap.ops_failed == 1      # the failed op is counted, not binned


def test_a_short_run_is_drawn_operation_by_operation(store, exact_run):
    """Seven operations: each at its end with its own rate and latency, never a flat zero line."""
    snap = snapshot_from_store(store, exact_run)
    assert snap.per_operation and len(snap.throughput) == len(snap.latency) == 7
    ends = [p.t for p in snap.throughput]
    assert ends == sorted(ends) and sum(1 for t in ends if t <= 1.0) == 2      # two end in the first second
    assert all(p.rows_per_s > 0 and p.ops_per_s > 0 for p in snap.throughput)
    last = snap.throughput[-1]                       # step 1's 0.70 s operation of 100 rows, ending at 10.5
    assert last.t == pytest.approx(10.5) and last.rows_per_s == pytest.approx(100 / 0.70)
    assert [p.p50 for p in snap.latency][-1] == pytest.approx(0.70)


def test_latency_percentiles_are_exact_over_a_five_second_window(store, exact_run, binned):
    snap = snapshot_from_store(store, exact_run)
    by_second = {1: [0.10, 0.20], 2: [0.30], 3: [0.40], 4: [0.05], 5: [0.50], 11: [0.70]}
    expected = {}
    for t in range(1, 12):
        window = [v for s in range(t - 4, t + 1) for v in by_second.get(s, [])]
        if window:
            expected[float(t)] = np.percentile(window, (50, 95, 99))
    # second 10 (window 6..10) holds no operation: no point, as live
    assert [p.t for p in snap.latency] == sorted(expected) and 10.0 not in expected
    for p in snap.latency:
        assert (p.p50, p.p95, p.p99) == pytest.approx(tuple(expected[p.t]))
    assert snap.latency[0].p50 == pytest.approx(0.15)       # interpolated, not a bucket edge


def test_phases_workers_sweep_and_resources_of_a_stored_run(store, exact_run):
    snap = snapshot_from_store(store, exact_run)
    assert snap.phase_means == pytest.approx({"query": np.mean([0.01, 0.20, 0.30]),
                                              "decode": np.mean([0.04, 0.30, 0.40])})
    assert snap.phase_percentiles["decode"] == pytest.approx(
        dict(zip(("p50", "p95", "p99"), np.percentile([0.04, 0.30, 0.40], (50, 95, 99)))))
    assert set(snap.phase_percentiles) == {"query", "decode"}  # phases no record reported stay out
    assert snap.workers == {0: "done", 1: "failed", 2: "done"}  # the last step's workers
    assert snap.worker_errors == {1: "worker process killed by SIGKILL"}
    assert [(p.users, p.complete) for p in snap.sweep] == [(2, True), (3, True)]
    assert snap.sweep[0].rows_per_s == pytest.approx(40 / 3.0)
    assert snap.sweep[1].bytes_per_s == pytest.approx(300 * 8 / 8.0)
    assert snap.sweep[0].p50 == pytest.approx(np.percentile([0.1, 0.2, 0.3, 0.4], 50))
    assert [(r.t, r.cpu_percent, r.rss_bytes, r.write_bytes_per_s) for r in snap.resources] == \
        [(1.0, 50.0, 1_000_000, 20.0), (2.0, 75.0, 2_000_000, 40.0)]
    assert (snap.status, snap.step_index, snap.steps_total, snap.users, snap.progress) == \
        ("completed", 1, 2, 3, 1.0)


def test_step_offsets_use_stored_times_when_they_fit():
    t0 = datetime(2026, 1, 1, 12, 0, 0)
    starts = [t0 + timedelta(seconds=1), t0 + timedelta(seconds=5)]
    # step 0 ran 2 s and step 1 was created at 5 s: released at 3 s; the run ended at 9 s: 6 s
    assert step_offsets(starts, [2.0, 3.0], t0, t0 + timedelta(seconds=9)) == [3.0, 6.0]
    # no end time (the app stopped): the last step starts right after the one before
    assert step_offsets(starts, [2.0, 3.0], t0, None) == [3.0, 5.0]
    # times that cannot hold the durations: steps laid end to end from 0
    assert step_offsets(starts, [20.0, 30.0], t0, t0 + timedelta(seconds=9)) == [0.0, 20.0]
    assert step_offsets([None, None], [2.0, 3.0], None, None) == [0.0, 2.0]


def test_a_cut_off_step_lasts_until_its_last_record(store, binned):
    records = [op(0, 0, i, 0.35 * (i + 1), 0.1) for i in range(5)]         # last end 1.75 s
    handmade_run(store, "cut", [(1, 4.0, [op(0, 0, 0, 3.5, 0.2)]), (2, None, [
        r._replace(step=1) for r in records])], status="aborted")
    snap = snapshot_from_store(store, "cut")
    assert snap.status == "aborted" and snap.progress == pytest.approx(1 / 2)
    # step 1 was released at 4 s (when step 0 ended); its last record ended 1.75 s later
    # 5.05, 5.4, 5.75 over the second's measured part (to the last end, 5.75): no false drop at the end
    assert snap.throughput[-1].t == 6.0 and snap.throughput[-1].span_s == pytest.approx(0.75)
    assert snap.throughput[-1].ops_per_s == pytest.approx(4)
    assert sum(p.ops_per_s * p.span_s for p in snap.throughput) == pytest.approx(6)
    assert [p.users for p in snap.sweep] == [1, 2]      # it has records, so it is drawn


def test_latency_points_of_nothing_is_empty():
    assert latency_points(np.empty(0), np.empty(0)) == []


# --- history rows: headline step, one query however many runs --------------------------------

def test_history_rows_take_the_step_with_the_highest_rows_per_second(store, exact_run):
    handmade_run(store, "noop-like", [(1, 1.0, [op(0, 0, i, 0.01 * (i + 1), 0.001, rows=0) for i in range(50)]),
                                      (2, 1.0, [op(1, w, i, 0.01 * (i + 1), 0.002, rows=0)
                                                for w in range(2) for i in range(40)])],
                 target="pickle", workload="noop")
    rows = {r["run_id"]: r for r in history_rows(store)}
    assert set(rows) == {"exact", "noop-like"}
    exact = rows["exact"]
    assert tuple(exact) == HISTORY_KEYS
    # step 0: 40 rows in 3 s; step 1: 300 rows in 8 s -> step 1 is the headline
    assert exact["headline_step"] == 1 and exact["headline_label"] == "3 users"
    assert exact["rows_per_s"] == pytest.approx(300 / 8.0)
    assert exact["mb_per_s"] == pytest.approx(300 * 8 / 8.0 / 1e6)
    assert exact["p50_ms"] == pytest.approx(500.0) and exact["p99_ms"] == pytest.approx(
        np.percentile([0.05, 0.5, 0.7], 99) * 1000)
    assert exact["users"] == [2, 3] and exact["status"] == "completed"
    assert isinstance(exact["started_at"], datetime)
    # no rows moved: the step with more operations per second
    assert rows["noop-like"]["headline_step"] == 1 and rows["noop-like"]["rows_per_s"] == 0.0


def test_history_rows_of_many_runs_is_one_query_and_matches_per_run_figures(store, monkeypatch):
    rng = np.random.default_rng(7)
    for i in range(40):
        steps = []
        for s, users in enumerate((1, 2, 4)):
            totals = rng.uniform(0.001, 0.05, size=20)
            steps.append((users, float(rng.uniform(0.5, 2.0)),
                          [op(s, 0, j, 0.05 * (j + 1), t, rows=int(rng.integers(1, 1000)))
                           for j, t in enumerate(totals)]))
        handmade_run(store, f"run-{i:02d}", steps)
    handmade_run(store, "empty", [], status="failed")          # a run that never started a step
    calls = []
    for name in ("frame", "query"):
        original = getattr(store, name)
        monkeypatch.setattr(store, name, lambda *a, _o=original, **k: (calls.append(a[0]), _o(*a, **k))[1])
    rows = history_rows(store)
    assert len(calls) == 1 and len(rows) == 41
    monkeypatch.undo()
    for row in rows:
        if row["run_id"] == "empty":
            assert row["rows_per_s"] is None and row["p50_ms"] is None and row["status"] == "failed"
            continue
        figures = step_figures(store, row["run_id"])
        # the fastest step long enough to measure (>= 5 ops and a window >= 1 s), if any
        long_enough = figures[(figures["ops"] >= 5) & (figures["window_s"] >= 1.0)]
        candidates = long_enough if len(long_enough) else figures
        best = candidates.loc[candidates["rows_per_s"].idxmax()]
        assert row["headline_step"] == best["step"]
        assert row["headline_short"] == (len(long_enough) == 0)
        assert row["rows_per_s"] == pytest.approx(best["rows_per_s"])
        assert row["p50_ms"] == pytest.approx(best["p50_s"] * 1000)
        assert row["p99_ms"] == pytest.approx(best["p99_s"] * 1000)


def test_history_rows_fill_the_run_history_view(store, exact_run, qtbot):
    from widgets.history.run_history import COLUMNS, RunHistoryView

    view = RunHistoryView()
    qtbot.addWidget(view)
    view.set_rows(history_rows(store))
    assert view.visible_run_ids() == ["exact"]
    texts = {key: view.proxy.index(0, c).data() for c, (key, _) in enumerate(COLUMNS)}
    assert texts["users"] == "2, 3" and texts["rows_per_s"] == "37.5" and texts["p50_ms"] == "500.0"


# --- comparison frame -------------------------------------------------------------------------

def test_compare_frame_has_one_row_per_run_step_in_ms(store, exact_run):
    handmade_run(store, "other", [(1, 2.0, [op(0, 0, 0, 1.0, 0.25, query=0.1, decode=0.15)])])
    frame = compare_frame(store, ["exact", "other"])
    assert list(zip(frame["run_id"], frame["step"], frame["users"])) == [("exact", 0, 2), ("exact", 1, 3),
                                                                        ("other", 0, 1)]
    # both runs are "duckdb read-day": the run id tells them apart
    assert list(frame["run"].unique()) == ["duckdb read-day (exact)", "duckdb read-day (other)"]
    other = frame.iloc[2]
    assert other["rows_per_s"] == pytest.approx(10 / 2.0) and other["ops_per_s"] == pytest.approx(0.5)
    assert other["p50_ms"] == pytest.approx(250.0) and other["decode_ms"] == pytest.approx(150.0)
    assert np.isnan(other["io_ms"])                        # a phase this target does not have
    assert frame.iloc[0]["errors"] == 1


def test_run_labels_prefer_the_scenario_name(store):
    handmade_run(store, "a", [(1, 1.0, [op(0, 0, 0, 0.5, 0.1)])], name="cold pickle")
    handmade_run(store, "b", [(1, 1.0, [op(0, 0, 0, 0.5, 0.1)])], target="pickle")
    assert run_labels(store, ["a", "b"]) == {"a": "cold pickle", "b": "pickle read-day"}


# --- real runs: worker processes, a real target ----------------------------------------------

@pytest.fixture(scope="module")
def real_store(tmp_path_factory):
    """A noop users sweep and a DuckDB read-day sweep, run for real into one results file."""
    folder = tmp_path_factory.mktemp("history_real")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("TICKBENCH_HOME", str(folder / "home"))
        store = ResultsStore(folder / "results")
        noop = Runner(Scenario(workload="noop", users=(1, 2), operations=50), store).run()
        read = Runner(Scenario(dataset="taq", scale=TINY, target="duckdb", workload="read-day",
                               target_config={"path": str(folder / "data.duckdb")},
                               users=(1, 2), operations=3), store).run()
    assert noop.status == "completed", noop.message
    assert read.status == "completed", read.message
    yield store, noop.run_id, read.run_id
    store.close()


def test_real_noop_sweep_reads_back_whole(real_store, binned):
    store, noop_id, _ = real_store
    snap = snapshot_from_store(store, noop_id)
    reference = reference_steps(store.ops(noop_id))
    assert snap.ops_done == 150 == sum(r["ops"] for r in reference.values()) and snap.ops_failed == 0
    # every measured op in exactly one point
    assert sum(p.ops_per_s * p.span_s for p in snap.throughput) == pytest.approx(150)
    assert [p.users for p in snap.sweep] == [1, 2]
    assert [p.ops_per_s for p in snap.sweep] == pytest.approx([reference[s]["ops_per_s"] for s in (0, 1)])
    assert all(p.short for p in snap.sweep)                      # 50 no-ops take far under a second
    assert snap.workers == {0: "done", 1: "done"} and snap.worker_errors == {}
    assert snap.phase_means == {}                                # a no-op has no phases
    # one clock for everything: the throughput points lie within the run, steps in order
    assert 0 < snap.throughput[-1].t <= snap.elapsed_s + 1
    assert all(0 <= r.t <= snap.elapsed_s for r in snap.resources)
    ops = store.ops(noop_id)
    measured = ops[ops["kind"] == "measured"]
    assert measured.loc[measured["step"] == 1, "t_start"].min() >= 0
    # one warm-up per worker, before its step's release
    warmups = ops[ops["kind"] == "warmup"]
    assert len(warmups) == 3 and (warmups["t_start"] + warmups["total_s"] <= 0).all()


def test_real_duckdb_read_day_reads_back_with_its_phases(real_store, binned):
    store, _, read_id = real_store
    snap = snapshot_from_store(store, read_id)
    reference = reference_steps(store.ops(read_id))
    assert sum(p.rows_per_s * p.span_s for p in snap.throughput) == pytest.approx(sum(
        r["rows_per_s"] * r["window_s"] for r in reference.values())) == pytest.approx(9 * 2_000)
    assert snap.phase_means == pytest.approx({p: m for p, (m, _) in reference[1]["phases"].items()})
    assert snap.phase_ops == 6 and snap.phase_source == "measured" and snap.phase_step == "2 users"
    assert snap.sweep[1].p99 == pytest.approx(reference[1]["p99_s"])
    assert snap.first_op_s == pytest.approx(reference[1]["first_op_s"])
    row = next(r for r in history_rows(store) if r["run_id"] == read_id)
    best = max(reference, key=lambda s: reference[s]["rows_per_s"])
    assert row["headline_step"] == best and row["rows_per_s"] == pytest.approx(reference[best]["rows_per_s"])
    assert row["p50_ms"] == pytest.approx(reference[best]["p50_s"] * 1000)
    frame = compare_frame(store, [read_id])
    assert (frame["query_ms"] > 0).all() and (frame["decode_ms"] > 0).all()
    assert frame["p99_ms"].tolist() == pytest.approx([reference[s]["p99_s"] * 1000 for s in (0, 1)])
    assert frame["first_op_ms"].tolist() == pytest.approx([reference[s]["first_op_s"] * 1000 for s in (0, 1)])
    assert pd.isna(frame["io_ms"]).all()


def test_a_short_step_of_a_report_card_says_run_the_card_larger(store):
    """A tiny card's user can change its size, not its operations: the advice says so; any other
    run's short step keeps the advice about operations, time and data."""
    for run_id, slot in (("card", "002/download/subject/tiny"), ("plain", ""), ("biggest", "002/download/subject/report")):
        store.create_run(run_id, {"name": run_id, "dataset": "taq", "target": "duckdb", "workload": "read-day",
                                  "users": [2], "cache": "warm", "experiment": slot}, {"host": "test-host"})
        store.add_step(run_id, 0, 2, "2 users", {})
        store.add_ops(run_id, STEP0)
        store.finish_step(run_id, 0, 3.0, "completed", [])
        store.finish_run(run_id, "completed")
    reasons = {run_id: step_figures(store, run_id)["short_reason"].iloc[0] for run_id in ("card", "plain", "biggest")}
    assert reasons["card"].startswith(f"too short to measure: {sum(r.ok for r in STEP0)} operations in 3.00 s; ")
    assert "report 002's tiny card is a quick look: run it at medium size" in reasons["card"]
    assert "tickbench reproduce 002 --scale medium" in reasons["card"]
    for run_id in ("plain", "biggest"):
        assert "operations per step" in reasons[run_id] and "card" not in reasons[run_id]


def test_a_cancelled_runs_progress_keeps_what_it_did(store):
    """Issue 41: progress dropped to 0 % on cancel (only completed steps counted)."""
    store.create_run("cut", {"name": "cut", "dataset": "taq", "target": "duckdb", "workload": "read-day",
                             "users": [2, 4], "cache": "warm", "operations": 10}, {"host": "test-host"})
    store.add_step("cut", 0, 2, "2 users", {})
    store.add_ops("cut", [op(0, w, s, 0.1 * s, 0.05) for w in range(2) for s in range(3)])   # 6 of 20 planned
    store.finish_step("cut", 0, 1.0, "cancelled", [])
    store.finish_run("cut", "cancelled")
    snap = snapshot_from_store(store, "cut")
    assert snap.status == "cancelled"
    assert snap.progress == pytest.approx(6 / 20 / 2)              # of two planned steps, 30 % of the first
