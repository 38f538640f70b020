"""The tick pack: TAQ trades beside the quotes, the suite ``tick`` on every local engine, and its
queries as workloads (issue 44). Real files, real DuckDB, chDB, ArcticDB and HDF5, real workers."""
from __future__ import annotations

import json

import duckdb
import pandas as pd
import pytest

from workloads.datasets import get_dataset
from workloads.datasets.schema import Scale, StringMode
from workloads.queries import load_suite
from workloads.queries.answers import fingerprint, normalise
from workloads.queries.suites import draw_values
from workloads.queries.verify import NOT_SUPPORTED, SAME, verify
from workloads.results.store import ResultsStore
from workloads.run.records import MEASURED, WARMUP
from workloads.run.runner import Runner
from workloads.scenario import Scenario
from workloads.targets import make_target

SCALE = Scale(days=2, rows_per_day=40_000, symbols=30)
LOCAL = ("duckdb", "pickle", "parquet", "feather", "clickhouse", "arcticdb", "hdf5")
QUERIES = ("asof-join", "vwap", "snapshot", "year-high-bid", "rolling-mid")


@pytest.fixture(scope="module")
def taq():
    return get_dataset("taq")


@pytest.fixture(scope="module")
def trades(taq):
    return taq.trades_frame(SCALE)


# --- the trades --------------------------------------------------------------------------------------
def test_every_trade_prints_inside_its_one_prevailing_quote(taq, trades):
    """Each trade's second holds exactly one quote of its symbol, and the trade's price is within
    that quote's bid and offer: the as-of join has one right answer, and it is a realistic one."""
    for index, day in enumerate(taq.trading_days(SCALE)):
        quotes = taq.day_frame(index, SCALE)
        day_trades = trades[trades["date"] == pd.Timestamp(day)]
        assert len(day_trades) > 0
        joined = duckdb.sql("""SELECT t.price, q.bid, q.ofr, count(*) OVER (PARTITION BY t.symbol, t.time) AS n
            FROM day_trades t JOIN quotes q ON q.symbol = t.symbol AND q.time = t.time""").df()
        assert len(joined) == len(day_trades)                       # one quote at each trade's second
        assert (joined["n"] == 1).all()
        assert ((joined["price"] >= joined["bid"] - 1e-9) & (joined["price"] <= joined["ofr"] + 1e-9)).all()
        # about one trade for every eight quotes, as in TAQ
        assert 0.09 < len(day_trades) / len(quotes) < 0.16, len(day_trades) / len(quotes)


def test_trades_are_recorded_as_taq_records_them(trades):
    assert list(trades.columns) == ["symbol", "date", "time", "price", "size", "g127", "corr", "cond", "ex"]
    sizes = trades["size"]
    round_lots, odd_lots = (sizes % 100 == 0).mean(), (sizes < 100).mean()
    assert 0.5 < round_lots < 0.7 and 0.15 < odd_lots < 0.3, (round_lots, odd_lots)
    assert ((sizes > 100) & (sizes % 100 != 0)).any()                          # mixed lots too
    assert ((trades["price"] * 100).round(6) % 1 == 0).all()                      # whole cents
    # each symbol's first print of a day is the opening (O), its last the closing (6)
    by_day = trades.groupby(["date", "symbol"], observed=True)["cond"]
    assert (by_day.first() == "O").all()
    assert (by_day.last()[by_day.size() > 1] == "6").all()
    assert set(trades["cond"]) <= {"@", "F", "E", "Z", "O", "6"} and set(trades["corr"]) <= {0, 1}
    assert trades["time"].is_monotonic_increasing or trades.groupby("date")["time"].is_monotonic_increasing.all()


def test_trades_are_the_same_in_every_call_and_string_mode(taq, trades):
    again = taq.trades_frame(SCALE, StringMode.OBJECT)
    assert again.drop(columns=["symbol", "cond"]).equals(trades.drop(columns=["symbol", "cond"]))
    assert list(again["symbol"]) == list(trades["symbol"]) and list(again["cond"]) == list(trades["cond"])
    other_seed = taq.trades_frame(Scale(days=2, rows_per_day=40_000, symbols=30, seed=7))
    assert not other_seed["price"].equals(trades["price"])


