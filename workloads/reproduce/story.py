"""The narrated demo: the reports' experiments as beats a presenter plays in front of an audience.

A beat is one experiment: a title card (the report, the question it asks, what to watch), its runs
with the chart that matters in view, then a result card (measured beside published, each finding's
verdict and how sure it is). The beats are chosen and their steps timed so the whole demo fits the
minutes the presenter picks; each run's steps last long enough for its lines to move (5-20 s), where
the gallery's tiny runs last about a second. A demo run is a gallery run at tiny scale (its slot
says so, so the report's figures and findings read it) whose name ends in ``DEMO_MARK``, which is
how a replay finds it again.

The database under test is the embedded default unless the presenter picks another (``Engines``:
a DolphinDB cluster, a ClickHouse server); a report's comparison with another system (Druid in 001,
MongoDB in 004) is in the demo only when that system is given, else left out rather than shown as
"not measured". A replay finds the runs of the same engines again (``recorded_runs``), so a laptop
can replay a demo a cluster played.
"""
from __future__ import annotations

import json
import os
from dataclasses import dataclass, replace
from pathlib import Path

import pandas as pd

from workloads.reproduce.catalog import COMPARATOR, DEFAULT_SUBJECT, SUBJECT, TINY_USERS, Experiment, report_card
from workloads.reproduce.estimate import estimate
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
QUERIES = ("Latency",)                      # each query's time, engine after engine, large
RUN_ONCE = ("import", "export")           # workloads done when their files are moved: not timed
SUITE_REPETITIONS = 10                     # each query ten times, as report 001 ran them


