"""Workloads say which roles they need: a dataset without them is refused in one line before anything
starts (engine and command line), the window's form offers only what the dataset can run, and the writes
run on any schema, appending the dataset's own rows."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import duckdb
import pandas as pd
import pyarrow.parquet as pq
import pytest
from PySide6.QtCore import Qt

from tests.trades_file import trades_table, write_trades_csv
from workloads.datasets import DATASETS, get_dataset
from workloads.datasets.roles import Roles, dataset_info, schema_of
from workloads.datasets.schema import Scale, StringMode
from workloads.operations import WORKLOADS, get_workload
from workloads.operations.shares import write_share
from workloads.results.store import ResultsStore
from workloads.run.runner import Runner, check_scenario
from workloads.scenario import Scenario
from workloads.targets import make_target

ROOT = Path(__file__).resolve().parent.parent
ALL_DAYS = Scale(days=2)
NEEDS = {"read-day": {"time"}, "slice-download": {"time", "key"}, "minute-bars": {"time", "key", "price"},
         "upload-sweep": set(), "concurrent-append": set(), "noop": set(), "import": {"time"},
         "export": {"time"}, "query-suite": {"time"}, "spread-by-minute": {"time", "key", "price"},
         "mapreduce-minute-bars": {"time", "key", "price"}, "ols-spread": {"time", "key", "price", "quote-size"},
         **{name: {"time", "key", "price"} for name in ("asof-join", "vwap", "snapshot", "year-high-bid", "rolling-mid")}}


def _import(folder: Path, name: str, roles: Roles) -> str:
    from workloads.datasets.tick_import import import_source
    csv = write_trades_csv(folder / f"{name}.csv", trades_table(rows=6_000, days=2, symbols=5))
    return import_source(csv, name, roles).info.name


@pytest.fixture
def bare(tmp_path) -> str:
    """The user's trades imported with a time only: no key, no price, no size."""
    return _import(tmp_path, "bare", Roles(time="ts"))


def _config(kind: str, root: Path) -> dict:
    return {"path": str(root / "d.duckdb")} if kind == "duckdb" else {"root": str(root / "files")}


# --- declared roles and the refusal ------------------------------------------------------------------
def test_every_workload_declares_the_roles_it_needs():
    assert {name: set(w.roles) for name, w in WORKLOADS.items()} == NEEDS
    assert get_workload("minute-bars").to_dict()["roles"] == ["time", "key", "price"]


def test_the_built_in_datasets_run_every_workload_but_taqs_own_questions():
    tick_pack = {"asof-join", "vwap", "snapshot", "year-high-bid", "rolling-mid"}
    # report 003's quotes: bid and ask with a date and a time of day (api45's and level 2's have
    # them), the OLS their quote sizes too (TAQ's alone)
    refused_of = {"taq": set(), "devices": tick_pack | {"spread-by-minute", "ols-spread", "mapreduce-minute-bars"},
                  "api45": tick_pack | {"ols-spread"}, "level2": tick_pack | {"ols-spread"}}
    assert set(refused_of) == set(DATASETS)
    for name, dataset in DATASETS.items():
        refused = {w.name for w in WORKLOADS.values() if w.refusal(dataset.info)}
        assert refused == refused_of[name], name


def test_a_dataset_without_a_key_is_refused_in_one_line_naming_what_is_missing(bare):
    info = get_dataset(bare).info
    assert get_workload("slice-download").refusal(info) == (
        "slice-download needs a key column: dataset imp_bare has none (import it with --key COLUMN)")
    assert get_workload("minute-bars").refusal(info) == (
        "minute-bars needs a key column and a price column: dataset imp_bare has neither "
        "(import it with --key COLUMN --price COLUMN)")
    assert get_workload("minute-bars").refusal(info, flags=False) == (
        "minute-bars needs a key column and a price column: dataset imp_bare has neither")
    possible = {name for name, w in WORKLOADS.items() if not w.refusal(info)}
    assert possible == {name for name, roles in NEEDS.items() if roles <= {"time"}}


def test_a_table_read_in_place_is_told_to_be_added_again_with_the_role():
    schema = schema_of(trades_table(rows=10, days=1, symbols=2).schema)
    info = dataset_info("tbl_trades", "trades", schema, Roles(time="ts", key="sym"))
    assert get_workload("minute-bars").refusal(info) == (
        "minute-bars needs a price column: dataset tbl_trades has none (add the table again with --price COLUMN)")
    assert get_workload("ols-spread").missing_roles(info) == ("price", "quote-size")


def test_a_key_without_a_price_allows_slices_but_not_bars(tmp_path):
    keyed = get_dataset(_import(tmp_path, "keyed", Roles(time="ts", key="sym"))).info
    assert get_workload("slice-download").refusal(keyed) == ""
    assert get_workload("minute-bars").missing_roles(keyed) == ("price",)


@pytest.mark.parametrize("workload", ["slice-download", "minute-bars", "ols-spread"])
def test_the_runner_refuses_before_anything_is_prepared(bare, tmp_path, workload):
    scenario = Scenario(dataset=bare, scale=ALL_DAYS, target="duckdb", target_config=_config("duckdb", tmp_path),
                        workload=workload)
    with pytest.raises(ValueError, match=f"^{workload} needs a key column.*dataset imp_bare has"):
        check_scenario(scenario)
    with pytest.raises(ValueError, match=f"^{workload} needs"):
        Runner(scenario, ResultsStore(tmp_path / "results"))
    assert not (tmp_path / "d.duckdb").exists()


