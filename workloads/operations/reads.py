"""Read workloads: a whole day (report 000), slices (002 §5, 003 §4), minute bars (002 §6).

One meaning per operation, for every engine (README, "One meaning per operation"): a day read and
a slice return every row of the day (of the key-day) with the dataset's columns only, in no
promised order: each engine hands them over the way its users read them, unsorted, which is its
stored order where it reads sequentially. Minute bars are ordered by minute: that order is part of
the answer, so every engine pays for it.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from workloads.run.cold import reading
from workloads.operations.base import Operation, WorkerContext, Workload
from workloads.operations.params import Param
from workloads.scenario import Scenario
from workloads.targets.base import Layout
from workloads.targets.common.columns import ALL, WITHOUT_STRINGS, normalise_spec, resolve_columns


def _pick_day_key(ctx: WorkerContext, seq: int):
    """A random (day, key); in a cold step of several users, the day is planned instead, so the
    users of a round read different days (``workloads.run.cold``) while there are enough of them."""
    days = ctx.layout.days
    keys = ctx.layout.keys_sample
    day, key = days[int(ctx.rng.integers(len(days)))], keys[int(ctx.rng.integers(len(keys)))]
    if ctx.scenario.cache == "cold" and ctx.step.users > 1:
        day = days[(ctx.worker + seq * ctx.step.users) % len(days)]
    return day, key


@dataclass(frozen=True)
class ColumnsParam(Param):
    """A choice of "all" or "without strings" that also takes a comma-separated list of column
    names (from a scenario file or ``--param columns=bid,ofr``). Its kind stays "choice", so a
    parameter form offers the two named choices; a list is checked here for its syntax only, and
    against the dataset's schema by ``ReadDay.prepare_run`` before any worker starts."""

    def coerce(self, value: Any) -> str:
        return normalise_spec(value)


def _dataset_columns(scenario: Scenario, layout: Layout | None) -> tuple[str, ...] | None:
    from workloads.datasets import get_dataset
    name = layout.dataset if layout is not None else scenario.dataset
    return resolve_columns(scenario.params.get("columns", ALL), get_dataset(name).info.schema, name)


class ReadDay(Workload):
    name = "read-day"
    title = "Read one trading day"
    description = ("Load a whole day into a pandas DataFrame with the call a user makes, every column or "
                   "only some (report 000 also read it without the two string columns), in no promised "
                   "order: no engine is made to sort. Phases where "
                   "that call has parts (Parquet, Feather: read + decode; DuckDB: query + decode); "
                   "probe operations after the measured ones split pickle (io + decode) and "
                   "DolphinDB (server + transfer + decode).")
    reference = "report 000"
    op_name = "read_day"
    roles = frozenset({"time"})
    params = (
        ColumnsParam("columns", "Columns", "choice", ALL, choices=(ALL, WITHOUT_STRINGS),
                     help="Which columns to read: all; without strings (the dataset's SYMBOL/STRING "
                          "columns left out: TAQ symbol and mmid, level 2 Market and SecurityID, as "
                          "report 000); or column names separated by commas (e.g. time,bid,ofr). Bytes "
                          "count only the columns read. Pickle cannot read part of a file: a second "
                          "pickle per day holding only those columns is written once before the run."),
    )

    def prepare_run(self, scenario: Scenario, layout: Layout | None, run_dir: Path) -> dict[str, Any]:
        """The columns checked against the dataset (ValueError naming the unknown ones) before any
        worker starts, and whatever the target needs to read only them (pickle: a file per day)."""
        columns = _dataset_columns(scenario, layout)
        if columns is not None and layout is not None:
            from workloads.targets import make_target
            make_target(scenario.target, scenario.target_config).prepare_columns(layout, columns)
        return {}

    def setup(self, ctx: WorkerContext) -> None:
        name = ctx.layout.dataset if ctx.layout is not None else ctx.scenario.dataset
        ctx.state["columns"] = resolve_columns(ctx.params["columns"], ctx.dataset.info.schema, name)

    def next_op(self, ctx: WorkerContext, seq: int) -> Operation:
        # Concurrent readers start on different days, as report 000's three readers did (and so the
        # users of a cold round read different days while there are as many days as users).
        days = ctx.layout.days
        day = days[(ctx.worker + seq) % len(days)]
        columns = ctx.state.get("columns")
        if columns is None:
            return reading((day,), lambda: ctx.target.read_day(ctx.layout, day))
        return reading((day,), lambda: ctx.target.read_day(ctx.layout, day, columns))


class SliceDownload(Workload):
    name = "slice-download"
    title = "Download random (day, symbol) slices"
    description = ("Each user fetches random key-day slices until it has its share of rows; a slice's "
                   "rows come in no promised order, as a day's.")
    reference = "report 002 §3 (download), report 003 (read)"
    op_name = "read_slice"
    roles = frozenset({"time", "key"})
    bounded_by_operations = False
    params = (
        Param("rows_per_user", "Rows per user", "int", 200_000, 1, 10_000_000_000, "rows",
              help="Each user stops once it has downloaded this many rows (report 002: 5,000,000)."),
    )

    def next_op(self, ctx: WorkerContext, seq: int) -> Operation | None:
        if ctx.rows_done >= ctx.params["rows_per_user"]:
            return None
        day, key = _pick_day_key(ctx, seq)
        return reading((day,), lambda: ctx.target.read_slice(ctx.layout, day, key))


class MinuteBars(Workload):
    name = "minute-bars"
    title = "Minute bars of one key-day"
    description = ("Each user asks for one key-day's one-minute OHLC bars of the price (of the bid/ask mid "
                   "for quotes), with the size's sum as volume when the dataset names a size, ordered by "
                   "minute (every engine sorts them): computed by the server where there is one, by "
                   "pandas on the client for files.")
    reference = "report 002 §4 (K-line)"
    op_name = "minute_bars"
    roles = frozenset({"time", "key", "price"})   # a size adds volume when named

    def next_op(self, ctx: WorkerContext, seq: int) -> Operation:
        day, key = _pick_day_key(ctx, seq)
        return reading((day,), lambda: ctx.target.minute_bars(ctx.layout, day, key))
