"""DolphinDB sessions as the reports ran them, against the wire test server with the real client:
job parallelism 2 on every job (the test server's per-job record, from each request's header),
users on data nodes only, the admin session on a data node, a PICKLE run's transfer/decode split
from a DDB re-read labelled as a stand-in, offline nodes left out of the clears (and the plan
renewed when a clear fails), and a query past the client's timeout cancelled before its
clean-up. (Timings here are the test server's, never DolphinDB's.)"""
from __future__ import annotations

import json
import time
from dataclasses import replace

import dolphindb as ddb
import pytest

from tests.ddbserver.fixture import ddb_server_factory  # noqa: F401
from workloads.datasets.schema import Scale, StringMode
from workloads.reproduce.catalog import report_card
from workloads.targets.base import TargetError
from workloads.targets.dolphindb import scripts
from workloads.targets.dolphindb import DolphinDBTarget
from workloads.targets.dolphindb.cluster import ClusterProfile, Node, pick_node

pytestmark = pytest.mark.timeout(180)
SMALL = Scale(days=2, rows_per_day=2_000, symbols=20)
PASSWORD = "123456"
PROBE_SCRIPT = "^tickbench_t0"            # the server-timed probe script


def target_on(server, profile: dict | None = None, **extra) -> DolphinDBTarget:
    return DolphinDBTarget({"profile": profile or server.profile(), "password": PASSWORD, "timeout": 3,
                            "query_timeout": 30, **extra})


def addresses(server, ports) -> set[str]:
    return {f"{server.host}:{p}" for p in ports}


def run_scenario(scenario, tmp_path):
    from workloads.results.store import ResultsStore
    from workloads.run.runner import Runner

    store = ResultsStore(tmp_path / "results")
    result = Runner(scenario, store).run()
    assert result.status == "completed", result.message
    return store, result.run_id


def shown(tmp_path, run_id: str) -> str:
    """What ``tickbench show`` prints of the run."""
    import subprocess
    import sys
    from pathlib import Path

    env = {"TICKBENCH_HOME": str(tmp_path / "home"), "PATH": "/usr/bin:/bin", "QT_QPA_PLATFORM": "offscreen",
           "COLUMNS": "250"}
    done = subprocess.run([sys.executable, "-m", "app", "--results", str(tmp_path / "results"), "show", run_id],
                          capture_output=True, text=True, timeout=120, env=env,
                          cwd=Path(__file__).resolve().parent.parent)
    assert done.returncode == 0, done.stderr[-2000:]
    return " ".join(done.stdout.split())


def extras(ops) -> list[dict]:
    return [json.loads(e) if isinstance(e, str) and e else {} for e in ops["extra"]]


# --- job parallelism, and users on data nodes ---------------------------------------------------------
def test_a_report_002_reproduction_runs_every_job_at_parallelism_2_on_data_nodes(ddb_server_factory, tmp_path):  # noqa: F811
    server = ddb_server_factory("--data-nodes", "2", "--compute-nodes", "2")
    (_, bars), = report_card("002").experiment("bars").scenarios(
        "tiny", subject="dolphindb", subject_config={"profile": server.profile(), "password": PASSWORD,
                                                     "timeout": 5})
    assert bars.target_config["node_policy"] == "random" and bars.target_config["parallelism"] == 2
    scenario = replace(bars, scale=SMALL, users=(4,), duration_s=0.0, operations=2, warmup_ops=0, probe_ops=0)
    seen = len(server.stats()["jobs"]["log"])
    store, run_id = run_scenario(scenario, tmp_path)
    ops = store.ops(run_id)
    measured = ops[ops["kind"] == "measured"]
    assert len(measured) == 8 and measured["ok"].all()
    assert set(measured["node"]) <= addresses(server, server.data_ports)         # never a compute node
    jobs = server.jobs_since(seen)
    reads = [j for j in jobs if j["desc"].startswith("select first(")]      # the users' minute bars
    assert len(reads) == 8
    assert {(j["priority"], j["parallelism"]) for j in reads} == {(4, 2)}       # as the server saw them
    assert not [j for j in jobs if j["node"].startswith("cnode")]
    target = store.run(run_id)["environment"]["target"]
    assert target["job_scheduling"].startswith("priority 4, parallelism 2 on every job")
    store.close()
    assert "target: jobs at priority 4, parallelism 2 on every job (session.run)" in shown(tmp_path, run_id)