# --- every local engine gives the same answers ----------------------------------------------------
def test_every_local_engine_answers_the_tick_pack_alike(tmp_path):
    targets = [(kind, kind, {"path": str(tmp_path / "t.duckdb")} if kind == "duckdb" else {"root": str(tmp_path / kind)})
               for kind in LOCAL]
    verdicts = verify("taq", SCALE, targets, [load_suite("tick")])
    assert [q for _, q in verdicts.queries] == list(QUERIES)
    wrong = {key: row for key, row in verdicts.verdicts.items() if set(row.values()) != {SAME}}
    assert not wrong, wrong
    rows = {q: verdicts.answers[("tick", q)]["duckdb"].rows for q in QUERIES}
    assert all(count > 0 for count in rows.values()), rows
    assert rows["snapshot"] == rows["year-high-bid"] == SCALE.symbols          # one row per symbol


def test_a_query_an_engine_cannot_express_says_why(tmp_path, monkeypatch):
    """A suite text ``not supported: REASON`` is that engine's refusal with its reason; the others answer."""
    monkeypatch.setenv("TICKBENCH_HOME", str(tmp_path / "home"))
    folder = tmp_path / "home" / "queries"
    folder.mkdir(parents=True)
    (folder / "mine.toml").write_text('''title = "mine"
dataset = "taq"
[[query]]
id = "n"
category = "count"
description = "trades of a day"
params = { day = "day:0" }
columns = ["n"]
days = "day"
duckdb = "SELECT count(*) AS n FROM {trades} WHERE date = $day"
clickhouse = "not supported: this test says so"
pandas = """not supported:  no pandas here,
   on two lines"""
''')
    verdicts = verify("taq", SCALE, [("duckdb", "duckdb", {"path": str(tmp_path / "t.duckdb")}),
                                     ("clickhouse", "clickhouse", {"root": str(tmp_path / "ch")}),
                                     ("parquet", "parquet", {"root": str(tmp_path / "pq")})], [load_suite("mine")])
    row, answers = verdicts.verdicts[("mine", "n")], verdicts.answers[("mine", "n")]
    assert row == {"duckdb": SAME, "clickhouse": NOT_SUPPORTED, "parquet": NOT_SUPPORTED}
    assert answers["clickhouse"].error == "query n: not supported by ClickHouse: this test says so"
    assert answers["parquet"].error == "query n: not supported by pandas: no pandas here, on two lines"


# --- the workloads ---------------------------------------------------------------------------------
def _run(store, tmp_path, workload, params=None, users=(1, 2), dataset="taq"):
    scenario = Scenario(dataset=dataset, scale=SCALE, target="duckdb", target_config={"path": str(tmp_path / "w.duckdb")},
                        workload=workload, params=params or {}, users=users, operations=3, warmup_ops=1)
    return Runner(scenario, store).run()


def _expected(tmp_path, query_id: str, day_index: int, **values) -> str:
    target = make_target("duckdb", {"path": str(tmp_path / "w.duckdb")})
    layout = target.prepare("taq", SCALE, StringMode.ARROW)
    target.open(layout)
    try:
        query = load_suite("tick").query(query_id)
        drawn = {**draw_values(query, layout.days, layout.keys_sample), **values}
        if "day" in drawn:
            drawn["day"] = layout.days[day_index]
        return fingerprint(normalise(target.run_query(layout, query, drawn).frame, query.columns))
    finally:
        target.close()


def _fingerprinted(ops: pd.DataFrame) -> pd.DataFrame:
    """The records that carry an answer's fingerprint, by step and user."""
    marked = ops[ops["extra"].fillna("").str.contains('"fingerprint"')]
    return marked.sort_values(["step", "worker"])


@pytest.mark.parametrize("workload", QUERIES)
def test_each_workload_times_the_answer_verify_checks_each_user_on_its_own_day(workload, tmp_path):
    store = ResultsStore(tmp_path / "results")
    result = _run(store, tmp_path, workload)
    assert result.status == "completed", result.message
    ops = store.ops(result.run_id, kinds=(WARMUP, MEASURED))
    assert ops["ok"].all() and (ops["op"] == workload).all() and (ops["rows"] > 0).all()
    measured = store.ops(result.run_id, kinds=(MEASURED,))
    assert len(measured) == 3 + 6
    first = _fingerprinted(ops)
    assert (first["kind"] == WARMUP).all() and (first["seq"] == 0).all()    # no measured operation follows one
    assert list(first.groupby("step")["worker"].apply(list)) == [[0], [0, 1]]  # each user's first answer, once
    prints = [json.loads(extra)["fingerprint"] for extra in first[first["step"] == 1]["extra"]]
    days_differ = workload != "year-high-bid"
    assert prints == [_expected(tmp_path, workload, worker if days_differ else 0) for worker in (0, 1)]
    assert (prints[0] != prints[1]) == days_differ               # user 1 asked about day 1
    # fingerprinted on the question asked again once every user's measured operations were over:
    # worked out on the warm-up's own answer, it left the user's process ~2 % slower for the step
    ends = (measured["t_start"] + measured["total_s"]).groupby(measured["step"]).max()
    for step, extra in zip(first["step"], first["extra"]):
        assert json.loads(extra)["asked_again_at_s"] > ends[step]
    store.close()


