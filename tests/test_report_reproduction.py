"""The report's Reproduction section: a gallery report's published figures (their hardware) beside
the measured ones (this machine) and its findings as ratios, from real gallery runs; run ids linked
to the runs' sections; text from the store escaped by the templates; the same in the PDF."""
from __future__ import annotations

import html
import re
from dataclasses import replace

import pytest
from PySide6.QtGui import QImage

from app.report.document import pdf_document, pdf_page_size, write_report
from app.report.charts import render_reproduction_charts
from app.report.as_html import Cell, environment, html_table
from app.report.suites import reproduction_view, reproduction_views
from tests.test_history import STEP0, handmade_run
from tests.test_report import Tables, layout_faults, pdf_html, pdf_pages, pdf_text
from workloads.scenario import parse_slot
from workloads.reproduce.published import Pair
from workloads.reproduce.reproduction import reproduction
from workloads.reproduce.run_report import planned_runs, run_planned
from workloads.results.store import ResultsStore

SCRIPT = "<script>alert(1)</script>"


@pytest.fixture(scope="module")
def gallery(tmp_path_factory):
    """Gallery runs made for real at tiny size (seconds): report 002's upload sweep and report 003's
    spread by minute, cold and warm (a finding's ratio); and a hand-made run whose name is markup."""
    folder = tmp_path_factory.mktemp("report_reproduction")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("TICKBENCH_HOME", str(folder / "home"))
        store = ResultsStore(folder / "results")
        planned = planned_runs("002", "tiny", "duckdb", None, folder / "data", experiments=["upload"]) + [
            plan for plan in planned_runs("003", "tiny", "duckdb", None, folder / "data", experiments=["compute"])
            if plan[1].key.startswith("spread-by-minute-")]
        assert len(planned) == 3
        results = run_planned(store, planned)
        assert [r.status for r in results] == ["completed"] * 3, [r.message for r in results]
        handmade_run(store, "markup", [(2, 3.0, STEP0)], name=SCRIPT)
        yield store, [r.run_id for r in results]
    store.close()


def section(text: str, report: str) -> str:
    """The HTML of one report's reproduction, up to the next one or the first run's section."""
    start = text.index(f"<h3 id='reproduction-{report}-tiny'>")
    ends = [i for i in (text.find("<h3 id='reproduction-", start + 1), text.find("<h2 id='run-", start)) if i > 0]
    return text[start:min(ends)]


