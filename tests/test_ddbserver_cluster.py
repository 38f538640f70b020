"""The test server's cluster behaviour with the REAL client: one shared-table namespace per node."""
from __future__ import annotations

import datetime as dt

import dolphindb as ddb
import numpy as np
import pandas as pd
import pytest

from tests.ddbserver.fixture import ddb_cluster  # noqa: F401

pytestmark = pytest.mark.timeout(60)


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
