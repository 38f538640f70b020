"""The tick pack on a desk's own files: quotes and trades imported in their own shapes and paired
(``tickbench import TRADES --trades-of QUOTES``) answer the as-of join, VWAP, snapshot, year-high bid and
rolling mid on every local engine and the DolphinDB stand-in exactly as plain pandas does over the files
themselves: times of day on the exchange's clock to the millisecond, ties settled by arrival."""
from __future__ import annotations

import datetime as dt
import subprocess
import sys
from pathlib import Path

import pytest

from tests.desk_files import QUOTE_ROLES, TRADE_ROLES, expected_tick_answers, write_desk_files
from workloads.datasets import get_dataset
from workloads.datasets.roles import Roles
from workloads.datasets.schema import Scale
from workloads.datasets.tick_import import import_source
from workloads.datasets.pair_import import pair_before_import, pair_trades
from workloads.datasets.tick_pair import PairError
from workloads.operations import WORKLOADS
from workloads.queries import load_suite
from workloads.queries.answers import fingerprint, normalise
from workloads.queries.verify import SAME, verify

ROOT = Path(__file__).resolve().parent.parent
TICK_PACK = {"asof-join", "vwap", "snapshot", "year-high-bid", "rolling-mid"}
LOCAL = ("parquet", "duckdb", "clickhouse", "arcticdb")


@pytest.fixture
def desk(tmp_path) -> tuple[Path, Path]:
    return write_desk_files(tmp_path)


def _pair(desk, name: str = "desk") -> str:
    quotes_path, trades_path = desk
    import_source(quotes_path, "quotes", QUOTE_ROLES)
    zone = pair_before_import("quotes", TRADE_ROLES, "", trades_path.name)
    import_source(trades_path, name, TRADE_ROLES)
    return pair_trades(name, "quotes", zone).info.name


def tick_targets(tmp_path: Path, kinds, server=None) -> list[tuple[str, str, dict]]:
    from workloads.targets.engines import default_config
    targets = [(kind, kind, default_config(kind, tmp_path / "layouts")) for kind in kinds]
    if server is not None:
        targets.append(("dolphindb", "dolphindb", {"host": server.host, "port": server.port, "user": "admin",
                                                   "password": "123456", "query_timeout": 60}))
    return targets


def assert_right(verdicts, desk, engines) -> None:
    """Every engine answers every query, alike, and as pandas does over the files."""
    suite = load_suite("tick")
    expected = {qid: fingerprint(normalise(frame, suite.query(qid).columns))
                for qid, frame in expected_tick_answers(*desk).items()}
    for (_, query_id), row in verdicts.verdicts.items():
        answers = verdicts.answers[("tick", query_id)]
        wrong = {e: (row[e], answers[e].error) for e in engines if row[e] != SAME}
        assert not wrong, (query_id, wrong)
        assert answers[engines[0]].fingerprint == expected[query_id], (query_id, answers[engines[0]].preview)
        assert answers[engines[0]].rows > 0, query_id


def test_the_pair_reads_as_taq_on_the_exchanges_clock(desk):
    pair = get_dataset(_pair(desk))
    assert [c.name for c in pair.info.schema.columns] == ["symbol", "date", "time", "bid", "ofr", "bidsiz", "ofrsiz"]
    quotes = pair.day_frame(0, Scale(days=2))
    assert str(quotes["date"].iloc[0].date()) == "2025-03-10"
    first, last = quotes["time"].min().time(), quotes["time"].max().time()
    assert dt.time(9, 30) <= first < dt.time(9, 31) and last < dt.time(16, 0)   # 09:30 at -04:00, not 13:30 UTC
    assert {"BRK.B", "BF B", "BRK/A", "NA", "7203.T"} <= set(quotes["symbol"].astype(str))
    assert (quotes["time"].dt.microsecond % 1000 == 0).all() and (quotes["time"].dt.microsecond > 0).any()
    trades = pair.trades_frame(Scale(days=2))
    assert list(trades.columns) == ["symbol", "date", "time", "price", "size", "corr"] and (trades["corr"] == 0).all()
    assert pair.info.extra["zone"] == "-04:00" and pair.all_days == get_dataset("imp_quotes").all_days


