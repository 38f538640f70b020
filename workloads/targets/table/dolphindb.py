"""An existing DolphinDB DFS table (``dfs://db/table``) read in place, as its users read one:
``session.run(query)`` into a DataFrame, with the DolphinDB target's own scripts
(``workloads.targets.dolphindb.scripts``: the day read, the key-day slice, the minute bars), so a
table read in place and a Tickbench layout are read by the same texts.

Its schema is the table's own (``schema(t).colDefs``: SYMBOL stays SYMBOL, a TIMESTAMP stays
milliseconds). Days: ``exec min(t)`` from the next day on, and rows ``exec count(*)``, asked in
windows of days that each stay under DolphinDB's per-query partition limit (S02039: 65,536 by
default), sized from the table's scheme (``schema(t).partitionType``, ``partitionSchema``) when its
first partitioning column is the time column; keys: ``select top n key`` of the most recent day;
bytes ``getTabletsMeta``'s ``diskUsage``. A DATE column with a SECOND/TIME/NANOTIME column
(DolphinDB's TAQ shape) is the scripts' own date and time: days ``exec min(date)``, bars by
``minute(time)``.
Only ``select``/``exec`` scripts are sent; nothing is created, shared or written on the server.
A cold read empties the server's caches as for a Tickbench layout (``cold_cache``): a TSDB
database's cache engine flushed (``flushTSDBCache``), the OLAP one's, then ``clearAllCache``.
"""
from __future__ import annotations

import datetime as dt

import pandas as pd
import pyarrow as pa

from workloads.datasets.roles import arrow_type_of
from workloads.datasets.schema import Column, Schema
from workloads.targets.base import Footprint, TargetError
from workloads.targets.dolphindb import quote as q
from workloads.targets.dolphindb import scripts
from workloads.targets.dolphindb.cluster import ClusterProfile, _server_text, open_session
from workloads.targets.dolphindb.cold_cache import clear_engine_caches, clear_plan
from workloads.targets.dolphindb.partition_limit import RANGE, VALUE, day_windows, level_size, levels
from workloads.targets.table.sources import Source, Span

DFS = "dfs://"
TIME_TYPES = ("TIMESTAMP", "NANOTIMESTAMP")
TIME_OF_DAY_TYPES = ("SECOND", "TIME", "NANOTIME")     # beside a DATE column: DolphinDB's TAQ shape
MONTH_DAYS = 31          # past the time level's last value: a scheme of months names each month's first day


def split_dfs_table(table: str, database: str = "") -> tuple[str, str]:
    """(``dfs://db``, ``table``) of ``dfs://db/table``, or of ``table`` in ``database``."""
    if table.startswith(DFS):
        path, _, name = table.rpartition("/")
        return path, name
    return database, table


