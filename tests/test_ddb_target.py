"""The DolphinDB target's every operation, through the real client, against the test server.

Answers are checked against the generated data computed with pandas, so a wrong script, a wrong
translation or a wrong decode fails. (Timings measured here are the test server's, not DolphinDB's.)
"""
from __future__ import annotations

import datetime as dt
import threading

import dolphindb as ddb
import numpy as np
import pandas as pd
import pytest

from tests.ddbserver.fixture import ddb_cluster, ddb_server  # noqa: F401
from workloads.datasets import get_dataset
from workloads.datasets.base import side_tables
from workloads.datasets.schema import Scale, StringMode
from workloads.targets.dolphindb import scripts
from workloads.targets.common.bars import minute_bars as pandas_bars
from workloads.targets.base import TargetError
from workloads.targets.dolphindb import DolphinDBTarget
from workloads.targets.dolphindb.frames import typed_frame, upload_hints
from workloads.targets.dolphindb.layout import key_bounds

pytestmark = pytest.mark.timeout(90)
TAQ = Scale(days=2, rows_per_day=20_000, symbols=50)


def make_target(server, **extra) -> DolphinDBTarget:
    config = {"host": server.host, "port": server.port, "user": "admin", "password": "123456",
              "chunk_rows": 7_000, "timeout": 3, "query_timeout": 20, **extra}
    return DolphinDBTarget(config)


@pytest.fixture(scope="module")
def taq(ddb_server):  # noqa: F811
    target = make_target(ddb_server)
    seen = []
    layout = target.prepare("taq", TAQ, StringMode.ARROW, lambda done, total, text: seen.append((done, total)))
    assert seen and seen[-1] == (40_000, 40_000)
    target.open(layout, 0)
    yield target, layout
    target.close()


@pytest.fixture
def faults(ddb_server):  # noqa: F811
    yield ddb_server.control
    ddb_server.control(reset=True)


def day_frame(index: int = 0) -> pd.DataFrame:
    return get_dataset("taq").day_frame(index, TAQ)


def server_rows(server, db: str, table: str, date_column: str = "date") -> int:
    s = ddb.session()
    s.connect(server.host, server.port, "admin", "123456")
    try:
        counts = s.run(f'select count(*) as n from loadTable("{db}", "{table}") group by date({date_column}) as day')
        return int(counts["n"].sum()) if len(counts) else 0
    finally:
        s.close()


# --- prepare ----------------------------------------------------------------------------------------
def test_prepare_lays_out_partitions_and_reports_the_cluster(taq, ddb_server):  # noqa: F811
    target, layout = taq
    assert layout.rows == 40_000 and layout.days == (dt.date(2007, 8, 23), dt.date(2007, 8, 24))
    assert layout.footprint_bytes > 40_000 * 20 and target.footprint(layout) == layout.footprint_bytes
    assert layout.location == "dfs://tickbench_taq_" + TAQ.key() + "/quotes"
    again = make_target(ddb_server).prepare("taq", TAQ, StringMode.OBJECT)
    assert again.reused and again.rows == 40_000 and again.strings is StringMode.OBJECT


def test_an_incomplete_day_is_loaded_again(taq, ddb_server):  # noqa: F811
    target, layout = taq
    names = target.names("taq", TAQ)
    extra = day_frame(1).head(123)
    target.append(layout, extra, table=names.table)           # day 2 now holds too many rows
    assert server_rows(ddb_server, names.db, names.table) == 40_123
    relaid = make_target(ddb_server).prepare("taq", TAQ, StringMode.ARROW)
    assert not relaid.reused and relaid.rows == 40_000


def test_a_reused_layout_counts_its_trades_without_drawing_them_and_an_incomplete_one_is_loaded_again(
        taq, ddb_server, monkeypatch):  # noqa: F811
    target, layout = taq
    names = target.names("taq", TAQ)
    dataset = type(get_dataset("taq"))
    real, drawn = dataset.trades_frame, []
    monkeypatch.setattr(dataset, "trades_frame", lambda self, *a, **k: drawn.append(1) or real(self, *a, **k))
    assert make_target(ddb_server).prepare("taq", TAQ, StringMode.ARROW).reused and not drawn
    whole = len(real(get_dataset("taq"), TAQ))
    extra = typed_frame(real(get_dataset("taq"), TAQ).head(5), upload_hints(side_tables(get_dataset("taq"))["trades"]))
    session = ddb.session()
    session.connect(ddb_server.host, ddb_server.port, "admin", "123456")
    try:
        session.run(scripts.insert_function(names, "trades"), extra)    # no longer the rows recorded
    finally:
        session.close()
    relaid = make_target(ddb_server).prepare("taq", TAQ, StringMode.ARROW)
    assert drawn == [1] and not relaid.reused
    assert server_rows(ddb_server, names.db, "trades") == whole


