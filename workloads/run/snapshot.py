"""Live figures of a run as plain data: what the GUI draws and the command line prints.

The collector in the parent process builds one of these on request (a few times a second);
nothing in it references live engine objects, so it can cross threads safely.
"""
from __future__ import annotations

from dataclasses import dataclass, field

WORKER_STATES = ("starting", "ready", "running", "measured", "done", "failed", "cancelled")
# measured: its measured operations are over; probe operations (if any) follow


@dataclass
class ThroughputPoint:
    t: float            # seconds since the run started (wall clock, across steps)
    rows_per_s: float
    bytes_per_s: float
    ops_per_s: float
    span_s: float = 1.0  # the seconds it covers: the part of a second after the release joins the next
    measuring: bool = True   # False: no step was measuring then (between steps): a gap, not a zero


@dataclass
class LatencyPoint:
    t: float            # seconds since the run started
    p50: float          # seconds, total operation time, over the sliding window
    p95: float
    p99: float


@dataclass
class SweepPoint:
    users: int
    rows_per_s: float
    bytes_per_s: float  # logical bytes (workloads.targets.common.sizes)
    ops_per_s: float
    p50: float
    p99: float
    complete: bool      # False while the step is still running (the point grows live)
    label: str = ""     # the step, e.g. "4 users" or "batch 1,000 rows"
    short: bool = False  # too short to measure (workloads.results.figures)
    exact: bool = False  # True once the stored figures replaced the live estimate
    wire_bytes_per_s: float | None = None   # bytes read or written (an import's CSV); None: unknown


@dataclass
class ResourcePoint:
    t: float
    cpu_percent: float  # client machine, all cores = 100 * cores
    # the run's process and its workers (and their forkserver): PSS where the OS gives it, each shared
    # page counted once (workloads.run.sampler); RSS elsewhere, and in runs recorded before 2026-11-28
    rss_bytes: int
    read_bytes_per_s: float = 0.0
    write_bytes_per_s: float = 0.0


@dataclass
class QueryPoint:
    """One query of a query suite in one step (``workloads.results.suite_figures``)."""
    query: str
    category: str = ""
    description: str = ""
    runs: int = 0                # measured executions that answered
    mean_s: float | None = None
    p50_s: float | None = None   # stored figures only (live: None)
    min_s: float | None = None
    status: str = "pending"      # pending (not run yet) | ok | failed | not supported
    fingerprint: str = ""        # of the answer (workloads.queries.answers)
    error: str = ""


@dataclass
class LiveSnapshot:
    run_id: str
    status: str                              # preparing | running | completed | cancelled | failed
    target: str                              # target label, e.g. "duckdb" or "pickle"
    workload: str
    step_index: int                          # 0-based step of a users sweep
    steps_total: int
    users: int                               # users of the current step
    elapsed_s: float
    ops_done: int
    ops_failed: int
    progress: float                          # 0..1 over the whole run, best estimate
    message: str = ""                        # latest human-readable status or error
    throughput: list[ThroughputPoint] = field(default_factory=list)
    # the second under way so far (from the last whole-second point, or the release, to now): the
    # charts' provisional last point, so a step's first second is not an empty chart under a header
    # that already gives its rate; None once the run is over or when nothing ended since
    throughput_tail: ThroughputPoint | None = None
    latency: list[LatencyPoint] = field(default_factory=list)
    step_label: str = ""                     # the current step, e.g. "4 users"
    # mean seconds per phase per op of one step (phase_step), e.g. {"read": 0.12, "decode": 0.3}
    phase_means: dict[str, float] = field(default_factory=dict)
    # that step's phase percentiles: {"decode": {"p50": .., "p95": .., "p99": ..}}
    phase_percentiles: dict[str, dict[str, float]] = field(default_factory=dict)
    phase_step: str = ""                     # label of the step the phases describe
    phase_ops: int = 0                       # operations behind the phase figures
    phase_source: str = ""                   # "measured" operations or "probe" operations
    phase_exact: bool = False                # stored figures (True) or the live estimate
    mean_total_s: float | None = None        # that step's mean measured operation time
    first_op_s: float | None = None          # median first operation of a fresh worker, that step
    steady_p50_s: float | None = None        # that step's p50 of measured operations
    sweep: list[SweepPoint] = field(default_factory=list)
    workers: dict[int, str] = field(default_factory=dict)      # worker id -> state
    worker_errors: dict[int, str] = field(default_factory=dict)
    resources: list[ResourcePoint] = field(default_factory=list)
    queries: list[QueryPoint] = field(default_factory=list)    # a query suite's latest step
    query_step: str = ""                     # label of that step
    # footprints with ratios (workloads.results.suite_figures.run_footprints): "layout" and import "steps"
    footprints: dict = field(default_factory=dict)
    # throughput and latency points are each operation's own (a short run), not per-second bins
    per_operation: bool = False
    name: str = ""                           # the run's name (workloads.scenario.run_name)
    cache: str = ""                          # warm | cold
    # load generators (a run on Dask): the current step's users per host, and each host's rows/s
    # over the last few whole seconds of operation ends
    host_users: dict[str, int] = field(default_factory=dict)
    host_rows_per_s: dict[str, float] = field(default_factory=dict)
    # set on a stored run played back (workloads.results.replay), e.g. "recorded 2026-11-27 14:05":
    # the header says REPLAY, so an audience never takes it for a live run
    replayed_from: str = ""
