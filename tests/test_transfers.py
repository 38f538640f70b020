"""Reports 001 and 004 on the local targets: CSV import with each target's own loader, CSV export,
footprints, and the import / export / query-suite workloads through the runner with real worker
processes, their figures (per query, geometric mean, CSV MB/s, footprint ratios)."""
from __future__ import annotations

import math
import textwrap

import numpy as np
import pandas as pd
import pytest

from workloads.datasets import get_dataset
from workloads.datasets.csv_files import csv_files
from workloads.datasets.csvread import read_csv
from workloads.datasets.schema import Scale, StringMode
from workloads.results.history import snapshot_from_store
from workloads.queries.answers import normalise
from workloads.queries.suites import user_suites_dir
from workloads.run.runner import Runner
from workloads.scenario import Scenario
from workloads.results.store import ResultsStore
from workloads.run.records import FAILED, NOT_SUPPORTED, OK
from workloads.results.suite_figures import category_summary, query_figures, run_footprints, suite_summary
from workloads.targets import make_target
from workloads.targets.base import IMPORT_TABLE

SCALE = Scale(days=2, rows_per_day=6_000, symbols=12)
KINDS = ("duckdb", "parquet", "pickle", "feather")


def config(kind: str, tmp_path) -> dict:
    return {"path": str(tmp_path / "d.duckdb")} if kind == "duckdb" else {"root": str(tmp_path / "files")}


@pytest.fixture
def laid_out(request, tmp_path):
    target = make_target(request.param, config(request.param, tmp_path))
    layout = target.prepare("taq", SCALE, StringMode.ARROW)
    target.open(layout)
    yield request.param, target, layout
    target.close()


def imported_frame(kind, target, layout) -> pd.DataFrame:
    if kind == "duckdb":
        import duckdb

        target.close()                      # the worker's connection: read the file as a user would
        with duckdb.connect(target.config["path"], read_only=True) as con:
            return con.sql(f'SELECT * FROM "{target.import_table(layout)}"').df()
    files = sorted((target.import_dir(layout)).iterdir())
    return pd.concat([read_back(kind, f) for f in files], ignore_index=True)


def read_back(kind, path) -> pd.DataFrame:
    if kind == "pickle":
        return pd.read_pickle(path)
    if kind == "parquet":
        return pd.read_parquet(path)
    import pyarrow as pa
    return pa.ipc.open_file(path).read_all().to_pandas()      # pd.read_feather's reader is deprecated


def same_rows(a: pd.DataFrame, b: pd.DataFrame) -> bool:
    columns = tuple(b.columns)
    return normalise(a[list(columns)], columns).equals(normalise(b, columns))


# --- the targets' own loaders and writers ---------------------------------------------------
@pytest.mark.parametrize("laid_out", KINDS, indirect=True)
def test_import_loads_every_csv_row_as_generated(laid_out):
    kind, target, layout = laid_out
    files = csv_files("taq", SCALE)
    assert [f.day for f in files] == list(layout.days)
    results = [target.import_csv(layout, f.path, f.day) for f in files]
    assert [r.rows for r in results] == [f.rows for f in files] == [SCALE.rows_per_day] * 2
    assert [r.wire_bytes for r in results] == [f.bytes for f in files]
    generated = pd.concat([get_dataset("taq").day_frame(i, SCALE) for i in range(2)], ignore_index=True)
    assert same_rows(imported_frame(kind, target, layout), generated)


@pytest.mark.parametrize("laid_out", KINDS, indirect=True)
def test_clearing_the_import_table_lets_a_step_load_again(laid_out):
    kind, target, layout = laid_out
    file = csv_files("taq", SCALE)[0]
    target.import_csv(layout, file.path, file.day)
    target.clear_table(layout, IMPORT_TABLE)
    target.import_csv(layout, file.path, file.day)
    assert len(imported_frame(kind, target, layout)) == file.rows          # once, not twice


@pytest.mark.parametrize("laid_out", KINDS, indirect=True)
def test_export_writes_the_day_that_reads_back_equal(laid_out, tmp_path):
    kind, target, layout = laid_out
    path = tmp_path / "out" / "day.csv"
    path.parent.mkdir()
    result = target.export_csv(layout, layout.days[1], path)
    assert result.rows == SCALE.rows_per_day and result.wire_bytes == path.stat().st_size > 0
    assert same_rows(read_csv(path, "taq"), get_dataset("taq").day_frame(1, SCALE))


