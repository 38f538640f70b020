"""One-click run report: one self-contained HTML file, or the same document as a PDF.

    write_report(store, ["20260101-120000-ab12"], Path("report.html"))   # or "report.pdf"

What it holds, per run: the scenario, a table of figures per step (rows/s, MB/s, ops/s, exact
p50/p95/p99, phase means), charts, the published figures of the seed reports for that workload
labelled "published (their hardware)" beside what this run measured labelled "measured (your
hardware)", and the environment record (machine, OS, versions, target, cache methods applied).
With several runs, a comparison table and charts across them come first.

Charts are PNG images embedded as base64, so the HTML opens anywhere offline. They are either
the caller's widgets (what is on screen, exported with widgets/exporters.py) or, when none are
given, drawn afresh offscreen from the stored records (workloads.history) with the same widgets
the live view uses. The HTML is written by Jinja2 templates (resources/templates/report, autoescape
on) from plain data prepared here; runs of the report gallery add each seed report's reproduction
(published beside measured, findings as ratios). A .pdf path lays the same HTML out on A4 pages
with Qt's own QTextDocument and QPdfWriter (app/report_pdf.py): no browser engine needed. Charts
follow the application's theme. Tables are made to fit A4 (headers keep their words, phases get a
table of their own).
"""
from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pandas as pd
from PySide6.QtWidgets import QWidget

from app.report_charts import Figure, application, render_run_charts, render_shared_charts, widgets_as_figures
from app.report_html import (SHOWN_PX, Cell, Table, fmt_bytes, fmt_count, fmt_duration, fmt_int, fmt_num,
                             fmt_rate, fmt_when, render)
from app.report_pdf import pdf_document, pdf_page_size, tickbench_version, write_pdf
from app.report_suites import (ReproductionView, SuiteComparisonView, SuiteView, comparison_figures, comparison_view,
                               gallery_slot, reproduction_views, run_anchor, run_suite_figures, run_suite_view)
from widgets.breakdown_chart import MEASURED_LABEL, PUBLISHED_LABEL
from workloads.environment import busy_note
from workloads.figures import STEP_FIGURES_DOC, short_reason, step_figures
from workloads.history import compare_frame, run_labels, snapshot_from_store
from workloads.kinds import get_workload
from workloads.references import DISK, Reference, references_for
from workloads.snapshot import LiveSnapshot
from workloads.store import ResultsStore
from workloads.suite_figures import REPORT_WORKLOADS
from workloads.suite_history import SuiteComparison, suite_comparison
from workloads.targets.base import PHASES

__all__ = ["SHOWN_PX", "build_html", "fmt_num", "pdf_document", "pdf_page_size", "report_labels", "write_pdf",
           "write_report"]

STRING_MODES = {"object": "Python objects (object)", "str": "Arrow-backed strings (str)",
                "category": "categories (category)"}
TEST_SERVER_MARK = "tickbench-test-server"   # in the version string of tests/ddbserver


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
class References:
    """The seed reports' figures for a run's workload, with this run's beside them where they compare."""

    workload: str
    dataset: str
    where: str
    unverified: bool                 # a DolphinDB run whose server is not known to be DolphinDB
    test_server: bool
    table: Table | None
    reports: list[dict[str, str]]    # report, title, environment
    measured_note: str


@dataclass
class RunSection:
    run_id: str
    anchor: str
    workload: str
    target: str
    page_break: bool
    scenario_text: str
    message: dict[str, str] | None   # css, text
    steps: Table
    phases: Table | None
    figures_doc: str
    probe: bool                      # some phases rest on probe operations
    overlap: bool                    # DolphinDB's transfer and decode both shown
    short: list[str]
    cold: list[str]                  # a cold run: per step, how many operations held cold
    suite: SuiteView | None
    errors: Table
    charts: list[Figure]
    references: References
    environment: Table
    gallery: dict[str, str] | None = None   # report, experiment, arm, size, anchor


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


