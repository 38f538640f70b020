"""QuestDB target against a real QuestDB 9.3.4 (tests/questdb_fixture.py starts it once, on loopback,
through Tickbench's launcher): layout, reads equal to DuckDB's, ILP appends, /imp and /exp, report 003,
the suites' answers, errors a user can act on, and worker processes through the real runner."""
from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pandas as pd
import pytest

from tests.tick_paths import assert_tick_paths_answer_as_tickbench

import psycopg
import questdb

from tests.test_targets_files import (stored_order, as_plain, assert_phases, assert_same_rows, assert_string_dtypes,
                                      busiest_key, reference_bars, timed)
from tests.test_targets_postgres import (TICK_COLUMNS, assert_each_trade_has_its_prevailing_quote, last_quotes_by_arrival,
                                         tick_query, tied_last_seconds, generated_trades, generated_day_trades)
from workloads.datasets import get_dataset
from workloads.datasets.csv_files import csv_files
from workloads.datasets.csvread import read_csv
from workloads.datasets.schema import Scale, StringMode
from workloads.queries.answers import normalise
from workloads.local_engines.base import free_port
from workloads.targets import make_target
from workloads.targets.base import IMPORT_TABLE, TargetError
from workloads.targets.questdb.dialect import SEQ, TS, table_name
from workloads.queries.verify import SAME, verify

SCALE = Scale(days=2, rows_per_day=20_000, symbols=50)
LOOPBACK = "127.0.0.1"
CLIENTS = (psycopg, questdb)       # the questdb extra installs both: a missing one fails, never skips


@pytest.fixture(scope="module")
def config(questdb_server) -> dict:
    return {**questdb_server.config, "chunk_rows": 7_000}


@pytest.fixture(scope="module")
def layout(config):
    target = make_target("questdb", config)
    prepared = target.prepare("taq", SCALE, StringMode.ARROW)
    target.close()
    return prepared


@pytest.fixture
def target(config, layout):
    opened = make_target("questdb", config)
    opened.open(layout)
    yield opened
    opened.close()


