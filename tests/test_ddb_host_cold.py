"""Cold on a server means the server's disk (issue 40): with an agent on the database host
(``tickbench agent``), a cold step's every operation reads from an emptied host page cache, and the
agent's log and the server's read log agree; without one, the same step says "engine caches only"
wherever a user sees cold.

The DolphinDB test server keeps each partition it reads from disk as a real file (``--host-pages``)
and asks the kernel, before each such read, whether any of its pages is cached; the agent is a real
process dropping those files' pages (``--files``). Timings here are the test server's, never
DolphinDB's.
"""
from __future__ import annotations

import json
import re

import pytest

from tests.ddbserver.fixture import ddb_server_factory  # noqa: F401
from tests.test_agent import TOKEN, start_agent
from tests.test_ddb_e2e import PASSWORD, assert_clear, last_run, tickbench
from workloads.datasets.schema import Scale
from workloads.results.history import compare_frame, history_rows
from workloads.results.run_summary import run_answer
from workloads.results.store import ResultsStore
from workloads.run.runner import Runner
from workloads.scenario import Scenario

pytestmark = pytest.mark.timeout(300)
SCALE = Scale(days=3, rows_per_day=3_000, symbols=12)
USERS, OPERATIONS = 3, 2


def _profile(server) -> dict:
    roles = ["controller"] + ["data"] * len(server.data_ports)
    return {"name": "hosts", "user": "admin", "node_policy": "round_robin",
            "nodes": [{"host": server.host, "port": p, "role": r} for p, r in zip(server.ports, roles)]}


def _cold_step(server, store: ResultsStore, **config) -> str:
    scenario = Scenario(dataset="taq", scale=SCALE, target="dolphindb",
                        target_config={"profile": _profile(server), "password": PASSWORD, "timeout": 5, **config},
                        workload="read-day", users=(USERS,), operations=OPERATIONS, cache="cold", probe_ops=0)
    result = Runner(scenario, store).run()
    assert result.status == "completed", result.message
    return result.run_id


@pytest.fixture
def cluster_with_pages(ddb_server_factory, tmp_path):  # noqa: F811
    pages = tmp_path / "pages"
    return ddb_server_factory("--data-nodes", "2", "--host-pages", str(pages)), pages


def test_a_cold_step_with_an_agent_reads_every_operation_from_an_emptied_host_cache(cluster_with_pages, tmp_path):
    server, pages = cluster_with_pages
    store = ResultsStore(tmp_path / "results")
    _cold_step(server, store)                        # lays the data out; every partition file read once
    agent = start_agent(tmp_path, "--files", str(pages))
    try:
        seen = len(server.stats()["reads"])
        run_id = _cold_step(server, store, agents=[agent.address], agent_token=TOKEN)
    finally:
        agent.stop()
    step = run_answer(store, run_id).steps[0]
    assert step.cold_line() == (f"cold: {USERS * OPERATIONS} of {USERS * OPERATIONS} operations "
                                "(cleared: engine caches, host page cache)")
    assert step.host_cold_ops == USERS * OPERATIONS
    # the server: every read of the step went to the disk, and none found its pages in the host's cache
    reads = [r for r in server.stats()["reads"][seen:] if r["partitions"]]
    assert reads and all(r["cold"] and r["host_cached"] == 0 for r in reads), reads
    # the agent: each measured operation's clear names a drop the agent logged as done before it read
    drops = {line["request_id"]: line for line in agent.lines() if line["outcome"] == "dropped"}
    measured = store.ops(run_id, ("measured",))
    for extra in measured["extra"]:
        facts = json.loads(extra)
        named = re.findall(r"dropped by its agent: .*?\[([^\]]+)\]", facts["cleared"])
        assert facts["cleared_kinds"] == "engine caches, host page cache"
        assert len(named) == 1 and named[0] in drops, (facts["cleared"], list(drops))
    # one drop per clear, all done: the warm-ups' (one each) and the rounds'
    assert len(drops) == USERS + OPERATIONS


