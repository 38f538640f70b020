"""One-click run report: one self-contained HTML file, or the same document as a PDF.

    write_report(store, ["20260101-120000-ab12"], Path("report.html"))   # or "report.pdf"

What it holds, per run: the scenario, a table of figures per step (rows/s, MB/s, ops/s, exact
p50/p95/p99, phase means), charts, the published figures of the seed reports for that workload
labelled "published (their hardware)" beside what this run measured labelled "measured (your
hardware)", and the environment record (machine, OS, versions, target, cache methods applied).
With several runs, a comparison table and charts across them come first.

Charts are PNG images embedded as base64, so the HTML opens anywhere offline. They are either
the caller's widgets (what is on screen, exported with widgets/charts/exporters.py) or, when none are
given, drawn afresh offscreen from the stored records (workloads.results.history) with the same widgets
the live view uses. The HTML is written by Jinja2 templates (resources/templates/report, autoescape
on) from plain data prepared here; runs of the report gallery add each seed report's reproduction
(published beside measured, findings as ratios). A .pdf path lays the same HTML out on A4 pages
with Qt's own QTextDocument and QPdfWriter (app/report/as_pdf.py): no browser engine needed. Charts
follow the application's theme.

This module holds the entry point and the document as a whole; its parts live beside it: one run's
section (app/report/run_section.py), the tables (app/report/tables.py), published beside measured
(app/report/references.py), the environment record (app/report/environment.py).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pandas as pd
from PySide6.QtWidgets import QWidget

from app.report.charts import Figure, application, render_run_charts, render_shared_charts, widgets_as_figures
from app.report.as_html import SHOWN_PX, Table, fmt_num, render
from app.report.as_pdf import pdf_document, pdf_page_size, tickbench_version, write_pdf
from app.report.suites import (ReproductionView, SuiteComparisonView, comparison_figures, comparison_view,
                               reproduction_views, run_suite_figures, run_suite_view)
from app.report.references import _dolphindb_server
from app.report.run_section import RunSection, _run_section
from app.report.verdicts import VerdictView, verdict_views
from app.report.tables import _compare_table, _phase_table, _runs_table
from workloads.results.history import compare_frame, run_labels, snapshot_from_store
from workloads.run.snapshot import LiveSnapshot
from workloads.results.store import ResultsStore
from workloads.results.suite_history import SuiteComparison, suite_comparison

__all__ = ["SHOWN_PX", "build_html", "fmt_num", "pdf_document", "pdf_page_size", "report_labels", "write_pdf",
           "write_report"]


# --- the one public entry point ----------------------------------------------------------------

def write_report(store: ResultsStore, run_ids: list[str], path: Path,
                 charts: dict[str, QWidget] | None = None) -> Path:
    """Write a report of ``run_ids`` to ``path`` (.html or .htm: HTML; .pdf: PDF); return the path.

    ``charts``: title -> widget to embed as they are (a Tickbench chart, a pyqtgraph plot or any
    widget, which is grabbed as shown). None: each run's charts are drawn afresh offscreen.
    Call it on the GUI thread: it draws with Qt widgets (a QApplication is made if none exists).
    """
    path = Path(path)
    kind = path.suffix.lower()
    if kind not in (".html", ".htm", ".pdf"):
        raise ValueError(f"cannot write a report to {path.name}: use a .html or .pdf file name")
    if not run_ids:
        raise ValueError("no runs selected: choose one or more runs to report")
    if not path.parent.is_dir():
        raise FileNotFoundError(f"cannot write {path}: folder {path.parent} does not exist")
    application()
    runs = [store.run(r) for r in run_ids]          # unknown ids fail here, naming the id
    ids = [r["run_id"] for r in runs]
    snapshots = {rid: snapshot_from_store(store, rid) for rid in ids}
    labels = report_labels(store, runs)
    frame = compare_frame(store, ids)
    frame["run"] = frame["run_id"].map(labels)
    suites = suite_comparison(store, ids, labels)
    if charts is None:
        per_run = {rid: render_run_charts(snapshots[rid]) + run_suite_figures(
            snapshots[rid].queries, snapshots[rid].target, snapshots[rid].footprints) for rid in ids}
        shared = render_shared_charts(frame, snapshots, labels) + comparison_figures(suites)
        given: list[Figure] = []
    else:
        per_run, shared, given = {rid: [] for rid in ids}, [], widgets_as_figures(charts)
    reproductions = reproduction_views(store, runs, with_charts=charts is None)
    document = build_html(store, runs, frame, labels, per_run, shared, given, for_pdf=kind == ".pdf",
                          snapshots=snapshots, suites=suites, reproductions=reproductions)
    if kind == ".pdf":
        write_pdf(document, path, title=_title(runs))
    else:
        path.write_text(document, encoding="utf-8")
    return path


def report_labels(store: ResultsStore, runs: list[dict[str, Any]]) -> dict[str, str]:
    """Run labels for tables and legends; a DolphinDB run whose server is not a (known)
    DolphinDB says so in its label, so no chart reads as DolphinDB's figure."""
    labels = run_labels(store, [r["run_id"] for r in runs])
    for run in runs:
        server = _dolphindb_server(run) if run["target"] == "dolphindb" else None
        if server is not None and not server["verified"]:
            mark = "test server" if server["test"] else "unverified server"
            labels[run["run_id"]] += f" ({mark})"
    return labels


