"""One definition per figure: every place that shows a step's figures shows the same numbers,
and they are the numbers computed independently from the raw records (tests/figures_reference.py).

Real runs: worker processes, real files and a real DuckDB, with warm-up and probe operations.
"""
from __future__ import annotations

import pytest

from tests.figures_reference import reference_steps
from workloads.datasets.schema import Scale
from workloads.results.figures import step_figures
from workloads.results.history import compare_frame, history_rows, snapshot_from_store
from workloads.run.runner import Runner
from workloads.scenario import Scenario
from workloads.results.store import ResultsStore

SCALE = Scale(days=2, rows_per_day=30_000, symbols=30)


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """A pickle sweep (phases from probes) and a DuckDB sweep (phases in the call), run for real;
    each run's live snapshot taken when it ended."""
    folder = tmp_path_factory.mktemp("figures")
    store = ResultsStore(folder / "results")
    made = {}
    for target, config in (("pickle", {"root": str(folder / "files")}),
                           ("duckdb", {"path": str(folder / "data.duckdb")})):
        runner = Runner(Scenario(dataset="taq", scale=SCALE, target=target, target_config=config,
                                 workload="read-day", users=(1, 2), operations=6), store)
        result = runner.run()
        assert result.status == "completed", result.message
        made[target] = (result.run_id, runner.snapshot())
    yield store, made
    store.close()


def _approx(value):
    return pytest.approx(value, rel=1e-9, abs=1e-12)


@pytest.mark.parametrize("target", ["pickle", "duckdb"])
def test_every_view_shows_the_figures_of_the_raw_records(runs, target):
    store, made = runs
    run_id, live = made[target]
    reference = reference_steps(store.ops(run_id))
    stored = step_figures(store, run_id).set_index("step")
    compared = compare_frame(store, [run_id]).set_index("step")
    rebuilt = snapshot_from_store(store, run_id)
    for step, ref in reference.items():
        row, cmp = stored.loc[step], compared.loc[step]
        for key in ("rows_per_s", "mb_per_s", "ops_per_s", "window_s"):
            assert row[key] == _approx(ref[key]), key
        assert cmp["rows_per_s"] == _approx(ref["rows_per_s"]) and cmp["mb_per_s"] == _approx(ref["mb_per_s"])
        for q in ("p50", "p95", "p99"):
            assert row[f"{q}_s"] == _approx(ref[f"{q}_s"]) and cmp[f"{q}_ms"] == _approx(ref[f"{q}_s"] * 1000)
        assert row["first_op_s"] == _approx(ref["first_op_s"])
        assert row["phase_source"] == ref["phase_source"]
        for phase, (mean, count) in ref["phases"].items():
            assert row[f"{phase}_s"] == _approx(mean) and row[f"{phase}_n"] == count
            assert cmp[f"{phase}_ms"] == _approx(mean * 1000)
        # the live view ends on the same figures, and a run reopened from history shows them too
        for point in (live.sweep[step], rebuilt.sweep[step]):
            assert point.exact and point.label == row["label"]
            assert point.rows_per_s == _approx(ref["rows_per_s"]) and point.p50 == _approx(ref["p50_s"])
            assert point.p99 == _approx(ref["p99_s"]) and point.bytes_per_s == _approx(ref["mb_per_s"] * 1e6)
    last = max(reference)
    for snap in (live, rebuilt):
        assert snap.phase_step == "2 users" and snap.phase_exact
        assert snap.phase_means == _approx({p: m for p, (m, _) in reference[last]["phases"].items()})
        assert snap.phase_ops == max(n for _, n in reference[last]["phases"].values())
        assert snap.first_op_s == _approx(reference[last]["first_op_s"])
    headline = next(r for r in history_rows(store) if r["run_id"] == run_id)
    step = headline["headline_step"]
    assert headline["rows_per_s"] == _approx(reference[step]["rows_per_s"])
    assert headline["p50_ms"] == _approx(reference[step]["p50_s"] * 1000)


