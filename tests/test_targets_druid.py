"""Druid target against a real Apache Druid 33 (the local engine, started once per session):
checked against the generator and DuckDB."""
from __future__ import annotations

import os
import time
from dataclasses import replace

import pandas as pd
import pytest


from tests.test_targets_files import busiest_key, reference_bars
from workloads.datasets import get_dataset
from workloads.datasets.csv_files import csv_files
from workloads.datasets.csvread import read_csv
from workloads.datasets.schema import Scale, StringMode
from workloads.local_engines.base import free_port
from workloads.queries.answers import normalise
from tests.druid_fixture import laid_out
from tests.tick_paths import assert_tick_paths_answer_as_tickbench
from workloads.targets import make_target
from workloads.targets.base import IMPORT_TABLE, NotSupported, TargetError

SCALE = Scale(days=2, rows_per_day=20_000, symbols=50)


@pytest.fixture(scope="module")
def config(druid_engine):
    return {**druid_engine.config, "drop_caches": False}


@pytest.fixture(scope="module")
def laid(config):
    yield from laid_out(config, SCALE)


def test_prepare_lays_out_day_segments_and_a_second_prepare_reuses(laid, config, monkeypatch):
    target, layout = laid
    assert layout.rows == 40_000 and layout.footprint_bytes > 0
    segments = target.http.rows("SELECT \"start\", num_rows FROM sys.segments WHERE datasource = ? AND is_active = 1",
                                [{"type": "VARCHAR", "value": target.table(layout)}])
    assert sorted(s["start"][:10] for s in segments) == [d.isoformat() for d in layout.days]    # DAY segments
    trades = target.table(layout) + "_trades"             # TAQ's trades laid out as the quotes, _seq by day
    per_day = target.http.rows(f"SELECT TIME_FLOOR(__time, 'P1D') AS d, COUNT(*) AS n, MIN(\"_seq\") AS lo, "
                               f"MAX(\"_seq\") AS hi FROM \"{trades}\" GROUP BY 1")
    frame = get_dataset("taq").trades_frame(SCALE)
    assert sorted((r["d"][:10], int(r["n"]), int(r["lo"]), int(r["hi"])) for r in per_day) == \
        [(d.isoformat(), n, 0, n - 1) for d, n in frame.groupby(frame["date"].dt.date).size().items()]
    monkeypatch.setattr(type(get_dataset("taq")), "generate_day",
                        lambda *a, **k: (_ for _ in ()).throw(AssertionError("reuse must not generate")))
    again = make_target("druid", config).prepare("taq", SCALE, StringMode.OBJECT)
    assert again.reused and again.days == layout.days and again.keys_sample == layout.keys_sample


def order_free(frame: pd.DataFrame) -> pd.DataFrame:
    """Rows sorted by every column (strings as Python objects): answers whose order is not part of
    them compare as sets of rows."""
    plain = frame.reset_index(drop=True).copy()
    for name in plain.columns:
        if not (pd.api.types.is_numeric_dtype(plain[name]) or pd.api.types.is_datetime64_any_dtype(plain[name])):
            plain[name] = plain[name].astype(object)
    return plain.sort_values(list(plain.columns), kind="stable").reset_index(drop=True)


def test_reads_equal_duckdbs_and_probes_split_by_the_clock(laid, duck):
    target, layout = laid
    duck_target, duck_layout = duck
    for strings in StringMode:
        got = target.read_day(replace(layout, strings=strings), layout.days[1])
        assert set(got.phases) == {"decode"} and got.wire_bytes > 0
        want = duck_target.read_day(replace(duck_layout, strings=strings), layout.days[1]).frame
        pd.testing.assert_frame_equal(got.frame.dtypes.to_frame(), want.dtypes.to_frame())
        pd.testing.assert_frame_equal(order_free(got.frame), order_free(want))
    with target.probe_mode():
        probe = target.read_day(layout, layout.days[0])
    assert set(probe.phases) == {"server", "transfer", "decode"} and probe.extra["server_time"]
    key = layout.keys_sample[0]
    pd.testing.assert_frame_equal(order_free(target.read_slice(layout, layout.days[0], key).frame),
                                  order_free(duck_target.read_slice(duck_layout, layout.days[0], key).frame))
    assert target.read_slice(layout, layout.days[0], "x' OR '1'='1").rows == 0     # bound, not formatted