@pytest.mark.parametrize("report", ["002", "003"])
def test_html_report_shows_published_beside_measured_and_the_findings(gallery, report, tmp_path, qtbot,
                                                                      light_theme):
    store, ids = gallery
    assert {parse_slot(store.run(i)["scenario"]["experiment"])[0] for i in ids} == {"002", "003"}
    text = write_report(store, ids, tmp_path / "repro.html").read_text(encoding="utf-8")
    assert text.count("<h2 id='reproduction'") == 1
    part = section(text, report)
    page = Tables(part)
    plain = html.unescape(re.sub(r"<[^>]+>", "", part))
    expected = reproduction(store, report, "tiny")
    assert expected.pairs and expected.findings
    assert plain.startswith(f"Report {report} at tiny size: {expected.card.title}")
    # published beside measured, experiment by experiment, labelled with whose hardware each is;
    # an experiment not run at this size is named with how to run it, not shown as a table of dashes
    run = {p.experiment for p in expected.pairs if p.run_id}
    assert run == {"002": {"upload batch-size sweep"}, "003": {"the three computations"}}[report]
    shown = [p for p in expected.pairs if p.experiment in run]
    hardware = list(dict.fromkeys(p.hardware for p in shown))
    marks = {h: str(i + 1) for i, h in enumerate(hardware)}
    one = len(hardware) == 1
    published = "Published(their hardware)" + ("1" if one else "")
    rows = [row for table in page.tables if table and table[0][:2] == ["Figure", published]
            for row in (dict(zip(table[0], r)) for r in table[1:])]
    assert [(r["Figure"], r[published], r["Measured(this machine)"], r["Run"]) for r in rows] == [
        (p.figure, p.published + ("" if one else marks[p.hardware]), p.measured, p.run_id or "—") for p in shown]
    assert sum(p.measured_value is not None for p in shown) == {"002": 1, "003": 2}[report]
    for h, mark in marks.items():
        assert f"{mark} Published on report {report}'s hardware: {h}" in plain
    assert "Measured on this machine: " in plain
    not_run = [e for e in expected.card.experiments if e.title not in run]
    assert all(f"{e.title} (" in plain for e in not_run if any(p.experiment == e.title for p in expected.pairs))
    if report == "002":
        assert "Not run at tiny size, so only published figures so far: concurrent appends (" in plain
        assert "tickbench reproduce 002 --scale tiny --experiment append" in plain
    else:       # two measured figures of the three computations: paired bars, each side on its own scale
        assert "alt='the three computations'" in part
        assert "each as a percentage of the largest ms figure on its own side" in part
    # the findings as ratios, each with its verdict and the runs behind it, linked to their sections
    rows = page.table_with("Finding", "Verdict")
    assert len(rows) == len(expected.findings)
    for row, finding in zip(rows, expected.findings):
        assert row["Finding"].startswith(finding.statement)
        assert row["Published(their hardware)"] == finding.published
        assert row["Measured(this machine)"] == finding.measured
        assert row["Verdict"].startswith(finding.verdict) and finding.why in row["Verdict"]
        assert all(run_id in row["Finding"] for run_id in finding.run_ids)
    behind = {rid for f in expected.findings for rid in f.run_ids} | {p.run_id for p in shown if p.run_id}
    assert behind and behind <= set(ids)
    for run_id in behind:
        assert f"<a href='#run-{run_id}'>{run_id}</a>" in part             # a link to the run's section...
        assert f"<h2 id='run-{run_id}'" in text                           # ...which is in the report
    if report == "003":
        spread = next(f for f in expected.findings if f.statement.startswith("spread by minute"))
        assert len(spread.run_ids) == 2 and spread.measured_value is not None and spread.verdict != "not measured"
    # each gallery run's section links back to its reproduction
    assert text.count(f"<a href='#reproduction-{report}-tiny'>") == {"002": 1, "003": 2}[report]


def test_a_report_without_gallery_runs_has_no_reproduction(gallery, tmp_path, qtbot, light_theme):
    store, _ids = gallery
    text = write_report(store, ["markup"], tmp_path / "plain.html").read_text(encoding="utf-8")
    assert "Reproduction of the seed reports" not in text and "Findings as ratios" not in text


def test_text_from_the_store_is_escaped_never_markup(gallery, tmp_path, qtbot, light_theme):
    store, ids = gallery
    text = write_report(store, ["markup", *ids], tmp_path / "escaped.html").read_text(encoding="utf-8")
    assert SCRIPT not in text and "<script" not in text
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in text
    runs = Tables(text).table_with("Run", "Took")
    assert runs[0]["Run"] == f"{SCRIPT}markup"                            # the name as text, the id under it
    # the templates and the environment escape whatever they are given
    assert environment().from_string("{{ x }}").render(x=SCRIPT) == "&lt;script&gt;alert(1)&lt;/script&gt;"
    assert SCRIPT not in html_table([SCRIPT], [[SCRIPT, Cell(SCRIPT, sub=SCRIPT, href="#x")]])


def test_pdf_has_the_reproduction_on_pages_with_nothing_cut(gallery, tmp_path, monkeypatch, qtbot, light_theme):
    store, ids = gallery
    document = pdf_html(store, ["markup", *ids], tmp_path, monkeypatch)   # writes tmp_path/layout.pdf too
    path = tmp_path / "layout.pdf"
    data = path.read_bytes()
    assert data.startswith(b"%PDF") and pdf_pages(path) >= 3
    laid_out = pdf_document(document, *pdf_page_size())
    assert layout_faults(laid_out) == []
    assert pdf_pages(path) == laid_out.pageCount()
    text = pdf_text(path)
    assert "Reproduction of the seed reports" in text and "Findings as ratios" in text
    assert "(their hardware)" in text and "(this machine)" in text
    assert SCRIPT in text                                                 # the name, drawn as text