def build_html(store: ResultsStore, runs: list[dict[str, Any]], frame: pd.DataFrame,
               labels: dict[str, str], per_run: dict[str, list[Figure]], shared: list[Figure],
               given: list[Figure], for_pdf: bool = False, snapshots: dict[str, LiveSnapshot] | None = None,
               suites: SuiteComparison | None = None, reproductions: list[ReproductionView] | None = None) -> str:
    """The whole report as one HTML string (images inline as data URIs); ``for_pdf`` leaves out
    the page-width rules only a browser should follow. ``snapshots`` and ``suites`` add the
    query-suite and footprint sections (workloads.history, workloads.suite_history);
    ``reproductions`` the seed reports' reproductions (app.report_suites.reproduction_views)."""
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
                    across=across, sections=sections, reproductions=list(reproductions or []))


def _title(runs: list[dict[str, Any]]) -> str:
    if len(runs) == 1:
        run = runs[0]
        return f"Tickbench report: {run['workload']} on {run['target']}, run {run['run_id']}"
    return f"Tickbench report: {len(runs)} runs compared"


def _runs_table(runs: list[dict[str, Any]], labels: dict[str, str]) -> Table:
    rows = []
    for run in runs:
        took = _seconds_between(run.get("created_at"), run.get("finished_at"))
        # label over id in one cell: two lines that never break inside a word
        rows.append([Cell(labels[run["run_id"]], sub=run["run_id"]), run["workload"], run["dataset"], run["target"],
                     (run.get("users") or "").replace(",", ", "), run["status"],
                     _date_over_time(run.get("created_at")), "" if took is None else fmt_duration(took)])
    # the run's name and its users list wrap; the other columns keep their words whole
    return Table(["Run", "Workload", "Dataset", "Target", "Users", "Status", "Started\n(UTC)", "Took"], rows,
                 wrap=(0, 4))


def _date_over_time(value: Any) -> Cell | str:
    """A start time as date over time: the Runs table's columns then fit A4 beside long workload names."""
    date, _, clock = fmt_when(value, zone=False).partition(" ")
    return Cell(lines=(Cell(date), Cell(clock))) if clock else date


def _compare_table(frame: pd.DataFrame) -> Table:
    header = ["Run", "Step", "Users", "Rows/s", "MB/s", "Ops/s", "p50\nms", "p99\nms", "first op\nms"]
    rows = []
    for r in frame.itertuples():
        rows.append([r.run, r.step_label + (" ⚠" if r.short else ""), fmt_int(r.users), fmt_num(r.rows_per_s),
                     fmt_num(r.mb_per_s), fmt_num(r.ops_per_s), fmt_num(r.p50_ms), fmt_num(r.p99_ms),
                     fmt_num(r.first_op_ms)])
    return Table(header, rows, numeric_from=2, wrap=(0,))


def _phase_table(frame: pd.DataFrame, with_run: bool = False) -> Table | None:
    """Mean milliseconds per phase, a row per step (and run): a table of its own, so the figures
    table keeps its width on A4 whatever phases the targets split (up to six across targets)."""
    phases = _phases_present(frame)
    if not phases:
        return None
    header = (["Run"] if with_run else []) + ["Step", "From"] + [f"{p}\nms" for p in phases]
    rows = []
    for r in frame.itertuples():
        origin = (f"{int(r.phase_ops):,} {r.phase_source}" if r.phase_source and r.phase_ops == r.phase_ops
                  else "–")
        rows.append(([r.run] if with_run else []) + [r.step_label, origin] +
                    [fmt_num(getattr(r, f"{p}_ms")) for p in phases])
    return Table(header, rows, numeric_from=3 if with_run else 2, wrap=(0,) if with_run else ())


