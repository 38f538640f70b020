"""Write workloads: single-user batch-size sweep (002 §1) and concurrent appends (002 §2)."""
from __future__ import annotations

import pandas as pd

from workloads.operations.base import Operation, StepPlan, WorkerContext, Workload, checked
from workloads.operations.params import Param
from workloads.operations.shares import write_share
from workloads.scenario import Scenario

_POOL_ROWS_MAX = 200_000  # rows generated once per worker and reused batch after batch
UPLOAD_TABLE = "upload"   # DolphinDB: its in-memory table; elsewhere a scratch table of that name


def _row_pool(ctx: WorkerContext, rows: int) -> pd.DataFrame:
    """Rows of the scenario's dataset to upload, from this user's own partitions (its day, and its
    keys when users outnumber days: ``shares``); generated before the barrier (untimed)."""
    wanted = min(rows, _POOL_ROWS_MAX)
    days = len(ctx.layout.days) if ctx.layout is not None else ctx.scenario.scale.days
    groups = ctx.target.key_groups(ctx.layout) if ctx.layout is not None else []
    share = ctx.state["share"] = write_share(ctx.worker, ctx.step.users, days, groups)
    key = ctx.dataset.info.key_column
    chunks, have = [], 0
    for chunk in ctx.dataset.generate_day(share.day_index, ctx.scenario.scale, ctx.scenario.string_mode,
                                           chunk_rows=wanted):
        if share.keys is not None:
            chunk = chunk[chunk[key].isin(list(share.keys))]
        chunks.append(chunk)
        have += len(chunk)
        if have >= wanted:
            break
    if not have:
        raise ValueError(f"user {ctx.worker}'s own partitions (day {share.day_index + 1}, "
                         f"{len(share.keys or ())} keys) hold no rows to write")
    pool = pd.concat(chunks, ignore_index=True) if len(chunks) > 1 else chunks[0]
    return pool.iloc[:wanted].reset_index(drop=True)


def _shared(ctx: WorkerContext, operation: Operation) -> Operation:
    """Record, after the timed span, that this user writes partitions others write too (a day with
    more users than key partitions): its figures may include waits on their locks."""
    others = ctx.state["share"].shared_with
    return checked(lambda result: {"shares_partitions_with": others}, operation) if others else operation


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
    description = ("Every user appends its rows in fixed-size batches to one shared table, each user "
                   "its own partitions (its own day, or its own keys of a day when users outnumber "
                   "days). DuckDB allows one writing process per file, so its appends queue up.")
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
        return _shared(ctx, lambda: ctx.target.append(ctx.layout, batch))
