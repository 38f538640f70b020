"""Cold means cold (workloads.run.cold): every measured operation and probe of a cold step starts with
its data evicted and read by no other operation of its round, the record says which held, the
clears are in no figure, and a user that dies leaves no other waiting."""
from __future__ import annotations

import json
import os
import signal
import threading
import time

import numpy as np
import pytest

from workloads.run.cold import ColdRounds, RoundsBroken
from workloads.run.collector import Collector
from workloads.datasets.schema import Scale
from workloads.results.figures import step_figures
from workloads.results.run_summary import run_answer
from workloads.run.runner import Runner
from workloads.scenario import Scenario
from workloads.results.store import ResultsStore
from workloads.targets.common.cache import resident_bytes

THREE_DAYS = Scale(days=3, rows_per_day=60_000, symbols=40)


@pytest.fixture
def store(tmp_path):
    s = ResultsStore(tmp_path / "results")
    yield s
    s.close()


def _config(target: str, tmp_path) -> dict:
    return {"path": str(tmp_path / "data.duckdb")} if target == "duckdb" else {"root": str(tmp_path / target)}


def _facts(ops):
    return [json.loads(e) for e in ops["extra"]]


def _read_days(store, tmp_path, target: str, users: int, operations: int, cache: str = "cold",
               probes: int = 0, scale: Scale = THREE_DAYS) -> str:
    """A real read-day run (worker processes, the catalog); its run id, once it completed."""
    scenario = Scenario(dataset="taq", scale=scale, target=target, target_config=_config(target, tmp_path),
                        workload="read-day", users=(users,), operations=operations, cache=cache, probe_ops=probes)
    result = Runner(scenario, store).run()
    assert result.status == "completed", result.message
    return result.run_id


@pytest.mark.parametrize("target", ["duckdb", "parquet", "pickle"])
def test_a_cold_step_of_three_users_is_cold_for_every_one_of_its_nine_operations(store, tmp_path, target):
    run_id = _read_days(store, tmp_path, target, users=3, operations=3)
    step = run_answer(store, run_id).steps[0]
    # what was cleared, in words: DuckDB's own buffer pool (an engine cache) beside the files' pages
    cleared = "engine caches, host page cache" if target == "duckdb" else "host page cache"
    assert step.cold_line() == f"cold: 9 of 9 operations (cleared: {cleared})"
    assert step.host_cold_ops == 9 and step.host_cold_p50_s == step.cold_p50_s
    measured = store.ops(run_id, ("measured",))
    facts = _facts(measured)
    # asked of the kernel after every clear: nothing of the layout's files was left in the OS cache
    assert all(f["cold"] and f["cached_after_clear"] == 0 for f in facts)
    assert all("posix_fadvise(DONTNEED)" in f["cleared"] and "drop_caches" not in f["cleared"] for f in facts)
    if target == "duckdb":      # every user's own buffer pool too, not only user 0's
        assert all(f["cleared"].startswith("duckdb reconnect") for f in facts)
    # each round's three users read three different days, released together
    for _, round_ops in measured.groupby("seq"):
        assert len(round_ops) == 3
    assert step.cold_p50_s == pytest.approx(float(np.median(measured["total_s"])))


def test_users_that_share_a_day_in_a_round_are_not_called_cold(store, tmp_path):
    run_id = _read_days(store, tmp_path, "pickle", users=3, operations=3,
                        scale=Scale(days=2, rows_per_day=20_000, symbols=40))
    # three users over two days: in every round two of them read the same day (users 0 and 2); the
    # step's line says why the others were not cold, and what would make them so
    why = ("another user's operation of the same round read the same day (3 users, 2 days: give each user a "
           "day of its own, at least 3 days)")
    step = run_answer(store, run_id).steps[0]
    assert step.cold_line() == "cold: 3 of 9 operations (cleared: host page cache)"
    assert step.not_cold_line() == f"not cold: 6: {why}"
    measured = store.ops(run_id, ("measured",))
    for worker, facts in zip(measured["worker"], _facts(measured)):
        assert facts["cold"] == (worker == 1)
        if worker != 1:
            assert facts["not_cold"] == why


def test_a_cold_steps_probes_are_cold_too(store, tmp_path):
    run_id = _read_days(store, tmp_path, "pickle", users=1, operations=2, probes=2)
    probes = store.ops(run_id, ("probe",))
    assert len(probes) == 2 and (probes["io_s"] > 0).all()
    assert all(f["cold"] and f["cached_after_clear"] == 0 for f in _facts(probes))


def test_a_warm_step_says_nothing_of_cold(store, tmp_path):
    run_id = _read_days(store, tmp_path, "pickle", users=2, operations=2, cache="warm")
    measured = store.ops(run_id, ("measured",))
    assert measured["extra"].isna().all()
    assert run_answer(store, run_id).steps[0].cold_ops == 0


