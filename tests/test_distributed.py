"""Load from several hosts through a real Dask cluster: a scheduler and two worker processes on
loopback (``workloads.distributed.local_cluster``), each worker one load-generating host. Runs go
through it for real (read-day, slice-download, concurrent-append on the embedded DuckDB); one
host is killed mid-run and the survivors' records are recounted against the table."""
from __future__ import annotations

import os
import signal
import socket
import sys
import threading
import time

import duckdb
import pytest

from workloads.distributed.clock import offset_from_round_trips
from workloads.distributed.cluster import ClusterError, connect, describe_scheduler, workers as present_workers
from workloads.distributed.hosts import version_differences
from workloads.distributed.local_cluster import start
from workloads.distributed.placement import Host, check_placement, place_users, users_per_host
from workloads.datasets.schema import Scale
from workloads.local_engines.base import free_port
from workloads.run.runner import Runner
from workloads.scenario import Scenario
from workloads.results.store import ResultsStore
from workloads.targets.engines import default_config

SCALE = Scale(days=2, rows_per_day=20_000, symbols=50)




def _scenario(tmp_path, cluster, workload: str, users=(4,), **changes) -> Scenario:
    values = dict(name=f"dask {workload}", dataset="taq", scale=SCALE, target="duckdb",
                  target_config=default_config("duckdb", tmp_path / "data"), workload=workload,
                  users=tuple(users), operations=3, warmup_ops=1, probe_ops=0, scheduler=cluster.scheduler)
    return Scenario(**{**values, **changes})


def _appended(scenario) -> int:
    """Rows in the append table, counted by DuckDB itself."""
    with duckdb.connect(scenario.target_config["path"], read_only=True) as con:
        (table,) = con.execute("SELECT table_name FROM information_schema.tables "
                               "WHERE table_name LIKE '%\\_append' ESCAPE '\\'").fetchone()
        return con.execute(f'SELECT count(*) FROM "{table}"').fetchone()[0]


def _run_until(runner: Runner, ops: int, timeout_s: float = 240) -> tuple[threading.Thread, dict]:
    """The run going in a thread, once ``ops`` measured operations are in (its result lands in the dict)."""
    done: dict = {}
    thread = threading.Thread(target=lambda: done.setdefault("result", runner.run()))
    thread.start()
    deadline = time.monotonic() + timeout_s
    while runner.snapshot().ops_done < ops and thread.is_alive() and time.monotonic() < deadline:
        time.sleep(0.05)
    return thread, done


def _what_happened(store, run_id: str) -> str:
    """Each step's operations by kind and outcome, and its users' ends: an assertion's message."""
    ops = store.frame(f"SELECT step, kind, ok, count(*) AS ops, sum(rows) AS rows, any_value(error) AS error "
                      f"FROM ops WHERE run_id = '{run_id}' GROUP BY ALL ORDER BY ALL")
    users = store.frame(f"SELECT step, worker, host, state, error FROM workers WHERE run_id = '{run_id}' "
                        "ORDER BY step, worker")
    return f"\noperations:\n{ops.to_string()}\nusers:\n{users.to_string()}"


def _run(tmp_path, scenario):
    store = ResultsStore(tmp_path / "results")
    runner = Runner(scenario, store)
    return store, runner, runner.run()


# ---- placement, clocks, versions: pure --------------------------------------------------------------
HOSTS = [Host("tcp://b:1", 4, "beta"), Host("tcp://a:1", 2, "alpha")]


def test_spread_gives_each_host_the_same_number_of_users():
    assert users_per_host(place_users(5, HOSTS, "spread")) == {"tcp://a:1": 3, "tcp://b:1": 2}


def test_packed_fills_a_host_up_to_its_cores_first():
    assert users_per_host(place_users(2, HOSTS, "packed")) == {"tcp://a:1": 2}
    assert users_per_host(place_users(5, HOSTS, "packed")) == {"tcp://a:1": 2, "tcp://b:1": 3}
    assert users_per_host(place_users(8, HOSTS, "packed")) == {"tcp://a:1": 3, "tcp://b:1": 5}