def test_a_run_records_the_priority_and_parallelism_the_server_granted_not_those_asked(ddb_server_factory):  # noqa: F811
    """A user other than an administrator gets parallelism 2 unless raised (setMaxJobParallelism),
    and at most the priority setMaxJobPriority allows: the environment says what was granted."""
    import dolphindb as ddb
    server = ddb_server_factory(users={"admin": "123456", "quant": "pw"})
    config = {"profile": server.profile(user="quant"), "password": "pw", "timeout": 5, "priority": 8}
    granted = DolphinDBTarget(config).describe()["job_scheduling"]
    assert granted.startswith("priority 8, parallelism 2 on every job (session.run), as the server granted them")
    assert "asked 8 and 64: the user's caps lowered them" in granted
    admin = ddb.session()
    admin.connect(server.host, server.port, "admin", "123456")
    try:
        admin.run('setMaxJobPriority("quant", 3)')
        admin.run('setMaxJobParallelism("quant", 64)')
    finally:
        admin.close()
    granted = DolphinDBTarget(config).describe()["job_scheduling"]
    assert granted.startswith("priority 3, parallelism 64 on every job") and "asked 8 and 64" in granted
    own = DolphinDBTarget({**config, "profile": server.profile(), "password": PASSWORD}).describe()["job_scheduling"]
    assert own.startswith("priority 8, parallelism 64 on every job") and "asked" not in own   # admin: all granted


def test_users_go_to_data_nodes_unless_the_profile_routes_them_to_compute_nodes():
    nodes = (Node("c0", 8900, "controller"), Node("k1", 8901, "compute"), Node("d1", 8902, "data"),
             Node("k2", 8903, "compute"), Node("d2", 8904, "data"))
    for policy in ("one", "round_robin", "random"):
        profile = ClusterProfile("lab", nodes, node_policy=policy)
        assert {pick_node(profile, w, seed=3).host for w in range(40)} <= {"d1", "d2"}
        routed = ClusterProfile.from_dict({**profile.to_dict(), "use_compute_nodes": True})
        assert {pick_node(routed, w, seed=3).host for w in range(40)} <= {"k1", "k2"}
    assert ClusterProfile("lab", nodes, node_policy="round_robin").to_dict()["use_compute_nodes"] is False
    with pytest.raises(ValueError, match="lists compute nodes but no data node"):
        ClusterProfile("lab", nodes[:2])
    with pytest.raises(ValueError, match="routes users to compute nodes but lists none"):
        ClusterProfile("lab", (nodes[0], nodes[2]), use_compute_nodes=True)


def test_the_run_flags_set_compute_routing_and_job_scheduling():
    from app.cli.main import build_parser
    from app.cli.ddb_options import dolphindb_config

    def config(*flags: str) -> dict:
        args = build_parser().parse_args(["run", "--target", "dolphindb", "--node", "c:8900:controller",
                                          "--node", "k:8901:compute", "--node", "d:8902", "--password", "x",
                                          *flags])
        return dolphindb_config(args, {}, lambda user: "x")

    plain = config()
    assert plain["profile"]["use_compute_nodes"] is False and "parallelism" not in plain
    assert DolphinDBTarget(plain).parallelism == 64 and DolphinDBTarget(plain).priority == 4   # the client's
    chosen = config("--use-compute-nodes", "--parallelism", "2", "--priority", "6")
    assert chosen["profile"]["use_compute_nodes"] is True
    target = DolphinDBTarget(chosen)
    assert (target.priority, target.parallelism) == (6, 2) and target.profile.user_nodes[0].host == "k"
    with pytest.raises(ValueError, match="--parallelism 65 is not between 1 and 64"):
        config("--parallelism", "65")
    with pytest.raises(TargetError, match="priority 9 is not between 0 and 8"):     # 9 is never granted
        DolphinDBTarget({**plain, "priority": 9})


