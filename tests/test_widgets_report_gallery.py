"""The report gallery: five cards, sizes with their cost, Run emitting the experiment's scenarios,
the comparator side only when one is chosen, findings with verdicts and run links; and in the real
window, an experiment run from its card and its measured figure back on the card."""
from __future__ import annotations

from types import SimpleNamespace

import pytest
from PySide6.QtCore import QPoint, Qt
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QLabel

from widgets.reports.card import verdict_colour
from widgets.reports.gallery import ReportGallery
from widgets.common.theme import current_theme
from workloads.reproduce import estimate as estimate_module
from workloads.reproduce.catalog import GALLERY, REPORTS
from workloads.scenario import parse_slot
from workloads.reproduce.findings import Finding
from workloads.reproduce.published import Pair
from workloads.reproduce.reproduction import Reproduction
from workloads.targets.engines import default_config

RUN_TIMEOUT_MS = 180_000


def local_targets(data_dir):
    return [(kind, label, kind, default_config(kind, data_dir))
            for kind, label in (("duckdb", "DuckDB (embedded)"), ("pickle", "Pickle files"),
                                ("parquet", "Parquet files"))]


@pytest.fixture
def gallery(make_widget, tmp_path):
    widget = make_widget(ReportGallery, tmp_path / "data", size=(1000, 700))
    widget.set_targets(local_targets(tmp_path / "data"))
    return widget


def _run(qtbot, button) -> list:
    gallery = next(w for w in _ancestors(button) if isinstance(w, ReportGallery))
    with qtbot.waitSignal(gallery.run_requested, timeout=2000) as emitted:
        qtbot.mouseClick(button, Qt.MouseButton.LeftButton)
    return emitted.args[0]


def _ancestors(widget):
    while widget is not None:
        yield widget
        widget = widget.parentWidget()


def test_five_cards_each_with_its_question_findings_and_experiments(gallery):
    assert list(gallery.cards) == ["000", "001", "002", "003", "004", "tick"]     # the tick pack last
    for report, card in GALLERY.items():
        view = gallery.card(report)
        assert card.title in view.title_label.text()
        assert card.asked.split(",")[0] in view.asked_label.text()
        assert view.found_label.text().count("•") == len(card.found)
        assert list(view.rows) == [e.key for e in card.experiments]
        for experiment in card.experiments:
            row = view.rows[experiment.key]
            assert experiment.title in row.title_label.text()
            assert row.size == "tiny" and row.subject_combo.currentData() == "duckdb"
            assert bool(experiment.needs) == row.needs_label.isVisibleTo(view)
        assert not view.results.isVisibleTo(view)          # no runs yet: no table, no findings


def test_the_size_changes_the_estimate_and_a_size_too_large_is_a_warning(gallery, monkeypatch):
    real = estimate_module.estimate
    # a machine with 4 GB: the report's own scale (a 230 M-row day) cannot fit, tiny can
    monkeypatch.setattr("widgets.reports.experiment_row.estimate",
                        lambda *args, **kwargs: real(*args, memory_bytes=4e9, **kwargs))
    row = gallery.row("000", "day-l1")
    row.set_size("medium")
    row.set_size("tiny")
    tiny = row.estimate_label.text()
    assert tiny == "4 runs, " + real(row.experiment, "tiny", memory_bytes=4e9).text
    assert current_theme().warning not in row.estimate_label.styleSheet()
    row.set_size("report")
    large = row.estimate_label.text()
    assert large != tiny and "needs more memory than this machine has (4 GB)" in large
    assert current_theme().warning in row.estimate_label.styleSheet()


def test_run_emits_the_experiment_at_the_chosen_size_on_the_chosen_target(qtbot, gallery, tmp_path):
    row = gallery.row("000", "day-l1")
    row.set_size("medium")
    row.subject_combo.setCurrentIndex(row.subject_combo.findData("parquet"))
    scenarios = _run(qtbot, row.run_button)
    assert len(scenarios) == len(row.experiment.arms) == 4
    medium = row.experiment.sizes["medium"]
    for scenario in scenarios:
        report, experiment, arm, size = parse_slot(scenario.experiment)
        assert (report, experiment, size) == ("000", "day-l1", "medium")
        assert scenario.scale == medium.scale and scenario.duration_s == medium.duration_s
        fixed = row.experiment.arm(arm).target == "pickle"
        assert scenario.target == ("pickle" if fixed else "parquet")
        assert scenario.target_config == default_config(scenario.target, tmp_path / "data")
    assert {parse_slot(s.experiment)[2] for s in scenarios} == {a.key for a in row.experiment.arms}


