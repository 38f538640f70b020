"""Published beside measured: the seed reports' figures for a run's workload, labelled "published
(their hardware)", with this run's figure beside them labelled "measured (your hardware)" where
they compare, and what answered the run (a DolphinDB server is placed beside DolphinDB's figures
only when it is known to be one)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pandas as pd

from app.report.as_html import Cell, Table, fmt_num, fmt_rate
from widgets.charts.breakdown import MEASURED_LABEL, PUBLISHED_LABEL
from workloads.results.references import DISK, Reference, references_for
from workloads.results.suite_figures import REPORT_WORKLOADS


TEST_SERVER_MARK = "tickbench-test-server"   # in the version string of tests/ddbserver


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
