"""A query suite the user writes (``workloads.queries.user_suites``): the five-query example of
docs/user-suites.md, over a trades file imported as ``imp_trades``, answers alike on every engine, and
those answers are pandas' own on the same rows; a malformed file is one line naming it."""
from __future__ import annotations

import datetime as dt
import re
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from tests.trades_file import trades_table, write_trades_csv
from workloads.datasets.roles import Roles
from workloads.datasets.schema import Scale
from workloads.datasets.schema import Scale
from workloads.queries import load_suite
from workloads.queries.answers import fingerprint, normalise
from workloads.queries.suites import SuiteError
from workloads.queries.user_suites import fill_placeholders, pipeline
from workloads.queries.verify import SAME, verify

REPO = Path(__file__).resolve().parent.parent
ROWS, DAYS, SYMBOLS = 9_000, 3, 12
ROLES = Roles(time="ts", key="sym", price=("price",), size="qty")
LOCAL = ("duckdb", "pickle", "parquet", "feather", "hdf5", "clickhouse", "arcticdb")
SERVERS = ("postgres", "questdb", "druid", "mongodb", "dolphindb")
COLUMNS = {"volume": ("sym", "trades", "volume"), "vwap": ("sym", "vwap"), "last_price": ("price",),
           "venues": ("venue", "trades"), "minute_range": ("minute", "high", "low")}


def docs_suite(folder: Path) -> Path:
    """The example suite exactly as docs/user-suites.md shows it."""
    text = (REPO / "docs" / "user-suites.md").read_text(encoding="utf-8")
    path = folder / "trades-suite.toml"
    path.write_text(re.search(r"```toml\n(.*?)```", text, re.S).group(1), encoding="utf-8")
    return path


def import_trades(folder: Path) -> str:
    from workloads.datasets.tick_import import import_source
    path = write_trades_csv(folder / "trades.csv", trades_table(rows=ROWS, days=DAYS, symbols=SYMBOLS))
    import_source(path, "trades", ROLES)
    return "imp_trades"


def expected_answers(trades: pd.DataFrame | None = None) -> dict[str, str]:
    """Each query's answer worked out by pandas over the same trades (day 0, the most active symbol)."""
    trades = (trades_table(rows=ROWS, days=DAYS, symbols=SYMBOLS).to_pandas() if trades is None else trades.copy())
    trades["ts"] = trades["ts"].dt.tz_localize(None)
    day = trades[trades["ts"].dt.date == trades["ts"].dt.date.min()]
    key = trades["sym"].value_counts().index[0]
    one = day[day["sym"] == key]
    by_sym = day.groupby("sym")
    answers = {
        "volume": pd.DataFrame({"sym": by_sym.size().index, "trades": by_sym.size().values,
                                "volume": by_sym["qty"].sum().values}),
        "vwap": pd.DataFrame({"sym": by_sym.size().index,
                              "vwap": ((day["price"] * day["qty"]).groupby(day["sym"]).sum() / by_sym["qty"].sum()).values}),
        "last_price": one.sort_values("ts").tail(1)[["price"]],
        "venues": trades.groupby("venue").size().rename("trades").reset_index(),
        "minute_range": one.groupby(one["ts"].dt.floor("min"))["price"].agg(["max", "min"]).reset_index(),
    }
    return {qid: fingerprint(normalise(frame, COLUMNS[qid])) for qid, frame in answers.items()}


def local_targets(tmp_path: Path, kinds) -> list[tuple[str, str, dict]]:
    from workloads.targets.engines import default_config
    return [(kind, kind, default_config(kind, tmp_path / "layouts")) for kind in kinds]


def assert_same_and_right(verdicts, engines) -> None:
    expected = expected_answers()
    for (suite, query_id), row in verdicts.verdicts.items():
        answers = verdicts.answers[(suite, query_id)]
        wrong = {e: (row[e], answers[e].error) for e in engines if row[e] != SAME}
        assert not wrong, (query_id, wrong)
        assert answers[engines[0]].fingerprint == expected[query_id], (query_id, answers[engines[0]].preview)


# --- the file and its placeholders ---------------------------------------------------------------------
@pytest.fixture
def trades_info():
    import pyarrow as pa
    from workloads.datasets.roles import dataset_info, schema_of
    table = trades_table(rows=100, days=1, symbols=3)
    schema = schema_of(table.schema.set(0, pa.field("ts", pa.timestamp("ns"))), {})
    return dataset_info("imp_trades", "trades", schema, ROLES)


