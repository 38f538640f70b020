"""CompareView fits the central area of any window from 1280 px (docks of 300-350 px beside it):
both charts whole, titles and every legend key in view, long run names shortened with their full
text on hover. Each width is also saved as a PNG under the test's tmp dir, to look at."""
from __future__ import annotations

import pytest
from PySide6.QtCore import QPoint, QPointF
from PySide6.QtTest import QTest

from widgets.history.compare_view import MIN_CHART_WIDTH, TABLE_COLUMNS, CompareView
from widgets.common.plain_text import tooltip_words

LONG = "Quick start: read a TAQ day from Parquet with 1 and 2 users, cold cache (2024-05-01 12:34)"
SHORT = "duckdb read-day (r-20240501-123456)"


def rows(*labels: str) -> list[dict]:
    out = []
    for i, label in enumerate(labels):
        for users in (1, 2, 4):
            out.append({"run": label, "step_label": f"{users} user" + ("s" if users > 1 else ""),
                        "users": users, "rows_per_s": (1 + i) * 1e6 * users ** 0.7, "mb_per_s": 45.0 * users,
                        "ops_per_s": 2.0 * users, "p50_ms": 120.0, "p99_ms": 300.0, "first_op_ms": 400.0,
                        "window_s": 3.2, "io_ms": 50.0, "decode_ms": 60.0, "query_ms": 20.0 * i,
                        "mean_ms": 140.0, "short": users == 4})
    return out


def settle(qtbot, view: CompareView) -> None:
    view.tabs.setCurrentWidget(view.throughput_page)      # it opens on the verdicts
    for chart in (view.sweep_chart, view.breakdown_chart):
        chart.render_now()
    qtbot.wait(50)             # let the scene's layouts take the new texts' sizes
    for chart in (view.sweep_chart, view.breakdown_chart):
        chart.render_now()


def assert_fits(view: CompareView) -> None:
    sweep, breakdown = view.sweep_chart, view.breakdown_chart
    assert min(sweep.width(), breakdown.width()) >= MIN_CHART_WIDTH
    assert abs(sweep.width() - breakdown.width()) <= 0.1 * max(sweep.width(), breakdown.width())
    for chart in (sweep, breakdown):
        scene = chart.graphics.rect()
        title = chart.plot_item.titleLabel
        # the whole title is drawn: its text is no wider than the room it was given
        assert title.item.boundingRect().width() <= title.width() + 1, chart.title
        assert title.sceneBoundingRect().right() <= scene.right() + 1
        for _sample, label in chart.legend.items:
            box = label.sceneBoundingRect()
            assert box.right() <= scene.right() + 1 and box.bottom() <= scene.bottom() + 1, label.text
        plot = chart.plot_item.getViewBox().sceneBoundingRect()
        assert plot.width() >= 0.4 * chart.width() and plot.right() <= scene.right() + 1
    assert breakdown.plot_item.getAxis("left").width() <= 0.45 * breakdown.width()


@pytest.mark.parametrize("width", [900, 1000, 1130, 1250, 1600])
def test_both_charts_fit_at_every_width(make_widget, qtbot, tmp_path, width):
    view = make_widget(CompareView, size=(width, 760))
    view.show_runs(rows(LONG, SHORT))
    settle(qtbot, view)
    view.grab().save(str(tmp_path / f"compare_{width}.png"))
    assert_fits(view)
    assert view.sweep_chart.legend_labels() == [LONG, SHORT]          # every key, none hidden
    assert len(view.sweep_chart.legend.items) == 2


def test_filled_while_hidden_then_shown_narrow(make_widget, qtbot):
    # the main window fills the view in a tab not shown yet, then switches to it
    view = make_widget(CompareView, show=False, size=(1600, 760))
    view.show_runs(rows(LONG, SHORT))
    view.resize(900, 760)
    view.show()
    qtbot.waitExposed(view)
    settle(qtbot, view)
    assert_fits(view)


def test_long_run_names_are_shortened_with_their_full_text_on_hover(make_widget, qtbot):
    view = make_widget(CompareView, size=(900, 760))
    view.show_runs(rows(LONG, SHORT))
    settle(qtbot, view)
    assert tooltip_words(view.table.item(0, 0).toolTip()) == LONG
    breakdown = view.breakdown_chart
    assert breakdown.categories() == [f"{LONG} · 2 users", f"{SHORT} · 2 users"]   # best step not short
    axis = breakdown.plot_item.getAxis("left")
    drawn = [text for _, text in axis._tickLevels[0]]
    assert "…" in drawn[0] and drawn[0].endswith("2 users")         # both ends of the name kept

    def hover(y: float) -> str:
        """Move the mouse over the axis at bar `y`; the axis' tooltip then."""
        scene = breakdown.plot_item.getViewBox().mapViewToScene(QPointF(0, y))
        scene.setX(axis.sceneBoundingRect().center().x())
        where = breakdown.graphics.mapFromScene(scene)
        QTest.mouseMove(breakdown.graphics.viewport(), where - QPoint(3, 0))
        qtbot.wait(40)          # pyqtgraph drops mouse moves closer together than its rate limit
        QTest.mouseMove(breakdown.graphics.viewport(), where)
        qtbot.wait(40)
        return tooltip_words(axis.toolTip())

    assert hover(0.0) == f"{LONG} · 2 users"
    second = f"{SHORT} · 2 users"
    assert hover(1.0) == ("" if drawn[1] == second else second)   # drawn in full: nothing to add
    legend_label = view.sweep_chart.legend.items[0][1]
    assert tooltip_words(legend_label.toolTip()) in ("", LONG)  # shortened only when it does not fit


def test_title_counts_runs_in_words(make_widget):
    view = make_widget(CompareView, show=False)
    view.show_runs(rows(SHORT))
    assert view.title.text() == "Comparing 1 run"
    view.show_runs(rows(LONG, SHORT))
    assert view.title.text() == "Comparing 2 runs"


def test_new_runs_undo_a_zoom(make_widget, qtbot):
    from tests.wheel_events import wheel_over_plot

    view = make_widget(CompareView, size=(1100, 760))
    view.show_runs(rows(SHORT))
    settle(qtbot, view)
    wheel_over_plot(view.sweep_chart, steps=2)
    assert view.sweep_chart.user_view
    view.show_runs(rows(LONG, SHORT))
    assert not view.sweep_chart.user_view and not view.sweep_chart.reset_button.isVisible()


def test_the_table_says_what_a_cold_runs_clears_emptied(make_widget, qtbot, tmp_path):
    """Issue 40: compare says which runs were cold in the reports' sense (compare_frame's column)."""
    given = rows("engine-cold", "warm")
    for row in given:
        row["cleared"] = "engine caches only" if row["run"] == "engine-cold" else ""
    view = make_widget(CompareView, size=(1280, 760))
    view.show_runs(given)
    settle(qtbot, view)
    column = [title for title, _ in TABLE_COLUMNS].index("cold: cleared")
    assert [view.table.item(r, column).text() for r in (0, 3)] == ["engine caches only", ""]
    view.grab().save(str(tmp_path / "compare_cold.png"))
