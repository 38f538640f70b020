"""The report gallery's engine: every report reproduced at tiny scale with real runs on the embedded
default (DuckDB and pickle); the published-vs-measured pairs and the findings' ratios checked against
the stored figures read directly. Reports 001 and 004 against their servers: test_reproduce_servers."""
from __future__ import annotations

import subprocess
import sys

import pytest

from workloads.results.figures import step_figures
from workloads.reproduce.catalog import REPORTS, gallery_scenarios
from workloads.scenario import SIZES, parse_slot
from workloads.reproduce.estimate import estimate
from workloads.reproduce.findings import (HOLDS, NOT_HOLD, NOT_MEASURED, STRONGER, WEAKER, knee_verdict,
                                          ratio_verdict)
from workloads.reproduce.reproduction import reproduction
from workloads.reproduce.run_report import planned_runs, run_planned
from workloads.run.runner import check_scenario
from workloads.playlists import load_playlist
from workloads.paths import resources_dir
from workloads.results.run_summary import sweep_knees
from workloads.results.store import ResultsStore
from workloads.targets.engines import default_config


def _reproduce(tmp_path, report: str, comparator: str | None = None, comparator_config: dict | None = None,
               experiments: list[str] | None = None):
    store = ResultsStore(tmp_path / "results")
    data = tmp_path / "data"
    planned = planned_runs(report, "tiny", "duckdb", default_config("duckdb", data), data, comparator,
                           comparator_config, experiments)
    results = run_planned(store, planned)
    return store, planned, results


def _p50(store, run_id: str, users: int = 1) -> float:
    figures = step_figures(store, run_id)
    return float(figures[figures["users"] == users]["p50_s"].iloc[0])


# ---- the catalog ----------------------------------------------------------------------------------
def test_every_experiment_is_a_valid_scenario_at_every_size_with_a_unique_slot():
    slots = set()
    for card in REPORTS.values():
        for exp in card.experiments:
            for size in SIZES:
                # a comparator config is only read here (no I/O): a refused loopback address
                for arm, scenario in exp.scenarios(size, comparator=exp.comparator or None,
                                                   comparator_config={"host": "127.0.0.1", "port": 9}):
                    check_scenario(scenario)          # raises on a bad parameter or workload
                    assert parse_slot(scenario.experiment) == (card.report, exp.key, arm.key, size)
                    assert scenario.experiment not in slots
                    slots.add(scenario.experiment)
    assert len(slots) > 100


def test_a_card_offers_only_local_engines_tickbench_can_start():
    """A card that points to "the local X engine" points to one the Start local engine menu has."""
    import re
    from workloads.local_engines import LAUNCHERS, launcher
    labels = {launcher(kind).KIND: kind for kind in LAUNCHERS}
    needs = [exp.needs for card in REPORTS.values() for exp in card.experiments if exp.needs]
    named = [m.group(1).lower() for text in needs for m in re.finditer(r"the local (\w+) engine", text)]
    assert named and all(name in labels for name in named), (named, sorted(labels))
    mongo = {exp.needs for exp in REPORTS["004"].experiments if exp.comparator == "mongodb"}
    assert mongo and all("cannot start one here" in text for text in mongo)


def test_comparator_arms_need_a_comparator():
    exp = REPORTS["001"].experiment("import")
    assert [s.target for _, s in exp.scenarios("tiny")] == ["duckdb"]
    assert [s.target for _, s in exp.scenarios("tiny", comparator="druid")] == ["duckdb", "druid"]
    with pytest.raises(KeyError, match="no experiment 'nope'"):
        REPORTS["001"].experiment("nope")


def test_estimates_grow_with_size_and_warn_when_the_report_scale_does_not_fit():
    exp = REPORTS["000"].experiment("day-l1")
    tiny, medium, full = (estimate(exp, s, memory_bytes=16e9) for s in SIZES)
    assert tiny.seconds < 60 < medium.seconds
    assert tiny.disk_bytes < medium.disk_bytes < full.disk_bytes
    assert tiny.fits and not full.fits and "more memory" in full.warning


def test_the_five_reports_playlist_is_every_experiment_at_tiny_scale():
    title, scenarios = load_playlist(resources_dir() / "scenarios" / "playlists" / "five_reports.toml")
    assert [s.experiment for s in scenarios] == [s.experiment for s in gallery_scenarios(size="tiny")]
    assert {parse_slot(s.experiment)[0] for s in scenarios} == set(REPORTS)
    assert all(s.target in ("duckdb", "pickle") for s in scenarios)


# ---- verdicts ------------------------------------------------------------------------------------
@pytest.mark.parametrize("measured, verdict", [
    (1.0, NOT_HOLD), (1.05, NOT_HOLD), (1.5, WEAKER), (3.0, HOLDS), (6.0, HOLDS), (9.0, STRONGER)])
