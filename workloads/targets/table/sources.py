"""What every kind of existing table answers, and how its days and keys are found without a full scan.

A ``Source`` reads one table where it lives, read-only: its Arrow schema, a time range of rows (all
columns or some, optionally of one key) with the engine's own client, one key-day's minute bars
where the engine computes, and cheap facts (rows and bytes as the engine's metadata tells them).

A time role that is a date column and a time-of-day column (``Roles.time_of_day``) is read the same
way: a day is the rows whose date is the day (``Span.day``), its days the first date at or after a day,
and its bars bucket the date plus the time of day (``instants``) to the minute.

Days and keys by bounded questions (``find_days``, ``sample_keys``): the first time at or after an
instant (``first_time``: an index or partition lookup on every engine that keeps one, DuckDB's zone
maps, Parquet's row-group statistics), asked once per day found, so listing N days costs N lookups and
never a scan of every row; keys from a LIMITed sample of the most recent day.
"""
from __future__ import annotations

import datetime as dt
from collections import Counter
from dataclasses import dataclass

import pyarrow as pa

from workloads.datasets.roles import schema_of
from workloads.datasets.schema import Schema
from workloads.datasets.tables import SavedTable
from workloads.targets.base import Footprint, TargetError

MAX_DAYS = 3660                    # ten years of days: a bound on the lookups, never reached by a day table
KEY_SAMPLE_ROWS = 100_000          # rows of the most recent day that name the keys a slice picks from
KEYS_KEPT = 200


@dataclass(frozen=True)
class Span:
    """A half-open time range [start, end) of one day, in UTC (naive for a column without a zone);
    ``day`` is that day, what a date column is compared with."""

    start: dt.datetime
    end: dt.datetime
    day: dt.date | None = None

    @classmethod
    def of_day(cls, day: dt.date, zoned: bool) -> "Span":
        start = dt.datetime.combine(day, dt.time(), tzinfo=dt.timezone.utc if zoned else None)
        return cls(start, start + dt.timedelta(days=1), day)


def instants(dates: pa.ChunkedArray, times_of_day: pa.ChunkedArray) -> pa.ChunkedArray:
    """A date column plus its time-of-day column as naive timestamps (microseconds)."""
    import pyarrow.compute as pc
    midnight = pc.cast(pc.cast(dates, pa.timestamp("us")), pa.int64())
    since = pc.cast(pc.cast(times_of_day, pa.time64("us")), pa.int64())
    return pc.cast(pc.add(midnight, since), pa.timestamp("us"))


def day_of(value) -> dt.date:
    """The UTC day of a time an engine returned (datetime, pandas Timestamp, date)."""
    if isinstance(value, dt.datetime):
        if value.tzinfo is not None:
            value = value.astimezone(dt.timezone.utc)
        return value.date()
    if isinstance(value, dt.date):
        return value
    return day_of(value.to_pydatetime())        # pandas Timestamp, numpy datetime64 via pandas


class Source:
    """One existing table, read-only (module doc); subclasses per kind."""

    read_phase = "query"           # the phase of the call into Arrow: "read" for files, "query" for engines

    def __init__(self, saved: SavedTable, config: dict):
        self.saved = saved
        self.config = config

    @property
    def where(self) -> str:
        return self.saved.where

    def error(self, problem: str) -> TargetError:
        return TargetError(f"{self.where}: {problem}")

    # --- what the table is ------------------------------------------------------------------------
    def arrow_schema(self) -> pa.Schema:
        raise NotImplementedError

    def schema(self) -> Schema:
        """Tickbench's types of the table's columns (from its Arrow schema unless the engine tells them)."""
        try:
            return schema_of(self.arrow_schema())
        except ValueError as exc:
            raise self.error(str(exc)) from None

    @property
    def dated(self) -> bool:
        """Whether the time role is a date column with a time-of-day column (not one timestamp)."""
        return bool(self.saved.roles.time_of_day)

    def time_zoned(self) -> bool:
        """Whether the time column holds instants with a zone (compared in UTC) or plain times."""
        field = self.arrow_schema().field(self.saved.roles.time)
        return pa.types.is_timestamp(field.type) and field.type.tz is not None

    def first_time(self, at_or_after: dt.datetime | None):
        """The earliest time at or after ``at_or_after`` (None: of the table), None when none; with a
        date and a time of day, the earliest date at or after the date ``at_or_after``."""
        raise NotImplementedError

    def key_sample(self, span: Span, limit: int) -> list:
        """Keys of at most ``limit`` rows of ``span``."""
        raise NotImplementedError

    def rows(self) -> int:
        """Rows as the engine's metadata tells them (an estimate where that is what it keeps)."""
        return 0

    def footprint(self) -> Footprint:
        return Footprint(0, method="not told by this engine")

    # --- the measured calls -----------------------------------------------------------------------
    def select(self, span: Span, columns: tuple[str, ...], key=None) -> pa.Table:
        """The rows of ``span`` (of ``key`` when given), ``columns`` only: the engine's own client call
        (into Arrow, or a DataFrame where that is what the client gives its users)."""
        raise NotImplementedError

    def bars(self, span: Span, key) -> pa.Table:
        """One key-day's one-minute bars: minute, open, high, low, close (+ volume with a size role)."""
        raise NotImplementedError

    def suite_text(self, text: str, dataset: str) -> str:
        """A user's suite text (``workloads.queries.user_suites``) with its table placeholder as this table."""
        raise NotImplementedError

    def query(self, text: str):
        """A user's suite text run by the engine's own client, into Arrow (or the client's DataFrame)."""
        raise NotImplementedError

    def close(self) -> None:
        pass

    # --- days and keys, bounded -----------------------------------------------------------------------
    def find_days(self) -> list[dt.date]:
        zoned = self.time_zoned()
        first = self.first_time(None)
        if first is None:
            raise self.error("the table has no rows (nothing to benchmark)")
        days: list[dt.date] = []
        while first is not None and len(days) < MAX_DAYS:
            day = day_of(first)
            days.append(day)
            first = self.first_time(day + dt.timedelta(days=1) if self.dated else Span.of_day(day, zoned).end)
        return days

    def sample_keys(self, day: dt.date) -> list[str]:
        """The keys of the most recent day's first rows, most frequent first (as text)."""
        if not self.saved.roles.key:
            return []
        counts = Counter(str(k) for k in self.key_sample(Span.of_day(day, self.time_zoned()), KEY_SAMPLE_ROWS)
                         if k is not None)
        return [k for k, _ in counts.most_common(KEYS_KEPT)]