def test_the_admin_session_lands_on_a_data_node_when_a_compute_node_is_listed_first(ddb_server_factory):  # noqa: F811
    server = ddb_server_factory("--data-nodes", "2", "--compute-nodes", "1")
    profile = server.profile()
    profile["nodes"] = sorted(profile["nodes"], key=lambda n: n["role"] != "compute")   # the compute node first
    assert profile["nodes"][0]["role"] == "compute"
    target = target_on(server, profile)
    seen = len(server.stats()["jobs"]["log"])
    layout = target.prepare("taq", SMALL, StringMode.ARROW)
    assert layout.footprint_bytes > 0                    # pnodeRun reached the data nodes' tablets
    assert target.footprint(layout) == layout.footprint_bytes
    creates = [j for j in server.jobs_since(seen) if "createPartitionedTable" in j["desc"] or
               j["desc"].startswith("exec sum(diskUsage)")]
    assert creates and {j["node"] for j in creates} == {"dnode1"}
    # what the admin session would have measured on the compute node: its group holds no tablets
    session = ddb.session()
    session.connect(server.host, server.compute_ports[0], "admin", PASSWORD)
    try:
        on_compute = session.run(scripts.footprint(target.names("taq", SMALL)))
    finally:
        session.close()
    assert on_compute is None or on_compute != on_compute       # NULL: a sum over no tablets


def test_the_sweep_reaches_every_data_node_whatever_the_policy(ddb_server_factory):  # noqa: F811
    server = ddb_server_factory("--data-nodes", "2")
    session = ddb.session()
    session.connect(server.host, server.data_ports[1], "admin", PASSWORD)       # dnode2: no user of policy one
    try:
        session.run(scripts.create_memory_table("tickbench_w7_1_abcdef_1", [("a", "INT")]))
    finally:
        session.close()
    assert server.stats()["shared"]["dnode2"] == ["tickbench_w7_1_abcdef_1"]
    target = target_on(server, server.profile(node_policy="one"))
    target.prepare("taq", SMALL, StringMode.ARROW)
    assert target.swept == [f"{server.host}:{server.data_ports[1]}: tickbench_w7_1_abcdef_1"]
    assert server.stats()["shared"]["dnode2"] == []


def test_a_profile_of_compute_nodes_only_prepares_on_a_data_node_the_cluster_reports(ddb_server_factory):  # noqa: F811
    server = ddb_server_factory("--data-nodes", "2", "--compute-nodes", "1")
    profile = server.profile(use_compute_nodes=True)
    profile["nodes"] = [n for n in profile["nodes"] if n["role"] in ("controller", "compute")]
    target = target_on(server, profile)
    layout = target.prepare("taq", SMALL, StringMode.ARROW)
    assert layout.footprint_bytes > 0
    target.open(layout, 0)
    try:
        assert target.node == f"{server.host}:{server.compute_ports[0]}"      # the user on the compute node
        assert target.read_day(layout, layout.days[0]).rows == SMALL.rows_per_day
    finally:
        target.close()


# --- PICKLE: the transfer/decode split from a DDB re-read -----------------------------------------------
def test_a_pickle_run_splits_transfer_and_decode_from_a_ddb_re_read_labelled_a_stand_in(ddb_server_factory,  # noqa: F811
                                                                                         tmp_path):
    from workloads.scenario import Scenario

    server = ddb_server_factory()
    config = {"host": server.host, "port": server.port, "user": "admin", "password": PASSWORD,
              "protocol": "PICKLE", "timeout": 5}
    scenario = Scenario(dataset="taq", scale=SMALL, target="dolphindb", target_config=config,
                        workload="read-day", users=(1,), operations=1, warmup_ops=0, probe_ops=2)
    store, run_id = run_scenario(scenario, tmp_path)
    probes = store.ops(run_id, kinds=("probe",))
    assert len(probes) == 2 and probes["ok"].all()
    assert probes["transfer_s"].notna().all() and probes["decode_s"].notna().all()
    assert (probes["wire_bytes"] > 0).all()
    assert {e.get("transfer_from") for e in extras(probes)} == {"DDB re-read (stand-in for PICKLE)"}
    described = store.run(run_id)["environment"]["target"]
    assert "DDB re-read (stand-in for PICKLE)" in described["transfer_method"]
    # the window's answer and the report say so beside the breakdown, as show does
    from app.report.document import write_report
    from workloads.results.run_summary import run_answer
    label = "transfer/decode split: probe operations: DDB re-read (stand-in for PICKLE)"
    assert any(n.startswith(label) for n in run_answer(store, run_id).target_notes)
    page = write_report(store, [run_id], tmp_path / "pickle.html").read_text(encoding="utf-8")
    assert label in page
    store.close()
    assert label in shown(tmp_path, run_id)


