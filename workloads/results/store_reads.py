"""What ``ResultsStore`` reads of runs (``StoreReads``, a part of ``ResultsStore``): the list of
runs, one run's record (a unique prefix of its id is enough), its steps' facts, operation records,
workers and resource samples.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pandas as pd

from workloads.results.catalog_folder import StoreError
from workloads.results.run_files import RUN_FILE, RunFolder
from workloads.results.store_views import _CachedRun, _stamp


class StoreReads:
    """Readers of runs, by SQL over the views or (for one run's record) from its folder alone."""

    # --- readers -------------------------------------------------------------------------
    def runs(self) -> pd.DataFrame:
        return self.frame("SELECT run_id, name, created_at, finished_at, status, dataset, target, "
                          "workload, users, cache, message FROM runs ORDER BY created_at DESC")

    def running(self) -> list[dict[str, Any]]:
        """The records of runs that say they are running, read from their folders alone (cheap:
        no view is built, so the window can ask at start-up)."""
        return [run for run in (folder.run() for folder in self._folders()) if run.get("status") == "running"]

    def run_ids(self) -> list[str]:
        return sorted(f.run_id for f in self._folders())

    def run(self, run_id: str) -> dict[str, Any]:
        """The run's record (a unique prefix of its id is enough); StoreError if there is no such
        run or it is damaged (naming the file and why). A dead run reads as aborted."""
        try:
            folder = self._folder(run_id)
        except ValueError:
            folder = None
        if folder is None or not (folder / RUN_FILE).exists():
            matches = [r for r in self.run_ids() if r.startswith(run_id)] if run_id else []
            if len(matches) == 1 and matches[0] != run_id:
                return self.run(matches[0])
            raise StoreError(f"no run {run_id!r} in {self.path}")
        with self._lock:                # this run's files alone: the window asks on its GUI thread
            cached = self._cache.get(folder.name)
        if cached is None or not cached.final:
            run_folder = RunFolder(folder)
            cached = _CachedRun.read(run_folder, _stamp(run_folder))
        if cached is None or cached.damage or not cached.tables["runs"].num_rows:
            raise StoreError(f"run {folder.name} is {cached.damage if cached and cached.damage else 'not readable'}")
        row = cached.tables["runs"].to_pylist()[0]
        for key in ("created_at", "finished_at"):
            row[key] = pd.Timestamp(row[key]) if row[key] else None
        for key in ("scenario", "environment", "layout"):
            try:
                row[key] = json.loads(row[key]) if isinstance(row[key], str) and row[key] else {}
            except json.JSONDecodeError:
                raise StoreError(f"run {folder.name} is damaged: {RUN_FILE}: its {key} is not JSON") from None
        return row

    def run_folder(self, run_id: str) -> Path:
        return self._folder(self.run(run_id)["run_id"])

    def step_facts(self, run_id: str) -> dict[int, dict[str, Any]]:
        """Facts a step recorded (an import table's footprint), by step."""
        rows = self.query("SELECT step, facts FROM steps WHERE run_id = ? AND facts IS NOT NULL "
                          "ORDER BY step", [run_id])
        return {int(step): json.loads(facts) for step, facts in rows}

    def ops(self, run_id: str, kinds: tuple[str, ...] | None = None) -> pd.DataFrame:
        """Every record of the run (or only those of ``kinds``), in time order per step."""
        where, params = "run_id = ?", [run_id]
        if kinds:
            where += f" AND kind IN ({', '.join('?' for _ in kinds)})"
            params += list(kinds)
        # the run's own files (run_frame): a read that does not grow with the catalog
        return self.run_frame(run_id, f"SELECT * FROM ops WHERE {where} ORDER BY step, t_start, worker, seq", params)

    def workers(self, run_id: str) -> pd.DataFrame:
        return self.frame("SELECT * FROM workers WHERE run_id = ? ORDER BY step, worker", [run_id])

    def resources(self, run_id: str) -> pd.DataFrame:
        return self.frame("SELECT * FROM resources WHERE run_id = ? ORDER BY t", [run_id])