def test_key_bounds_cover_every_key():
    keys = ["MSFT", "A", "ZZZZ", "IBM", "BRK.A", "C"]
    bounds = key_bounds(keys, 4)
    assert bounds == sorted(bounds) and len(set(bounds)) == len(bounds) == 5
    assert all(bounds[0] <= k < bounds[-1] for k in keys)
    assert len(key_bounds(keys, 128)) == len(keys) + 1


# --- reads ---------------------------------------------------------------------------------------------
def test_read_day_returns_the_generated_day_and_a_probe_splits_it(taq):
    target, layout = taq
    result = target.read_day(layout, layout.days[0])
    expected = day_frame(0)
    pd.testing.assert_frame_equal(result.frame.reset_index(drop=True), expected, check_dtype=False)
    assert result.rows == 20_000 and result.node == f"127.0.0.1:{target.profile.nodes[0].port}"
    # the measured read is the user's session.run(query): no parts, logical bytes, nothing read raw
    assert result.phases == {} and result.nbytes == 20_000 * 45 and result.wire_bytes is None
    with target.probe_mode():
        probe = target.read_day(layout, layout.days[0])
    assert set(probe.phases) == {"server", "transfer", "decode"}
    assert all(v >= 0 for v in probe.phases.values()) and probe.phases["server"] > 0
    assert probe.extra["client_fetch_s"] >= probe.phases["decode"]
    # bytes on the wire: DolphinDB's encoding of 10 columns (45 bytes/row + the symbol bases)
    assert 20_000 * 45 <= probe.wire_bytes < 20_000 * 60 and probe.nbytes == 20_000 * 45


def test_read_slice_strings_come_as_the_client_makes_them(taq):
    target, layout = taq
    key = layout.keys_sample[0]
    result = target.read_slice(layout, layout.days[1], key)
    frame = day_frame(1)
    expected = frame[frame["symbol"] == key].reset_index(drop=True)
    assert result.rows == len(expected) > 0
    assert result.frame["bid"].tolist() == expected["bid"].tolist()
    # converting strings is no part of a user's session.run: a layout's string mode changes nothing
    for mode in (StringMode.OBJECT, StringMode.CATEGORY):
        layout_mode = type(layout)(**{**vars(layout), "strings": mode})
        got = target.read_slice(layout_mode, layout.days[1], key).frame
        assert got["symbol"].dtype == result.frame["symbol"].dtype
        assert got["symbol"].astype(str).tolist() == [key] * len(expected)
    assert target.describe()["strings"] == "as the dolphindb client returns them"


def test_minute_bars_match_pandas(taq):
    target, layout = taq
    key = layout.keys_sample[1]
    result = target.minute_bars(layout, layout.days[0], key)
    frame = day_frame(0)
    expected = pandas_bars(frame[frame["symbol"] == key], "time", "bid", "ofr")
    got = result.frame
    assert list(got.columns) == ["minute", "open", "high", "low", "close"]
    assert got["minute"].tolist() == expected["minute"].tolist()
    for col in ("open", "high", "low", "close"):
        np.testing.assert_allclose(got[col], expected[col])


# --- report 003 ---------------------------------------------------------------------------------------
def filtered_quotes() -> pd.DataFrame:
    frame = pd.concat([day_frame(0), day_frame(1)], ignore_index=True)
    seconds = (frame["time"] - frame["time"].dt.normalize()).dt.total_seconds()
    keep = ((seconds >= 9.5 * 3600) & (seconds <= 15 * 3600 + 59 * 60 + 59) & (frame["ofr"] > frame["bid"])
            & (frame["bid"] > 0) & (frame["ofr"] / frame["bid"] < 1.2))
    return frame[keep]


