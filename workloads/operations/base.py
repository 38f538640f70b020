"""What a workload is: declared parameters, its steps, and the operations each worker runs."""
from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from workloads.datasets.base import Dataset
from workloads.datasets.builtin import IMPORT_PREFIX, TABLE_PREFIX
from workloads.datasets.roles import ROLE_FLAGS, ROLE_NAMES, roles_of
from workloads.datasets.schema import DatasetInfo
from workloads.operations.params import Param
from workloads.scenario import Scenario
from workloads.run.schedule import user_rate
from workloads.targets.base import Layout, OpResult, Target

Operation = Callable[[], OpResult]

# A knob of the harness every workload takes: a CPU busy loop of this many seconds inside each
# operation's timed span, after the operation (``workloads.run.worker``): a known slowdown to
# calibrate a comparison against. Recorded in the scenario's params like any other.
ADDED_WORK = Param("added_work_s", "Added work per operation", "float", 0.0, 0.0, 60.0, "s",
                   help="0: none. Otherwise each measured operation also spends this long in a CPU busy "
                        "loop inside its timed span (a known slowdown).")
# ... or a share of the operation's own time: 0.1 makes every operation 10 % slower, whatever it
# costs (a slowdown of a known size, as a release that does a tenth more work per call)
ADDED_SHARE = Param("added_work_share", "Added work per operation, a share of its time", "float", 0.0, 0.0, 10.0,
                    "x its time", help="0: none. Otherwise each measured operation also spends this share of its "
                                       "own time (0.1: a tenth) in a CPU busy loop inside its timed span.")

# The other: the measured operations of each user of a step at most, for a workload that ends by its
# rows (slice-download, the uploads and appends, the transfers), when the user asks a number of them.
MAX_OPERATIONS = Param("max_operations", "Operations at most", "int", 0, 0, 10**12, "ops",
                       help="0: as many as its rows take. Otherwise each user stops after this many "
                            "measured operations even if its rows are not all moved.")
HARNESS_PARAMS = (ADDED_WORK, ADDED_SHARE, MAX_OPERATIONS)


def counted_as(rows: int, nbytes: int, operation: Operation) -> Operation:
    """Make ``operation`` count ``rows`` and ``nbytes`` (e.g. the input a computation scans)
    instead of its result's own; the worker applies it after the timed span, and keeps the
    result's own size in ``extra`` (result_rows, result_bytes)."""
    operation.counted_as = (int(rows), int(nbytes))
    return operation


def named(name: str, operation: Operation) -> Operation:
    """Record ``operation`` under ``name`` (a query id) instead of the workload's op name."""
    operation.op_name = name
    return operation


def checked(check: Callable[[OpResult], dict[str, Any]], operation: Operation) -> Operation:
    """Facts about the result (an answer's fingerprint) that the worker adds to ``extra`` after
    the timed span, so working them out never costs the operation time."""
    operation.check = check
    return operation


def checked_again(check: Callable[[OpResult], dict[str, Any]], operation: Operation) -> Operation:
    """As ``checked``, for a check that costs much (an answer's fingerprint: ~0.9 s for 60 k joined
    rows). On a warm-up the worker asks the same question again once every user's measured
    operations are over and checks that answer: worked out on the warm-up's own answer, the work
    (or the answer kept for later) left the user's process slower for the whole step (a Feather
    as-of join ~2 % beside the same calls in a fresh process). Elsewhere it is checked at once."""
    operation.check = check
    operation.check_again = True
    return operation


def apply_counts(operation: Operation, result: OpResult) -> OpResult:
    """What the worker does with a result after the timed span: counts and checks."""
    counts = getattr(operation, "counted_as", None)
    if counts is not None:
        result.extra = {**result.extra, "result_rows": result.rows, "result_bytes": result.nbytes}
        result.rows, result.nbytes = counts
    check = getattr(operation, "check", None)
    if check is not None:
        result.extra = {**result.extra, **check(result)}
    return result


@dataclass(frozen=True)
class StepPlan:
    index: int
    users: int
    label: str                                  # e.g. "4 users" or "batch 1000 rows"
    params: dict[str, Any] = field(default_factory=dict)
    rate: float = 0.0                           # open loop: operations per second offered (0 = closed loop)


@dataclass
class WorkerContext:
    """Everything one worker process needs; built inside the worker, outside timing."""

    scenario: Scenario
    step: StepPlan
    worker: int
    target: Target
    layout: Layout | None
    dataset: Dataset
    params: dict[str, Any]                      # validated scenario params + step params
    rng: np.random.Generator
    state: dict[str, Any] = field(default_factory=dict)
    rows_done: int = 0