# --- module, launcher, layout ------------------------------------------------------------------
def test_the_module_imports_neither_client_until_it_needs_one():
    code = ("import sys, workloads.targets.questdb as m; m.QuestDBTarget({'host': '127.0.0.1'}); "
            "print('questdb' in sys.modules, 'psycopg' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         cwd=Path(__file__).resolve().parents[1]).stdout.split()
    assert out == ["False", "False"]


def test_the_launcher_binds_loopback_only(questdb_server):
    from workloads.local_engines import questdb as launcher
    assert launcher.KIND == "questdb" and questdb_server.alive and questdb_server.config["local_engine"]
    assert set(questdb_server.ports) == {"http", "http_min", "pg", "ilp"}
    assert questdb_server.config["user"] == "admin" and questdb_server.config["port"] == questdb_server.ports["pg"]


def test_prepare_lays_out_a_wal_table_partitioned_by_day_with_an_arrival_ordinal(config, layout):
    target = make_target("questdb", config)
    table = table_name("taq", SCALE)
    assert layout.rows == SCALE.rows_per_day * SCALE.days and layout.footprint_bytes > 0
    assert layout.days == tuple(get_dataset("taq").trading_days(SCALE))
    found = target.sql_rows(f"SELECT walEnabled, designatedTimestamp, partitionBy FROM tables() "
                            f"WHERE table_name = '{table}'")[0]
    assert found == {"walEnabled": True, "designatedTimestamp": TS, "partitionBy": "DAY"}
    types = {r["column"]: r["type"] for r in target.sql_rows(f"SELECT \"column\", type FROM table_columns('{table}')")}
    assert types == {"symbol": "SYMBOL", "date": "DATE", "time": "TIMESTAMP", "bid": "DOUBLE", "ofr": "DOUBLE",
                     "bidsiz": "INT", "ofrsiz": "INT", "mode": "INT", "ex": "BYTE", "mmid": "SYMBOL",
                     SEQ: "LONG", TS: "TIMESTAMP"}
    parts = target.sql_rows(f"SELECT name, numRows FROM table_partitions('{table}')")
    assert [p["numRows"] for p in parts] == [SCALE.rows_per_day] * 2
    assert target.row_count(layout) == layout.rows
    described = target.describe()
    assert described["server_version"] == "9.3.4" and described["local_engine"] is True
    target.close()


def test_second_prepare_is_reused_without_generating(config, layout, monkeypatch):
    def must_not_generate(*args, **kwargs):
        raise AssertionError("a reused layout must not generate data")
    monkeypatch.setattr(type(get_dataset("taq")), "generate_day", must_not_generate)
    again = make_target("questdb", config).prepare("taq", SCALE, StringMode.CATEGORY)
    assert again.reused and again.rows == layout.rows and again.days == layout.days
    assert again.keys_sample == layout.keys_sample and again.strings is StringMode.CATEGORY


# --- reads -----------------------------------------------------------------------------------------
@pytest.mark.parametrize("strings", list(StringMode), ids=lambda m: m.value)
def test_read_day_gives_back_duckdbs_frame(strings, target, layout, duck, day_frames):
    duck_target, duck_layout = duck
    info = get_dataset("taq").info
    lay = replace(layout, strings=strings)
    for index, day in enumerate(lay.days):
        result, wall = timed(lambda: target.read_day(lay, day))
        assert result.rows == SCALE.rows_per_day and result.nbytes == SCALE.rows_per_day * 45
        assert_phases(result, wall, {"decode"})
        assert result.wire_bytes > 0
        assert_string_dtypes(result.frame, info, strings)
        duck_frame = duck_target.read_day(replace(duck_layout, strings=strings), day).frame
        assert_same_rows(order_free(result.frame, info), order_free(duck_frame, info), info)
        if strings is StringMode.OBJECT:
            # QuestDB's stored order: the generator's (time order, ties in arrival order), no sort asked
            assert_same_rows(result.frame, day_frames[index], info)


def order_free(frame: pd.DataFrame, info) -> pd.DataFrame:
    """Rows sorted by every column: two answers whose order is not part of them compare as sets."""
    plain = as_plain(frame, info)
    return plain.sort_values(list(plain.columns), kind="stable").reset_index(drop=True)


@pytest.fixture
def sent(target, monkeypatch):
    """The SQL texts the target sends to ``/exp`` (its reads, suite queries), in order."""
    texts: list[str] = []
    real = target._server.parquet

    def spy(sql: str) -> bytes:
        texts.append(sql)
        return real(sql)
    monkeypatch.setattr(target._server, "parquet", spy)
    return texts


def test_day_and_slice_reads_ask_no_order_yet_hold_the_datasets_rows(target, layout, day_frames, sent):
    info = get_dataset("taq").info
    lay = replace(layout, strings=StringMode.OBJECT)
    key = busiest_key(day_frames[1], info)
    day = target.read_day(lay, lay.days[1]).frame
    piece = target.read_slice(lay, lay.days[1], key).frame
    bars = target.minute_bars(lay, lay.days[1], key).frame
    assert len(sent) == 3 and not any("ORDER BY" in sql.upper() for sql in sent), sent
    assert_same_rows(order_free(day, info), order_free(day_frames[1], info), info)
    want = day_frames[1][day_frames[1][info.key_column].astype(object) == key]
    assert_same_rows(order_free(piece, info), order_free(want, info), info)
    assert bars["minute"].is_monotonic_increasing and len(bars) > 10        # bars: ordered by minute
    pd.testing.assert_frame_equal(bars, reference_bars(day_frames[1], info, key))


def test_t04_reads_only_its_days_partition_and_answers_as_before(target, layout, sent):
    from workloads.queries import load_suite
    query = next(q for q in load_suite("taq001").queries if q.id == "t04")
    got = target.run_query(layout, query, {"day": layout.days[0]}).frame
    plan = [next(iter(row.values())) for row in target.sql_rows(f"EXPLAIN {sent[-1]}")]
    scans = [line.strip() for line in plan if "scan on" in line]
    assert scans and all(line.startswith("Interval forward scan") for line in scans), plan
    assert any("2007-08-23T00:00:00" in line for line in plan), plan          # the one day's interval
    # the day's rows only, each counted once: the same per-hour figures as a plain scan of the day
    table = table_name("taq", SCALE)
    direct = pd.DataFrame(target.sql_rows(
        f"SELECT hour(time) AS hour, avg((ofr - bid) / (ofr + bid)) AS spread, count() AS n FROM "
        f"(SELECT time, bid, ofr FROM {table} WHERE date = '2007-08-23') WHERE bid > 0 AND ofr > bid "
        "GROUP BY hour ORDER BY hour"))
    got = got.sort_values("hour").reset_index(drop=True)
    assert list(got["hour"]) == list(direct["hour"]) and len(got) >= 6
    assert got["spread"].to_numpy() == pytest.approx(direct["spread"].to_numpy(), rel=1e-12)


def test_practitioner_paths_give_the_targets_rows(target, layout, day_frames):
    from workloads.practitioner import OPERATIONS, paths_for
    info = get_dataset("taq").info
    lay = replace(layout, strings=StringMode.OBJECT)
    paths = paths_for("questdb", target, lay)
    paths.open()
    try:
        ways = paths.paths()
        assert set(ways) == set(OPERATIONS) and all("parquet" in ways[op].how or op != "read_day" for op in ways)
        day, key = lay.days[0], busiest_key(day_frames[0], info)
        for op, ours in (("read_day", target.read_day(lay, day)), ("read_slice", target.read_slice(lay, day, key))):
            theirs = ways[op].call(day, key)
            assert len(theirs) == ours.rows > 0
            assert_same_rows(order_free(theirs.astype({c: "datetime64[ns]" for c in ("date", "time")}), info),
                             order_free(ours.frame, info), info)
        bars = ways["minute_bars"].call(day, key)
        pd.testing.assert_frame_equal(bars.astype({"minute": "datetime64[ns]"}),
                                      target.minute_bars(lay, day, key).frame)
        assert_tick_paths_answer_as_tickbench(target, lay, ways, day)
    finally:
        paths.close()


def test_read_slice_holds_only_that_key_and_day(target, layout, day_frames):
    info = get_dataset("taq").info
    lay = replace(layout, strings=StringMode.OBJECT)
    for key in (busiest_key(day_frames[0], info), layout.keys_sample[-1]):
        got = target.read_slice(lay, lay.days[0], key).frame
        want = stored_order(day_frames[0][day_frames[0][info.key_column].astype(object) == key], info)
        assert_same_rows(got, want, info)
    assert target.read_slice(lay, lay.days[0], "NO_SUCH_KEY").rows == 0
    assert target.read_slice(lay, lay.days[0], "x' OR '1'='1").rows == 0        # quoted, not injected


def test_minute_bars_match_an_independent_pandas_reference(target, layout, day_frames):
    info = get_dataset("taq").info
    for index in range(SCALE.days):
        key = busiest_key(day_frames[index], info)
        result = target.minute_bars(layout, layout.days[index], key)
        want = reference_bars(day_frames[index], info, key)
        assert result.rows == len(want) > 10
        pd.testing.assert_frame_equal(result.frame, want, check_dtype=True)


def test_probes_split_server_transfer_and_decode(target, layout):
    assert {"read_day", "minute_bars", "run_query"} <= target.probed_ops
    plain = target.read_day(layout, layout.days[0])
    with target.probe_mode():
        probe, wall = timed(lambda: target.read_day(layout, layout.days[0]))
    assert_phases(probe, wall, {"server", "transfer", "decode"})
    assert probe.phases["server"] > 0 and probe.extra["server_time"].startswith("/exec timings")
    pd.testing.assert_frame_equal(probe.frame, plain.frame)


def test_cold_cache_applies_nothing_and_says_so(target, layout):
    assert target.drop_cache(layout) == [] and target.drop_process_cache(layout) == []
    assert "none" in target.describe()["cold_cache"]


# --- writes, import, export, footprint ----------------------------------------------------------------
def test_append_adds_rows_to_the_layouts_append_table(target, layout, day_frames):
    target.clear_table(layout)
    batch = day_frames[0].iloc[:500]
    result, wall = timed(lambda: target.append(layout, batch))
    assert result.rows == 500 and result.nbytes == 500 * 45
    assert_phases(result, wall, {"decode", "transfer"})
    assert target.appended_rows(layout) == 500            # after the WAL applied it
    target.append(layout, batch, table="upload_test")
    assert target.row_count(layout, "upload_test") == 500
    assert target.row_count(layout) == layout.rows
    target.clear_table(layout)
    assert target.appended_rows(layout) == 0


def test_import_loads_every_csv_row_as_generated(target, layout):
    files = csv_files("taq", SCALE)
    target.clear_table(layout, IMPORT_TABLE)
    results = [target.import_csv(layout, f.path, f.day) for f in files]
    assert [r.rows for r in results] == [f.rows for f in files] == [SCALE.rows_per_day] * 2
    assert [r.wire_bytes for r in results] == [f.bytes for f in files]
    assert all(r.extra["queryable_s"] >= 0 and r.extra["rows_rejected"] == 0 for r in results)
    columns = tuple(get_dataset("taq").info.schema.names)
    imported = pd.DataFrame(target.sql_rows(f"SELECT {', '.join(columns)} FROM "
                                            f"\"{target.import_table(layout)}\""))
    generated = pd.concat([get_dataset("taq").day_frame(i, SCALE) for i in range(2)], ignore_index=True)
    assert normalise(imported[list(columns)], columns).equals(normalise(generated, columns))
    footprint = target.footprint_detail(layout, IMPORT_TABLE)
    assert footprint.bytes > 0 and footprint.replicas == 1
    target.clear_table(layout, IMPORT_TABLE)
    assert target.footprint_detail(layout, IMPORT_TABLE).bytes == 0


def test_export_writes_the_day_that_reads_back_equal(target, layout, tmp_path):
    path = tmp_path / "day.csv"
    result = target.export_csv(layout, layout.days[1], path)
    assert result.rows == SCALE.rows_per_day and result.wire_bytes == path.stat().st_size > 0
    columns = tuple(get_dataset("taq").info.schema.names)
    assert normalise(read_csv(path, "taq"), columns).equals(normalise(get_dataset("taq").day_frame(1, SCALE), columns))
    first = path.read_text().splitlines()[1].split(",")
    assert first[1] == '"2007-08-24"' and len(first[2].strip('"')) == 8 and len(first[8].strip('"')) == 1


def test_footprint_detail_is_the_engines_partition_size(target, layout):
    footprint = target.footprint_detail(layout)
    # the quotes' own partitions, as the reports counted them: the trades beside them are a table of their own
    trades = target.sql_rows(f"SELECT sum(diskSize) AS b FROM table_partitions('{table_name('taq', SCALE)}_trades')")
    assert 0 < footprint.bytes == target.footprint(layout) and trades[0]["b"] > 0 and footprint.columns == {}
    assert "table_partitions" in footprint.method


# --- report 003 -------------------------------------------------------------------------------------
def test_report_003_computations_equal_duckdbs(target, layout, duck):
    duck_target, duck_layout = duck
    pd.testing.assert_frame_equal(target.spread_by_minute(layout).frame,
                                  duck_target.spread_by_minute(duck_layout).frame, rtol=1e-9)
    ols = target.ols_spread(layout)
    pd.testing.assert_frame_equal(ols.frame, duck_target.ols_spread(duck_layout).frame, rtol=1e-6)
    target.clear_table(layout, "minute")
    bars = target.mapreduce_minute_bars(layout, layout.days[:1])
    want = duck_target.mapreduce_minute_bars(duck_layout, layout.days[:1]).frame["bars"].iloc[0]
    assert bars.frame["bars"].iloc[0] == want == target.row_count(layout, target.minute_table(layout)) > 0


# --- the tick pack: trades beside the quotes, the as-of join and the snapshot, against the generator -------
def test_trades_lie_beside_the_quotes_with_their_designated_timestamp_and_day_partitions(target, layout):
    side = f"{table_name('taq', SCALE)}_trades"
    found = target.sql_rows(f"SELECT walEnabled, designatedTimestamp, partitionBy FROM tables() WHERE table_name = '{side}'")
    assert found == [{"walEnabled": True, "designatedTimestamp": TS, "partitionBy": "DAY"}]    # so ASOF JOIN pairs them
    parts = target.sql_rows(f"SELECT numRows FROM table_partitions('{side}')")
    trades = generated_trades(SCALE)
    assert [p["numRows"] for p in parts] == [len(generated_day_trades(i, SCALE)) for i in range(SCALE.days)]
    assert target.row_count(layout, side) == len(trades)


def test_the_as_of_join_gives_each_trade_of_the_day_its_prevailing_quote(target, layout, day_frames, sent):
    for index in range(SCALE.days):
        answer = target.run_query(layout, tick_query("asof-join"), {"day": layout.days[index]}).frame
        assert_each_trade_has_its_prevailing_quote(answer, generated_day_trades(index, SCALE), day_frames[index])
    plan = [next(iter(row.values())).strip() for row in target.sql_rows(f"EXPLAIN {sent[-1]}")]
    assert "AsOf Join Fast" in plan, plan                   # the time-ordered merge of the two days' scans
    assert sum(line.startswith("Interval forward scan") for line in plan) == 2, plan


def test_the_snapshot_is_each_symbols_last_quote_by_arrival(target, layout, day_frames):
    for at in tied_last_seconds(day_frames[1]):
        answer = target.run_query(layout, tick_query("snapshot"), {"day": layout.days[1], "at": at}).frame
        want = last_quotes_by_arrival(day_frames[1], at)
        assert normalise(answer, TICK_COLUMNS).equals(normalise(want, TICK_COLUMNS)), at


# --- every suite query answers as DuckDB's ---------------------------------------------------------
@pytest.mark.parametrize("dataset, scale", [("taq", Scale(days=2, rows_per_day=20_000, symbols=30)),
                                            ("devices", Scale(days=2, rows_per_day=40_000, symbols=400))])
def test_every_suite_query_answers_as_duckdb(dataset, scale, tmp_path, config):
    verdicts = verify(dataset, scale, [
        ("duckdb", "duckdb", {"path": str(tmp_path / "d.duckdb")}),
        ("parquet", "parquet", {"root": str(tmp_path / "files")}),
        ("questdb", "questdb", config),
    ])
    assert verdicts.verdicts and all(row["questdb"] == row["parquet"] == SAME
                                     for row in verdicts.verdicts.values()), verdicts.verdicts


# --- a server that cannot be used -----------------------------------------------------------------
def test_a_refused_port_is_a_clear_error():
    target = make_target("questdb", {"host": LOOPBACK, "port": free_port(), "http_port": free_port(), "timeout": 2})
    with pytest.raises(TargetError, match=r"QuestDB at 127\.0\.0\.1:\d+: connection refused") as caught:
        target.prepare("taq", SCALE, StringMode.ARROW)
    assert caught.value.__cause__ is None and len(str(caught.value).splitlines()) == 1


def test_a_wrong_password_is_a_clear_error(config):
    target = make_target("questdb", {**config, "password": "wrong"})
    with pytest.raises(TargetError, match=r"authentication failed for user 'admin' \(wrong password"):
        target.prepare("taq", SCALE, StringMode.ARROW)
    with pytest.raises(TargetError, match="is not a number"):
        make_target("questdb", {"host": LOOPBACK, "port": "pg"})


# --- worker processes through the real runner -------------------------------------------------------
def test_runner_reads_with_two_users_and_probes(tmp_path, config, layout):
    from workloads.run.runner import Runner
    from workloads.scenario import Scenario
    from workloads.results.store import ResultsStore

    store = ResultsStore(tmp_path / "results")
    scenario = Scenario(dataset="taq", scale=SCALE, target="questdb", target_config=config,
                        workload="minute-bars", users=(1, 2), operations=3)
    result = Runner(scenario, store).run()
    assert result.status == "completed", result.message
    ops = store.ops(result.run_id, ("measured", "probe"))
    assert ops["ok"].all(), ops.loc[~ops["ok"], ["kind", "worker", "error"]].to_string()
    assert len(ops[ops["kind"] == "measured"]) == 3 * 3
    probes = ops[ops["kind"] == "probe"]
    assert len(probes) and probes["server_s"].notna().all() and probes["transfer_s"].notna().all()
    store.close()


def test_the_server_check_names_questdb_and_its_version_not_its_wire_protocols_postgresql(config):
    from workloads.local_engines.questdb import VERSION
    from workloads.targets.server_checks import check_server
    verdict = check_server("questdb", config, timeout=5)
    assert verdict.ok and verdict.server_version == f"QuestDB {VERSION}", verdict.message
    assert "PostgreSQL" not in verdict.message


def _http_connections(port: int) -> int:
    """This process's open TCP connections to ``port`` (psutil reads the kernel's table)."""
    import psutil
    return sum(1 for c in psutil.Process().net_connections(kind="tcp")
               if c.raddr and c.raddr.port == port and c.status == psutil.CONN_ESTABLISHED)


def test_a_users_reads_share_one_kept_http_connection(target, layout, config):
    # as a client library's session does: urllib's new connection per request let a server that
    # counts connections (/exp's limit) refuse a user who never held two at once
    assert _http_connections(config["http_port"]) == 0
    for day, key in [(layout.days[0], layout.keys_sample[0]), (layout.days[1], layout.keys_sample[1])] * 3:
        assert target.read_slice(layout, day, key).rows > 0
        assert _http_connections(config["http_port"]) == 1
    target.close()
    assert _http_connections(config["http_port"]) == 0


def test_more_users_than_cpus_read_through_exp_at_once(tmp_path, config, layout):
    # QuestDB's /exp serves as many connections as the server has CPUs unless told otherwise: the
    # local engine raises that limit, so four users on two cores all read
    from workloads.run.runner import Runner
    from workloads.scenario import Scenario
    from workloads.results.store import ResultsStore

    users = 2 * (os.cpu_count() or 1)
    # the server's own words first: four users' reads overlap only by chance on a small table
    server = make_target("questdb", config)
    try:
        said = server._server.exec_json("SHOW PARAMETERS")
    finally:
        server.close()
    names = [column["name"] for column in said["columns"]]
    limit = next(dict(zip(names, row)) for row in said["dataset"] if row[0] == "http.export.connection.limit")
    assert limit["value_source"] != "default" and int(limit["value"]) >= users, limit
    store = ResultsStore(tmp_path / "results")
    scenario = Scenario(dataset="taq", scale=SCALE, target="questdb", target_config=config,
                        workload="minute-bars", users=(users,), operations=3, probe_ops=0)
    result = Runner(scenario, store).run()
    assert result.status == "completed", result.message
    ops = store.ops(result.run_id, ("measured",))
    assert ops["ok"].all(), ops.loc[~ops["ok"], ["worker", "error"]].to_string()
    assert sorted(set(ops["worker"])) == list(range(users))
    store.close()


def test_a_refusal_over_the_export_limit_says_it_is_the_servers_and_what_to_raise():
    from workloads.targets.questdb.server import http_error_text

    said = ("exceeded connection limit [name=http_export_connections, numOfConnections=3, "
            "connectionLimit=2, fd=1346472248016]")     # QuestDB 9.3.4's words, as a run met them
    text = http_error_text(said)
    assert text.startswith(said) and "server's limit" in text and "http.export.connection.limit" in text
    assert http_error_text('{"error": "table does not exist [table=x]"}') == "table does not exist [table=x]"
