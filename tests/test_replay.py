"""A stored run played back at its real pace: at run-clock t the replay shows only what had happened
by t, at its end exactly the stored run, and it always says it is a replay (the header, in words).

The run is real (worker processes, the runner, a results folder): a noop sweep of 1 and 2 users,
each step offered 50 operations per second for two seconds, so its operations are spread over the run
clock. Expected figures come from the store's own SQL, never from the replay.
"""
from __future__ import annotations

import re
from dataclasses import replace
from datetime import timezone

import numpy as np
import pytest

from workloads.results.history import snapshot_from_store
from workloads.results.replay import RunReplay
from workloads.results.store import ResultsStore
from workloads.run.runner import Runner
from workloads.scenario import Scenario

# measured operations that had ended by run-clock ? (their step's release plus their end)
_DONE_BY_SQL = ("SELECT count(*) FILTER (WHERE o.ok), count(*) FILTER (WHERE NOT o.ok) FROM ops o "
                "JOIN steps s ON s.run_id = o.run_id AND s.step = o.step "
                "WHERE o.run_id = ? AND o.kind = 'measured' AND s.release_clock + o.t_start + o.total_s <= ?")
_STEP_END_SQL = "SELECT release_clock + window_s FROM steps WHERE run_id = ? AND step = ?"


@pytest.fixture(scope="module")
def paced_run(tmp_path_factory):
    folder = tmp_path_factory.mktemp("replay_real")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("TICKBENCH_HOME", str(folder / "home"))
        store = ResultsStore(folder / "results")
        # 2 s steps: halfway is past the first whole second of the first step however fast its user
        # started (forked users are ready in a fraction of a second: half a run of 1 s steps was not)
        result = Runner(Scenario(workload="noop", users=(1, 2), operations=0, rate=(50.0,), duration_s=2.0),
                        store).run()
    assert result.status == "completed", result.message
    yield store, result.run_id
    store.close()


@pytest.fixture(params=["per operation", "binned"])
def replay(request, paced_run, monkeypatch):
    """The run replayed as a short run (each operation its own point) and as a long one (per second)."""
    if request.param == "binned":
        import workloads.results.history
        monkeypatch.setattr(workloads.results.history, "PER_OPERATION_MAX", 0)
    store, run_id = paced_run
    return store, run_id, RunReplay(store, run_id), snapshot_from_store(store, run_id)


def done_by(store, run_id, t) -> tuple[int, int]:
    return tuple(int(n) for n in store.query(_DONE_BY_SQL, [run_id, t])[0])


def step_end(store, run_id, step) -> float:
    return float(store.query(_STEP_END_SQL, [run_id, step])[0][0])


def points(snap) -> list[float]:
    return [p.t for p in (*snap.throughput, *snap.latency, *snap.resources)]


def test_a_replay_at_zero_shows_nothing_yet(replay):
    store, run_id, replayed, final = replay
    snap = replayed.snapshot_at(0)
    assert final.throughput and final.latency and final.sweep        # there is something to hold back
    assert snap.throughput == [] and snap.latency == [] and snap.sweep == []
    assert (snap.ops_done, snap.ops_failed) == (0, 0) == done_by(store, run_id, 0.0)
    assert snap.status == "running" and snap.elapsed_s == 0 and snap.progress == 0
    assert snap.first_op_s is None and snap.step_index == 0


def test_a_replay_halfway_shows_only_what_had_happened_by_then(replay):
    store, run_id, replayed, final = replay
    half = replayed.duration_s / 2
    snap = replayed.snapshot_at(half)
    assert snap.throughput and all(t <= half for t in points(snap))
    # exactly the stored run's points up to then: a prefix, not a resampling
    assert snap.throughput == [p for p in final.throughput if p.t <= half] != final.throughput
    assert snap.latency == [p for p in final.latency if p.t <= half]
    assert 0 < snap.ops_done < final.ops_done
    assert (snap.ops_done, snap.ops_failed) == done_by(store, run_id, half)
    assert snap.status == "running" and final.status == "completed"
    assert snap.elapsed_s == half and snap.progress == pytest.approx(0.5)
    assert set(snap.workers.values()) == {"running"} and snap.message == ""


def test_a_replay_at_its_end_is_the_stored_run(replay):
    store, run_id, replayed, final = replay
    snap = replayed.snapshot_at(replayed.duration_s)
    stored_ops = int(store.query("SELECT count(*) FROM ops WHERE run_id = ? AND kind = 'measured' AND ok",
                                 [run_id])[0][0])
    assert snap.ops_done == final.ops_done == stored_ops and snap.ops_failed == final.ops_failed
    assert snap.throughput == final.throughput and snap.latency == final.latency
    assert snap.resources == final.resources and snap.sweep == final.sweep
    assert snap.status == final.status == "completed" and snap.workers == final.workers
    assert snap.progress == final.progress == 1.0
    assert (snap.first_op_s, snap.steady_p50_s, snap.step_index) == \
        (final.first_op_s, final.steady_p50_s, final.step_index)
    # the end is the last thing recorded: every point, operation and step had happened by then
    assert replayed.duration_s == pytest.approx(max(points(final) + [step_end(store, run_id, 1)]))
    assert replayed.snapshot_at(replayed.duration_s + 60) == snap