def test_a_cold_steps_window_is_the_time_its_operations_ran(store, tmp_path):
    run_id = _read_days(store, tmp_path, "parquet", users=2, operations=4)
    measured = store.ops(run_id, ("measured",))
    spans = sorted(zip(measured["t_start"], measured["t_start"] + measured["total_s"]))
    union, (start, end) = 0.0, spans[0]
    for s, e in spans[1:]:                 # the union of the operations' intervals, worked out here
        if s > end:
            union, start, end = union + end - start, s, e
        else:
            end = max(end, e)
    union += end - start
    figures = step_figures(store, run_id).iloc[0]
    assert figures["window_s"] == pytest.approx(union, rel=1e-9)
    assert figures["window_s"] < max(e for _, e in spans)    # the clears between rounds are left out
    assert figures["rows_per_s"] == pytest.approx(figures["rows"] / union, rel=1e-9)


def test_busy_time_is_the_union_of_the_operations_intervals():
    collector = Collector.__new__(Collector)
    collector._spans = [(np.array([0.0, 0.5, 3.0]), np.array([1.0, 2.0, 4.0])),
                        (np.array([3.5, 10.0]), np.array([3.6, 10.25]))]
    assert collector.busy_s() == pytest.approx(2.0 + 1.0 + 0.25)


def _round_user(rounds, worker, days, results):
    try:
        start = rounds.next_round(worker, True, days, lambda: (["evicted"], 0))
        results[worker] = start
    except RoundsBroken as exc:
        results[worker] = exc


def test_rounds_release_users_together_and_say_who_shared_a_day():
    import multiprocessing as mp
    rounds = ColdRounds(mp.get_context("spawn"), users=3, days=4)
    results: dict = {}
    threads = [threading.Thread(target=_round_user, args=(rounds, w, days, results))
               for w, days in ((0, [0]), (1, [1, 2]), (2, [2]))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(10)
    assert results[0].cold and results[0].cleared == "evicted" and results[0].left_bytes == 0
    assert not results[1].cold and not results[2].cold and "same day" in results[2].why_not


def test_a_clear_that_leaves_pages_cached_makes_no_operation_cold():
    import multiprocessing as mp
    rounds = ColdRounds(mp.get_context("spawn"), users=1, days=1)
    start = rounds.next_round(0, True, [0], lambda: (["posix_fadvise(DONTNEED)"], 8192))
    assert not start.cold and start.why_not == "8,192 bytes of the layout's files were still in the OS cache after the clear"
    assert rounds.next_round(0, True, [0], lambda: ([], None)).why_not.startswith("nothing could be cleared")


def test_an_aborted_round_releases_the_waiting_users():
    import multiprocessing as mp
    rounds = ColdRounds(mp.get_context("spawn"), users=2, days=1)
    results: dict = {}
    waiting = threading.Thread(target=_round_user, args=(rounds, 0, [0], results))
    waiting.start()
    time.sleep(0.3)
    rounds.abort()                         # what the parent does when the other user dies
    waiting.join(10)
    assert isinstance(results[0], RoundsBroken)


def test_a_user_killed_in_a_cold_step_leaves_no_other_waiting(store, tmp_path):
    scale = Scale(days=4, rows_per_day=200_000, symbols=40)
    scenario = Scenario(dataset="taq", scale=scale, target="pickle", target_config=_config("pickle", tmp_path),
                        workload="read-day", users=(2,), operations=100_000, cache="cold", probe_ops=0)
    runner = Runner(scenario, store)
    thread = threading.Thread(target=runner.run)
    thread.start()
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and not (runner.snapshot().workers.get(1) == "running"
                                               and runner.snapshot().ops_done > 4):
        time.sleep(0.05)
    victim = store.workers(runner.run_id).set_index("worker").loc[1, "pid"]
    os.kill(int(victim), signal.SIGKILL)
    thread.join(120)
    assert not thread.is_alive(), f"the run did not end after a user of its cold step was killed: {runner.snapshot()}"
    run = store.run(runner.run_id)
    assert "worker 1" in run["message"] and "SIGKILL" in run["message"]
    ops = store.ops(runner.run_id, ("measured",))
    assert (ops["worker"] == 0).sum() > 0      # the survivor keeps what it measured


def test_resident_bytes_is_what_the_kernel_holds(tmp_path):
    from workloads.targets.common.cache import drop_file_cache
    path = tmp_path / "data.bin"
    path.write_bytes(os.urandom(4 * 2**20))
    drop_file_cache([path])
    assert resident_bytes(path) == 0
    with open(path, "rb") as f:
        f.read(2**20)
    assert resident_bytes(path) >= 2**20


def test_the_results_view_says_how_many_operations_held_cold(store, tmp_path, make_widget):
    from widgets.run.results_view import RunResultsView

    run_id = _read_days(store, tmp_path, "pickle", users=3, operations=3,
                        scale=Scale(days=2, rows_per_day=20_000, symbols=40))
    view = make_widget(RunResultsView, size=(1100, 600))
    view.show_answer(run_answer(store, run_id))
    assert view.table.item(0, 1).text() == "9 (3 cold)"
    assert view.table.item(0, 1).toolTip().startswith("cold: 3 of 9 operations (cleared: host page cache): held cold when")
    assert view.table.item(0, 1).toolTip().endswith("\nnot cold: 6: another user's operation of the same round read "
                                                    "the same day (3 users, 2 days: give each user a day of its own, "
                                                    "at least 3 days)")
