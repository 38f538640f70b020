"""``--operations`` is honoured by every workload: one that ends by its rows (slice-download, the
upload sweep) stops each user after that many measured operations when the user asks a number."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from workloads.datasets.schema import Scale
from workloads.results.store import ResultsStore
from workloads.run.runner import Runner
from workloads.scenario import Scenario

ROOT = Path(__file__).resolve().parent.parent
SMALL = Scale(days=1, rows_per_day=20_000, symbols=10)


def _measured(store, run_id: str) -> list[int]:
    ops = store.ops(run_id, kinds=("measured",))
    return ops.groupby("step").size().tolist()


def test_the_upload_sweep_stops_each_step_at_the_operations_asked(tmp_path):
    store = ResultsStore(tmp_path / "results")
    try:
        result = Runner(Scenario(dataset="taq", scale=SMALL, target="parquet", target_config={"root": str(tmp_path)},
                                 workload="upload-sweep", params={"batch_sizes": [10, 100], "rows_per_step": 5_000,
                                                                  "max_operations": 3}), store).run()
        assert result.status == "completed", result.message
        assert _measured(store, result.run_id) == [3, 3]               # not 500 and 50 batches
    finally:
        store.close()


def test_the_command_line_caps_slice_download_at_its_operations(tmp_path):
    env = {**os.environ, "COLUMNS": "200"}
    done = subprocess.run([sys.executable, "-m", "app", "--results", str(tmp_path / "r"), "run", "--target", "parquet",
                           "--data-dir", str(tmp_path / "data"), "--days", "1", "--rows-per-day", "20000", "--symbols",
                           "10", "--workload", "slice-download", "--operations", "3", "--users", "2"],
                          capture_output=True, text=True, timeout=300, env=env, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    store = ResultsStore(tmp_path / "r")
    try:
        (run,) = store.runs().to_dict("records")
        scenario = store.run(run["run_id"])["scenario"]
        assert scenario["params"]["max_operations"] == 3
        ops = store.ops(run["run_id"], kinds=("measured",))
        assert sorted(ops.groupby("worker").size().tolist()) == [3, 3]
    finally:
        store.close()


def test_the_windows_form_caps_a_workload_that_ends_by_its_rows(make_widget, tmp_path):
    """The form's "At most" for slice-download is the command line's --operations: the run it starts
    stops each user there; a workload that ends by operations shows no cap and asks none."""
    from widgets.scenario.builder import ScenarioBuilder
    form = make_widget(ScenarioBuilder, tmp_path)
    form.set_targets([("parquet", "Parquet files", "parquet", {"root": str(tmp_path / "data")})])
    form.set_scenario(Scenario(dataset="taq", scale=SMALL, target="parquet",
                               target_config={"root": str(tmp_path / "data")}, workload="slice-download", users=(2,)))
    assert form.max_ops_spin.isVisibleTo(form) and form.max_ops_spin.value() == 0
    assert "max_operations" not in form.scenario().params                 # 0: as many as its rows take
    form.max_ops_spin.setValue(3)
    scenario = form.scenario()
    assert scenario.params["max_operations"] == 3
    form.set_scenario(scenario.with_changes(params={**scenario.params, "max_operations": 5}))
    assert form.max_ops_spin.value() == 5                                  # a saved scenario's cap comes back
    form.max_ops_spin.setValue(3)
    store = ResultsStore(tmp_path / "results")
    try:
        result = Runner(form.scenario(), store).run()
        assert result.status == "completed", result.message
        ops = store.ops(result.run_id, kinds=("measured",))
        assert sorted(ops.groupby("worker").size().tolist()) == [3, 3]
    finally:
        store.close()
    form.workload_combo.setCurrentIndex(form.workload_combo.findData("read-day"))
    assert not form.max_ops_spin.isVisibleTo(form) and "max_operations" not in form.scenario().params
