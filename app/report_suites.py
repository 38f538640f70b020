"""The run report's sections for reports 001 and 004: per-query figures of query-suite runs (one
run, or several side by side with differing answers marked), and footprints with their ratios."""
from __future__ import annotations

from typing import Any

import pandas as pd

from app.report_charts import CHART_PX, Figure, chart_png, dispose, offscreen
from app.report_html import Markup, esc, fmt_bytes, fmt_num, html_table
from widgets.footprint_chart import FootprintChart
from widgets.query_chart import QueryChart
from workloads.snapshot import QueryPoint
from workloads.store import ResultsStore
from workloads.suite_figures import OK, REPORT_WORKLOADS, category_summary, geometric_mean, run_footprints
from workloads.suite_history import SuiteComparison

DIFFERS_MARK = "≠"


# --- one run ---------------------------------------------------------------------------------------
def run_suite_html(store: ResultsStore, run: dict[str, Any], queries: list[QueryPoint], step_label: str) -> str:
    """Per-query table of a query-suite run's last step, and the run's footprints."""
    out = []
    if queries:
        out.append(f"<h3>Queries · {esc(step_label)}</h3>")
        out.append(html_table(["Query", "Category", "Runs", "Mean\nms", "p50\nms", "Min\nms", "Status", "Answer"],
                              [[p.query, p.category, p.runs, _ms(p.mean_s), _ms(p.p50_s), _ms(p.min_s), p.status,
                                p.fingerprint[:8]] for p in queries], numeric_from=2, numeric_to=6, wrap=(1,)))
        out.append(f"<p>{esc(_summary(queries))} Answer: the first characters of the answer's fingerprint, "
                   "the same on every engine that answers alike (<code>tickbench verify</code>).</p>")
        categories = category_summary(pd.DataFrame({"step": 0, "query": [p.query for p in queries],
                                                    "category": [p.category for p in queries],
                                                    "status": [p.status for p in queries],
                                                    "mean_s": [p.mean_s for p in queries]}))
        if len(categories) > 1 and categories["queries"].max() > 1:     # categories of several queries
            out.append(html_table(["Category", "Queries", "Mean of their means\nms"],
                                  [[c.category, c.queries, _ms(c.mean_s)] for c in categories.itertuples()],
                                  numeric_from=1))
    footprints = run_footprints(store, run["run_id"])
    rows = []
    if footprints["layout"]:
        rows.append(_footprint_row("laid-out table", footprints["layout"]))
    for step, footprint in footprints["steps"].items():
        rows.append(_footprint_row(f"imported, step {step + 1}", footprint))
    if rows:
        out.append("<h3>Footprint</h3>")
        out.append(_footprint_table(rows))
        columns = (footprints["layout"] or {}).get("columns") or {}
        if columns and run["workload"] in REPORT_WORKLOADS:
            total = sum(columns.values()) or 1
            out.append(html_table(["Column", "On disk", "Share"],
                                  [[name, fmt_bytes(size), f"{size / total:.0%}"]
                                   for name, size in sorted(columns.items(), key=lambda kv: -kv[1])],
                                  numeric_from=1))
    return "\n".join(out)


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
def comparison_html(comparison: SuiteComparison) -> str:
    """Queries x runs (mean ms; a differing answer marked), and the footprints of the runs."""
    out = []
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
            cells = []
            for label in labels:
                p = point.get((label, query))
                if p is None:
                    cells.append("–")
                elif p.status != OK:
                    cells.append(p.status)
                elif reference and p.fingerprint and p.fingerprint != reference:
                    cells.append(Markup(f"<span class='error'>{esc(_ms(p.mean_s))} {DIFFERS_MARK}</span>"))
                else:
                    cells.append(_ms(p.mean_s))
            rows.append([query] + cells)
        rows.append(["geometric mean"] + [_ms(geometric_mean([p.mean_s for p in comparison.queries[label]
                                                             if p.status == OK])) for label in labels])
        out.append("<h3>Time per query (mean ms)</h3>")
        out.append(html_table(["Query"] + labels, rows, numeric_from=1, wrap=tuple(range(1, len(labels) + 1))))
        out.append(f"<p>{DIFFERS_MARK}: the answer differs from the first run's that answered. Not supported "
                   "and failed are states of their own, never a zero.</p>")
    if len(comparison.footprints) > 1:
        out.append("<h3>Footprint of each run's table</h3>")
        out.append(_footprint_table([_footprint_row(label, f) for label, f in comparison.footprints.items()]))
    return "\n".join(out)


def comparison_figures(comparison: SuiteComparison) -> list[Figure]:
    figures = []
    if len(comparison.queries) > 1:
        figures.append(_query_figure(comparison.queries, "mean seconds per query; red, hatched: an answer that "
                                                         "differs from the first run's"))
    if len(comparison.footprints) > 1:
        figures.append(_footprint_figure(comparison.footprints))
    return figures


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


def _footprint_table(rows: list[list[Any]]) -> str:
    return html_table(["Table", "On disk", "CSV", "CSV ÷\ndisk", "In memory", "Memory ÷\ndisk", "Copies", "Measured by"],
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
