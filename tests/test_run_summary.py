"""A finished run's answer: the figures that say how fast it was, where a sweep stops scaling, and
the published figures beside it; and the results view that shows it first."""
from __future__ import annotations

import pytest

from tests.test_history import handmade_run, op
from workloads.results.run_summary import KNEE_BAND, run_answer, sweep_knee, sweep_knees
from workloads.results.store import ResultsStore


@pytest.mark.parametrize("users, throughput, knee", [
    ([1, 2, 4, 8], [100, 190, 200, 205], 2),          # 2 -> 4 adds 5 %: it stopped at 2
    ([1, 2, 4, 8], [100, 200, 400, 800], None),       # grows all the way
    ([1, 2, 4, 8, 16], [100, 180, 300, 250, 240], 4),   # falls after 4
    ([1, 2], [100, 100], None),                       # two steps cannot show a knee
    ([8, 1, 4, 2], [205, 100, 200, 190], 2),          # order of the steps does not matter
    ([1, 2, 4, 8], [100, 105, 140, 135], 4),          # 2 adds 5 % but 4 adds 33 %: it grew to 4
])
def test_the_knee_is_where_adding_users_stops_adding_throughput(users, throughput, knee):
    assert sweep_knee(users, throughput) == knee


def test_a_knee_is_stated_only_where_the_band_two_runs_differ_by_allows_no_other():
    """Issue 52: two plays of one demo said "stops growing at 1 user" (its chart's 4 users highest)
    and then "at 2 users". Each step of one run moves up to ±35 % against another, as two runs do."""
    assert KNEE_BAND == pytest.approx(0.35)
    noisy_flat = sweep_knees([1, 2, 4, 8], [100, 108, 125, 120])
    assert not noisy_flat.settled and noisy_flat.at is None and noisy_flat.could_be == (1, 2, 4, None)
    assert noisy_flat.note() == ("no knee this run can show: within the ±35 % two runs differ by, throughput could "
                                 "stop growing at 1, 2 or 4 users or still grow at 8 users")
    # a plateau after a clear rise: where on it growth stopped is within the band
    assert sweep_knees([1, 2, 4, 8], [1000, 1900, 2000, 2050]).could_be == (2, 4, None)
    # a knee this run shows: a clear rise to 2 users, then clearly less
    fall = sweep_knees([1, 2, 4, 8], [1000, 2000, 1500, 1400])
    assert fall.settled and fall.at == 2 and fall.note() == "throughput stops growing at 2 users"
    grows = sweep_knees([1, 2, 4, 8], [100, 105, 110, 300])
    assert grows.settled and grows.at is None and grows.note() == "throughput still grows at the largest step"
    # with no band, the figures are taken as exact: sweep_knee's one knee
    assert sweep_knees([1, 2, 4, 8], [100, 108, 125, 120], band=0.0).could_be == (4,)


@pytest.fixture
def store(tmp_path):
    s = ResultsStore(tmp_path / "results")
    yield s
    s.close()


