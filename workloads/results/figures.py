"""The figures of a step, defined once: every view (live at a step's end, history, compare, `show`,
exports, the report) reads them from here.

Definitions (``STEP_FIGURES_DOC`` says the same in words for the UI and the report):
- The measurement window of a step runs from the release of its workers to the end of its last
  measured operation (``steps.window_s``). Warm-up operations end before it, probes after it. A
  cold step's window is the time during which at least one of its measured operations ran: the
  cache clears between its rounds (``workloads.run.cold``) are in no figure. So is a step's that
  took turns with another run's (``workloads.run.turns``): its users' waits for their turns are not
  its time.
- Cold: a cold step counts the measured operations that held cold (``cold_ops`` of ``ops``: the
  clear applied something and no other operation of the round read the same day), and their
  median (``cold_p50_s``); the findings on cold against warm use only those.
- Throughput: rows, logical bytes and operations of the step's successful measured operations,
  divided by the window.
- Latency: exact percentiles (linear interpolation) and the mean of the successful measured
  operations' total times.
- Phases: mean and percentiles of each phase over the operations that report it, with their
  count: the measured operations, or, where the target splits phases only in probes, the probes.
- First operation in a fresh process: the median over the step's workers of their first (warm-up)
  operation, beside the steady state; never part of the figures above. A fresh process has run
  nothing of the benchmark yet: by default it is forked from a server that had imported the
  engine's client, pandas and pyarrow (its imports are done, its caches and connections are not);
  with ``start="spawn"`` it is a new interpreter that imports them itself
  (``workloads.run.processes``; the run records which).
- Open loop (a step offered a rate, ``workloads.run.schedule``): ``rate`` is the offered operations per
  second; ``latency_p*_s`` count from each operation's intended start (what a client on that
  schedule waits), ``p*_s`` stay its service time; ``late_ops`` began over ``LATE_S`` after their
  intended start, ``missed_ops`` were scheduled but the step ended first (in no percentile),
  ``scheduled_ops`` = measured + missed. Closed-loop steps have them NULL.
- A step with fewer than ``MIN_OPS`` measured operations or a window under ``MIN_WINDOW_S`` is
  flagged "too short" with what to change; headlines skip it while another step can stand.
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd

from workloads.run.schedule import LATE_S
from workloads.scenario import SIZES, parse_slot
from workloads.targets.base import PHASES
from workloads.targets.common.cleared import ENGINE_COLD_SQL, HOST_COLD_SQL, cold_words, in_words

MIN_OPS = 5
MIN_WINDOW_S = 1.0

STEP_FIGURES_DOC = ("Measurement window: from the release of the workers to the end of the last "
                    "measured operation (a cold step: the time its operations ran, never a cache "
                    "clear's). Throughput = rows (or logical bytes, or operations) of the "
                    "successful measured operations / window. Latency percentiles are exact over "
                    "the measured operations. Warm-up operations (the first in a fresh process) and "
                    "probe operations (for phase splits) are kept apart.")

# An operation that held cold (workloads.run.cold); runs stored before it have no such fact
_HELD_COLD = "CASE WHEN json_valid({extra}) THEN json_extract_string({extra}, '$.cold') END = 'true'"
# ... and cold in the reports' sense: the page cache of the host holding its data dropped too
_HOST_COLD = f"({_HELD_COLD} AND {HOST_COLD_SQL})"
_ENGINE_COLD = f"({_HELD_COLD} AND {ENGINE_COLD_SQL})"
# Per-step sums of measured operations; {where} selects the runs. Rates and the short flag follow.
_STEP_SUMS = f"""
SELECT s.run_id, s.step, s.users, s.label, s.window_s, s.release_clock, s.released_at, s.started_at,
       s.status, s.cache_methods, s.rate,
       count(o.seq) FILTER (WHERE o.ok) AS ops,
       count(o.seq) FILTER (WHERE NOT o.ok) AS errors,
       coalesce(sum(o.rows) FILTER (WHERE o.ok), 0) AS rows,
       coalesce(sum(o.bytes) FILTER (WHERE o.ok), 0) AS bytes,
       sum(o.wire_bytes) FILTER (WHERE o.ok) AS wire_bytes,
       count(o.wire_bytes) FILTER (WHERE o.ok) AS wire_ops,
       count(o.seq) FILTER (WHERE o.ok AND {_HELD_COLD.format(extra="o.extra")}) AS cold_ops,
       count(o.seq) FILTER (WHERE o.ok AND {_HOST_COLD.format(extra="o.extra")}) AS host_cold_ops,
       count(o.seq) FILTER (WHERE o.ok AND {_ENGINE_COLD.format(extra="o.extra")}) AS engine_cold_ops
