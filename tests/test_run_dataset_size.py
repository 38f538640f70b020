"""A stored run says the size of the data it read as laid out (issue 41, item 4): an imported CSV
of 5,003 rows and 7 keys, run with the form's untouched scale (1 day x 1,000,000 rows, 500 keys),
says its own rows and keys in ``tickbench show``, in History's rows and in the report's text; a
generated dataset says its own too."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from app.report.run_section import _scenario_text
from tests.trades_file import trades_table, write_trades_csv
from workloads.datasets import get_dataset
from workloads.datasets.roles import Roles
from workloads.datasets.schema import Scale
from workloads.paths import default_results_path
from workloads.results.history import history_rows
from workloads.results.store import ResultsStore
from workloads.run.runner import Runner
from workloads.scenario import Scenario

ROOT = Path(__file__).resolve().parent.parent


def _show(run_id: str, home: Path) -> str:
    env = {"TICKBENCH_HOME": str(home), "PATH": "/usr/bin:/bin", "QT_QPA_PLATFORM": "offscreen", "COLUMNS": "200"}
    result = subprocess.run([sys.executable, "-m", "app", "show", run_id], capture_output=True, text=True,
                            timeout=240, env=env, cwd=ROOT)
    assert result.returncode == 0, result.stderr
    return result.stdout


def _run(scenario: Scenario) -> tuple[ResultsStore, dict]:
    store = ResultsStore(default_results_path())
    result = Runner(scenario, store).run()
    assert result.status == "completed", result.message
    return store, store.run(result.run_id)


def test_an_imported_csvs_run_says_its_own_rows_and_keys_everywhere(tmp_path, isolated_home):
    from workloads.datasets.tick_import import import_source
    csv = write_trades_csv(tmp_path / "trades.csv", trades_table(rows=5_003, days=1, symbols=7))
    dataset = import_source(csv, "sized", Roles(time="ts", key="sym", price=("price",), size="qty"))
    assert get_dataset(dataset.info.name).rows == 5_003
    # the form's greyed defaults, as a new user leaves them: an import ignores rows per day and symbols
    scenario = Scenario(dataset=dataset.info.name, scale=Scale(), target="duckdb",
                        target_config={"path": str(tmp_path / "d.duckdb")}, workload="read-day",
                        operations=2, warmup_ops=0, probe_ops=0)
    store, run = _run(scenario)
    said = "5,003 rows over 1 day, 7 keys"
    assert run["layout"]["size"] == {"days": 1, "rows": 5_003, "keys": 7}
    assert said in _scenario_text(run, run["scenario"])
    assert "1,000,000" not in _scenario_text(run, run["scenario"])
    (row,) = [r for r in history_rows(store) if r["run_id"] == run["run_id"]]
    assert row["size"] == said
    store.close()
    shown = _show(run["run_id"], isolated_home)
    assert said in shown and "1,000,000" not in shown


def test_a_generated_datasets_run_says_the_size_laid_out(tmp_path):
    scenario = Scenario(dataset="taq", scale=Scale(days=2, rows_per_day=3_000, symbols=12), target="duckdb",
                        target_config={"path": str(tmp_path / "d.duckdb")}, workload="read-day",
                        operations=1, warmup_ops=0, probe_ops=0)
    store, run = _run(scenario)
    assert run["layout"]["size"] == {"days": 2, "rows": 6_000, "keys": 12}
    assert "6,000 rows over 2 days, 12 keys" in _scenario_text(run, run["scenario"])
    store.close()