def test_runs_outside_the_report_are_named_not_linked(gallery):
    store, ids = gallery
    view = reproduction_view(reproduction(store, "003", "tiny"), in_report=[], with_charts=False)
    cells = [c for row in view.findings.rows for c in row[0].lines[1].parts[1:]]
    assert cells and all(isinstance(c, Cell) and c.css == "muted" and not c.href for c in cells)
    assert view.outside and not view.linked
    assert reproduction_views(store, [store.run("markup")]) == []        # no gallery run: no reproduction


def test_paired_chart_puts_each_side_on_its_own_scale(qapp, light_theme):
    pairs = [Pair("reads", f"{n} users", f"{v} M rows/s", f"{m} M rows/s", "M rows/s", v, m, "their cluster", "r1")
             for n, v, m in ((1, 2.0, 0.02), (4, 5.0, 0.05))]
    figures = render_reproduction_charts("reads", pairs, "003")
    assert len(figures) == 1
    image = QImage.fromData(figures[0].png, "PNG")
    assert not image.isNull() and image.width() >= 600
    assert "each as a percentage of the largest M rows/s figure on its own side" in figures[0].caption
    # one measured figure is 100 % beside 100 %: no chart; an unmeasured pair is left out
    assert render_reproduction_charts("reads", pairs[:1], "003") == []
    assert render_reproduction_charts("reads", [pairs[0], replace(pairs[1], measured_value=None)], "003") == []


def test_estimates_calibrated_on_this_machines_runs_hold_the_waits_they_learnt_from(gallery):
    """The gallery's three real tiny runs calibrate the model: each run's ratio is its stored wall
    time over the model's seconds, the upload card's calibrated range holds the wait its run took,
    and runs of another host do not count."""
    import os
    from workloads.reproduce.calibration import MARGIN, calibration
    from workloads.reproduce.catalog import REPORTS
    from workloads.reproduce.estimate import UNCALIBRATED, data_seconds, estimate, steps_seconds
    from workloads.scenario import Scenario
    store, ids = gallery
    found = calibration(store)
    assert found.runs == 3 and found.basis == "calibrated on 3 runs on this machine"
    assert calibration(store, host="another-machine").runs == 0
    waited, laid_out = {}, set()
    for run_id in sorted(ids, key=lambda i: store.run(i)["created_at"]):
        run = store.run(run_id)
        scenario = Scenario.from_dict(run["scenario"])
        waited[run_id] = (run["finished_at"] - run["created_at"]).total_seconds()
        steps = steps_seconds(scenario, os.cpu_count())
        first = (scenario.target, scenario.dataset, scenario.scale) not in laid_out      # it generated the data
        laid_out.add((scenario.target, scenario.dataset, scenario.scale))
        model = steps + (data_seconds(scenario) if first else 0.0)
        kind = found.ratios[(scenario.workload, scenario.cache)]
        assert any(r == pytest.approx(waited[run_id] / model) for r in kind), (run_id, kind)
    upload = REPORTS["002"].experiment("upload")
    plain, calibrated = estimate(upload, "tiny"), estimate(upload, "tiny", calibration=found)
    assert (plain.low_s, plain.high_s) == pytest.approx((plain.seconds * UNCALIBRATED[0], plain.seconds * UNCALIBRATED[1]))
    [(_arm, arm)] = upload.scenarios("tiny")
    prepare, steps = data_seconds(arm), steps_seconds(arm, os.cpu_count())
    # the gap between the two runs of 003's card (cold, then warm) is what a run's start costs
    card_runs = sorted((i for i in ids if "/compute/" in store.run(i)["scenario"]["experiment"]),
                       key=lambda i: store.run(i)["created_at"])
    gap = (store.run(card_runs[1])["created_at"] - store.run(card_runs[0])["finished_at"]).total_seconds()
    assert found.launch_s == [pytest.approx(gap)] and found.launch() == pytest.approx((gap, gap * MARGIN))
    assert (calibrated.low_s, calibrated.high_s) == pytest.approx(        # one run: no gap, at most a launch
        tuple(prepare * a + steps * k + n for a, k, n in
              zip(found.factors(), found.factors("upload-sweep", "warm"), (0.0, found.launch()[1]))))
    upload_run = next(i for i in ids if "/upload/" in store.run(i)["scenario"]["experiment"])
    assert calibrated.low_s < waited[upload_run] < calibrated.high_s
    [ratio] = found.ratios[("upload-sweep", "warm")]      # a kind with one run: its ratio, widened by the margin
    assert found.factors("upload-sweep", "warm") == pytest.approx((ratio / MARGIN, ratio * MARGIN))
    assert "calibrated on 3 runs on this machine" in calibrated.text


