"""The tick pack as workloads: each query of the suite ``tick`` (``resources/queries/tick.toml``) asked
again and again, by 1 to N users, like the reads.

On the ``taq`` dataset, or on a desk's own quotes and trades paired (``workloads.datasets.tick_pair``),
which read as TAQ does. One workload per question (``asof-join``, ``vwap``, ``snapshot``, ``year-high-bid``, ``rolling-mid``),
each with the parameters a desk changes. The text each engine runs is the suite's, in its own idiom,
so ``tickbench verify --suite tick`` checks the very answers these workloads time. Concurrent users
start on different days, as the day reads do; an operation that reads one day is marked with it, so
a cold round evicts and never shares it. An engine that cannot express the question is refused
before the run starts, with the suite's reason.
"""
from __future__ import annotations

import datetime as dt
from typing import Any

from workloads.operations.base import Operation, WorkerContext, Workload, checked_again, named
from workloads.operations.params import Param
from workloads.operations.queries import answer_facts
from workloads.queries import load_suite
from workloads.queries.suites import Query, draw_values
from workloads.queries.user_suites import TICK_SUITE
from workloads.run.cold import reading
from workloads.scenario import Scenario

SUITE = TICK_SUITE
DATASET = "taq"
_SNAPSHOT_TIMES = tuple(f"{h:02d}:{m:02d}:00" for h in range(9, 16) for m in (0, 30) if (h, m) >= (9, 30)) + \
    ("15:59:59",)


class TickQuery(Workload):
    """One query of the tick pack; subclasses name it and map their parameters onto its values."""

    query_id = ""
    reference = "the tick pack (no published figures)"
    roles = frozenset({"time", "key", "price"})

    def query(self) -> Query:
        return load_suite(SUITE).query(self.query_id)

    def dataset_refusal(self, info) -> str:
        if info.name == DATASET or info.extra.get("tick_pack"):
            return ""
        return (f"{self.name} asks quotes with their trades: the {DATASET} dataset, or your trades paired with "
                f"your quotes (tickbench import TRADES --name NAME --trades-of QUOTES ...), not {info.name}")

    def check(self, scenario: Scenario) -> None:
        """Before anything starts: the dataset with trades, and an engine that can ask the question."""
        from workloads.datasets import get_dataset            # the registry, imported on use
        refusal = self.dataset_refusal(get_dataset(scenario.dataset).info)
        if refusal:
            raise ValueError(refusal)
        from workloads.targets import make_target            # the registry, imported on use
        from workloads.targets.engines import engine
        target = make_target(scenario.target, scenario.target_config)
        query = self.query()
        if not target.supports(query):
            raise ValueError(query.missing(target.query_dialect, engine(scenario.target).label))

    def steps(self, scenario: Scenario):
        self.check(scenario)        # the runner asks for the steps before preparing anything
        return super().steps(scenario)

    def values(self, params: dict[str, Any], values: dict[str, Any], keys: tuple[str, ...]) -> dict[str, Any]:
        """The query's values with this workload's parameters in them."""
        return values

    def next_op(self, ctx: WorkerContext, seq: int) -> Operation:
        query = ctx.state.get("query")
        if query is None:
            query = ctx.state["query"] = self.query()
        layout = ctx.layout
        values = self.values(ctx.params, draw_values(query, layout.days, layout.keys_sample), layout.keys_sample)
        days = layout.days
        if "day" in values:                      # users start on different days, then go round them
            values["day"] = days[(ctx.worker + seq) % len(days)]
        reads = (values["day"],) if "day" in values else tuple(days)
        op = named(query.id, lambda: ctx.target.run_query(layout, query, values))
        if not ctx.state.get("fingerprinted"):
            # the user's first answer (a warm-up's in a warm step) is fingerprinted once: working it
            # out (~0.9 s for 60 k joined rows) slowed the operation after it by 10-50 %, and the
            # rest of the step ~2 %, so the worker asks a warm-up's question again after the step's
            # measured operations and fingerprints that answer (``checked_again``)
            ctx.state["fingerprinted"] = True
            op = checked_again(answer_facts(query), op)
        return reading(reads, op)


class AsofJoin(TickQuery):
    name = "asof-join"
    query_id = op_name = "asof-join"
    title = "As-of join: trades with their prevailing quote"
    description = ("Each trade of a day with the quote prevailing at its time (its symbol's last quote at or "
                   "before it): ASOF JOIN in DuckDB, ClickHouse and QuestDB, aj in DolphinDB, a LATERAL join "
                   "in PostgreSQL, merge_asof over the files. Each operation one day, users on different days.")


class Vwap(TickQuery):
    name = "vwap"
    query_id = op_name = "vwap"
    title = "VWAP and volume per symbol over intervals"
    description = "Volume-weighted average price, volume and trade count per symbol in each bucket of a day."
    params = (
        Param("minutes", "Bucket", "int", 5, 1, 390, "min",
              help="The width of the buckets, in minutes (5: the 78 five-minute buckets of a session)."),
    )

    def values(self, params, values, keys):
        return {**values, "minutes": params["minutes"]}


class Snapshot(TickQuery):
    name = "snapshot"
    query_id = op_name = "snapshot"
    title = "Market snapshot at a time"
    description = "The last quote of every symbol at a given time of a day (last by arrival where times tie)."
    params = (
        Param("at", "At", "choice", "12:00:00", choices=_SNAPSHOT_TIMES,
              help="The time of day of the snapshot: every symbol's last quote at or before it."),
    )

    def values(self, params, values, keys):
        return {**values, "at": dt.time.fromisoformat(params["at"])}


class YearHighBid(TickQuery):
    name = "year-high-bid"
    query_id = op_name = "year-high-bid"
    title = "Highest bid over the days"
    description = "The highest bid of each symbol over every day of the layout (a scan of them all)."


class RollingMid(TickQuery):
    name = "rolling-mid"
    query_id = op_name = "rolling-mid"
    title = "Rolling mid: a moving average per symbol"
    description = ("The moving average of the mid over a window (1 minute) at each second the most active "
                   "symbols quoted: window functions where the engine has them.")
    params = (
        Param("seconds", "Window", "int", 60, 1, 23_400, "s", help="The window: the quotes of the last N seconds."),
        Param("symbols", "Symbols", "int", 5, 1, 1000, "symbols", help="How many of the most active symbols."),
    )

    def values(self, params, values, keys):
        if params["symbols"] > len(keys):
            raise ValueError(f"rolling-mid: {params['symbols']} symbols asked, the layout has {len(keys)}")
        return {**values, "seconds": params["seconds"], "symbols": [str(k) for k in keys[:params["symbols"]]]}


TICK_WORKLOADS = (AsofJoin(), Vwap(), Snapshot(), YearHighBid(), RollingMid())
