"""Query suites as data (resources/queries and the user's own), their answers' normal form, and
``verify``: every local engine gives the same answer to every query of reports 001 and 004 over the
same generated data (real files, real DuckDB, pandas)."""
from __future__ import annotations

import datetime as dt
import os
import textwrap

import numpy as np
import pandas as pd
import pytest

from workloads.datasets.schema import Scale
from workloads.queries import draw_values, load_suite, suite_names
from workloads.queries.answers import fingerprint, normalise
from workloads.queries.suites import DIALECTS, SuiteError, query_days, user_suites_dir
from workloads.queries.verify import DIFFERS, ERROR, NOT_SUPPORTED, SAME, suites_of, verify

BUILT_IN = ("devices004", "taq001", "taq004")
TAQ = Scale(days=2, rows_per_day=20_000, symbols=30)
DEVICES = Scale(days=2, rows_per_day=40_000, symbols=400)
DAYS = (dt.date(2007, 8, 23), dt.date(2007, 8, 24))


def local_targets(tmp_path) -> list[tuple[str, str, dict]]:
    files = {"root": str(tmp_path / "files")}
    return [("duckdb", "duckdb", {"path": str(tmp_path / "d.duckdb")}), ("parquet", "parquet", files),
            ("pickle", "pickle", files), ("feather", "feather", files)]


def write_user_suite(name: str, body: str) -> None:
    folder = user_suites_dir()
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{name}.toml").write_text(textwrap.dedent(body), encoding="utf-8")


# Queries a dialect leaves without a text ("not supported", a state of its own): none now. MongoDB's
# fills have $setWindowFields texts; a server that refuses the stage says so at run time.
NOT_EXPRESSED: dict[str, set[str]] = {}


# --- suites as data ---------------------------------------------------------------------------
@pytest.mark.parametrize("name", BUILT_IN)
def test_built_in_suites_have_every_targets_dialect(name):
    from workloads.targets import target_class, target_kinds
    dialects = {target_class(kind).query_dialect for kind in target_kinds()}
    assert dialects <= set(DIALECTS) and {"duckdb", "dolphindb", "clickhouse", "pandas"} <= dialects
    suite = load_suite(name)
    assert suite.report and suite.queries
    for query in suite.queries:
        missing = {d for d in dialects if not query.text(d)}
        assert missing == NOT_EXPRESSED.get(query.id, set()), (name, query.id, missing)
        assert "{" + query.table + "}" in query.text("duckdb")


def test_report_001_suite_is_its_seven_queries():
    suite = load_suite("taq001")
    assert [q.id for q in suite.queries] == [f"t0{i}" for i in range(1, 8)]
    assert "having sum(bidsiz) > 0" in suite.query("t06").text("dolphindb")


def test_user_suites_are_listed_and_built_in_names_win():
    write_user_suite("mine", """
        dataset = "taq"
        [[query]]
        id = "m1"
        category = "mine"
        description = "rows on one day"
        params = { day = "day:0" }
        columns = ["n"]
        duckdb = "SELECT count(*) AS n FROM {quotes} WHERE date = $day"
    """)
    write_user_suite("taq001", 'dataset = "taq"\n[[query]]\nid = "x"\ncategory = "c"\ndescription = "d"\n'
                               'columns = ["n"]\nduckdb = "SELECT 1"\n')
    assert {"mine", *BUILT_IN} <= set(suite_names())
    assert load_suite("mine").query("m1").text("pandas") is None
    assert len(load_suite("taq001").queries) == 7
    from workloads.operations import get_workload

    assert "mine" in next(p for p in get_workload("query-suite").params if p.name == "suite").choices


def test_an_edited_user_suite_loads_afresh():
    body = 'dataset = "taq"\n[[query]]\nid = "{id}"\ncategory = "c"\ndescription = "d"\ncolumns = ["n"]\n'
    write_user_suite("edited", body.replace("{id}", "a1"))
    assert load_suite("edited").queries[0].id == "a1"
    path = user_suites_dir() / "edited.toml"
    path.write_text(body.replace("{id}", "b2"), encoding="utf-8")
    stat = path.stat()
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000))
    assert load_suite("edited").queries[0].id == "b2"


