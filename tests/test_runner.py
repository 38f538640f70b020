"""The runner with real worker processes, a real results file and real targets."""
from __future__ import annotations

import math
import os
import signal
import threading
import time
from pathlib import Path

import pytest

from workloads.datasets.schema import Scale
from tests.warmup_reference import assert_warmups_follow_rule
from workloads.results.figures import MIN_OPS, step_figures
from workloads.run.runner import Runner
from workloads.scenario import Scenario
from workloads.results.store import ResultsStore

SMALL = Scale(days=2, rows_per_day=20_000, symbols=50)


@pytest.fixture
def store(tmp_path):
    s = ResultsStore(tmp_path / "results")
    yield s
    s.close()


def _wait_for(predicate, timeout=60.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.05)
    return False


def test_users_sweep_runs_one_step_per_value_with_every_record_stored(store, tmp_path):
    scenario = Scenario(dataset="taq", scale=SMALL, target="duckdb",
                        target_config={"path": str(tmp_path / "data.duckdb")},
                        workload="read-day", users=(1, 2), operations=3)
    result = Runner(scenario, store).run()
    assert result.status == "completed", result.message
    figures = result.figures
    assert list(figures["users"]) == [1, 2]
    assert list(figures["ops"]) == [3, 6]                    # operations are per user
    assert (figures["rows"] == figures["ops"] * 20_000).all()  # each op read one whole day
    assert (figures["query_s"] > 0).all() and (figures["decode_s"] > 0).all()
    ops = store.ops(result.run_id)
    assert (ops["query_s"] + ops["decode_s"] <= ops["total_s"] + 1e-6).all()
    # warm-ups until steady per worker and step, before its release; DuckDB splits phases in-call: no probes
    assert set(ops["kind"]) == {"measured", "warmup"} and (ops["kind"] == "measured").sum() == 9
    assert_warmups_follow_rule(ops, minimum=1)
    assert (ops.loc[ops["kind"] == "warmup", "t_start"] < 0).all()
    steps = store.frame("SELECT release_clock, window_s FROM steps WHERE run_id = ? ORDER BY step",
                        [result.run_id])
    assert steps["release_clock"].is_monotonic_increasing and (steps["window_s"] > 0).all()
    workers = store.workers(result.run_id)
    assert set(workers["state"]) == {"done"} and len(workers) == 3
    run = store.run(result.run_id)
    assert run["layout"]["rows"] == 40_000 and run["environment"]["libraries"]["duckdb"]


def test_a_timed_step_runs_on_until_its_users_have_made_enough_operations(store, tmp_path):
    # a duration shorter than one read: without the floor each user would stop after 0 or 1 reads
    scenario = Scenario(dataset="taq", scale=SMALL, target="duckdb",
                        target_config={"path": str(tmp_path / "data.duckdb")},
                        workload="read-day", users=(1, 2), operations=0, duration_s=0.001)
    result = Runner(scenario, store).run()
    assert result.status == "completed", result.message
    assert list(result.figures["ops"]) == [MIN_OPS, 2 * math.ceil(MIN_OPS / 2)]
    ops = store.ops(result.run_id)
    per_worker = ops[ops["kind"] == "measured"].groupby(["step", "worker"]).size()
    assert set(per_worker) == {MIN_OPS} | {math.ceil(MIN_OPS / 2)}


def test_a_killed_worker_is_recorded_and_the_others_finish(store):
    scenario = Scenario(workload="noop", users=(2,), operations=0, duration_s=3.0)
    runner = Runner(scenario, store)
    thread = threading.Thread(target=runner.run)
    thread.start()
    assert _wait_for(lambda: runner.snapshot().workers.get(1) == "running"
                     and runner.snapshot().ops_done > 100)
    victim = store.workers(runner.run_id).set_index("worker").loc[1, "pid"]
    os.kill(int(victim), signal.SIGKILL)
    thread.join(120)          # a 3 s run; generous for a loaded CI machine, but it must end
    assert not thread.is_alive(), f"the run did not end after its worker was killed: {runner.snapshot()}"
    run = store.run(runner.run_id)
    assert run["status"] == "completed"
    assert "worker 1" in run["message"] and "SIGKILL" in run["message"]
    workers = store.workers(runner.run_id).set_index("worker")
    assert workers.loc[1, "state"] == "failed" and workers.loc[0, "state"] == "done"
    ops = store.ops(runner.run_id)
    assert (ops["worker"] == 1).sum() > 0      # what it measured before dying is kept
    assert (ops["worker"] == 0).sum() > (ops["worker"] == 1).sum()


def _check_stop_forever(stop, checks) -> None:
    """A user's hot loop: the stop flag before every operation."""
    while not stop.is_set():
        checks.value += 1


