"""The test server's cluster behaviour with the REAL client: one shared-table namespace per node,
DolphinDB 2.x mode (getClusterPerf on the controller only), getControllerAlias and rpc."""
from __future__ import annotations

import datetime as dt

import dolphindb as ddb
import numpy as np
import pandas as pd
import pytest

from tests.ddbserver import codec as c
from tests.ddbserver.fixture import ddb_cluster, ddb_server, ddb_server_factory  # noqa: F401
from tests.ddbserver.rawclient import RawClient

pytestmark = pytest.mark.timeout(60)

NOT_CONTROLLER = "Only master or single mode supports function getClusterPerf"
RPC_PERF = "rpc(getControllerAlias(), getClusterPerf, true)"


def connect(server, port: int) -> ddb.session:
    s = ddb.session()
    assert s.connect(server.host, port, "admin", "123456", timeout=dt.timedelta(seconds=5),
                     netTimeout=dt.timedelta(seconds=10))
    return s


@pytest.fixture
def two_data_nodes(ddb_cluster):  # noqa: F811
    first, second = (connect(ddb_cluster, p) for p in ddb_cluster.data_ports[:2])
    yield first, second
    first.close()
    second.close()


# --- shared tables are per node -------------------------------------------------------------------
def test_a_shared_table_is_visible_only_on_its_node(two_data_nodes):
    one, two = two_data_nodes
    one.run('share table(1:0, ["k", "v"], [SYMBOL, DOUBLE]) as node_probe')
    try:
        assert one.run('defined("node_probe", SHARED)') is True
        assert two.run('defined("node_probe", SHARED)') is False
        with pytest.raises(RuntimeError, match="Cannot recognize the token node_probe"):
            two.run("node_probe")
        frame = pd.DataFrame({"k": ["a", "b"], "v": [1.0, 2.0]})
        with pytest.raises(RuntimeError, match="Cannot recognize the token node_probe"):
            two.run("tableInsert{node_probe}", frame)
        with pytest.raises(RuntimeError, match="Cannot recognize the token node_probe"):
            two.run("clear!(node_probe)")
        with pytest.raises(RuntimeError, match="does not exist"):
            two.run('undef("node_probe", SHARED)')
        assert one.run("tableInsert{node_probe}", frame) == 2
        assert one.run("node_probe")["v"].tolist() == [1.0, 2.0]
    finally:
        one.run('undef("node_probe", SHARED)')


def test_the_same_name_can_be_shared_on_each_node_independently(two_data_nodes):
    one, two = two_data_nodes
    one.run('share table(1:0, ["v"], [INT]) as node_twin')
    two.run('share table(1:0, ["name", "x"], [STRING, DOUBLE]) as node_twin')
    try:
        one.run("tableInsert{node_twin}", pd.DataFrame({"v": np.array([7], "int32")}))
        assert list(two.run("node_twin").columns) == ["name", "x"] and two.run("node_twin").empty
        two.run('undef("node_twin", SHARED)')
        assert one.run("node_twin")["v"].tolist() == [7]          # node 1's copy is untouched
        one.run("clear!(node_twin)")
        assert one.run("node_twin").empty
    finally:
        one.run('undef("node_twin", SHARED)')
        if two.run('defined("node_twin", SHARED)'):
            two.run('undef("node_twin", SHARED)')


def test_sessions_on_one_node_share_its_namespace(ddb_cluster):  # noqa: F811
    port = ddb_cluster.data_ports[2]
    a, b = connect(ddb_cluster, port), connect(ddb_cluster, port)
    a.run('share table(1:0, ["v"], [DOUBLE]) as node_same')
    try:
        assert b.run('defined("node_same", SHARED)') is True
        b.run("tableInsert{node_same}", pd.DataFrame({"v": [0.5]}))
        assert a.run("node_same")["v"].tolist() == [0.5]
    finally:
        a.run('undef("node_same", SHARED)')


# --- controller alias, rpc, 2.x mode ----------------------------------------------------------------
def test_controller_alias_and_rpc_from_every_node(ddb_cluster):  # noqa: F811
    sessions = [connect(ddb_cluster, p) for p in ddb_cluster.ports]
    try:
        direct = sessions[0].run("getClusterPerf(true)")
        for s in sessions:
            assert s.run("getControllerAlias()") == "controller"
            via_rpc = s.run(RPC_PERF)
            assert via_rpc.drop(columns="connectionNum").equals(direct.drop(columns="connectionNum"))
            assert s.run("getClusterPerf(true)")["name"].tolist() == direct["name"].tolist()  # 3.x: any node
    finally:
        for s in sessions:
            s.close()


def test_version_2_runs_getclusterperf_only_on_the_controller(ddb_server_factory):  # noqa: F811
    server = ddb_server_factory("--data-nodes", "3", "--server-major", "2")
    sessions = [connect(server, p) for p in server.ports]
    try:
        controller, data = sessions[0], sessions[1:]
        version = controller.run("version()")
        assert version.startswith("2.00.") and int(version.split(".")[0]) == 2
        perf = controller.run("getClusterPerf(true)")
        assert perf["mode"].tolist() == [2, 0, 0, 0] and perf["port"].tolist() == server.ports
        for s in data:
            with pytest.raises(RuntimeError, match=NOT_CONTROLLER):
                s.run("getClusterPerf(true)")
            assert s.run("getNodeAlias()").startswith("dnode")      # the session survives the error
            assert s.run("getControllerAlias()") == "controller"
            via_rpc = s.run(RPC_PERF)
            assert via_rpc.drop(columns="connectionNum").equals(perf.drop(columns="connectionNum"))
    finally:
        for s in sessions:
            s.close()


def test_default_version_is_3(ddb_server):  # noqa: F811
    s = connect(ddb_server, ddb_server.port)
    assert s.run("version()").startswith("3.00.")
    s.close()


@pytest.mark.parametrize("flags", [(), ("--server-major", "2")])
def test_single_node_has_no_controller_alias(ddb_server_factory, flags):  # noqa: F811
    server = ddb_server_factory(*flags)
    s = connect(server, server.port)
    try:
        assert s.run("getControllerAlias()") is None     # the client returns None for an empty STRING
        with RawClient(server.host, server.port) as raw:
            reply, headers = raw.run("getControllerAlias()")
        assert (reply, headers) == (c.Scalar(c.STRING, ""), [(c.STRING, c.SCALAR)])
        with pytest.raises(RuntimeError, match=r"rpc: the node alias \[\] does not exist"):
            s.run(RPC_PERF)
        assert s.run("getClusterPerf(true)")["mode"].tolist() == [3]   # single mode runs it itself
    finally:
        s.close()
