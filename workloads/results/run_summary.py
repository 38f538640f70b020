"""A finished run's answer, as plain data: what ran, per step the figures that answer "how fast
was it" (``workloads.results.figures``), where a sweep stops scaling, and the published figures of the
seed reports beside it. The window shows it first when a run ends; the command line prints it."""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from workloads.run.environment import busy_note
from workloads.run.processes import describe_conditions
from workloads.run.turns import turns_note
from workloads.results.figures import cleared_by_step, not_cold_by_step, phase_summary, step_figures
from workloads.results.references import DISK, published_findings, published_sweeps
from workloads.run.schedule import LATE_S
from workloads.targets.base import PHASES

KNEE_GAIN = 0.10       # a step that adds users but less than 10 % throughput: the sweep stopped scaling
KNEE_BAND = 0.35       # two steps' throughput may differ by this much with no cause, as two runs' may
                       # (two identical runs here differed by up to 31 %: docs/compare.md)
LOAD_KNEE_FACTOR = 2.0  # open loop: p99 latency over twice the p99 service time (plus LATE_S) has departed from it


@dataclass(frozen=True)
class StepAnswer:
    label: str
    users: int
    ops: int
    errors: int
    rows_per_s: float | None
    mb_per_s: float | None
    ops_per_s: float | None
    p50_s: float | None
    p95_s: float | None
    p99_s: float | None
    first_op_s: float | None
    phases: dict[str, float] = field(default_factory=dict)     # mean seconds per operation
    phase_source: str = ""                                     # "8 probe operations"
    short: str = ""                                            # why too short to measure, or ""
    cold_ops: int = 0                                          # a cold step: measured operations that held cold
    cold_p50_s: float | None = None                            # their median
    host_cold_ops: int = 0                                     # ... with the host page cache dropped too
    host_cold_p50_s: float | None = None                       # their median (the reports' sense of cold)
    cleared: tuple[tuple[str, int], ...] = ()                  # what their clears emptied, in words, and how many
    not_cold: tuple[tuple[str, int], ...] = ()                 # why the others did not hold cold, and how many
    index: int = 0                                             # the step's number in the store
    rate: float | None = None                                  # open loop: offered operations per second
    latency_p50_s: float | None = None                         # ... from each operation's intended start
    latency_p99_s: float | None = None
    late_ops: int = 0
    missed_ops: int = 0
    users_ready_s: float | None = None                         # from the step's start until every user was warmed up

    def cold_line(self) -> str:
        """``cold: N of M operations (cleared: engine caches, host page cache)`` (a cold step's own
        count, ``workloads.run.cold``; what was cleared, ``workloads.targets.common.cleared``)."""
        line = f"cold: {self.cold_ops:,} of {self.ops:,} operation{'s' if self.ops != 1 else ''}"
        if len(self.cleared) == 1:
            line = f"{line} (cleared: {self.cleared[0][0]})"
        elif self.cleared:
            line = f"{line} (cleared: " + "; ".join(f"{words} for {n:,}" for words, n in self.cleared) + ")"
        return line

    def not_cold_line(self) -> str:
        """Why a cold step's other operations did not hold cold, as their records say it, with how many
        each: ``not cold: 6: another user's operation ... same day (...)``; "" when all held."""
        return "not cold: " + "; ".join(f"{n:,}: {why}" for why, n in self.not_cold) if self.not_cold else ""

    def cleared_note(self) -> str:
        """A short word on a cold count that is not cold in the reports' sense (the host page cache
        kept): ", engine caches only", ", some engine caches only", or ""."""
        if not self.cold_ops or self.host_cold_ops == self.cold_ops:
            return ""
        return ", engine caches only" if not self.host_cold_ops else f", {self.cold_ops - self.host_cold_ops:,} engine caches only"


@dataclass(frozen=True)
class RunAnswer:
    run_id: str
    name: str
    status: str
    message: str
    target: str
    workload: str
    dataset: str
    cache: str
    steps: list[StepAnswer]
    knee_users: int | None = None          # a sweep: the users count where throughput stops growing
    knee_note: str = ""
    published: list[str] = field(default_factory=list)          # the seed reports' findings, as text
    published_sweeps: list[Any] = field(default_factory=list)   # workloads.results.references sweeps
    busy: str = ""                          # the machine was busy as it began (workloads.run.environment.busy_note)
    load_knee_rate: float | None = None     # open loop: the offered rate where latency departs from service time
    load_note: str = ""
    target_notes: list[str] = field(default_factory=list)   # how the target measured (target_notes())
    conditions: str = ""                    # how its users were started and run (describe_conditions)

    @property
    def is_open_loop(self) -> bool:
        return any(s.rate for s in self.steps)

    @property
    def is_sweep(self) -> bool:
        return len({s.users for s in self.steps}) > 1 and not self.is_open_loop


