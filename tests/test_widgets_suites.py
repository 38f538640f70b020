"""The window's side of reports 001 and 004: per-query bars (not supported and failed as states of
their own, a differing answer in red with both answers a click away), footprint bars with their
ratios, the dashboard's Queries and Footprint tabs, the compare view, and charts that fit their
view after being laid out wider."""
from __future__ import annotations

from PySide6.QtCore import QPointF, Qt

from widgets.history.answers_dialog import AnswersDialog
from widgets.charts.breakdown import BreakdownChart
from widgets.history.compare_view import CompareView
from widgets.run.dashboard import LiveDashboard
from widgets.run.header import step_figures_line
from widgets.charts.footprint import FootprintChart, format_bytes, ratio_text
from widgets.charts.query import DIFFERS_TEXT, QueryChart
from workloads.run.snapshot import LiveSnapshot, QueryPoint, SweepPoint


def q(query, mean=None, status="ok", fp="aaaa", **extra):
    return QueryPoint(query, mean_s=mean, status=status, fingerprint=fp if status == "ok" else "", **extra)


SERIES = {
    "duckdb": [q("t01", 0.010), q("t02", 0.020), q("t03", 0.030), q("t04", None, "failed", error="boom")],
    "parquet": [q("t01", 0.040), q("t02", 0.050, fp="bbbb"), q("t03", None, "not supported"), q("t04", 0.001)],
}
FOOTPRINT = {"bytes": 10_000_000, "csv_bytes": 50_000_000, "logical_bytes": 36_000_000, "csv_ratio": 5.0,
             "logical_ratio": 3.6, "replicas": 1, "method": "file sizes"}


def test_query_bars_side_by_side_with_states_of_their_own(make_widget):
    chart = make_widget(QueryChart, size=(900, 500))
    chart.set_data(SERIES)
    chart.render_now()
    assert chart.queries() == ["t01", "t02", "t03", "t04"]
    widths = sorted(float(b.opts["width"][0]) for b in chart.bar_items())
    assert widths == [0.001, 0.010, 0.020, 0.030, 0.040, 0.050]     # no bar for failed / not supported
    labels = chart.label_texts()
    assert " failed" in labels and " not supported" in labels
    ticks = [t[1] for t in chart.plot_item.getAxis("left")._tickLevels[0]]
    assert ticks == ["t01", "t02", "t03", "t04"]


def test_a_differing_answer_is_red_and_named(make_widget, light_theme):
    chart = make_widget(QueryChart, size=(900, 500))
    chart.set_data(SERIES)
    chart.render_now()
    assert chart.differing() == ["t02"] and chart.reference("t04") == "parquet"   # duckdb failed t04
    assert chart.differs("parquet", "t02") and not chart.differs("duckdb", "t02")
    red = [b for b in chart.bar_items() if b.opts["brush"].style() == Qt.BrushStyle.BDiagPattern]
    assert len(red) == 1 and float(red[0].opts["width"][0]) == 0.050
    assert red[0].opts["pen"].color().name().upper() == light_theme.error.upper()
    assert any(DIFFERS_TEXT in text for text in chart.label_texts())
    assert "differs from the first series that answered (1 query)" in chart.note
    rows = {(r["series"], r["query"]): r for r in chart.table_rows()}
    assert rows[("parquet", "t02")]["differs"] and not rows[("parquet", "t01")]["differs"]
    chart.set_data({k: [p for p in v if p.query != "t02"] for k, v in SERIES.items()})
    assert chart.differing() == [] and "same answer" in chart.note


def test_clicking_a_query_names_it_and_hover_describes_it(make_widget, qtbot):
    chart = make_widget(QueryChart, size=(900, 500))
    chart.set_data({"duckdb": [q("t01", 0.01, category="filter", description="one symbol's day"),
                               q("t02", 0.02)]})
    chart.render_now()
    view = chart.plot_item.getViewBox()
    where = view.mapViewToScene(QPointF(0.005, 1.0))
    assert chart.query_at(where) == "t02"
    assert chart.query_at(view.mapViewToScene(QPointF(0.005, 0.1))) == "t01"
    assert chart.query_at(QPointF(-50, -50)) is None
    text = chart.describe("t01")
    assert text.startswith("t01 · filter\none symbol's day") and "mean 10 ms" in text and "answer aaaa" in text

    class Click:
        def scenePos(self):
            return where

    with qtbot.waitSignal(chart.query_clicked) as clicked:
        chart._on_click(Click())
    assert clicked.args == ["t02"]


def test_footprint_bars_carry_their_ratios(make_widget):
    chart = make_widget(FootprintChart, size=(900, 400))
    chart.set_data({"duckdb": FOOTPRINT, "empty": {"bytes": 0}, "pickle": {"bytes": 20_000_000}})
    chart.render_now()
    assert chart.labels() == ["duckdb", "pickle"]                     # nothing measured: no group
    widths = sorted(float(b.opts["width"][0]) for b in chart.bar_items())
    assert widths == [10e6, 20e6, 36e6, 50e6]                         # pickle has no CSV or memory size
    assert " 10 MB   CSV 5.00× · memory 3.60×" in chart.label_texts()
    assert ratio_text({**FOOTPRINT, "replicas": 3}).endswith("3 copies on disk")
    assert format_bytes(1_500) == "1.5 kB" and format_bytes(12) == "12 B"
    assert [r["label"] for r in chart.table_rows()] == ["duckdb", "pickle"]


