"""Report 003's map-reduce on Druid, as a mixin of ``DruidTarget``.

The map-reduce into a table (``<table>_minute``) is an ``INSERT ... SELECT`` run by Druid's
multi-stage-query engine (``/druid/v2/sql/task``) when the server has the
``druid-multi-stage-query`` extension, found by asking it (``/status`` lists its loaded modules); a
server without it gets the one-line verdict "this server has no multi-stage-query extension"
(``NotSupported``: the server's limit; the run goes on).
"""
from __future__ import annotations

import datetime as dt
from typing import Any

import pandas as pd

from workloads.targets.base import Layout, NotSupported, OpResult, TargetError
from workloads.targets.common.quotes import day_span, quote_columns
from workloads.targets.druid.connection import CONTEXT, _now
from workloads.targets.druid.dialect import _param, _ts_literal, quote


MSQ_ARTIFACT = "druid-multi-stage-query"
MSQ_CONTEXT = {"maxNumTasks": 2, "finalizeAggregations": True}     # a controller and one worker
NO_MSQ = ("this server has no multi-stage-query extension (its /status lists no druid-multi-stage-query "
          "module): Druid writes a table from a query only through it")


class DruidMapReduce:
    """DruidTarget's map-reduce through the multi-stage-query engine."""

    def mapreduce_minute_bars(self, layout: Layout, days=()) -> OpResult:
        """Report 003 (b) through Druid's multi-stage-query engine: ``INSERT INTO <table>_minute
        SELECT`` the span's minute quotes (per key and minute, average bid and ask; ``__time`` the
        minute), submitted to ``/druid/v2/sql/task`` and timed until the task succeeds; the answer
        is the number of bars written, counted once every segment it published is loaded (outside
        the timing: ``extra["queryable_s"]``). A server whose ``/status`` lists no MSQ module gets
        the verdict "this server has no multi-stage-query extension" (``NotSupported``)."""
        if not self.has_msq():
            raise NotSupported(NO_MSQ)
        try:
            cols = quote_columns(self._dataset_info(layout))
            first, last = day_span(layout.days, days)
        except ValueError as exc:
            raise TargetError(f"{layout.dataset}: {exc}") from None
        minute = self.minute_table(layout)
        span = f"__time >= {_ts_literal(first)} AND __time < {_ts_literal(last + dt.timedelta(days=1))}"
        k, b, a = quote(cols.key), quote(cols.bid), quote(cols.ask)
        sql = (f"INSERT INTO {quote(minute)} SELECT TIME_FLOOR(__time, 'PT1M') AS __time, {k}, AVG({b}) AS {b}, "
               f"AVG({a}) AS {a} FROM {quote(self.table(layout))} WHERE {span} GROUP BY 1, 2 PARTITIONED BY DAY")
        before = self.count(minute, span)
        t0 = _now()
        answer = self.http.json("POST", "/druid/v2/sql/task", {"query": sql, "context": {**CONTEXT, **MSQ_CONTEXT}})
        task = self.wait_task(answer["taskId"], f"the map-reduce into {minute}")
        t1 = _now()
        queryable = self.wait_visible(lambda: self._segments_loaded(minute), f"the bars in {minute}")
        bars = self.count(minute, span) - before
        frame = pd.DataFrame({"bars": [int(bars)]})
        return OpResult(rows=len(frame), phases={}, frame=frame, node=self.node,
                        extra={"bars": int(bars), "insert_s": t1 - t0, "queryable_s": queryable, "task": task,
                               "engine": "multi-stage query (/druid/v2/sql/task)"})

    def minute_table(self, layout: Layout) -> str:
        return self.table(layout) + "_minute"

    def has_msq(self) -> bool:
        """Whether the server runs multi-stage queries, asked of it (the broker's ``/status``)."""
        if self._msq is None:
            self._msq = msq_loaded(self.http.json("GET", "/status"))
        return self._msq

    def _segments_loaded(self, datasource: str) -> bool:
        """Every published segment of ``datasource`` is served (at least one)."""
        found = self.http.rows("SELECT COUNT(*) AS n, SUM(is_available) AS up FROM sys.segments "
                               "WHERE datasource = ? AND is_published = 1 AND is_overshadowed = 0", _param(datasource))
        return bool(found) and int(found[0]["n"] or 0) > 0 and int(found[0]["up"] or 0) == int(found[0]["n"])


def msq_loaded(status: Any) -> bool:
    """Whether a ``/status`` answer lists the multi-stage-query extension among its modules."""
    if not isinstance(status, dict):
        return False
    return any(isinstance(m, dict) and (m.get("artifact") == MSQ_ARTIFACT
                                        or str(m.get("name") or "").startswith("org.apache.druid.msq."))
               for m in status.get("modules") or [])
