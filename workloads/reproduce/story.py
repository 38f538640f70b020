"""The narrated demo: the reports' experiments as beats a presenter plays in front of an audience.

A beat is one experiment: a title card (the report, the question it asks, what to watch), its runs
with the chart that matters in view, then a result card (measured beside published, each finding's
verdict and how sure it is). The beats are chosen and their steps timed so the whole demo fits the
minutes the presenter picks; each run's steps last long enough for its lines to move (5-20 s), where
the gallery's tiny runs last about a second. A demo run is a gallery run at tiny scale (its slot
says so, so the report's figures and findings read it) whose name ends in ``DEMO_MARK``, which is
how a replay finds it again.

Only experiments that run on the embedded default are in it: a comparison whose engine is absent
(Druid, MongoDB) is left out of the demo rather than shown as "not measured".
"""
from __future__ import annotations

import json
import os
from dataclasses import dataclass, replace
from pathlib import Path

import pandas as pd

from workloads.reproduce.catalog import TINY_USERS, Experiment, report_card
from workloads.reproduce.findings import Finding, findings
from workloads.reproduce.measured import ArmRun
from workloads.reproduce.published import Pair, pairs
from workloads.results.dataset_size import run_size_text
from workloads.results.run_summary import run_answer
from workloads.run.environment import BUSY_OPENING
from workloads.scenario import Scenario, parse_slot

DEMO_MARK = " · demo"
DEMO_SIZE = "tiny"
LENGTHS_MIN = (5, 10, 20)
TITLE_S = 7.0                   # a title card, read aloud
RESULT_S = 10.0                 # a result card: long enough to point at a number
RUN_OVERHEAD_S = 5.0            # a run's process, data and warm-ups before its first measured second
READS_MORE = 50                 # rows per user for reads: the step's seconds end it, not its share

# The charts a beat puts in view (LiveDashboard.spotlight's names): what moves while it runs
READS = ("Rows per second", "Phases")      # the rate, and where its time goes
SWEEPS = ("Rows per second", "Latency")    # each step's level: rising with users, then flat


@dataclass(frozen=True)
class Beat:
    report: str
    experiment: str                 # the experiment's key in the report's card
    title: str                      # "Report 000 · a day, L1 quotes"
    question: str                   # the experiment's question, one sentence
    watch: str                      # what the audience should look at while it runs
    charts: tuple[str, ...]         # the charts that matter while it runs (READS or SWEEPS)
    scenarios: tuple[Scenario, ...]
    seconds: float                  # the beat's estimated length, cards included

    @property
    def slot_prefix(self) -> str:
        return f"{self.report}/{self.experiment}"


# In the order a demo tells them: the most telling first, so a short demo keeps the point.
_ORDER: tuple[tuple[str, str, tuple[str, ...], str], ...] = (
    ("000", "day-l1", READS, "the phase bars: how much of each read is decoding on the client, and "
                             "pickle's rate cold against warm"),
    ("002", "download", SWEEPS, "the rate step up as users are added (1, 2, 4), and where it stops "
                                "stepping up"),
    ("000", "strings", READS, "the decode bar, smaller once the two string columns are left out"),
    ("002", "bars", SWEEPS, "minute bars per second at each users step, and latency as it climbs"),
    ("003", "compute", SWEEPS, "each computation cold, then warm: the warm run's line sits higher"),
    ("000", "readers", SWEEPS, "one reader, then three at once: does each one slow down?"),
    ("000", "day-l2", READS, "78 columns instead of 10: the decode bar grows with them"),
    ("003", "read", SWEEPS, "cold reads as users are added: where the disk stops keeping up"),
)


SHORTEST_RUN_S, LONGEST_RUN_S = 8.0, 20.0     # a run's measured seconds: lines that move, not a wait


PUBLISHED_KNEE_USERS, PUBLISHED_THREADS = 64, 48    # report 002's latest knee, on its 48-thread server


def sweep_users(threads: int | None = None) -> tuple[int, ...]:
    """A demo sweep's users: doublings far enough past report 002's knee, scaled to this machine's
    hardware threads, for the finding to be measurable (a tiny sweep's 4 users is not, on 2 threads)."""
    knee = PUBLISHED_KNEE_USERS * (threads or os.cpu_count() or 1) / PUBLISHED_THREADS
    users = [1]
    while users[-1] < min(2 * knee, 64) or users[-1] < 4:
        users.append(users[-1] * 2)
    return tuple(users)


def demo_scenario(scenario: Scenario, seconds: float, threads: int | None = None) -> Scenario:
    """A tiny gallery run made to last ``seconds`` per step (a sweep's steps share them, at least
    5 s each), named as a demo run; a tiny users sweep reaches past the knee this machine can show."""
    users = sweep_users(threads) if scenario.users == TINY_USERS else scenario.users
    steps = len(users)
    per_step = max(5.0, seconds / steps) if steps > 1 else seconds
    params = dict(scenario.params)
    if "rows_per_user" in params and scenario.workload in ("slice-download", "read-day"):
        params["rows_per_user"] = int(params["rows_per_user"]) * READS_MORE
    return scenario.with_changes(name=scenario.name + DEMO_MARK, duration_s=per_step, operations=0, params=params,
                                 users=users)


def _run_seconds(scenario: Scenario) -> float:
    return RUN_OVERHEAD_S + scenario.duration_s * len(scenario.users)