def test_an_engines_texts_can_live_in_an_overlay_beside_the_suite():
    body = ('dataset = "taq"\n[[query]]\nid = "a1"\ncategory = "c"\ndescription = "d"\ncolumns = ["n"]\n'
            'duckdb = "SELECT 1 AS n"\n')
    write_user_suite("layered", body)
    (user_suites_dir() / "layered.questdb.toml").write_text('[texts]\na1 = "SELECT 1 AS n FROM long_sequence(1)"\n')
    assert "layered" in suite_names() and "layered.questdb" not in suite_names()
    assert load_suite("layered").query("a1").text("questdb") == "SELECT 1 AS n FROM long_sequence(1)"
    overlay = user_suites_dir() / "layered.postgres.toml"
    overlay.write_text('[texts]\nzz = "SELECT 1"\n')
    with pytest.raises(SuiteError, match="layered.postgres.toml: no query 'zz'"):
        load_suite("layered")
    overlay.write_text('[texts]\na1 = "SELECT 1"\n')
    assert load_suite("layered").query("a1").text("postgres") == "SELECT 1"
    (user_suites_dir() / "layered.duckdb.toml").write_text('[texts]\na1 = "SELECT 2"\n')
    with pytest.raises(SuiteError, match="has a duckdb text in the suite already"):
        load_suite("layered")
    (user_suites_dir() / "layered.duckdb.toml").unlink()
    (user_suites_dir() / "layered.oracle.toml").write_text('[texts]\n')
    with pytest.raises(SuiteError, match="'oracle' is not a dialect"):
        load_suite("layered")


@pytest.mark.parametrize("body, message", [
    ('dataset = "taq"\n[[query]\n', "not valid TOML"),
    ('dataset = "nope"\n', "dataset must be one of"),
    ('dataset = "taq"\n[[query]]\nid = "a"\ncategory = "c"\ncolumns = ["n"]\n', "missing \\['description'\\]"),
    ('dataset = "taq"\n[[query]]\nid = "a"\ncategory = "c"\ndescription = "d"\ncolumns = ["n"]\n'
     'params = { day = "yesterday" }\n', "is not day:K"),
    ('dataset = "taq"\n', "at least one"),
])
def test_malformed_user_suites_say_what_is_wrong(body, message):
    write_user_suite("bad", body)
    with pytest.raises(SuiteError, match=message):
        load_suite("bad")
    with pytest.raises(SuiteError, match="unknown query suite 'absent'"):
        load_suite("absent")


def test_parameters_are_drawn_from_the_layout():
    write_user_suite("params", """
        dataset = "taq"
        [[query]]
        id = "p"
        category = "c"
        description = "d"
        columns = ["n"]
        days = "day"
        params = { first = "day:0", last = "day:-1", top = "key:1", three = "keys:3", end = "at:1 24:00:00", open = "tod:09:30:00", n = 5 }
    """)
    query = load_suite("params").query("p")
    values = draw_values(query, DAYS, ("AAA", "BBB", "CCC", "DDD"))
    assert values == {"first": DAYS[0], "last": DAYS[1], "top": "BBB", "three": ["AAA", "BBB", "CCC"],
                      "end": dt.datetime(2007, 8, 25), "open": dt.time(9, 30), "n": 5}
    assert query_days(query, values, DAYS) == [DAYS[0]]
    with pytest.raises(SuiteError, match="beyond the layout"):
        draw_values(query, DAYS[:1], ("AAA",))


# --- answers --------------------------------------------------------------------------------
def test_answers_read_the_same_whatever_the_engines_types_and_row_order():
    from_sql = pd.DataFrame({"sym": ["B", "A"], "avg": [0.1 + 0.2, 2.5], "n": [3, 4],
                             "t": pd.to_datetime(["2007-08-23 09:30:00.0004", "2007-08-23 10:00:00.0000"])})
    from_pandas = pd.DataFrame({"symbol": ["A", "B"], "mean": [2.5, 0.3], "count": [4.0, 3.0],
                                "time": [dt.datetime(2007, 8, 23, 10), dt.datetime(2007, 8, 23, 9, 30)]})
    columns = ("symbol", "mean", "n", "time")
    a, b = normalise(from_sql, columns), normalise(from_pandas, columns)
    assert a.equals(b) and fingerprint(a) == fingerprint(b)
    assert list(a["time"]) == ["2007-08-23T10:00:00.000", "2007-08-23T09:30:00.000"]   # A, then B
    changed = from_pandas.assign(mean=[2.5, 0.3001])
    assert fingerprint(normalise(changed, columns)) != fingerprint(b)


