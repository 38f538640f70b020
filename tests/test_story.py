"""The narrated demo's beats: what fits the minutes a presenter picks, runs long enough for lines to
move, read by the report's figures, and a summary that leaves out what no run measured."""
from __future__ import annotations

import pytest

from workloads.reproduce.findings import Finding, HOLDS, NOT_MEASURED
from workloads.reproduce.measured import parse_slot
from workloads.reproduce.story import (DEMO_MARK, LENGTHS_MIN, LONGEST_RUN_S, SHORTEST_RUN_S, Engines, sweep_users,
                                       is_demo_run, narrated_playlist, recorded_engines, recorded_runs, summary)


@pytest.mark.parametrize("minutes", LENGTHS_MIN)
def test_the_beats_fit_the_minutes_and_every_run_lasts_long_enough_to_move(minutes):
    beats = narrated_playlist(minutes)
    assert beats and sum(b.seconds for b in beats) <= minutes * 60
    for beat in beats:
        assert beat.question and beat.watch and beat.title.startswith(f"Report {beat.report}")
        for scenario in beat.scenarios:
            steps = len(scenario.users)
            assert scenario.operations == 0 and scenario.duration_s * steps >= SHORTEST_RUN_S - 1e-9
            assert scenario.duration_s <= LONGEST_RUN_S and (steps == 1 or scenario.duration_s >= 5.0)
            assert scenario.target in ("duckdb", "pickle")         # no engine this install lacks
            assert scenario.name.endswith(DEMO_MARK) and is_demo_run({"name": scenario.name})
            report, experiment, _arm, size = parse_slot(scenario.experiment)
            assert (report, experiment, size) == (beat.report, beat.experiment, "tiny")   # the report reads it


def test_a_longer_demo_tells_more_or_lets_its_runs_run_longer():
    five, ten, twenty = (narrated_playlist(m) for m in LENGTHS_MIN)
    assert len(five) < len(ten) <= len(twenty)
    longer = iter(b.slot_prefix for b in ten)
    assert all(prefix in longer for prefix in (b.slot_prefix for b in five))     # the same story, in order
    assert twenty[0].scenarios[0].duration_s > five[0].scenarios[0].duration_s
    assert five[0].slot_prefix == "000/day-l1"                    # the point of the reports comes first


def test_reads_run_to_their_seconds_not_to_the_tiny_share_of_rows():
    download = next(b for b in narrated_playlist(10) if b.slot_prefix == "002/download").scenarios[0]
    # 5 s of slice downloads at this machine's rate would be far more than the tiny 5 M rows per user
    assert download.params["rows_per_user"] >= 100_000_000


def test_a_sweep_reaches_past_the_published_knee_scaled_to_this_machine():
    # 64 users on 48 threads is 2.7 users on 2: a sweep must reach 8 to show where growth stops
    assert sweep_users(2) == (1, 2, 4, 8)
    assert sweep_users(8) == (1, 2, 4, 8, 16, 32)
    assert sweep_users(96) == (1, 2, 4, 8, 16, 32, 64)             # no more users than the reports had
    bars = next(b for b in narrated_playlist(10) if b.slot_prefix == "002/bars").scenarios[0]
    assert bars.users == sweep_users()


def test_an_unknown_length_is_refused():
    with pytest.raises(ValueError, match="5, 10, 20 minutes"):
        narrated_playlist(7)


def _finding(report, statement, verdict, run_ids):
    return Finding(report, statement, "5×", "4×" if run_ids else "—", verdict, "", tuple(run_ids))


def test_the_summary_leaves_out_findings_no_run_measured_and_says_each_once():
    found = [_finding("001", "import speed vs Druid", NOT_MEASURED, ()),
             _finding("000", "API / server", HOLDS, ("r1",)),
             _finding("000", "API / server", HOLDS, ("r1",))]
    assert [(f.report, f.statement) for f in summary(found)] == [("000", "API / server")]


def test_a_result_card_does_not_read_out_that_the_machine_was_busy():
    from workloads.reproduce.story import _for_an_audience
    from workloads.run.environment import busy_note

    note = busy_note({"load_average": [2.6, 1.0, 1.0], "cores_logical": 2})
    finding = _finding("000", "pickle cold / warm", NOT_MEASURED, ("r1",))
    noisy = Finding(**{**finding.__dict__, "why": f"noisy: 19 and 45 operations give 1.4-2.4× at 95 %; {note}"})
    assert note and _for_an_audience(noisy).why == "noisy: 19 and 45 operations give 1.4-2.4× at 95 %"
    assert _for_an_audience(finding).why == finding.why


