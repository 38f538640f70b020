"""One run: prepare the target, then per step start N worker processes, release them together,
let the step's collector (``workloads.run.collector``) gather their records into the results store
and the live aggregates, and finish cleanly.

``Runner.run()`` is synchronous: ``tickbench run`` calls it, and so does the process the window
starts for a run (``tickbench run --live``, which publishes ``snapshot()`` to the run's folder);
``cancel()`` may be called from any thread. Two runners with a ``partner`` (``workloads.run.turns``)
run side by side in two threads, their users taking turns operation by operation.
"""
from __future__ import annotations

import secrets
import threading
import shutil
import time
from dataclasses import asdict, dataclass, field, replace
from datetime import datetime
from typing import Any

import pandas as pd

from workloads.run.collector import Collector, RunContext
from workloads.run.environment import capture_environment
from workloads.results.figures import figures_of_step, step_figures
from workloads.operations import StepPlan, get_workload
from workloads.run.metrics import LiveAggregates
from workloads.run.sampler import ResourceSampler
from workloads.scenario import Scenario, is_secret, run_name
from workloads.run.snapshot import LiveSnapshot
from workloads.results.dead_runs import host_process
from workloads.results.store import ResultsStore
from workloads.results.dataset_size import layout_size
from workloads.targets import make_target
from workloads.datasets import get_dataset
from workloads.datasets.csv_files import existing_csv_bytes
from workloads.targets.base import IMPORT_TABLE, Layout, TargetError
from workloads.targets.common.sizes import rows_bytes
from workloads.run.launch import Launcher, LocalLauncher, StartersLost, StepLaunch, UsersNotStarted
from workloads.run.processes import planned_conditions, preload_for, preload_for_all
from workloads.run.turns import Partner
from workloads.run.worker import WorkerSpec, describe_error

READY_TIMEOUT_S = 300.0     # spawned workers import pandas/pyarrow: slow with many on 2 cores


def new_run_id() -> str:
    return f"{datetime.now():%Y%m%d-%H%M%S}-{secrets.token_hex(2)}"


@dataclass
class RunResult:
    run_id: str
    status: str                      # completed | cancelled | failed
    message: str
    figures: pd.DataFrame = field(default_factory=pd.DataFrame)


def check_scenario(scenario: Scenario) -> dict[str, Any]:
    """The scenario's workload parameters, validated; ValueError or KeyError (unknown workload or
    target, bad parameters, a dataset without a role the workload needs, a question the engine
    cannot ask) before anything starts. No I/O beyond an imported dataset's manifest and a query
    suite's file."""
    workload = get_workload(scenario.workload)
    refusal = workload.refusal(get_dataset(scenario.dataset).info)
    if refusal:
        raise ValueError(refusal)
    params = workload.validate(scenario.params)
    workload.check(scenario)        # a tick question the engine cannot ask: refused here, in one line
    if workload.bounded_by_operations and not scenario.operations and not scenario.duration_s:
        raise ValueError(f"{scenario.workload} needs a number of operations per user or a duration")
    if scenario.rate and any(step.rate <= 0 for step in workload.steps(scenario)):
        raise ValueError(f"{scenario.workload} sweeps steps of its own: an open-loop rate is offered to workloads "
                         "whose steps are users")
    target = make_target(scenario.target, scenario.target_config)  # config only, no I/O
    if workload.writes and getattr(target, "read_only", False):
        raise ValueError(f"{scenario.workload} writes, and {scenario.target_config.get('target_key') or scenario.target} "
                         "is a table read in place, never written: choose a read workload")
    if scenario.cache == "cold" and workload.uses_target and hasattr(target, "cold_refusal"):
        try:
            cold_refusal = target.cold_refusal()
        except TargetError:                 # no such saved table: the run's prepare says so in its words
            cold_refusal = ""
        if cold_refusal:
            raise ValueError(cold_refusal)
    return params


