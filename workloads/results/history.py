"""Stored runs read back as the figures the GUI shows: one run as a LiveSnapshot, several runs
as one comparison frame, and every run as a row of the run history table.

Every step figure comes from ``workloads.results.figures`` (one definition for every view). What only
this module draws is the time series: throughput per second of operation end time and latency
percentiles over a 5 s sliding window, exact here (numpy percentiles over the stored records)
where the live view binned them into histograms.

The time axis is the run clock, as live: seconds since the run was created. Records carry times
relative to their step's release, and files of schema 2 store each release on the run clock. For
runs recorded before that (schema 1) the release is estimated from what was kept: each step ends
``window_s`` after its release, and the next step (or, for the last one, the end of the run) is
created right after that; where timestamps are missing or do not fit, each step starts where the
previous one ended, the first at 0.
"""
from __future__ import annotations

import json

import math
from typing import Any

import numpy as np
import pandas as pd

from workloads.results.dataset_size import run_size_text
from workloads.results.figures import headline_frame, phase_summary, step_figures
from workloads.targets.common.cleared import cold_words
from workloads.operations import get_workload
from workloads.run.metrics import WINDOW_S, measured_span, measuring
from workloads.scenario import Scenario
from workloads.run.snapshot import (LatencyPoint, LiveSnapshot, ResourcePoint, SweepPoint,
                                ThroughputPoint)
from workloads.results.suite_figures import run_footprints
from workloads.results.suite_history import stored_query_points
from workloads.results.store import ResultsStore, StoreError
from workloads.targets.base import PHASES

# Up to this many measured operations a stored run's series are each operation's own (a short
# run's per-second bins would be mostly empty seconds and read as a flat zero line).
PER_OPERATION_MAX = 200

# Only the columns the series need: a 1M-op run must not drag its strings into memory.
_OPS_SQL = ("SELECT step, t_start, total_s, rows, bytes, ok FROM ops "
            "WHERE run_id = ? AND kind = 'measured' ORDER BY step, t_start")

# The keys of history_rows(): what widgets/history/run_history.py's RunHistoryView shows (first eleven),
# the status tooltip, which step gave the headline figures (and whether it was too short), and how
# the run's users were started and run (``started_as``).
HISTORY_KEYS = ("run_id", "started_at", "workload", "dataset", "target", "users", "status",
                "rows_per_s", "mb_per_s", "p50_ms", "p99_ms",
                "message", "name", "cache", "headline_step", "headline_label", "headline_short", "size",
                "process")


# --- one run as a snapshot -------------------------------------------------------------------

