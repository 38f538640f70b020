"""The run report's sections about the seed reports, as data for the templates: per-query figures of
query-suite runs (one run, or several side by side with differing answers marked) and footprints
with their ratios (reports 001 and 004), and each gallery report's reproduction: its published
figures (their hardware) beside the measured ones (this machine), and its findings as ratios."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from app.report.charts import CHART_PX, Figure, chart_png, dispose, offscreen, render_reproduction_charts
from app.report.as_html import Cell, Table, fmt_bytes, fmt_num
from widgets.charts.footprint import FootprintChart
from widgets.charts.query import QueryChart
from workloads.scenario import SIZES, parse_slot
from workloads.reproduce.findings import (HOLDS, INCONCLUSIVE, NO_EFFECT_BELOW, NOT_HOLD, NOT_MEASURED, STRONGER,
                                          STRONGER_BY, WEAKER)
from workloads.reproduce.published import Pair
from workloads.reproduce.reproduction import Reproduction, reproduction
from workloads.run.snapshot import QueryPoint
from workloads.results.store import ResultsStore
from workloads.run.records import OK
from workloads.results.suite_figures import (REPORT_WORKLOADS, category_summary, geometric_mean,
                                             run_footprints)
from workloads.results.suite_history import SuiteComparison

DIFFERS_MARK = "≠"
VERDICT_CSS = {HOLDS: "holds", STRONGER: "stronger", WEAKER: "weaker", NOT_HOLD: "not-hold",
               NOT_MEASURED: "not-measured", INCONCLUSIVE: "inconclusive"}
HARDWARE_MARKS = "123456789"


@dataclass
class SuiteView:
    """A query-suite run's last step, query by query, and its footprints."""

    step_label: str = ""
    queries: Table | None = None
    summary: str = ""
    categories: Table | None = None
    footprints: Table | None = None
    columns: Table | None = None


@dataclass
class SuiteComparisonView:
    queries: Table | None = None
    footprints: Table | None = None
    differs_mark: str = DIFFERS_MARK


# --- one run ---------------------------------------------------------------------------------------
def run_suite_view(store: ResultsStore, run: dict[str, Any], queries: list[QueryPoint],
                   step_label: str) -> SuiteView | None:
    """Per-query table of a query-suite run's last step, and the run's footprints (None: neither)."""
    view = SuiteView(step_label=step_label)
    if queries:
        view.queries = Table(["Query", "Category", "Runs", "Mean\nms", "p50\nms", "Min\nms", "Status", "Answer"],
                             [[p.query, p.category, p.runs, _ms(p.mean_s), _ms(p.p50_s), _ms(p.min_s), p.status,
                               p.fingerprint[:8]] for p in queries], numeric_from=2, numeric_to=6, wrap=(1,))
        view.summary = _summary(queries)
        categories = category_summary(pd.DataFrame({"step": 0, "query": [p.query for p in queries],
                                                    "category": [p.category for p in queries],
                                                    "status": [p.status for p in queries],
                                                    "mean_s": [p.mean_s for p in queries]}))
        if len(categories) > 1 and categories["queries"].max() > 1:     # categories of several queries
            view.categories = Table(["Category", "Queries", "Mean of their means\nms"],
                                    [[c.category, c.queries, _ms(c.mean_s)] for c in categories.itertuples()],
                                    numeric_from=1)
    footprints = run_footprints(store, run["run_id"])
    rows = []
    if footprints["layout"]:
        rows.append(_footprint_row("laid-out table", footprints["layout"]))
    for step, footprint in footprints["steps"].items():
        rows.append(_footprint_row(f"imported, step {step + 1}", footprint))
    if rows:
        view.footprints = _footprint_table(rows)
        columns = (footprints["layout"] or {}).get("columns") or {}
        if columns and run["workload"] in REPORT_WORKLOADS:
            total = sum(columns.values()) or 1
            view.columns = Table(["Column", "On disk", "Share"],
                                 [[name, fmt_bytes(size), f"{size / total:.0%}"]
                                  for name, size in sorted(columns.items(), key=lambda kv: -kv[1])],
                                 numeric_from=1)
    return view if view.queries or view.footprints else None