@pytest.mark.parametrize("row", [0, 10_000, 19_999], ids=["first row", "row 10,000", "last row"])
def test_answers_that_differ_in_one_row_of_twenty_thousand_differ(row):
    """Every row is in the fingerprint, not a head of the answer: one price a cent off anywhere
    in 20,000 rows (after sorting: the first, the 10,000th, the last) makes verify say differs."""
    from workloads.queries.verify import Answer, _verdicts
    columns = ("symbol", "price")
    answer = pd.DataFrame({"symbol": [f"S{i:05d}" for i in range(20_000)], "price": np.arange(20_000) * 0.25 + 10})
    wrong = answer.copy()
    wrong.loc[row, "price"] += 0.01
    right_print, wrong_print = fingerprint(normalise(answer, columns)), fingerprint(normalise(wrong, columns))
    assert right_print != wrong_print
    answers = {"a": Answer("answered", right_print, 20_000), "b": Answer("answered", wrong_print, 20_000),
               "c": Answer("answered", fingerprint(normalise(answer.iloc[::-1], columns)), 20_000)}
    assert _verdicts(answers, ["a", "b", "c"]) == {"a": SAME, "b": DIFFERS, "c": SAME}


def test_rounding_ties_snap_before_half_even():
    # 1.0000005 is a tie at six digits; sums in another order land a last bit either side of it
    below, above = np.nextafter(1.0000005, 0), np.nextafter(1.0000005, 2)
    assert normalise(pd.DataFrame({"x": [below]}), ("x",)).equals(normalise(pd.DataFrame({"x": [above]}), ("x",)))
    assert normalise(pd.DataFrame({"x": [None, 0.0]}), ("x",))["x"].tolist() == ["", "0"]
    with pytest.raises(ValueError, match="2 columns, the suite expects 1"):
        normalise(pd.DataFrame({"a": [1], "b": [2]}), ("x",))


# --- every engine, the same answer ----------------------------------------------------------
@pytest.mark.slow
@pytest.mark.parametrize("dataset, scale", [("taq", TAQ), ("devices", DEVICES)])
def test_every_local_engine_answers_every_query_alike(tmp_path, dataset, scale):
    verdicts = verify(dataset, scale, local_targets(tmp_path))
    assert verdicts.queries and verdicts.agree, verdicts.verdicts
    assert {v for row in verdicts.verdicts.values() for v in row.values()} == {SAME}
    rows = {key: answers["duckdb"].rows for key, answers in verdicts.answers.items()}
    assert sum(1 for n in rows.values() if n > 0) >= len(rows) - 1, rows   # answers that say something
    assert {s.name for s in suites_of(dataset)} == {s for s, _ in verdicts.queries}


def test_a_wrong_text_differs_a_missing_one_is_not_supported_and_a_broken_one_errs(tmp_path):
    write_user_suite("mixed", """
        dataset = "taq"
        [[query]]
        id = "right"
        category = "c"
        description = "rows of the busiest symbol on one day"
        params = { day = "day:0", symbol = "key:0" }
        columns = ["n"]
        days = "day"
        duckdb = "SELECT count(*) AS n FROM {quotes} WHERE date = $day AND symbol = $symbol"
        pandas = "taq_first_thousand"

        [[query]]
        id = "sql_only"
        category = "c"
        description = "a query pandas has no function for"
        columns = ["n"]
        duckdb = "SELECT count(*) AS n FROM {quotes}"

        [[query]]
        id = "broken"
        category = "c"
        description = "a text with an error"
        columns = ["n"]
        duckdb = "SELECT count(*) AS n FROM {quotes} WHERE no_such_column > 0"
        pandas = "no_such_function"
    """)
    scale = Scale(days=1, rows_per_day=5_000, symbols=10)
    verdicts = verify("taq", scale, local_targets(tmp_path)[:2], suites=[load_suite("mixed")])
    v = verdicts.verdicts
    # the pandas function answers a thousand rows of ten columns: not the count the SQL gives
    assert v[("mixed", "right")] == {"duckdb": SAME, "parquet": ERROR}
    assert "10 columns" in verdicts.answers[("mixed", "right")]["parquet"].error
    assert v[("mixed", "sql_only")] == {"duckdb": SAME, "parquet": NOT_SUPPORTED}
    assert v[("mixed", "broken")] == {"duckdb": ERROR, "parquet": ERROR}
    assert "no_such_column" in verdicts.answers[("mixed", "broken")]["duckdb"].error
    assert not verdicts.agree


