"""One run's section of the report as plain data for the template: its scenario in words, its
tables, charts, query suite, published figures beside its own, and its environment."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pandas as pd

from app.report.charts import Figure
from app.report.environment import STRING_MODES, _bounded_by_operations, _environment_rows, _uses_target
from app.report.as_html import Table, fmt_count, fmt_when
from app.report.references import References, _references
from app.report.suites import SuiteView, gallery_slot, run_anchor
from app.report.tables import _phase_table, _phases_present, _steps_table, _users, _worker_errors
from workloads.results.dataset_size import run_size_text
from workloads.results.figures import STEP_FIGURES_DOC, not_cold_by_step, short_reason, step_figures
from workloads.results.run_summary import target_notes
from workloads.results.store import ResultsStore


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
    target_notes: list[str]          # how the target measured (run_summary.target_notes)
    suite: SuiteView | None
    errors: Table
    charts: list[Figure]
    references: References
    environment: Table
    gallery: dict[str, str] | None = None   # report, experiment, arm, size, anchor


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
        cold=_cold_lines(store, run, steps) if run.get("cache") == "cold" else [], target_notes=target_notes(run),
        suite=suite, errors=Table(["Step", "Worker", "State", "Error"], errors, wrap=(3,)), charts=figures,
        references=_references(run, steps),
        environment=Table(["", ""], _environment_rows(run, step_figures(store, run["run_id"])), show_header=False,
                          wrap=(1,)),
        gallery=gallery)


def _cold_lines(store: ResultsStore, run: dict[str, Any], steps: pd.DataFrame) -> list[str]:
    """Per step of a cold run: how many operations held cold, what was cleared, and why the others
    did not (their records' reasons), as ``tickbench show`` says it."""
    why_not = not_cold_by_step(store, run["run_id"])
    return [f"{r.step_label}: cold: {int(r.cold_ops):,} of {int(r.ops):,} operations (cleared: {r.cleared})"
            + "".join(f"; not cold: {n:,}: {why}" for why, n in why_not.get(int(r.step), ()))
            for r in steps.itertuples()]


def _scenario_text(run: dict[str, Any], scenario: dict[str, Any]) -> str:
    parts = [f"Status {run['status']}", f"started {fmt_when(run.get('created_at'))}"]
    if not _uses_target(run):
        parts.append(f"no data read or written: {run['workload']} measures the harness alone")
    elif run_size_text(run):      # as laid out, recorded with the run (an import's own size)
        parts.append(f"dataset {run['dataset']} ({run_size_text(run)})")
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