# --- the document as data; the templates write the HTML ------------------------------------------

@dataclass
class Across:
    """Several runs side by side: figures per run and step, phases, query suites, charts."""

    steps: Table
    phases: Table | None
    suites: SuiteComparisonView | None
    charts: list[Figure]


@dataclass
class Document:
    title: str
    written: str
    version: str
    store_path: str
    for_pdf: bool
    runs: Table
    given: list[Figure]
    across: Across | None
    sections: list[RunSection]
    reproductions: list[ReproductionView] = field(default_factory=list)
    verdicts: list[VerdictView] = field(default_factory=list)


def build_html(store: ResultsStore, runs: list[dict[str, Any]], frame: pd.DataFrame,
               labels: dict[str, str], per_run: dict[str, list[Figure]], shared: list[Figure],
               given: list[Figure], for_pdf: bool = False, snapshots: dict[str, LiveSnapshot] | None = None,
               suites: SuiteComparison | None = None, reproductions: list[ReproductionView] | None = None) -> str:
    """The whole report as one HTML string (images inline as data URIs); ``for_pdf`` leaves out
    the page-width rules only a browser should follow. ``snapshots`` and ``suites`` add the
    query-suite and footprint sections (workloads.results.history, workloads.results.suite_history);
    ``reproductions`` the seed reports' reproductions (app.report.suites.reproduction_views)."""
    return render("report/report.html", doc=build_document(
        store, runs, frame, labels, per_run, shared, given, for_pdf, snapshots, suites, reproductions))


def build_document(store: ResultsStore, runs: list[dict[str, Any]], frame: pd.DataFrame,
                   labels: dict[str, str], per_run: dict[str, list[Figure]], shared: list[Figure],
                   given: list[Figure], for_pdf: bool = False, snapshots: dict[str, LiveSnapshot] | None = None,
                   suites: SuiteComparison | None = None,
                   reproductions: list[ReproductionView] | None = None) -> Document:
    """What the report shows, as plain data for the template."""
    across = None
    if len(runs) > 1:
        across = Across(_compare_table(frame), _phase_table(frame, with_run=True),
                        comparison_view(suites) if suites is not None else None, shared)
    anchors = {f"{r.report}/{r.size}": r.anchor for r in reproductions or []}
    sections = []
    for index, run in enumerate(runs):
        rid = run["run_id"]
        steps = frame[frame["run_id"] == rid]
        figures = per_run.get(rid, []) + (shared if len(runs) == 1 else [])
        snapshot = (snapshots or {}).get(rid)
        suite = run_suite_view(store, run, snapshot.queries, snapshot.query_step) if snapshot else None
        sections.append(_run_section(store, run, steps, figures, first=index == 0 and len(runs) == 1,
                                     suite=suite, anchors=anchors))
    return Document(title=_title(runs), written=f"{datetime.now(timezone.utc):%Y-%m-%d %H:%M}",
                    version=tickbench_version(),
                    store_path=str(store.path), for_pdf=for_pdf, runs=_runs_table(runs, labels), given=given,
                    across=across, sections=sections, reproductions=list(reproductions or []),
                    verdicts=verdict_views(store, [r["run_id"] for r in runs], labels) if len(runs) > 1 else [])


def _title(runs: list[dict[str, Any]]) -> str:
    if len(runs) == 1:
        run = runs[0]
        return f"Tickbench report: {run['workload']} on {run['target']}, run {run['run_id']}"
    return f"Tickbench report: {len(runs)} runs compared"