def test_spread_by_minute_matches_pandas(taq):
    target, layout = taq
    result = target.spread_by_minute(layout, layout.days)
    quotes = filtered_quotes()
    spread = (quotes["ofr"] - quotes["bid"]) / (quotes["ofr"] + quotes["bid"]) * 2
    expected = spread.groupby(quotes["time"].dt.floor("min")).mean()
    assert result.frame["minute"].tolist() == expected.index.tolist()
    np.testing.assert_allclose(result.frame["avgSpread"], expected.to_numpy())
    with target.probe_mode():
        assert target.spread_by_minute(layout, layout.days).phases["server"] > 0


def test_mapreduce_minute_bars_counts_symbol_minutes(taq):
    target, layout = taq
    frame = pd.concat([day_frame(0), day_frame(1)])
    groups = frame.groupby(["symbol", "date", frame["time"].dt.floor("min")]).ngroups
    assert target.mapreduce_minute_bars(layout, layout.days).frame["bars"].tolist() == [groups]
    assert target.mapreduce_minute_bars(layout, layout.days[:1]).frame["bars"].iloc[0] < groups


def test_ols_spread_matches_numpy(taq):
    target, layout = taq
    result = target.ols_spread(layout, layout.days).frame
    quotes = filtered_quotes()
    y = quotes["ofr"] / quotes["bid"] - 1
    x = (quotes["bidsiz"] + quotes["ofrsiz"]) * (quotes["ofr"] + quotes["bid"]) / 2
    beta = np.linalg.lstsq(np.column_stack([np.ones(len(x)), x]), y, rcond=None)[0]
    np.testing.assert_allclose(result["beta"], beta, rtol=1e-6)


# --- writes -------------------------------------------------------------------------------------------
def test_concurrent_appends_all_land(taq, ddb_server):  # noqa: F811
    _, layout = taq
    names = make_target(ddb_server).names("taq", TAQ)
    before = server_rows(ddb_server, names.db, names.append)
    batch = day_frame(0).head(2_500)
    errors, results = [], []

    def worker(index: int) -> None:
        target = make_target(ddb_server)
        try:
            target.open(layout, index)
            for _ in range(3):
                results.append(target.append(layout, batch))
        except Exception as exc:  # noqa: BLE001 - reported below
            errors.append(exc)
        finally:
            target.close()

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert not errors
    assert server_rows(ddb_server, names.db, names.append) == before + 9 * 2_500
    assert all(r.rows == 2_500 and r.nbytes == 2_500 * 45 and r.phases["transfer"] > 0 for r in results)


def test_upload_sweep_table_in_memory(taq, ddb_server):  # noqa: F811
    _, layout = taq
    target = make_target(ddb_server)
    target.open(layout, 7)
    try:
        category = day_frame(0).head(1_000)
        category["symbol"] = category["symbol"].astype("category")     # the client refuses category
        target.append(layout, category, table="upload")
        target.append(layout, day_frame(0).head(10), table="upload")
        (name,) = [n for n in ddb_server.stats()["shared"]["local8848"] if n.startswith("tickbench_upload_w7_")]
        s = ddb.session()
        s.connect(ddb_server.host, ddb_server.port, "admin", "123456")
        held = s.run(name)                  # this worker's own table, shared on its node
        s.close()
        assert len(held) == 1_010 and held["symbol"].tolist()[:3] == category["symbol"].astype(str).tolist()[:3]
    finally:
        target.close()
    assert name not in ddb_server.stats()["shared"]["local8848"]      # undefined, not just emptied


def test_the_append_table_is_emptied_before_a_step(taq, ddb_server):  # noqa: F811
    target, layout = taq
    names = target.names("taq", TAQ)
    target.append(layout, day_frame(0).head(500))
    assert server_rows(ddb_server, names.db, names.append) >= 500
    target.clear_table(layout)                                  # truncate: the schema stays
    assert server_rows(ddb_server, names.db, names.append) == 0
    assert target.append(layout, day_frame(0).head(7)).rows == 7
    assert server_rows(ddb_server, names.db, names.append) == 7


def test_drop_cache_and_describe(taq):
    target, layout = taq
    # a single node: no controller to list nodes, so pnodeRun reaches the node itself
    applied = target.drop_cache(layout)       # the OLAP cache engine is off: its flush refused, noted
    assert applied[0].startswith("note: pnodeRun(flushOLAPCache) failed (") and "not enabled" in applied[0]
    assert applied[1:] == ["pnodeRun(clearAllCache) on this single node"]
    info = target.describe()
    assert "tickbench-test-server" in info["server_version"]
    assert info["nodes"][0]["mode"] == "single" and "password" not in info["profile"]
    assert "single node" in info["nodes_note"]
    assert info["cold_cache"].startswith("before each operation and probe of a cold step")


