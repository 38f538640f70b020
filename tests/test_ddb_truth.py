"""What a real DolphinDB cluster would do to the target, each checked against the test server in
the matching mode, through the real client (timings here are the test server's, not DolphinDB's).

1. the timed read costs what a user's ``session.run(query)`` costs: nothing else inside it;
2. PROTOCOL_ARROW: metadata on DDB sessions; a server without formatArrow answers DDB, recorded;
3. shared tables are per node: each worker's upload table lives on its own node and is undefined
   when the worker closes;
4. getClusterPerf runs only on the controller in 2.x: asked through rpc, and a single node's
   answer never rewrites a profile;
5. cold cache: see test_ddb_cold.py;
6. compression only with DDB; transfer not measured under PICKLE; the shared result of a probe is
   dropped on every error path (and test_ddb_leftovers.py).
"""
from __future__ import annotations

import time

import dolphindb as ddb
import pytest

from tests.ddbserver.fixture import ddb_cluster, ddb_server, ddb_server_factory  # noqa: F401
from workloads.targets.dolphindb.cluster import ClusterProfile, discover_nodes, profile_from_discovery
from workloads.datasets import get_dataset
from workloads.datasets.schema import Scale, StringMode
from workloads.targets.base import TargetError
from workloads.targets.dolphindb import DolphinDBTarget

pytestmark = pytest.mark.timeout(120)
SMALL = Scale(days=2, rows_per_day=4_000, symbols=20)
PASSWORD = "123456"


def single(server, **extra) -> DolphinDBTarget:
    return DolphinDBTarget({"host": server.host, "port": server.port, "user": "admin", "password": PASSWORD,
                            "timeout": 3, "query_timeout": 20, **extra})


def cluster_profile(server, **extra) -> dict:
    roles = ["controller"] + ["data"] * (len(server.ports) - 1)
    return {"name": "c", "user": "admin", "nodes": [{"host": "127.0.0.1", "port": p, "role": r}
                                                    for p, r in zip(server.ports, roles)], **extra}


def on_cluster(server, **extra) -> DolphinDBTarget:
    return DolphinDBTarget({"profile": cluster_profile(server, **extra), "password": PASSWORD,
                            "timeout": 3, "query_timeout": 20})


def session_on(port: int):
    s = ddb.session()
    assert s.connect("127.0.0.1", port, "admin", PASSWORD)
    return s


@pytest.fixture
def faults(ddb_server):  # noqa: F811
    yield ddb_server.control
    ddb_server.control(reset=True)


# --- 1. the timed read is the user's call -----------------------------------------------------------
def test_the_measured_read_runs_the_plain_query_only(ddb_server, faults):  # noqa: F811
    target = single(ddb_server)
    layout = target.prepare("taq", SMALL, StringMode.ARROW)
    target.open(layout, 0)
    try:
        faults(delay=1.5, delay_match="^tickbench_t0")      # only the server-timed probe script
        started = time.perf_counter()
        plain = target.read_day(layout, layout.days[0])
        plain_s = time.perf_counter() - started
        started = time.perf_counter()
        with target.probe_mode():
            probe = target.read_day(layout, layout.days[0])
        probe_s = time.perf_counter() - started
    finally:
        target.close()
    # the measured read never ran the timing script, the second fetch or the raw re-read
    assert plain_s < 1.0 <= 1.5 <= probe_s
    assert plain.rows == probe.rows == 4_000 and plain.phases == {}
    assert set(probe.phases) == {"server", "transfer", "decode"}


# --- 2. ARROW ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("plugin", [True, False])
def test_arrow_metadata_runs_on_ddb_sessions_and_a_missing_plugin_is_recorded(ddb_server_factory, plugin):  # noqa: F811
    server = ddb_server_factory("--data-nodes", "2", *([] if plugin else ["--no-arrow-plugin"]))
    target = on_cluster(server, protocol="ARROW")
    layout = target.prepare("taq", SMALL, StringMode.ARROW)      # counts rows per day: a DataFrame
    assert layout.rows == 8_000
    discovery = discover_nodes(ClusterProfile.from_dict(cluster_profile(server, protocol="ARROW"),
                                                        password=PASSWORD))
    assert discovery.from_cluster and len(discovery.nodes) == 3
    info = target.describe()
    if plugin:
        assert info["reply_format"].startswith("the server answered PROTOCOL_ARROW with Arrow on")
    else:
        assert "no formatArrow plugin" in info["reply_format"]
    target.open(layout, 0)
    try:
        result = target.read_day(layout, layout.days[0])
    finally:
        target.close()
    assert result.rows == 4_000
    # with Arrow the user's to_pandas is part of the call; a DDB answer needs none
    assert set(result.phases) == ({"decode"} if plugin else set())