class Runner:
    def __init__(self, scenario: Scenario, store: ResultsStore, ready_timeout_s: float = READY_TIMEOUT_S,
                 run_id: str | None = None, partner: Partner | None = None):
        self.scenario = scenario
        self.store = store
        self.run_id = run_id or new_run_id()
        self.ready_timeout_s = ready_timeout_s
        self.workload = get_workload(scenario.workload)
        self.params = check_scenario(scenario)
        self.steps: list[StepPlan] = self.workload.steps(scenario)
        self.target = make_target(scenario.target, scenario.target_config)  # config only, no I/O
        self._cancel = threading.Event()
        self._t0 = time.monotonic()
        self._metrics = LiveAggregates(self.run_id, scenario.target, scenario.workload, len(self.steps),
                                       run_name(scenario), scenario.cache)
        self._metrics.plan_ops(self.workload.planned_ops(self.params))
        self.partner = partner
        # both sides' users fork from one server: it must hold both targets' modules
        preload = preload_for_all(partner.table.targets) if partner else preload_for(scenario.target)
        self._launcher: Launcher = LocalLauncher(scenario.start, preload)
        self._sampler: ResourceSampler | None = None
        self._failures: list[str] = []
        self.load_generators = None       # the Dask cluster's description, once connected
        self._planned_ops: dict[int, int | None] = {}
        self._conditions_recorded = False
        self._measured_ops = 0            # of the steps ended so far (their figures' "ops")

    # --- control -------------------------------------------------------------------------
    def cancel(self) -> None:
        self._cancel.set()

    @property
    def cancelled(self) -> bool:
        return self._cancel.is_set()

    def clock(self) -> float:
        return time.monotonic() - self._t0

    def snapshot(self) -> LiveSnapshot:
        return self._metrics.snapshot(self.clock())

    # --- the run -------------------------------------------------------------------------
    def run(self) -> RunResult:
        scenario, target = self.scenario, self.target
        environment = capture_environment(self._data_paths())
        environment["string_mode"] = scenario.strings
        environment["process"] = planned_conditions(scenario.start, scenario.process, scenario.target)
        self.store.create_run(self.run_id, public_scenario(scenario), environment, host_process())
        self._sampler = ResourceSampler()
        status, message = "completed", ""
        try:
            if scenario.scheduler:
                self._connect_load_generators()
            layout = self._prepare(target) if self.workload.uses_target else None
            self._describe_target()
            run_params = self.workload.prepare_run(self.scenario, layout, self._run_dir())
            if layout is not None:      # after prepare_run: an import's CSV files exist by now
                self.store.set_layout(self.run_id, {**_layout_record(layout), "footprint": self._footprint(layout)})
            if self.partner is not None:
                self._meet_partner()
            for step in self.steps:
                if self.cancelled:
                    break
                self._run_step(replace(step, params={**step.params, **run_params}), layout)
                self.workload.finish_step(run_params)
            status, message = self._end_state()
        except StartersLost as exc:
            status, message = "failed", f"{exc}; the run stopped (what earlier steps measured is kept)"
        except (TargetError, ValueError, OSError) as exc:
            status, message = "failed", describe_error(exc) if not isinstance(exc, TargetError) else str(exc)
        except Exception as exc:  # keep the record: a run never vanishes
            status, message = "failed", describe_error(exc)
        finally:
            if self.partner is not None:
                self.partner.leave()
            self._launcher.close()
            shutil.rmtree(self._run_dir(), ignore_errors=True)      # the run's scratch files
            self.store.finish_run(self.run_id, status, message)
            status, message = self._stored_end(status, message)
            self._metrics.set_status(status, message or status, progress=1.0 if status == "completed" else None)
        return RunResult(self.run_id, status, message, step_figures(self.store, self.run_id))

    def _stored_end(self, status: str, message: str) -> tuple[str, str]:
        """The end the store recorded: its own words where it could not keep the run as it went
        (a full disk: "disk full at <path>; kept N operation records")."""
        try:
            stored = self.store.run(self.run_id)
        except Exception:             # the end as the runner saw it is still the truth to report
            return status, message
        if stored.get("status") and stored["status"] != status:
            return str(stored["status"]), str(stored.get("message") or message)
        return status, message

    def _end_state(self) -> tuple[str, str]:
        """The run's status once its steps are over: "cancelled" when stopped; "not supported" when
        the target could run none of the operations; "failed" when nothing was measured (every
        operation failed, or none ran); else "completed", with the failures that did not stop it."""
        failures = "; ".join(self._failures[:3]) + (
            f" (+{len(self._failures) - 3} more)" if len(self._failures) > 3 else "")
        if self.cancelled:
            return "cancelled", "stopped by the user; what was measured is kept"
        if self._measured_ops > 0:
            return "completed", failures
        ops = self.store.ops(self.run_id)            # nothing measured: only failed records, few
        errors = ops.loc[~ops["ok"], "error"].astype(str) if len(ops) else pd.Series(dtype=str)
        unsupported = errors[errors.str.startswith("NotSupported")]
        if len(unsupported) and len(unsupported) == len(errors):
            reason = unsupported.iloc[0].partition(": ")[2] or unsupported.iloc[0]
            return "not supported", f"{self.scenario.target} cannot run {self.scenario.workload}: {reason}"
        if failures:
            return "failed", failures
        if len(errors):
            common = errors.value_counts()
            return "failed", (f"every operation failed ({len(errors):,}); commonest: {common.index[0]}"
                              + (f" ({common.iloc[0]:,}x)" if len(common) > 1 else ""))
        return "failed", "nothing was measured: no operation ran"

    def _connect_load_generators(self) -> None:
        """The scenario's Dask cluster: its hosts, their environments and clock offsets are stored
        with the run before anything starts, with the versions that differ between hosts."""
        from workloads.distributed.launcher import DaskLauncher

        self._metrics.set_status("preparing", f"connecting to the Dask scheduler at {self.scenario.scheduler}")
        launcher = DaskLauncher(self.scenario.scheduler, self.scenario.placement, self.scenario.pins)
        self._launcher = launcher
        cluster = launcher.describe()
        self.store.set_environment_entry(self.run_id, "load_generators", cluster.to_dict())
        self.load_generators = cluster
        if cluster.differences:
            self._metrics.set_status("preparing", "hosts differ: " + "; ".join(cluster.differences))

    def _data_paths(self) -> list[str]:
        config = self.scenario.target_config
        return [str(p) for p in (config.get("root"), config.get("path"), self.store.path.parent) if p]

    def _prepare(self, target) -> Layout:
        def progress(done: int, total: int, text: str) -> None:
            self._metrics.set_status("preparing", f"preparing data: {text}",
                                     progress=0.0 if not total else 0.1 * done / total)
        self._metrics.set_status("preparing", "preparing data")
        layout = target.prepare(self.scenario.dataset, self.scenario.scale,
                                self.scenario.string_mode, progress)
        self.store.set_layout(self.run_id, _layout_record(layout))
        return layout

    def _footprint(self, layout: Layout, table: str = "") -> dict[str, Any]:
        """The table's space as the engine tells it, with what to compare it with."""
        try:
            footprint = self.target.footprint_detail(layout, table).to_dict()
        except Exception as exc:  # a footprint must never stop a run
            return {"error": describe_error(exc)}
        footprint["logical_bytes"] = rows_bytes(layout.rows, get_dataset(layout.dataset).info.schema)
        footprint["csv_bytes"] = existing_csv_bytes(layout.dataset, layout.scale)
        return footprint

    def _run_dir(self):
        from workloads.paths import scratch_dir
        return scratch_dir(self.run_id)

    def _describe_target(self) -> None:
        """The target as it was used (server version, topology, what preparing it learnt)."""
        self.store.set_environment_entry(self.run_id, "target", _safe_describe(self.target))

    def _run_step(self, step: StepPlan, layout: Layout | None) -> None:
        launch = self._launcher.begin_step(f"tickbench-{self.run_id}-{step.index}")
        try:
            self._run_launched_step(step, layout, launch)
        finally:
            launch.close()

    def _run_launched_step(self, step: StepPlan, layout: Layout | None, launch: StepLaunch) -> None:
        self.store.add_step(self.run_id, step.index, step.users, step.label, step.params, step.rate)
        self._metrics.begin_step(step.index, step.users, step.label, self.clock())
        self._metrics.set_status("running", f"step {step.index + 1}/{len(self.steps)}: starting "
                                 f"{step.users} worker process{'es' if step.users > 1 else ''}")
        # A write workload's table is emptied after the warm-ups (they write too), or before the
        # workers start when there are none (a DuckDB worker then still holds the file read-only).
        clear = layout is not None and self.workload.writes
        if clear and not self.scenario.warmup_ops:
            self.target.clear_table(layout, self.workload.scratch_table(self.params))
        hosts = self._launcher.host_for(step.users)
        self._metrics.set_hosts(hosts)
        starting = time.monotonic()
        turns = self.partner.turns(launch.context, step.index, step.users) if self.partner else [None] * step.users
        try:
            workers = launch.start([self._spec(step, layout, i, host, turns[i]) for i, host in enumerate(hosts)])
        except UsersNotStarted as exc:
            if self.partner is not None:
                self.partner.leave()          # the other side's users must not wait for these
            self._step_not_started(step, str(exc))
            return
        collector = Collector(self._context(), step, workers, on_lost=launch.abort)
        collector.wait_ready(self.ready_timeout_s)
        # users started, set up and warmed up: the step's start-up, beside the figures of its run
        self.store.set_step_facts(self.run_id, step.index, {"users_ready_s": round(time.monotonic() - starting, 4)})
        self._record_conditions(collector.conditions)
        if clear and self.scenario.warmup_ops:
            self.target.clear_table(layout, self.workload.scratch_table(self.params))
        t0 = time.monotonic()
        offset = self.clock()
        self.store.release_step(self.run_id, step.index, offset)
        self._metrics.release_step(offset)
        for w in workers:
            if w.state == "ready":
                collector.set_state(w, "running")
        if self.partner is not None:
            # both sides' users ready and both runners' bookkeeping of the release done: no side's
            # first operations share the machine with the other's writes
            self.partner.meet()
        launch.release(t0)
        running = sum(w.state == "running" for w in workers)
        self._metrics.set_status("running", f"step {step.index + 1}/{len(self.steps)} ({step.label}): "
                                 f"{running} of {step.users} workers running")
        collector.collect(offset, launch.stop, until=("running",))
        if self.partner is not None:
            self.partner.end_step(step.index)     # its users are done, even one killed mid-operation
            self.partner.meet()               # the other side's last operations end before this side's figures are read
        # release -> end of the last measured operation; cold: the time operations ran, never a
        # clear's; taking turns: the time its own operations ran, never the other run's
        window = collector.busy_s() if self._cold_rounds() or self.partner else collector.last_end
        if not self.cancelled and any(w.state == "measured" for w in workers):
            self._metrics.set_status("running", f"step {step.index + 1}/{len(self.steps)}: "
                                     "probe operations for the phase split")
            launch.release_probes()
        collector.collect(offset, launch.stop, until=("running", "measured"))
        collector.finish()
        lost = launch.trouble()
        if lost:                 # the users ended because their server did: nothing of the step holds
            self.store.finish_step(self.run_id, step.index, window, "failed", collector.cache_methods)
            raise StartersLost(f"step {step.index + 1} ({step.label}): {lost}")
        self._failures += collector.failures
        step_status = "cancelled" if self.cancelled else "completed"
        self.store.finish_step(self.run_id, step.index, window, step_status,
                               collector.cache_methods)
        if layout is not None and self.workload.scratch_table(self.params) == IMPORT_TABLE:
            self.store.set_step_facts(self.run_id, step.index,
                                      {"footprint": self._footprint(layout, IMPORT_TABLE)})
        self._end_step(step)

    def _end_step(self, step: StepPlan) -> None:
        """The step's figures become the live view's final word; its measured operations are counted
        for the run's end state (one read of the figures a step: each reads the catalog's records)."""
        figures = figures_of_step(self.store, self.run_id, step.index)
        ops = (figures or {}).get("ops")
        self._measured_ops += int(ops) if ops is not None and pd.notna(ops) else 0
        self._metrics.end_step(figures)

    def _step_not_started(self, step: StepPlan, why: str) -> None:
        """A step whose users could not all start: failed with the reason; the steps before it keep
        what they measured, and the run goes on to the next."""
        message = f"step {step.index + 1} ({step.label}): {why}"
        self._failures.append(message)
        self._metrics.set_status("running", message)
        self.store.finish_step(self.run_id, step.index, 0.0, "failed", [])
        self.store.set_step_facts(self.run_id, step.index, {"error": message})
        self._end_step(step)

    def _record_conditions(self, reported: dict[str, Any]) -> None:
        """The process conditions as the step's first ready user reported them (what it found
        preloaded, its allocator and strings), over the run's plan."""
        if reported and not self._conditions_recorded:
            planned = planned_conditions(self.scenario.start, self.scenario.process, self.scenario.target)
            self.store.set_environment_entry(self.run_id, "process", {**planned, **reported})
            self._conditions_recorded = True

    def _cold_rounds(self) -> bool:
        """A cold step whose operations run in rounds with clears between them (``workloads.run.cold``)."""
        return self.scenario.cache == "cold" and self.workload.uses_target

    def _context(self) -> RunContext:
        return RunContext(self.run_id, self.store, self._metrics, self._sampler, lambda: self.cancelled,
                          self.clock, self._step_progress)

    def _spec(self, step: StepPlan, layout, index: int, host: str, turn=None) -> WorkerSpec:
        return WorkerSpec(scenario=self.scenario.to_dict(), step=asdict(step), worker=index, layout=layout,
                          target_kind=self.scenario.target, target_config=dict(self.scenario.target_config),
                          host=host, turn=turn)

    def _meet_partner(self) -> None:
        """Wait until the other side laid its data out too (no user of either starts while the
        other still writes); the record says whose operations these took turns with."""
        self._metrics.set_status("preparing", f"waiting for {self.partner.other_run_id or 'the other side'}")
        if not self.partner.meet():
            raise StartersLost("the run it takes turns with ended before its users started")
        self.store.set_environment_entry(self.run_id, "interleaved", self.partner.record())

    def _step_progress(self, step: StepPlan, ops: int, rows: int, elapsed: float) -> float:
        # asked on every collector pass: the planned count (a suite file read) once per step
        if step.index not in self._planned_ops:
            self._planned_ops[step.index] = self.workload.operations_per_step(self.scenario, step, self.params)
        planned = self._planned_ops[step.index]
        if self.scenario.duration_s:
            fraction = elapsed / self.scenario.duration_s
        elif planned:
            fraction = ops / planned
        elif self.workload.bounded_by_operations:
            fraction = ops / max(1, step.users * self.scenario.operations)
        else:
            per_user = self.params.get("rows_per_user") or self.params.get("rows_per_step") or 1
            fraction = rows / max(1, per_user * step.users)
        return min(1.0, 0.1 + 0.9 * (step.index + min(fraction, 1.0)) / len(self.steps))