def test_answers_that_disagree_are_told_apart(tmp_path):
    write_user_suite("split", """
        dataset = "taq"
        [[query]]
        id = "spread"
        category = "c"
        description = "sum of spreads per symbol on the last day"
        params = { day = "day:-1" }
        columns = ["symbol", "spread"]
        days = "day"
        duckdb = "SELECT symbol, sum(ofr - bid) AS spread FROM {quotes} GROUP BY symbol"
        pandas = "taq_spread_sum"
    """)
    # the SQL text forgot its day filter (and so leaves $day unused): it sums both days
    scale = Scale(days=2, rows_per_day=5_000, symbols=10)
    verdicts = verify("taq", scale, local_targets(tmp_path)[:2], suites=[load_suite("split")])
    assert verdicts.verdicts[("split", "spread")] == {"duckdb": SAME, "parquet": DIFFERS}
    answers = verdicts.answers[("split", "spread")]
    assert answers["duckdb"].preview["head"] != answers["parquet"].preview["head"]
    assert answers["duckdb"].rows == answers["parquet"].rows == 10


def test_an_unreachable_target_errs_on_every_query(tmp_path):
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]          # nothing listens on it once closed: refused
    scale = Scale(days=1, rows_per_day=5_000, symbols=10)
    targets = local_targets(tmp_path)[:1] + [
        ("dolphindb", "dolphindb", {"host": "127.0.0.1", "port": port, "user": "admin", "password": "x"})]
    verdicts = verify("taq", scale, targets, suites=[load_suite("taq001")])
    assert all(row == {"duckdb": SAME, "dolphindb": ERROR} for row in verdicts.verdicts.values())
    assert str(port) in verdicts.answers[("taq001", "t01")]["dolphindb"].error


def test_a_timed_suite_runs_every_query_then_again_until_its_seconds_are_up(tmp_path):
    """The narrated demo's suites: each query ``repetitions`` times in a row at least once, then the
    suite again; a query the engine cannot express stays one "not supported" record."""
    from workloads.results.store import ResultsStore
    from workloads.results.suite_figures import query_figures
    from workloads.run.runner import Runner
    from workloads.scenario import Scenario
    write_user_suite("timed", """
        dataset = "taq"
        [[query]]
        id = "count"
        category = "c"
        description = "rows of one day"
        params = { day = "day:0" }
        columns = ["n"]
        days = "day"
        duckdb = "SELECT count(*) AS n FROM {quotes} WHERE date = $day"

        [[query]]
        id = "no_sql"
        category = "c"
        description = "a query with no SQL text"
        params = { day = "day:0", symbol = "key:0" }
        columns = ["n"]
        pandas = "taq_first_thousand"
    """)
    store = ResultsStore(tmp_path / "results")
    try:
        base = Scenario(dataset="taq", scale=Scale(days=1, rows_per_day=5_000, symbols=10), target="duckdb",
                        target_config={"path": str(tmp_path / "d.duckdb")}, workload="query-suite",
                        params={"suite": "timed", "repetitions": 6})
        counts = {}
        for seconds in (0.0, 0.001, 1.5):
            result = Runner(base.with_changes(duration_s=seconds), store).run()
            assert result.status == "completed", result.message
            ops = store.ops(result.run_id, kinds=("measured",))
            counts[seconds] = ops["op"].value_counts().to_dict()
            queries = query_figures(store, result.run_id).set_index("query")
            assert queries.loc["no_sql", "status"] == NOT_SUPPORTED and queries.loc["count", "status"] == "ok"
        assert counts[0.0] == counts[0.001] == {"count": 6}         # a whole pass, however short
        assert set(counts[1.5]) == {"count"} and counts[1.5]["count"] > 6       # then again, what it answers
    finally:
        store.close()