def test_pinned_follows_the_users_per_host_by_address_or_name():
    assert users_per_host(place_users(4, HOSTS, "pinned", {"beta": 3, "tcp://a:1": 1})) == \
        {"tcp://a:1": 1, "tcp://b:1": 3}
    assert users_per_host(place_users(8, HOSTS, "pinned", {"beta": 3, "alpha": 1})) == \
        {"tcp://a:1": 2, "tcp://b:1": 6}
    with pytest.raises(ValueError, match="does not have: gamma"):
        place_users(2, HOSTS, "pinned", {"gamma": 2})


def test_placement_is_checked_before_anything_connects():
    with pytest.raises(ValueError, match="tcp://host:8786"):
        check_placement("127.0.0.1:8786", "spread", {})
    with pytest.raises(ValueError, match="spread, packed, pinned"):
        Scenario(scheduler="tcp://127.0.0.1:1", placement="round")
    with pytest.raises(ValueError, match="pinned placement needs"):
        Scenario(scheduler="tcp://127.0.0.1:1", placement="pinned")


def test_the_clock_offset_comes_from_the_tightest_round_trip_and_bounds_its_error():
    true_offset = 12.5
    trips = [(0.0, 0.004 + true_offset, 0.010), (1.0, 1.0005 + true_offset, 1.001), (2.0, 2.03 + true_offset, 2.05)]
    offset = offset_from_round_trips(trips)
    assert offset.error_s == pytest.approx(0.0005)
    assert abs(offset.offset_s - true_offset) <= offset.error_s


def test_hosts_whose_versions_differ_are_named():
    same = {"python": "3.11.9", "libraries": {"pandas": "2.3.3", "numpy": "2.1.0"}}
    other = {"python": "3.11.9", "libraries": {"pandas": "2.2.0", "numpy": "2.1.0"}}
    assert version_differences({"tcp://a:1": same, "tcp://b:1": dict(same)}) == []
    assert version_differences({"tcp://a:1": same, "tcp://b:1": other}) == \
        ["pandas: 2.2.0 on tcp://b:1; 2.3.3 on tcp://a:1"]


# ---- the real cluster ---------------------------------------------------------------------------
def test_describing_the_cluster_gives_each_host_its_environment_and_clock_offset(dask_cluster):
    view = describe_scheduler(dask_cluster.scheduler)
    assert len(view.hosts) == 2 and {h.name for h in view.hosts} == {"host-1", "host-2"}
    for host in view.hosts:
        assert host.address.startswith("tcp://127.0.0.1:") and host.cores == 1
        assert host.environment["libraries"]["distributed"] not in ("", "not installed")
        # one machine, one monotonic clock: the true offset is 0, inside the stated bound
        assert abs(host.clock_offset_s) <= host.clock_error_s < 0.25
    assert view.differences == []


def test_the_hosts_present_are_asked_of_the_scheduler_not_read_from_the_clients_cache(dask_cluster):
    """Dask's client refreshes a cached identity every 2 s, without workers. A refresh landing
    between the fetch of every worker and its read emptied the list: a run on CI declared both
    hosts lost mid-step. Here that refresh always lands there."""
    client = connect(dask_cluster.scheduler)
    try:
        fetch = client._update_scheduler_info

        async def fetch_then_periodic_refresh(n_workers=0):
            await fetch(n_workers=n_workers)
            await fetch(n_workers=0)            # what the client's periodic callback sends

        client._update_scheduler_info = fetch_then_periodic_refresh
        assert sorted(info["name"] for info in present_workers(client).values()) == ["host-1", "host-2"]
    finally:
        client.close()


def test_an_unreachable_scheduler_is_a_clear_message_and_the_run_is_kept(tmp_path):
    refused = f"tcp://127.0.0.1:{free_port()}"
    with pytest.raises(ClusterError, match=f"cannot reach the Dask scheduler at {refused}"):
        connect(refused, timeout_s=2)
    with socket.socket() as silent:              # accepts, never answers: not a Dask scheduler
        silent.bind(("127.0.0.1", 0))
        silent.listen()
        address = f"tcp://127.0.0.1:{silent.getsockname()[1]}"
        with pytest.raises(ClusterError, match=f"cannot reach the Dask scheduler at {address}: no answer"):
            connect(address, timeout_s=1)
    store, runner, result = _run(tmp_path, _scenario(tmp_path, type("C", (), {"scheduler": refused}),
                                                     "read-day", users=(1,)))
    assert result.status == "failed" and "cannot reach the Dask scheduler" in result.message
    assert store.run(result.run_id)["status"] == "failed"


