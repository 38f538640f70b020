"""What ``ResultsStore`` writes for the process running a run (``StoreWrites``, a part of
``ResultsStore``): the run's records, steps, workers, operations and resource samples, and
deleting a run.

Each run's folder has one writer, the process running it. A run id is a name, never a path, and
names one run: ``create_run`` refuses an id in use or one that is not a name, before anything is
written. A write that finds the disk full ends the run "failed" with "disk full at <path>" and what
was kept (``workloads.results.run_writer.RunWriter.end``, helped by the space each running run
reserves).
"""
from __future__ import annotations

import json
import os
import shutil
from typing import Any

from workloads.run.records import Columns, OpRecord
from workloads.results.atomic_files import DiskFullError
from workloads.results.catalog_folder import StoreError
from workloads.results.dead_runs import HostProcess, dead_message, host_process, run_process
from workloads.results.run_files import DELETED, RUN_FILE, RunFolder
from workloads.results.run_tables import ops_table, utc_now
from workloads.results.run_writer import RunWriter
from workloads.names import look_alike
from workloads.paths import check_run_id, run_path


class StoreWrites:
    """The writes of a run's process; ``ResultsStore`` holds its writers and the runs whose disk
    filled."""

    # --- writers: only the process running a run writes its folder ---------------------------
    def _writer(self, run_id: str) -> RunWriter:
        writer = self._writers.get(run_id)
        if writer is None:
            writer = self._writers[run_id] = RunWriter(run_path(self.runs_dir, run_id))
        return writer

    def _write(self, run_id: str, write) -> None:
        """A write of the run's process; a full disk is remembered, the run then ends on it."""
        try:
            write(self._writer(run_id))
        except DiskFullError as exc:
            self._full.setdefault(run_id, str(exc))
            raise

    def check_new_run_id(self, run_id: str) -> str:
        """``run_id`` if a new run may take it: a name (never a path), not used in this catalog;
        else ValueError naming the id and the rule. Nothing is created or deleted."""
        check_run_id(run_id)
        folder = self._folder(run_id)
        if (folder / RUN_FILE).exists():
            raise ValueError(f"run id {run_id!r}: already used by a run in {self.path}; a run id names one run")
        alike = look_alike(run_id, self.run_ids())
        if alike is not None:
            raise ValueError(f"run id {ascii(run_id)}: looks like run {ascii(alike)} of {self.path}; "
                             "a run id names one run")
        return run_id

    def create_run(self, run_id: str, scenario: dict[str, Any], environment: dict[str, Any],
                   process: HostProcess | None = None) -> None:
        """The run's first record: ValueError (before anything is written) if ``run_id`` is not a
        name or is in use, also by a run created at the same moment."""
        self.check_new_run_id(run_id)
        process = process or host_process()
        writer = RunWriter(run_path(self.runs_dir, run_id))
        writer.create_run(dict(
            run_id=run_id, name=scenario.get("name", ""), created_at=utc_now(), finished_at=None,
            status="running", dataset=scenario["dataset"], target=scenario["target"],
            workload=scenario["workload"], users=",".join(str(u) for u in scenario["users"]),
            cache=scenario["cache"], scenario=json.dumps(scenario, default=str),
            environment=json.dumps(environment, default=str), layout=None, message="",
            host=process.host, host_pid=process.pid, host_started=process.started))
        self._writers[run_id] = writer

    def set_environment_entry(self, run_id: str, key: str, value: Any) -> None:
        def write(writer: RunWriter) -> None:
            environment = json.loads(writer.run().get("environment") or "{}")
            environment[key] = value
            writer.update_run(environment=json.dumps(environment, default=str))
        self._write(run_id, write)

    def set_layout(self, run_id: str, layout: dict[str, Any]) -> None:
        self._write(run_id, lambda w: w.update_run(layout=json.dumps(layout, default=str)))

    def finish_run(self, run_id: str, status: str, message: str = "") -> None:
        """The run's end: records sealed, steps and workers in true end states, then its status.
        After a full disk it ends "failed" with "disk full at <path>" and what was kept."""
        writer = self._writer(run_id)
        if run_id in self._full:
            kept = writer.kept_ops()
            status, message = "failed", f"{self._full[run_id]}; kept {kept:,} operation record{'s' * (kept != 1)}"
        writer.end(status, message)

    def add_step(self, run_id: str, step: int, users: int, label: str, params: dict, rate: float = 0.0) -> None:
        self._write(run_id, lambda w: w.add_step(
            {"run_id": run_id, "step": step, "users": users, "label": label, "rate": rate or None,
             "params": json.dumps(params, default=str), "started_at": utc_now(), "window_s": None,
             "status": "running", "cache_methods": "", "released_at": None, "release_clock": None,
             "facts": None}))

    def release_step(self, run_id: str, step: int, run_clock: float) -> None:
        """The moment the step's workers were released: the start of its measurement window."""
        self._write(run_id, lambda w: w.update_step(step, released_at=utc_now(), release_clock=run_clock))

    def finish_step(self, run_id: str, step: int, window_s: float, status: str,
                    cache_methods: list[str]) -> None:
        """``window_s``: from the release to the end of the step's last measured operation. The
        step's records then become one Parquet part (its workers have stopped: nobody pays for it)."""
        def write(writer: RunWriter) -> None:
            writer.update_step(step, window_s=window_s, status=status, cache_methods=",".join(cache_methods))
            writer.settle_ops()
        self._write(run_id, write)

    def set_step_facts(self, run_id: str, step: int, facts: dict[str, Any]) -> None:
        """Facts of a step (its footprint, how long its users took to start): added to those it has."""
        self._write(run_id, lambda w: w.add_step_facts(step, facts))

    def set_worker(self, run_id: str, step: int, worker: int, pid: int | None, node: str,
                   state: str, error: str = "", exitcode: int | None = None, traceback: str = "",
                   host: str = "") -> None:
        self._write(run_id, lambda w: w.set_worker(
            {"run_id": run_id, "step": step, "worker": worker, "pid": pid, "node": node, "state": state,
             "error": error, "exitcode": exitcode, "traceback": traceback or None, "host": host}))

    def add_ops(self, run_id: str, records: "Columns | list[Columns] | list[OpRecord]") -> None:
        table_ = ops_table(run_id, records)
        self._write(run_id, lambda w: w.add_ops(table_))

    def add_resource(self, run_id: str, t: float, cpu: float, rss: int, rbps: float, wbps: float) -> None:
        self._write(run_id, lambda w: w.add_resource({"run_id": run_id, "t": t, "cpu_percent": cpu, "rss_bytes": rss,
                                                      "read_bytes_per_s": rbps, "write_bytes_per_s": wbps}))

    def delete_run(self, run_id: str) -> None:
        """The run's folder, moved aside first so no reader ever sees half of it; a damaged run too
        (nothing of it is read but its process). StoreError for a run whose process still runs it."""
        folder = self._folder(run_id)
        if not folder.is_dir():
            return
        run = RunFolder(folder).run()
        if run.get("status") == "running" and dead_message(run) is None and run_id not in self._writers:
            process = run_process(run)
            raise StoreError(f"run {run_id} is still running" + (f" (pid {process.pid} on {process.host})" if process else "")
                             + "; stop it first")
        self._writers.pop(run_id, None)
        doomed = folder.with_name(f"{DELETED}{os.getpid()}-{os.urandom(4).hex()}")   # no reader lists it
        folder.rename(doomed)
        shutil.rmtree(doomed, ignore_errors=True)
        with self._lock:
            self._cache.pop(folder.name, None)
            self._views_built = False
