"""HDF5 (pandas' table format, written by HDFStore) read the fastest documented way: PyTables'
``Table.read()`` of the day's node (h5py's ``f[node]['table'][()]`` for zlib files; h5py cannot
read blosc), PyTables' ``Table.read_where('symbol == s')`` for a key-day on the key's index; the
records into pandas with the fixed-width bytes decoded by Arrow (``pa.array(.., pa.binary())
.cast(pa.string())``: pandas' ``.str.decode`` took 4x as long) and int64 nanoseconds viewed as
datetimes; bars by a pandas groupby of the minute. Table format only (fixed has no ``where``)."""
from __future__ import annotations

import pandas as pd
import pyarrow as pa
import tables

from workloads.datasets import get_dataset
from workloads.datasets.base import side_tables
from workloads.practitioner import Path, Paths
from workloads.practitioner.files_paths import pandas_asof, pandas_bars, pandas_snapshot
from workloads.targets.common.bars import price_columns
from workloads.targets.hdf5.layout import day_node

TEMPORAL = ("DATE", "SECOND", "TIME", "TIMESTAMP")     # stored as int64 nanoseconds


class HDF5Paths(Paths):
    def open(self) -> None:
        if self.target.format != "table":
            raise ValueError("the practitioner's HDF5 paths read the table format")
        info = get_dataset(self.layout.dataset).info
        self.key, self.time = info.key_column, info.time_column
        self.bid, self.ask = price_columns(info)
        dataset = get_dataset(self.layout.dataset)
        columns = [*info.schema.columns, *(c for schema in side_tables(dataset).values() for c in schema.columns)]
        self.strings = {c.name for c in columns if c.is_string}
        self.times = {c.name for c in columns if c.ddb_type in TEMPORAL}
        self.trades = str(self.target.side_path(self.layout, "trades"))
        self.files = {day: str(self.target.day_path(self.layout, day)) for day in self.layout.days}

    def _frame(self, records):
        columns = {}
        for name in records.dtype.names:
            if name == "index":          # HDFStore's own row index, not a column of the data
                continue
            values = records[name]
            if name in self.strings:
                columns[name] = pa.array(values, type=pa.binary()).cast(pa.string())
            elif name in self.times:
                columns[name] = pa.array(values.view("M8[ns]"))
            else:
                columns[name] = pa.array(values)
        return pa.table(columns).to_pandas()

    def _day(self, day, key):
        if self.target.complib == "zlib":
            import h5py
            with h5py.File(self.files[day], "r") as f:
                return self._frame(f[day_node(day)]["table"][()])
        with tables.open_file(self.files[day], mode="r") as f:
            return self._frame(f.get_node(f"/{day_node(day)}/table").read())

    def _slice(self, day, key):
        with tables.open_file(self.files[day], mode="r") as f:
            table = f.get_node(f"/{day_node(day)}/table")
            return self._frame(table.read_where("column == value", condvars={
                "column": table.colinstances[self.key], "value": key.encode()}))

    def _trades(self, day):
        """The trades node read whole (its date is no indexed column), the day's rows kept in pandas."""
        with tables.open_file(self.trades, mode="r") as f:
            frame = self._frame(f.get_node("/trades/table").read())
        return frame[frame["date"] == pd.Timestamp(day)]

    def paths(self) -> dict[str, Path]:
        return {
            "read_day": Path("Table.read() (h5py [()] for zlib) -> Arrow -> DataFrame", self._day),
            "read_slice": Path("Table.read_where('symbol == s') on the key's index -> Arrow -> DataFrame", self._slice),
            "minute_bars": Path("read_where, then mid.groupby(time.dt.floor('min')).agg(first, max, min, last)",
                                lambda day, key: pandas_bars(self._slice(day, key), self.time, self.bid, self.ask)),
            "asof_join": Path("Table.read() of the day and of the trades node (the day's kept), pd.merge_asof",
                              lambda day, key: pandas_asof(self._day(day, key), self._trades(day))),
            "snapshot": Path("Table.read() of the day, time <= noon, groupby(symbol).tail(1)",
                             lambda day, key: pandas_snapshot(self._day(day, key))),
        }


PATHS = HDF5Paths