class Workload(ABC):
    name = ""
    title = ""
    description = ""
    reference = ""                 # the seed report section it reproduces
    op_name = ""
    params: tuple[Param, ...] = ()
    uses_target = True
    bounded_by_operations = True   # False: the workload decides when a worker is done (by rows)
    # parameters that stand for the system under test, not the question asked of it (a simulated
    # server's answer time): runs that differ in them still compare (``workloads.results.compare``)
    system_params: frozenset[str] = frozenset()
    ends_when = "its rows are moved"   # how a step ends when not bounded by operations
    writes = False                 # True: each step starts from an emptied scratch table
    roles: frozenset[str] = frozenset({"time"})   # the dataset roles it needs (``roles.ROLE_NAMES``)

    def missing_roles(self, info: DatasetInfo) -> tuple[str, ...]:
        """The roles this workload needs that ``info``'s dataset has no column for, in role order."""
        have = roles_of(info)
        return tuple(role for role in ROLE_NAMES if role in self.roles and role not in have)

    def refusal(self, info: DatasetInfo, flags: bool = True) -> str:
        """One line on why this workload cannot run on ``info``'s dataset ("" when it can), e.g.
        "slice-download needs a key column: dataset imp_trades has none (import it with --key COLUMN)";
        without ``flags`` (the window's words) no command-line hint."""
        missing = self.missing_roles(info)
        if not missing:
            return self.dataset_refusal(info)
        wanted = [f"a {role} column" if role != "quote-size" else "quote sizes (bid size and ask size)"
                  for role in missing]
        needs = wanted[0] if len(wanted) == 1 else ", ".join(wanted[:-1]) + " and " + wanted[-1]
        none = "none" if len(missing) == 1 else "neither" if len(missing) == 2 else "none of them"
        named = " ".join(ROLE_FLAGS[role] for role in missing)
        hint = ""
        if flags and info.name.startswith(IMPORT_PREFIX):
            hint = f" (import it with {named})"
        elif flags and info.name.startswith(TABLE_PREFIX):
            hint = f" (add the table again with {named})"
        return f"{self.name} needs {needs}: dataset {info.name} has {none}{hint}"

    def dataset_refusal(self, info: DatasetInfo) -> str:
        """Why this workload cannot run on ``info``'s dataset although it has the roles ("" when it
        can): a question asked of one dataset's own tables. No I/O; nothing by default."""
        return ""

    def check(self, scenario: Scenario) -> None:
        """A ValueError naming why this workload cannot run ``scenario`` (its dataset, days, or an
        engine that cannot ask its question), before anything starts; no I/O. Nothing by default."""

    def validate(self, raw: dict[str, Any]) -> dict[str, Any]:
        """Defaults filled in, every value coerced; unknown keys are an error. The harness's own
        ``added_work_s``, ``added_work_share`` and ``max_operations`` (``HARNESS_PARAMS``) are taken
        by every workload, and kept only when given."""
        known = {p.name: p for p in self.params}
        unknown = set(raw) - set(known) - {p.name for p in HARNESS_PARAMS}
        if unknown:
            raise ValueError(f"{self.name} has no parameter(s) {', '.join(sorted(unknown))}; "
                             f"it takes {', '.join(known) or 'none'}")
        values = {name: p.coerce(raw.get(name, p.default)) for name, p in known.items()}
        for param in HARNESS_PARAMS:
            if param.name in raw:
                values[param.name] = param.coerce(raw[param.name])
        return values

    def steps(self, scenario: Scenario) -> list[StepPlan]:
        """One step per users value (a users sweep), and with open-loop rates one per users value
        and rate (``workloads.run.schedule``); workloads with other sweeps override."""
        if not scenario.rate:
            return [StepPlan(i, users, f"{users} user{'s' if users > 1 else ''}")
                    for i, users in enumerate(scenario.users)]
        pairs = [(users, rate) for users in scenario.users for rate in scenario.rate]
        return [StepPlan(i, users, f"{users} user{'s' if users > 1 else ''} at {rate:,.6g} ops/s"
                                   f"{' each' if scenario.rate_per == 'user' else ''}",
                         rate=user_rate(rate, scenario.rate_per, users) * users)
                for i, (users, rate) in enumerate(pairs)]

    def setup(self, ctx: WorkerContext) -> None:
        """Untimed per-worker preparation (e.g. build the batches to upload)."""

    def scratch_table(self, params: dict[str, Any]) -> str:
        """The table a writing workload appends to ("" = the layout's append table)."""
        return ""

    def prepare_run(self, scenario: Scenario, layout: Layout | None, run_dir: Path) -> dict[str, Any]:
        """Parent-side, untimed work before any worker starts (files to import, a folder to export
        to under ``run_dir``); the returned values join every step's parameters."""
        return {}

    def finish_step(self, params: dict[str, Any]) -> None:
        """Parent-side clean-up after a step (files it wrote that nobody needs)."""

    def operations_per_step(self, scenario: Scenario, step: StepPlan, params: dict[str, Any]) -> int | None:
        """How many measured operations a step runs in all, where the workload knows it (for
        progress); None: it ends by operations per user, by a duration or by rows."""
        return None

    def timed_floor(self, ctx: WorkerContext) -> int:
        """Operations a worker makes in a timed step even past its duration (after ``setup``): a
        suite runs every query once, so its figures never lack one for want of seconds."""
        return 0

    def planned_ops(self, params: dict[str, Any]) -> list[tuple[str, str, str]]:
        """(name, category, description) of the operations each worker runs under their own
        names, in order (a suite's queries), so a live view can list them before they run."""
        return []

    @abstractmethod
    def next_op(self, ctx: WorkerContext, seq: int) -> Operation | None:
        """The next operation, or None when this worker has done its share."""

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "title": self.title, "description": self.description,
                "reference": self.reference, "params": [p.__dict__ for p in self.params],
                "roles": [role for role in ROLE_NAMES if role in self.roles]}