FROM steps s LEFT JOIN ops o ON o.run_id = s.run_id AND o.step = s.step AND o.kind = 'measured'
{{where}}
GROUP BY ALL
"""
_RATES = f"""
rows / nullif(window_s, 0) AS rows_per_s,
bytes / nullif(window_s, 0) / 1e6 AS mb_per_s,
ops / nullif(window_s, 0) AS ops_per_s,
CASE WHEN ops > 0 AND wire_ops = ops THEN wire_bytes / nullif(window_s, 0) / 1e6 END AS wire_mb_per_s,
(ops < {MIN_OPS} OR coalesce(window_s, 0) < {MIN_WINDOW_S}) AS short
"""
# the quantiles of a step as one list aggregate: DuckDB then holds its times once, not once a quantile
_LATENCY = f"""
SELECT step, q[1] AS p50_s, q[2] AS p95_s, q[3] AS p99_s, q[4] AS p999_s, q[5] AS p9999_s, mean_s, min_s,
       cold_p50_s, host_cold_p50_s
FROM (SELECT step, quantile_cont(total_s, [0.50, 0.95, 0.99, 0.999, 0.9999]) AS q, avg(total_s) AS mean_s,
             min(total_s) AS min_s,
             quantile_cont(total_s, 0.50) FILTER (WHERE {_HELD_COLD.format(extra="extra")}) AS cold_p50_s,
             quantile_cont(total_s, 0.50) FILTER (WHERE {_HOST_COLD.format(extra="extra")}) AS host_cold_p50_s
      FROM ops WHERE run_id = ? AND kind = 'measured' AND ok GROUP BY step)
"""
# Open loop (workloads.run.schedule): latency counts from each operation's intended start; late
# starts and missed ones (the step ended first) are counted
_LATE = "t_start - intended_s"
_OPEN_LOOP = f"""
SELECT step,
       count(*) FILTER (WHERE kind = 'measured') + count(*) FILTER (WHERE kind = 'missed') AS scheduled_ops,
       count(*) FILTER (WHERE kind = 'measured' AND {_LATE} > {LATE_S}) AS late_ops,
       count(*) FILTER (WHERE kind = 'missed') AS missed_ops,
       max({_LATE}) FILTER (WHERE kind = 'measured') AS max_start_delay_s,
       quantile_cont(total_s + {_LATE}, [0.50, 0.99, 0.999, 0.9999]) FILTER (WHERE kind = 'measured' AND ok) AS q
FROM ops WHERE run_id = ? AND intended_s IS NOT NULL AND kind IN ('measured', 'missed') GROUP BY step
"""
_FIRST_OP = """
SELECT step, count(*) AS first_ops, quantile_cont(total_s, 0.5) AS first_op_s
FROM ops WHERE run_id = ? AND kind = 'warmup' AND seq = 0 AND ok GROUP BY step
"""
STEP_FIGURES_SQL = f"""
WITH sums AS ({_STEP_SUMS.format(where="WHERE s.run_id = ?")}),
     lat AS ({_LATENCY}), first AS ({_FIRST_OP}), open AS ({_OPEN_LOOP})
