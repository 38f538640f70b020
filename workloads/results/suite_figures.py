"""Figures of reports 001 and 004's experiments: per-query times of a query-suite run, the suite's
geometric mean, per-category means, and footprints (bytes on disk beside the CSV and in-memory
sizes). Step figures (windows, throughput, latency) stay in ``workloads.results.figures``."""
from __future__ import annotations

import json
from typing import Any

import numpy as np
import pandas as pd

from workloads.run.records import FAILED, NOT_SUPPORTED, OK

QUERY_SQL = """
SELECT step, op AS query,
       count(*) FILTER (WHERE kind = 'measured' AND ok) AS runs,
       count(*) FILTER (WHERE kind = 'measured' AND NOT ok) AS errors,
       bool_or(kind = 'unsupported') AS unsupported,
       avg(total_s) FILTER (WHERE kind = 'measured' AND ok) AS mean_s,
       quantile_cont(total_s, 0.5) FILTER (WHERE kind = 'measured' AND ok) AS p50_s,
       min(total_s) FILTER (WHERE kind = 'measured' AND ok) AS min_s,
       max(json_extract_string(extra, '$.fingerprint')) AS fingerprint,
       max(error) FILTER (WHERE NOT ok) AS error
FROM ops WHERE run_id = ? AND kind IN ('measured', 'warmup', 'unsupported')
GROUP BY step, op ORDER BY step, min(seq), op
"""
# Reports 001 and 004's experiments: their runs show footprints in detail (per column, published)
REPORT_WORKLOADS = ("import", "export", "query-suite")


def query_figures(store, run_id: str) -> pd.DataFrame:
    """One row per step and query of a query-suite run: runs, mean / p50 / min seconds, status
    (ok; failed: any run failed; not supported) and the answer's fingerprint; category and description from the
    suite the run used."""
    from workloads.queries import load_suite

    run = store.run(run_id)
    frame = store.frame(QUERY_SQL, [run["run_id"]])
    suite_name = (run.get("scenario") or {}).get("params", {}).get("suite")
    queries = {}
    if suite_name:
        try:
            queries = {q.id: q for q in load_suite(suite_name).queries}
        except ValueError:
            queries = {}
    frame["category"] = [queries[q].category if q in queries else "" for q in frame["query"]]
    frame["description"] = [queries[q].description if q in queries else "" for q in frame["query"]]
    # a query with any failed run is "failed": its mean over the other runs would flatter it
    frame["status"] = [NOT_SUPPORTED if u else (FAILED if e or not r else OK)
                       for u, r, e in zip(frame["unsupported"], frame["runs"], frame["errors"])]
    return frame


def answer_previews(store, run_id: str, step: int) -> dict[str, dict[str, Any]]:
    """Each query's answer as recorded with its first execution in ``step`` (rows, columns, the
    first rows: ``workloads.queries.answers.preview``), for showing two answers side by side."""
    rows = store.query("SELECT op, any_value(json_extract(extra, '$.answer')) FROM ops WHERE run_id = ? "
                       "AND step = ? AND json_extract(extra, '$.answer') IS NOT NULL GROUP BY op",
                       [run_id, step])
    return {str(op): json.loads(answer) if isinstance(answer, str) else answer for op, answer in rows}


def geometric_mean(seconds) -> float | None:
    """ClickBench's summary of a suite: the geometric mean of the queries' times (None: none)."""
    values = np.asarray([v for v in seconds if v is not None and v == v and v > 0], dtype=float)
    return float(np.exp(np.log(values).mean())) if values.size else None


def suite_summary(queries: pd.DataFrame) -> pd.DataFrame:
    """Per step: queries answered, not supported and failed, and the geometric mean of the
    answered queries' mean times (ClickBench's summary, for ranking targets)."""
    rows = []
    for step, group in queries.groupby("step"):
        answered = group[group["status"] == OK]
        rows.append({"step": step, "answered": len(answered),
                     "not_supported": int((group["status"] == NOT_SUPPORTED).sum()),
                     "failed": int((group["status"] == FAILED).sum()),
                     "geomean_s": geometric_mean(answered["mean_s"].tolist())})
    return pd.DataFrame(rows, columns=["step", "answered", "not_supported", "failed", "geomean_s"])


def category_summary(queries: pd.DataFrame) -> pd.DataFrame:
    """Per step and category: queries and the mean of their mean times."""
    answered = queries[queries["status"] == OK]
    out = answered.groupby(["step", "category"], sort=False).agg(queries=("query", "size"),
                                                                 mean_s=("mean_s", "mean"))
    return out.reset_index()


# --- footprint ----------------------------------------------------------------------------------------
def footprint_figures(footprint: dict[str, Any] | None) -> dict[str, Any] | None:
    """A stored footprint with its ratios: CSV bytes / bytes on disk (report 001's compression)
    and logical bytes / bytes on disk (against the in-memory size, rows x row width)."""
    if not footprint or "bytes" not in footprint or not footprint["bytes"]:
        return None
    disk = footprint["bytes"]
    out = dict(footprint)
    out["csv_ratio"] = footprint["csv_bytes"] / disk if footprint.get("csv_bytes") else None
    out["logical_ratio"] = footprint["logical_bytes"] / disk if footprint.get("logical_bytes") else None
    return out


def run_footprints(store, run_id: str) -> dict[str, Any]:
    """The laid-out table's footprint (``layout``) and each import step's (``steps``), with ratios."""
    run = store.run(run_id)
    steps = {step: footprint_figures(facts.get("footprint"))
             for step, facts in store.step_facts(run["run_id"]).items()}
    return {"layout": footprint_figures((run.get("layout") or {}).get("footprint")),
            "steps": {step: f for step, f in steps.items() if f}}