def snapshot_from_store(store: ResultsStore, run_id: str) -> LiveSnapshot:
    """The figures a live run showed at its end, rebuilt from the stored records.

    Series on the run clock (see the module doc); the sweep, phases (with their step, count and
    source) and first-operation figures from ``workloads.results.figures``, phases of the last step that
    has any, as live; worker states and errors of the last step; resource samples as taken.
    """
    run = store.run(run_id)
    run_id = run["run_id"]                       # a unique prefix was enough to find it
    figures = step_figures(store, run_id)
    ops = store.frame(_OPS_SQL, [run_id])

    ends_in_step = (ops["t_start"] + ops["total_s"]).groupby(ops["step"]).max()
    windows = [_step_window(row, ends_in_step) for row in figures.itertuples()]
    offsets = release_offsets(figures, windows, run.get("created_at"), run.get("finished_at"))
    offset_of = dict(zip(figures["step"], offsets))

    ok = ops["ok"].to_numpy(dtype=bool)
    ends = (ops["t_start"] + ops["total_s"]).to_numpy(dtype=float) + \
        ops["step"].map(offset_of).fillna(0.0).to_numpy(dtype=float)
    released = min(offsets) if offsets else 0.0
    per_operation = 0 < ok.sum() <= PER_OPERATION_MAX
    if per_operation:
        throughput, latency = operation_points(ends[ok], ops["rows"].to_numpy()[ok], ops["bytes"].to_numpy()[ok],
                                               ops["total_s"].to_numpy(dtype=float)[ok])
    else:
        throughput, latency = _binned_points(ends[ok], ops["rows"].to_numpy()[ok], ops["bytes"].to_numpy()[ok],
                                             ops["total_s"].to_numpy(dtype=float)[ok], released,
                                             _measuring_windows(ops["step"].to_numpy()[ok], ends[ok], offset_of))

    last_step = int(figures["step"].iloc[-1]) if len(figures) else 0
    phase_row = _last_with_phases(figures)
    means, percentiles, phase_ops, source = phase_summary(phase_row) if phase_row is not None \
        else ({}, {}, 0, "")

    workers = store.workers(run_id)
    workers = workers[workers["step"] == last_step]
    worker_states = {int(w): str(s) for w, s in zip(workers["worker"], workers["state"])}
    worker_errors = {int(w): str(e) for w, e in zip(workers["worker"], workers["error"])
                     if isinstance(e, str) and e}

    resources = store.resources(run_id)
    steps_total = max(_planned_steps(run), len(figures))
    status = str(run["status"])
    elapsed = _seconds_between(run.get("created_at"), run.get("finished_at"))
    if elapsed is None:
        elapsed = float(max(ends.max(initial=0.0), max(offsets, default=0.0)))
    last = figures.iloc[-1] if len(figures) else None
    queries, query_step = stored_query_points(store, run) if run["workload"] == "query-suite" else ([], "")
    return LiveSnapshot(
        run_id=run_id, status=status, target=str(run["target"]), workload=str(run["workload"]),
        step_index=last_step, steps_total=steps_total,
        users=int(last["users"]) if last is not None else 0,
        elapsed_s=elapsed, ops_done=int(ok.sum()), ops_failed=int((~ok).sum()),
        progress=_stored_progress(run, figures, steps_total),
        message=str(run.get("message") or ""),
        throughput=throughput, latency=latency, step_label=str(last["label"]) if last is not None else "",
        phase_means=means, phase_percentiles=percentiles,
        phase_step=str(phase_row["label"]) if phase_row is not None else "",
        phase_ops=phase_ops, phase_source=source, phase_exact=phase_row is not None,
        first_op_s=_optional(phase_row, "first_op_s") if phase_row is not None else _optional(last, "first_op_s"),
        steady_p50_s=_optional(phase_row, "p50_s") if phase_row is not None else _optional(last, "p50_s"),
        mean_total_s=_optional(phase_row, "mean_s") if phase_row is not None else _optional(last, "mean_s"),
        sweep=sweep_points(figures), workers=worker_states, worker_errors=worker_errors, per_operation=per_operation,
        name=str(run.get("name") or ""), cache=str(run.get("cache") or ""),
        resources=[ResourcePoint(float(r.t), float(r.cpu_percent), int(r.rss_bytes),
                                 float(r.read_bytes_per_s), float(r.write_bytes_per_s))
                   for r in resources.itertuples()],
        queries=queries, query_step=query_step, footprints=run_footprints(store, run_id),
    )


def _last_with_phases(figures: pd.DataFrame):
    """The last step whose phases were measured (a step cut off before any has none)."""
    for _, row in figures.iloc[::-1].iterrows():
        if phase_summary(row.to_dict())[0]:
            return row.to_dict()
    return None


def _optional_number(value) -> float | None:
    return None if value is None or pd.isna(value) else float(value)


def _optional(row, key) -> float | None:
    if row is None:
        return None
    value = row.get(key) if isinstance(row, dict) else row[key]
    return None if value is None or pd.isna(value) else float(value)


def release_offsets(figures: pd.DataFrame, windows: list[float], created_at, finished_at) -> list[float]:
    """Run-clock second of each step's release: as stored (schema 2), else estimated."""
    stored = figures["release_clock"].tolist() if "release_clock" in figures else []
    if stored and all(v is not None and not pd.isna(v) for v in stored):
        return [float(v) for v in stored]
    return step_offsets(list(figures["started_at"]), windows, created_at, finished_at)


def step_offsets(started_at: list, durations: list[float], created_at, finished_at) -> list[float]:
    """Run-clock second at which each step released its workers (steps in table order).

    A step is released ``duration`` before the next step (or the run's end) was recorded; that
    estimate is used when it falls after the step's own creation and after the previous step
    ended, otherwise the step starts where the previous one ended (the first at 0).
    """
    offsets: list[float] = []
    earliest = 0.0
    for k, duration in enumerate(durations):
        created = _seconds_between(created_at, started_at[k])
        following = started_at[k + 1] if k + 1 < len(durations) else finished_at
        estimate = _seconds_between(created_at, following)
        if estimate is not None:
            estimate -= duration
        floor = max(earliest, created) if created is not None and created >= 0 else earliest
        offset = estimate if estimate is not None and estimate >= floor else earliest
        offsets.append(float(offset))
        earliest = offset + duration
    return offsets


def _measuring_windows(steps: np.ndarray, ends: np.ndarray, offset_of: dict) -> list[tuple[float, float]]:
    """Each step's measurement window on the run clock, as live: its release to its last
    measured operation's end."""
    windows = []
    for step, released in offset_of.items():
        mine = ends[steps == step]
        windows.append((float(released), float(mine.max()) if mine.size else float(released)))
    return windows