@pytest.mark.parametrize("laid_out", ["duckdb", "parquet"], indirect=True)
def test_footprint_per_column_adds_up(laid_out):
    kind, target, layout = laid_out
    footprint = target.footprint_detail(layout)
    schema = get_dataset("taq").info.schema
    assert set(footprint.columns) == {c.name for c in schema.columns} and footprint.replicas == 1
    assert 0 < sum(footprint.columns.values()) <= footprint.bytes
    if kind == "parquet":                   # column chunks plus the footers: the files' sizes
        files = target.day_files(layout)
        assert footprint.bytes == sum(p.stat().st_size for p in files)
    # a price column of doubles takes more room than the exchange code of one byte
    assert footprint.columns["bid"] > footprint.columns["ex"]
    assert target.footprint_detail(layout, IMPORT_TABLE).bytes == 0        # nothing imported yet


@pytest.mark.parametrize("laid_out", ["pickle", "feather"], indirect=True)
def test_formats_without_column_metadata_count_their_files(laid_out):
    kind, target, layout = laid_out
    footprint = target.footprint_detail(layout)
    assert footprint.columns == {} and footprint.bytes == sum(p.stat().st_size for p in target.day_files(layout))


# --- through the runner -------------------------------------------------------------------------
def run(tmp_path, kind: str, workload: str, params: dict | None = None, users=(1,), **extra):
    store = ResultsStore(tmp_path / "results")
    scenario = Scenario(dataset=extra.pop("dataset", "taq"), scale=extra.pop("scale", SCALE), target=kind,
                        target_config=config(kind, tmp_path), workload=workload, params=params or {},
                        users=users, **extra)
    runner = Runner(scenario, store)
    result = runner.run()
    assert result.status == "completed", result.message
    live_ends_as_stored(runner.snapshot(), snapshot_from_store(store, result.run_id))
    return store, result


def live_ends_as_stored(live, stored) -> None:
    """What the dashboard showed at the end of the run is what history shows of it."""
    assert [q.query for q in live.queries] == [q.query for q in stored.queries]
    for a, b in zip(live.queries, stored.queries):
        assert (a.status, a.runs, a.fingerprint, a.category) == (b.status, b.runs, b.fingerprint, b.category)
        assert a.mean_s == pytest.approx(b.mean_s) and a.min_s == pytest.approx(b.min_s)
    assert [p.wire_bytes_per_s for p in live.sweep] == pytest.approx([p.wire_bytes_per_s for p in stored.sweep])


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["duckdb", "parquet"])
def test_import_workload_loads_each_file_once_per_step(tmp_path, kind):
    store, result = run(tmp_path, kind, "import", users=(1, 2), warmup_ops=1)
    figures = result.figures
    files = csv_files("taq", SCALE)
    csv_bytes = sum(f.bytes for f in files)
    stored = snapshot_from_store(store, result.run_id)
    assert [p.wire_bytes_per_s for p in stored.sweep] == pytest.approx(list(figures["wire_mb_per_s"] * 1e6))
    assert stored.footprints == run_footprints(store, result.run_id) and stored.queries == []
    assert list(figures["rows"]) == [2 * SCALE.rows_per_day] * 2 and list(figures["ops"]) == [2, 2]
    # CSV MB/s: the files' bytes over the window, the report's import rate
    for _, step in figures.iterrows():
        assert step["wire_mb_per_s"] == pytest.approx(csv_bytes / step["window_s"] / 1e6)
    target = make_target(kind, config(kind, tmp_path))
    layout = target.prepare("taq", SCALE, StringMode.ARROW)
    target.open(layout)
    assert len(imported_frame(kind, target, layout)) == 2 * SCALE.rows_per_day   # the warm-up load cleared
    target.close()
    footprints = run_footprints(store, result.run_id)
    assert set(footprints["steps"]) == {0, 1}
    step = footprints["steps"][1]
    assert step["bytes"] > 0 and step["csv_ratio"] == pytest.approx(csv_bytes / step["bytes"])
    layout_fp = footprints["layout"]
    assert layout_fp["csv_bytes"] == csv_bytes and layout_fp["logical_bytes"] == 2 * SCALE.rows_per_day * 45
    assert layout_fp["logical_ratio"] == pytest.approx(layout_fp["logical_bytes"] / layout_fp["bytes"])
    store.close()