# --- protocols --------------------------------------------------------------------------------------
@pytest.mark.parametrize("protocol,compress", [("ARROW", False), ("PICKLE", False), ("DDB", True)])
def test_protocols_give_the_same_day(taq, ddb_server, protocol, compress):  # noqa: F811
    _, layout = taq
    target = make_target(ddb_server, protocol=protocol, compress=compress)
    target.open(layout, 0)
    try:
        result = target.read_day(layout, layout.days[0])
        with target.probe_mode():
            probe = target.read_day(layout, layout.days[0])
    finally:
        target.close()
    expected = day_frame(0)
    assert result.rows == 20_000 and result.nbytes == 20_000 * 45
    for col in ("symbol", "bid", "bidsiz", "ex"):
        assert result.frame[col].astype(expected[col].dtype).tolist() == expected[col].tolist(), col
    if protocol == "ARROW":       # a plain to_pandas gives SECOND columns as times of day
        assert result.frame["time"].tolist() == expected["time"].dt.time.tolist()
    else:
        assert pd.to_datetime(result.frame["time"]).tolist() == expected["time"].tolist()
    # ARROW: a user's to_pandas is part of the call, as decode
    assert set(result.phases) == ({"decode"} if protocol == "ARROW" else set())
    assert set(probe.phases) == {"server", "transfer", "decode"} and probe.wire_bytes > 0
    if protocol == "PICKLE":      # the pickle stream cannot be framed raw: a DDB re-read stands in
        assert probe.extra["transfer_from"] == "DDB re-read (stand-in for PICKLE)"
    else:
        assert "transfer_from" not in probe.extra
    if compress:                  # the server compressed its reply: fewer bytes on the wire
        assert probe.wire_bytes < 20_000 * 45


# --- errors -----------------------------------------------------------------------------------------
def test_wrong_password_and_refused_port_are_clear(taq, ddb_server):  # noqa: F811
    _, layout = taq
    with pytest.raises(TargetError, match="password is incorrect"):
        make_target(ddb_server, password="nope").open(layout, 0)
    import socket
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        closed_port = probe.getsockname()[1]
    target = DolphinDBTarget({"host": "127.0.0.1", "port": closed_port, "timeout": 2})
    with pytest.raises(TargetError, match=f"127.0.0.1:{closed_port}.*(refused|cannot connect)"):
        target.open(layout, 0)
    with socket.socket() as mute:          # accepts (kernel backlog), never answers
        mute.bind(("127.0.0.1", 0))
        mute.listen(1)
        target = DolphinDBTarget({"host": "127.0.0.1", "port": mute.getsockname()[1], "timeout": 1})
        with pytest.raises(TargetError, match="timed out"):
            target.open(layout, 0)


def test_server_errors_and_dropped_connections_become_target_errors(taq, ddb_server, faults):  # noqa: F811
    _, layout = taq
    target = make_target(ddb_server, query_timeout=2)
    target.open(layout, 0)
    faults(error_match=r"select \* from loadTable", error_message="Disk /hdd2 is full")
    with pytest.raises(TargetError, match="answered: Disk /hdd2 is full"):
        target.read_day(layout, layout.days[0])
    faults(reset=True, delay=4, delay_match=r"^select \* from loadTable")
    with pytest.raises(TargetError, match="connection lost or reply timed out"):
        target.read_day(layout, layout.days[0])
    target.close()
    faults(reset=True, close_match=r"^select \* from loadTable")
    target.open(layout, 0)
    with pytest.raises(TargetError, match="connection lost"):
        target.read_day(layout, layout.days[0])
    faults(reset=True)
    assert target.read_day(layout, layout.days[0]).rows == 20_000     # reconnected by itself
    target.close()


def test_unsupported_computations_say_why(ddb_server):  # noqa: F811
    target = make_target(ddb_server)
    layout = target.prepare("devices", Scale(days=1, rows_per_day=2_000, symbols=20), StringMode.ARROW)
    target.open(layout, 0)
    with pytest.raises(TargetError, match="map-reduce"):
        target.mapreduce_minute_bars(layout)
    with pytest.raises(TargetError, match="quote sizes"):
        target.ols_spread(layout)
    target.close()


