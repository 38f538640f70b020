"""The report's tables of figures: the runs, each run's steps and phases, the comparison across
runs, the workers' errors. Tables are made to fit A4 (headers keep their words, phases get a
table of their own)."""
from __future__ import annotations

from typing import Any

import pandas as pd

from app.report.as_html import Cell, Table, fmt_duration, fmt_int, fmt_num, fmt_when
from workloads.results.store import ResultsStore
from workloads.targets.base import PHASES


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


def _phases_present(frame: pd.DataFrame) -> list[str]:
    return [p for p in PHASES if f"{p}_ms" in frame and frame[f"{p}_ms"].notna().any()]


def _seconds_between(start: Any, end: Any) -> float | None:
    if start is None or end is None or pd.isna(start) or pd.isna(end):
        return None
    return (pd.Timestamp(end) - pd.Timestamp(start)).total_seconds()


def _users(text: Any) -> list[int]:
    return [int(u) for u in str(text or "").split(",") if u.strip()]