def test_a_steps_sweep_point_appears_when_the_step_ends(replay):
    store, run_id, replayed, _ = replay
    first, second = step_end(store, run_id, 0), step_end(store, run_id, 1)
    assert first < second - 0.1
    def done(t):       # the stored figures' points; a step under way has a live estimate's, as live
        return [p.users for p in replayed.snapshot_at(t).sweep if p.complete]
    assert done(first - 0.01) == [] and replayed.snapshot_at(first - 0.01).first_op_s is None
    assert [(p.users, p.exact) for p in replayed.snapshot_at(first - 0.01).sweep] == [(1, False)]
    assert done(first) == [1]
    assert replayed.snapshot_at(first).first_op_s is not None
    assert done(second - 0.01) == [1]
    assert done(second) == [1, 2]
    assert replayed.snapshot_at(second - 0.01).step_index == 1 == replayed.snapshot_at(second).step_index


def test_a_negative_time_is_the_runs_start(replay):
    _, _, replayed, _ = replay
    snap = replayed.snapshot_at(-5.0)
    assert snap.elapsed_s == 0.0 and snap.progress == 0.0 and snap.ops_done == 0
    assert all(t >= 0 for t in points(snap)) and snap == replayed.snapshot_at(0.0)


def test_a_replay_says_when_it_was_recorded(paced_run):
    store, run_id = paced_run
    replayed = RunReplay(store, run_id)
    created = store.run(run_id)["created_at"].to_pydatetime().replace(tzinfo=timezone.utc).astimezone()
    assert replayed.replayed_from == f"recorded {created:%Y-%m-%d %H:%M}"
    assert re.fullmatch(r"recorded \d{4}-\d\d-\d\d \d\d:\d\d", replayed.replayed_from)
    assert {replayed.snapshot_at(t).replayed_from for t in (0, replayed.duration_s)} == {replayed.replayed_from}
    assert snapshot_from_store(store, run_id).replayed_from == ""      # a stored run shown as such is no replay


def test_the_header_says_replay_in_its_first_line(paced_run, make_widget):
    from widgets.run.dashboard import LiveDashboard

    store, run_id = paced_run
    replayed = RunReplay(store, run_id)
    dashboard = make_widget(LiveDashboard, size=(1280, 800))
    snap = replayed.snapshot_at(replayed.duration_s / 2)
    dashboard.show_final(snap)
    header = dashboard.header_text()
    assert "REPLAY · " + replayed.replayed_from in header and header.index("REPLAY") < header.index("running")
    assert "REPLAY" in dashboard.header_label.text()           # on screen, not a tooltip
    dashboard.show_final(replace(snap, replayed_from=""))      # the same figures live: no such word
    assert "REPLAY" not in dashboard.header_text()



_ROWS_ENDED_SQL = ("SELECT coalesce(sum(o.rows), 0), count(*) FROM ops o JOIN steps s ON s.run_id = o.run_id "
                   "AND s.step = o.step WHERE o.run_id = ? AND o.kind = 'measured' AND o.ok "
                   "AND s.release_clock + o.t_start + o.total_s > ? AND s.release_clock + o.t_start + o.total_s <= ?")


def test_a_binned_replay_draws_the_second_under_way_as_live(paced_run, monkeypatch):
    """Between whole-second points a replay, as the live view, draws what ended since the last one."""
    import workloads.results.history
    monkeypatch.setattr(workloads.results.history, "PER_OPERATION_MAX", 0)
    store, run_id = paced_run
    replayed = RunReplay(store, run_id)
    release = float(store.query("SELECT min(release_clock) FROM steps WHERE run_id = ?", [run_id])[0][0])
    t = release + 0.6                                   # before the step's first whole-second point
    snap = replayed.snapshot_at(t)
    tail = snap.throughput_tail
    start = max([p.t for p in snap.throughput] + [release])
    rows, ops = store.query(_ROWS_ENDED_SQL, [run_id, start, t])[0]
    assert ops > 0 and tail is not None and tail.t == t
    assert tail.ops_per_s == pytest.approx(ops / (t - start)) and tail.rows_per_s == pytest.approx(rows / (t - start))
    assert replayed.snapshot_at(replayed.duration_s).throughput_tail is None       # over: none