def _tickbench(*args: str, home: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "app", *args], capture_output=True, text=True, timeout=120,
                          cwd=ROOT, env={"TICKBENCH_HOME": str(home), "PATH": "/usr/bin:/bin", "COLUMNS": "200"})


def test_the_command_line_refuses_in_one_line_and_lists_the_roles(bare, isolated_home, tmp_path):
    done = _tickbench("run", "--target", "duckdb", "--dataset", bare, "--days", "2", "--workload",
                      "slice-download", "--data-dir", str(tmp_path / "data"), home=isolated_home)
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert done.returncode == 2 and len(lines) == 1, done.stderr
    assert lines[0].endswith("slice-download needs a key column: dataset imp_bare has none "
                             "(import it with --key COLUMN)")
    assert not (tmp_path / "data").exists()
    listed = _tickbench("workloads", home=isolated_home)
    assert listed.returncode == 0, listed.stderr
    lines = {line.split(" — ")[0]: line for line in listed.stdout.splitlines()}
    assert lines["minute-bars"].endswith("needs roles: time, key, price")
    assert lines["read-day"].endswith("needs roles: time")
    assert lines["upload-sweep"].endswith("runs on any dataset")


# --- the writes on any schema --------------------------------------------------------------------------
def _written(kind: str, tmp_path: Path, dataset: str, table: str) -> pd.DataFrame:
    """The rows in ``table`` ("" = the layout's append table), read back from the engine's own storage."""
    target = make_target(kind, _config(kind, tmp_path))
    scale = Scenario(dataset=dataset, scale=ALL_DAYS).scale            # an import's own scale, as a run's
    layout = target.prepare(dataset, scale, StringMode.ARROW)          # found, not laid out again
    if kind == "parquet":
        return pq.read_table(target.append_dir(layout, table)).to_pandas()
    with duckdb.connect(str(tmp_path / "d.duckdb"), read_only=True) as con:
        return con.execute(f'SELECT * FROM "{table or target.table(layout) + "_append"}"').df()


@pytest.mark.parametrize("kind", ["duckdb", "parquet"])
def test_upload_and_concurrent_append_write_the_datasets_own_rows(bare, tmp_path, kind):
    store = ResultsStore(tmp_path / "results")
    days = [get_dataset(bare).day_frame(i, ALL_DAYS) for i in range(ALL_DAYS.days)]
    runs = [("upload-sweep", {"batch_sizes": [300, 1000], "rows_per_step": 2_000}, (1,), "upload", 2_000, 1),
            ("concurrent-append", {"rows_per_user": 2_000, "batch_rows": 500}, (2,), "", 4_000, 2)]
    for workload, params, users, table, rows, copies in runs:
        scenario = Scenario(dataset=bare, scale=ALL_DAYS, target=kind, target_config=_config(kind, tmp_path),
                            workload=workload, params=params, users=users)
        result = Runner(scenario, store).run()
        assert result.status == "completed", result.message
        ops = store.ops(result.run_id, kinds=("measured",))
        assert ops["ok"].all() and ops["rows"].sum() == rows * (len(params.get("batch_sizes", [0])))
        written = _written(kind, tmp_path, bare, table)
        assert list(written.columns) == ["ts", "sym", "price", "qty", "side", "venue"]
        assert len(written) == rows
        # each user's own day's rows (workloads.operations.shares), its pool once
        expected = pd.concat([days[write_share(w, copies, ALL_DAYS.days, []).day_index].iloc[:2_000]
                              for w in range(copies)], ignore_index=True)
        order = ["ts", "sym", "qty"]
        got = written.sort_values(order, kind="stable").reset_index(drop=True)
        want = expected.sort_values(order, kind="stable").reset_index(drop=True)
        assert (got["ts"].astype("int64").to_numpy() == want["ts"].astype("int64").to_numpy()).all()
        assert got["sym"].astype(str).tolist() == want["sym"].astype(str).tolist()
        assert got["qty"].tolist() == want["qty"].tolist()
    store.close()


# --- the window's form -------------------------------------------------------------------------------
def test_the_form_offers_only_what_the_dataset_can_run(make_widget, tmp_path, bare):
    from widgets.scenario.builder import ScenarioBuilder
    form = make_widget(ScenarioBuilder, tmp_path, size=(480, 900))
    form.set_targets([("duckdb", "DuckDB (embedded)", "duckdb", {"path": str(tmp_path / "x.duckdb")})])
    combo, items = form.workload_combo, form.workload_combo.model()

    def offered() -> set[str]:
        return {combo.itemData(i) for i in range(combo.count()) if items.item(i).isEnabled()}

    assert offered() == set(WORKLOADS)                  # taq: everything
    combo.setCurrentIndex(combo.findData("minute-bars"))
    form.dataset_combo.setCurrentIndex(form.dataset_combo.findData(bare))
    assert offered() == {name for name, roles in NEEDS.items() if roles <= {"time"}}
    tip = combo.itemData(combo.findData("slice-download"), Qt.ItemDataRole.ToolTipRole)
    assert tip == "slice-download needs a key column: dataset imp_bare has none."
    assert combo.currentData() == "read-day"            # minute bars gave way to a possible workload
    assert form.scenario().workload == "read-day" and "Load a whole day" in form.workload_note.text()
    form.dataset_combo.setCurrentIndex(form.dataset_combo.findData("taq"))
    assert offered() == set(WORKLOADS)
    assert combo.itemData(combo.findData("slice-download"), Qt.ItemDataRole.ToolTipRole) is None