def _run_section(store: ResultsStore, run: dict[str, Any], steps: pd.DataFrame, figures: list[Figure],
                 first: bool, suite: SuiteView | None = None, anchors: dict[str, str] | None = None) -> RunSection:
    scenario = run.get("scenario") or {}
    message = str(run.get("message") or "").strip()
    phases = _phases_present(steps)
    sources = {(r.phase_source, int(r.phase_ops)) for r in steps.itertuples()
               if r.phase_source and r.phase_ops == r.phase_ops}
    errors = _worker_errors(store, run["run_id"], dict(zip(steps["step"], steps["step_label"])))
    slot = gallery_slot(run)
    gallery = None
    if slot is not None:
        report, experiment, arm, size = slot
        gallery = {"report": report, "experiment": experiment, "arm": arm, "size": size,
                   "anchor": (anchors or {}).get(f"{report}/{size}", "")}
    return RunSection(
        run_id=run["run_id"], anchor=run_anchor(run["run_id"]), workload=run["workload"], target=run["target"],
        page_break=not first, scenario_text=_scenario_text(run, scenario),
        message={"css": "error" if run["status"] in ("failed", "aborted") else "note",
                 "text": f"{run['status'].capitalize()}: {message}"} if message else None,
        steps=_steps_table(steps), phases=_phase_table(steps), figures_doc=STEP_FIGURES_DOC,
        probe=any(s == "probe" for s, _ in sources), overlap={"transfer", "decode"} <= set(phases),
        short=[f"{r.step_label}: {short_reason(r.ops, r.window_s)}" for r in steps.itertuples() if r.short],
        cold=[f"{r.step_label}: cold: {int(r.cold_ops):,} of {int(r.ops):,} operations" for r in steps.itertuples()]
        if run.get("cache") == "cold" else [],
        suite=suite, errors=Table(["Step", "Worker", "State", "Error"], errors, wrap=(3,)), charts=figures,
        references=_references(run, steps),
        environment=Table(["", ""], _environment_rows(run, step_figures(store, run["run_id"])), show_header=False,
                          wrap=(1,)),
        gallery=gallery)


def _scenario_text(run: dict[str, Any], scenario: dict[str, Any]) -> str:
    scale = scenario.get("scale") or {}
    parts = [f"Status {run['status']}", f"started {fmt_when(run.get('created_at'))}"]
    if not _uses_target(run):
        parts.append(f"no data read or written: {run['workload']} measures the harness alone")
    elif scale:
        parts.append(f"dataset {run['dataset']} ({fmt_count(scale.get('days'), 'day')} × "
                     f"{fmt_int(scale.get('rows_per_day'))} rows, {fmt_int(scale.get('symbols'))} keys)")
    else:
        parts.append(f"dataset {run['dataset']}")
    if scenario.get("strings") and _uses_target(run):
        parts.append(f"string columns as {STRING_MODES.get(scenario['strings'], scenario['strings'])}")
    parts.append(f"cache {run.get('cache') or scenario.get('cache', '?')}")
    users = scenario.get("users") or _users(run.get("users"))
    parts.append(f"users {', '.join(str(u) for u in users)}")
    if scenario.get("duration_s"):
        parts.append(f"for {scenario['duration_s']:g} s per step")
    elif scenario.get("operations") and _bounded_by_operations(run):
        parts.append(f"{fmt_count(scenario['operations'], 'operation')} per user")
    if scenario.get("params"):
        parts.append("parameters " + ", ".join(f"{k}={v}" for k, v in scenario["params"].items()))
    return "; ".join(parts) + "."


STEPS_HEADER = ["Step", "Users", "Ops", "Err", "Win\ns", "Rows/s", "MB/s", "Ops/s", "p50\nms", "p95\nms", "p99\nms",
                "mean\nms", "1st op\nms"]


def _steps_table(steps: pd.DataFrame) -> Table:
    rows = []
    for r in steps.itertuples():
        rows.append([r.step_label + (" ⚠" if r.short else ""), fmt_int(r.users), fmt_int(r.ops), fmt_int(r.errors),
                     fmt_num(r.window_s), fmt_num(r.rows_per_s), fmt_num(r.mb_per_s), fmt_num(r.ops_per_s),
                     fmt_num(r.p50_ms), fmt_num(r.p95_ms), fmt_num(r.p99_ms), fmt_num(r.mean_ms),
                     fmt_num(r.first_op_ms)])
    return Table(STEPS_HEADER, rows, numeric_from=1)