def test_the_whole_report_and_the_demo_playlist(qtbot, gallery):
    gallery.row("003", "read").set_size("medium")
    scenarios = _run(qtbot, gallery.card("003").run_all_button)
    slots = [parse_slot(s.experiment) for s in scenarios]
    assert [s[1] for s in slots] == ["write", "read"] + ["compute"] * 6
    assert [s[3] for s in slots] == ["tiny", "medium"] + ["tiny"] * 6       # each row's own size
    # beside the button: what the whole report takes, its rows' estimates one after another
    card = gallery.card("003")
    rows = list(card.rows.values())
    whole = estimate_module.together([row.estimate() for row in rows])
    assert card.total_label.text() == f"The whole report: 8 runs, {whole.text}"
    before = whole.high_s
    gallery.row("003", "write").set_size("medium")
    assert card.total_label.text() != f"The whole report: 8 runs, {whole.text}"
    assert estimate_module.together([row.estimate() for row in rows]).high_s > before
    demo = _run(qtbot, gallery.demo_button)
    assert {parse_slot(s.experiment)[0] for s in demo} == set(REPORTS)
    assert {parse_slot(s.experiment)[3] for s in demo} == {"tiny"}
    assert {s.target for s in demo} == {"duckdb", "pickle"}                  # no Druid, no MongoDB


def test_the_comparator_side_runs_only_when_a_comparator_is_chosen(qtbot, gallery, tmp_path):
    row = gallery.row("001", "import")
    assert row.comparator_combo.count() == 0 and not row.comparator_combo.isEnabled()
    assert "left out" in row.needs_label.text() and "Druid" in row.needs_label.text()
    alone = _run(qtbot, row.run_button)
    assert [parse_slot(s.experiment)[2] for s in alone] == ["subject"]

    druid = ("druid:lab", "Druid lab", "druid", {"host": "lab", "port": 8888})
    gallery.set_targets(local_targets(tmp_path / "data") + [druid])
    assert row.comparator_combo.currentData() == "druid:lab" and row.comparator_combo.isEnabled()
    assert "runs on Druid lab" in row.needs_label.text()
    both = _run(qtbot, row.run_button)
    assert [(parse_slot(s.experiment)[2], s.target) for s in both] == [("subject", "duckdb"), ("comparator", "druid")]
    assert both[1].target_config == {"host": "lab", "port": 8888, "target_key": "druid:lab"}
    assert gallery.row("001", "import").subject_combo.findData("druid:lab") >= 0   # any target can be the subject

    row.comparator_combo.setCurrentIndex(row.comparator_combo.findData(None))
    assert "left out" in row.needs_label.text()
    gallery.set_targets(local_targets(tmp_path / "data") + [druid])             # a refresh keeps "leave it out"
    assert row.comparator_combo.currentData() is None
    assert [parse_slot(s.experiment)[2] for s in _run(qtbot, row.run_button)] == ["subject"]
    assert gallery.row("002", "upload").comparator_combo.isHidden()           # nothing to compare with


def _reproduction() -> Reproduction:
    card = REPORTS["003"]
    pairs = [Pair("the three computations", "spread-by-minute, cold cache", "17,647 ms", "48.2 ms", "ms",
                  17647.0, 48.2, "a cluster of four servers", "run-a"),
             Pair("write throughput", "2 nodes, 16 users", "4.7 M rows/s", "—", "M rows/s", 4.7, None,
                  "a cluster of four servers")]
    findings = [Finding("003", "spread by minute: cold / warm", "1.5×", "1.6×", "holds", "", ("run-a", "run-b"),
                        1.5, 1.6),
                Finding("003", "map-reduce minute bars: cold / warm", "5.4×", "0.74×",
                        "does not hold on this machine", "because the data is read from memory either way",
                        ("run-c",), 5.4, 0.74),
                Finding("003", "writes: speed-up per added node", "0.78", "—", "not measured",
                        "needs write runs on clusters of two or more sizes", (), 0.78)]
    runs = {("compute", "spread-by-minute-cold"): SimpleNamespace(run_id="run-a"),
            ("compute", "spread-by-minute-warm"): SimpleNamespace(run_id="run-b"),
            ("compute", "mapreduce-minute-bars-cold"): SimpleNamespace(run_id="run-c")}
    return Reproduction(card, "tiny", pairs, findings, runs)


