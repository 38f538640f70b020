"""What the test server learnt for cold caches and clean runs, through the REAL client: per-node
caches with a read log, clearAllCache and clearComputeNodeCache where DolphinDB's docs say they
reach, compute groups and publicName in getClusterPerf, objs(true), a lost reply, and a per-node
connection limit. (The server's timings are its own, never DolphinDB's.)"""
from __future__ import annotations

import datetime as dt

import dolphindb as ddb
import pandas as pd
import pytest

from tests.ddbserver.fixture import ddb_server_factory  # noqa: F401
from tests.ddbserver.sessions import LIMIT_MESSAGE

pytestmark = pytest.mark.timeout(60)
DB = "dfs://cache_probe"
READ_DAY1 = f'select * from loadTable("{DB}", "quotes") where date = 2007.08.23'
READ_DAY2 = f'select * from loadTable("{DB}", "quotes") where date = 2007.08.24'
READ_SLICE = f'select * from loadTable("{DB}", "quotes") where date = 2007.08.23, symbol = "B"'


def connect(server, port: int, timeout: float = 5) -> ddb.session:
    s = ddb.session()
    assert s.connect(server.host, port, "admin", "123456", timeout=dt.timedelta(seconds=timeout),
                     netTimeout=dt.timedelta(seconds=5))
    return s


def lay_out(session) -> None:
    """Two days x three key ranges (A.., B.., C..) of a tiny quotes table."""
    session.run("\n".join([
        'dbDate = database("", VALUE, 2007.08.23..2007.08.30)',
        'dbKey = database("", RANGE, symbol(["A", "B", "C", "D"]))',
        f'db = database("{DB}", COMPO, [dbDate, dbKey], engine="OLAP", atomic="CHUNK")']))
    session.run("\n".join([
        f'db = database("{DB}")',
        'schemaTable = table(1:0, ["date", "symbol", "bid"], [DATE, SYMBOL, DOUBLE])',
        'pt = db.createPartitionedTable(schemaTable, "quotes", ["date", "symbol"])']))
    frame = pd.DataFrame({"date": pd.to_datetime(["2007-08-23"] * 3 + ["2007-08-24"] * 3),
                          "symbol": ["A", "B", "C"] * 2, "bid": [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]})
    object.__setattr__(frame, "__DolphinDB_Type__", {"date": ddb.settings.DT_DATE, "symbol": ddb.settings.DT_SYMBOL})
    assert session.run(f'tableInsert{{loadTable("{DB}", "quotes")}}', frame) == 6


def reads(server, seen: int) -> list[tuple[str, int, int, bool]]:
    return [(r["node"], r["partitions"], r["hits"], r["cold"]) for r in server.reads_since(seen)]


@pytest.fixture(scope="module")
def grouped(ddb_server_factory_module):
    """A controller, two data nodes and two compute nodes in one compute group, laid out."""
    server = ddb_server_factory_module("--data-nodes", "2", "--compute-nodes", "2")
    s = connect(server, server.data_ports[0])
    lay_out(s)
    s.close()
    return server


@pytest.fixture(scope="module")
def ddb_server_factory_module():
    from tests.ddbserver.fixture import start_server

    started = []

    def factory(*args):
        started.append(start_server(*args))
        return started[-1]

    yield factory
    for server in started:
        server.stop()


# --- caches -----------------------------------------------------------------------------------------
def test_a_read_fills_the_data_nodes_cache_and_clear_all_cache_empties_it(grouped):
    s = connect(grouped, grouped.data_ports[1])
    try:
        s.run("pnodeRun(clearAllCache)")
        seen = len(grouped.stats()["reads"])
        s.run(READ_DAY1)                      # 3 partitions (a day's three key ranges), none cached
        s.run(READ_DAY1)                      # all three found
        s.run(READ_SLICE)                     # one of them, found
        s.run(READ_DAY2)                      # another day: cold
        s.run("pnodeRun(clearAllCache)")
        s.run(READ_DAY1)
        assert reads(grouped, seen) == [("dnode2", 3, 0, True), ("dnode2", 3, 3, False), ("dnode2", 1, 1, False),
                                        ("dnode2", 3, 0, True), ("dnode2", 3, 0, True)]
    finally:
        s.close()


def test_clear_all_cache_on_named_nodes_leaves_the_others(grouped):
    s = connect(grouped, grouped.data_ports[0])
    try:
        s.run(READ_DAY1)
        s.run('pnodeRun(clearAllCache, ["dnode1"])')
        seen = len(grouped.stats()["reads"])
        s.run(READ_DAY1)
        (entry,) = grouped.reads_since(seen)
        # the partitions dnode2 holds were still cached: some hits, so not cold
        assert 0 < entry["hits"] < entry["partitions"] and not entry["cold"]
        with pytest.raises(RuntimeError, match=r"The node alias \[nosuch\] does not exist"):
            s.run('pnodeRun(clearAllCache, ["nosuch"])')
    finally:
        s.close()