def test_without_an_agent_the_same_step_says_engine_caches_only_everywhere(cluster_with_pages, tmp_path):
    server, _pages = cluster_with_pages
    store = ResultsStore(tmp_path / "results")
    _cold_step(server, store)
    seen = len(server.stats()["reads"])
    run_id = _cold_step(server, store)
    reads = [r for r in server.stats()["reads"][seen:] if r["partitions"]]
    # the engine's caches were emptied (each read went to "disk"), yet the host's page cache held them
    assert reads and all(r["cold"] for r in reads) and all(r["host_cached"] > 0 for r in reads)
    step = run_answer(store, run_id).steps[0]
    words = "engine caches only"
    assert step.cold_line().endswith(f"(cleared: {words})") and step.host_cold_ops == 0
    assert step.cleared_note() == ", engine caches only"          # the results view's operations cell
    assert {r["run_id"]: r["cache"] for r in history_rows(store)}[run_id] == f"cold: {words}"
    assert compare_frame(store, [run_id])["cleared"].tolist() == [words]      # compare and the report
    # the command line says it too
    done, cli_store = tickbench(tmp_path, "--node", f"{server.host}:{server.ports[0]}:controller",
                                *(a for p in server.data_ports for a in ("--node", f"{server.host}:{p}")),
                                "--days", str(SCALE.days), "--rows-per-day", str(SCALE.rows_per_day),
                                "--symbols", str(SCALE.symbols), "--workload", "read-day", "--users", "2",
                                "--operations", "2", "--cache", "cold")
    assert done.returncode == 0, done.stdout + done.stderr
    assert_clear(done, f"(cleared: {words})")
    assert last_run(cli_store)["cache"] == "cold"


def test_one_host_dropped_and_another_not_is_no_host_cold_read(cluster_with_pages, tmp_path):
    """An agent that drops and one that cannot be reached (a refused loopback port): the step's
    reads are engine-cold only, and every record says which host was not dropped."""
    import socket
    server, pages = cluster_with_pages
    store = ResultsStore(tmp_path / "results")
    _cold_step(server, store)
    with socket.socket() as probe:                   # a loopback port nothing listens on
        probe.bind(("127.0.0.1", 0))
        refused = f"127.0.0.1:{probe.getsockname()[1]}"
    agent = start_agent(tmp_path, "--files", str(pages))
    try:
        run_id = _cold_step(server, store, agents=[agent.address, refused], agent_token=TOKEN)
    finally:
        agent.stop()
    step = run_answer(store, run_id).steps[0]
    assert step.host_cold_ops == 0 and step.cold_line().endswith("(cleared: engine caches only)"), step.cold_line()
    for extra in store.ops(run_id, ("measured",))["extra"]:
        facts = json.loads(extra)
        assert facts["cleared_kinds"] == "engine caches" and "host page cache NOT dropped" in facts["cleared"]


def test_a_long_clear_text_keeps_why_a_host_was_not_dropped_when_cut():
    from workloads.targets.common.cleared import NOT_DROPPED, cleared_text
    methods = [f"host page cache of 10.0.0.{i}:7000 dropped by its agent: drop_caches [{'r' * 40}]" for i in range(30)]
    methods.append(f"{NOT_DROPPED} (agent 127.0.0.1:9: connection refused)")
    text = cleared_text(methods, 1023)
    assert len(text.encode()) <= 1023 and f"{NOT_DROPPED} (agent 127.0.0.1:9" in text
    assert cleared_text(methods[:2], 1023) == ", ".join(methods[:2])       # short: as it was


def test_a_data_host_without_an_agent_makes_the_read_engine_cold_only(ddb_server_factory, tmp_path):  # noqa: F811
    """The cluster reports its data nodes on a host no agent names (getClusterPerf's host column:
    127.0.0.2, never connected to): the agent that did drop is not enough, the host that serves the
    data was not dropped, and every record says which."""
    pages = tmp_path / "pages"
    server = ddb_server_factory("--data-nodes", "2", "--host-pages", str(pages), "--perf-host", "127.0.0.2")
    store = ResultsStore(tmp_path / "results")
    _cold_step(server, store)
    agent = start_agent(tmp_path, "--files", str(pages))
    try:
        run_id = _cold_step(server, store, agents=[agent.address], agent_token=TOKEN)
    finally:
        agent.stop()
    step = run_answer(store, run_id).steps[0]
    assert step.host_cold_ops == 0 and step.cold_line().endswith("(cleared: engine caches only)"), step.cold_line()
    for extra in store.ops(run_id, ("measured",))["extra"]:
        assert "host page cache NOT dropped (no agent on 127.0.0.2, which serves the data)" in json.loads(extra)["cleared"]
