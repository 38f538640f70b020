"""Pickle, Parquet and Feather files as their users read them: ``pickle.load`` of the day's file;
``pq.read_table(path, filters=...)`` / ``pa.ipc.open_file(path).read_all()`` (Feather v2, as pyarrow
documents it since ``feather.read_table``'s deprecation) then ``to_pandas()``; a key-day
filtered by a boolean mask (pickle) or in Arrow; bars by a pandas groupby of the minute."""
from __future__ import annotations

import pickle

import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from workloads.datasets import get_dataset
from workloads.practitioner import SNAPSHOT_AT, Path, Paths
from workloads.targets.common.bars import price_columns


NOON = pd.Timestamp(f"1970-01-01 {SNAPSHOT_AT}")    # a time of day, on the day the datasets hold times on


def pandas_asof(quotes, trades):
    """Each trade with its symbol's quote at or before it, as pandas users write it: both sorted by
    time, ``merge_asof`` by symbol."""
    q = quotes[["symbol", "time", "bid", "ofr"]].sort_values("time", kind="stable")
    t = trades[["symbol", "time", "price", "size"]].sort_values("time", kind="stable")
    return pd.merge_asof(t, q, on="time", by="symbol")


def pandas_snapshot(quotes):
    """Each symbol's last quote at noon: the rows up to it, each symbol's last in stored order."""
    q = quotes[quotes["time"] <= NOON]
    return q.groupby("symbol", observed=True, sort=False).tail(1)[["symbol", "time", "bid", "ofr", "bidsiz", "ofrsiz"]]


def pandas_bars(frame, time_column: str, bid: str, ask: str):
    """One key-day's minute bars as a pandas user writes them (first/last in row order)."""
    mid = (frame[bid] + frame[ask]) / 2
    bars = mid.groupby(frame[time_column].dt.floor("min")).agg(["first", "max", "min", "last"])
    bars.columns = ["open", "high", "low", "close"]
    return bars.rename_axis("minute").reset_index()


class FilePaths(Paths):
    def open(self) -> None:
        info = get_dataset(self.layout.dataset).info
        self.time, self.key = info.time_column, info.key_column
        self.bid, self.ask = price_columns(info)
        self.files = {day: str(self.target.day_path(self.layout, day)) for day in self.layout.days}
        self.trades = str(self.target.side_path(self.layout, "trades"))

    def _slice(self, day, key):
        kind, path = self.target.kind, self.files[day]
        if kind == "pickle":
            with open(path, "rb") as f:
                frame = pickle.load(f)
            return frame[frame[self.key] == key].reset_index(drop=True)
        if kind == "parquet":
            return pq.read_table(path, filters=[(self.key, "==", key)]).to_pandas()
        table = pa.ipc.open_file(path).read_all()
        return table.filter(pc.equal(table[self.key], pa.scalar(key))).to_pandas()

    def _day(self, day, key):
        kind, path = self.target.kind, self.files[day]
        if kind == "pickle":
            with open(path, "rb") as f:
                return pickle.load(f)
        if kind == "parquet":
            return pq.read_table(path).to_pandas()
        return pa.ipc.open_file(path).read_all().to_pandas()

    def _trades(self, day):
        """The day's trades from the one trades file: Parquet filters as it reads, Feather in Arrow,
        a pickle is loaded whole and masked."""
        kind, stamp = self.target.kind, pd.Timestamp(day)
        if kind == "pickle":
            with open(self.trades, "rb") as f:
                frame = pickle.load(f)
            return frame[frame["date"] == stamp]
        if kind == "parquet":
            return pq.read_table(self.trades, filters=[("date", "==", stamp)]).to_pandas()
        table = pa.ipc.open_file(self.trades).read_all()
        return table.filter(pc.equal(table["date"], pa.scalar(stamp, table.schema.field("date").type))).to_pandas()

    def paths(self) -> dict[str, Path]:
        read = {"pickle": "pickle.load(open(path, 'rb'))", "parquet": "pq.read_table(path).to_pandas()",
                "feather": "pa.ipc.open_file(path).read_all().to_pandas()"}[self.target.kind]
        where = {"pickle": "frame[frame.symbol == s]", "parquet": "pq.read_table(path, filters=[symbol == s])",
                 "feather": "table.filter(symbol == s) in Arrow"}[self.target.kind]
        return {
            "read_day": Path(read, self._day),
            "read_slice": Path(where + ", to pandas", self._slice),
            "minute_bars": Path(where + ", then mid.groupby(time.dt.floor('min')).agg(first, max, min, last)",
                                lambda day, key: pandas_bars(self._slice(day, key), self.time, self.bid, self.ask)),
            "asof_join": Path(f"{read} of the day and the day's trades, pd.merge_asof(on=time, by=symbol)",
                              lambda day, key: pandas_asof(self._day(day, key), self._trades(day))),
            "snapshot": Path(f"{read}, time <= noon, groupby(symbol).tail(1)",
                             lambda day, key: pandas_snapshot(self._day(day, key))),
        }


PATHS = FilePaths
