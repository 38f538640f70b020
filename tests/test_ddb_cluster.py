"""Cluster profiles, connection verdicts, node discovery and node policies."""
from __future__ import annotations

import socket
import time
from collections import Counter

import pytest

from tests.ddbserver.fixture import ddb_cluster, ddb_server, ddb_server_factory  # noqa: F401
from workloads.targets.dolphindb.cluster import (ClusterProfile, Node, discover_nodes, pick_node,
                               profile_from_discovery)
from workloads.targets.dolphindb.cluster import test_connection as check_connection

pytestmark = pytest.mark.timeout(60)


def profile_for(server, password="123456", **kw) -> ClusterProfile:
    return ClusterProfile.single(server.host, server.port, "admin", password, **kw)


# --- profiles ----------------------------------------------------------------------------------------
def test_profile_round_trips_without_its_password():
    # plain data, never connected to: loopback addresses all the same
    profile = ClusterProfile("lab", (Node("127.0.0.1", 8900, "controller"), Node("127.0.0.1", 8848, "data"),
                                     Node("::1", 8849, "data")), "bench", "s3cret", "DDB", True,
                             "round_robin")
    data = profile.to_dict()
    assert "password" not in data and "s3cret" not in repr(data) and "s3cret" not in repr(profile)
    back = ClusterProfile.from_dict(data, password="s3cret")
    assert back == profile and back.password == "s3cret"
    assert profile.entry.role == "controller" and [n.address for n in profile.data_nodes] == ["127.0.0.1:8848", "::1:8849"]


@pytest.mark.parametrize("data,message", [
    ({"name": "x", "nodes": []}, "no nodes"),
    ({"name": "x", "nodes": [{"host": "h"}]}, "node 1 needs a host and a port"),
    ({"name": "x", "nodes": [{"host": "h", "port": "88a"}]}, "port '88a' is not a number"),
    ({"name": "x", "nodes": [{"host": "h", "port": 70000}]}, "between 1 and 65535"),
    ({"name": "x", "nodes": [{"host": "bad host", "port": 1}]}, "spaces"),
    ({"name": "x", "nodes": [{"host": "h", "port": 1, "role": "boss"}]}, "role 'boss'"),
    ({"name": "x", "nodes": [{"host": "h", "port": 1}], "protocol": "xml"}, "protocol 'XML'"),
    ({"name": "x", "nodes": [{"host": "h", "port": 1}], "node_policy": "all"}, "node policy 'all'"),
])
def test_bad_profiles_are_refused_with_the_reason(data, message):
    with pytest.raises(ValueError, match=message):
        ClusterProfile.from_dict(data)


def test_node_policies():
    nodes = (Node("c", 1, "controller"), Node("d1", 2, "data"), Node("d2", 3, "data"), Node("d3", 4, "data"))
    one = ClusterProfile("p", nodes, node_policy="one")
    assert {pick_node(one, w).host for w in range(6)} == {"d1"}
    rr = ClusterProfile("p", nodes, node_policy="round_robin")
    assert [pick_node(rr, w).host for w in range(5)] == ["d1", "d2", "d3", "d1", "d2"]
    rnd = ClusterProfile("p", nodes, node_policy="random")
    picks = [pick_node(rnd, w, seed=7).host for w in range(60)]
    assert picks == [pick_node(rnd, w, seed=7).host for w in range(60)]          # reproducible
    assert set(picks) == {"d1", "d2", "d3"} and max(Counter(picks).values()) < 40   # spread
    assert picks != [pick_node(rnd, w, seed=8).host for w in range(60)]


# --- verdicts -------------------------------------------------------------------------------------------
def test_ok_verdict_names_the_version(ddb_server):  # noqa: F811
    verdict = check_connection(profile_for(ddb_server))
    assert verdict.ok and verdict.kind == "ok" and "tickbench-test-server" in verdict.server_version


def test_refused(ddb_server):  # noqa: F811
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    verdict = check_connection(ClusterProfile.single("127.0.0.1", port))
    assert (verdict.ok, verdict.kind) == (False, "refused") and str(port) in verdict.message


def test_timed_out_when_nothing_answers():
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(1)                 # the kernel accepts; nobody ever answers
    try:
        start = time.monotonic()
        verdict = check_connection(ClusterProfile.single("127.0.0.1", listener.getsockname()[1]), timeout=1.5)
        assert verdict.kind == "timed_out" and "did not answer within 1.5 s" in verdict.message
        assert time.monotonic() - start < 4
    finally:
        listener.close()


def test_wrong_password(ddb_server):  # noqa: F811
    verdict = check_connection(profile_for(ddb_server, password="guess"))
    assert verdict.kind == "wrong_password" and "user 'admin'" in verdict.message
    assert "password is incorrect" in verdict.message


def test_not_initialised(ddb_server_factory):  # noqa: F811
    server = ddb_server_factory("--not-initialised")
    verdict = check_connection(profile_for(server))
    assert verdict.kind == "not_initialised" and "isNodeInitialized" in verdict.message


def test_error_verdict_carries_the_server_text(ddb_server):  # noqa: F811
    ddb_server.control(error_match="^version", error_message="License expired")
    try:
        verdict = check_connection(profile_for(ddb_server))
    finally:
        ddb_server.control(reset=True)
    assert verdict.kind == "error" and "License expired" in verdict.message


# --- discovery ------------------------------------------------------------------------------------------
def test_discover_cluster_nodes(ddb_cluster):  # noqa: F811
    entry = ClusterProfile("fake", (Node("127.0.0.1", ddb_cluster.port, "controller"),), "admin", "123456")
    discovery = discover_nodes(entry)
    nodes = discovery.nodes
    assert discovery.from_cluster
    assert [n.mode for n in nodes] == ["controller", "data", "data", "data"]
    assert [n.port for n in nodes] == ddb_cluster.ports and [n.name for n in nodes][1:] == ["dnode1", "dnode2", "dnode3"]
    assert all(n.state for n in nodes) and nodes[2].cpu_percent > 0 and nodes[1].memory_used > 0
    full = profile_from_discovery(entry, discovery)
    assert [n.port for n in full.data_nodes] == ddb_cluster.data_ports


def test_discover_falls_back_to_the_single_node(ddb_server):  # noqa: F811
    # a single node has no controller to ask: rpc(getControllerAlias(), ...) fails there
    discovery = discover_nodes(profile_for(ddb_server))
    nodes = discovery.nodes
    assert not discovery.from_cluster and "single node" in discovery.note
    assert len(nodes) == 1 and nodes[0].name == "local8848" and nodes[0].mode == "single"
    assert nodes[0].port == ddb_server.port