def _sweep(store, rows_per_s: list[int]) -> str:
    """A 1-2-4-8 users sweep whose steps move ``rows_per_s`` rows in a one-second window each."""
    steps = []
    for index, (users, rate) in enumerate(zip((1, 2, 4, 8), rows_per_s)):
        records = [op(index, i % users, i, 0.1 * (i + 1), 0.05, rows=rate // 10) for i in range(10)]
        steps.append((users, 1.0, records))
    return handmade_run(store, "sweep", steps, workload="slice-download")


def test_the_answer_of_a_sweep_names_its_knee_and_its_published_figures(store):
    answer = run_answer(store, _sweep(store, [1000, 1900, 2000, 2050]))
    assert [s.users for s in answer.steps] == [1, 2, 4, 8] and answer.is_sweep
    assert [s.rows_per_s for s in answer.steps] == pytest.approx([1000, 1900, 2000, 2050])
    assert answer.steps[0].p50_s == pytest.approx(0.05) and answer.steps[0].ops == 10
    # 2 -> 4 -> 8 users add 5 % and 2.5 %, well within what two runs differ by: no knee stated
    assert answer.knee_users is None and answer.knee_note.startswith("no knee this run can show"), answer.knee_note
    assert "could stop growing at 2 or 4 users or still grow at 8 users" in answer.knee_note
    assert answer.published_sweeps and all(s.label.startswith("report ") for s in answer.published_sweeps)


def test_the_results_view_shows_the_answer_first(store, make_widget):
    from widgets.run.results_view import RunResultsView, headline_step

    answer = run_answer(store, _sweep(store, [1000, 1900, 2000, 2050]))
    view = make_widget(RunResultsView, size=(1100, 700))
    view.show_answer(answer)
    assert headline_step(answer).users == 8                      # the fastest step answers "how fast"
    headline = view.headline_label.text()
    assert "2.05 k rows/s" in headline and "at 8 users" in headline and "p50/p95/p99" in headline
    assert view.table.rowCount() == 4 and view.table.item(1, 2).text() == "1.9 k"
    assert view.knee_label.text().startswith("Users sweep: no knee this run can show")
    assert view.sweep_chart.isVisible() and not any(n.startswith("knee") for n in view.sweep_chart.series_names())
    assert set(view.sweep_chart.series_names(reference=True)) == {s.label for s in answer.published_sweeps}


def test_the_results_view_marks_a_knee_the_run_shows(store, make_widget):
    from widgets.run.results_view import RunResultsView

    answer = run_answer(store, _sweep(store, [1000, 2000, 1500, 1400]))
    assert answer.knee_users == 2 and answer.knee_note == "throughput stops growing at 2 users"
    view = make_widget(RunResultsView, size=(1100, 700))
    view.show_answer(answer)
    assert view.knee_label.text() == "Users sweep: throughput stops growing at 2 users."
    assert "knee: 2 users" in view.sweep_chart.series_names()


def test_one_step_shows_no_sweep_and_nothing_measured_says_so(store, make_widget):
    from widgets.run.results_view import RunResultsView

    view = make_widget(RunResultsView, size=(900, 500))
    one = handmade_run(store, "one", [(1, 2.0, [op(0, 0, i, 0.2 * (i + 1), 0.1) for i in range(6)])])
    view.show_answer(run_answer(store, one))
    assert not view.sweep_chart.isVisible() and not view.knee_label.isVisible()
    assert "step 1 users" in view.headline_label.text() or "step" in view.headline_label.text()
    empty = handmade_run(store, "empty", [(1, 0.0, [])], status="failed")
    view.show_answer(run_answer(store, empty))
    assert view.headline_label.text().startswith("Nothing was measured")


@pytest.mark.parametrize("load, busy", [(3.1, True), (0.9, False)])
def test_a_run_begun_on_a_busy_machine_says_so(store, load, busy):
    environment = {"host": "test-host", "cores_logical": 2, "load_average": [load, 1.0, 0.5]}
    handmade_run(store, "loaded", [(1, 2.0, [op(0, 0, i, 0.2 * (i + 1), 0.1) for i in range(6)])],
                 environment=environment)
    note = run_answer(store, "loaded").busy
    assert bool(note) is busy
    if busy:
        assert "load average 3.1 on 2 logical cores" in note
    # show says it too, as the window does
    import subprocess
    import sys
    from pathlib import Path
    shown = subprocess.run([sys.executable, "-m", "app", "--results", str(store.path), "show", "loaded"],
                           capture_output=True, text=True, timeout=120, cwd=Path(__file__).resolve().parent.parent)
    assert shown.returncode == 0, shown.stderr
    assert ("load average 3.1 on 2 logical cores" in " ".join(shown.stdout.split())) is busy


def test_every_run_records_the_load_average_it_began_with():
    import os
    from workloads.run.environment import capture_environment
    load = capture_environment()["load_average"]
    assert len(load) == 3 and all(v >= 0 for v in load) and load[0] == pytest.approx(os.getloadavg()[0], abs=2.0)
