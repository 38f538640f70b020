"""DuckDB as its users read it: ``con.sql(...)`` straight to Arrow, then ``to_pandas()``, with the
day and symbol written into the SQL as literals (DuckDB's documented Python relational API)."""
from __future__ import annotations

import duckdb

from workloads.practitioner import SNAPSHOT_AT, Path, Paths
from workloads.datasets import get_dataset

ARRIVALS = 2 ** 40      # arrival ordinals a millisecond's key leaves room for


class DuckDBPaths(Paths):
    def open(self) -> None:
        self.con = duckdb.connect(str(self.target.path), read_only=True)
        info = get_dataset(self.layout.dataset).info
        self.table = self.target.table(self.layout)
        self.date, self.time, self.key = info.date_column, info.time_column, info.key_column
        from workloads.targets.common.bars import price_columns
        self.bid, self.ask = price_columns(info)

    def close(self) -> None:
        self.con.close()

    def _pandas(self, sql: str):
        # dates as datetime64 like every other column of times (pyarrow's default makes 1 M date objects)
        return self.con.sql(sql).to_arrow_table().to_pandas(date_as_object=False)

    def paths(self) -> dict[str, Path]:
        t = f'"{self.table}"'
        return {
            "read_day": Path("con.sql(SELECT * ... WHERE date = DATE 'd').to_arrow_table().to_pandas(date_as_object=False)",
                             lambda day, key: self._pandas(f"SELECT * FROM {t} WHERE {self.date} = DATE '{day}'")),
            "read_slice": Path("the same with AND symbol = 's'",
                               lambda day, key: self._pandas(f"SELECT * FROM {t} WHERE {self.date} = DATE '{day}' "
                                                             f"AND {self.key} = '{key}'")),
            "minute_bars": Path("date_trunc('minute') GROUP BY with arg_min/arg_max over the stored order",
                                lambda day, key: self._pandas(
                                    f"SELECT date_trunc('minute', {self.time}) AS minute, arg_min(mid, rowid) AS open, "
                                    f"max(mid) AS high, min(mid) AS low, arg_max(mid, rowid) AS close FROM "
                                    f"(SELECT rowid, {self.time}, ({self.bid} + {self.ask}) / 2 AS mid FROM {t} "
                                    f"WHERE {self.date} = DATE '{day}' AND {self.key} = '{key}') "
                                    "GROUP BY minute ORDER BY minute")),
            # ASOF JOIN leaves open which quote of one time a trade meets: the time and the arrival
            # (rowid) in one key, a trade's above every quote's of its time, settle it (bench_asof_ties)
            "asof_join": Path("ASOF JOIN of the day's trades and quotes ON symbol AND (time, arrival) >=",
                              lambda day, key: self._pandas(
                                  f"SELECT t.symbol, t.time, t.price, t.size, q.bid, q.ofr FROM (SELECT symbol, time, "
                                  f"price, size, epoch_ms(time)::HUGEINT * {ARRIVALS} + {ARRIVALS - 1} AS k FROM "
                                  f"\"{self.table}_trades\" WHERE date = DATE '{day}') t ASOF JOIN "
                                  f"(SELECT symbol, bid, ofr, epoch_ms(time)::HUGEINT * {ARRIVALS} + rowid AS k FROM {t} "
                                  f"WHERE date = DATE '{day}') q ON t.symbol = q.symbol AND t.k >= q.k")),
            "snapshot": Path("QUALIFY row_number() OVER (PARTITION BY symbol ORDER BY time DESC, rowid DESC) = 1",
                             lambda day, key: self._pandas(
                                 f"SELECT symbol, time, bid, ofr, bidsiz, ofrsiz FROM {t} WHERE date = DATE '{day}' "
                                 f"AND CAST(time AS TIME) <= TIME '{SNAPSHOT_AT}' QUALIFY row_number() OVER "
                                 "(PARTITION BY symbol ORDER BY time DESC, rowid DESC) = 1")),
        }


PATHS = DuckDBPaths