def test_ratio_verdicts_against_a_published_six_fold(measured, verdict):
    assert ratio_verdict(measured, 6.0, because="x")[0] == verdict


def test_knee_verdicts_name_the_machine():
    assert knee_verdict(16, 128, 16, 32, 2) == (HOLDS, "")
    verdict, why = knee_verdict(2, 128, 16, 32, 2)
    assert verdict == NOT_HOLD and "on 2 cores" in why and "at 2 users" in why
    assert knee_verdict(None, 4, 16, 32, 2)[0] == NOT_MEASURED


def test_a_knee_verdict_needs_its_repeats_to_agree(tmp_path):
    """Issue 52: one flat sweep (1 to 32 users on 2 threads, published 64 on 48: 2.7 here) allows a
    knee at 1 user ("does not hold") and at 2 ("holds"): inconclusive; three runs of it that agree
    settle it, and one that rose clearly to 2 users in one of them unsettles it again."""
    from tests.test_like_with_like import _arm as arm_of, _run
    from workloads.reproduce.findings import INCONCLUSIVE, findings
    store = ResultsStore(tmp_path / "results")
    try:
        users = (1, 2, 4, 8, 16, 32)

        def downloads(name, *sweeps):
            runs = [arm_of(store, _run(store, f"{name}{k}", users, sweep)) for k, sweep in enumerate(sweeps)]
            runs[0].repeats = tuple(runs[1:])
            found = findings("002", {("download", "subject"): runs[0]}, store)
            return next(f for f in found if "downloads" in f.statement)
        flat = {u: 64_000 for u in users}
        once = downloads("once", flat)
        assert once.verdict == INCONCLUSIVE and "no knee this run can show" in once.why, once.line
        assert "“does not hold on this machine” or “holds more strongly”" in once.why, once.line
        agreed = downloads("agreed", flat, {u: 63_000 for u in users}, {u: 65_000 for u in users})
        assert agreed.verdict == NOT_HOLD and agreed.measured == "1 user" and len(agreed.run_ids) == 3, agreed.line
        risen = downloads("risen", flat, flat, {**flat, 1: 40_000})
        assert risen.verdict == INCONCLUSIVE and "what its 3 runs measured" in risen.why, risen.line
    finally:
        store.close()


# ---- real reproductions --------------------------------------------------------------------------
def test_a_cards_published_figures_are_its_own_reports_and_none_repeats_a_measurement():
    """002's download sweep lists 002's figures, not 003's per-cluster-size ones with one measured
    figure repeated beside 2, 4, 6 and 8 nodes; 003's read sweep is one cluster size's."""
    from workloads.results.references import load_references
    from workloads.reproduce.published import pairs
    environment = {r.report: r.environment for r in load_references()}
    for report in ("000", "002", "003", "004"):
        listed = pairs(REPORTS[report], {})
        assert listed and {p.hardware for p in listed} == {environment[report]}, report
        figures = [(p.experiment, p.figure) for p in listed]
        assert len(figures) == len(set(figures)), report
    reads = [p for p in pairs(REPORTS["003"], {}) if p.experiment == next(
        e.title for e in REPORTS["003"].experiments if e.key == "read")]
    assert reads and all(p.figure.startswith("2 nodes, ") for p in reads)


def test_report_003_tiny_runs_and_its_figures_are_the_stored_ones(tmp_path):
    # its read sweep runs in the scaling test below, on two stand-in clusters
    store, planned, results = _reproduce(tmp_path, "003", experiments=["write", "compute"])
    assert [r.status for r in results] == ["completed"] * len(planned)
    repro = reproduction(store, "003")
    assert repro.size == "tiny" and set(repro.run_ids) == {r.run_id for r in results}
    assert {p.experiment for p in repro.pairs if p.measured_value is None} == {"read users sweep"}
    write = [p for p in repro.pairs if p.experiment == "write throughput"]
    assert len(write) == 1 and "published: 2 nodes" in write[0].figure          # not a cluster: the smallest
    peak = step_figures(store, write[0].run_id)["rows_per_s"].max()
    assert write[0].measured_value == pytest.approx(peak / 1e6)                 # M rows/s, as published
    spread = [p for p in repro.pairs if p.figure.startswith("spread-by-minute, cold")][0]
    assert spread.measured_value == pytest.approx(_p50(store, spread.run_id) * 1000)    # ms, as published
    cold_warm = [f for f in repro.findings if f.statement.startswith("spread by minute")][0]
    cold, warm = cold_warm.run_ids
    assert cold_warm.measured_value == pytest.approx(_p50(store, cold) / _p50(store, warm))
    assert cold_warm.verdict != NOT_MEASURED
    scaling = [f for f in repro.findings if "per added node" in f.statement]
    assert scaling and all(f.verdict == NOT_MEASURED and "clusters of two or more sizes" in f.why for f in scaling)


