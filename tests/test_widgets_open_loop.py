"""The window's open-loop parts: the form's Rate row and the latency-against-offered-load chart."""
from __future__ import annotations

import numpy as np
import pytest

from workloads.results.run_summary import RunAnswer, StepAnswer
from workloads.scenario import Scenario

LOCAL = [("duckdb", "DuckDB (embedded)", "duckdb", {"path": "/tmp/x.duckdb"})]


def _step(rate, latency_p99, service_p99, late=0) -> StepAnswer:
    return StepAnswer(label=f"1 user at {rate:g} ops/s", users=1, ops=int(rate), errors=0, rows_per_s=None,
                      mb_per_s=None, ops_per_s=float(rate), p50_s=service_p99 / 2, p95_s=None, p99_s=service_p99,
                      first_op_s=None, rate=float(rate), latency_p50_s=latency_p99 / 3, latency_p99_s=latency_p99,
                      late_ops=late)


def _answer() -> RunAnswer:
    steps = [_step(100, 0.0021, 0.002), _step(400, 0.0023, 0.002), _step(1600, 0.400, 0.002, late=900)]
    return RunAnswer(run_id="r", name="open", status="completed", message="", target="duckdb", workload="noop",
                     dataset="taq", cache="warm", steps=steps, load_knee_rate=1600.0,
                     load_note="p99 latency departs from the service time at 1,600 ops/s offered")


def test_an_open_loop_answer_draws_latency_against_offered_load_with_its_knee(make_widget):
    from widgets.run.results_view import RunResultsView

    view = make_widget(RunResultsView, size=(1100, 700))
    view.show_answer(_answer())
    assert view.load_chart.isVisible() and not view.sweep_chart.isVisible()
    view.load_chart.render_now()
    rates, p99 = view.load_chart.plotted("latency p99 (from intended start)")
    assert rates.tolist() == [100, 400, 1600] and np.allclose(p99, [0.0021, 0.0023, 0.400])
    _, service = view.load_chart.plotted("service time p99")
    assert np.allclose(service, [0.002] * 3)
    assert view.load_chart.knee_text() == "knee: 1,600 ops/s"
    assert "Open loop: p99 latency departs from the service time at 1,600 ops/s" in view.knee_label.text()
    # the table: what a client on the schedule waited beside the service time, late and missed starts
    assert view.table.horizontalHeaderItem(5).text() == "latency p99"
    assert view.table.item(2, 5).text() == "400 ms" and view.table.item(2, 7).text() == "2 ms"
    assert view.table.item(2, 8).text() == "900 · 0"
    headline = view.headline_label.text()        # the highest rate still served answers
    assert "offered 400 ops/s" in headline and "from the intended start" in headline


def test_a_closed_loop_answer_hides_the_load_chart(make_widget):
    from widgets.run.results_view import RunResultsView

    view = make_widget(RunResultsView, size=(900, 500))
    closed = RunAnswer(run_id="c", name="closed", status="completed", message="", target="duckdb",
                       workload="read-day", dataset="taq", cache="warm",
                       steps=[StepAnswer("1 user", 1, 10, 0, 1e6, 40.0, 10.0, 0.1, 0.1, 0.1, 0.2)])
    view.show_answer(closed)
    assert not view.load_chart.isVisible() and view.table.horizontalHeaderItem(5).text() == "p50"


@pytest.fixture
def builder(make_widget, tmp_path):
    from widgets.scenario.builder import ScenarioBuilder

    form = make_widget(ScenarioBuilder, tmp_path, size=(480, 900))
    form.set_targets(LOCAL)
    return form


def test_the_forms_rate_row_round_trips_an_open_loop_scenario(builder):
    scenario = Scenario(name="open", target="duckdb", target_config=LOCAL[0][3], workload="read-day",
                        params={"columns": "all"}, users=(2,), operations=0, duration_s=10.0, rate=(500.0, 2000.0), rate_per="user",
                        schedule="poisson")
    builder.set_scenario(scenario)
    assert builder.rate_field.rate_edit.text() == "500,2000"
    assert builder.scenario() == scenario
    builder.rate_field.rate_edit.setText("")
    assert builder.scenario().rate == () and not builder.rate_field.schedule_combo.isEnabled()


def test_a_bad_rate_is_explained_and_nothing_runs(builder, qtbot):
    builder.rate_field.rate_edit.setText("fast")
    with qtbot.assertNotEmitted(builder.run_requested):
        builder.run_button.click()
    assert "Rate" in builder.error_label.text() and "500,1000,2000" in builder.error_label.text()