SELECT sums.*, {_RATES}, lat.p50_s, lat.p95_s, lat.p99_s, lat.p999_s, lat.p9999_s, lat.mean_s, lat.min_s,
       lat.cold_p50_s, lat.host_cold_p50_s, coalesce(first.first_ops, 0) AS first_ops, first.first_op_s,
       open.scheduled_ops, open.late_ops, open.missed_ops, open.max_start_delay_s, open.q[1] AS latency_p50_s,
       open.q[2] AS latency_p99_s, open.q[3] AS latency_p999_s, open.q[4] AS latency_p9999_s
FROM sums LEFT JOIN lat USING (step) LEFT JOIN first USING (step) LEFT JOIN open USING (step)
ORDER BY step
"""
_PHASE_COLUMNS = ", ".join(f"{p}_s" for p in PHASES)
PHASE_SQL = f"""
SELECT step, kind, phase, n, mean_s, q[1] AS p50_s, q[2] AS p95_s, q[3] AS p99_s
FROM (SELECT step, kind, replace(phase, '_s', '') AS phase, count(*) AS n, avg(seconds) AS mean_s,
             quantile_cont(seconds, [0.50, 0.95, 0.99]) AS q
      FROM (UNPIVOT (SELECT step, kind, {_PHASE_COLUMNS} FROM ops
                     WHERE run_id = ? AND ok AND kind IN ('measured', 'probe'))
            ON {_PHASE_COLUMNS} INTO NAME phase VALUE seconds)
      GROUP BY ALL)
"""
# One row per run: its headline step (highest rows/s, then ops/s, among steps long enough to
# measure while there are any) with that step's figures, for the history table.
HEADLINE_SQL = f"""
WITH sums AS ({_STEP_SUMS.format(where="")}),
rated AS (SELECT *, {_RATES} FROM sums),
best AS (
    SELECT * FROM rated
    QUALIFY row_number() OVER (PARTITION BY run_id ORDER BY short, rows_per_s DESC NULLS LAST,
                                                             ops_per_s DESC NULLS LAST, step) = 1
), latency AS (
    SELECT b.run_id, quantile_cont(o.total_s, 0.5) AS p50_s, quantile_cont(o.total_s, 0.99) AS p99_s
    FROM best b JOIN ops o ON o.run_id = b.run_id AND o.step = b.step AND o.ok AND o.kind = 'measured'
    GROUP BY b.run_id
)
SELECT r.run_id, r.name, r.created_at AS started_at, r.finished_at, r.status, r.dataset, r.target,
       r.workload, r.users, r.cache, r.message,
       b.step AS headline_step, b.label AS headline_label, b.users AS headline_users, b.short AS headline_short,
       b.rows_per_s, b.mb_per_s, b.ops_per_s, l.p50_s * 1000 AS p50_ms, l.p99_s * 1000 AS p99_ms,
       b.cold_ops, b.host_cold_ops, b.engine_cold_ops, r.layout, r.scenario, r.environment
FROM runs r LEFT JOIN best b ON b.run_id = r.run_id LEFT JOIN latency l ON l.run_id = r.run_id
ORDER BY r.created_at DESC, r.run_id
"""


def step_figures(store, run_id: str) -> pd.DataFrame:
    """One row per step of ``run_id``: window, throughput, latency, first operation, phases.

    Phase columns per phase p: ``p_s`` (mean seconds), ``p_n`` (operations), ``p_p50_s``,
    ``p_p95_s``, ``p_p99_s``; ``phase_source`` says whether they come from measured operations
    or probes. ``short_reason`` says why a step is too short to measure (empty when it is not).
    """
    frame = store.run_frame(run_id, STEP_FIGURES_SQL, [run_id] * 4)
    frame = _with_phases(frame, store.run_frame(run_id, PHASE_SQL, [run_id]))
    frame["short"] = frame["short"].astype(bool)
    slot = ""
    if frame["short"].any():
        slot = (store.run(run_id) or {}).get("scenario", {}).get("experiment", "")
    frame["short_reason"] = [short_reason(o, w, slot) if s else "" for o, w, s in
                             zip(frame["ops"], frame["window_s"], frame["short"])]
    return frame


def op_times(store, run_id: str, step: int, held_cold: bool = False, host_cold: bool = False) -> np.ndarray:
    """The times of one step's measured operations: those whose median is its ``p50_s`` (with
    ``held_cold``, its ``cold_p50_s``; with ``host_cold``, its ``host_cold_p50_s``)."""
    cold = _HOST_COLD if host_cold else _HELD_COLD if held_cold else ""
    cold = f" AND {cold.format(extra='extra')}" if cold else ""
    frame = store.run_frame(run_id, f"SELECT total_s FROM ops WHERE run_id = ? AND step = ? AND kind = 'measured' "
                                    f"AND ok{cold}", [run_id, step])
    return frame["total_s"].to_numpy(dtype=float)


_CLEARED_SQL = f"""
SELECT step, CASE WHEN json_valid(extra) THEN json_extract_string(extra, '$.cleared_kinds') END AS kinds,
       count(*) AS n