def _beat(report: str, key: str, charts: tuple[str, ...], watch: str, seconds: float, data_dir: str | Path | None) -> Beat:
    card = report_card(report)
    experiment: Experiment = card.experiment(key)
    runs = tuple(demo_scenario(s, seconds) for _arm, s in experiment.scenarios(DEMO_SIZE, data_dir=data_dir))
    length = TITLE_S + RESULT_S + sum(_run_seconds(s) for s in runs)
    return Beat(report, key, f"Report {report} · {experiment.title}", experiment.question, watch, charts, runs,
                length)


def narrated_playlist(minutes: int = 10, data_dir: str | Path | None = None) -> list[Beat]:
    """The beats that fit ``minutes`` (5, 10 or 20), in telling order; at least the first one."""
    if minutes not in LENGTHS_MIN:
        raise ValueError(f"a demo lasts {', '.join(map(str, LENGTHS_MIN))} minutes, not {minutes}")
    budget = minutes * 60.0
    chosen: list[tuple[str, str, tuple[str, ...], str]] = []
    for entry in _ORDER:                  # as many beats as fit with the shortest runs
        trial = [_beat(*e, SHORTEST_RUN_S, data_dir) for e in chosen + [entry]]
        if not chosen or sum(b.seconds for b in trial) <= budget:
            chosen.append(entry)          # else a shorter one further down may still fit
    seconds = SHORTEST_RUN_S
    while seconds < LONGEST_RUN_S:        # then the runs as long as the minutes allow
        longer = [_beat(*e, seconds + 1.0, data_dir) for e in chosen]
        if sum(b.seconds for b in longer) > budget:
            break
        seconds += 1.0
    return [_beat(*e, seconds, data_dir) for e in chosen]


def is_demo_run(scenario: dict) -> bool:
    return str(scenario.get("name", "")).endswith(DEMO_MARK)


@dataclass(frozen=True)
class ResultCard:
    title: str
    pairs: list[Pair]               # measured beside published, this experiment's
    findings: list[Finding]         # the findings its runs fed, with verdict and why (the confidence)
    scales: str = ""                # where each side was measured: the seconds differ, the ratios compare


def demo_findings(store, report: str, run_ids: list[str]) -> tuple[list[Pair], list[Finding]]:
    """The report's pairs and findings from these runs alone (the demo's, live or replayed), never
    from other gallery runs of the same slots: a replay shows the cards its recording showed."""
    runs: dict[tuple[str, str], ArmRun] = {}
    for run_id in run_ids:                 # in the order played: a later run of a slot wins
        run = store.run(run_id)
        scenario = run.get("scenario") or {}
        slot = parse_slot(scenario.get("experiment", ""))
        if slot is None or slot[0] != report or run.get("status") != "completed":
            continue
        runs[(slot[1], slot[2])] = ArmRun(run_id, pd.Timestamp(run["created_at"]), run_answer(store, run_id),
                                          run.get("environment") or {}, scenario)
    return pairs(report_card(report), runs), findings(report, runs, store)


def result_card(beat: Beat, store, report_run_ids: list[str], beat_run_ids: list[str]) -> ResultCard:
    """What the beat's runs showed, measured beside published: the report's findings read from every
    demo run of the report so far (``report_run_ids``), those its own runs fed."""
    found_pairs, found = demo_findings(store, beat.report, report_run_ids)
    title = report_card(beat.report).experiment(beat.experiment).title
    own = set(beat_run_ids)
    shown = [p for p in found_pairs if p.experiment == title and p.applies and p.run_id in own]
    scales = ""
    if shown:
        run = store.run(shown[0].run_id)
        scales = (f"Measured here: this machine, {run.get('target')}, {run_size_text(run)}. Published: "
                  f"{shown[0].hardware}, at the report's scale. Compare the ratios, not the seconds.")
    return ResultCard(beat.title, shown, [_for_an_audience(f) for f in found if set(f.run_ids) & own], scales)


def _for_an_audience(finding: Finding) -> Finding:
    """The finding without the note that the machine was busy as a run began: kept with the run and
    in its report, not read out in a demo on a laptop that is running the demo."""
    at = finding.why.find(BUSY_OPENING)          # findings.py appends it last, after "; "
    return replace(finding, why=finding.why[:at].rstrip("; ") if at >= 0 else finding.why)


def recorded_runs(store, beats: list[Beat]) -> dict[str, str]:
    """For a replay: each beat scenario's name -> the newest completed demo run of its slot."""
    wanted = {s.experiment: s.name for beat in beats for s in beat.scenarios}
    frame = store.frame("SELECT run_id, scenario FROM runs WHERE status = 'completed' ORDER BY created_at")
    found: dict[str, str] = {}
    for run_id, scenario in frame.itertuples(index=False):
        data = json.loads(scenario) if isinstance(scenario, str) and scenario else (scenario or {})
        if is_demo_run(data) and data.get("experiment") in wanted:
            found[wanted[data["experiment"]]] = run_id          # ordered by time: the newest stays
    return found


def summary(findings: list[Finding]) -> list[Finding]:
    """Every finding a demo measured, once each: one no run of the demo measured (its engine absent,
    its experiment not played) is left out, never shown as "not measured"."""
    seen, out = set(), []
    for finding in findings:
        key = (finding.report, finding.statement)
        if finding.run_ids and key not in seen:
            seen.add(key)
            out.append(finding)
    return out