@dataclass(frozen=True)
class Engines:
    """What the demo runs on: the database under test, and what the reports compared it with
    (a Druid, a MongoDB), if anyone gave one. Configs as the scenario builder fills them."""
    subject: str = DEFAULT_SUBJECT
    subject_config: dict | None = None
    comparator: str | None = None
    comparator_config: dict | None = None


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
    ("000", "day-l1", READS, "pickle's rate cold against warm; then, as each run ends, its phase bars: how "
                             "much of a read is decoding on the client"),
    ("002", "download", SWEEPS, "the rate step up as users are added (1, 2, 4), and where it stops "
                                "stepping up"),
    ("000", "strings", READS, "the decode bar as each run ends, smaller once the two string columns are left "
                              "out"),
    ("002", "bars", SWEEPS, "minute bars per second at each users step, and latency as it climbs"),
    ("003", "compute", SWEEPS, "each computation cold, then warm: the warm run's line sits higher"),
    ("000", "readers", SWEEPS, "one reader, then three at once: does each one slow down?"),
    ("000", "day-l2", READS, "78 columns instead of 10: the decode bar, as each run ends, grows with them"),
    ("003", "read", SWEEPS, "cold reads as users are added: where the disk stops keeping up"),
)
# A report's comparison with another system, second in telling order when that system is given
_VERSUS: dict[str, tuple[str, str, tuple[str, ...], str]] = {
    "druid": ("001", "queries", QUERIES, "each query's latency on the database, then on Druid: the same "
                                         "seven questions, ten times each"),
    "mongodb": ("004", "taq", QUERIES, "import, export and the query suite on the database, then on "
                                       "MongoDB: how far apart the bars sit"),
}


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
    5 s each), named as a demo run; a tiny users sweep reaches past the knee this machine can show.
    An import or export keeps its bounds (it moves its files once); a suite runs each query as often
    as report 001 did, then the suite again until its seconds are up."""
    if scenario.workload in RUN_ONCE:
        return scenario.with_changes(name=scenario.name + DEMO_MARK)
    users = sweep_users(threads) if scenario.users == TINY_USERS else scenario.users
    steps = len(users)
    per_step = max(5.0, seconds / steps) if steps > 1 else seconds
    params = dict(scenario.params)
    if "repetitions" in params:
        params["repetitions"] = max(int(params["repetitions"]), SUITE_REPETITIONS)
    if "rows_per_user" in params and scenario.workload in ("slice-download", "read-day"):
        params["rows_per_user"] = int(params["rows_per_user"]) * READS_MORE
    return scenario.with_changes(name=scenario.name + DEMO_MARK, duration_s=per_step, operations=0, params=params,
                                 users=users)


def _beat(report: str, key: str, charts: tuple[str, ...], watch: str, seconds: float,
          data_dir: str | Path | None, engines: Engines) -> Beat:
    card = report_card(report)
    experiment: Experiment = card.experiment(key)
    runs = tuple(demo_scenario(s, seconds) for _arm, s in experiment.scenarios(
        DEMO_SIZE, engines.subject, engines.subject_config, engines.comparator, engines.comparator_config,
        data_dir=data_dir))
    timed = sum(s.duration_s * len(s.users) for s in runs)
    if any(s.workload in RUN_ONCE for s in runs):  # runs that end on their own: the cost model's time
        timed += estimate(experiment, DEMO_SIZE, engines.subject, data_dir, comparator=engines.comparator).seconds
    length = TITLE_S + RESULT_S + RUN_OVERHEAD_S * len(runs) + timed
    return Beat(report, key, f"Report {report} · {experiment.title}", experiment.question, watch, charts, runs,
                length)


def narrated_playlist(minutes: int = 10, data_dir: str | Path | None = None,
                      engines: Engines = Engines()) -> list[Beat]:
    """The beats that fit ``minutes`` (5, 10 or 20), in telling order; at least the first one. A
    comparator in ``engines`` brings its report's comparison in, second."""
    if minutes not in LENGTHS_MIN:
        raise ValueError(f"a demo lasts {', '.join(map(str, LENGTHS_MIN))} minutes, not {minutes}")
    order = list(_ORDER)
    if engines.comparator in _VERSUS:
        order.insert(1, _VERSUS[engines.comparator])
    budget = minutes * 60.0
    chosen: list[tuple[str, str, tuple[str, ...], str]] = []
    for entry in order:                   # as many beats as fit with the shortest runs
        trial = [_beat(*e, SHORTEST_RUN_S, data_dir, engines) for e in chosen + [entry]]
        if not chosen or sum(b.seconds for b in trial) <= budget:
            chosen.append(entry)          # else a shorter one further down may still fit
    seconds = SHORTEST_RUN_S
    while seconds < LONGEST_RUN_S:        # then the runs as long as the minutes allow
        longer = [_beat(*e, seconds + 1.0, data_dir, engines) for e in chosen]
        if sum(b.seconds for b in longer) > budget:
            break
        seconds += 1.0
    return [_beat(*e, seconds, data_dir, engines) for e in chosen]


def is_demo_run(scenario: dict) -> bool:
    return str(scenario.get("name", "")).endswith(DEMO_MARK)


@dataclass(frozen=True)
class ResultCard:
    title: str
    pairs: list[Pair]               # measured beside published, this experiment's
    findings: list[Finding]         # the findings its runs fed, with verdict and why (the confidence)
    scales: str = ""                # where each side was measured: the seconds differ, the ratios compare
    reversals: tuple[str, ...] = ()  # where two figures here stand the other way round from published


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


def result_card(beat: Beat, store, report_run_ids: list[str], beat_run_ids: list[str],
                replayed: bool = False) -> ResultCard:
    """What the beat's runs showed, measured beside published: the report's findings read from every
    demo run of the report so far (``report_run_ids``), those its own runs fed. ``replayed``: the
    runs were made earlier, perhaps elsewhere, so the card names the host they ran on."""
    found_pairs, found = demo_findings(store, beat.report, report_run_ids)
    title = report_card(beat.report).experiment(beat.experiment).title
    own = set(beat_run_ids)
    shown = [p for p in found_pairs if p.experiment == title and p.applies and p.run_id in own]
    scales = ""
    if shown:
        runs = [store.run(p.run_id) for p in shown]
        engines = " and ".join(dict.fromkeys(str(r.get("target")) for r in runs))
        host = (runs[0].get("environment") or {}).get("host") or "an unnamed host"
        where = f"Measured on {host}" if replayed else "Measured here: this machine"
        scales = (f"{where}, {engines}, {run_size_text(runs[0])}. Published: "
                  f"{shown[0].hardware}, at the report's scale. Compare the ratios, not the seconds.")
    return ResultCard(beat.title, shown, [_for_an_audience(f) for f in found if set(f.run_ids) & own], scales,
                      reversals(shown))


