"""Report 003's computations on the local targets (DuckDB SQL, pandas over files), checked against
a plain numpy/pandas computation of the whole span; the workloads' scenario checks and windows."""
from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from workloads.datasets import get_dataset
from workloads.datasets.schema import Scale, StringMode
from workloads.operations import WORKLOADS, get_workload
from workloads.run.runner import Runner
from workloads.scenario import Scenario
from workloads.results.store import ResultsStore
from workloads.targets import make_target
from workloads.targets.base import TargetError

SCALE = Scale(days=3, rows_per_day=8_000, symbols=25)
LOCAL = ["duckdb", "pickle", "parquet", "feather"]
COMPUTE = ["spread-by-minute", "mapreduce-minute-bars", "ols-spread"]


def config(kind: str, root: Path) -> dict:
    return {"path": str(root / "d.duckdb")} if kind == "duckdb" else {"root": str(root)}


@pytest.fixture(scope="module")
def data_root(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("compute")


@pytest.fixture(scope="module", params=LOCAL)
def opened(request, data_root):
    target = make_target(request.param, config(request.param, data_root))
    layout = target.prepare("taq", SCALE, StringMode.ARROW)
    target.open(layout, 0)
    yield target, layout
    target.close()


def quotes(days: list[int]) -> pd.DataFrame:
    return pd.concat([get_dataset("taq").day_frame(i, SCALE) for i in days], ignore_index=True)


def seed_filter(frame: pd.DataFrame) -> pd.DataFrame:
    """Report 003's where clause, written out plainly."""
    tod = frame["time"].dt.hour * 3600 + frame["time"].dt.minute * 60 + frame["time"].dt.second
    keep = ((tod >= 9 * 3600 + 1800) & (tod <= 15 * 3600 + 59 * 60 + 59) & (frame["ofr"] > frame["bid"])
            & (frame["bid"] > 0) & (frame["ofr"] > 0) & (frame["ofr"] / frame["bid"] < 1.2))
    return frame[keep]


def test_spread_by_minute_matches_pandas(opened):
    target, layout = opened
    result = target.spread_by_minute(layout, layout.days[1:])
    q = seed_filter(quotes([1, 2]))
    expected = ((q["ofr"] - q["bid"]) / (q["ofr"] + q["bid"]) * 2).groupby(q["time"].dt.floor("min")).mean()
    assert list(result.frame.columns) == ["minute", "avgSpread"] and result.rows == len(expected) == 390
    assert pd.to_datetime(result.frame["minute"]).tolist() == expected.index.tolist()
    np.testing.assert_allclose(result.frame["avgSpread"], expected.to_numpy(), rtol=1e-9)
    assert set(result.phases) <= {"read", "decode", "query"} and all(v >= 0 for v in result.phases.values())


def test_ols_matches_least_squares_with_standard_errors(opened):
    target, layout = opened
    result = target.ols_spread(layout)                       # every day of the layout
    q = seed_filter(quotes([0, 1, 2]))
    y = (q["ofr"] / q["bid"] - 1).to_numpy()
    x = ((q["bidsiz"] + q["ofrsiz"]) * (q["ofr"] + q["bid"]) / 2).to_numpy(float)
    design = np.column_stack([np.ones_like(x), x])
    beta, residuals, *_ = np.linalg.lstsq(design, y, rcond=None)
    sigma2 = float(residuals[0]) / (len(y) - 2)
    se = np.sqrt(np.diag(sigma2 * np.linalg.inv(design.T @ design)))
    frame = result.frame
    assert frame["factor"].tolist() == ["intercept", "quoteSize"] and result.rows == 2
    np.testing.assert_allclose(frame["beta"], beta, rtol=1e-6)
    np.testing.assert_allclose(frame["stdError"], se, rtol=1e-5)
    np.testing.assert_allclose(frame["tstat"], beta / se, rtol=1e-5)
    assert result.extra["observations"] == len(y)


def test_mapreduce_writes_one_bar_per_symbol_day_minute(opened):
    target, layout = opened
    frame = quotes([0])
    groups = frame.groupby(["symbol", frame["time"].dt.floor("min")])
    before = stored_bars(target, layout)
    result = target.mapreduce_minute_bars(layout, layout.days[:1])
    assert result.frame["bars"].tolist() == [groups.ngroups] and result.rows == 1
    assert stored_bars(target, layout) - before == groups.ngroups
    if target.kind == "duckdb":   # the values written, for one symbol-minute
        con = target._con(layout)
        key, minute = next(iter(groups.groups))
        got = con.execute(f'SELECT bid, ofr FROM "{target.minute_table(layout)}" WHERE symbol = ? AND minute = ? '
                          "AND date = ?", [key, minute, layout.days[0]]).fetchall()
        mean = groups[["bid", "ofr"]].mean().loc[(key, minute)]
        np.testing.assert_allclose(got[-1], mean.to_numpy())


def stored_bars(target, layout) -> int:
    if target.kind == "duckdb":
        con = target._con(layout)
        exists = con.execute("SELECT count(*) FROM information_schema.tables WHERE table_name = ?",
                             [target.minute_table(layout)]).fetchone()[0]
        return con.execute(f'SELECT count(*) FROM "{target.minute_table(layout)}"').fetchone()[0] if exists else 0
    return target.minute_rows(layout) if target.minute_dir(layout).is_dir() else 0


def test_string_modes_do_not_change_the_answer(data_root):
    target = make_target("pickle", config("pickle", data_root))
    layout = target.prepare("taq", Scale(days=1, rows_per_day=3_000, symbols=10), StringMode.CATEGORY)
    target.open(layout, 0)
    assert target.mapreduce_minute_bars(layout).rows == 1
    arrow = make_target("feather", config("feather", data_root))
    arrow_layout = arrow.prepare("taq", Scale(days=1, rows_per_day=3_000, symbols=10), StringMode.OBJECT)
    np.testing.assert_allclose(target.spread_by_minute(layout).frame["avgSpread"],
                               arrow.spread_by_minute(arrow_layout).frame["avgSpread"])


@pytest.mark.parametrize("dataset,workload,refusal", [
    *(("devices", w, "'devices' lacks a bid and an ask price (--price BID --price ASK) and a date and a time "
                     "of day in columns of their own") for w in ("spread-by-minute", "mapreduce-minute-bars")),
    ("devices", "ols-spread", "ols-spread needs quote sizes (bid size and ask size): dataset devices has none"),
    ("api45", "ols-spread", "ols-spread needs quote sizes (bid size and ask size): dataset api45 has none"),
    ("level2", "ols-spread", "ols-spread needs quote sizes (bid size and ask size): dataset level2 has none"),
])
def test_other_datasets_are_refused_before_anything_is_prepared(tmp_path, dataset, workload, refusal):
    scenario = Scenario(dataset=dataset, target="duckdb", target_config={"path": str(tmp_path / "d.duckdb")},
                        workload=workload)
    with pytest.raises(ValueError, match=re.escape(refusal)):
        Runner(scenario, ResultsStore(tmp_path / "results"))
    assert not (tmp_path / "d.duckdb").exists()


@pytest.mark.parametrize("dataset", ["api45", "level2"])
def test_quotes_without_sizes_run_what_needs_no_sizes(tmp_path, dataset):
    """Bid and ask, a date and a time of day are all the spread and the minute bars read: api45's and
    level 2's quotes run them; only the OLS asks the quote sizes."""
    info = get_dataset(dataset).info
    offered = {w for w in COMPUTE if not get_workload(w).refusal(info)}
    assert offered == {"spread-by-minute", "mapreduce-minute-bars"}


def test_the_targets_refuse_them_too(tmp_path):
    target = make_target("parquet", {"root": str(tmp_path)})
    layout = target.prepare("devices", Scale(days=1, rows_per_day=500, symbols=5), StringMode.ARROW)
    for method in ("spread_by_minute", "mapreduce_minute_bars", "ols_spread"):
        with pytest.raises(TargetError, match="read quotes as TAQ has them"):
            getattr(target, method)(layout)


def test_days_per_operation_is_checked_and_windows_slide():
    workload = get_workload("spread-by-minute")
    with pytest.raises(ValueError, match="5 days per operation, but the dataset has only 3 days"):
        workload.steps(Scenario(scale=SCALE, workload="spread-by-minute", params={"days": 5}))
    assert [p.name for p in workload.params] == ["days"] and workload.validate({})["days"] == 0

    class Ctx:
        layout = type("L", (), {"days": ("d1", "d2", "d3", "d4")})()
        params = {"days": 2}
        worker = 1
        scenario = type("S", (), {"cache": "warm"})()
        step = type("P", (), {"users": 2})()

    assert [workload.window(Ctx, seq) for seq in range(4)] == [
        ("d2", "d3"), ("d3", "d4"), ("d1", "d2"), ("d2", "d3")]
    # cold: the two users of a round take disjoint windows (workloads.run.cold)
    Ctx.scenario.cache = "cold"
    for seq in range(3):
        Ctx.worker = 0
        first = workload.window(Ctx, seq)
        Ctx.worker = 1
        assert not set(first) & set(workload.window(Ctx, seq))
    Ctx.params = {"days": 0}
    assert workload.window(Ctx, 7) == ("d1", "d2", "d3", "d4")
    assert {"spread-by-minute", "mapreduce-minute-bars", "ols-spread"} <= set(WORKLOADS)
    # the map-reduce writes its bars: each of two users only ever covers its own two days
    writer, Ctx.params, Ctx.scenario.cache = get_workload("mapreduce-minute-bars"), {"days": 1}, "warm"
    owned = {}
    for worker in (0, 1):
        Ctx.worker = worker
        owned[worker] = {day for seq in range(6) for day in writer.window(Ctx, seq)}
    assert owned == {0: {"d1", "d2"}, 1: {"d3", "d4"}}


@pytest.mark.slow
@pytest.mark.parametrize("target", ["duckdb", "parquet"])
def test_compute_workloads_through_the_runner(tmp_path, target):
    store = ResultsStore(tmp_path / "results")
    for workload in COMPUTE:
        scenario = Scenario(dataset="taq", scale=Scale(days=2, rows_per_day=4_000, symbols=15), target=target,
                            target_config=config(target, tmp_path), workload=workload, params={"days": 1},
                            users=(2,), operations=2)
        result = Runner(scenario, store).run()
        assert result.status == "completed", result.message
        ops = store.ops(result.run_id, kinds=("measured",))
        assert len(ops) == 4 and ops["ok"].all() and (ops["rows"] > 0).all()
        phases = ["query_s", "decode_s"] if target == "duckdb" else ["read_s", "decode_s", "query_s"]
        assert ops[phases].notna().all().all()
    store.close()


def test_command_line_refuses_a_dataset_without_quotes(tmp_path):
    done = subprocess.run([sys.executable, "-m", "app", "run", "--target", "duckdb", "--dataset", "devices",
                           "--workload", "ols-spread"], capture_output=True, text=True, timeout=60,
                          cwd=Path(__file__).resolve().parent.parent,
                          env={"TICKBENCH_HOME": str(tmp_path), "PATH": "/usr/bin:/bin"})
    assert done.returncode == 2
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and "ols-spread needs" in lines[0] and "dataset devices" in lines[0], lines
