"""The tick pack on a desk's own quotes and trades, paired, on the server engines (PostgreSQL, QuestDB
and Druid started by fixtures, the MongoDB stand-in) and under sessions whose zone is not UTC (a
PostgreSQL database and a machine in New York): every answer pandas' own over the files, each
question a server cannot ask refused with its reason."""
from __future__ import annotations

import time

import pytest

from tests.desk_files import write_desk_files
from tests.postgres_fixture import database_in_zone
from tests.test_tick_pair import LOCAL, _pair, assert_right, tick_targets
from tests.test_user_suites import server_config
from workloads.datasets.schema import Scale
from workloads.queries import load_suite
from workloads.queries.verify import NOT_SUPPORTED, verify

# Druid SQL has neither ASOF JOIN nor a RANGE frame of seconds (tick.druid.toml); the MongoDB stand-in
# lacks $setWindowFields (MongoDB 5.0+ runs the rolling mid)
REFUSED = {"druid": {"asof-join", "rolling-mid"}, "mongodb": {"rolling-mid"}}
ZONE = "America/New_York"


@pytest.fixture
def desk(tmp_path):
    # fewer quotes than the local test: the MongoDB stand-in's $lookup scans every quote per trade
    return write_desk_files(tmp_path, quotes_a_day=1_500)


@pytest.mark.timeout(900)     # a Druid run (its fixture's start, ingestion) can pass 300 s beside the suite
@pytest.mark.parametrize("engine", ["postgres", "questdb", "druid", "mongodb"])
def test_the_server_engines_answer_the_pair_as_pandas(engine, desk, tmp_path, request):
    config = server_config(engine, request)
    dataset = _pair(desk)
    targets = tick_targets(tmp_path, ("duckdb",)) + [(engine, engine, config)]
    verdicts = verify(dataset, Scale(days=2), targets, [load_suite("tick")])
    refused = {q for (_, q), row in verdicts.verdicts.items() if row[engine] == NOT_SUPPORTED}
    assert refused == REFUSED.get(engine, set()), {q: verdicts.answers[("tick", q)][engine].error for q in refused}
    kept = type(verdicts)(verdicts.targets, [k for k in verdicts.queries if k[1] not in refused],
                          verdicts.answers, {k: v for k, v in verdicts.verdicts.items() if k[1] not in refused})
    assert_right(kept, desk, ["duckdb", engine])


def test_a_postgres_database_in_new_york_answers_the_pair_as_pandas(desk, tmp_path, pg_engine):
    dataset = _pair(desk)
    targets = [("postgres", "postgres", database_in_zone(pg_engine, "tb_tick_ny", ZONE))]
    assert_right(verify(dataset, Scale(days=2), targets, [load_suite("tick")]), desk, ["postgres"])


def test_the_local_engines_on_a_machine_in_new_york_answer_the_pair_as_pandas(desk, tmp_path, monkeypatch,
                                                                              ddb_server):
    monkeypatch.setenv("TZ", ZONE)
    time.tzset()
    try:
        assert time.strftime("%Z") in ("EST", "EDT")
        dataset = _pair(desk)
        verdicts = verify(dataset, Scale(days=2), tick_targets(tmp_path, LOCAL, ddb_server), [load_suite("tick")])
        assert_right(verdicts, desk, [*LOCAL, "dolphindb"])
    finally:
        monkeypatch.undo()
        time.tzset()