def _binned_points(ends, rows, nbytes, totals, released: float, windows: list[tuple[float, float]] | None = None):
    return (throughput_points(ends, rows, nbytes, released, windows),
            latency_points(ends, totals, int(math.floor(released))))


def operation_points(ends: np.ndarray, rows: np.ndarray, nbytes: np.ndarray,
                     totals: np.ndarray) -> tuple[list[ThroughputPoint], list[LatencyPoint]]:
    """Each operation at its end: its own rate (its rows over its time) and its latency. For short
    runs, where per-second bins would be mostly empty seconds."""
    order = np.argsort(ends, kind="stable")
    throughput, latency = [], []
    for i in order:
        total = float(totals[i])
        rate = 1.0 / total if total > 0 else 0.0
        throughput.append(ThroughputPoint(float(ends[i]), float(rows[i]) * rate, float(nbytes[i]) * rate, rate, total))
        latency.append(LatencyPoint(float(ends[i]), total, total, total))
    return throughput, latency


def throughput_points(ends: np.ndarray, rows: np.ndarray, nbytes: np.ndarray, released: float = 0.0,
                      windows: list[tuple[float, float]] | None = None) -> list[ThroughputPoint]:
    """Per whole second of end time (point at the second's end, as live), empty seconds as 0.

    As live (``LiveAggregates``): the part of a second after the first release joins the next
    second and its rate is over that whole span; a bin of its own would chart a false zero."""
    if ends.size == 0:
        return []
    first_second = int(math.floor(released))
    seconds = np.floor(ends).astype(np.int64) - first_second
    seconds = np.maximum(seconds, 0)          # ends before the first release cannot happen
    span = int(seconds.max()) + 1
    row_sum = np.bincount(seconds, weights=rows.astype(np.float64), minlength=span)
    byte_sum = np.bincount(seconds, weights=nbytes.astype(np.float64), minlength=span)
    op_count = np.bincount(seconds, minlength=span).astype(np.float64)
    widths = np.ones(span)
    start = 0
    if released > first_second and span > 1:
        for sums in (row_sum, byte_sum, op_count):
            sums[1] += sums[0]
        widths[1] = first_second + 2.0 - released
        start = 1
    elif released > first_second:
        widths[0] = first_second + 1.0 - released
    if windows:                 # a second a step ended or began in: its rate over its measured part
        for i in range(start, span):
            low = released if (i == start and released > first_second) else float(first_second + i)
            widths[i] = measured_span(low, float(first_second + i + 1), windows, widths[i])
    return [ThroughputPoint(float(first_second + i + 1), float(row_sum[i] / widths[i]),
                            float(byte_sum[i] / widths[i]), float(op_count[i] / widths[i]), float(widths[i]),
                            bool(op_count[i]) or windows is None or measuring(first_second + i, windows))
            for i in range(start, span)]


def latency_points(ends: np.ndarray, totals: np.ndarray, first_second: int = 0,
                   window_s: int = WINDOW_S) -> list[LatencyPoint]:
    """p50/p95/p99 of the operations that ended in the ``window_s`` seconds up to each second."""
    if ends.size == 0:
        return []
    seconds = np.maximum(np.floor(ends).astype(np.int64) - first_second, 0)
    order = np.argsort(seconds, kind="stable")
    seconds, totals = seconds[order], totals[order]
    span = int(seconds[-1]) + 1
    bounds = np.searchsorted(seconds, np.arange(span + 1))     # ops of second s: bounds[s]:bounds[s+1]
    points = []
    for s in range(span):
        lo, hi = bounds[max(s - window_s + 1, 0)], bounds[s + 1]
        if hi > lo:
            p50, p95, p99 = np.percentile(totals[lo:hi], (50, 95, 99))
            points.append(LatencyPoint(float(first_second + s + 1), float(p50), float(p95), float(p99)))
    return points


def sweep_points(figures: pd.DataFrame) -> list[SweepPoint]:
    """One complete point per step that ran (a step cut off before any operation is left out)."""
    points = []
    for row in figures.itertuples():
        if not row.ops and row.status == "running":
            continue
        wire = _optional_number(row.wire_mb_per_s)
        points.append(SweepPoint(
            users=int(row.users), rows_per_s=_number(row.rows_per_s),
            bytes_per_s=_number(row.mb_per_s) * 1e6, ops_per_s=_number(row.ops_per_s),
            p50=_number(row.p50_s), p99=_number(row.p99_s), complete=True,
            label=str(row.label), short=bool(row.short), exact=True,
            wire_bytes_per_s=wire * 1e6 if wire is not None else None))
    return points