def load_knee(rates: list[float], latency_p99: list[float | None], service_p99: list[float | None],
              factor: float = LOAD_KNEE_FACTOR) -> float | None:
    """The lowest offered rate whose p99 latency (from intended starts) has departed from its p99
    service time: over ``factor`` times it plus ``LATE_S``, a queue building up rather than a late
    wake-up; None when no rate has (or none was measured)."""
    for rate, latency, service in sorted(zip(rates, latency_p99, service_p99)):
        if latency is not None and service is not None and latency > factor * service + LATE_S:
            return rate
    return None


def sweep_knee(users: list[int], throughput: list[float], gain: float = KNEE_GAIN) -> int | None:
    """The fewest users after which no step adds ``gain`` of throughput or more (a later step clearly
    higher, even past a dip, is growth); None with fewer than three steps or when it grows to the
    last step. The figures taken as exact: ``sweep_knees`` says which knees their noise allows."""
    knee = knees_within(users, throughput, throughput, gain)
    return knee.at if knee.settled else None


@dataclass(frozen=True)
class Knee:
    """The knees a sweep allows: each step's throughput anywhere within its bounds (one run's figure
    +- the band, or what repeated runs measured). ``could_be`` holds each users count the sweep could
    stop growing at, and None where it could still grow at its last step; a knee is stated only when
    that is one answer."""

    users: tuple[int, ...]
    could_be: tuple[int | None, ...]
    basis: str = ""                   # "the ±35 % two runs differ by", "what its 3 runs measured"

    @property
    def settled(self) -> bool:
        return len(self.could_be) == 1

    @property
    def at(self) -> int | None:
        """The knee when settled (None: still grows, or not settled)."""
        return self.could_be[0] if self.settled else None

    def note(self) -> str:
        top = self.users[-1]
        if self.settled:
            return (f"throughput stops growing at {_users(self.at)}" if self.at is not None else
                    "throughput still grows at the largest step")
        stops = [u for u in self.could_be if u is not None]
        could = f"stop growing at {_or(stops)} {'user' if stops == [1] else 'users'}" if stops else ""
        grows = f"still grow at {_users(top)}" if None in self.could_be else ""
        return (f"no knee this run can show: within {self.basis}, throughput could "
                + " or ".join(t for t in (could, grows) if t))


def knees_within(users: list[int], low: list[float], high: list[float], gain: float = KNEE_GAIN,
                 basis: str = "") -> Knee:
    """The knees (``sweep_knee``'s) a sweep allows whose step of ``users[i]`` users moved somewhere
    between ``low[i]`` and ``high[i]``. A knee at k needs every later step under k's throughput plus
    ``gain`` (k at its highest, the later ones at their lowest) and every earlier step to have been
    outgrown by ``gain`` (at their lowest, against k or a later one at its highest); growth to the
    last step needs every earlier one outgrown by the last at its highest."""
    points = sorted((u, lo, hi) for u, lo, hi in zip(users, low, high)
                    if lo is not None and hi is not None and lo == lo and hi == hi)
    steps = tuple(u for u, _, _ in points)
    if len(points) < 3:
        return Knee(steps, (None,), basis)
    lo, hi = [p[1] for p in points], [p[2] for p in points]
    could: list[int | None] = []
    for k in range(len(points) - 1):
        ceiling = hi[k] * (1 + gain)
        if any(lo[j] >= ceiling for j in range(k + 1, len(points))):
            continue                                  # a later step is clearly higher: not a knee
        reach = max([hi[k]] + [min(hi[j], ceiling) for j in range(k + 1, len(points))])
        if all(lo[i] * (1 + gain) <= reach for i in range(k)):
            could.append(steps[k])
    if all(lo[i] * (1 + gain) <= hi[-1] for i in range(len(points) - 1)):
        could.append(None)
    return Knee(steps, tuple(could), basis)


def sweep_knees(users: list[int], throughput: list[float], band: float = KNEE_BAND,
                gain: float = KNEE_GAIN) -> Knee:
    """The knees one run's sweep allows: each step's figure within +-(sqrt(1 + band) - 1), so that
    two steps' ratio may move by ``band`` either way, as two runs' figures do with no cause."""
    each = math.sqrt(1 + band)
    pairs = [(u, t) for u, t in zip(users, throughput) if t is not None and t == t]
    return knees_within([u for u, _ in pairs], [t / each for _, t in pairs], [t * each for _, t in pairs], gain,
                        f"the ±{band * 100:.0f} % two runs differ by")


def _users(n: int) -> str:
    return f"{n} user{'s' if n != 1 else ''}"


def _or(values: list[int]) -> str:
    return str(values[0]) if len(values) == 1 else ", ".join(map(str, values[:-1])) + f" or {values[-1]}"