def test_findings_show_their_verdicts_coloured_and_their_runs_as_links(qtbot, gallery):
    gallery.set_reproduction("003", _reproduction())
    card = gallery.card("003")
    gallery.scroll.ensureWidgetVisible(card.results)
    assert card.results.isVisible() and "3 runs at tiny size" in card.results_heading.text()

    lines = [label.text() for label in card.findings_host.findChildren(QLabel, "finding_line")]
    assert len(lines) == 3
    theme = current_theme()
    assert "published: 1.5×, yours: 1.6× — " in lines[0] and f"color:{verdict_colour('holds')}" in lines[0]
    assert f"color:{theme.error}" in lines[1] and "read from memory either way" in lines[1]
    assert "yours: none yet" in lines[2] and f"color:{theme.muted}" in lines[2]
    assert len({verdict_colour(v) for v in ("holds", "does not hold on this machine", "not measured")}) == 3

    # the pairs of the experiment that ran; the other experiment's figure waits behind a toggle
    measured = card.pairs_grid_host.findChildren(QLabel, "pair_measured")
    assert [label.text() for label in measured] == ["48.2 ms"]
    assert "a cluster of four servers" in measured[0].toolTip()
    assert [label.property("run_id") for label in card.pairs_grid_host.findChildren(QLabel, "run_link")] == ["run-a"]
    card.more_pairs_button.click()
    qtbot.waitUntil(lambda: [label.text() for label in card.pairs_grid_host.findChildren(QLabel, "pair_measured")
                             if label.isVisible()] == ["48.2 ms", "—"], timeout=2000)

    link = next(label for label in card.findings_host.findChildren(QLabel, "run_link")
                if label.property("run_id") == "run-b")
    gallery.scroll.ensureWidgetVisible(link)
    with qtbot.waitSignal(gallery.run_clicked, timeout=2000) as clicked:
        qtbot.mouseClick(link, Qt.MouseButton.LeftButton, pos=QPoint(4, link.height() // 2))
    assert clicked.args == ["run-b"]

    gallery.set_reproduction("003", Reproduction(REPORTS["003"], None, [], [], {}))
    assert not card.results.isVisibleTo(card)


# ---- in the real window -----------------------------------------------------------------------------
from tests.test_main_window import window_factory  # noqa: E402,F401  the real window, made as there


def test_the_window_runs_an_experiment_from_its_card_and_shows_the_measured_figure(qtbot, window_factory,
                                                                                   tmp_path):
    window = window_factory((1400, 900))
    assert window.tabs.currentWidget() is window.gallery                     # a fresh start opens on it
    window.tabs.setCurrentWidget(window.history)
    window.findChild(QAction, "reproduce_report").trigger()   # File → Reproduce a report…
    assert window.tabs.currentWidget() is window.gallery

    row = window.gallery.row("003", "write")          # the quickest experiment (seconds)
    with qtbot.waitSignal(window.controller.run_finished, timeout=RUN_TIMEOUT_MS) as finished:
        qtbot.mouseClick(row.run_button, Qt.MouseButton.LeftButton)
    result = finished.args[0]
    assert result.status == "completed", result.message
    stored = window.store.run(result.run_id)["scenario"]
    assert stored["experiment"] == "003/write/subject/tiny"
    assert stored["target_config"] == default_config("duckdb", tmp_path / "data")

    card = window.gallery.card("003")

    def measured_by_this_run() -> bool:
        repro = card.reproduction
        return repro is not None and any(p.run_id == result.run_id and p.measured_value is not None
                                         for p in repro.pairs)
    qtbot.waitUntil(measured_by_this_run, timeout=20_000)                   # read off the GUI thread
    pair = next(p for p in card.reproduction.pairs if p.run_id == result.run_id)
    assert card.results.isVisibleTo(card)
    shown = [label.text() for label in card.pairs_grid_host.findChildren(QLabel, "pair_measured")]
    assert pair.measured in shown and pair.measured != "—"
    links = [label.property("run_id") for label in card.pairs_grid_host.findChildren(QLabel, "run_link")]
    assert result.run_id in links

    window.tabs.setCurrentWidget(window.gallery)                             # the run's end showed its answer
    link = next(label for label in card.pairs_grid_host.findChildren(QLabel, "run_link")
                if label.property("run_id") == result.run_id)
    window.gallery.scroll.ensureWidgetVisible(link)
    qtbot.mouseClick(link, Qt.MouseButton.LeftButton, pos=QPoint(4, link.height() // 2))
    qtbot.waitUntil(lambda: window.tabs.currentWidget() is window.dashboard, timeout=20_000)
    assert window.dashboard.snapshot.run_id == result.run_id

    second = window_factory((1400, 900))                                               # runs exist: the usual first tab
    assert second.tabs.currentWidget() is second.dashboard