def test_the_tick_pack_is_offered_on_the_pair_and_nowhere_it_cannot_run(desk):
    pair = get_dataset(_pair(desk)).info
    offered = {name for name, w in WORKLOADS.items() if not w.refusal(pair)}
    assert TICK_PACK | {"spread-by-minute", "ols-spread", "mapreduce-minute-bars"} <= offered
    alone = get_dataset("imp_quotes").info
    refusal = WORKLOADS["asof-join"].refusal(alone)
    assert "--trades-of QUOTES" in refusal and "TAQ" not in refusal


def test_every_local_engine_and_the_dolphindb_stand_in_answer_as_pandas(desk, tmp_path, ddb_server):
    dataset = _pair(desk)
    verdicts = verify(dataset, Scale(days=2), tick_targets(tmp_path, LOCAL, ddb_server), [load_suite("tick")])
    assert_right(verdicts, desk, [*LOCAL, "dolphindb"])


def test_quotes_or_trades_that_cannot_pair_are_refused_before_anything_is_read(desk, tmp_path):
    quotes_path, trades_path = desk
    import_source(quotes_path, "nosizes", Roles(time="timestamp", key="ticker", price=("bid_px", "ask_px")))
    with pytest.raises(PairError, match=r"imp_nosizes cannot be the quotes of a pair: it has no quote sizes "
                                        r"\(--quote-size BID_SIZE --quote-size ASK_SIZE\)"):
        pair_before_import("nosizes", TRADE_ROLES, "", "trades.csv")
    import_source(quotes_path, "quotes", QUOTE_ROLES)
    with pytest.raises(PairError, match=r"trades.csv: trades paired with quotes need a size \(--size SIZE\)"):
        pair_before_import("quotes", Roles(time="exec_time", key="sym", price=("px",)), "", "trades.csv")
    with pytest.raises(PairError, match="unknown time zone 'Mars/Olympus'"):
        pair_before_import("quotes", TRADE_ROLES, "Mars/Olympus", "trades.csv")


def test_quotes_imported_again_unpair_with_a_clear_message(desk):
    name = _pair(desk)
    import_source(desk[0], "quotes", QUOTE_ROLES)               # the same rows again: still the pair's quotes
    assert get_dataset(name).info.extra["tick_pack"]
    lines = desk[0].read_text().splitlines()
    shorter = desk[0].with_name("fewer.csv")
    shorter.write_text("\n".join(lines[:-100]) + "\n")
    import_source(shorter, "quotes", QUOTE_ROLES)               # other rows under the name
    with pytest.raises(ValueError, match=r"the quotes imp_quotes were imported again since the trades were paired "
                                         r"with them: import the trades again with --trades-of quotes --replace"):
        get_dataset(name)


def test_the_command_line_pairs_and_the_pair_runs_an_as_of_join(desk, tmp_path):
    quotes_path, trades_path = desk
    env = {"TICKBENCH_HOME": str(tmp_path / "home"), "PATH": "/usr/bin:/bin", "COLUMNS": "200"}

    def tickbench(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "app", *args], capture_output=True, text=True, timeout=300,
                              env=env, cwd=ROOT)

    done = tickbench("import", str(quotes_path), "--name", "quotes", "--time", "timestamp", "--key", "ticker",
                     "--price", "bid_px", "--price", "ask_px", "--quote-size", "bid_sz", "--quote-size", "ask_sz")
    assert done.returncode == 0, done.stderr
    done = tickbench("import", str(trades_path), "--name", "desk", "--time", "exec_time", "--key", "sym", "--price",
                     "px", "--size", "qty", "--trades-of", "quotes")
    assert done.returncode == 0, done.stderr
    assert "paired with the trades of imp_desk" in done.stdout and "exchange's clock (-04:00)" in done.stdout
    done = tickbench("workloads", "--dataset", "imp_desk")
    assert done.returncode == 0 and "Not on imp_desk" not in done.stdout.split("asof-join")[0]
    done = tickbench("verify", "--dataset", "imp_desk", "--targets", "duckdb,parquet")   # the tick pack, by default
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.count("same") == 10 and "asof-join" in done.stdout and "rolling-mid" in done.stdout
    done = tickbench("--results", str(tmp_path / "r"), "run", "--dataset", "imp_desk", "--target", "duckdb",
                     "--workload", "asof-join", "--days", "2", "--operations", "3", "--users", "1")
    assert done.returncode == 0, done.stderr
    done = tickbench("import", str(trades_path), "--name", "other", "--time", "exec_time", "--key", "sym", "--price",
                     "px", "--trades-of", "quotes")
    assert done.returncode == 2 and "need a size (--size SIZE)" in done.stderr
    assert not (tmp_path / "home" / "imports" / "other").exists()


