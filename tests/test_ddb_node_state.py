"""Node state on a DolphinDB cluster (its wire-protocol stand-in, spoken to by the real
``dolphindb`` client): a node down is never given to prepare or to a user, a node back after a
clear's plan is cleared again before the next cold read, and a profile that lists only the
controller sends users to the data nodes the cluster reports, never to the controller."""
from __future__ import annotations

from tests.ddbserver.fixture import ddb_server_factory  # noqa: F401
from tests.test_ddb_cluster_sessions import SMALL, target_on
from workloads.datasets.schema import StringMode


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