def test_day_and_slice_reads_ask_no_order_yet_hold_the_datasets_rows(laid, monkeypatch):
    target, layout = laid
    info = get_dataset("taq").info
    sent: list[str] = []
    real = target.http.sql

    def spy(query, *args, **kwargs):
        sent.append(query)
        return real(query, *args, **kwargs)
    monkeypatch.setattr(target.http, "sql", spy)
    frame = get_dataset("taq").day_frame(1, SCALE, StringMode.OBJECT)
    key = busiest_key(frame, info)
    lay = replace(layout, strings=StringMode.OBJECT)
    day = target.read_day(lay, layout.days[1]).frame
    piece = target.read_slice(lay, layout.days[1], key).frame
    bars = target.minute_bars(lay, layout.days[1], key).frame
    assert len(sent) == 3 and not any("ORDER BY" in q.upper() for q in sent[:2]) and "_seq" not in sent[0], sent
    assert sent[2].upper().endswith("ORDER BY 1")                       # bars: ordered by minute, as asked
    pd.testing.assert_frame_equal(order_free(day), order_free(frame))
    pd.testing.assert_frame_equal(order_free(piece), order_free(frame[frame[info.key_column] == key]))
    assert bars["minute"].is_monotonic_increasing
    pd.testing.assert_frame_equal(bars, reference_bars(frame, info, key))


def test_practitioner_paths_give_the_targets_rows(laid):
    from workloads.practitioner import OPERATIONS, paths_for
    target, layout = laid
    info = get_dataset("taq").info
    day = layout.days[0]
    key = busiest_key(get_dataset("taq").day_frame(0, SCALE, StringMode.OBJECT), info)
    paths = paths_for("druid", target, layout)
    paths.open()
    try:
        ways = paths.paths()
        assert set(ways) == set(OPERATIONS) - {"asof_join"} and "resultFormat=csv" in ways["read_day"].how
        for op, ours in (("read_day", target.read_day(layout, day)), ("read_slice", target.read_slice(layout, day, key))):
            theirs = ways[op].call(day, key)
            stamp = theirs.pop("__time").astype("datetime64[ns]")
            theirs.insert(1, "date", stamp.dt.normalize())
            theirs.insert(2, "time", stamp - stamp.dt.normalize() + pd.Timestamp(0))
            assert len(theirs) == ours.rows > 0
            pd.testing.assert_frame_equal(order_free(theirs[list(ours.frame.columns)]), order_free(ours.frame),
                                          check_dtype=False)
        bars = ways["minute_bars"].call(day, key)
        pd.testing.assert_frame_equal(bars.astype({"minute": "datetime64[ns]"}), target.minute_bars(layout, day, key).frame)
        assert_tick_paths_answer_as_tickbench(target, layout, ways, day)
    finally:
        paths.close()


def test_minute_bars_and_report_003_equal_the_references(laid, duck):
    target, layout = laid
    duck_target, duck_layout = duck
    info = get_dataset("taq").info
    frame = get_dataset("taq").day_frame(0, SCALE, StringMode.OBJECT)
    key = busiest_key(frame, info)
    pd.testing.assert_frame_equal(target.minute_bars(layout, layout.days[0], key).frame,
                                  reference_bars(frame, info, key))
    pd.testing.assert_frame_equal(target.spread_by_minute(layout).frame, duck_target.spread_by_minute(duck_layout).frame,
                                  rtol=1e-9)
    pd.testing.assert_frame_equal(target.ols_spread(layout).frame, duck_target.ols_spread(duck_layout).frame, rtol=1e-6)


# --- report 003's map-reduce: multi-stage queries when the server has them -------------------------------
MSQ_MODULE = {"name": "org.apache.druid.msq.guice.MSQSqlModule", "artifact": "druid-multi-stage-query",
              "version": "33.0.0"}


def test_whether_a_server_runs_multi_stage_queries_is_asked_of_it(laid):
    """The local engine loads the MSQ extension exactly when its jar could be fetched, and the target
    reads the answer from the server's own /status (its loaded modules)."""
    from workloads.local_engines.druid import msq_extension
    from workloads.targets.druid import msq_loaded
    target, _ = laid
    status = target.http.json("GET", "/status")
    extensions, why = msq_extension()
    assert target.has_msq() == msq_loaded(status) == (extensions is not None), why
    others = [m for m in status.get("modules") or [] if m.get("artifact") != "druid-multi-stage-query"]
    assert not msq_loaded({**status, "modules": others})
    assert msq_loaded({**status, "modules": others + [MSQ_MODULE]})
    assert not msq_loaded({"version": "33.0.0"}) and not msq_loaded(None)