def test_trades_of_other_days_are_refused_and_not_kept(desk, tmp_path):
    quotes_path, trades_path = desk
    import_source(quotes_path, "quotes", QUOTE_ROLES)
    later = trades_path.read_text().splitlines()
    year = 365 * 86_400 * 10**9                       # epoch nanoseconds: a year on
    moved = [later[0]] + [f"{int(line.split(',', 1)[0]) + year},{line.split(',', 1)[1]}" for line in later[1:]]
    other = tmp_path / "later.csv"
    other.write_text("\n".join(moved) + "\n")
    zone = pair_before_import("quotes", TRADE_ROLES, "", other.name)
    import_source(other, "later", TRADE_ROLES)
    with pytest.raises(PairError, match=r"the trades \(2026-03-10 \.\. 2026-03-11\) and the quotes \(2025-03-10 \.\. "
                                        r"2025-03-11\) share no day on the exchange's clock \(-04:00\)"):
        pair_trades("later", "quotes", zone)
    with pytest.raises(ValueError, match="unknown dataset 'imp_later'"):
        get_dataset("imp_later")                        # nothing half-paired is kept


def test_report_003s_computations_run_on_the_pair_in_the_exchanges_session(desk, tmp_path):
    """The pair is TAQ-shaped, so the spread by minute and the OLS on quote sizes (offered on it) run
    on it, alike on DuckDB and pandas over Parquet, over 09:30-16:00 of the exchange's clock."""
    import numpy as np

    from workloads.datasets.schema import StringMode
    from workloads.targets import make_target
    dataset = _pair(desk)
    answers = {}
    for kind, config in (("duckdb", {"path": str(tmp_path / "d.duckdb")}), ("parquet", {"root": str(tmp_path / "f")})):
        target = make_target(kind, config)
        layout = target.prepare(dataset, Scale(days=2), StringMode.ARROW)
        target.open(layout, 0)
        answers[kind] = (target.spread_by_minute(layout).frame, target.ols_spread(layout).frame)
        target.close()
    (spread, ols), (spread_files, ols_files) = answers["duckdb"], answers["parquet"]
    minutes = spread["minute"].astype("datetime64[ns]").dt.time
    assert len(spread) > 300 and minutes.min() == dt.time(9, 30) and minutes.max() < dt.time(16, 0)
    np.testing.assert_allclose(spread["avgSpread"], spread_files["avgSpread"], rtol=1e-9)
    np.testing.assert_allclose(ols[["beta", "stdError"]].to_numpy(float), ols_files[["beta", "stdError"]].to_numpy(float),
                               rtol=1e-9)


def test_a_query_suite_that_does_not_run_on_the_pair_names_the_ones_that_do(desk, tmp_path):
    from workloads.results.store import ResultsStore
    from workloads.run.runner import Runner
    from workloads.scenario import Scenario
    dataset = _pair(desk)
    scenario = Scenario(dataset=dataset, target="duckdb", target_config={"path": str(tmp_path / "d.duckdb")},
                        workload="query-suite", params={"suite": "taq001"})
    with pytest.raises(ValueError, match=r"query suite taq001 runs on the taq dataset, not imp_desk: choose "
                                         r"--param suite=tick, or a suite of your own"):
        Runner(scenario, ResultsStore(tmp_path / "results"))


@pytest.mark.parametrize("kind", ["duckdb", "clickhouse", "parquet"])
def test_the_hand_written_tick_paths_settle_ties_by_arrival_as_tickbench_does(desk, tmp_path, kind):
    # the practitioner benchmark's paths (workloads.practitioner) must ask the tick pack's question:
    # on TAQ no trade prints at a tie, so a join on the time alone answered alike there, and was
    # timed against Tickbench's tie-settling join as if it were the same work
    from tests.tick_paths import assert_tick_paths_answer_as_tickbench
    from workloads.datasets.schema import StringMode
    from workloads.practitioner import paths_for
    from workloads.targets import make_target
    from workloads.targets.engines import default_config

    target = make_target(kind, default_config(kind, tmp_path / "layouts"))
    layout = target.prepare(_pair(desk), Scale(days=2), StringMode.ARROW)
    practitioner = paths_for(kind, target, layout)
    practitioner.open()
    try:
        for day in layout.days:
            assert_tick_paths_answer_as_tickbench(target, layout, practitioner.paths(), day)
    finally:
        practitioner.close()
        target.close()
