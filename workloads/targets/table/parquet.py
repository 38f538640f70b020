"""A Parquet file or folder (one file per day, or hive-partitioned ``date=.../``) read in place with
``pyarrow.dataset``: a day is ``dataset.to_table(columns=..., filter=<the day>)``, whose filter skips
every row group whose statistics rule the day out. Days come from those statistics (the files' footers:
no row is read), keys from the first rows of the most recent day."""
from __future__ import annotations

import datetime as dt
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.dataset as ds

from workloads.targets.base import Footprint
from workloads.targets.common.bars import minute_bars
from workloads.targets.table.sources import MAX_DAYS, Source, Span, day_of, instants


class ParquetSource(Source):
    read_phase = "read"

    def __init__(self, saved, config):
        super().__init__(saved, config)
        path = Path(saved.location).expanduser()
        if not path.exists():
            raise self.error("no such file or folder")
        try:
            self.dataset = ds.dataset(path, format="parquet", partitioning="hive")
            self.files = [Path(f) for f in self.dataset.files]
            if not self.files:
                raise self.error("no Parquet file in the folder")
            self._schema = self.dataset.schema
        except (pa.ArrowInvalid, OSError) as exc:
            raise self.error(f"not readable as Parquet ({' '.join(str(exc).split())[:200]})") from None

    def arrow_schema(self) -> pa.Schema:
        return self._schema

    def _in(self, span: Span) -> ds.Expression:
        field = self._schema.field(self.saved.roles.time)
        time = ds.field(field.name)
        if self.dated:                 # a date column: the day's rows are its date's
            return time == pa.scalar(span.day, type=field.type)
        return (time >= pa.scalar(span.start, type=field.type)) & (time < pa.scalar(span.end, type=field.type))

    def _row_group_spans(self) -> list[tuple]:
        """(min, max) of the time column in every row group, from the footers' statistics."""
        spans = []
        name = self.saved.roles.time
        for fragment in self.dataset.get_fragments():
            metadata = fragment.metadata
            index = metadata.schema.to_arrow_schema().get_field_index(name)
            if index < 0:              # the time is a hive partition field: its value names the day
                return []
            for i in range(metadata.num_row_groups):
                stats = metadata.row_group(i).column(index).statistics
                if stats is None or not stats.has_min_max:
                    return []
                spans.append((stats.min, stats.max))
        return spans

    def find_days(self) -> list[dt.date]:
        spans = self._row_group_spans()
        if not spans:                  # no statistics to go by: the lookups of every source
            return super().find_days()
        if not self.rows():
            raise self.error("the table has no rows (nothing to benchmark)")
        days: set[dt.date] = set()
        zoned = self.time_zoned()
        for low, high in spans:
            first, last = day_of(low), day_of(high)
            if first == last:
                days.add(first)
                continue
            day = first                 # a row group across days: ask each day it spans for one row
            while day <= last and len(days) < MAX_DAYS:
                if day not in days and self.dataset.scanner(columns=[self.saved.roles.time],
                                                             filter=self._in(Span.of_day(day, zoned))).head(1).num_rows:
                    days.add(day)
                day += dt.timedelta(days=1)
        return sorted(days)[:MAX_DAYS]

    def first_time(self, at_or_after):
        field = self._schema.field(self.saved.roles.time)
        condition = None if at_or_after is None else ds.field(field.name) >= pa.scalar(at_or_after, type=field.type)
        column = self.dataset.to_table(columns=[field.name], filter=condition).column(0)
        import pyarrow.compute as pc
        return pc.min(column).as_py() if len(column) else None

    def key_sample(self, span: Span, limit: int) -> list:
        head = self.dataset.scanner(columns=[self.saved.roles.key], filter=self._in(span)).head(limit)
        return head.column(0).to_pylist()

    def rows(self) -> int:
        return sum(f.metadata.num_rows for f in self.dataset.get_fragments())

    def footprint(self) -> Footprint:
        return Footprint(sum(f.stat().st_size for f in self.files), replicas=1, method="file sizes")

    def select(self, span: Span, columns: tuple[str, ...], key=None) -> pa.Table:
        condition = self._in(span)
        if key is not None:
            condition = condition & (ds.field(self.saved.roles.key) == key)
        return self.dataset.to_table(columns=list(columns), filter=condition)

    def bars(self, span: Span, key) -> pd.DataFrame:
        """Read the key-day's time and prices, then pandas (``workloads.targets.common.bars``)."""
        roles = self.saved.roles
        bid, ask = (roles.price[0], roles.price[-1])
        times = [roles.time, roles.time_of_day] if self.dated else [roles.time]
        wanted = list(dict.fromkeys(times + [bid, ask] + ([roles.size] if roles.size else [])))
        table = self.select(span, tuple(wanted), key)
        time = roles.time
        if self.dated:                 # the date plus the time of day: the instant the bars bucket
            time = "__instant__"
            table = table.append_column(time, instants(table.column(roles.time), table.column(roles.time_of_day)))
        frame = table.to_pandas().sort_values(time, kind="stable")
        bars = minute_bars(frame, time, bid, ask)
        if roles.size:
            volume = frame[roles.size].groupby(frame[time].dt.floor("min").to_numpy(), sort=True).sum()
            bars["volume"] = volume.to_numpy()
        return bars