def test_report_002_tiny_finds_where_throughput_stops_growing(tmp_path):
    store, planned, results = _reproduce(tmp_path, "002")
    assert [r.status for r in results] == ["completed"] * len(planned)
    repro = reproduction(store, "002", "tiny")
    knees = [f for f in repro.findings if "stops growing" in f.statement]
    assert len(knees) == 3
    metrics = {"concurrent appends": "mb_per_s", "slice downloads": "rows_per_s", "minute bars": "ops_per_s"}
    for knee in knees:
        (run_id,) = knee.run_ids
        figures = step_figures(store, run_id).sort_values("users")
        top = int(figures["users"].max())
        metric = metrics[knee.statement.split(":")[0]]
        # the knees recomputed from the stored figures: each the fewest users after which no step
        # adds 10 %, with each step anywhere within the ±35 % two runs differ by
        values = list(figures[metric])
        allowed = sweep_knees(list(figures["users"]), values)
        assert knee.verdict != NOT_HOLD or "hardware thread" in knee.why, knee.line   # per thread, never raw users
        if knee.verdict == NOT_MEASURED:
            # honest only when the sweep ends before the published knee, scaled per hardware thread
            # to this machine, could show: one doubling past it
            assert knee.why.startswith("not measurable at this size") and \
                f"this one ends at {top} users" in knee.why and "would show it" in knee.why, knee.line
        elif not allowed.settled:
            assert knee.measured_value is None and allowed.note() in knee.why, (knee.line, values)
        elif allowed.at is None:
            assert knee.measured == f"still growing at {top} users" and knee.measured_value is None, knee.line
        else:
            assert knee.measured_value == allowed.at, (knee.line, list(zip(figures["users"], values)))
    upload = [p for p in repro.pairs if p.experiment == "upload batch-size sweep"][0]
    figures = step_figures(store, upload.run_id)
    long_enough = figures[~figures["short"].astype(bool)]["mb_per_s"]     # a step too short to measure is no peak
    assert upload.measured_value == (pytest.approx(long_enough.max()) if len(long_enough) else None), upload
    sizes = store.run(upload.run_id)["scenario"]["params"]["batch_sizes"]
    assert upload.figure.endswith(f"; yours over {min(sizes):,}..{max(sizes):,}, steps too short to measure left out")
    # another size has no runs: nothing is measured there
    assert all(f.verdict == NOT_MEASURED for f in reproduction(store, "002", "medium").findings)


def test_report_000_tiny_the_four_findings_from_real_reads(tmp_path):
    # the L2 day (day-l2) runs the same code on another dataset: left to the gallery's own runs
    store, planned, results = _reproduce(tmp_path, "000", experiments=["day-l1", "strings", "readers"])
    assert [r.status for r in results] == ["completed"] * len(planned), [r.message for r in results]
    repro = reproduction(store, "000")
    by_statement = {f.statement: f for f in repro.findings}
    cold_warm = by_statement["pickle cold / warm (L1)"]
    cold, warm = cold_warm.run_ids
    assert cold_warm.measured_value == pytest.approx(_p50(store, cold) / _p50(store, warm))
    readers = by_statement["three pickle readers on one disk / one reader (per reader)"]
    (run_id,) = readers.run_ids
    assert readers.measured_value == pytest.approx(_p50(store, run_id, 3) / _p50(store, run_id, 1))
    assert by_statement["the string columns' share of time / their share of bytes"].verdict != NOT_MEASURED
    api = by_statement["API time / server-side time (L1, warm)"]
    assert api.verdict != NOT_MEASURED and api.measured_value > 1     # DuckDB splits query from decode
    # ... and the finding says what stood for the server-side time it lacks
    assert api.why.endswith("DuckDB (embedded) has no server: its query phase, in the reading process, stands for "
                            "the server-side time"), api.line
    pickle_pairs = [p for p in repro.pairs if p.figure.startswith("pickle.load") and p.experiment == "a day, L1 quotes"]
    assert len(pickle_pairs) == 2 and all(p.measured_value for p in pickle_pairs)


def test_without_a_comparator_its_findings_say_what_is_missing(tmp_path):
    store, planned, results = _reproduce(tmp_path, "001", experiments=["import"])
    assert [s.target for _, _, s in planned] == ["duckdb"]
    finding = reproduction(store, "001").findings[0]
    assert finding.verdict == NOT_MEASURED and "import/comparator" in finding.why


