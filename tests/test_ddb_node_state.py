"""Node state on a DolphinDB cluster (its wire-protocol stand-in, spoken to by the real
``dolphindb`` client): a node down is never given to prepare or to a user, a node back after a
clear's plan is cleared again before the next cold read, and a profile that lists only the
controller sends users to the data nodes the cluster reports, never to the controller. A cancel
of a timed-out query is sent urgent, ahead of a worker queue the query itself holds."""
from __future__ import annotations

import time

import pytest

from tests.ddbserver.fixture import ddb_server_factory  # noqa: F401
from tests.test_ddb_cluster_sessions import PROBE_SCRIPT, SMALL, target_on
from workloads.datasets.schema import StringMode
from workloads.targets.base import TargetError


def test_a_node_back_after_the_plan_is_cleared_before_the_next_cold_read(ddb_server_factory):  # noqa: F811
    server = ddb_server_factory("--data-nodes", "3", "--replicas", "2")
    layout = target_on(server).prepare("taq", SMALL, StringMode.ARROW)
    assert server.take_offline("dnode3") == ["dnode3"]
    target = target_on(server)
    target.open(layout, 0)
    try:
        assert "pnodeRun(clearAllCache) on dnode1, dnode2" in target.drop_cache(layout)     # dnode3 down
        assert server.bring_online("dnode3") == []             # back, holding what it read before
        applied = target.drop_cache(layout)
        assert "pnodeRun(clearAllCache) on dnode1, dnode2, dnode3" in applied, applied
    finally:
        target.close()


def test_a_node_down_is_given_neither_to_prepare_nor_to_a_user(ddb_server_factory):  # noqa: F811
    server = ddb_server_factory("--data-nodes", "3", "--replicas", "2")
    assert server.take_offline("dnode1") == ["dnode1"]            # the first data node listed
    target = target_on(server, node_policy="round_robin")
    layout = target.prepare("taq", SMALL, StringMode.ARROW)           # on a node that is up
    assert layout.rows == SMALL.days * SMALL.rows_per_day
    up = {f"{server.host}:{p}" for p in server.data_ports[1:]}
    given = []
    for worker in range(4):
        user = target_on(server, node_policy="round_robin")
        user.open(layout, worker)
        try:
            given.append(user.read_day(layout, layout.days[0]).node)
        finally:
            user.close()
    assert set(given) == up, given                                    # round robin over the two up


def test_a_profile_listing_only_the_controller_sends_users_to_the_data_nodes(ddb_server_factory):  # noqa: F811
    server = ddb_server_factory("--data-nodes", "2")
    profile = server.profile()
    profile["nodes"] = [n for n in profile["nodes"] if n["role"] == "controller"]
    layout = target_on(server, profile).prepare("taq", SMALL, StringMode.ARROW)
    given = set()
    for worker in range(2):
        user = target_on(server, profile, node_policy="round_robin")
        user.open(layout, worker)
        try:
            given.add(user.read_day(layout, layout.days[0]).node)
        finally:
            user.close()
    assert given == {f"{server.host}:{p}" for p in server.data_ports}, given     # never the controller


def test_the_cancel_of_a_timed_out_query_is_urgent_and_never_waits_behind_it(ddb_server_factory):  # noqa: F811
    """One worker a node, held by the query the client gave up on: an ordinary look-up and cancel
    would queue behind it until it ended; sent urgent they end it at once."""
    server = ddb_server_factory("--workers", "1")
    layout = target_on(server).prepare("taq", SMALL, StringMode.ARROW)
    target = target_on(server, query_timeout=1)
    target.open(layout, 0)
    seen = len(server.stats()["jobs"]["log"])
    try:
        server.control(delay=6.0, delay_match=PROBE_SCRIPT)           # the probe holds the only worker
        started = time.monotonic()
        with target.probe_mode(), pytest.raises(TargetError, match="connection lost or reply timed out"):
            target.read_day(layout, layout.days[0])
        assert time.monotonic() - started < 4.0, target.cancel_note    # not the 6 s the query would hold
        probe = [j for j in server.jobs_since(seen) if j["desc"].startswith("tickbench_t0")]
        assert len(probe) == 1 and probe[0]["cancelled"] and target.cancel_note == ""
    finally:
        server.control(reset=True)
        target.close()


def test_the_test_server_queues_an_ordinary_job_for_a_worker_and_runs_an_urgent_one_at_once(ddb_server_factory):  # noqa: F811
    import threading

    from workloads.targets.dolphindb.wire import RawConnection, WireError
    server = ddb_server_factory("--workers", "1")
    server.control(delay=4.0, delay_match="^1 \\+ 1")
    holder = RawConnection(server.host, server.port, "admin", "123456", timeout=10)
    held = threading.Thread(target=lambda: holder.run_discard("1 + 1"), daemon=True)
    held.start()                                                  # the node's one worker, held 4 s
    time.sleep(0.5)
    waiting = RawConnection(server.host, server.port, "admin", "123456", timeout=1)
    urgent = RawConnection(server.host, server.port, "admin", "123456", timeout=1)
    try:
        with pytest.raises(WireError, match="timed out"):
            waiting.run_texts("exec rootJobId from getConsoleJobs() where sessionId = 1")
        assert urgent.run_texts("exec rootJobId from getConsoleJobs() where sessionId = 1", urgent=True) == []
    finally:
        server.control(reset=True)
        held.join(10)
        for connection in (holder, waiting, urgent):
            connection.close()
