"""How a run's users were started and run (issue 43: forked or spawned, settled or plain) is chosen
in the scenario form and shown wherever its figures are: the results view, History and the report.

The runs are real no-op runs on DuckDB, one with the defaults (forked, settled) and one spawned and
plain, so every view is checked against what the run itself recorded."""
from __future__ import annotations

import pytest
from PySide6.QtCore import Qt

from app.report.environment import _environment_rows
from widgets.charts.breakdown import format_seconds
from widgets.run.results_view import RunResultsView
from widgets.history.run_history import COLUMNS, RunHistoryView
from widgets.scenario.builder import ScenarioBuilder
from workloads.datasets.schema import Scale
from workloads.results.figures import step_figures
from workloads.results.history import history_rows
from workloads.results.run_summary import run_answer
from workloads.results.store import ResultsStore
from workloads.run import processes
from workloads.run.processes import describe_conditions
from workloads.run.runner import Runner
from workloads.scenario import Scenario
from workloads.targets.engines import default_config

pytestmark = pytest.mark.timeout(300)
TINY = Scale(days=1, rows_per_day=2_000, symbols=4)


def _noop(tmp_path, **changes) -> Scenario:
    return Scenario(workload="noop", users=(2,), operations=3, probe_ops=0, target="duckdb", scale=TINY,
                    target_config=default_config("duckdb", tmp_path / "data"), **changes)


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """(store, {"forked": run id, "spawned plain": run id}): one run of each kind, made once."""
    root = tmp_path_factory.mktemp("process_conditions")
    store = ResultsStore(root / "results")
    made = {}
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("TICKBENCH_HOME", str(root / "home"))
        try:
            for key, changes in (("forked", {}), ("spawned plain", {"start": "spawn", "process": "plain"})):
                result = Runner(_noop(root, name=key, **changes), store).run()
                assert result.status == "completed", result.message
                made[key] = result.run_id
        finally:
            processes.stop_forkserver()          # no server left behind for the next module
    return store, made


def test_the_form_round_trips_how_users_start_and_run(make_widget, tmp_path):
    form = make_widget(ScenarioBuilder, tmp_path, size=(480, 900))
    form.set_targets([("duckdb", "DuckDB (embedded)", "duckdb", {"path": "/tmp/x.duckdb"})])
    cold = Scenario(name="cold users", target="duckdb", target_config={"path": "/tmp/x.duckdb"},
                    params={"columns": "all"}, start="spawn", process="plain")
    form.set_scenario(cold)
    assert (form.scenario().start, form.scenario().process) == ("spawn", "plain")
    assert form.scenario() == cold
    assert form.process_options.start_combo.currentText() == "spawned (cold interpreter)"
    form.set_scenario(cold.with_changes(start="forkserver", process="settled"))
    assert (form.scenario().start, form.scenario().process) == ("forkserver", "settled")
    assert "60 MiB" in form.process_options.start_combo.toolTip()


def test_history_says_whether_users_were_forked_or_spawned_and_plain(runs, make_widget):
    store, made = runs
    view = make_widget(RunHistoryView, size=(1000, 400))
    view.set_rows(history_rows(store))
    column = [k for k, _ in COLUMNS].index("process")
    shown = {view.proxy.index(r, 0).data(Qt.ItemDataRole.UserRole): view.proxy.index(r, column).data()
             for r in range(view.proxy.rowCount())}
    assert shown == {made["forked"]: "forked", made["spawned plain"]: "spawned · plain"}
    assert view.model.headerData(column, Qt.Orientation.Horizontal) == "Process"


def test_the_results_view_shows_the_runs_own_process_conditions_and_when_its_users_were_ready(runs, make_widget):
    store, made = runs
    view = make_widget(RunResultsView, size=(1100, 700))
    for key in made:
        run_id = made[key]
        view.show_answer(run_answer(store, run_id))
        own = describe_conditions(store.run(run_id)["environment"]["process"])
        label = view.process_label
        assert label.full_text() == label.toolTip() == f"Process: {own}" and label.isVisible()
        shown = label.text()        # one line: whole, or its start and an ellipsis
        assert shown == label.full_text() or (shown.endswith("…") and label.full_text().startswith(shown[:-1]))
        assert own.startswith("forked" if key == "forked" else "spawned")
        ready = store.step_facts(run_id)[0]["users_ready_s"]
        assert ready > 0
        # the step's own line, after why it was too short to measure (3 operations a user are)
        assert view.table.item(0, 0).toolTip().splitlines()[-1] == \
            f"users ready in {format_seconds(ready)} (started, set up and warmed up)"
    view.clear()
    assert view.process_label.full_text() == view.process_label.text() == ""


def test_the_reports_environment_says_how_the_users_were_started_and_run(runs):
    store, made = runs
    run = store.run(made["spawned plain"])
    rows = dict(_environment_rows(run, step_figures(store, run["run_id"])))
    assert rows["Process"] == describe_conditions(run["environment"]["process"])
    assert rows["Process"].startswith("spawned") and "plain process" in rows["Process"]
