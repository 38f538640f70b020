"""Findings that compare like with like (issue 41, item 5): report 002's knee per hardware thread of
the machine that served the load, "not measurable at this size" where the sweep ends before the
scaled knee could show; DolphinDB-only rows once and greyed on another database; published figures
beside a run only where it measures the same thing. Runs are written through the store's own
writers and read back through ``run_answer``, as the gallery reads them."""
from __future__ import annotations

import pandas as pd
import pytest

from tests.test_history import op
from workloads.reproduce.catalog import REPORTS
from workloads.reproduce.findings import HOLDS, NOT_HOLD, NOT_MEASURED, findings
from workloads.reproduce.measured import ArmRun
from workloads.reproduce.method import summary
from workloads.reproduce.published import pairs
from workloads.results.run_summary import run_answer
from workloads.results.store import ResultsStore

TWO_THREADS = {"host": "test-host", "cores_logical": 2}


@pytest.fixture
def store(tmp_path):
    s = ResultsStore(tmp_path / "results")
    yield s
    s.close()


def _run(store, run_id: str, users: tuple[int, ...], step_rows: dict[int, int], *, target="duckdb",
         workload="read-day", dataset="taq", cache="warm", environment=None) -> str:
    """A sweep whose step of u users moves ``step_rows[u]`` rows (default 1,000) in its 1 s window."""
    store.create_run(run_id, {"name": run_id, "dataset": dataset, "target": target, "workload": workload,
                              "users": list(users), "cache": cache}, environment or dict(TWO_THREADS))
    for index, n in enumerate(users):
        store.add_step(run_id, index, n, f"{n} users", {})
        rows = int(step_rows.get(n, 1000) / (n * 10))
        store.add_ops(run_id, [op(index, w, i, 0.1 * (i + 1), 0.05, rows=rows) for w in range(n) for i in range(10)])
        store.finish_step(run_id, index, 1.0, "completed", [])
    store.finish_run(run_id, "completed")
    return run_id


def _arm(store, run_id: str, scenario: dict | None = None) -> ArmRun:
    run = store.run(run_id)
    return ArmRun(run_id, pd.Timestamp(run["created_at"]), run_answer(store, run_id), run.get("environment") or {},
                  {"target": run["target"], **(scenario or {})})


def _flat_002(store, users, environment=None, scenario=None, repeats: int = 0) -> dict:
    """Report 002's three sweeps, each flat from one user on (what a 2-core machine gives); with
    ``repeats``, that many more runs of each that agree within 2 % (a verdict needs repeats that
    agree: issue 52)."""
    arms = {}
    for exp in ("append", "download", "bars"):
        runs = [_arm(store, _run(store, f"{exp}{k or ''}", users, {u: 64_000 * (1 + 0.02 * ((-1) ** k) * (k > 0))
                                                                       for u in users}, environment=environment),
                     scenario) for k in range(repeats + 1)]
        runs[0].repeats = tuple(runs[1:])
        arms[(exp, "subject")] = runs[0]
    return arms


def test_report_002s_server_had_48_hardware_threads():
    from workloads.reproduce.findings import published_threads
    assert published_threads("002") == 48


def test_a_tiny_002_sweep_on_two_threads_gives_no_does_not_hold(store):
    knees = {f.statement.split(":")[0]: f for f in findings("002", _flat_002(store, (1, 2, 4), repeats=2), store)
             if "stops growing" in f.statement}
    assert len(knees) == 3 and not any(f.verdict == NOT_HOLD for f in knees.values()), [f.line for f in knees.values()]
    # 16-32 users on 48 threads is 0.67-1.3 users on 2: a knee at 1 user holds
    assert knees["concurrent appends"].verdict == HOLDS, knees["concurrent appends"].line
    # said per thread: "published 16-32 users, here 1 user" alone reads as a contradiction
    assert "on this machine's 2 hardware threads" in knees["concurrent appends"].why, knees["concurrent appends"].line
    # 64 users on 48 threads is 2.7 users on 2: a sweep to 4 cannot show where it stops
    for name in ("slice downloads", "minute bars"):
        finding = knees[name]
        assert finding.verdict == NOT_MEASURED and finding.why.startswith("not measurable at this size"), finding.line
        assert "is 2.7 users on this machine's 2 hardware threads" in finding.why and "48" in finding.why \
            and finding.why.endswith("a sweep to 8 users (a larger size) would show it"), finding.line