def test_what_a_card_waits_beyond_its_runs_is_learnt_from_the_gaps_between_them():
    """The window starts each run of a card in a process of its own: the seconds between one run's
    end and the next one's start (known here: 2 and 3 s) are learnt, and each run of a card adds
    one to its range; a pause longer than a launch, or between two cards, is not one. A kind not
    run here yet gets at least the uncalibrated range."""
    import datetime as dt
    import json
    from workloads.reproduce.calibration import LAUNCH_GAP_MAX_S, MARGIN, calibrate
    from workloads.reproduce.catalog import REPORTS
    from workloads.reproduce.estimate import UNCALIBRATED, estimate

    upload = REPORTS["002"].experiment("upload")
    [(_arm, scenario)] = upload.scenarios("tiny")
    t0 = dt.datetime(2026, 11, 26, 12, 0, tzinfo=dt.timezone.utc)
    spans = [(0, 10, "002/upload/a/tiny"), (12, 20, "002/upload/a/tiny"), (23, 30, "002/upload/a/tiny"),
             (30 + LAUNCH_GAP_MAX_S + 1, 200, "002/upload/a/tiny"),    # the user paused: no launch
             (201, 210, "003/compute/b/tiny")]                          # another card: no launch
    runs = [(t0 + dt.timedelta(seconds=start), t0 + dt.timedelta(seconds=end),
             json.dumps(scenario.with_changes(experiment=slot).to_dict())) for start, end, slot in spans]
    found = calibrate(runs, "this-host", 2)
    assert found.runs == 5 and found.launch_s == [2.0, 3.0]
    seen = found.factors(scenario.workload, scenario.cache)
    assert found.factors("ols-spread", "cold") == (min(seen[0], UNCALIBRATED[0]), max(seen[1], UNCALIBRATED[1]))
    assert found.launch() == pytest.approx((2.0, 3.0 * MARGIN))
    for experiment in (upload, REPORTS["000"].experiment("day-l1")):       # one run, and four
        runs = len(experiment.scenarios("tiny"))
        without = estimate(experiment, "tiny", calibration=replace(found, launch_s=[]))
        with_launch = estimate(experiment, "tiny", calibration=found)
        assert with_launch.low_s == pytest.approx(without.low_s + (runs - 1) * 2.0)     # the gaps between
        assert with_launch.high_s == pytest.approx(without.high_s + runs * 3.0 * MARGIN)  # a launch each


def test_a_cold_steps_rounds_of_clears_are_in_the_model():
    """A cold step clears the caches before every round of its users' operations: report 003's
    tiny cold read sweep (a round per slice per user count) costs that many rounds more than warm."""
    import os
    from workloads.reproduce.catalog import REPORTS
    from workloads.reproduce.estimate import COLD_ROUND_S, steps_seconds

    [(_arm, cold)] = REPORTS["003"].experiment("read").scenarios("tiny")
    assert cold.cache == "cold" and "rows_per_user" in cold.params
    warm = cold.with_changes(cache="warm")
    cores = os.cpu_count() or 1
    slices = cold.params["rows_per_user"] / (cold.scale.rows_per_day / cold.scale.symbols)
    rounds = sum(slices * COLD_ROUND_S * max(1.0, users / cores) for users in cold.users)
    assert steps_seconds(cold, cores) - steps_seconds(warm, cores) == pytest.approx(rounds, rel=0.05)
