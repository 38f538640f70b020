"""Every workload on every local target, through the runner with real worker processes."""
from __future__ import annotations

import pytest

from workloads.datasets.schema import Scale
from workloads.run.runner import Runner
from workloads.scenario import Scenario
from workloads.results.store import ResultsStore

SCALE = Scale(days=2, rows_per_day=10_000, symbols=20)
CASES = {
    "read-day": ({}, 2),
    "slice-download": ({"rows_per_user": 2_000}, 2),
    "upload-sweep": ({"batch_sizes": "10,1000", "rows_per_step": 2_000}, 1),
    "concurrent-append": ({"rows_per_user": 4_000, "batch_rows": 1_000}, 2),
    "minute-bars": ({}, 2),
}


def _config(target: str, tmp_path) -> dict:
    return {"path": str(tmp_path / "d.duckdb")} if target == "duckdb" else {"root": str(tmp_path / "files")}


@pytest.mark.slow
@pytest.mark.parametrize("target", ["pickle", "parquet", "feather", "duckdb"])
@pytest.mark.parametrize("workload", list(CASES))
def test_workload_runs_on_target(tmp_path, target, workload):
    params, users = CASES[workload]
    store = ResultsStore(tmp_path / "results")
    scenario = Scenario(dataset="taq", scale=SCALE, target=target, target_config=_config(target, tmp_path),
                        workload=workload, params=params, users=(users,), operations=2)
    result = Runner(scenario, store).run()
    assert result.status == "completed", result.message
    figures = result.figures
    assert (figures["errors"] == 0).all()
    ops = store.ops(result.run_id)
    assert ops["ok"].all() and (ops["rows"] > 0).all()
    if workload == "slice-download":  # every user stops once it has its rows, not before
        per_worker = ops.groupby("worker")["rows"].sum()
        assert (per_worker >= 2_000).all()
    if workload == "upload-sweep":
        assert list(figures["label"]) == ["batch 10 rows", "batch 1,000 rows"]
        assert list(figures["rows"]) == [2_000, 2_000] and list(figures["ops"]) == [200, 2]
    if workload == "concurrent-append":
        assert figures["rows"].iloc[0] == 2 * 4_000
    if workload in ("read-day", "minute-bars"):
        assert figures["ops"].iloc[0] == 2 * users
    store.close()