# --- 3. shared tables are per node ------------------------------------------------------------------
def test_upload_tables_live_on_each_workers_node_and_are_undefined_when_it_closes(ddb_cluster):  # noqa: F811
    target = on_cluster(ddb_cluster, node_policy="round_robin")
    layout = target.prepare("taq", SMALL, StringMode.ARROW)
    frame = get_dataset("taq").day_frame(0, SMALL).head(100)
    workers = [on_cluster(ddb_cluster, node_policy="round_robin") for _ in range(2)]
    for index, worker in enumerate(workers):
        worker.open(layout, index)                       # data nodes 1 and 2
        worker.append(layout, frame.head(10 * (index + 1)), table="upload")
    shared = ddb_cluster.stats()["shared"]
    held = {}
    for port, alias in zip(ddb_cluster.data_ports[:2], ("dnode1", "dnode2")):
        (name,) = [n for n in shared[alias] if n.startswith("tickbench_upload_")]
        s = session_on(port)
        held[alias] = len(s.run(name))
        s.close()
    assert held == {"dnode1": 10, "dnode2": 20}          # each node holds what its worker sent
    target.clear_table(layout, "upload")                 # after the warm-ups: every node's emptied
    for port, alias in zip(ddb_cluster.data_ports[:2], ("dnode1", "dnode2")):
        (name,) = [n for n in ddb_cluster.stats()["shared"][alias] if n.startswith("tickbench_upload_")]
        s = session_on(port)
        assert len(s.run(name)) == 0
        s.close()
    for worker in workers:
        assert worker.append(layout, frame.head(5), table="upload").rows == 5      # still there
        worker.close()
    shared = ddb_cluster.stats()["shared"]
    assert not [n for alias in ("dnode1", "dnode2") for n in shared[alias] if n.startswith("tickbench_")]


def test_an_upload_sweep_leaves_nothing_on_the_server(ddb_server, tmp_path):  # noqa: F811
    from workloads.run.runner import Runner
    from workloads.scenario import Scenario
    from workloads.results.store import ResultsStore

    store = ResultsStore(tmp_path / "results")
    config = {"host": ddb_server.host, "port": ddb_server.port, "user": "admin", "password": PASSWORD}
    for _ in range(2):                                     # twice: nothing piles up across runs
        scenario = Scenario(dataset="taq", scale=SMALL, target="dolphindb", target_config=config,
                            workload="upload-sweep", params={"batch_sizes": [100, 250], "rows_per_step": 1_000},
                            users=(1,), warmup_ops=1)
        result = Runner(scenario, store).run()
        assert result.status == "completed", result.message
        ops = store.ops(result.run_id)
        measured = ops[ops["kind"] == "measured"]
        assert measured.groupby("step")["rows"].sum().tolist() == [1_000, 1_000]    # each step its own rows
    store.close()
    assert [n for n in ddb_server.stats()["shared"]["local8848"] if n.startswith("tickbench_")] == []


# --- 4. getClusterPerf ------------------------------------------------------------------------------
def test_a_2x_cluster_is_discovered_from_a_data_node(ddb_server_factory):  # noqa: F811
    server = ddb_server_factory("--data-nodes", "3", "--server-major", "2")
    data_only = {"name": "d", "user": "admin",
                 "nodes": [{"host": "127.0.0.1", "port": server.data_ports[0], "role": "data"}]}
    profile = ClusterProfile.from_dict(data_only, password=PASSWORD)
    s = session_on(server.data_ports[0])
    with pytest.raises(RuntimeError, match="Only master or single mode supports function getClusterPerf"):
        s.run("getClusterPerf(true)")                     # what 2.x says on a data node
    s.close()
    discovery = discover_nodes(profile)
    assert discovery.from_cluster
    assert sorted(n.port for n in discovery.nodes) == sorted(server.ports)
    assert len(profile_from_discovery(profile, discovery).nodes) == 4


def test_a_single_nodes_answer_never_rewrites_a_profile(ddb_server):  # noqa: F811
    typed = ClusterProfile.from_dict({"name": "mine", "user": "admin", "nodes": [
        {"host": "127.0.0.1", "port": ddb_server.port, "role": "data"},
        {"host": "127.0.0.1", "port": 1, "role": "data"}]}, password=PASSWORD)
    discovery = discover_nodes(typed)
    assert not discovery.from_cluster and len(discovery.nodes) == 1 and discovery.note
    assert profile_from_discovery(typed, discovery) == typed          # both typed nodes kept


# --- 6. protocols, compression, dropped results -----------------------------------------------------
@pytest.mark.parametrize("protocol", ["ARROW", "PICKLE"])
def test_compression_is_refused_outside_the_ddb_protocol(protocol, ddb_server):  # noqa: F811
    with pytest.raises(ValueError, match="compression works only with the DDB protocol"):
        ClusterProfile.from_dict({"name": "x", "nodes": [{"host": "127.0.0.1", "port": 1}],
                                  "protocol": protocol, "compress": True})
    with pytest.raises(TargetError, match="compression works only with the DDB protocol"):
        single(ddb_server, protocol=protocol, compress=True)


def test_a_probes_shared_result_is_dropped_when_its_fetch_fails(ddb_server, faults):  # noqa: F811
    target = single(ddb_server)
    layout = target.prepare("taq", SMALL, StringMode.ARROW)
    target.open(layout, 0)
    name = f"{target._share_name}_1"                      # the first probe keeps its result under it
    try:
        faults(close_match=f"^{name}$")                   # the raw re-read dies mid-reply
        with target.probe_mode(), pytest.raises(TargetError, match="closed the connection"):
            target.read_day(layout, layout.days[0])
        faults(reset=True)
        s = session_on(ddb_server.port)
        assert s.run(f'defined("{name}", SHARED)') is False
        s.close()
        with target.probe_mode():                         # and the next probe works
            assert target.read_day(layout, layout.days[0]).rows == 4_000
    finally:
        target.close()