def _worker_errors(store: ResultsStore, run_id: str, labels: dict[int, str]) -> list[list[str]]:
    workers = store.workers(run_id)
    rows = []
    for w in workers.itertuples():
        if isinstance(w.error, str) and w.error:
            rows.append([labels.get(int(w.step), f"step {int(w.step) + 1}"), str(int(w.worker)),
                         str(w.state), w.error])
    return rows


# --- published beside measured ------------------------------------------------------------------

def _references(run: dict[str, Any], steps: pd.DataFrame) -> References:
    experiments = [run["workload"]] + ([DISK] if run["workload"] in REPORT_WORKLOADS else [])
    refs = [r for e in experiments for r in references_for(e) if r.dataset in (None, run["dataset"])]
    where = _where(run)
    server = _dolphindb_server(run)
    unverified = run["target"] == "dolphindb" and not server["verified"]
    out = References(workload=run["workload"], dataset=run["dataset"], where=where, unverified=unverified,
                     test_server=server["test"], table=None, reports=[], measured_note="")
    if not refs:
        return out
    rows, placed = [], 0
    for ref in refs:
        measured = measured_beside(ref, run, steps, server)
        placed += measured is not None
        rows.append([ref.report, ref.label, ref.x_text or "", ref.value_text, measured or "–", ref.note])
    header = ["Report", "Figure", "At", Cell(PUBLISHED_LABEL, css="published"), Cell(MEASURED_LABEL, css="measured"),
              "Note"]
    # an "At" column with nothing in it only narrows the others; this run's column stays, its
    # dashes explained by the note below the table
    keep = [i for i in range(len(header)) if i != 2 or any(row[i] for row in rows)]
    numeric = [i for i in keep if i in (3, 4)]
    out.table = Table([header[i] for i in keep], [[row[i] for i in keep] for row in rows],
                      numeric_from=keep.index(numeric[0]), numeric_to=keep.index(numeric[-1]) + 1,
                      wrap=(1, len(keep) - 1))
    reports = {r.report: r for r in refs}
    out.reports = [{"report": r.report, "title": r.title, "environment": r.environment} for r in reports.values()]
    out.measured_note = _measured_note(run, steps, placed, where, server)
    return out


def measured_beside(ref: Reference, run: dict[str, Any], steps: pd.DataFrame,
                    server: dict[str, Any]) -> str | None:
    """This run's figure in the published figure's unit, or None where they do not compare:
    another target or client, another cache state or dataset, a variant the run was not (columns
    left out), nodes this run did not vary, a unit the run does not measure, or a server that is
    not known to be DolphinDB."""
    target = run["target"]
    if target == "dolphindb":
        if not server["verified"]:
            return None
        if ref.target == "dolphindb-server":
            column = "server_ms"
        elif ref.target in ("dolphindb-api", "dolphindb-api-python"):
            column = "mean_ms"
        else:
            return None           # another language's client
    elif ref.target == target:
        column = "mean_ms"
    else:
        return None
    if ref.cache not in (None, run.get("cache")) or ref.dataset not in (None, run["dataset"]):
        return None
    if ref.series.startswith("without "):
        return None               # a variant (columns left out) Tickbench's workloads do not run
    if ref.x_unit == "users":
        step = steps[steps["users"] == ref.x]
    elif ref.x_unit is None:
        step = steps
    else:
        return None
    step = step[step["ops"] > 0]
    if step.empty:
        return None
    rate = {"M rows/s": ("rows_per_s", 1.0, "rows/s"), "MB/s": ("mb_per_s", 1e6, "B/s"),
            "GB/s": ("mb_per_s", 1e6, "B/s")}
    if ref.unit in rate:
        key, to_base, base = rate[ref.unit]
        step = step[step[key].notna()]               # a step without a duration has no rate
        if step.empty:
            return None
        best = step.loc[step[key].idxmax()]          # the published figure is a peak or a level
        return f"{fmt_rate(best[key] * to_base, base)} ({best['step_label']})"
    elif ref.unit in ("s", "ms"):
        ones = step[step["users"] == 1]
        best = (ones if not ones.empty else step).iloc[0]   # a single reader unless "At" says more
        value = best[column] / (1000 if ref.unit == "s" else 1)
    else:
        return None
    if value is None or pd.isna(value):
        return None
    return f"{fmt_num(value)} {ref.unit} ({best['step_label']})"