# --- several runs side by side ---------------------------------------------------------------

COMPARE_COLUMNS = ("run_id", "run", "target", "workload", "dataset", "status", "step", "step_label",
                   "users", "ops", "cold_ops", "host_cold_ops", "cleared", "errors", "window_s", "short", "rows_per_s", "mb_per_s",
                   "wire_mb_per_s", "ops_per_s", "p50_ms", "p95_ms", "p99_ms", "mean_ms",
                   "first_op_ms", "phase_source", "phase_ops") + tuple(f"{p}_ms" for p in PHASES)


def newest_run_id(store: ResultsStore) -> str | None:
    """The run created last (run ids sort by second only), or None in an empty catalog."""
    created = {}
    for run_id in store.run_ids():
        try:
            created[run_id] = store.run(run_id)["created_at"]
        except StoreError:            # a damaged run is listed in History, never opened by itself
            continue
    return max(created, key=lambda r: (created[r], r)) if created else None


def _environment(environment) -> dict:
    """A run's environment record as a dict, whether the store gave it as JSON text or parsed."""
    if isinstance(environment, str):
        try:
            environment = json.loads(environment) if environment else {}
        except ValueError:
            return {}
    return environment if isinstance(environment, dict) else {}


def opened_from(environment) -> str:
    """"(from HOST)" for a run opened from a bundle made elsewhere (``workloads.results.bundle_open``
    records its origin), "" for a run made in this catalog."""
    origin = _environment(environment).get("origin")
    if not isinstance(origin, dict) or not origin.get("bundle"):
        return ""
    return f"(from {origin.get('host') or 'another host'})"


def started_as(environment) -> str:
    """How a run's users were started, short: "forked" or "spawned", with " · plain" for a plain
    process (``workloads.run.processes``). A run recorded before that record was spawned: the only way."""
    conditions = _environment(environment).get("process") or {}
    return users_started(conditions) + (" · plain" if conditions.get("process") == "plain" else "")


def users_started(conditions: dict) -> str:
    """"forked" (from a preloaded server) or "spawned", from a run's recorded process conditions."""
    return "forked" if conditions.get("start") == "forkserver" else "spawned"


def run_labels(store: ResultsStore, run_ids: list[str]) -> dict[str, str]:
    """Short, unique labels for legends: the scenario name (or target and workload), with the
    run id added where two runs would otherwise read the same, and the host a run opened from a
    bundle came from."""
    runs = [store.run(r) for r in run_ids]
    base = {}
    for run in runs:
        name = str(run.get("name") or "")
        base[run["run_id"]] = name if name and name != "untitled" else f"{run['target']} {run['workload']}"
        came_from = opened_from(run.get("environment"))
        if came_from:
            base[run["run_id"]] += f" {came_from}"
    counts = pd.Series(list(base.values())).value_counts()
    return {rid: (f"{text} ({rid})" if counts[text] > 1 else text) for rid, text in base.items()}


def compare_frame(store: ResultsStore, run_ids: list[str]) -> pd.DataFrame:
    """One row per run and step: the step figures of ``workloads.results.figures``, times in ms."""
    labels = run_labels(store, run_ids)
    frames = []
    for given in run_ids:
        run = store.run(given)
        figures = step_figures(store, run["run_id"])
        frame = pd.DataFrame({
            "run_id": run["run_id"], "run": labels[run["run_id"]], "target": run["target"],
            "workload": run["workload"], "dataset": run["dataset"], "status": figures["status"],
            "step": figures["step"], "step_label": figures["label"], "users": figures["users"],
            "ops": figures["ops"], "cold_ops": figures["cold_ops"], "host_cold_ops": figures["host_cold_ops"],
            "cleared": [cold_words(c, h, e) if run.get("cache") == "cold" else "" for c, h, e in
                        zip(figures["cold_ops"], figures["host_cold_ops"], figures["engine_cold_ops"])],
            "errors": figures["errors"],
            "window_s": figures["window_s"],
            "short": figures["short"], "rows_per_s": figures["rows_per_s"],
            "mb_per_s": figures["mb_per_s"], "wire_mb_per_s": figures["wire_mb_per_s"],
            "ops_per_s": figures["ops_per_s"], "phase_source": figures["phase_source"],
            "phase_ops": figures[[f"{p}_n" for p in PHASES]].max(axis=1),
        })
        for name in ("p50", "p95", "p99", "mean"):
            frame[f"{name}_ms"] = figures[f"{name}_s"] * 1000
        frame["first_op_ms"] = figures["first_op_s"] * 1000
        for phase in PHASES:
            frame[f"{phase}_ms"] = figures[f"{phase}_s"] * 1000
        frames.append(frame)
    if not frames:
        return pd.DataFrame(columns=list(COMPARE_COLUMNS))
    result = pd.concat(frames, ignore_index=True)[list(COMPARE_COLUMNS)]
    numeric = [c for c in COMPARE_COLUMNS if c.endswith(("_per_s", "_ms", "window_s"))]
    result[numeric] = result[numeric].astype("float64")
    return result