# --- offline nodes ---------------------------------------------------------------------------------------
def test_an_offline_replica_is_left_out_of_the_clears_and_every_operation_is_cold(ddb_server_factory,  # noqa: F811
                                                                                  tmp_path):
    from workloads.scenario import Scenario

    server = ddb_server_factory("--data-nodes", "3", "--replicas", "2", "--offline", "dnode3")
    config = {"profile": server.profile(), "password": PASSWORD, "timeout": 3}
    seen = len(server.stats()["reads"])
    scenario = Scenario(dataset="taq", scale=SMALL, target="dolphindb", target_config=config,
                        workload="read-day", users=(1,), operations=3, cache="cold", warmup_ops=0, probe_ops=0)
    store, run_id = run_scenario(scenario, tmp_path)
    measured = store.ops(run_id, kinds=("measured",))
    assert len(measured) == 3 and measured["ok"].all()
    assert [e.get("cold") for e in extras(measured)] == [True] * 3            # recorded cold
    assert [r["cold"] for r in server.reads_since(seen)] == [True] * 3        # and the server agrees
    clears = [c for c in server.stats()["clears"] if c["function"] == "clearAllCache"]
    assert clears and all(c["nodes"] == ["dnode1", "dnode2"] for c in clears)
    store.close()


def test_a_clear_that_fails_once_asks_for_the_plan_again(ddb_server_factory):  # noqa: F811
    server = ddb_server_factory("--data-nodes", "3", "--replicas", "2")
    layout = target_on(server).prepare("taq", SMALL, StringMode.ARROW)
    target = target_on(server)
    target.open(layout, 0)
    try:
        assert "pnodeRun(clearAllCache) on dnode1, dnode2, dnode3" in target.drop_cache(layout)
        target.read_day(layout, layout.days[0])                     # cached now
        # a replica goes down just after the clear's plan was asked: the plan names it, its clear fails
        asked, lost = [], []
        run = target._run

        def plan_then_lose_a_node(session, node, script):
            answer = run(session, node, script)
            if script == scripts.cluster_perf():
                asked.append(script)
                if not lost:
                    lost.extend(server.take_offline("dnode3"))
            return answer
        target._run = plan_then_lose_a_node
        seen = len(server.stats()["reads"])
        applied = target.drop_cache(layout)
        assert lost == ["dnode3"] and len(asked) == 2               # the plan asked again, once
        clears = [m for m in applied if m.startswith("pnodeRun(clearAllCache)")]
        assert clears and all("dnode3" not in m and "on dnode1, dnode2" in m for m in clears), applied
        assert target.cache_note == ""
        target.read_day(layout, layout.days[0])
        assert [r["cold"] for r in server.reads_since(seen)] == [True]
    finally:
        target.close()


# --- a query past the client's timeout --------------------------------------------------------------------
def test_a_query_past_the_client_timeout_is_cancelled_and_its_result_never_shared(ddb_server_factory):  # noqa: F811
    server = ddb_server_factory()
    layout = target_on(server, server.profile()).prepare("taq", SMALL, StringMode.ARROW)
    target = target_on(server, server.profile(), query_timeout=1)
    target.open(layout, 0)
    seen = len(server.stats()["jobs"]["log"])
    try:
        server.control(delay=3.0, delay_match=PROBE_SCRIPT)       # the probe's query outlives the client
        started = time.monotonic()
        with target.probe_mode(), pytest.raises(TargetError, match="connection lost or reply timed out"):
            target.read_day(layout, layout.days[0])
        server.control(reset=True)
        assert time.monotonic() - started < 3.0                   # the cancel ended it: no wait for the delay
        probe_jobs = [j for j in server.jobs_since(seen) if j["desc"].startswith("tickbench_t0")]
        assert len(probe_jobs) == 1 and probe_jobs[0]["cancelled"]
        cancels = server.stats()["jobs"]["cancels"]
        assert [c["root_job_id"] for c in cancels] == [probe_jobs[0]["root_job_id"]]
        assert target.cancelled == [f"{server.host}:{server.port}: {probe_jobs[0]['root_job_id']}"]
        time.sleep(3.5)                                           # past the query's own end
        shared = [n for names in server.stats()["shared"].values() for n in names if n.startswith("tickbench_")]
        assert shared == []
    finally:
        server.control(reset=True)
        target.close()