def run_suite_figures(queries: list[QueryPoint], target: str, footprints: dict[str, Any]) -> list[Figure]:
    figures = []
    if queries:
        figures.append(_query_figure({target: queries}, "mean seconds per query over its measured runs"))
    bars = {}
    if footprints.get("layout"):
        bars["laid-out table"] = footprints["layout"]
    for step, footprint in (footprints.get("steps") or {}).items():
        bars[f"imported, step {int(step) + 1}"] = footprint
    if bars:
        figures.append(_footprint_figure(bars))
    return figures


# --- several runs ------------------------------------------------------------------------------------
def comparison_view(comparison: SuiteComparison) -> SuiteComparisonView | None:
    """Queries x runs (mean ms; a differing answer marked), and the footprints of the runs."""
    view = SuiteComparisonView()
    if len(comparison.queries) > 1:
        labels = list(comparison.queries)
        order: list[str] = []
        for points in comparison.queries.values():
            order += [p.query for p in points if p.query not in order]
        point = {(label, p.query): p for label, points in comparison.queries.items() for p in points}
        rows = []
        for query in order:
            answered = [point[(label, query)] for label in labels
                        if (label, query) in point and point[(label, query)].status == OK]
            reference = next((p.fingerprint for p in answered if p.fingerprint), "")
            cells: list[Any] = []
            for label in labels:
                p = point.get((label, query))
                if p is None:
                    cells.append("–")
                elif p.status != OK:
                    cells.append(p.status)
                elif reference and p.fingerprint and p.fingerprint != reference:
                    cells.append(Cell(f"{_ms(p.mean_s)} {DIFFERS_MARK}", css="error"))
                else:
                    cells.append(_ms(p.mean_s))
            rows.append([query] + cells)
        rows.append(["geometric mean"] + [_ms(geometric_mean([p.mean_s for p in comparison.queries[label]
                                                             if p.status == OK])) for label in labels])
        view.queries = Table(["Query"] + labels, rows, numeric_from=1, wrap=tuple(range(1, len(labels) + 1)))
    if len(comparison.footprints) > 1:
        view.footprints = _footprint_table([_footprint_row(label, f) for label, f in comparison.footprints.items()])
    return view if view.queries or view.footprints else None


def comparison_figures(comparison: SuiteComparison) -> list[Figure]:
    figures = []
    if len(comparison.queries) > 1:
        figures.append(_query_figure(comparison.queries, "mean seconds per query; red, hatched: an answer that "
                                                         "differs from the first run's"))
    if len(comparison.footprints) > 1:
        figures.append(_footprint_figure(comparison.footprints))
    return figures


# --- the seed reports' reproductions -----------------------------------------------------------------
@dataclass
class ExperimentView:
    title: str
    question: str
    table: Table
    charts: list[Figure] = field(default_factory=list)


@dataclass
class ReproductionView:
    """One report's reproduction at one size, as the template shows it."""

    report: str
    size: str
    anchor: str
    title: str
    heading: str                 # "Report 000", or a pack's own name ("Tick pack")
    asked: str
    found: list[str]
    runs_note: str
    experiments: list[ExperimentView]    # those with a measured figure at this size
    not_run: list[dict[str, Any]]        # title, figures, key: experiments with published figures only
    hardware: list[dict[str, str]]       # mark, text: the report's hardware, once per distinct text
    machine: str                         # what the measured runs ran on
    no_pairs: str                        # said instead of the tables where the report published none
    findings: Table
    linked: bool                         # some run ids link to sections of this report
    outside: bool                        # some run ids are of runs not in this report
    stronger_pct: int = round((STRONGER_BY - 1) * 100)
    no_effect: float = NO_EFFECT_BELOW


def run_anchor(run_id: str) -> str:
    """The id of a run's section in the report (a link target)."""
    return f"run-{run_id}"