def test_placeholders_are_filled_in_each_dialect(tmp_path, trades_info):
    suite = load_suite(str(docs_suite(tmp_path)))
    assert [q.id for q in suite.queries] == ["volume", "vwap", "last_price", "venues", "minute_range"]
    day = dt.date(2024, 3, 4)
    text = suite.query("last_price").text

    def fill(dialect):
        return fill_placeholders(dialect, text(dialect), trades_info, day, "S000", "imp_trades")
    assert fill("postgres").startswith("SELECT price FROM {quotes} WHERE \"sym\" = 'S000' AND \"ts\" >= "
                                       "TIMESTAMP '2024-03-04 00:00:00' AND \"ts\" < TIMESTAMP '2024-03-05 00:00:00'")
    assert '__time >= TIMESTAMP \'2024-03-04 00:00:00\'' in fill("druid") and '"ts"' not in fill("druid")
    assert "toDateTime64('2024-03-05 00:00:00', 3, 'UTC')" in fill("clickhouse")
    assert "'2024-03-04T00:00:00.000000Z'" in fill("questdb")
    assert fill("dolphindb").startswith('select top 1 price from {imp_trades} where sym = "S000", '
                                        "ts >= 2024.03.04T00:00:00.000000000, ts < 2024.03.05T00:00:00.000000000")
    assert fill("pandas").startswith('SELECT price FROM "imp_trades" WHERE')
    stages = pipeline(fill("mongodb"))
    # extended JSON's $date: a BSON date, naive UTC as pymongo sends it
    assert stages[0] == {"$match": {"sym": "S000", "ts": {"$gte": dt.datetime(2024, 3, 4), "$lt": dt.datetime(2024, 3, 5)}}}
    # DuckDB's target fills {quotes} with str.format: the text's own braces are doubled, the table's kept
    assert fill_placeholders("duckdb", "SELECT {'a': 1} AS s FROM {table}", trades_info, day, "", "t") == \
        "SELECT {{'a': 1}} AS s FROM {quotes}"


@pytest.mark.parametrize("body, message", [
    ('[[query]]\nid = "a"\ncolumns = ["n"]\nsql = "SELECT count(*) FROM {tabel}"', "names {tabel}: the placeholders are"),
    ('[[query]]\nid = "a"\nsql = "SELECT 1"', "query a: missing columns"),
    ('[[query]]\nid = "a"\ncolumns = ["n"]', "query a: no text: give sql"),
    ('[[query]]\nid = "a"\ncolumns = ["n"]\nsql = "SELECT 1"\nday = "first"', "day must be day:K"),
    ('title = "none"', "no [[query]] tables"),
    ('[[query]\nid = "a"', "not valid TOML"),
])
def test_a_malformed_suite_file_is_one_line_naming_it(tmp_path, body, message):
    path = tmp_path / "mine.toml"
    path.write_text(body, encoding="utf-8")
    with pytest.raises(SuiteError, match=re.escape(message)) as caught:
        load_suite(str(path))
    assert str(caught.value).startswith("mine.toml: ") and "\n" not in str(caught.value)


# --- verify: the same answers everywhere, and pandas' own ----------------------------------------------
def test_the_docs_suite_answers_alike_on_the_local_engines(tmp_path):
    dataset = import_trades(tmp_path)
    suite = load_suite(str(docs_suite(tmp_path)))
    verdicts = verify(dataset, Scale(days=DAYS, rows_per_day=1, symbols=1), local_targets(tmp_path, LOCAL), [suite])
    assert_same_and_right(verdicts, list(LOCAL))
    notes = {e: verdicts.answers[(suite.name, "venues")][e].note for e in LOCAL}
    assert {e for e, note in notes.items() if "DuckDB ran the suite's SQL" in note} == \
        {"pickle", "parquet", "feather", "hdf5", "arcticdb"}


def test_a_wrong_answer_differs(tmp_path):
    """A dialect's text that answers another question (the day after) says "differs" there only."""
    dataset = import_trades(tmp_path)
    path = docs_suite(tmp_path)
    path.write_text(path.read_text().replace('dolphindb = """select count(*) as trades from {table} group by venue"""',
                                             "clickhouse = \"\"\"SELECT venue, count() AS trades FROM {table} "
                                             "WHERE sym != {key} GROUP BY venue\"\"\""))
    suite = load_suite(str(path))
    verdicts = verify(dataset, Scale(days=DAYS, rows_per_day=1, symbols=1),
                      local_targets(tmp_path, ("duckdb", "clickhouse", "parquet")), [suite])
    assert verdicts.verdicts[(suite.name, "venues")] == {"duckdb": SAME, "clickhouse": "differs", "parquet": SAME}
    assert not verdicts.agree