REVERSED_BEYOND = 1.1     # two figures within 10 % of each other are not said to stand either way


def reversals(pairs: list[Pair], most: int = 1) -> tuple[str, ...]:
    """Each two figures (in one unit) that stand the other way round here from published, in words:
    a result card must not show a reversal as if it agreed."""
    measured = [p for p in pairs if p.measured_value and p.published_value]
    said = []
    for i, a in enumerate(measured):
        for b in measured[i + 1:]:
            here, published = a.measured_value / b.measured_value, a.published_value / b.published_value
            if a.unit != b.unit or not ((here > REVERSED_BEYOND and published < 1 / REVERSED_BEYOND) or
                                        (here < 1 / REVERSED_BEYOND and published > REVERSED_BEYOND)):
                continue
            more, less = (a, b) if here > 1 else (b, a)
            verb = "took longer than" if a.unit.strip() in ("s", "ms", "seconds") else "measured more than"
            said.append(f"Here {more.figure} {verb} {less.figure} ({more.measured} against {less.measured}); "
                        f"the report found the opposite ({more.published} against {less.published}).")
    return tuple(said[:most])


def _for_an_audience(finding: Finding) -> Finding:
    """The finding without the note that the machine was busy as a run began: kept with the run and
    in its report, not read out in a demo on a laptop that is running the demo."""
    at = finding.why.lower().find(BUSY_OPENING.lower())      # findings.py appends it last, after "; "
    return replace(finding, why=finding.why[:at].rstrip("; ") if at >= 0 else finding.why)


def recorded_runs(store, beats: list[Beat]) -> dict[str, str]:
    """For a replay: each beat scenario's name -> the newest completed demo run of its slot on the
    same engine (a DolphinDB demo replays DolphinDB's runs, wherever they were made)."""
    wanted = {(s.experiment, s.target): s.name for beat in beats for s in beat.scenarios}
    found: dict[str, str] = {}
    for run_id, data in _demo_runs(store):
        key = (data.get("experiment"), data.get("target"))
        if key in wanted:
            found[wanted[key]] = run_id          # ordered by time: the newest stays
    return found


def recorded_engines(store) -> list[tuple[str, str | None]]:
    """The (database, comparator) kinds of the demos recorded in the catalog, the newest first: what
    a replay can play. Read from the runs' arms (a pickle arm is neither side); a comparator goes
    with a database that ran the same comparison."""
    subjects: dict[str, None] = {}
    compared: dict[tuple[str, str], None] = {}           # (database, comparator kind) that ran a comparison
    comparators: set[str] = set()
    for _run_id, data in reversed(_demo_runs(store)):
        slot = parse_slot(str(data.get("experiment", "")))
        try:
            experiment = report_card(slot[0]).experiment(slot[1]) if slot else None
            side = experiment.arm(slot[2]).target if experiment else ""
        except (KeyError, ValueError, StopIteration):
            continue                                  # a slot this version does not know
        target = str(data.get("target") or "")
        if side == SUBJECT and target:
            subjects.setdefault(target)
            if experiment.comparator:
                compared.setdefault((target, experiment.comparator))
        elif side == COMPARATOR and target:
            comparators.add(target)
    return [(s, None) for s in subjects] + [pair for pair in compared if pair[1] in comparators]


def _demo_runs(store) -> list[tuple[str, dict]]:
    """(run id, scenario) of every completed demo run, oldest first."""
    frame = store.frame("SELECT run_id, scenario FROM runs WHERE status = 'completed' ORDER BY created_at")
    out = []
    for run_id, scenario in frame.itertuples(index=False):
        data = json.loads(scenario) if isinstance(scenario, str) and scenario else (scenario or {})
        if is_demo_run(data):
            out.append((run_id, data))
    return out


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