@pytest.mark.parametrize("workload, params", [
    ("read-day", {}), ("slice-download", {"rows_per_user": 3_000})])
def test_reads_run_across_both_hosts_and_every_record_keeps_its_host(tmp_path, dask_cluster, workload, params):
    store, runner, result = _run(tmp_path, _scenario(tmp_path, dask_cluster, workload, params=params))
    assert result.status == "completed", result.message + _what_happened(store, result.run_id)
    workers = store.frame(f"SELECT worker, host, state FROM workers WHERE run_id = '{result.run_id}'")
    assert set(workers["state"]) == {"done"}
    placed = dict(zip(workers["worker"], workers["host"]))
    assert len(set(placed.values())) == 2 and sorted(users_per_host(list(placed.values())).values()) == [2, 2]
    ops = store.frame(f"SELECT worker, host, kind, t_start FROM ops WHERE run_id = '{result.run_id}'")
    assert len(ops) and all(ops["host"] == ops["worker"].map(placed))
    assert ops[ops["kind"] == "warmup"].groupby("worker").size().min() >= 1    # each user warmed up
    hosts = store.run(result.run_id)["environment"]["load_generators"]["hosts"]
    assert sorted(h["address"] for h in hosts) == sorted(set(placed.values()))
    assert all("clock_error_s" in h and h["environment"]["cores_logical"] for h in hosts)
    # one timeline: on the run's clock warm-ups ended before the release, measured operations after it
    error = max(h["clock_error_s"] for h in hosts)
    assert ops[ops["kind"] == "warmup"]["t_start"].max() < error
    assert ops[ops["kind"] == "measured"]["t_start"].min() > -error


def test_concurrent_appends_across_hosts_are_all_in_the_table(tmp_path, dask_cluster):
    scenario = _scenario(tmp_path, dask_cluster, "concurrent-append", users=(2, 4),
                         params={"rows_per_user": 6_000, "batch_rows": 2_000}, warmup_ops=0)
    store, runner, result = _run(tmp_path, scenario)
    assert result.status == "completed", result.message
    rows = store.frame(f"SELECT step, sum(rows) AS rows FROM ops WHERE run_id = '{result.run_id}' "
                       "AND kind = 'measured' AND ok GROUP BY step ORDER BY step")
    assert list(rows["rows"]) == [12_000, 24_000], _what_happened(store, result.run_id)
    assert _appended(scenario) == 24_000                  # the table, emptied before each step


def _keep_a_ledger(folder: str) -> None:
    """Run on each Dask worker: every put of the host's relay, once the scheduler has it, writes
    the (worker, seq, kind) of its records to this host's ledger (what the host sent)."""
    import os as _os
    from distributed import Queue
    from workloads.distributed.host_task import unpack
    from workloads.run.messages import Records

    original = getattr(Queue.put, "__wrapped__", Queue.put)

    def put(self, value=None, timeout=None, **kwargs):
        answer = original(self, value, timeout=timeout, **kwargs)
        lines = [f"{message.worker} {seq} {kind}\n" for _, message in unpack(value) if isinstance(message, Records)
                 for seq, kind in zip(message.batch["seq"], message.batch["kind"])]
        with open(_os.path.join(folder, f"ledger-{_os.getpid()}"), "a") as ledger:
            ledger.writelines(lines)
        return answer

    put.__wrapped__ = original
    Queue.put = put


def _ledger(path) -> set[tuple[int, int, str]]:
    if not path.exists():
        return set()
    return {(int(w), int(s), k) for w, s, k in (line.split() for line in path.read_text().splitlines())}