def test_a_comparator_brings_its_reports_comparison_in_second_on_both_engines():
    config = {"host": "127.0.0.1", "port": 9, "target_key": "druid:local"}
    beats = narrated_playlist(10, engines=Engines(comparator="druid", comparator_config=config))
    assert [b.slot_prefix for b in beats][:2] == ["000/day-l1", "001/queries"]
    assert sum(b.seconds for b in beats) <= 600
    queries = beats[1]
    assert {s.target for s in queries.scenarios} == {"duckdb", "druid"}
    druid = next(s for s in queries.scenarios if s.target == "druid")
    assert druid.target_config == config and druid.name.endswith(DEMO_MARK)
    # each query as often as report 001 ran it, then the suite again until its seconds are up
    assert druid.duration_s >= SHORTEST_RUN_S and druid.operations == 0 and druid.params["repetitions"] == 10
    assert not any(b.report == "001" for b in narrated_playlist(10))       # no Druid given: left out


def test_a_dolphindb_subject_runs_every_database_arm_and_keeps_the_files_arms():
    config = {"host": "127.0.0.1", "port": 9, "target_key": "ddb:office"}
    beats = narrated_playlist(5, engines=Engines("dolphindb", config))
    targets = {s.target for b in beats for s in b.scenarios}
    assert targets == {"dolphindb", "pickle"}
    assert all(s.target_config.get("target_key") == "ddb:office" for b in beats for s in b.scenarios
               if s.target == "dolphindb")


def _store_demo_run(store, scenario, host):
    import uuid
    run_id = f"r{uuid.uuid4().hex[:10]}"
    store.create_run(run_id, scenario.to_dict(), {"host": host})
    store.finish_run(run_id, "completed")
    return run_id


def test_a_replay_finds_the_runs_of_the_engines_asked_for_wherever_they_were_made(tmp_path):
    from workloads.results.store import ResultsStore
    store = ResultsStore(tmp_path / "results")
    try:
        duck = narrated_playlist(5)
        ddb = narrated_playlist(5, engines=Engines("dolphindb", {}, "druid", {}))
        on_cluster = {s.name: _store_demo_run(store, s, "office") for b in ddb[:2] for s in b.scenarios}
        on_duckdb = {s.name: _store_demo_run(store, s, "laptop") for s in duck[0].scenarios}
        plain = duck[0].scenarios[0].with_changes(name=duck[0].scenarios[0].name.removesuffix(DEMO_MARK))
        _store_demo_run(store, plain, "laptop")          # a gallery run of the same slot: not the demo's
        assert recorded_runs(store, duck) == on_duckdb
        # each engine finds its own runs; the files' arms (pickle) are the newest, whoever's demo made them
        newest_pickle = {name: run for name, run in on_duckdb.items() if "pickle" in name}
        assert recorded_runs(store, ddb) == {**on_cluster, **newest_pickle}
        assert {s.target for b in ddb[:2] for s in b.scenarios} == {"dolphindb", "druid", "pickle"}
        assert recorded_engines(store) == [("duckdb", None), ("dolphindb", None), ("dolphindb", "druid")]
    finally:
        store.close()


def _pair(figure: str, published: float, measured: float | None, unit: str = "s"):
    from workloads.reproduce.published import Pair
    return Pair("a day", figure, f"{published:g} {unit}", "—" if measured is None else f"{measured:g} {unit}", unit,
                published, measured, "3 servers")


def test_a_result_card_says_where_two_figures_stand_the_other_way_round_from_published():
    from workloads.reproduce.story import reversals
    pairs = [_pair("the API, cold", 38, 0.0276), _pair("pickle, cold", 72, 0.0245), _pair("pickle, warm", 34, 0.0221)]
    said = reversals(pairs, most=2)
    assert said == ("Here the API, cold took longer than pickle, cold (0.0276 s against 0.0245 s); the report "
                    "found the opposite (38 s against 72 s).",)
    # within 10 % here, or published, is no reversal; nor a figure not measured; nor two units
    assert reversals([_pair("a", 38, 0.0250), _pair("b", 72, 0.0245)]) == ()
    assert reversals([_pair("a", 38, None), _pair("b", 72, 0.0245)]) == ()
    assert reversals([_pair("a", 38, 0.03), _pair("b", 72, 0.02, unit="rows/s")]) == ()
    rates = reversals([_pair("a", 100, 5, "rows/s"), _pair("b", 200, 2, "rows/s")])
    assert rates and "a measured more than b" in rates[0]


def test_the_card_shows_a_reversal_as_plain_text(qapp):
    from widgets.reports.demo_card import DemoCard
    from workloads.reproduce.story import ResultCard
    card = DemoCard()
    figures = [_pair("<b>the API</b>", 38, 0.0276), _pair("pickle", 72, 0.0245)]
    from workloads.reproduce.story import reversals
    card.show_result(ResultCard("Report 000 · a day", figures, [], "", reversals(figures)), "Experiment 1 of 1")
    assert "the report found the opposite" in card.reversed.text() and "<b>the API</b>" in card.reversed.text()
    assert card.reversed.textFormat() == card.reversed.textFormat().PlainText
