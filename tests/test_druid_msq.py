"""Report 003's map-reduce through Druid's multi-stage-query engine (MSQ), on a real server: Druid
27.0.0 with its druid-multi-stage-query 27.0.0 extension (the newest the package registry serves),
started by Tickbench's launcher for this module (``druid_msq_engine``). The minute quotes MSQ
writes are checked against pandas over the generator's rows. The session's Druid 33 has no MSQ:
its verdict is checked in test_targets_druid (test_map_reduce_runs_on_msq_or_gets_the_servers_verdict)."""
from __future__ import annotations

import pandas as pd
import pytest

from workloads.datasets import get_dataset
from workloads.datasets.schema import Scale
from workloads.local_engines.druid import MSQ, MSQ_VERSION
from tests.druid_fixture import laid_out
from workloads.targets import make_target
from workloads.targets.common.quotes import quote_columns

SCALE = Scale(days=2, rows_per_day=5_000, symbols=20)     # ~6,900 minute quotes, 1,600 of several quotes


@pytest.fixture(scope="module")
def config(druid_msq_engine):
    return {**druid_msq_engine.config, "drop_caches": False}


@pytest.fixture(scope="module")
def laid(config):
    yield from laid_out(config, SCALE)


def minute_quotes(frames: list[pd.DataFrame]) -> pd.DataFrame:
    """Report 003 (b) computed here: per minute and key, the average bid and ask of every quote."""
    cols = quote_columns(get_dataset("taq").info)
    rows = pd.concat(frames, ignore_index=True)
    times = rows[cols.time]
    minute = (rows[cols.date] + (times - times.dt.normalize())).dt.floor("min")   # the day + the time of day
    bars = rows.assign(minute=minute).groupby(["minute", cols.key], as_index=False).agg(
        **{cols.bid: (cols.bid, "mean"), cols.ask: (cols.ask, "mean")})
    return bars.sort_values(["minute", cols.key], ignore_index=True)


def test_the_launcher_starts_druid_27_with_msq_and_the_target_asks_the_server(laid, config, day_frames):
    target, layout = laid
    status = target.http.json("GET", "/status")
    assert status["version"] == MSQ_VERSION
    assert {m.get("version") for m in status["modules"] if m.get("artifact") == MSQ} == {MSQ_VERSION}
    assert make_target("druid", config).has_msq() is True           # a fresh target: asked of the server
    assert target.row_count(layout) == layout.rows == sum(len(f) for f in day_frames)     # ingestion on 27


def test_map_reduce_writes_the_minute_quotes_through_msq(laid, day_frames):
    target, layout = laid
    cols = quote_columns(get_dataset("taq").info)
    want = minute_quotes(day_frames)
    minute = target.minute_table(layout)
    target.clear_table(layout, "minute")

    result = target.mapreduce_minute_bars(layout)

    assert result.extra["engine"] == "multi-stage query (/druid/v2/sql/task)"
    task = target.http.json("GET", f"/druid/indexer/v1/task/{result.extra['task']}", port=target.http.overlord_port)
    assert task["payload"]["type"] == "query_controller"            # the overlord ran it as MSQ's controller
    assert target.describe()["map_reduce"].startswith("multi-stage query")
    assert result.frame["bars"].iloc[0] == result.extra["bars"] == len(want) > 0
    got = pd.DataFrame(target.http.rows(
        f'SELECT TIMESTAMP_TO_MILLIS(__time) AS "minute", "{cols.key}", "{cols.bid}", "{cols.ask}" FROM "{minute}"'))
    got["minute"] = pd.to_datetime(got["minute"], unit="ms")
    got = got.sort_values(["minute", cols.key], ignore_index=True)
    assert len(got) == len(want)
    pd.testing.assert_frame_equal(got, want, check_exact=False, rtol=1e-12)