FROM ops WHERE run_id = ? AND kind = 'measured' AND ok AND {_HELD_COLD.format(extra="extra")}
GROUP BY ALL ORDER BY step, n DESC, kinds
"""


def cleared_by_step(store, run_id: str) -> dict[int, list[tuple[str, int]]]:
    """Per step, what the clears before its cold operations emptied, in words, with how many
    operations each: ``{0: [("engine caches, host page cache", 27)]}``."""
    frame = store.frame(_CLEARED_SQL, [run_id])
    found: dict[int, list[tuple[str, int]]] = {}
    for step, kinds, n in frame.itertuples(index=False):
        found.setdefault(int(step), []).append((in_words(None if pd.isna(kinds) else kinds), int(n)))
    return found


_NOT_COLD_SQL = f"""
SELECT step, CASE WHEN json_valid(extra) THEN json_extract_string(extra, '$.not_cold') END AS why, count(*) AS n
FROM ops WHERE run_id = ? AND kind = 'measured' AND ok AND NOT coalesce({_HELD_COLD.format(extra="extra")}, false)
GROUP BY ALL ORDER BY step, n DESC, why
"""


def not_cold_by_step(store, run_id: str) -> dict[int, list[tuple[str, int]]]:
    """Per step of a cold run, why its operations that did not hold cold did not, with how many each
    (their records' ``not_cold``, ``workloads.run.cold``): ``{1: [("another user's ... same day", 6)]}``."""
    frame = store.frame(_NOT_COLD_SQL, [run_id])
    found: dict[int, list[tuple[str, int]]] = {}
    for step, why, n in frame.itertuples(index=False):
        found.setdefault(int(step), []).append(("no reason recorded" if pd.isna(why) or not why else str(why), int(n)))
    return found


def figure_warnings(store, run: dict) -> list[str]:
    """What a chart of the run must say beside its figures: each step too short to measure, with
    why, and a machine busy as the run began (``environment.busy_note``)."""
    from workloads.run.environment import busy_note
    figures = step_figures(store, run["run_id"])
    found = [f"{row.label}: {row.short_reason}" for row in figures.itertuples() if row.short]
    busy = busy_note(run.get("environment") or {})
    return found + ([busy] if busy else [])


def cache_words(store, run: dict) -> str:
    """A run's cache state as a caption says it: "warm", or "cold (engine caches only)" and the like
    (what the clears of all its cold operations emptied, ``cleared.cold_words``)."""
    if run.get("cache") != "cold":
        return str(run.get("cache") or "")
    sums = step_figures(store, run["run_id"])[["cold_ops", "host_cold_ops", "engine_cold_ops"]].sum()
    return f"cold ({cold_words(int(sums['cold_ops']), int(sums['host_cold_ops']), int(sums['engine_cold_ops']))})"


def figures_of_step(store, run_id: str, step: int) -> dict[str, Any] | None:
    """The figures of one step as a plain dict (the live view's final word on a step)."""
    frame = step_figures(store, run_id)
    rows = frame[frame["step"] == step]
    return None if rows.empty else rows.iloc[0].to_dict()


def short_reason(ops: int, window_s: float | None, slot: str = "") -> str:
    """Why a step is too short to measure, and what to change: for a report card's run (``slot``,
    its ``Scenario.experiment``) the card's next size, the one thing its user can change."""
    window = 0.0 if window_s is None or (isinstance(window_s, float) and math.isnan(window_s)) else window_s
    said = f"too short to measure: {int(ops)} operation{'s' if ops != 1 else ''} in {window:.2f} s; "
    card = larger_card_size(slot)
    if card:
        report, size, larger = card
        return (said + f"report {report}'s {size} card is a quick look: run it at {larger} size (Size on its "
                f"card, or tickbench reproduce {report} --scale {larger}) for figures that stand")
    return (said + f"use at least {MIN_OPS} operations per step, a duration of a few seconds, or more data "
            f"(more days or rows per day for imports, exports and query suites)")


def larger_card_size(slot: str) -> tuple[str, str, str] | None:
    """(report, size, the next larger size) of a report card's run, None for any other run."""
    parsed = parse_slot(slot)
    if parsed is None or parsed[3] not in SIZES[:-1]:
        return None
    report, size = parsed[0], parsed[3]
    return report, size, SIZES[SIZES.index(size) + 1]


def _with_phases(frame: pd.DataFrame, phases: pd.DataFrame) -> pd.DataFrame:
    """Phase columns per step, from probes where the step has phase-bearing probes."""
    # columns built as arrays and joined once: assigning cell by cell cost ~40 ms a call, and every
    # run's end reads its figures
    suffixes = {"s": "mean_s", "n": "n", "p50_s": "p50_s", "p95_s": "p95_s", "p99_s": "p99_s"}
    columns = {f"{phase}_{suffix}": np.full(len(frame), np.nan) for phase in PHASES for suffix in suffixes}
    source_of_step = np.full(len(frame), "", dtype=object)
    steps = frame["step"].to_numpy()
    for step, rows in phases.groupby("step"):
        source = "probe" if (rows["kind"] == "probe").any() else "measured"
        mask = steps == step
        source_of_step[mask] = source
        for row in rows[rows["kind"] == source].to_dict("records"):
            for suffix, field in suffixes.items():
                columns.setdefault(f"{row['phase']}_{suffix}", np.full(len(frame), np.nan))[mask] = row[field]
    columns["phase_source"] = source_of_step
    return pd.concat([frame, pd.DataFrame(columns, index=frame.index)], axis=1)


def phase_summary(row) -> tuple[dict[str, float], dict[str, dict[str, float]], int, str]:
    """(means, percentiles, operations, source) of a step_figures row, phases it reports only."""
    means, percentiles, count = {}, {}, 0
    for phase in PHASES:
        mean = _get(row, f"{phase}_s")
        if mean is None:
            continue
        means[phase] = mean
        percentiles[phase] = {q: _get(row, f"{phase}_{q}_s") or 0.0 for q in ("p50", "p95", "p99")}
        count = max(count, int(_get(row, f"{phase}_n") or 0))
    return means, percentiles, count, str(_value(row, "phase_source") or "")


OTHER = "other"
OTHER_SHARE = 0.03      # a remainder smaller than this share of the mean is noise, not drawn


def breakdown(means: dict[str, float], mean_total: float | None) -> dict[str, float]:
    """Phase means plus "other": what of the mean operation time no phase covers (phases from
    probes need not add up to the measured operations' mean), when it is more than noise."""
    result = dict(means)
    if mean_total and means:
        rest = mean_total - sum(means.values())
        if rest > OTHER_SHARE * mean_total:
            result[OTHER] = rest
    return result


def headline_frame(store) -> pd.DataFrame:
    return store.frame(HEADLINE_SQL)


def _value(row, key):
    return row.get(key) if isinstance(row, dict) else getattr(row, key, None)


def _get(row, key) -> float | None:
    value = _value(row, key)
    if value is None or (isinstance(value, float) and math.isnan(value)) or pd.isna(value):
        return None
    return float(value)