def _measured_note(run: dict[str, Any], steps: pd.DataFrame, placed: int, where: str,
                   server: dict[str, Any]) -> str:
    done = steps[steps["ops"] > 0]
    per_op = ""
    if not done.empty and done["rows_per_s"].notna().any():
        rows = (done["rows_per_s"] / done["ops_per_s"]).dropna()
        if len(rows) and rows.max() > 0:
            per_op = f" Each operation of this run moved about {fmt_num(float(rows.median()))} rows."
    if placed:
        return (f"{MEASURED_LABEL}: this run against {where}, placed beside a published figure only "
                "where target, client, dataset and cache state match; time figures are the mean per "
                "operation, throughput the best step. Their datasets and machines are far larger: "
                f"compare ratios and shapes, not absolute values.{per_op}")
    if run["target"] == "dolphindb" and not server["verified"]:
        return (f"{MEASURED_LABEL}: this run against {where}, in the step table above; it is not "
                f"placed beside any published figure.{per_op}")
    return (f"{MEASURED_LABEL}: this run against {where}; none of the published figures is of the "
            f"same target, client and cache state, so none is placed beside them.{per_op}")


def _dolphindb_server(run: dict[str, Any]) -> dict[str, Any]:
    """What answered a DolphinDB run: its version string, and whether it is a DolphinDB server
    whose figures may stand beside DolphinDB's published ones (not the test server, not unknown)."""
    target = (run.get("environment") or {}).get("target") or {}
    version = str(target.get("server_version") or "")
    test = TEST_SERVER_MARK in version
    what = ("Tickbench's DolphinDB wire-protocol test server (DuckDB-backed, for tests)" if test
            else f"a server reporting version {version}" if version
            else "a server that did not report its version")
    return {"version": version, "test": test, "verified": bool(version) and not test, "what": what}


def _where(run: dict[str, Any]) -> str:
    """What answered and where the data lived: the server and its nodes, or a folder or file."""
    env = run.get("environment") or {}
    target = env.get("target") or {}
    layout = run.get("layout") or {}
    nodes = (target.get("profile") or {}).get("nodes") or []
    if run["target"] == "dolphindb":
        addresses = ", ".join(f"{n.get('host')}:{n.get('port')}" for n in nodes if isinstance(n, dict))
        return f"{_dolphindb_server(run)['what']} at {addresses or 'an unrecorded address'}"
    location = layout.get("location") or target.get("path") or target.get("root")
    where = f"{run['target']} at {location}" if location else f"{run['target']} (no data location recorded)"
    if target.get("local_engine"):
        where += " (a local engine Tickbench started on this computer, not a production server)"
    if "stand-in" in str(target.get("server") or ""):
        where += f": {target['server']}; its timings are not the real engine's"
    return where


# --- environment ---------------------------------------------------------------------------------

