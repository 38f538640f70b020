"""Report 003's computations as workloads: spread by minute, map-reduce minute quotes, OLS.

Each operation asks the target to compute over a span of consecutive days: DolphinDB on the
server (SQL, ``mr``, ``olsEx``), DuckDB in SQL, files with pandas on the client. With ``days``
set below the layout's day count, each operation takes the next window of that many days (users
start on different windows, as concurrent readers of report 000 did).

Only TAQ-like datasets qualify (bid/ask prices and their sizes): others are refused when the
scenario is checked, before any data is prepared.
"""
from __future__ import annotations

from workloads.run.cold import reading
from workloads.datasets import get_dataset
from workloads.operations.base import Operation, StepPlan, WorkerContext, Workload, checked, counted_as
from workloads.operations.params import Param
from workloads.operations.shares import own_days
from workloads.scenario import Scenario
from workloads.targets import target_class
from workloads.targets.common.quotes import quote_columns
from workloads.targets.common.sizes import rows_bytes
from workloads.text import plural

MINUTE_TABLE = "minute"   # the layout's table of minute quotes (DolphinDB: quotes_minute)


class _Report003(Workload):
    reference = "report 003 (compute)"
    roles = frozenset({"time", "key", "price"})   # bid and ask by key and minute; ``check`` asks TAQ-like quotes
    params = (
        Param("days", "Days per operation", "int", 0, 0, 100_000, "days",
              help="Consecutive trading days each operation covers; 0 = every day of the dataset "
                   "(report 003: a week for the spread, a month for the map-reduce, 3 days for the OLS)."),
    )

    def dataset_refusal(self, info) -> str:
        try:
            quote_columns(info, sizes="quote-size" in self.roles)
        except ValueError as exc:
            return f"{self.name}: {exc}"
        return ""

    def check(self, scenario: Scenario) -> None:
        """Refuse scenarios this computation cannot run, with a message naming why."""
        quote_columns(get_dataset(scenario.dataset).info, sizes="quote-size" in self.roles)
        days = self.validate(scenario.params)["days"]
        if days > scenario.scale.days:
            raise ValueError(f"{self.name}: {plural(days, 'day')} per operation, but the dataset has only "
                             f"{scenario.scale.days} day{'s' if scenario.scale.days != 1 else ''}")
        cls = target_class(scenario.target)
        if not callable(getattr(cls, self.op_name, None)):
            raise ValueError(f"target {scenario.target!r} cannot run {self.name}")

    def steps(self, scenario: Scenario) -> list[StepPlan]:
        self.check(scenario)        # the runner asks for the steps before preparing anything
        return super().steps(scenario)

    def window(self, ctx: WorkerContext, seq: int) -> tuple:
        days = ctx.layout.days
        wanted = ctx.params["days"] or len(days)
        if wanted >= len(days):
            return tuple(days)
        own = own_days(ctx.worker, ctx.step.users, len(days), wanted) if ctx.step.users > 1 else None
        if own is not None and self.writes:
            # a writing computation's users write only their own days' partitions (``shares``)
            start = own.start + (seq % (len(own) // wanted)) * wanted
        elif ctx.scenario.cache == "cold":
            # a cold round's users take disjoint windows (workloads.run.cold) while the days allow it
            windows = len(days) // wanted
            start = ((ctx.worker + seq * ctx.step.users) % windows) * wanted
        else:
            start = (ctx.worker + seq) % (len(days) - wanted + 1)
        return tuple(days[start:start + wanted])

    def next_op(self, ctx: WorkerContext, seq: int) -> Operation:
        days = self.window(ctx, seq)
        method = getattr(ctx.target, self.op_name)
        # Report 003 states throughput as input scanned per second (GB/s), so an operation counts
        # the rows of the days it covers, in DolphinDB's bytes per row; the result's own size
        # (390 minutes, 2 coefficients...) stays in the target's OpResult.extra.
        scanned = round(ctx.layout.rows * len(days) / len(ctx.layout.days))
        operation = reading(days, counted_as(scanned, rows_bytes(scanned, ctx.dataset.info.schema),
                                             lambda: method(ctx.layout, days)))
        users = ctx.step.users
        if self.writes and users > 1 and own_days(ctx.worker, users, len(ctx.layout.days), len(days)) is None:
            # too few days for each user's own: its writes share partitions with the others'
            return checked(lambda result: {"shares_partitions_with": users - 1}, operation)
        return operation


class SpreadByMinute(_Report003):
    name = "spread-by-minute"
    title = "Average spread by minute (SQL filter + group by)"
    description = ("avg((ofr-bid)/(ofr+bid)*2) per minute over the days, regular hours only, "
                   "ofr > bid > 0, ofr/bid < 1.2. Report 003 (a): one week, 1.67 billion rows.")
    reference = "report 003 (a)"
    op_name = "spread_by_minute"


class MapReduceMinuteBars(_Report003):
    name = "mapreduce-minute-bars"
    title = "Map-reduce minute quotes into a table"
    description = ("Average bid and ask per symbol, day and minute, written to the layout's minute "
                   "table; the answer is the number of bars. Report 003 (b): a month, 6.5 billion rows.")
    reference = "report 003 (b)"
    op_name = "mapreduce_minute_bars"
    writes = True

    def scratch_table(self, params) -> str:
        return MINUTE_TABLE


class OlsSpread(_Report003):
    name = "ols-spread"
    title = "OLS of spread on quote size"
    description = ("Regress ofr/bid-1 on (bidsiz+ofrsiz)*(ofr+bid)/2 with an intercept, filters as "
                   "for the spread. Report 003 (c): 3 days, about 1 billion rows.")
    reference = "report 003 (c)"
    op_name = "ols_spread"
    roles = frozenset({"time", "key", "price", "quote-size"})   # the OLS regresses on the quote sizes