def _safe_describe(target) -> dict[str, Any]:
    """``describe()``, and how the target's path compared with its engine's fastest documented
    client path when the practitioner benchmark last measured it (``workloads.practitioner.measured``)."""
    from workloads.practitioner.measured import path_check
    from workloads.targets.common.host_agents import agent_token, agents_of, hardware_threads
    try:
        described = target.describe()
    except Exception as exc:  # a description must never stop a run
        return {"kind": getattr(target, "kind", "?"), "describe_error": describe_error(exc)}
    config = getattr(target, "config", None) or {}
    # the servers' hardware threads, from their hosts' agents (a client cannot see them otherwise)
    hardware = hardware_threads(agents_of(config), agent_token(config)) if isinstance(config, dict) else {}
    return {**described, **hardware, **path_check(getattr(target, "kind", ""))}


def public_scenario(scenario: Scenario) -> dict[str, Any]:
    """The scenario as a run's record keeps it: its name as shown, no secret of its target's."""
    data = scenario.to_dict()
    data["name"] = run_name(scenario)
    data["target_config"] = {k: v for k, v in data["target_config"].items() if not is_secret(k)}
    return data


def _layout_record(layout: Layout) -> dict[str, Any]:
    record = asdict(layout)
    record["days"] = [str(d) for d in layout.days]
    record["keys_sample"] = list(layout.keys_sample)[:20]
    record["strings"] = layout.strings.value
    keys = _key_count(layout)
    sampled = keys is None and bool(layout.keys_sample)
    record["size"] = layout_size(len(layout.days), layout.rows, len(layout.keys_sample) if sampled else keys,
                                 keys_sampled=sampled)
    content = _content(layout)
    if content:
        record["content"] = content        # an import's digest: compare names other data under one name
    return record


def _content(layout: Layout) -> str:
    try:
        return str(get_dataset(layout.dataset).info.extra.get("content") or "")
    except Exception:  # a digest must never stop a run
        return ""


def _key_count(layout: Layout) -> int | None:
    """The keys of the data as laid out (an import's own, never the scale's symbols); None where only
    the target knows them (a table where it lives: its sample of keys, ``keys_sampled``)."""
    try:
        return len(get_dataset(layout.dataset).keys(layout.scale)) or None
    except Exception:  # a count must never stop a run
        return None
