"""Read workloads: a whole day (report 000), slices (002 §5, 003 §4), minute bars (002 §6)."""
from __future__ import annotations

from workloads.kinds.base import Operation, WorkerContext, Workload
from workloads.params import Param


def _pick_day_key(ctx: WorkerContext):
    days = ctx.layout.days
    keys = ctx.layout.keys_sample
    return days[int(ctx.rng.integers(len(days)))], keys[int(ctx.rng.integers(len(keys)))]


class ReadDay(Workload):
    name = "read-day"
    title = "Read one trading day"
    description = ("Load a whole day into a pandas DataFrame with the call a user makes. Phases where "
                   "that call has parts (Parquet, Feather: read + decode; DuckDB: query + decode); "
                   "probe operations after the measured ones split pickle (io + decode) and "
                   "DolphinDB (server + transfer + decode).")
    reference = "report 000"
    op_name = "read_day"

    def next_op(self, ctx: WorkerContext, seq: int) -> Operation:
        # Concurrent readers start on different days, as report 000's three readers did.
        days = ctx.layout.days
        day = days[(ctx.worker + seq) % len(days)]
        return lambda: ctx.target.read_day(ctx.layout, day)


class SliceDownload(Workload):
    name = "slice-download"
    title = "Download random (day, symbol) slices"
    description = "Each user fetches random key-day slices until it has its share of rows."
    reference = "report 002 §3 (download), report 003 (read)"
    op_name = "read_slice"
    bounded_by_operations = False
    params = (
        Param("rows_per_user", "Rows per user", "int", 200_000, 1, 10_000_000_000, "rows",
              help="Each user stops once it has downloaded this many rows (report 002: 5,000,000)."),
    )

    def next_op(self, ctx: WorkerContext, seq: int) -> Operation | None:
        if ctx.rows_done >= ctx.params["rows_per_user"]:
            return None
        day, key = _pick_day_key(ctx)
        return lambda: ctx.target.read_slice(ctx.layout, day, key)


class MinuteBars(Workload):
    name = "minute-bars"
    title = "Minute bars of one key-day"
    description = ("Each user asks for one symbol-day's one-minute OHLC bars: computed by the "
                   "server where there is one, by pandas on the client for files.")
    reference = "report 002 §4 (K-line)"
    op_name = "minute_bars"

    def next_op(self, ctx: WorkerContext, seq: int) -> Operation:
        day, key = _pick_day_key(ctx)
        return lambda: ctx.target.minute_bars(ctx.layout, day, key)