def gallery_slot(run: dict[str, Any]) -> tuple[str, str, str, str] | None:
    """(report, experiment, arm, size) of a run of the report gallery, from its stored scenario."""
    scenario = run.get("scenario") or {}
    slot = parse_slot(str(scenario.get("experiment") or "")) if isinstance(scenario, dict) else None
    return slot if slot is not None and slot[3] in SIZES else None


def reproduction_views(store: ResultsStore, runs: list[dict[str, Any]], with_charts: bool = True
                       ) -> list[ReproductionView]:
    """A reproduction per (report, size) that the runs hold gallery runs of, in report order."""
    wanted = sorted({(slot[0], slot[3]) for slot in map(gallery_slot, runs) if slot is not None},
                    key=lambda rs: (rs[0], SIZES.index(rs[1])))
    in_report = [r["run_id"] for r in runs]
    views = []
    for report, size in wanted:
        try:
            repro = reproduction(store, report, size)
        except ValueError:          # a report this version no longer has
            continue
        views.append(reproduction_view(repro, in_report, with_charts))
    return views


def reproduction_view(repro: Reproduction, in_report: list[str], with_charts: bool = True) -> ReproductionView:
    card = repro.card
    size = repro.size or "no"
    questions = {e.title: e.question for e in card.experiments}
    by_experiment: dict[str, list[Pair]] = {}
    for pair in repro.pairs:
        by_experiment.setdefault(pair.experiment, []).append(pair)
    # an experiment not run at this size would be a table of dashes: it is named in a line instead
    measured = {title: pairs for title, pairs in by_experiment.items()
                if any(p.run_id or p.measured_value is not None for p in pairs)}
    not_run = [{"title": title, "figures": len(pairs), **_how_to_run(card, title)}
               for title, pairs in by_experiment.items() if title not in measured]
    hardware = list(dict.fromkeys(p.hardware for pairs in measured.values() for p in pairs))
    marks = {text: HARDWARE_MARKS[i] if i < len(HARDWARE_MARKS) else str(i + 1) for i, text in enumerate(hardware)}
    experiments = []
    for title, pairs in measured.items():
        charts = render_reproduction_charts(title, pairs, card.report) if with_charts else []
        experiments.append(ExperimentView(title, questions.get(title, ""), _pairs_table(pairs, marks, in_report),
                                          charts))
    ids = set(repro.run_ids) | {r for f in repro.findings for r in f.run_ids}
    inside = sorted(ids & set(in_report))
    return ReproductionView(
        report=card.report, size=size, anchor=f"reproduction-{card.report}-{size}", title=card.title,
        heading=card.heading,
        asked=card.asked, found=list(card.found),
        runs_note=(f"Measured from {len(repro.run_ids)} stored gallery run{'' if len(repro.run_ids) == 1 else 's'} "
                   f"of {card.heading[0].lower() + card.heading[1:] if card.published else card.heading} at {size} "
                   f"size, {len(inside)} of them in this report."),
        experiments=experiments, not_run=not_run, hardware=[{"mark": marks[h], "text": h} for h in hardware],
        machine=_machine(repro), findings=_findings_table(repro, in_report),
        no_pairs=("" if repro.pairs else
                  f"Report {card.report} published its findings as ratios only: they are compared below."
                  if card.published else
                  f"The {card.heading.lower()} has no published figures: its findings compare your engines below."),
        linked=bool(inside), outside=bool(ids - set(in_report)))


def _how_to_run(card, title: str) -> dict[str, str]:
    """The experiment's key, and what its comparison needs beyond the embedded default, if anything."""
    exp = next((e for e in card.experiments if e.title == title), None)
    return {"key": exp.key if exp else "", "needs": exp.needs if exp else ""}


def _run_cell(run_id: str, in_report: list[str]) -> Cell | str:
    if not run_id:
        return "—"
    if run_id in in_report:
        return Cell(run_id, href=f"#{run_anchor(run_id)}")
    return Cell(run_id, css="muted")


