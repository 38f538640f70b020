"""What ``ResultsStore`` reads of runs (``StoreReads``, a part of ``ResultsStore``): the list of
runs, one run's record (a unique prefix of its id is enough), its steps' facts, operation records,
workers and resource samples.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd

from workloads.results.catalog_folder import StoreError
from workloads.results.run_files import RUN_FILE, RUN_JSON_FIELDS, RunFolder
from workloads.results.run_tables import OPS_COLUMNS
from workloads.results.store_views import _CachedRun, _stamp
from workloads.results.strict_json import json_record


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
        for key in RUN_JSON_FIELDS:
            try:
                row[key] = json_record(row[key], f"its {key}")
            except ValueError as exc:
                raise StoreError(f"run {folder.name} is damaged: {RUN_FILE}: {exc}") from None
        return row

    def run_folder(self, run_id: str) -> Path:
        return self._folder(self.run(run_id)["run_id"])

    def step_facts(self, run_id: str) -> dict[int, dict[str, Any]]:
        """Facts a step recorded (an import table's footprint), by step."""
        rows = self.query("SELECT step, facts FROM steps WHERE run_id = ? AND facts IS NOT NULL "
                          "ORDER BY step", [run_id])
        try:
            return {int(step): json_record(facts, f"step {step}'s facts") for step, facts in rows}
        except ValueError as exc:
            raise StoreError(f"run {run_id} is damaged: {exc}") from None

    def ops(self, run_id: str, kinds: tuple[str, ...] | None = None,
            columns: tuple[str, ...] | None = None, ok_only: bool = False, step: int | None = None) -> pd.DataFrame:
        """Every record of the run (or only those of ``kinds``, of one ``step``, only successful
        ones), in time order per step; only ``columns`` of them if given (a figure's few numbers, not
        every record's text; their text as pandas categories)."""
        where, params = "run_id = ?" + (" AND ok" if ok_only else ""), [run_id]
        if step is not None:
            where += " AND step = ?"
            params.append(int(step))
        if kinds:
            where += f" AND kind IN ({', '.join('?' for _ in kinds)})"
            params += list(kinds)
        unknown = [c for c in columns or () if c not in OPS_COLUMNS]
        if unknown:
            raise ValueError(f"no column {unknown[0]!r} in operation records")
        listed = ", ".join(columns) if columns else "*"
        # the run's own files (run_frame): a read that does not grow with the catalog
        return self.run_frame(run_id, f"SELECT {listed} FROM ops WHERE {where} ORDER BY step, t_start, worker, seq",
                              params, categories=columns is not None)

    def failures(self, run_id: str, shown: int) -> pd.DataFrame:
        """The ``shown`` commonest error messages of each kind of failed operation, with counts and
        each kind's total (kind, error, count, failed): counted where the records are."""
        return self.run_frame(run_id, "SELECT kind, error, count, failed FROM (SELECT kind, error, count(*) AS count, "
                              "sum(count(*)) OVER (PARTITION BY kind) AS failed, row_number() OVER "
                              "(PARTITION BY kind ORDER BY count(*) DESC, error) AS rank FROM ops "
                              "WHERE run_id = ? AND NOT ok GROUP BY kind, error) WHERE rank <= ? ORDER BY kind, rank",
                              [run_id, shown])

    def workers(self, run_id: str) -> pd.DataFrame:
        return self.frame("SELECT * FROM workers WHERE run_id = ? ORDER BY step, worker", [run_id])

    def resources(self, run_id: str) -> pd.DataFrame:
        return self.frame("SELECT * FROM resources WHERE run_id = ? ORDER BY t", [run_id])
