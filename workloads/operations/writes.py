"""Write workloads: single-user batch-size sweep (002 §1) and concurrent appends (002 §2)."""
from __future__ import annotations

import pandas as pd

from workloads.operations.base import Operation, StepPlan, WorkerContext, Workload
from workloads.operations.params import Param
from workloads.scenario import Scenario

_POOL_ROWS_MAX = 200_000  # rows generated once per worker and reused batch after batch
UPLOAD_TABLE = "upload"   # DolphinDB: its in-memory table; elsewhere a scratch table of that name


def _row_pool(ctx: WorkerContext, rows: int) -> pd.DataFrame:
    """Rows of the scenario's dataset to upload; generated before the barrier (untimed)."""
    wanted = min(rows, _POOL_ROWS_MAX)
    chunks, have = [], 0
    for chunk in ctx.dataset.generate_day(0, ctx.scenario.scale, ctx.scenario.string_mode,
                                           chunk_rows=wanted):
        chunks.append(chunk)
        have += len(chunk)
        if have >= wanted:
            break
    pool = pd.concat(chunks, ignore_index=True) if len(chunks) > 1 else chunks[0]
    return pool.iloc[:wanted].reset_index(drop=True)


def _next_batch(ctx: WorkerContext, batch_rows: int, rows_total: int) -> pd.DataFrame | None:
    remaining = rows_total - ctx.rows_done
    if remaining <= 0:
        return None
    pool: pd.DataFrame = ctx.state["pool"]
    size = min(batch_rows, remaining)
    start = ctx.state.get("cursor", 0)
    if start + size > len(pool):
        start = 0
    ctx.state["cursor"] = start + size
    if size > len(pool):  # a batch larger than the pool: repeat the pool
        repeats = -(-size // len(pool))
        return pd.concat([pool] * repeats, ignore_index=True).iloc[:size]
    return pool.iloc[start:start + size]


class UploadSweep(Workload):
    name = "upload-sweep"
    title = "Single-user upload, batch-size sweep"
    description = ("One user uploads the same number of rows at each batch size; throughput and "
                   "latency per batch size (into DolphinDB's in-memory table; files and DuckDB "
                   "append to their own tables).")
    reference = "report 002 §1"
    op_name = "upload"
    roles = frozenset()            # any schema: the dataset's own rows
    bounded_by_operations = False
    writes = True
    params = (
        Param("batch_sizes", "Batch sizes", "int_list", [10, 100, 1000, 10000, 100000], 1, 10_000_000,
              "rows", help="One step per batch size (report 002: 10 .. 100,000)."),
        Param("rows_per_step", "Rows per batch size", "int", 100_000, 1, 100_000_000, "rows",
              help="Rows uploaded at each batch size (report 002: 1,000,000)."),
    )

    def steps(self, scenario: Scenario) -> list[StepPlan]:
        params = self.validate(scenario.params)
        return [StepPlan(i, 1, f"batch {size:,} rows", {"batch_rows": size})
                for i, size in enumerate(params["batch_sizes"])]

    def setup(self, ctx: WorkerContext) -> None:
        ctx.state["pool"] = _row_pool(ctx, ctx.params["rows_per_step"])

    def scratch_table(self, params) -> str:
        return UPLOAD_TABLE

    def next_op(self, ctx: WorkerContext, seq: int) -> Operation | None:
        batch = _next_batch(ctx, ctx.params["batch_rows"], ctx.params["rows_per_step"])
        if batch is None:
            return None
        return lambda: ctx.target.append(ctx.layout, batch, table=UPLOAD_TABLE)


class ConcurrentAppend(Workload):
    name = "concurrent-append"
    title = "Concurrent appends"
    description = ("Every user appends its rows in fixed-size batches to one shared table. "
                   "DuckDB allows one writing process per file, so its appends queue up.")
    reference = "report 002 §2, report 003 (write)"
    op_name = "append"
    roles = frozenset()            # any schema: the dataset's own rows
    bounded_by_operations = False
    writes = True
    params = (
        Param("rows_per_user", "Rows per user", "int", 100_000, 1, 10_000_000_000, "rows",
              help="Report 002: 5,000,000 rows per user."),
        Param("batch_rows", "Batch size", "int", 25_000, 1, 10_000_000, "rows",
              help="Report 002: 25,000-row batches; report 003: 200,000."),
    )

    def setup(self, ctx: WorkerContext) -> None:
        ctx.state["pool"] = _row_pool(ctx, ctx.params["rows_per_user"])

    def next_op(self, ctx: WorkerContext, seq: int) -> Operation | None:
        batch = _next_batch(ctx, ctx.params["batch_rows"], ctx.params["rows_per_user"])
        if batch is None:
            return None
        return lambda: ctx.target.append(ctx.layout, batch)