def test_a_host_killed_mid_run_fails_its_users_and_every_record_it_sent_is_kept(tmp_path_factory, tmp_path, monkeypatch):
    """The lost host's records are counted by sequence number: every (worker, seq) its relay put
    into the scheduler's queue before it died (its ledger) is stored. The parent is held from
    reading the queue from before the kill until it declares the host lost, as a busy parent is,
    so the host's last records are still queued when it goes."""
    from distributed import Queue
    cluster = start(tmp_path_factory.mktemp("dask_kill"), workers=2)
    ledgers = tmp_path / "ledgers"
    ledgers.mkdir()
    held = {"on": False, "lost": False, "until": 0.0}
    original_get = Queue.get

    def declaring_loss() -> bool:
        frame = sys._getframe(2)
        while frame is not None:
            if frame.f_code.co_name == "_lose":
                return True
            frame = frame.f_back
        return False

    def get(self, timeout=None, batch=False, **kwargs):
        # held until the launcher declares the host lost, or a minute at most (never a hang)
        if held["on"] and not held["lost"] and time.monotonic() < held["until"]:
            if not declaring_loss():
                time.sleep(min(timeout or 0.0, 0.05))
                if batch:
                    return []
                raise TimeoutError("the parent is busy (held by the test)")
            held["lost"] = True
        return original_get(self, timeout=timeout, batch=batch, **kwargs)

    monkeypatch.setattr(Queue, "get", get)
    try:
        client = connect(cluster.scheduler)
        pids = client.run(os.getpid)
        client.run(_keep_a_ledger, str(ledgers))
        client.close()
        victim = min(pids)                        # the first host (by address) loses its Dask worker
        victim_ledger = ledgers / f"ledger-{pids[victim]}"
        scenario = _scenario(tmp_path, cluster, "concurrent-append", users=(4,),
                             params={"rows_per_user": 40_000, "batch_rows": 1_000}, warmup_ops=0)
        store = ResultsStore(tmp_path / "results")
        runner = Runner(scenario, store)
        thread, done = _run_until(runner, ops=8)
        held["until"], held["on"] = time.monotonic() + 60, True
        before = len(_ledger(victim_ledger))
        deadline = time.monotonic() + 30
        while len(_ledger(victim_ledger)) <= before and time.monotonic() < deadline:
            time.sleep(0.02)
        queued = len(_ledger(victim_ledger)) - before
        os.kill(pids[victim], signal.SIGKILL)
        thread.join(300)
        result = done["result"]
    finally:
        held["on"] = False
        cluster.stop()
    assert queued > 0 and held["lost"]            # records were in the queue when the host went
    workers = store.frame(f"SELECT worker, host, state, error FROM workers WHERE run_id = '{result.run_id}'")
    lost = workers[workers["host"] == victim]
    survivors = workers[workers["host"] != victim]
    assert len(lost) == 2 and set(lost["state"]) == {"failed"}
    assert all(f"host {victim} lost" in e for e in lost["error"])
    assert set(survivors["state"]) == {"done"}
    assert result.status == "completed" and "lost" in result.message       # what survived is a result
    every = store.frame(f"SELECT worker, seq, kind, host FROM ops WHERE run_id = '{result.run_id}'")
    stored = {(int(w), int(q), k) for w, q, k in every[every["host"] == victim][["worker", "seq", "kind"]].values}
    sent = _ledger(victim_ledger)
    assert sent and not sent - stored, f"{len(sent - stored)} of the {len(sent)} records the lost host sent are missing"
    ops = store.frame(f"SELECT worker, host, rows FROM ops WHERE run_id = '{result.run_id}' AND ok "
                      "AND kind = 'measured'")
    by_worker = ops.groupby("worker")["rows"].sum()
    for worker in survivors["worker"]:
        assert by_worker[worker] == 40_000                                    # every record of theirs
    in_table = _appended(scenario)
    # the recount: the table has every recorded row, and at most what the lost host appended unreported
    sent_by_lost = int(ops[ops["host"] == victim]["rows"].sum())
    assert in_table >= int(ops["rows"].sum())
    assert in_table - int(ops["rows"].sum()) <= 2 * 40_000 - sent_by_lost


def test_cancelling_a_run_on_dask_stops_every_host_and_keeps_what_was_measured(tmp_path, dask_cluster):
    scenario = _scenario(tmp_path, dask_cluster, "read-day", users=(2,), operations=0, duration_s=60.0)
    store = ResultsStore(tmp_path / "results")
    runner = Runner(scenario, store)
    thread, done = _run_until(runner, ops=4)
    live = runner.snapshot()
    assert sum(live.host_users.values()) == 2 and len(live.host_users) == 2
    cancelled_at = time.monotonic()
    runner.cancel()
    thread.join(60)
    assert not thread.is_alive() and time.monotonic() - cancelled_at < 15     # not the step's 60 s
    result = done["result"]
    assert result.status == "cancelled"
    stored = store.frame(f"SELECT count(*) AS n FROM ops WHERE run_id = '{result.run_id}' AND kind = 'measured'")
    assert stored["n"].iloc[0] >= 4