def test_phases_come_from_probes_where_the_call_has_no_parts(runs):
    store, made = runs
    pickle_ops = store.ops(made["pickle"][0])
    duckdb_ops = store.ops(made["duckdb"][0])
    # pickle.load is timed whole; io/decode come from two probes per worker, after the window
    measured = pickle_ops[pickle_ops["kind"] == "measured"]
    probes = pickle_ops[pickle_ops["kind"] == "probe"]
    assert measured["io_s"].isna().all() and measured["decode_s"].isna().all()
    assert len(probes) == 2 * (1 + 2) and probes["io_s"].notna().all() and probes["decode_s"].notna().all()
    for step, window in step_figures(store, made["pickle"][0])[["step", "window_s"]].itertuples(index=False):
        assert (probes.loc[probes["step"] == step, "t_start"] >= window).all()
    # DuckDB's call has two parts (execution into Arrow, then to_pandas): no probes
    assert set(duckdb_ops["kind"]) == {"measured", "warmup"}
    assert duckdb_ops.loc[duckdb_ops["kind"] == "measured", ["query_s", "decode_s"]].notna().all().all()


def test_one_meaning_of_bytes_across_targets(runs):
    store, made = runs
    per_target = {}
    for target, (run_id, _) in made.items():
        ops = store.ops(run_id, kinds=("measured",))
        per_target[target] = ops
        assert (ops["bytes"] == ops["rows"] * 45).all()        # TAQ: 45 B/row, DolphinDB widths
    pickle_wire = per_target["pickle"]["wire_bytes"]
    assert (pickle_wire > 0).all() and (pickle_wire != per_target["pickle"]["bytes"]).all()
    assert per_target["duckdb"]["wire_bytes"].isna().all()      # DuckDB does not say what it read


def test_a_runs_figures_read_its_own_records_only(tmp_path):
    """What a run's figures cost must not grow with the catalog: they open its files, never the
    other runs' (here one of those is gone from disk after the catalog listed it)."""
    store = ResultsStore(tmp_path / "results")
    try:
        ids = []
        for _ in range(2):
            result = Runner(Scenario(name="own", workload="noop", users=(1,), operations=8, probe_ops=0), store).run()
            assert result.status == "completed", result.message
            ids.append(result.run_id)
        before = step_figures(store, ids[0])
        assert before["ops"].iloc[0] == 8
    finally:
        store.close()
    fresh = ResultsStore(tmp_path / "results")          # nothing of the runs' answers kept in it yet
    try:
        assert fresh.frame("SELECT count(*) AS n FROM runs")["n"].iloc[0] == 2     # the views list both
        (fresh.run_folder(ids[1]) / "ops.parquet").unlink()
        after = step_figures(fresh, ids[0])
        assert after["ops"].iloc[0] == 8 and after["p50_s"].iloc[0] == before["p50_s"].iloc[0]
        assert len(fresh.ops(ids[0], kinds=("measured",))) == 8
    finally:
        fresh.close()


def test_a_finished_runs_figures_are_kept_with_it_and_a_callers_changes_never_reach_them(tmp_path):
    store = ResultsStore(tmp_path / "results")
    try:
        run_id = Runner(Scenario(name="kept", workload="noop", users=(1,), operations=8, probe_ops=0), store).run().run_id
        sql = "SELECT count(*) AS n, median(total_s) AS p50 FROM ops WHERE run_id = ? AND kind = 'measured'"
        for _ in range(2):                          # the first answer and the one kept: both changed
            answer = store.run_frame(run_id, sql, [run_id])
            answer.loc[:, "p50"] = -1.0
        assert store._cache[run_id].final and store._cache[run_id].frames     # kept: read once
        again = store.run_frame(run_id, sql, [run_id])
        assert again["p50"].iloc[0] > 0 and again["n"].iloc[0] == 8
        assert step_figures(store, run_id)["p50_s"].iloc[0] == again["p50"].iloc[0]
    finally:
        store.close()