class DolphinDBSource(Source):
    read_phase = "query"

    def __init__(self, saved, config):
        super().__init__(saved, config)
        self.db, self.table = split_dfs_table(saved.table, str(config.get("database") or ""))
        if not self.db.startswith(DFS) or not self.table:
            raise self.error("name the table as dfs://DATABASE/TABLE")
        host, port = str(config.get("host") or "127.0.0.1"), config.get("port") or 8848
        self.address = f"{host}:{port}"
        self.hosts: tuple[str, ...] = ()      # the data nodes' hosts, as the last clear's plan found them
        profile = ClusterProfile.single(host, int(port), str(config.get("user") or "admin"),
                                        str(config.get("password") or ""))
        try:
            self.session = open_session(profile, profile.data_nodes[0], timeout=float(config.get("timeout") or 3600),
                                        net_timeout=10.0, metadata=True)
        except ConnectionError as exc:
            raise TargetError(f"DolphinDB at {self.address}: {' '.join(str(exc).split())[:300]}") from None
        try:
            if not self.run(f"existsTable({q.string(self.db)}, {q.string(self.table)})"):
                raise self.error("no such table")
        except TargetError:
            self.close()
            raise

    def run(self, script: str):
        try:
            return self.session.run(script)
        except RuntimeError as exc:
            raise self.error(" ".join(_server_text(exc).split())[:300]) from None

    # --- what the table is ------------------------------------------------------------------------
    def _load(self) -> str:
        return f"loadTable({q.string(self.db)}, {q.string(self.table)})"

    def _col_defs(self) -> list[tuple[str, str]]:
        if not hasattr(self, "_defs"):
            found = self.run(f"schema({self._load()}).colDefs")
            self._defs = list(zip(found["name"].astype(str), found["typeString"].astype(str)))
        return self._defs

    def schema(self) -> Schema:
        return Schema(tuple(Column(n, t) for n, t in self._col_defs()))

    def arrow_schema(self) -> pa.Schema:
        try:
            return pa.schema([(n, arrow_type_of(t)) for n, t in self._col_defs()])
        except ValueError as exc:
            raise self.error(str(exc)) from None

    def time_zoned(self) -> bool:
        return False                   # DolphinDB's times carry no zone

    def _names_and_columns(self):
        roles, schema = self.saved.roles, self.saved.schema
        date_type = schema.column(roles.time).ddb_type
        time = roles.time_of_day or roles.time        # a date column's bars go by its time of day
        time_type = schema.column(time).ddb_type
        price = roles.price or ("",)
        try:
            names = scripts.Names(self.db, self.table, self.table, self.table)
            columns = scripts.Columns(tuple(schema.names), tuple(c.ddb_type for c in schema.columns),
                                           roles.time, date_type, roles.key, time, time_type,
                                           price[0], price[-1], roles.size)
        except ValueError as exc:
            raise self.error(str(exc)) from None
        return names, columns

    def _instant(self, value: dt.datetime) -> str:
        """The first instant of ``value``'s day, in the time column's own precision."""
        bounds = q.nanotimestamp_bounds if self._time_type() == "NANOTIMESTAMP" else q.timestamp_bounds
        return bounds(value.date())[0]

    def _time_type(self) -> str:
        return dict(self._col_defs()).get(self.saved.roles.time, "")

    def _check_dated(self) -> None:
        roles, types = self.saved.roles, dict(self._col_defs())
        if types.get(roles.time) != "DATE" or types.get(roles.time_of_day) not in TIME_OF_DAY_TYPES:
            raise self.error(f"columns {roles.time!r} and {roles.time_of_day!r} are "
                             f"{types.get(roles.time, 'missing')} and {types.get(roles.time_of_day, 'missing')}: "
                             "a date and a time of day need a DATE column and a SECOND, TIME or NANOTIME column")

    def first_time(self, at_or_after):
        """The first date (a DATE with a time of day) or instant at or after ``at_or_after``'s day,
        asked window by window of days under the partition limit when the table's first
        partitioning level is its time column; in one query over the table otherwise."""
        t = self.saved.roles.time
        if self.dated:
            self._check_dated()
        elif self._time_type() not in TIME_TYPES:
            raise self.error(f"column {t!r} is {self._time_type() or 'missing'}: the time role needs a "
                             "TIMESTAMP or NANOTIMESTAMP column")
        convert = (lambda v: pd.Timestamp(v).date()) if self.dated else pd.Timestamp
        for where in self._windows(None if at_or_after is None else self._day(at_or_after)):
            found = self.run(f"exec min({t}) from {self._load()}{where}")
            if found is not None and not pd.isna(found):
                return convert(found)
        return None

    @staticmethod
    def _day(value) -> dt.date:
        return value.date() if isinstance(value, dt.datetime) else value

    def _windows(self, start: dt.date | None) -> list[str]:
        """``where`` clauses of day windows from ``start`` (None: the scheme's first day) over the
        time level's domain, each under DolphinDB's per-query partition limit (S02039); one clause
        (all of the table from ``start``) when the time column is not the first partitioning
        column, as nothing then prunes by day."""
        shape = self._time_level()
        if shape is None:
            if start is None:
                return [""]
            return [f" where {self.saved.roles.time} >= "
                    f"{q.date(start) if self.dated else self._instant(dt.datetime.combine(start, dt.time()))}"]
        first, last, per_day = shape
        _, columns = self._names_and_columns()
        return [f" where {scripts.days_filter(columns, a, b)}"
                for a, b in day_windows(max(first, start or first), last, per_day)]

    def _time_level(self) -> tuple[dt.date, dt.date, int] | None:
        """(first day, last day, partitions per day) of the scheme when its first level partitions
        the time column: the first level's values or boundaries (a month's last day allowed for),
        and the other levels' partitions multiplied."""
        if not hasattr(self, "_shape"):
            load = self._load()
            self._shape = None
            try:
                names = self.run(f"schema({load}).partitionColumnName")
                found = levels(self.run(f"schema({load}).partitionType"), self.run(f"schema({load}).partitionSchema"))
            except TargetError:          # no scheme to read (a dimension table is one partition)
                return None
            names = [names] if isinstance(names, str) else [str(n) for n in names]
            kind, scheme = found[0]
            if names and names[0] == self.saved.roles.time and kind in (VALUE, RANGE) and len(scheme):
                try:
                    values = pd.to_datetime(pd.Series(scheme))
                except (TypeError, ValueError):      # not days (a scheme of numbers): nothing to window by
                    return None
                per_day = 1
                for kind, scheme in found[1:]:
                    per_day *= level_size(kind, scheme)
                self._shape = (values.min().date(), values.max().date() + dt.timedelta(days=MONTH_DAYS), per_day)
        return self._shape

    def key_sample(self, span: Span, limit: int) -> list:
        names, columns = self._names_and_columns()
        key = self.saved.roles.key
        found = self.run(f"select top {int(limit)} {key} from {self._load()} "
                         f"where {scripts.day_filter(columns, span.start.date())}")
        return found[key].tolist()

    def rows(self) -> int:
        return sum(int(self.run(f"exec count(*) from {self._load()}{where}") or 0) for where in self._windows(None))

    def footprint(self) -> Footprint:
        names, _ = self._names_and_columns()
        return Footprint(int(self.run(scripts.footprint(names)) or 0),
                         method="getTabletsMeta diskUsage of the database's chunks (replicas included)")

    # --- the measured calls: the user's session.run into a DataFrame -----------------------------------
    def _frame(self, body: list[str]) -> pd.DataFrame:
        return self.query(scripts.plain(body))

    def select(self, span: Span, columns: tuple[str, ...], key=None) -> pd.DataFrame:
        names, cols = self._names_and_columns()
        day = span.start.date()
        if key is not None:
            return self._frame(scripts.select_slice(names, cols, day, str(key)))
        wanted = None if tuple(columns) == tuple(self.saved.schema.names) else tuple(columns)
        return self._frame(scripts.select_day(names, cols, day, wanted))

    def bars(self, span: Span, key) -> pd.DataFrame:
        names, cols = self._names_and_columns()
        return self._frame(scripts.minute_bars(names, cols, span.start.date(), str(key)))

    def suite_text(self, text: str, dataset: str) -> str:
        """The dataset's braces (``{tbl_x}``, as ``user_suites`` fills DolphinDB's texts) as the table."""
        return text.replace("{" + dataset + "}", self._load())

    def query(self, text: str) -> pd.DataFrame:
        found = self.run(text)
        if not isinstance(found, pd.DataFrame):
            raise self.error(f"expected a table from the server, got {type(found).__name__}")
        return found

    # --- a cold read: the server's caches emptied as for a Tickbench layout (cold_cache) ------------
    def drop_cache(self) -> list[str]:
        """Every DolphinDB cache that could hold the table, on the nodes getClusterPerf reports
        online (a single node: its own), a TSDB database's cache engine flushed first; the methods
        applied, or [] when a clear failed (no operation is then called cold)."""
        try:
            try:
                perf = self.session.run(scripts.cluster_perf())
            except RuntimeError:             # a single node has no controller to ask
                clear, compute, self.hosts = None, [], (self.address.rpartition(":")[0],)
            else:
                clear, compute, self.hosts = clear_plan(perf)
            return clear_engine_caches(self.run, clear, compute, self.db, self._engine())
        except TargetError:
            return []

    def _engine(self) -> str:
        if not hasattr(self, "_engine_type"):
            self._engine_type = str(self.run(f"schema({self._load()}).engineType"))
        return self._engine_type

    def close(self) -> None:
        self.session.close()
