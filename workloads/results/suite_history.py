"""Stored query-suite figures read back for the window: one run's per-query points (the dashboard)
and several runs side by side with their recorded answers and footprints (compare view, report)."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from workloads.run.snapshot import QueryPoint
from workloads.results.store import ResultsStore
from workloads.results.suite_figures import answer_previews, query_figures, run_footprints


@dataclass
class SuiteComparison:
    """Per run label: query points of its last suite step, the answers recorded there (query ->
    preview) and the laid-out table's footprint."""
    queries: dict[str, list[QueryPoint]] = field(default_factory=dict)
    answers: dict[str, dict[str, dict[str, Any]]] = field(default_factory=dict)
    footprints: dict[str, dict[str, Any]] = field(default_factory=dict)


def stored_query_points(store: ResultsStore, run: dict) -> tuple[list[QueryPoint], str]:
    """The per-query figures of a query-suite run's last step that ran any, and that step's label."""
    queries, step = _last_step(store, run["run_id"])
    if queries.empty:
        return [], ""
    label = store.query("SELECT label FROM steps WHERE run_id = ? AND step = ?", [run["run_id"], step])
    return [QueryPoint(str(r.query), str(r.category), str(r.description), int(r.runs), _number(r.mean_s),
                       _number(r.p50_s), _number(r.min_s), str(r.status), _text(r.fingerprint), _text(r.error))
            for r in queries.itertuples()], (label[0][0] if label else "")


def suite_comparison(store: ResultsStore, run_ids: list[str], labels: dict[str, str]) -> SuiteComparison:
    """``labels``: run id -> the label the other comparison views use (``history.run_labels``)."""
    out = SuiteComparison()
    for given in run_ids:
        run = store.run(given)
        label = labels[run["run_id"]]
        if run["workload"] == "query-suite":
            points, _ = stored_query_points(store, run)
            if points:
                out.queries[label] = points
                _, step = _last_step(store, run["run_id"])
                out.answers[label] = answer_previews(store, run["run_id"], step)
        footprint = run_footprints(store, run["run_id"])["layout"]
        if footprint:
            out.footprints[label] = footprint
    return out


def _last_step(store: ResultsStore, run_id: str) -> tuple[pd.DataFrame, int]:
    queries = query_figures(store, run_id)
    if queries.empty:
        return queries, -1
    step = int(queries["step"].max())
    return queries[queries["step"] == step], step


def _number(value) -> float | None:
    return None if value is None or pd.isna(value) else float(value)


def _text(value) -> str:
    return "" if value is None or pd.isna(value) else str(value)