def test_cli_verify_and_the_query_suite_workload_take_a_suite_file(tmp_path, isolated_home):
    import_trades(tmp_path)
    suite = docs_suite(tmp_path)
    env = {"TICKBENCH_HOME": str(isolated_home), "PATH": "/usr/bin:/bin", "QT_QPA_PLATFORM": "offscreen",
           "COLUMNS": "200"}

    def tickbench(*args):
        return subprocess.run([sys.executable, "-m", "app", *args], capture_output=True, text=True, timeout=300,
                              env=env, cwd=REPO)
    result = tickbench("verify", "--dataset", "imp_trades", "--suite", str(suite), "--targets", "duckdb,parquet",
                       "--data-dir", str(tmp_path / "layouts"))
    assert result.returncode == 0, result.stdout + result.stderr
    assert "Every target answered every query alike (5 queries)" in result.stdout
    assert "parquet: read the day(s) its own way, then DuckDB ran the suite's SQL" in result.stdout
    missing = tickbench("verify", "--dataset", "imp_trades", "--targets", "duckdb")
    assert missing.returncode != 0 and "give one with --suite FILE.toml" in missing.stderr
    run = tickbench("run", "--dataset", "imp_trades", "--workload", "query-suite", "--param", f"suite={suite}",
                    "--param", "repetitions=2", "--days", str(DAYS), "--target", "duckdb", "--data-dir", str(tmp_path / "layouts"))
    assert run.returncode == 0 and "0 │" in run.stdout, run.stdout + run.stderr     # no errors
    show = tickbench("show", re.search(r"run (\S+): completed", run.stdout).group(1))
    for query_id, answer in expected_answers().items():     # each query ran twice, and answered as pandas does
        line = next(l for l in show.stdout.splitlines() if f"│ {query_id} " in l)
        assert re.search(r"│\s+2 │", line) and "│ ok " in line and answer[:8] in line, (line, answer[:8])


def test_a_suite_in_the_users_queries_folder_runs_by_name_as_the_window_offers_it(tmp_path, isolated_home):
    from workloads.operations import WORKLOADS
    from workloads.queries import suite_names
    from workloads.results.store import ResultsStore
    from workloads.run.runner import Runner
    from workloads.scenario import Scenario
    from workloads.targets.engines import default_config
    import_trades(tmp_path)
    folder = isolated_home / "queries"
    folder.mkdir()
    docs_suite(folder).rename(folder / "mytrades.toml")
    assert "mytrades" in suite_names()
    assert "mytrades" in next(p for p in WORKLOADS["query-suite"].params if p.name == "suite").choices
    scenario = Scenario(dataset="imp_trades", target="duckdb", workload="query-suite", scale=Scale(days=DAYS),
                        target_config=default_config("duckdb", tmp_path / "layouts"),
                        params={"suite": "mytrades", "repetitions": 1})
    store = ResultsStore(tmp_path / "results")
    result = Runner(scenario, store).run()
    assert result.status == "completed", result.message
    ops = store.ops(result.run_id)
    measured = ops[ops["kind"] == "measured"]
    assert sorted(measured["op"]) == sorted(COLUMNS) and measured["ok"].all()


# --- the server engines (flock /tmp/tickbench-heavy.lock) ---------------------------------------------
def server_config(engine: str, request) -> dict:
    if engine == "postgres":
        return request.getfixturevalue("pg_engine").config
    if engine == "questdb":
        return request.getfixturevalue("questdb_server").config
    if engine == "druid":
        return {**request.getfixturevalue("druid_engine").config, "drop_caches": False}
    if engine == "mongodb":
        return request.getfixturevalue("mongo_server").config
    server = request.getfixturevalue("ddb_server")
    return {"host": server.host, "port": server.port, "user": "admin", "password": "123456"}


@pytest.mark.timeout(900)     # a Druid run (its fixture's start, ingestion) can pass 300 s beside the suite
@pytest.mark.parametrize("engine", SERVERS)
def test_the_docs_suite_answers_alike_on_the_server_engines(engine, request, tmp_path):
    config = server_config(engine, request)
    dataset = import_trades(tmp_path)
    suite = load_suite(str(docs_suite(tmp_path)))
    targets = local_targets(tmp_path, ("duckdb",)) + [(engine, engine, config)]
    verdicts = verify(dataset, Scale(days=DAYS, rows_per_day=1, symbols=1), targets, [suite])
    assert_same_and_right(verdicts, ["duckdb", engine])
