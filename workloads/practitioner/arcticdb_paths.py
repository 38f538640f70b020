"""ArcticDB as its users read it: ``lib.read(symbol).data`` of the day's symbol, a key-day through
a ``QueryBuilder`` filter, minute bars by the QueryBuilder's ``resample('1min')`` (ArcticDB's
documented processing pipeline) on the key-day."""
from __future__ import annotations

import pandas as pd
from arcticdb import Arctic, QueryBuilder

from workloads.datasets import get_dataset
from workloads.practitioner import Path, Paths
from workloads.practitioner.files_paths import pandas_asof, pandas_snapshot
from workloads.targets.common.bars import price_columns


class ArcticDBPaths(Paths):
    def open(self) -> None:
        info = get_dataset(self.layout.dataset).info
        self.key = info.key_column
        self.bid, self.ask = price_columns(info)
        self.arctic = Arctic(self.target.uri)
        self.lib = self.arctic.get_library(self.target.library_name(self.layout.dataset, self.layout.scale))

    def close(self) -> None:
        del self.lib, self.arctic       # LMDB allows one open instance per path in a process

    def _filtered(self, key):
        q = QueryBuilder()
        return q[q[self.key] == key]

    def _trades(self, day):
        q = QueryBuilder()
        return self.lib.read("_side_trades", query_builder=q[q["date"] == pd.Timestamp(day)]).data

    def _bars(self, day, key):
        q = self._filtered(key)
        q = q.apply("mid", (q[self.bid] + q[self.ask]) / 2)
        q = q.resample("1min").agg({"open": ("mid", "first"), "high": ("mid", "max"),
                                    "low": ("mid", "min"), "close": ("mid", "last")})
        return self.lib.read(f"d{day:%Y%m%d}", query_builder=q).data.rename_axis("minute").reset_index()

    def paths(self) -> dict[str, Path]:
        return {
            "read_day": Path("lib.read('dYYYYMMDD').data", lambda day, key: self.lib.read(f"d{day:%Y%m%d}").data),
            "read_slice": Path("lib.read(day symbol, query_builder=q[q.symbol == s]).data",
                               lambda day, key: self.lib.read(f"d{day:%Y%m%d}", query_builder=self._filtered(key)).data),
            "minute_bars": Path("QueryBuilder filter, apply mid, resample('1min') first/max/min/last", self._bars),
            "asof_join": Path("lib.read(day symbol).data and the trades symbol through q[q.date == d], "
                              "pd.merge_asof(on=time, by=symbol)",
                              lambda day, key: pandas_asof(self.lib.read(f"d{day:%Y%m%d}").data, self._trades(day))),
            "snapshot": Path("lib.read(day symbol).data, time <= noon, groupby(symbol).tail(1)",
                             lambda day, key: pandas_snapshot(self.lib.read(f"d{day:%Y%m%d}").data)),
        }


PATHS = ArcticDBPaths