def test_a_sweep_long_enough_still_says_does_not_hold_per_thread(store):
    knees = [f for f in findings("002", _flat_002(store, (1, 2, 4, 8, 16, 32), repeats=2), store)
             if "downloads" in f.statement]
    assert knees[0].verdict == NOT_HOLD and "2.7 users on this machine's 2 hardware threads" in knees[0].why, \
        knees[0].line


def test_a_server_elsewhere_whose_threads_are_not_recorded_says_so(store):
    # a stored run's record only: nothing connects (".invalid" never resolves)
    runs = _flat_002(store, (1, 2, 4, 8, 16, 32), scenario={"target_config": {"host": "ddb-server.invalid", "port": 8848}})
    knees = [f for f in findings("002", runs, store) if "stops growing" in f.statement]
    assert all(f.verdict == NOT_MEASURED and "the server's hardware threads are not recorded" in f.why
               and "tickbench agent" in f.why for f in knees), [f.line for f in knees]


def test_a_server_elsewhere_whose_agent_recorded_its_threads_is_compared_per_thread(store):
    # the run's environment holds what the host's agent said (runner._safe_describe): 48 threads there,
    # as many as the report's server, so 64 users is 64 users and a sweep to 32 cannot reach it
    recorded = {**TWO_THREADS, "target": {"server_threads": 48, "server_threads_from": "tickbench agent (db1 48)"}}
    runs = _flat_002(store, (1, 2, 4, 8, 16, 32), environment=recorded,
                     scenario={"target_config": {"host": "ddb-server.invalid", "port": 8848}})
    downloads = next(f for f in findings("002", runs, store) if "downloads" in f.statement)
    assert downloads.verdict == NOT_MEASURED and "is 64 users on the server's 48 hardware threads" in downloads.why, downloads.line
    assert "the server's 48 hardware threads" in downloads.why, downloads.line


def test_report_000_on_duckdb_shows_dolphindb_only_rows_once_greyed(store):
    runs = {}
    for exp, dataset in (("day-l1", "taq"), ("day-l2", "level2"), ("strings", "taq")):
        for arm in ("db-cold", "db-warm", "pickle-cold", "pickle-warm"):
            target = "pickle" if arm.startswith("pickle") else "duckdb"
            runs[(exp, arm)] = _arm(store, _run(store, f"{exp}-{arm}", (1,), {}, target=target, dataset=dataset,
                                                 cache=arm.split("-")[1]))
    for arm in ("db-3", "db-3-nodes", "pickle-3"):
        runs[("readers", arm)] = _arm(store, _run(store, arm, (1, 3), {}, target="pickle" if "pickle" in arm
                                                  else "duckdb", dataset="level2", cache="cold"))
    found = pairs(REPORTS["000"], runs)
    measured = [p for p in found if p.applies]
    assert not any("server-side" in p.figure or "different server" in p.figure or "data node" in p.figure
                   for p in measured), [p.figure for p in measured]
    (only,) = [p for p in found if not p.applies]
    assert only.measured_value is None and "server-side query" in only.figure and "duckdb" in only.figure
    # the method: one line naming its settings, not a list of them with "do not apply" after it
    for experiment in REPORTS["000"].experiments:
        text = summary(experiment.methods(), "duckdb", None, True).html
        assert "do not apply" not in text and "<br>" not in text and "not DolphinDB" in text, text


def test_published_figures_beside_a_run_measure_what_it_measured(store):
    duck = run_answer(store, _run(store, "duck", (1,), {}, dataset="imp_trades"))
    assert not any("single-HDD" in line for line in duck.published), duck.published
    pickle_cold = run_answer(store, _run(store, "pkl", (1,), {}, target="pickle", dataset="taq", cache="cold"))
    assert any("single-HDD" in line for line in pickle_cold.published), pickle_cold.published