def test_a_compute_group_keeps_its_cache_through_clear_all_cache(grouped):
    clear_data = 'pnodeRun(clearAllCache, ["dnode1", "dnode2"])'
    clear_compute = f'pnodeRun(clearComputeNodeCache{{"{DB}"}}, ["cnode1", "cnode2"])'
    compute = connect(grouped, grouped.compute_ports[0])
    try:
        compute.run(clear_data)
        compute.run(clear_compute)
        seen = len(grouped.stats()["reads"])
        compute.run(READ_DAY1)                 # pulled from the data nodes into the group: cold
        compute.run(clear_compute)
        compute.run(READ_DAY1)                 # the data nodes still hold it: warm
        compute.run(clear_data)
        compute.run(READ_DAY1)                 # the group holds it again: warm
        compute.run(clear_data)
        compute.run(clear_compute)
        compute.run(READ_DAY1)                 # both emptied: cold
        compute.run("pnodeRun(clearAllCache)")     # from a grouped node it reaches only the group,
        compute.run(clear_compute)                 # so the data nodes stay warm
        compute.run(READ_DAY1)
        assert [r[3] for r in reads(grouped, seen)] == [True, False, False, True, False]
        assert {r[0] for r in reads(grouped, seen)} == {"cnode1"}
        clears = grouped.stats()["clears"]
        assert clears[-2] == {"by": "cnode1", "function": "clearAllCache", "nodes": ["cnode1", "cnode2"]}
        assert clears[-1]["function"] == "clearComputeNodeCache" and clears[-1]["database"] == DB
        with pytest.raises(RuntimeError, match="only be called on a compute node of a compute group"):
            compute.run(f'pnodeRun(clearComputeNodeCache{{"{DB}"}}, ["dnode1"])')
    finally:
        compute.close()


def test_probes_are_logged_as_measured_reads(grouped):
    s = connect(grouped, grouped.data_ports[0])
    try:
        s.run("pnodeRun(clearAllCache)")
        seen = len(grouped.stats()["reads"])
        s.run("\n".join(["tickbench_t0 = now(true)",
                         f'tickbench_res = select * from loadTable("{DB}", "quotes") where date = 2007.08.23',
                         "tickbench_ns = long(now(true) - tickbench_t0)", "share tickbench_res as probe_cache_1",
                         'undef("tickbench_res")', "tickbench_ns"]))
        s.run('undef("probe_cache_1", SHARED)')
        (entry,) = grouped.reads_since(seen)
        assert (entry["kind"], entry["cold"], entry["node"]) == ("measured", True, "dnode1")
    finally:
        s.close()


# --- getClusterPerf, objs -----------------------------------------------------------------------------
def test_cluster_perf_reports_compute_groups_public_names_and_limits(ddb_server_factory):  # noqa: F811
    server = ddb_server_factory("--data-nodes", "2", "--compute-nodes", "1", "--perf-host", "dn.lan",
                                "--public-name", "127.0.0.1", "--max-connections", "40")
    s = connect(server, server.port)
    try:
        perf = s.run("getClusterPerf(true)")
    finally:
        s.close()
    assert perf["mode"].tolist() == [2, 0, 0, 4] and perf["name"].tolist()[-1] == "cnode1"
    assert perf["computeGroup"].fillna("").tolist() == ["", "", "", "cgroup1"]
    assert set(perf["host"]) == {"dn.lan"} and set(perf["publicName"]) == {"127.0.0.1"}
    assert set(perf["maxConnections"]) == {40}
    assert server.roles == ["controller", "data", "data", "compute"]


def test_objs_lists_the_nodes_shared_namespace(grouped):
    one, two = connect(grouped, grouped.data_ports[0]), connect(grouped, grouped.data_ports[1])
    try:
        one.run('share table(1:0, ["v"], [INT]) as objs_probe')
        listed = one.run("objs(true)")
        row = listed[listed["name"] == "objs_probe"]
        assert len(row) == 1 and bool(row["shared"].iloc[0]) and row["form"].iloc[0] == "TABLE"
        assert "objs_probe" in one.run("exec name from objs(true) where shared = true").tolist()
        assert "objs_probe" not in list(two.run("exec name from objs(true) where shared = true"))
        assert "objs_probe" in grouped.stats()["shared"]["dnode1"]
    finally:
        one.run('undef("objs_probe", SHARED)')
        one.close()
        two.close()
    assert "objs_probe" not in grouped.stats()["shared"]["dnode1"]


# --- a lost reply, the connection limit -------------------------------------------------------------------
def test_a_lost_reply_runs_the_request_and_never_answers(ddb_server_factory):  # noqa: F811
    server = ddb_server_factory("--lose-match", "as lost_reply_probe")
    s = connect(server, server.port, timeout=1.5)
    with pytest.raises(RuntimeError):
        s.run('share table(1:0, ["v"], [INT]) as lost_reply_probe')     # its reply never comes
    s.close()
    assert server.stats()["shared"]["local8848"] == ["lost_reply_probe"]      # but it ran


def test_a_node_refuses_connections_past_its_limit_with_its_message(ddb_server_factory):  # noqa: F811
    from workloads.targets.dolphindb.wire import RawConnection, WireError

    server = ddb_server_factory("--data-nodes", "1", "--max-connections", "2")
    port = server.data_ports[0]
    first, second = connect(server, port), connect(server, port)
    third = ddb.session()
    try:
        assert not third.connect(server.host, port, "admin", "123456")        # the client only says no
    finally:
        third.close()
    with pytest.raises(WireError, match=r"Maximum connections 2 reached\. .*RefId:S00006"):
        RawConnection(server.host, port, timeout=3)                             # the server's own words
    second.close()
    stats = wait_for(lambda: server.stats()["sessions"][str(port)], lambda st: st["open"] == 1)
    assert stats["refused"] >= 2 and stats["logged_in"] == 1 and stats["peak_logged_in"] == 2
    again = connect(server, port)                      # a slot is free again
    assert again.run("1 + 1") == 2
    again.close()
    first.close()
    assert LIMIT_MESSAGE.format(limit=2).endswith("RefId:S00006")


def wait_for(read, done, timeout: float = 5.0):
    """``read()`` until ``done`` holds of it (the server notices a closed socket a moment later)."""
    import time

    deadline = time.monotonic() + timeout
    value = read()
    while not done(value) and time.monotonic() < deadline:
        time.sleep(0.05)
        value = read()
    return value