def test_map_reduce_runs_on_msq_or_gets_the_servers_verdict(laid, duck):
    from workloads.targets.druid import NO_MSQ
    target, layout = laid
    duck_target, duck_layout = duck
    target.clear_table(layout, "minute")
    if target.has_msq():
        result = target.mapreduce_minute_bars(layout, layout.days[:1])
        want = duck_target.mapreduce_minute_bars(duck_layout, layout.days[:1]).frame["bars"].iloc[0]
        assert result.frame["bars"].iloc[0] == want == target.count(target.minute_table(layout)) > 0
        assert target.describe()["map_reduce"].startswith("multi-stage query")
    else:
        with pytest.raises(NotSupported) as refused:
            target.mapreduce_minute_bars(layout, layout.days[:1])
        assert str(refused.value) == NO_MSQ and str(refused.value).startswith(
            "this server has no multi-stage-query extension") and "\n" not in NO_MSQ
        assert target.describe()["map_reduce"] == NO_MSQ


def test_the_verdict_is_recorded_and_the_run_goes_on(tmp_path, laid, config):
    from workloads.run.records import UNSUPPORTED
    from workloads.run.runner import Runner
    from workloads.scenario import Scenario
    from workloads.results.store import ResultsStore
    target, _ = laid
    store = ResultsStore(tmp_path / "results")
    scenario = Scenario(dataset="taq", scale=SCALE, target="druid", target_config=config,
                        workload="mapreduce-minute-bars", users=(1,), operations=2)
    result = Runner(scenario, store).run()
    ops = store.ops(result.run_id)
    # a run whose every operation the server refused measured nothing: "not supported", its verdict kept
    assert result.status == ("completed" if target.has_msq() else "not supported"), result.message
    if target.has_msq():
        assert ops["ok"].all() and (ops["kind"] != UNSUPPORTED).all()
    else:
        refused = ops[ops["kind"] == UNSUPPORTED]
        assert len(refused) and refused["error"].str.contains("this server has no multi-stage-query extension").all()
    store.close()


def test_the_launcher_loads_msq_only_from_a_folder_that_holds_it(tmp_path):
    from workloads.local_engines.druid import MSQ, _write_conf
    ports = {"zookeeper": 1, "derby": 2, "coordinator": 3, "historical": 4, "indexer": 5, "broker": 6}
    with_msq = _write_conf(tmp_path / "a", ports, tmp_path / "ext")
    common = (with_msq / "_common" / "common.runtime.properties").read_text()
    assert f'druid.extensions.loadList=["{MSQ}"]' in common and f"druid.extensions.directory={tmp_path / 'ext'}" in common
    assert "druid.worker.capacity=2" in (with_msq / "indexer" / "runtime.properties").read_text()   # controller + worker
    without = _write_conf(tmp_path / "b", ports)
    assert "druid.extensions.loadList=[]" in (without / "_common" / "common.runtime.properties").read_text()
    assert "druid.worker.capacity=1" in (without / "indexer" / "runtime.properties").read_text()


def test_append_is_an_ingestion_task_and_clear_empties(laid):
    target, layout = laid
    target.clear_table(layout)
    batch = get_dataset("taq").day_frame(0, SCALE).iloc[:300]
    result = target.append(layout, batch)
    assert result.rows == 300 and result.extra["queryable_s"] >= 0 and set(result.phases) == {"decode", "query"}
    assert target.appended_rows(layout) == 300
    # a batch whose inline spec is over ZooKeeper's 512 KiB node limit: the local engine's tasks go by HTTP
    big = get_dataset("taq").day_frame(1, SCALE).iloc[:12_000]
    assert target.append(layout, big).rows == 12_000 and target.appended_rows(layout) == 12_300
    target.clear_table(layout)
    assert target.appended_rows(layout) == 0


