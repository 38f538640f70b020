"""Cold means cold on DolphinDB: ``drop_cache`` empties every cache that could hold the layout's
data (data nodes, and compute groups on 3.x), on the worker's own session, and the test server's
read log says of each read whether it found the caches empty. (Timings here are the test
server's, never DolphinDB's.)"""
from __future__ import annotations

import pytest

from tests.ddbserver.fixture import ddb_server_factory  # noqa: F401
from workloads.datasets.schema import Scale, StringMode
from workloads.targets.dolphindb import DolphinDBTarget

pytestmark = pytest.mark.timeout(180)
SMALL = Scale(days=3, rows_per_day=3_000, symbols=20)
PASSWORD = "123456"


def target_on(server, roles=None, **extra) -> DolphinDBTarget:
    profile = server.profile(**extra)
    if roles is not None:                   # only the nodes of these roles (and the controller)
        profile["nodes"] = [n for n in profile["nodes"] if n["role"] in roles + ("controller",)]
    return DolphinDBTarget({"profile": profile, "password": PASSWORD, "timeout": 5, "query_timeout": 30})


def cold_flags(server, seen: int, kind: str | None = None) -> list[bool]:
    return [r["cold"] for r in server.reads_since(seen) if kind is None or r["kind"] == kind]


@pytest.fixture
def cluster(ddb_server_factory):  # noqa: F811
    server = ddb_server_factory("--data-nodes", "3")
    layout = target_on(server).prepare("taq", SMALL, StringMode.ARROW)
    return server, layout


@pytest.fixture
def grouped(ddb_server_factory):  # noqa: F811
    server = ddb_server_factory("--data-nodes", "2", "--compute-nodes", "2")
    layout = target_on(server, roles=("data",)).prepare("taq", SMALL, StringMode.ARROW)
    return server, layout


def test_drop_cache_makes_the_next_read_cold_on_every_data_node(cluster):
    server, layout = cluster
    target = target_on(server, node_policy="round_robin")
    target.open(layout, 1)                                  # on dnode2: the day's partitions are on all three
    try:
        day = layout.days[0]
        seen = len(server.stats()["reads"])
        applied = target.drop_cache(layout)       # the OLAP cache engine is off: its flush refused, noted
        assert applied[0].startswith("note: pnodeRun(flushOLAPCache) failed (") and "not enabled" in applied[0]
        assert applied[1:] == ["pnodeRun(clearAllCache) on dnode1, dnode2, dnode3"]
        target.read_day(layout, day)
        target.read_day(layout, day)                        # no clear between: warm
        target.drop_cache(layout)
        target.read_day(layout, day)
        assert cold_flags(server, seen) == [True, False, True]
        assert server.stats()["clears"][-1] == {"by": "dnode2", "function": "clearAllCache",
                                                "nodes": ["dnode1", "dnode2", "dnode3"]}
    finally:
        target.close()


def test_a_probe_after_a_cleared_cache_is_cold(cluster):
    server, layout = cluster
    target = target_on(server)
    target.open(layout, 0)
    try:
        day = layout.days[1]
        target.read_day(layout, day)                        # the day is cached now
        seen = len(server.stats()["reads"])
        with target.probe_mode():
            target.read_day(layout, day)                    # a probe without a clear: warm
            target.drop_cache(layout)
            probe = target.read_day(layout, day)            # after a clear: cold
        assert cold_flags(server, seen, "measured") == [False, True]
        assert probe.phases["server"] > 0 and probe.rows == 3_000
    finally:
        target.close()


def test_cold_through_a_compute_group_needs_clear_compute_node_cache(grouped):
    server, layout = grouped
    target = target_on(server, roles=("compute",), use_compute_nodes=True)   # users through the compute nodes
    target.open(layout, 0)
    try:
        assert target.node == f"127.0.0.1:{server.compute_ports[0]}"
        day = layout.days[2]
        db = target.names("taq", SMALL).db
        seen = len(server.stats()["reads"])
        applied = target.drop_cache(layout)
        target.read_day(layout, day)
        # what a clearAllCache alone leaves: the group's cache, so the next read is warm
        target._run(target._session, target._node, 'pnodeRun(clearAllCache, ["dnode1", "dnode2"])')
        target.read_day(layout, day)
        target.drop_cache(layout)
        target.read_day(layout, day)
        assert cold_flags(server, seen) == [True, False, True]
        assert applied[0].startswith("note: pnodeRun(flushOLAPCache) failed (")     # the OLAP engine is off
        assert applied[1:] == ["pnodeRun(clearAllCache) on dnode1, dnode2",
                               f'clearComputeNodeCache("{db}") on cnode1, cnode2']
    finally:
        target.close()


def test_a_failed_clear_reports_nothing_applied(cluster):
    server, layout = cluster
    target = target_on(server)
    target.open(layout, 0)
    try:
        server.control(error_match="clearAllCache", error_message="Only administrators can clear caches")
        assert target.drop_cache(layout) == []                    # never called cold on a failed clear
        assert "Only administrators" in target.cache_note
    finally:
        server.control(reset=True)
        target.close()


@pytest.mark.slow
def test_a_cold_step_with_3_users_and_9_operations_finds_every_cache_empty(cluster, tmp_path):
    """Depends on the worker's cold rounds: user 0 clears between rounds while no operation runs,
    all users' next operations are released together, and a round's users read different days."""
    from workloads.run.runner import Runner
    from workloads.scenario import Scenario
    from workloads.results.store import ResultsStore

    server, layout = cluster
    store = ResultsStore(tmp_path / "results")
    config = {"profile": server.profile(node_policy="round_robin"), "password": PASSWORD, "timeout": 5}
    seen = len(server.stats()["reads"])
    scenario = Scenario(dataset="taq", scale=SMALL, target="dolphindb", target_config=config,
                        workload="read-day", users=(3,), operations=3, cache="cold", warmup_ops=0,
                        probe_ops=1)
    result = Runner(scenario, store).run()
    assert result.status == "completed", result.message
    ops = store.ops(result.run_id)
    measured = ops[ops["kind"] == "measured"]
    assert len(measured) == 9 and measured["ok"].all()
    plain = cold_flags(server, seen, "plain")
    probes = cold_flags(server, seen, "measured")
    assert plain == [True] * 9                 # every measured operation found an empty cache
    assert probes == [True] * 3                # and so did every probe
    store.close()
