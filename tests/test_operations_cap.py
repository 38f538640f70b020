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