def test_answers_dialog_sets_the_answers_side_by_side(make_widget):
    dialog = make_widget(AnswersDialog, size=(800, 400))
    previews = {"duckdb": {"rows": 2, "columns": ["symbol", "n"], "head": [["A", "1"], ["B", "2"]]},
                "parquet": {"rows": 2, "columns": ["symbol", "n"], "head": [["A", "1"], ["B", "3"]]}}
    dialog.show_answers("t02", "count per symbol", previews, {"duckdb": "aaaa", "parquet": "bbbb"}, "duckdb")
    assert set(dialog.tables) == {"duckdb", "parquet"}
    assert dialog.tables["parquet"].item(1, 1).text() == "3"
    titles = [w.text() for w in dialog.findChildren(type(dialog.heading)) if "rows" in w.text()]
    assert any("parquet" in t and "differs" in t for t in titles)
    assert any("duckdb" in t and "reference" in t for t in titles)


def test_compare_view_shows_suites_and_opens_both_answers(make_widget):
    view = make_widget(CompareView, size=(1000, 700))
    previews = {"duckdb": {"t02": {"rows": 1, "columns": ["n"], "head": [["1"]]}},
                "parquet": {"t02": {"rows": 1, "columns": ["n"], "head": [["2"]]}}}
    view.show_suites(SERIES, previews, {"duckdb": FOOTPRINT})
    queries, footprints = (view.tabs.indexOf(w) for w in (view.query_chart, view.footprint_chart))
    assert view.tabs.isTabVisible(queries) and view.tabs.isTabVisible(footprints)
    assert view.tabs.currentWidget() is view.verdicts          # the verdicts first, as the command line
    view.show_answers("t02")
    assert view.answers_dialog.isVisible()
    assert view.answers_dialog.tables["parquet"].item(0, 0).text() == "2"
    view.answers_dialog.close()
    view.show_suites({}, {}, {})
    assert not view.tabs.isTabVisible(queries) and not view.tabs.isTabVisible(footprints)


def snapshot(**changes) -> LiveSnapshot:
    base = dict(run_id="r1", status="completed", target="duckdb", workload="query-suite", step_index=0,
                steps_total=1, users=1, elapsed_s=1.0, ops_done=10, ops_failed=0, progress=1.0)
    return LiveSnapshot(**{**base, **changes})


def test_dashboard_shows_queries_and_footprint_tabs_only_with_data(make_widget):
    dash = make_widget(LiveDashboard, size=(1200, 700), apply_interval_ms=1)
    dash.show_final(snapshot(queries=SERIES["duckdb"], query_step="1 user",
                             footprints={"layout": FOOTPRINT, "steps": {0: FOOTPRINT}}))
    tabs = {dash.tabs.tabText(i): dash.tabs.isTabVisible(i) for i in range(dash.tabs.count())}
    assert tabs["Queries"] and tabs["Footprint"]
    assert dash.query_chart.queries() == ["t01", "t02", "t03", "t04"]
    assert dash.footprint_chart.labels() == ["duckdb table", "imported, step 1"]
    dash.show_final(snapshot(run_id="r2", workload="read-day"))
    tabs = {dash.tabs.tabText(i): dash.tabs.isTabVisible(i) for i in range(dash.tabs.count())}
    assert not tabs["Queries"] and not tabs["Footprint"]


def test_figures_line_names_the_csv_rate_of_imports():
    point = SweepPoint(users=1, rows_per_s=1e6, bytes_per_s=45e6, ops_per_s=2, p50=0.1, p99=0.2, complete=True,
                       label="1 user", wire_bytes_per_s=60e6, exact=True)
    assert "CSV 60 MB/s" in step_figures_line(snapshot(workload="import", sweep=[point]), "#000")
    assert "read 60 MB/s" in step_figures_line(snapshot(workload="read-day", sweep=[point]), "#000")
    unknown = SweepPoint(**{**point.__dict__, "wire_bytes_per_s": None})
    assert "CSV" not in step_figures_line(snapshot(workload="import", sweep=[unknown]), "#000")


def test_a_chart_laid_out_wide_fits_a_narrower_view_again(make_widget, qapp):
    for factory in (QueryChart, BreakdownChart, FootprintChart):
        chart = make_widget(factory, size=(1400, 500))
        chart.set_note("A note long enough to wrap when the chart is narrow: " + "words " * 30)
        qapp.processEvents()
        chart.resize(700, 500)
        qapp.processEvents()
        assert chart.graphics.ci.geometry().width() <= chart.graphics.width() + 1, factory.__name__


def test_many_long_series_names_wrap_in_the_legend_instead_of_pushing_the_bars_out(make_widget, qapp):
    names = [f"{engine}: report 001 suite" for engine in
             ("DuckDB (embedded)", "ClickHouse (chDB, embedded)", "ArcticDB (LMDB)", "HDF5 (PyTables)")]
    chart = make_widget(QueryChart, size=(700, 500))
    chart.set_data({name: [q("t01", 0.01 * (i + 1))] for i, name in enumerate(names)})
    chart.render_now()
    qapp.processEvents()
    assert 1 <= chart.legend.columnCount < len(names)          # four keys do not fit one 700 px row
    assert chart.legend.rowCount == -(-len(names) // chart.legend.columnCount)
    assert chart.graphics.ci.geometry().width() <= chart.graphics.width() + 1
    view = chart.plot_item.getViewBox()
    assert view.viewRange()[0][1] >= 0.04                      # the longest bar is inside the view
    assert view.sceneBoundingRect().right() <= chart.graphics.width() + 1
    chart.resize(1800, 500)
    qapp.processEvents()
    assert chart.legend.columnCount == len(names)              # room for one row again