def test_a_step_under_way_shows_the_phases_its_operations_had_reported_as_live(tmp_path):
    """A read's phase bars move during a replayed step (the live estimate: each phase's mean over the
    step's measured operations ended by then), not only once it has ended."""
    from workloads.datasets.schema import Scale
    from workloads.targets.base import PHASES
    store = ResultsStore(tmp_path / "results")
    try:
        result = Runner(Scenario(scale=Scale(days=2, rows_per_day=50_000, symbols=20), target="duckdb",
                                 target_config={"path": str(tmp_path / "d.duckdb")}, workload="read-day", users=(1,),
                                 operations=0, duration_s=2.0, probe_ops=0), store).run()
        assert result.status == "completed", result.message
        replay = RunReplay(store, result.run_id)
        release = float(store.query("SELECT min(release_clock) FROM steps WHERE run_id = ?", [result.run_id])[0][0])
        t = release + 1.0                                      # halfway through its 2 s
        assert t < step_end(store, result.run_id, 0)
        columns = ", ".join(f"o.{p}_s" for p in PHASES)
        rows = store.query(f"SELECT {columns} FROM ops o JOIN steps s USING (run_id, step) WHERE o.run_id = ? AND "
                           "o.kind = 'measured' AND o.ok AND s.release_clock + o.t_start + o.total_s <= ?",
                           [result.run_id, t])
        expected = {p: float(np.mean([r[i] for r in rows if r[i] is not None]))
                    for i, p in enumerate(PHASES) if any(r[i] is not None for r in rows)}
        halfway = replay.snapshot_at(t)
        assert expected and not halfway.phase_exact and halfway.phase_step == "1 user"
        assert halfway.phase_means == pytest.approx(expected, rel=1e-9)
        assert replay.snapshot_at(replay.duration_s).phase_exact              # the stored figures at its end
    finally:
        store.close()


def test_a_short_runs_replay_draws_per_second_as_live_and_each_operation_only_at_its_end(paced_run, monkeypatch):
    """A short run's stored view draws each operation; live it was drawn per second, and so is its
    replay until the end (it drew the stored view's per-operation lines the live demo never had)."""
    import workloads.results.history
    store, run_id = paced_run
    monkeypatch.setattr(workloads.results.history, "PER_OPERATION_MAX", 0)
    per_second = snapshot_from_store(store, run_id)
    monkeypatch.setattr(workloads.results.history, "PER_OPERATION_MAX", 10 ** 9)
    stored = snapshot_from_store(store, run_id)
    replayed = RunReplay(store, run_id)
    assert stored.per_operation and not per_second.per_operation
    for t in (replayed.duration_s * 0.5, replayed.duration_s * 0.9):
        frame = replayed.snapshot_at(t)
        assert not frame.per_operation
        assert frame.latency == [p for p in per_second.latency if p.t <= t] and frame.latency
        assert frame.throughput == [p for p in per_second.throughput if p.t <= t]
    end = replayed.snapshot_at(replayed.duration_s)
    assert end.per_operation and end.latency == stored.latency          # the stored view, as after a live run


def test_a_steps_phases_and_sweep_point_come_once_its_probes_are_done_as_live(tmp_path):
    """A pickle read splits its phases only in probe operations run after the measured ones: live, a
    step's phase bars and sweep point came after those; the replay showed them at the measured end."""
    from workloads.datasets.schema import Scale
    store = ResultsStore(tmp_path / "results")
    try:
        result = Runner(Scenario(scale=Scale(days=2, rows_per_day=50_000, symbols=20), target="pickle",
                                 target_config={"path": str(tmp_path / "p")}, workload="read-day", users=(1,),
                                 operations=6), store).run()
        assert result.status == "completed", result.message
        measured_end, probes_end = store.query(
            "SELECT max(s.release_clock + o.t_start + o.total_s) FILTER (WHERE o.kind = 'measured'), "
            "max(s.release_clock + o.t_start + o.total_s) FILTER (WHERE o.kind = 'probe') "
            "FROM ops o JOIN steps s USING (run_id, step) WHERE o.run_id = ?", [result.run_id])[0]
        assert probes_end > measured_end
        replay = RunReplay(store, result.run_id)
        between = replay.snapshot_at((measured_end + probes_end) / 2)
        assert not between.phase_means and not [p for p in between.sweep if p.complete]
        done = replay.snapshot_at(probes_end + 1e-6)
        assert done.phase_exact and done.phase_means and len(done.sweep) == 1
    finally:
        store.close()


def test_a_step_under_way_has_the_live_estimates_sweep_point_the_header_reads(paced_run):
    """Live, the header's figures line reads the step under way's estimate (its operations ended
    so far over the time since its release); a replay's header was empty until the step ended."""
    store, run_id = paced_run
    replayed = RunReplay(store, run_id)
    release = float(store.query("SELECT release_clock FROM steps WHERE run_id = ? AND step = 0", [run_id])[0][0])
    t = (release + step_end(store, run_id, 0)) / 2
    rows, ops, last = store.query(
        "SELECT sum(o.rows), count(*), max(s.release_clock + o.t_start + o.total_s) FROM ops o JOIN steps s "
        "USING (run_id, step) WHERE o.run_id = ? AND o.step = 0 AND o.kind = 'measured' AND o.ok "
        "AND s.release_clock + o.t_start + o.total_s <= ?", [run_id, t])[0]
    point = replayed.snapshot_at(t).sweep[-1]
    assert ops > 0 and not point.complete and not point.exact and point.users == 1
    assert point.ops_per_s == pytest.approx(ops / (last - release))
    assert point.rows_per_s == pytest.approx(rows / (last - release))
