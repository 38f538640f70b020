"""The hand-written client paths the practitioner benchmark times Tickbench against
(``workloads.practitioner``) answer the same question as Tickbench's operations: the same rows
(order-free where the operation promises no order), the same bars in minute order. A path that
read less (a column, a day, a key) would flatter the engine and fail here."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from workloads.datasets.schema import Scale, StringMode
from tests.tick_paths import assert_tick_paths_answer_as_tickbench
from workloads.practitioner import OPERATIONS, paths_for
from workloads.targets.engines import default_config
from workloads.targets import make_target

SCALE = Scale(days=2, rows_per_day=6_000, symbols=12)
EMBEDDED = ["duckdb", "pickle", "parquet", "feather", "clickhouse", "arcticdb", "hdf5"]


def plain(frame: pd.DataFrame) -> pd.DataFrame:
    """Values only: strings as Python objects, times as naive nanoseconds, the default index."""
    out = frame.reset_index(drop=True).copy()
    for name in out.columns:
        column = out[name]
        if isinstance(column.dtype, pd.DatetimeTZDtype):
            column = column.dt.tz_convert("UTC").dt.tz_localize(None)
        if pd.api.types.is_datetime64_any_dtype(column.dtype):
            column = column.astype("datetime64[ns]")
        elif pd.api.types.is_string_dtype(column.dtype) or isinstance(column.dtype, pd.CategoricalDtype):
            column = column.astype(object)
        out[name] = column
    return out


def any_order(frame: pd.DataFrame) -> pd.DataFrame:
    return frame.sort_values(list(frame.columns), kind="stable").reset_index(drop=True)


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory):
    return tmp_path_factory.mktemp("practitioner")


@pytest.mark.parametrize("kind", EMBEDDED)
def test_each_hand_written_path_answers_what_tickbench_answers(kind, data_dir):
    target = make_target(kind, default_config(kind, data_dir))
    layout = target.prepare("taq", SCALE, StringMode.ARROW)
    day, key = layout.days[1], layout.keys_sample[2]
    target.open(layout)
    try:
        ours = {"read_day": target.read_day(layout, day).frame,
                "read_slice": target.read_slice(layout, day, key).frame,
                "minute_bars": target.minute_bars(layout, day, key).frame}
    finally:
        target.close()          # embedded engines: one process (or one instance) per folder
    paths = paths_for(kind, target, layout)
    paths.open()
    try:
        by_path = {op: path.call(day, key) for op, path in paths.paths().items()}
    finally:
        paths.close()
    target.open(layout)
    paths.open()
    try:                        # the tick pack's as-of join and snapshot: the suite's answers
        assert_tick_paths_answer_as_tickbench(target, layout, paths.paths(), day)
    finally:
        paths.close()
        target.close()
    assert set(by_path) == set(OPERATIONS)
    assert len(ours["read_day"]) == SCALE.rows_per_day and 0 < len(ours["read_slice"]) < SCALE.rows_per_day
    for op in ("read_day", "read_slice"):
        got, want = plain(by_path[op]), plain(ours[op])
        assert list(got.columns) == list(want.columns), op
        pd.testing.assert_frame_equal(any_order(got), any_order(want), check_dtype=False, obj=op)
    bars_got, bars_want = plain(by_path["minute_bars"]), plain(ours["minute_bars"])
    assert bars_got["minute"].is_monotonic_increasing and len(bars_want) > 10
    for bars in (bars_got, bars_want):      # ArcticDB's index holds the date too; the times hold none
        bars["minute"] = bars["minute"] - bars["minute"].dt.normalize()
    pd.testing.assert_frame_equal(bars_got[list(bars_want.columns)], bars_want, check_dtype=False, obj="bars")


def test_a_runs_environment_says_how_its_path_compares_with_the_fastest_one():
    from workloads.practitioner.measured import path_check

    measured = {"command": "benchmarks/bench_practitioner.py --rounds 7", "date": "2026-11-24", "machine": "m",
                "load": "1.0"}
    record = {"engines": {"questdb": {
        "read_day": {"tickbench_ms": 300.0, "path_ms": 290.0, "ratio": 1.034, "interval": [1.01, 1.06],
                     "path": "/exp Parquet", **measured},
        "minute_bars": {"tickbench_ms": 30.0, "path_ms": 20.0, "ratio": 1.5, "path": "SAMPLE BY 1m", **measured}}}}
    check = path_check("questdb", record)
    day, bars = check["vs fastest path, read day"], check["vs fastest path, minute bars"]
    assert day.startswith("1.03x (95 % 1.01-1.06, paired)") and "within 10 %" in day and "/exp Parquet" in day
    assert bars.startswith("1.50x") and "NOT the fastest documented path" in bars
    assert "Tickbench 30.00 ms, by hand 20.00 ms" in bars
    assert check["vs fastest path, measured by"] == "benchmarks/bench_practitioner.py --rounds 7 (2026-11-24, load 1.0)"
    assert path_check("druid", record) == {}               # never measured: nothing claimed


# --- the paired ratio: each operation beside its own hand-written twin (more in test_practitioner_rounds) ---

def test_a_slow_round_slows_both_sides_and_leaves_the_paired_ratio_alone():
    from workloads.practitioner.paired import paired_ratio

    rng = np.random.default_rng(7)
    rounds = []
    for slowness in (1.0, 2.6, 0.7, 1.9, 1.1, 0.8):      # this machine's round-to-round spread
        sizes = rng.uniform(0.002, 0.040, size=5)        # slices of symbols of every size
        rounds.append((list(1.07 * slowness * sizes), list(slowness * sizes)))
    paired = paired_ratio(rounds)
    assert paired.ratio == pytest.approx(1.07)
    assert paired.low == pytest.approx(1.07) and paired.high == pytest.approx(1.07)