# --- the other datasets ----------------------------------------------------------------------------
@pytest.mark.parametrize("dataset,scale", [
    ("devices", Scale(days=2, rows_per_day=3_000, symbols=30)),
    ("level2", Scale(days=1, rows_per_day=3_000, symbols=20)),
    ("api45", Scale(days=1, rows_per_day=3_000, symbols=20)),
])
def test_other_datasets_round_trip(ddb_server, dataset, scale):  # noqa: F811
    ds = get_dataset(dataset)
    target = make_target(ddb_server)
    layout = target.prepare(dataset, scale, StringMode.ARROW)
    assert layout.rows == scale.rows_per_day * scale.days
    target.open(layout, 0)
    try:
        expected = ds.day_frame(len(layout.days) - 1, scale)
        day = layout.days[-1]
        result = target.read_day(layout, day)
        pd.testing.assert_frame_equal(result.frame.reset_index(drop=True), expected, check_dtype=False)
        key = layout.keys_sample[0]
        sliced = target.read_slice(layout, day, key)
        assert sliced.rows == int((expected[ds.info.key_column] == key).sum())
        bars = target.minute_bars(layout, day, key)
        assert bars.rows > 0 and list(bars.frame.columns) == ["minute", "open", "high", "low", "close"]
        assert target.append(layout, expected.head(100), table="upload").rows == 100
    finally:
        target.close()


def test_devices_partitions_by_day_and_ten_device_ranges(ddb_server):  # noqa: F811
    target = make_target(ddb_server)
    cols = target.columns("devices")
    assert cols.date_type == "TIMESTAMP"
    script = scripts.day_filter(cols, dt.date(2016, 11, 15))
    assert script == "time between 2016.11.15T00:00:00.000 : 2016.11.15T23:59:59.999"
    keys = get_dataset("devices").keys(Scale(symbols=3000))
    assert len(key_bounds(keys, 10)) == 11


# --- nodes ------------------------------------------------------------------------------------------
def test_round_robin_spreads_workers_over_data_nodes(ddb_cluster):  # noqa: F811
    profile = {"name": "fake", "user": "admin", "node_policy": "round_robin",
               "nodes": [{"host": "127.0.0.1", "port": p, "role": r}
                         for p, r in zip(ddb_cluster.ports, ["controller", "data", "data", "data"])]}
    target = DolphinDBTarget({"profile": profile, "password": "123456", "timeout": 3})
    layout = target.prepare("taq", Scale(days=1, rows_per_day=2_000, symbols=10), StringMode.ARROW)
    answered = []
    for worker in range(4):
        target.open(layout, worker)
        answered.append(target.read_slice(layout, layout.days[0], layout.keys_sample[0]).node)
        target.close()
    data = [f"127.0.0.1:{p}" for p in ddb_cluster.data_ports]
    assert answered == data + data[:1]


# --- through the runner, in worker processes -----------------------------------------------------------
@pytest.mark.slow
@pytest.mark.parametrize("workload,params,users", [
    ("read-day", {}, 2),
    ("concurrent-append", {"rows_per_user": 2_000, "batch_rows": 500}, 2),
])
def test_runner_workers_use_the_target(ddb_cluster, tmp_path, workload, params, users):  # noqa: F811
    from workloads.run.runner import Runner
    from workloads.scenario import Scenario
    from workloads.results.store import ResultsStore

    profile = {"name": "fake", "user": "admin", "node_policy": "round_robin",
               "nodes": [{"host": "127.0.0.1", "port": p, "role": r}
                         for p, r in zip(ddb_cluster.ports, ["controller", "data", "data", "data"])]}
    store = ResultsStore(tmp_path / "results")
    scenario = Scenario(dataset="taq", scale=Scale(days=2, rows_per_day=5_000, symbols=20), target="dolphindb",
                        target_config={"profile": profile, "password": "123456", "timeout": 5},
                        workload=workload, params=params, users=(users,), operations=2)
    result = Runner(scenario, store).run()
    assert result.status == "completed", result.message
    ops = store.ops(result.run_id)
    assert ops["ok"].all() and len(ops) > 0
    assert set(ops["node"]) == {f"127.0.0.1:{p}" for p in ddb_cluster.data_ports[:users]}
    if workload == "read-day":
        measured, probes = ops[ops["kind"] == "measured"], ops[ops["kind"] == "probe"]
        assert (measured["rows"] == 5_000).all() and measured["server_s"].isna().all()
        assert len(probes) == 2 * users and (probes["server_s"] > 0).all() and (probes["transfer_s"] > 0).all()
    store.close()