def run_answer(store, run_id: str) -> RunAnswer:
    run = store.run(run_id)
    figures = step_figures(store, run["run_id"])
    cold = run.get("cache") == "cold"
    cleared = cleared_by_step(store, run["run_id"]) if cold else {}
    not_cold = not_cold_by_step(store, run["run_id"]) if cold else {}
    facts = store.step_facts(run["run_id"])
    steps = []
    for row in figures.itertuples():
        means, _pct, count, source = phase_summary(row)
        steps.append(StepAnswer(
            label=str(row.label), users=int(row.users), ops=int(row.ops), errors=int(row.errors),
            rows_per_s=_num(row.rows_per_s), mb_per_s=_num(row.mb_per_s), ops_per_s=_num(row.ops_per_s),
            p50_s=_num(row.p50_s), p95_s=_num(row.p95_s), p99_s=_num(row.p99_s),
            first_op_s=_num(getattr(row, "first_op_s", None)),
            phases={p: means[p] for p in PHASES if p in means},
            phase_source=f"{count:,} {source} operation{'s' if count != 1 else ''}" if count else "",
            short=str(row.short_reason) if bool(row.short) else "",
            cold_ops=int(row.cold_ops), cold_p50_s=_num(row.cold_p50_s), index=int(row.step),
            host_cold_ops=int(row.host_cold_ops), host_cold_p50_s=_num(row.host_cold_p50_s),
            cleared=tuple(cleared.get(int(row.step), ())), not_cold=tuple(not_cold.get(int(row.step), ())),
            rate=_num(row.rate), latency_p50_s=_num(row.latency_p50_s), latency_p99_s=_num(row.latency_p99_s),
            late_ops=int(_num(row.late_ops) or 0), missed_ops=int(_num(row.missed_ops) or 0),
            users_ready_s=_num(facts.get(int(row.step), {}).get("users_ready_s"))))
    knee, note = None, ""
    load_rate, load_note = None, ""
    open_steps = [s for s in steps if s.rate]
    if open_steps:
        load_rate = load_knee([s.rate for s in open_steps], [s.latency_p99_s for s in open_steps],
                              [s.p99_s for s in open_steps])
        note_of = f"{load_rate:,.6g} ops/s" if load_rate else ""
        load_note = (f"p99 latency departs from the service time at {note_of} offered" if load_rate else
                     "p99 latency stays with the service time at every rate offered")
    elif len({s.users for s in steps}) > 2:
        moved = any(s.rows_per_s for s in steps)
        found = sweep_knees([s.users for s in steps], [(s.rows_per_s if moved else s.ops_per_s) for s in steps])
        knee, note = found.at, found.note()
    workload, dataset = str(run["workload"]), str(run["dataset"])
    beside = {"target": str(run["target"]), "cache": str(run.get("cache") or "") or None}
    published = published_findings(workload, dataset, **beside)
    if workload in ("import", "export", "query-suite"):
        published = published + published_findings(DISK, dataset, **beside)
    return RunAnswer(run_id=run["run_id"], name=str(run["name"]), status=str(run["status"]),
                     message=str(run["message"] or ""), target=str(run["target"]), workload=workload,
                     dataset=dataset, cache=str(run["cache"]), steps=steps, knee_users=knee, knee_note=note,
                     published=list(published), published_sweeps=list(published_sweeps(workload, dataset)),
                     busy=busy_note(run.get("environment") or {}), load_knee_rate=load_rate,
                     load_note=load_note, target_notes=target_notes(run),
                     conditions="; ".join(filter(None, (describe_conditions((run.get("environment") or {}).get("process")),
                                                        turns_note(run.get("environment"))))))


def target_notes(run: dict) -> list[str]:
    """What a reader of the figures must know of how the target measured them, from the run's
    record of it (``Target.describe``): a stand-in server, DolphinDB's job scheduling, a
    transfer/decode split measured on another encoding, a local engine."""
    target = (run.get("environment") or {}).get("target") or {}
    notes = []
    if "stand-in" in str(target.get("server") or ""):
        notes.append(f"target: {target['server']}: its timings are not the real engine's")
    if target.get("job_scheduling"):             # DolphinDB: how every query was scheduled on the server
        notes.append(f"target: jobs at {target['job_scheduling']}")
    if "stand-in" in str(target.get("transfer_method") or ""):   # a split measured on another encoding
        notes.append(f"transfer/decode split: {target['transfer_method']}")
    if target.get("local_engine"):
        notes.append(f"target: a local engine Tickbench started on this computer "
                     f"({target.get('server_version') or target.get('kind', run.get('target'))}), not a production server")
    return notes


def _num(value) -> float | None:
    if value is None:
        return None
    try:
        value = float(value)
    except (TypeError, ValueError):
        return None
    return None if value != value else value