def _environment_rows(run: dict[str, Any], steps: pd.DataFrame) -> list[list[str]]:
    """Machine, OS, versions, target and cache facts; ``steps`` are the store's step figures."""
    env = run.get("environment") or {}
    layout = run.get("layout") or {}
    rows = [["Host", env.get("host", "")],
            ["CPU", f"{env.get('cpu', '')} ({env.get('cores_logical', '?')} logical / "
                    f"{env.get('cores_physical', '?')} physical cores)"],
            ["RAM", fmt_bytes(env.get("ram_bytes"))],
            ["OS", env.get("os", "")],
            ["Python", env.get("python", "")],
            ["Libraries", ", ".join(f"{k} {v}" for k, v in (env.get("libraries") or {}).items())]]
    if env.get("allocator"):          # what every worker did to malloc first (workloads.allocator)
        rows.append(["Allocator", env["allocator"]])
    if env.get("load_average"):
        load = ", ".join(f"{v:.2f}" for v in env["load_average"])
        note = busy_note(env)
        rows.append(["Load average at the start (1, 5, 15 min)", load + (f". {note}" if note else "")])
    for disk in env.get("disks") or []:
        rows.append(["Disk", f"{disk.get('path')}: {disk.get('device') or 'device unknown'}, "
                             f"{fmt_bytes(disk.get('total_bytes'))} total, {fmt_bytes(disk.get('free_bytes'))} free"])
    if not _uses_target(run):
        rows.append(["Target", f"not used by the {run['workload']} workload"])
    else:
        if env.get("string_mode"):
            rows.append(["String columns", STRING_MODES.get(env["string_mode"], env["string_mode"])])
        rows.extend([key, value] for key, value in _flatten(env.get("target") or {}, "Target"))
    if layout:
        rows.append(["Data laid out", f"{fmt_int(layout.get('rows'))} rows, {fmt_bytes(layout.get('footprint_bytes'))} "
                                      f"on disk at {layout.get('location', '?')}"
                                      + (" (reused from an earlier run)" if layout.get("reused") else "")])
    rows.append(["Cache state", str(run.get("cache") or "")])
    applied = "; ".join(f"{r.label}: {_methods(r)}" for r in steps.itertuples())
    rows.append(["Cache methods applied", applied or "none"])
    return [[k, str(v)] for k, v in rows]


def _uses_target(run: dict[str, Any]) -> bool:
    try:
        return get_workload(str(run["workload"])).uses_target
    except ValueError:            # a workload this version no longer has: assume it did
        return True


def _bounded_by_operations(run: dict[str, Any]) -> bool:
    """False for workloads that end by their own plan (rows, files, a suite's queries)."""
    try:
        return get_workload(str(run["workload"])).bounded_by_operations
    except ValueError:
        return True


def _methods(row) -> str:
    text = getattr(row, "cache_methods", "")
    return text if isinstance(text, str) and text else "none (warm)"


def _flatten(data: Any, prefix: str, depth: int = 0) -> Iterable[tuple[str, str]]:
    """A nested description as (key path, text) rows: an inner dict of plain values in one row
    ("Target versions: numpy 2.4.6, pandas 3.1.1"), a list of dicts one row per item."""
    plain = isinstance(data, dict) and not any(isinstance(v, (dict, list)) for v in data.values())
    if depth and plain and data:
        yield prefix, ", ".join(f"{k} {v}" for k, v in data.items())
    elif isinstance(data, dict):
        for key, value in data.items():
            yield from _flatten(value, f"{prefix} {key}", depth + 1)
    elif isinstance(data, list) and data and all(isinstance(v, dict) for v in data):
        for i, value in enumerate(data, start=1):
            yield f"{prefix} {i}", ", ".join(f"{k}={v}" for k, v in value.items())
    elif isinstance(data, list):
        yield prefix, ", ".join(str(v) for v in data)
    else:
        yield prefix, str(data)


# --- PDF -----------------------------------------------------------------------------------------

# --- small helpers ---------------------------------------------------------------------------------

def _phases_present(frame: pd.DataFrame) -> list[str]:
    return [p for p in PHASES if f"{p}_ms" in frame and frame[f"{p}_ms"].notna().any()]


def _seconds_between(start: Any, end: Any) -> float | None:
    if start is None or end is None or pd.isna(start) or pd.isna(end):
        return None
    return (pd.Timestamp(end) - pd.Timestamp(start)).total_seconds()


def _users(text: Any) -> list[int]:
    return [int(u) for u in str(text or "").split(",") if u.strip()]