def test_a_user_killed_while_checking_the_stop_flag_never_blocks_the_others():
    # multiprocessing.Event.is_set() takes a lock shared by every user: a user killed holding it
    # froze the rest (the killed-worker test above hung this way under load)
    import multiprocessing as mp

    from workloads.run.worker import StepEvents
    context = mp.get_context("spawn")
    events = StepEvents.make(context)
    checks = context.RawValue("q", 0)
    survivor = context.Process(target=_check_stop_forever, args=(events.stop, checks), daemon=True)
    users = [survivor]
    try:
        survivor.start()
        assert _wait_for(lambda: checks.value > 0, timeout=60)
        for _ in range(4):
            victim_checks = context.RawValue("q", 0)
            victim = context.Process(target=_check_stop_forever, args=(events.stop, victim_checks), daemon=True)
            users.append(victim)
            victim.start()
            assert _wait_for(lambda: victim_checks.value > 10_000, timeout=60)     # killed mid-loop
            victim.kill()
            victim.join(10)
        before = checks.value
        assert _wait_for(lambda: checks.value > before + 1000, timeout=30), \
            "the surviving user stopped: blocked by a killed one"
        events.stop.set()
        survivor.join(10)
        assert survivor.exitcode == 0
    finally:                           # a failure must not leave users blocked behind it
        for user in users:
            if user.is_alive():
                user.kill()


def test_cancel_stops_all_workers_quickly_and_keeps_records(store):
    scenario = Scenario(workload="noop", users=(2, 4), operations=0, duration_s=60.0)
    runner = Runner(scenario, store)
    thread = threading.Thread(target=runner.run)
    thread.start()
    assert _wait_for(lambda: runner.snapshot().ops_done > 1000)
    cancelled_at = time.monotonic()
    runner.cancel()
    thread.join(30)
    stopped_after = time.monotonic() - cancelled_at
    assert not thread.is_alive() and stopped_after < scenario.duration_s / 4      # far before the step ends
    import psutil
    pids = [int(p) for p in store.workers(runner.run_id)["pid"].dropna()]
    assert len(pids) == 2                                     # the first step's two workers
    still = [p for p in pids if psutil.pid_exists(p) and psutil.Process(p).status() != psutil.STATUS_ZOMBIE]
    assert not still, f"workers still running after cancel: {still}"
    run = store.run(runner.run_id)
    assert run["status"] == "cancelled"
    assert len(step_figures(store, runner.run_id)) == 1       # the second step never started
    assert len(store.ops(runner.run_id)) >= 1000


def test_worker_that_cannot_start_fails_the_run_with_a_reason(store, tmp_path):
    bad = tmp_path / "not-a-dir"
    bad.write_text("a file where a folder should be")
    scenario = Scenario(dataset="taq", scale=SMALL, target="pickle", target_config={"root": str(bad)},
                        workload="read-day", users=(1,), operations=1)
    result = Runner(scenario, store).run()
    assert result.status == "failed"
    assert result.message and "Traceback" not in result.message
    assert store.run(result.run_id)["status"] == "failed"


def test_a_failed_worker_keeps_its_traceback(store, tmp_path):
    from workloads.targets.files import PickleTarget

    config = {"root": str(tmp_path / "files")}
    layout = PickleTarget(config).prepare("taq", SMALL, Scenario().string_mode)
    for path in Path(layout.location).glob("*.pkl"):          # damaged, same size: the cache keeps it
        path.write_bytes(b"\0" * path.stat().st_size)
    scenario = Scenario(dataset="taq", scale=SMALL, target="pickle", target_config=config,
                        workload="read-day", users=(1,), operations=8)
    result = Runner(scenario, store).run()
    ops = store.ops(result.run_id)
    # every read fails; after five in a row the worker gives up with an exception of its own
    assert not ops["ok"].any() and (ops["kind"] == "measured").sum() == 5
    failed = store.workers(result.run_id)
    failed = failed[failed["state"] == "failed"]
    assert len(failed) == 1 and "5 failed operations in a row" in failed["error"].iloc[0]
    trace = failed["traceback"].iloc[0]
    assert trace.startswith("Traceback (most recent call last)") and "worker.py" in trace


def test_unknown_target_is_refused_before_anything_runs(store):
    with pytest.raises(ValueError, match="unknown target"):
        Runner(Scenario(target="oracle"), store)
    assert store.runs().empty


def test_warm_up_records_reach_the_parent_after_the_measured_ones(store):
    # sent at the release, a whole warm-up batch kept the parent busy beside the first measured
    # operations; the sealed records keep the order they arrived in
    import pyarrow.parquet as pq

    scenario = Scenario(workload="noop", users=(2,), operations=0, duration_s=0.5, warmup_ops=3)
    result = Runner(scenario, store).run()
    assert result.status == "completed", result.message
    arrived = pq.read_table(store.runs_dir / result.run_id / "ops.parquet").to_pandas()
    for _, worker in arrived.groupby("worker"):
        kinds = list(worker["kind"])
        assert "warmup" in kinds and "measured" in kinds
        last_measured = max(i for i, kind in enumerate(kinds) if kind == "measured")
        assert min(i for i, kind in enumerate(kinds) if kind == "warmup") > last_measured