def test_import_export_round_trip_and_footprint(laid, tmp_path):
    target, layout = laid
    columns = tuple(get_dataset("taq").info.schema.names)
    target.clear_table(layout, IMPORT_TABLE)
    files = csv_files("taq", SCALE)[:1]
    result = target.import_csv(layout, files[0].path, files[0].day)
    assert result.rows == SCALE.rows_per_day and result.wire_bytes == files[0].bytes
    assert target.footprint_detail(layout, IMPORT_TABLE).bytes > 0
    path = tmp_path / "day.csv"
    exported = target.export_csv(layout, layout.days[1], path)
    assert exported.rows == SCALE.rows_per_day and exported.wire_bytes == path.stat().st_size
    assert normalise(read_csv(path, "taq"), columns).equals(normalise(get_dataset("taq").day_frame(1, SCALE), columns))
    footprint = target.footprint_detail(layout)
    assert footprint.bytes == target.footprint(layout) > 0 and footprint.runtime_bytes > 0    # the trades not counted
    assert set(columns) - {"date", "time"} | {"__time", "_seq"} == set(footprint.columns)


def test_cold_cache_and_describe(laid):
    target, layout = laid
    from workloads.targets.common.cache import resident_bytes_of
    target.read_day(layout, layout.days[0])
    applied = target.drop_cache(layout)
    assert any("posix_fadvise" in a for a in applied) and target.drop_process_cache(layout) == []
    # the historical maps its segment files: the pages it maps stay, so no cold round calls a read cold
    from workloads.run.cold import verdict_of
    left = resident_bytes_of(target.data_files(layout))
    assert target.data_files(layout) and left > 0
    assert verdict_of(applied, left).endswith("still in the OS cache after the clear")
    described = target.describe()
    assert described["server_version"] == "33.0.0" and described["local_engine"] is True


def test_a_refused_port_is_a_clear_error():
    target = make_target("druid", {"host": "127.0.0.1", "port": free_port(), "timeout": 2})
    started = time.monotonic()
    with pytest.raises(TargetError, match=r"Druid at 127\.0\.0\.1:\d+: connection refused"):
        target.prepare("taq", SCALE, StringMode.ARROW)
    assert time.monotonic() - started < 5


def test_a_wrong_password_is_refused_and_the_right_one_passes(laid, config):
    """Druid's basic-security extension is not obtainable here: an authenticating gateway in front of
    the real broker and coordinator (tests/auth_gateways.py) answers 401 as the extension does."""
    from tests.auth_gateways import BasicAuthGateway
    from workloads.targets.server_checks import check_server

    _, layout = laid
    broker = BasicAuthGateway(config["port"], "quant", "s3cret")
    coordinator = BasicAuthGateway(config["coordinator_port"], "quant", "s3cret")
    try:
        gated = {**config, "port": broker.port, "coordinator_port": coordinator.port, "user": "quant"}
        with pytest.raises(TargetError, match=r"Druid at 127\.0\.0\.1:\d+: authentication failed for user "
                                              r"'quant' \(wrong password, or no such user\)"):
            make_target("druid", {**gated, "password": "wrong"}).prepare("taq", SCALE, StringMode.ARROW)
        verdict = check_server("druid", {**gated, "password": "wrong"}, timeout=5)
        assert verdict.kind == "wrong_password" and not verdict.ok, verdict
        assert check_server("druid", {**gated, "password": "s3cret"}, timeout=5).ok
        target = make_target("druid", {**gated, "password": "s3cret"})
        again = target.prepare("taq", SCALE, StringMode.ARROW)
        target.open(again)
        try:
            assert again.reused and target.read_day(again, again.days[0]).rows == SCALE.rows_per_day
        finally:
            target.close()
    finally:
        broker.close()
        coordinator.close()


def test_runner_with_two_workers_probes_the_server(tmp_path, laid, config):
    from workloads.run.runner import Runner
    from workloads.scenario import Scenario
    from workloads.results.store import ResultsStore
    store = ResultsStore(tmp_path / "results")
    scenario = Scenario(dataset="taq", scale=SCALE, target="druid", target_config=config, workload="minute-bars",
                        users=(1, 2), operations=2)
    result = Runner(scenario, store).run()
    assert result.status == "completed", result.message
    ops = store.ops(result.run_id, ("measured", "probe"))
    assert ops["ok"].all() and len(ops[ops["kind"] == "measured"]) == 2 * 3
    probes = ops[ops["kind"] == "probe"]
    assert len(probes) and probes["server_s"].notna().all()
    store.close()


# --- reports 001 and 004: the suites' Druid texts (resources/queries/*.druid.toml) ------------------
# Every query of taq001, taq004, tick and devices004 has a Druid text but tick's as-of join and rolling
# mid, refused with their reason (tick.druid.toml: a join on the symbol with the time compared after it
# answers them, and grows with the square of a symbol's quotes).
DRUID_NOT_SUPPORTED = {("tick", "asof-join"), ("tick", "rolling-mid")}


