"""True sizes: an import (or a table where it lives) has no generator scale. Its runs record its real
rows, days, keys and content and no rows per day, symbols or seed; the command line refuses those for it
in one line; one layout serves it whatever was asked; the form shows its real size; ``compare`` names
other data under one name."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import duckdb
import pytest

from tests.trades_file import trades_table, write_trades_csv
from widgets.scenario.builder import ScenarioBuilder
from workloads.datasets.roles import Roles
from workloads.datasets.schema import Scale
from workloads.datasets.tick_import import import_source
from workloads.results.compare import compare_runs
from workloads.results.store import ResultsStore
from workloads.run.runner import Runner
from workloads.scenario import Scenario

ROOT = Path(__file__).resolve().parent.parent
ROLES = Roles(time="ts", key="sym", price=("price",), size="qty")


def _import(tmp_path: Path, rows: int, days: int, seed_rows: int = 0) -> str:
    path = write_trades_csv(tmp_path / f"trades_{rows}.csv", trades_table(rows=rows, days=days, symbols=20))
    import_source(path, "mine", ROLES)
    return "imp_mine"


def _run(store, tmp_path: Path, scale: Scale) -> str:
    result = Runner(Scenario(dataset="imp_mine", scale=scale, target="duckdb",
                             target_config={"path": str(tmp_path / "d.duckdb")}, workload="read-day",
                             users=(1,), operations=1), store).run()
    assert result.status == "completed", result.message
    return result.run_id


def test_runs_on_an_import_record_its_real_size_and_share_one_layout(tmp_path):
    _import(tmp_path, rows=3_000, days=3)
    store = ResultsStore(tmp_path / "results")
    try:
        first = _run(store, tmp_path, Scale(days=3))
        second = _run(store, tmp_path, Scale(days=3, rows_per_day=5_000, symbols=3, seed=7))   # asked, meaningless
        for run_id in (first, second):
            run = store.run(run_id)
            assert run["scenario"]["scale"] == {"days": 3, "start": ""}            # no generator settings
            assert run["layout"]["size"] == {"days": 3, "rows": 3_000, "keys": 20}
            assert run["layout"]["content"].startswith("sha256:")
        assert not compare_runs(store, first, second).refusals                      # the same data, twice
    finally:
        store.close()
    with duckdb.connect(str(tmp_path / "d.duckdb"), read_only=True) as con:
        tables = [t for (t,) in con.sql("SELECT table_name FROM information_schema.tables").fetchall()
                  if t.startswith("imp_mine") and not t.endswith("_append")]
    assert len(tables) == 1, tables                                                   # laid out once


def test_compare_names_other_data_under_one_name(tmp_path):
    _import(tmp_path, rows=3_000, days=3)
    store = ResultsStore(tmp_path / "results")
    try:
        before = _run(store, tmp_path / "a", Scale(days=3))
        _import(tmp_path, rows=1_500, days=2)                                        # imported again, smaller
        after = _run(store, tmp_path / "b", Scale(days=3))
        comparison = compare_runs(store, before, after)
        assert ("other data under the name imp_mine: 3,000 rows over 3 days, 20 keys against 1,500 rows over "
                "2 days, 20 keys") in " ".join(comparison.refusals), comparison.refusals
    finally:
        store.close()


def test_the_command_line_refuses_generator_settings_for_an_import(tmp_path):
    _import(tmp_path, rows=600, days=1)
    import os
    env = {"TICKBENCH_HOME": os.environ["TICKBENCH_HOME"], "PATH": "/usr/bin:/bin", "COLUMNS": "200"}
    done = subprocess.run([sys.executable, "-m", "app", "--results", str(tmp_path / "r"), "run", "--dataset",
                           "imp_mine", "--rows-per-day", "5000", "--symbols", "3"], capture_output=True, text=True,
                          timeout=120, env=env, cwd=ROOT)
    assert done.returncode == 2 and done.stderr.strip().splitlines()[-1] == (
        "tickbench: error: --rows-per-day, --symbols set how much data is generated; dataset imp_mine has its own "
        "rows and keys: leave them out (--days picks how many of its days)")
    assert not (tmp_path / "r").exists() or not list((tmp_path / "r").rglob("run.json"))


@pytest.fixture
def builder(make_widget, tmp_path):
    return make_widget(ScenarioBuilder, tmp_path, size=(480, 900))


def test_the_form_shows_an_imports_own_size_instead_of_a_generators(tmp_path, builder):
    # a fresh form on a generated dataset shows its scale and no empty "Size:" row
    assert builder.dataset_combo.currentData() == "taq" and not builder._data_form.isRowVisible(builder.own_size)
    _import(tmp_path, rows=3_000, days=3)
    builder.refresh_datasets()
    builder.dataset_combo.setCurrentIndex(builder.dataset_combo.findData("imp_mine"))
    form = builder._data_form
    assert not form.isRowVisible(builder.rows_spin) and not form.isRowVisible(builder.symbols_spin)
    assert form.isRowVisible(builder.own_size) and builder.own_size.text() == "3,000 rows over 3 days, 20 keys"
    builder.dataset_combo.setCurrentIndex(builder.dataset_combo.findData("taq"))
    assert form.isRowVisible(builder.rows_spin) and not form.isRowVisible(builder.own_size)
