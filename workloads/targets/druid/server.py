"""The server's plumbing, as a mixin of ``DruidTarget``: its datasources and their row counts,
ingestion tasks (``index_parallel`` specs: ``segmentGranularity`` DAY, ``queryGranularity`` NONE,
rollup off; submitted to the overlord and waited for) and waiting until rows are visible to SQL.
"""
from __future__ import annotations

import datetime as dt
import json
import time
from typing import Any

from workloads.targets.base import TargetError
from workloads.targets.druid.dialect import TS, _first_line, _ts_literal, quote


ZNODE_LIMIT = 512 * 1024       # druid.indexer.runner.maxZnodeBytes' default (the ZooKeeper task runner)


class DruidServer:
    """DruidTarget's plumbing: datasources, counts, ingestion tasks, visibility."""

    def datasources(self) -> set[str]:
        return {r["TABLE_NAME"] for r in self.http.rows(
            "SELECT TABLE_NAME FROM INFORMATION_SCHEMA.TABLES WHERE TABLE_SCHEMA = 'druid'")}

    def count(self, datasource: str, where: str = "TRUE", parameters: list | None = None) -> int:
        if datasource not in self.datasources():
            return 0
        try:
            found = self.http.rows(f"SELECT COUNT(*) AS n FROM {quote(datasource)} WHERE {where}", parameters)
        except TargetError as exc:
            # the broker can drop the datasource between the two questions (a clear under way): the
            # planner then says it is not found, or fails on the table it no longer has
            if f"Object '{datasource}' not found" in str(exc) or "relOptTable\" is null" in str(exc):
                return 0
            raise
        return int(found[0]["n"]) if found else 0

    def run_task(self, spec: dict[str, Any], what: str) -> str:
        """Submit an ingestion task and wait until it succeeds; its id."""
        size = len(json.dumps(spec))
        answer = self.http.json("POST", "/druid/indexer/v1/task", spec, port=self.http.overlord_port)
        return self.wait_task(answer["task"], what, size)

    def wait_task(self, task: str, what: str, size: int = 0) -> str:
        """Wait until the overlord says task ``task`` succeeded; its id (a failure: its message)."""
        deadline = time.monotonic() + float(self.config.get("task_timeout_s") or 1800)
        delay = 0.05
        while True:
            status = self.http.json("GET", f"/druid/indexer/v1/task/{task}/status", port=self.http.overlord_port)
            state = ((status or {}).get("status") or {})
            code = state.get("statusCode") or state.get("status")
            if code == "SUCCESS":
                return task
            if code == "FAILED":
                message = _first_line(state.get('errorMsg') or 'no message; see the task log')
                if "failed to assign" in message.lower() and size > ZNODE_LIMIT:       # an ingestion spec
                    message += (f" (this task's spec is {size / 1024:,.0f} KiB: an overlord with the ZooKeeper "
                                f"task runner refuses specs over {ZNODE_LIMIT // 1024} KiB; use smaller batches, "
                                "druid.indexer.runner.type=httpRemote or a larger druid.indexer.runner.maxZnodeBytes)")
                raise TargetError(f"Druid ingestion task {task} ({what}) failed: {message}")
            if time.monotonic() > deadline:
                raise TargetError(f"Druid ingestion task {task} ({what}) did not finish in time")
            time.sleep(delay)
            delay = min(delay * 1.5, 0.5)

    def wait_visible(self, ready, what: str, deadline_s: float = 300.0) -> float:
        """Poll until ``ready()``; seconds it took."""
        start = time.monotonic()
        delay = 0.05
        while not ready():
            if time.monotonic() - start > deadline_s:
                raise TargetError(f"Druid: {what} not visible to queries after {deadline_s:g} s")
            time.sleep(delay)
            delay = min(delay * 1.5, 0.5)
        return time.monotonic() - start

    @staticmethod
    def _spec(datasource: str, input_source: dict, dims: list[dict], intervals: list[str] | None,
              append: bool, input_format: dict | None = None, transforms: list | None = None,
              timestamp: dict | None = None, strict: bool = False) -> dict[str, Any]:
        granularity = {"segmentGranularity": "DAY", "queryGranularity": "NONE", "rollup": False}
        if intervals:
            granularity["intervals"] = intervals
        return {"type": "index_parallel", "spec": {
            "dataSchema": {"dataSource": datasource,
                           "timestampSpec": timestamp or {"column": TS, "format": "millis"},
                           "dimensionsSpec": {"dimensions": dims}, "granularitySpec": granularity,
                           "transformSpec": {"transforms": transforms or []}},
            "ioConfig": {"type": "index_parallel", "inputSource": input_source,
                         "inputFormat": input_format or {"type": "csv", "findColumnsFromHeader": True},
                         "appendToExisting": append},
            "tuningConfig": {"type": "index_parallel", "maxNumConcurrentSubTasks": 1,
                             "partitionsSpec": {"type": "dynamic"},
                             **({"maxParseExceptions": 0} if strict else {})}}}

    @staticmethod
    def _interval(day: dt.date) -> str:
        return f"{day.isoformat()}/{(day + dt.timedelta(days=1)).isoformat()}"

    @staticmethod
    def _day_where(day: dt.date) -> str:
        return f"__time >= {_ts_literal(day)} AND __time < {_ts_literal(day + dt.timedelta(days=1))}"