@pytest.mark.slow
def test_export_workload_writes_every_day_and_cleans_up(tmp_path):
    store, result = run(tmp_path, "feather", "export", users=(2,))
    figures = result.figures
    assert figures["rows"].iloc[0] == 2 * SCALE.rows_per_day and figures["ops"].iloc[0] == 2
    ops = store.ops(result.run_id, ("measured",))
    assert ops["wire_bytes"].notna().all() and (ops["wire_bytes"] > 0).all()
    assert sorted(ops["worker"]) == [0, 1]                     # one day each
    from workloads.paths import data_dir

    assert not list((data_dir() / "runs" / result.run_id).rglob("*.csv"))     # written, then removed
    store.close()


MIXED = """
dataset = "taq"
[[query]]
id = "spreads"
category = "aggregate"
description = "sum of spreads per symbol on the last day"
params = { day = "day:-1" }
columns = ["symbol", "spread"]
days = "day"
duckdb = "SELECT symbol, sum(ofr - bid) AS spread FROM {quotes} WHERE date = $day GROUP BY symbol"
pandas = "taq_spread_sum"

[[query]]
id = "valid"
category = "filter"
description = "valid quotes of three symbols on the first day"
params = { day = "day:0", symbols = "keys:3" }
columns = ["n"]
days = "day"
duckdb = "SELECT count(*) AS n FROM {quotes} WHERE date = $day AND symbol IN $symbols AND bid > 0 AND ofr > bid"
pandas = "taq_valid_count"

[[query]]
id = "sql_only"
category = "filter"
description = "every row (no pandas version)"
columns = ["n"]
duckdb = "SELECT count(*) AS n FROM {quotes}"

[[query]]
id = "broken"
category = "filter"
description = "a pandas name that does not exist"
columns = ["n"]
duckdb = "SELECT count(*) AS n FROM {quotes} WHERE bid > 0"
pandas = "no_such_function"
"""


@pytest.mark.slow
def test_query_suite_times_each_query_and_keeps_unsupported_apart(tmp_path):
    user_suites_dir().mkdir(parents=True, exist_ok=True)
    (user_suites_dir() / "mixed.toml").write_text(textwrap.dedent(MIXED), encoding="utf-8")
    answers = {}
    for kind in ("duckdb", "parquet"):
        store, result = run(tmp_path / kind, kind, "query-suite", {"suite": "mixed", "repetitions": 3})
        figures = query_figures(store, result.run_id).set_index("query")
        assert list(figures.index) == ["spreads", "valid", "sql_only", "broken"]
        assert list(figures["category"]) == ["aggregate", "filter", "filter", "filter"]
        ops = store.ops(result.run_id, ("measured",))
        for query in ("spreads", "valid"):
            mine = ops[(ops["op"] == query) & ops["ok"]]["total_s"]
            assert figures.loc[query, "runs"] == 3 and figures.loc[query, "status"] == OK
            assert figures.loc[query, "mean_s"] == pytest.approx(mine.mean())
            assert figures.loc[query, "min_s"] == pytest.approx(mine.min())
        answers[kind] = figures.loc[["spreads", "valid"], "fingerprint"].tolist()
        points = {q.query: q for q in snapshot_from_store(store, result.run_id).queries}
        assert points["spreads"].mean_s == pytest.approx(figures.loc["spreads", "mean_s"])
        assert points["sql_only"].status == figures.loc["sql_only", "status"]
        summary = suite_summary(query_figures(store, result.run_id)).iloc[0]
        answered = figures[figures["status"] == OK]["mean_s"]
        assert summary["geomean_s"] == pytest.approx(math.exp(np.log(answered).mean()))
        categories = category_summary(query_figures(store, result.run_id)).set_index("category")
        assert categories.loc["aggregate", "queries"] == 1
        if kind == "duckdb":
            assert figures.loc["sql_only", "status"] == OK and figures.loc["broken", "status"] == OK
            assert (summary["answered"], summary["not_supported"], summary["failed"]) == (4, 0, 0)
        else:
            assert figures.loc["sql_only", "status"] == NOT_SUPPORTED and figures.loc["sql_only", "runs"] == 0
            unsupported = store.ops(result.run_id, ("unsupported",))
            assert list(unsupported["op"]) == ["sql_only"]             # recorded once, not as an error
            assert figures.loc["broken", "status"] == FAILED and "no_such_function" in figures.loc["broken", "error"]
            assert (summary["answered"], summary["not_supported"], summary["failed"]) == (2, 1, 1)
        store.close()
    assert answers["duckdb"] == answers["parquet"] and all(answers["duckdb"])