# --- the run history table -------------------------------------------------------------------

def history_rows(store: ResultsStore) -> list[dict[str, Any]]:
    """Every run as a dict for RunHistoryView, newest first, in one SQL query.

    Headline figures (rows/s, MB/s, p50, p99) are those of one step, named by
    ``headline_label``: the step with the highest rows/s (runs that move no rows: operations/s)
    among the steps long enough to measure; ``headline_short`` is True when every step was too
    short. ``users`` is the run's list of users (a sweep shows as "1, 2, 4").
    """
    frame = headline_frame(store)
    rows = []
    for record in frame.to_dict("records"):
        row = {key: _plain(record.get(key)) for key in HISTORY_KEYS}
        row["size"] = run_size_text(record)      # as laid out, recorded with the run
        row["process"] = started_as(record.get("environment"))
        row["users"] = _users(record.get("users"))
        row["message"] = row["message"] or ""
        came_from = opened_from(record.get("environment"))
        if came_from:
            row["name"] = f"{row['name'] or 'untitled'} {came_from}"
        row["headline_short"] = bool(row["headline_short"])
        if row["headline_step"] is not None:
            row["headline_step"] = int(row["headline_step"])
        if row["cache"] == "cold" and record.get("cold_ops") is not None and record["cold_ops"] == record["cold_ops"]:
            row["cache"] = "cold: " + cold_words(*(int(record[k]) for k in ("cold_ops", "host_cold_ops",
                                                                            "engine_cold_ops")))
        rows.append(row)
    return rows


# --- helpers ---------------------------------------------------------------------------------

def _stored_progress(run: dict, figures: pd.DataFrame, steps_total: int) -> float:
    """How far a stored run got, 0..1: its completed steps, and of a step it stopped in (cancelled,
    failed) the share of its planned operations or duration that ran, so a cancel does not read
    as "nothing done"."""
    if run["status"] == "completed":
        return 1.0
    scenario = run.get("scenario") or {}
    per_user, duration = int(scenario.get("operations") or 0), float(scenario.get("duration_s") or 0.0)
    done = 0.0
    for row in figures.itertuples():
        if row.status == "completed":
            done += 1.0
        elif per_user and row.users:
            done += min(1.0, row.ops / (per_user * row.users))
        elif duration and row.window_s == row.window_s and row.window_s:
            done += min(1.0, row.window_s / duration)
    return done / max(steps_total, 1)


def _step_window(row, ends_in_step: pd.Series) -> float:
    window = row.window_s
    if window is not None and not pd.isna(window):
        return float(window)
    # a step cut off (app closed mid-run): it lasted at least until its last record ended
    end = ends_in_step.get(row.step)
    return float(end) if end is not None and not pd.isna(end) else 0.0


def _seconds_between(start, end) -> float | None:
    if start is None or end is None or pd.isna(start) or pd.isna(end):
        return None
    return (pd.Timestamp(end) - pd.Timestamp(start)).total_seconds()


def _planned_steps(run: dict[str, Any]) -> int:
    """Steps the scenario asked for (a cancelled run stored fewer); 0 if it cannot be read back."""
    try:
        scenario = Scenario.from_dict(run["scenario"])
        return len(get_workload(scenario.workload).steps(scenario))
    except (KeyError, TypeError, ValueError):
        return 0


def _number(value) -> float:
    """NaN (no operations, no duration) as 0 for charts, which cannot draw NaN points."""
    return 0.0 if value is None or pd.isna(value) else float(value)


def _plain(value):
    """pandas scalars as plain Python: NaN/NaT/NA -> None, Timestamp -> datetime, numpy -> float/int."""
    if value is None:
        return None
    if isinstance(value, pd.Timestamp):
        return None if pd.isna(value) else value.to_pydatetime()
    try:
        if pd.isna(value):
            return None
    except (TypeError, ValueError):
        return value
    if isinstance(value, np.integer):
        return int(value)
    if isinstance(value, np.floating):
        return float(value)
    return value


def _users(text) -> list[int]:
    if text is None or (isinstance(text, float) and math.isnan(text)):
        return []
    return [int(u) for u in str(text).split(",") if u.strip()]
