"""The tick pack's card: real runs of one of its experiments at tiny size, its findings as ratios
between the engines (no published figures), in ``tickbench reproduce`` and on the gallery's card."""
from __future__ import annotations

import pytest

from widgets.reports.card import ReportCardView
from workloads.reproduce.catalog import GALLERY, REPORTS, TICK_PACK, report_card
from workloads.reproduce.comparisons import NO_DIFFERENCE, NOT_PUBLISHED, EngineRatio, between, between_runs, faster
from workloads.reproduce.findings import INCONCLUSIVE, NOT_MEASURED
from workloads.reproduce.reproduction import reproduction
from workloads.reproduce.run_report import planned_runs, run_planned
from workloads.results.store import ResultsStore


@pytest.fixture(scope="module")
def ran(tmp_path_factory):
    """The as-of join experiment at tiny size: DuckDB and Parquet files, 1, 2 and 4 users."""
    root = tmp_path_factory.mktemp("tick-card")
    store = ResultsStore(root / "results")
    planned = planned_runs("tick", "tiny", "duckdb", None, root / "data", experiments=["asof-join"])
    results = run_planned(store, planned)
    yield store, results
    store.close()


def test_the_pack_is_a_card_of_its_own_beside_the_five_reports():
    assert list(GALLERY) == [*REPORTS, "tick"] and report_card("tick") is TICK_PACK
    assert not TICK_PACK.published and TICK_PACK.heading == "Tick pack"
    assert [e.key for e in TICK_PACK.experiments] == ["asof-join", "vwap", "snapshot", "year-high-bid", "rolling-mid"]
    assert set(TICK_PACK.experiments[0].sizes) == {"tiny", "medium"}          # no report's own scale
    with pytest.raises(ValueError, match="size must be one of"):
        TICK_PACK.experiments[0].scenarios("report")


def test_its_findings_are_ratios_between_the_engines_with_their_interval(ran):
    store, results = ran
    assert [r.status for r in results] == ["completed"] * 2, [r.message for r in results]
    repro = reproduction(store, "tick", "tiny")
    assert repro.pairs == []                                   # nothing published to stand beside
    found = {f.statement: f for f in repro.findings}
    asof = found["as-of join: Parquet files' time / the database's, 1 user"]
    assert asof.published == NOT_PUBLISHED and set(asof.run_ids) == {r.run_id for r in results}
    assert asof.measured_value is not None and asof.verdict != NOT_MEASURED
    assert "95 %" in asof.measured
    # the value is the medians' quotient of the two runs' 1-user steps, Parquet over DuckDB
    runs = {arm: repro.runs[("asof-join", arm)] for arm in ("files", "db")}
    assert asof.measured_value == pytest.approx(runs["files"].seconds(1) / runs["db"].seconds(1))
    assert asof.verdict in (faster("DuckDB (embedded)"), faster("Parquet with pandas"), NO_DIFFERENCE, INCONCLUSIVE)
    # the experiments not run yet say so, never a figure
    vwap = found["VWAP over 5-minute buckets: Parquet files' time / the database's, 1 user"]
    assert vwap.verdict == NOT_MEASURED and vwap.measured == "—" and "no completed run" in vwap.why


def test_a_verdict_needs_its_whole_interval(ran):
    """The same two runs read as 'faster' only where the interval is clear of ±10 %; swapping the
    sides flips the direction and the words."""
    store, _ = ran
    runs = reproduction(store, "tick", "tiny").runs
    straight = EngineRatio("asof-join", "as-of join").evaluate("tick", runs, store)
    swapped = EngineRatio("asof-join", "as-of join", top="db", bottom="files").evaluate("tick", runs, store)
    assert swapped.measured_value == pytest.approx(1 / straight.measured_value)
    if straight.verdict == faster("DuckDB (embedded)"):
        assert swapped.verdict == faster("Parquet with pandas")


@pytest.mark.parametrize("low, high, verdict", [
    (1.2, 1.4, faster("QuestDB")), (0.5, 0.8, faster("Parquet with pandas")), (0.95, 1.05, NO_DIFFERENCE),
    (1.05, 1.3, INCONCLUSIVE), (0.7, 0.95, INCONCLUSIVE), (0.8, 1.5, INCONCLUSIVE)])
def test_a_verdict_is_what_the_whole_interval_says(low, high, verdict):
    assert between(low, high, "QuestDB", (30, 40))[0] == verdict


def test_the_card_shows_no_published_column(ran, make_widget, tmp_path):
    store, _ = ran
    view = make_widget(ReportCardView, TICK_PACK, tmp_path, size=(1000, 900))
    assert view.title_label.text().startswith("Tick pack · ") and view.run_all_button.text() == "Run the whole pack"
    view.set_reproduction(reproduction(store, "tick", "tiny"))
    assert view.results.isVisibleTo(view)
    assert "no published figures stand beside them" in view.results_heading.text()
    assert not view.pairs_grid_host.isVisibleTo(view) and not view.pairs_caption.isVisibleTo(view)
    lines = [w.text() for w in view.findings_host.findChildren(type(view.results_heading)) if w.objectName() == "finding_line"]
    assert len(lines) == len(TICK_PACK.experiments) and not any("published:" in line for line in lines)
    assert "between your engines" in view.findings_heading.text()


def test_the_pack_follows_no_reports_method():
    """No report drove these questions: no DolphinDB job scheduling or other method is applied or shown."""
    for experiment in TICK_PACK.experiments:
        assert experiment.methods() == [] and all(experiment.method_of(arm) == () for arm in experiment.arms)
        for _, scenario in experiment.scenarios("tiny", subject="dolphindb", subject_config={"nodes": []}):
            assert "parallelism" not in scenario.target_config and "priority" not in scenario.target_config


def test_the_html_report_names_the_pack_and_says_it_has_no_published_figures(ran):
    from app.report.suites import reproduction_view
    store, results = ran
    view = reproduction_view(reproduction(store, "tick", "tiny"), [r.run_id for r in results], with_charts=False)
    assert view.heading == "Tick pack" and "of Tick pack at tiny size" in view.runs_note
    assert view.no_pairs == "The tick pack has no published figures: its findings compare your engines below."
    assert not any("Report tick" in text for text in (view.runs_note, view.no_pairs))


def test_one_runs_ratio_gets_a_verdict_only_past_the_band_a_repeat_may_land_within():
    """Issue 52: a card played again must not flip its verdict; one run's 1.2-1.4 is within what a
    repeat may move by (±35 %), 2.0-2.4 is not."""
    verdict, why = between_runs(1.2, 1.4, "QuestDB", (30, 40))
    assert verdict == INCONCLUSIVE and "one run each, ±35 % across runs" in why, why
    assert between_runs(2.0, 2.4, "QuestDB", (30, 40))[0] == faster("QuestDB")