def _pairs_table(pairs: list[Pair], marks: dict[str, str], in_report: list[str]) -> Table:
    several = len(marks) > 1
    header = ["Figure", Cell("Published\n(their hardware)", css="published", mark="" if several else "1"),
              Cell("Measured\n(this machine)", css="measured"), "Run"]
    rows = [[p.figure, Cell(p.published, mark=marks[p.hardware]) if several else p.published,
             p.measured, _run_cell(p.run_id, in_report)] for p in pairs]
    return Table(header, rows, numeric_from=1, numeric_to=3, wrap=(0,), css="reproduction",
                 widths=["50%", "16%", "16%", "18%"])


def _findings_table(repro: Reproduction, in_report: list[str]) -> Table:
    """A finding, its runs under it (linked), the published and measured ratios, the verdict and why."""
    rows = []
    for f in repro.findings:
        runs = (Cell(parts=(Cell("runs:", css="muted"), *(_run_cell(r, in_report) for r in f.run_ids)))
                if f.run_ids else Cell("no run yet", css="muted"))
        rows.append([Cell(lines=(Cell(f.statement), runs)), f.published, f.measured,
                     Cell(f.verdict, css=VERDICT_CSS.get(f.verdict, ""), sub=f.why)])
    header = ["Finding", Cell("Published\n(their hardware)", css="published"),
              Cell("Measured\n(this machine)", css="measured"), "Verdict"]
    return Table(header, rows, numeric_from=1, numeric_to=3, wrap=(0, 3), css="reproduction",
                 widths=["38%", "15%", "15%", "32%"])


def _machine(repro: Reproduction) -> str:
    """The machines the measured runs ran on, from their environment records."""
    seen = []
    for arm in repro.runs.values():
        env = arm.environment or {}
        text = (f"{env.get('host') or 'an unnamed host'}, {env.get('cpu') or 'CPU unknown'} "
                f"({env.get('cores_logical', '?')} logical cores), {fmt_bytes(env.get('ram_bytes'))} RAM")
        if text not in seen:
            seen.append(text)
    return "; ".join(seen) or "no run yet"


# --- pieces ------------------------------------------------------------------------------------------
def _ms(seconds: float | None) -> str:
    return fmt_num(None if seconds is None else seconds * 1000)


def _summary(queries: list[QueryPoint]) -> str:
    answered = [p.mean_s for p in queries if p.status == OK]
    counts = {s: sum(p.status == s for p in queries) for s in ("not supported", "failed")}
    mean = geometric_mean(answered)
    return (f"{len(answered)} answered, {counts['not supported']} not supported, {counts['failed']} failed"
            + (f"; geometric mean of the answered queries' means {_ms(mean)} ms." if mean is not None else "."))


def _footprint_row(label: str, f: dict[str, Any]) -> list[Any]:
    ratio = (lambda key: f"{f[key]:.2f}×" if f.get(key) else "–")
    return [label, fmt_bytes(f["bytes"]), fmt_bytes(f.get("csv_bytes")) if f.get("csv_bytes") else "not written",
            ratio("csv_ratio"), fmt_bytes(f.get("logical_bytes")), ratio("logical_ratio"),
            f.get("replicas") or "?", f.get("method", "")]


def _footprint_table(rows: list[list[Any]]) -> Table:
    return Table(["Table", "On disk", "CSV", "CSV ÷\ndisk", "In memory", "Memory ÷\ndisk", "Copies", "Measured by"],
                 rows, numeric_from=1, numeric_to=7, wrap=(0, 7))


def _query_figure(series: dict[str, list[QueryPoint]], caption: str) -> Figure:
    chart = QueryChart("Time per query (mean)")
    offscreen(chart, CHART_PX, 150 + 30 * max(len(p) for p in series.values()) * len(series))
    try:
        chart.set_data(series)
        return Figure(chart.title, chart_png(chart), caption)
    finally:
        dispose(chart)


def _footprint_figure(footprints: dict[str, dict[str, Any]]) -> Figure:
    chart = FootprintChart("Footprint")
    offscreen(chart, CHART_PX, 170 + 90 * len(footprints))
    try:
        chart.set_data(footprints)
        return Figure(chart.title, chart_png(chart), "bytes on disk beside the CSV files and the in-memory size")
    finally:
        dispose(chart)