def test_cli_lists_the_reports_and_shows_a_reproduction(tmp_path):
    listed = subprocess.run([sys.executable, "-m", "app", "reproduce", "--list"], capture_output=True, text=True,
                            timeout=120)
    assert listed.returncode == 0
    for card in REPORTS.values():
        assert card.report in listed.stdout and card.experiments[0].title in listed.stdout
    results = tmp_path / "results.duckdb"
    run = subprocess.run([sys.executable, "-m", "app", "--results", str(results), "reproduce", "003",
                          "--experiment", "write", "--data-dir", str(tmp_path / "data")],
                         capture_output=True, text=True, timeout=600, env={**_env(tmp_path)})
    assert run.returncode == 0, run.stderr
    assert "Findings as ratios" in run.stdout and "write throughput" in run.stdout
    # before it starts it says what to expect, as the window's card does (uncalibrated: no runs yet)
    assert "Report 003: 1 run at tiny scale on duckdb; expect " in run.stderr and "not yet calibrated" in run.stderr
    relisted = subprocess.run([sys.executable, "-m", "app", "--results", str(results), "reproduce", "--list"],
                              capture_output=True, text=True, timeout=120, env=_env(tmp_path))
    write = next(line for line in relisted.stdout.split("· write")[1].splitlines()[1:] if "tiny:" in line)
    assert "calibrated on 1 run on this machine" in write, write    # the card run calibrates the list too
    shown = subprocess.run([sys.executable, "-m", "app", "--results", str(results), "reproduce", "003", "--show"],
                           capture_output=True, text=True, timeout=120, env=_env(tmp_path))
    assert shown.returncode == 0 and "tiny scale" in shown.stdout
    bad = subprocess.run([sys.executable, "-m", "app", "reproduce", "007"], capture_output=True, text=True,
                         timeout=120, env=_env(tmp_path))
    assert bad.returncode == 2 and "000, 001, 002, 003, 004" in bad.stderr


def _env(tmp_path) -> dict:
    import os
    return {**os.environ, "TICKBENCH_HOME": str(tmp_path / "home"), "COLUMNS": "200"}


def test_report_003_scaling_per_added_node_from_runs_on_two_cluster_sizes(tmp_path, ddb_server_factory):  # noqa: F811
    """The node-scaling finding's code path, on the DolphinDB wire-protocol stand-in: its timings
    are not DolphinDB's, so only the arithmetic against the stored figures is checked."""
    store = ResultsStore(tmp_path / "results")
    run_ids = {}
    for nodes in (2, 4):
        cluster = ddb_server_factory("--data-nodes", str(nodes))
        roles = ["controller"] + ["data"] * len(cluster.data_ports)
        config = {"profile": {"name": f"fake{nodes}", "user": "admin", "node_policy": "round_robin",
                              "nodes": [{"host": cluster.host, "port": p, "role": r}
                                        for p, r in zip(cluster.ports, roles)]},
                  "password": "123456", "timeout": 5}
        planned = planned_runs("003", "tiny", "dolphindb", config, tmp_path / "data", experiments=["read"])
        # a fifth of the tiny share of rows: the finding's arithmetic needs rates, not long runs
        planned = [(exp, arm, scenario.with_changes(params={**scenario.params, "rows_per_user": 60_000}))
                   for exp, arm, scenario in planned]
        (result,) = run_planned(store, planned)
        assert result.status == "completed", result.message
        run_ids[nodes] = result.run_id
    finding = [f for f in reproduction(store, "003").findings if f.statement.startswith("reads at 128 users")][0]
    assert finding.verdict != NOT_MEASURED, finding.line
    assert set(finding.run_ids) == set(run_ids.values())
    two, four = (step_figures(store, run_ids[n]).set_index("users")["rows_per_s"] for n in (2, 4))
    top = int(max(two.index))
    assert finding.measured_value == pytest.approx((four[top] / two[top]) / 2)
    reads = [p for p in reproduction(store, "003").pairs if p.experiment == "read users sweep"]
    assert reads and all(p.measured_value is not None for p in reads)   # only the users the run swept


@pytest.mark.parametrize("verdict", ["holds", "holds more strongly", "holds, more weakly",
                                     "does not hold on this machine", "not measured", "inconclusive",
                                     "a verdict nobody styled"])
def test_every_verdict_prints_in_the_findings_table(verdict):
    """An "inconclusive" finding (a noisy pair of runs) once stopped `tickbench reproduce` with
    rich's MarkupError: its verdict had no colour and left a bare closing tag."""
    import io

    from rich.console import Console
    from rich.table import Table

    from app.cli.reproduce import styled_verdict

    table = Table()
    table.add_column("verdict")
    table.add_row(styled_verdict(verdict, "noisy: [1.2-3.4] at 95 %"))
    out = io.StringIO()
    Console(file=out, width=200).print(table)
    assert verdict in out.getvalue() and "noisy: [1.2-3.4] at 95 %" in out.getvalue()