def test_workload_parameters_change_the_question(tmp_path):
    store = ResultsStore(tmp_path / "results")

    def rows(workload, params):
        result = _run(store, tmp_path, workload, params, users=(1,))
        assert result.status == "completed", result.message
        return store.ops(result.run_id, kinds=(MEASURED,))["rows"].iloc[0]

    assert rows("vwap", {"minutes": 30}) < rows("vwap", {"minutes": 5})         # fewer, wider buckets
    assert rows("rolling-mid", {"symbols": 2}) < rows("rolling-mid", {"symbols": 10})
    early = _expected(tmp_path, "snapshot", 0, at=pd.Timestamp("10:00:00").time())
    result = _run(store, tmp_path, "snapshot", {"at": "10:00:00"}, users=(1,))
    first = _fingerprinted(store.ops(result.run_id, kinds=(WARMUP, MEASURED)))
    assert json.loads(first["extra"].iloc[0])["fingerprint"] == early
    assert early != _expected(tmp_path, "snapshot", 0)                           # 12:00 is another snapshot
    store.close()


def test_a_tick_workload_on_another_dataset_is_refused_in_one_line(tmp_path):
    store = ResultsStore(tmp_path / "results")
    with pytest.raises(ValueError, match=r"^asof-join asks quotes with their trades: the taq dataset, or your trades "
                                         r"paired with your quotes \(tickbench import TRADES --name NAME --trades-of "
                                         r"QUOTES \.\.\.\), not devices$"):
        _run(store, tmp_path, "asof-join", dataset="devices")
    with pytest.raises(ValueError, match="Bucket: 0 is below the minimum 1 min"):
        _run(store, tmp_path, "vwap", {"minutes": 0})
    store.close()


def test_a_file_engine_reads_the_trades_only_for_the_queries_that_ask_them(tmp_path):
    """The side table is read by the queries whose function takes it: report 001's queries on Parquet
    time what they did before the trades existed."""
    target = make_target("parquet", {"root": str(tmp_path / "pq")})
    layout = target.prepare("taq", SCALE, StringMode.ARROW)
    target.open(layout)
    read, real = [], target._side_frame

    def side_frame(layout, name, day=None):
        frame = real(layout, name, day)
        read.append((name, day, len(frame), set(frame["date"])))
        return frame
    target._side_frame = side_frame
    for suite, query_id in (("taq001", "t01"), ("tick", "snapshot"), ("tick", "asof-join")):
        query = load_suite(suite).query(query_id)
        target.run_query(layout, query, draw_values(query, layout.days, layout.keys_sample))
    # the as-of join's only, and of its day only (Parquet's filters): no other day's trades read
    day = layout.days[0]
    assert [(name, when, dates) for name, when, _, dates in read] == [("trades", day, {pd.Timestamp(day)})]
    assert 0 < read[0][2] < len(get_dataset("taq").trades_frame(SCALE))
    target.close()


@pytest.mark.parametrize("kind", ["pickle", "parquet"])
def test_a_days_own_file_is_not_scanned_again_to_find_its_day(kind, tmp_path, monkeypatch):
    """The days and the day's trades a file engine reads are the day's: the as-of join takes them as
    they are, as their user does, where scanning their dates cost 4 % of the join (issue 58)."""
    from workloads.queries import pandas_suite
    target = make_target(kind, {"root": str(tmp_path / kind)})
    layout = target.prepare("taq", SCALE, StringMode.ARROW)
    target.open(layout)
    scans, real = [], pandas_suite._only_day
    monkeypatch.setattr(pandas_suite, "_only_day", lambda dates, stamp: scans.append(len(dates)) or real(dates, stamp))
    query = load_suite("tick").query("asof-join")
    day = layout.days[1]
    answer = target.run_query(layout, query, {"day": day}).frame
    assert scans == []
    quotes, trades = target._day_frame(layout, day)[0], target._side_frame(layout, "trades", day)
    unmarked = pandas_suite.tick_asof_join(quotes, trades, day)      # the same frames, not known to be the day's
    assert len(scans) == 2
    pd.testing.assert_frame_equal(answer.reset_index(drop=True), unmarked.reset_index(drop=True))
    target.close()
