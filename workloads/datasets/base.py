"""The interface every dataset generator implements."""
from __future__ import annotations

import datetime as dt
from abc import ABC, abstractmethod
from collections.abc import Iterator

import pandas as pd

from workloads.datasets.schema import DatasetInfo, Scale, Schema, StringMode


def side_tables(dataset: "Dataset") -> dict[str, Schema]:
    """A dataset's tables beside its main one (devices: ``info``; TAQ: ``trades``), by name: each
    laid out by the targets as a table of its own, with rows from ``dataset.<name>_frame(scale)``."""
    extra = dataset.info.extra
    names = list(extra.get("side_tables") or ([extra["info_table"]] if extra.get("info_table") else []))
    found = {}
    for name in names:
        schema = getattr(dataset, f"{name}_schema", None)
        if isinstance(schema, Schema) and callable(getattr(dataset, f"{name}_frame", None)):
            found[name] = schema
    return found


def seed_side_tables(dataset: "Dataset") -> dict[str, Schema]:
    """The side tables that are part of the seed data a report loaded (devices' ``info``), which a
    table's footprint counts with it; TAQ's trades are Tickbench's own, a table of their own."""
    name = dataset.info.extra.get("info_table")
    return {n: s for n, s in side_tables(dataset).items() if n == name}


def is_day_series(info, schema: Schema) -> bool:
    """Whether a side table is a time series of the dataset's own days (TAQ's trades: the main
    table's date and time columns), which engines lay out and read by day; devices' info is not."""
    return bool(info.date_column) and {info.date_column, info.time_column} <= set(schema.names)


class Dataset(ABC):
    """A deterministic, chunked generator of one seed schema.

    Same ``Scale`` (incl. seed) -> byte-identical frames, in any process, in any chunking.
    """

    info: DatasetInfo

    @abstractmethod
    def trading_days(self, scale: Scale) -> list[dt.date]:
        """The ``scale.days`` trading days (weekdays) this scale covers, in order."""

    @abstractmethod
    def keys(self, scale: Scale) -> list[str]:
        """The symbols / security ids / device ids, most active first."""

    @abstractmethod
    def generate_day(
        self, day_index: int, scale: Scale, strings: StringMode = StringMode.ARROW,
        chunk_rows: int = 1_000_000,
    ) -> Iterator[pd.DataFrame]:
        """Yield one trading day in chunks of at most ``chunk_rows`` rows, sorted by time."""

    def day_rows(self, scale: Scale) -> list[int]:
        """Rows of each of ``trading_days(scale)`` (generated: exactly ``scale.rows_per_day``)."""
        return [scale.rows_per_day] * len(self.trading_days(scale))

    @property
    def content_id(self) -> str:
        """Changes whenever the same name and scale would yield other rows (a re-imported CSV);
        targets keep it with a prepared layout so they never reuse stale data."""
        return str(self.info.extra.get("import_id", ""))

    def day_frame(self, day_index: int, scale: Scale, strings: StringMode = StringMode.ARROW) -> pd.DataFrame:
        chunks = list(self.generate_day(day_index, scale, strings))
        if len(chunks) == 1:
            return chunks[0]
        frame = pd.concat(chunks, ignore_index=True)
        if strings is StringMode.CATEGORY:  # concat of differing categories falls back to object
            from workloads.datasets.schema import apply_string_mode
            frame = apply_string_mode(frame, self.info.schema, strings)
        return frame