def _verify_against_duckdb(dataset, scale, names, config, tmp_path):
    from workloads.queries import load_suite
    from workloads.queries.verify import NOT_SUPPORTED, SAME, verify
    verdicts = verify(dataset, scale, [("duckdb", "duckdb", {"path": str(tmp_path / "d.duckdb")}),
                                       ("druid", "druid", config)], [load_suite(n) for n in names])
    assert len(verdicts.queries) == sum(len(load_suite(n).queries) for n in names)
    wrong = {key: (row["druid"], verdicts.answers[key]["druid"].error or verdicts.answers[key]["druid"].preview)
             for key, row in verdicts.verdicts.items()
             if row["druid"] != (NOT_SUPPORTED if key in DRUID_NOT_SUPPORTED else SAME)}
    assert not wrong, wrong


def test_taq_suites_answer_as_duckdb(laid, config, tmp_path):
    _verify_against_duckdb("taq", SCALE, ("taq001", "taq004", "tick"), config, tmp_path)  # SCALE: laid out already


def test_the_tick_questions_druid_refuses_are_refused_before_a_run_with_the_reason(tmp_path, config):
    from workloads.results.store import ResultsStore
    from workloads.run.runner import Runner
    from workloads.scenario import Scenario
    store = ResultsStore(tmp_path / "results")
    for workload, why in (("asof-join", "no ASOF JOIN or LATERAL join"), ("rolling-mid", "take RANGE only between")):
        scenario = Scenario(dataset="taq", scale=SCALE, target="druid", target_config=config, workload=workload,
                            users=(1,), operations=1)
        with pytest.raises(ValueError, match=rf"^query {workload}: not supported by Apache Druid: Druid SQL .*{why}"):
            Runner(scenario, store).run()
    assert not store.run_ids()                               # nothing started, nothing recorded
    store.close()


def test_the_tick_card_on_druid_says_why_it_cannot_ask_the_as_of_join_and_runs_the_parquet_side(tmp_path, config):
    from workloads.reproduce.run_report import REFUSED, planned_runs, run_planned
    from workloads.results.store import ResultsStore
    store = ResultsStore(tmp_path / "results")
    planned = planned_runs("tick", "tiny", "druid", config, tmp_path / "data", experiments=["asof-join"])
    results = run_planned(store, planned)
    assert [r.status for r in results] == [REFUSED, "completed"], [r.message for r in results]
    assert results[0].message.startswith("asof-join · database, as-of join: query asof-join: not supported by "
                                         "Apache Druid: Druid SQL has no ASOF JOIN") and "\n" not in results[0].message
    assert store.run_ids() == [results[1].run_id]                # the Parquet side ran; nothing stored for Druid
    store.close()


def test_devices_suite_answers_as_duckdb(config, tmp_path):
    _verify_against_duckdb("devices", Scale(days=2, rows_per_day=40_000, symbols=400), ("devices004",), config,
                           tmp_path)


def test_a_failed_extension_fetch_is_remembered_with_mavens_reason(tmp_path, monkeypatch):
    from workloads.local_engines import druid as launcher
    monkeypatch.setattr(launcher, "cache_dir", lambda: tmp_path)
    marker = tmp_path / f"druid-{launcher.VERSION}" / "msq-unavailable.txt"
    marker.parent.mkdir(parents=True)
    marker.write_text("Maven could not fetch it: Could not find artifact\n")
    monkeypatch.setattr(launcher.shutil, "which", lambda name: None)     # a retry would say "Maven is needed"
    assert launcher.msq_extension() == (None, "Maven could not fetch it: Could not find artifact")
    old = time.time() - launcher.MSQ_RETRY_S - 60
    os.utime(marker, (old, old))                                       # a day later it is tried again
    assert launcher.msq_extension() == (None, "Maven (mvn) is needed to fetch the multi-stage-query extension")
    (tmp_path / f"druid-{launcher.VERSION}" / "extensions" / launcher.MSQ).mkdir(parents=True)
    (tmp_path / f"druid-{launcher.VERSION}" / "extensions" / launcher.MSQ / "druid-multi-stage-query-33.0.0.jar").write_bytes(b"")
    assert launcher.msq_extension() == (tmp_path / f"druid-{launcher.VERSION}" / "extensions", "")
