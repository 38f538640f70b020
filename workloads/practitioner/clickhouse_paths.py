"""ClickHouse embedded (chDB) as its users read it: one ``chdb.session.Session(folder)`` held open,
``session.query(sql, "Arrow")`` read zero-copy into Arrow (what chDB's documented "ArrowTable"
output does, with the result kept alive; uncompressed: ``output_format_arrow_compression_method =
'none'``), then ``to_pandas()``, the
day and symbol written into the SQL; bars by ``toStartOfMinute`` with ``argMin``/``argMax`` of the
mid over the arrival ordinal, ordered by minute."""
from __future__ import annotations

from workloads.datasets import get_dataset
from workloads.practitioner import SNAPSHOT_AT, Path, Paths
from workloads.targets.common.bars import price_columns
from workloads.targets.clickhouse.dialect import SEQ
from workloads.targets.clickhouse.embedded import arrow_of

ARRIVALS = 2 ** 32      # arrival ordinals (_seq) a millisecond's key leaves room for


class ClickHousePaths(Paths):
    def open(self) -> None:
        from chdb import session

        info = get_dataset(self.layout.dataset).info
        self.date, self.time, self.key = info.date_column, info.time_column, info.key_column
        self.bid, self.ask = price_columns(info)
        self.table = f"{self.target.database}.{self.target.table(self.layout)}"
        self.columns = ", ".join(info.schema.names)       # the data's columns, not the arrival ordinal
        self.session = session.Session(str(self.target.path))

    def close(self) -> None:
        self.session.close()

    def _pandas(self, sql: str):
        # chDB lz4-frames its Arrow output by default, only to unframe it in the same process:
        # its users who time reads turn that off per query (a session SET does not reach it)
        sql += " SETTINGS output_format_arrow_compression_method = 'none'"
        # chDB 4.4's own "ArrowTable" reads the result's memory without keeping the result alive (a
        # frame then showed freed bytes: workloads.targets.clickhouse.embedded.arrow_of); the same
        # zero-copy read over a buffer that keeps it alive
        return arrow_of(self.session.query(sql, "Arrow")).to_pandas(date_as_object=False)

    def paths(self) -> dict[str, Path]:
        return {
            "read_day": Path("session.query(SELECT <columns> ... WHERE date = 'd', 'Arrow') zero-copy to Arrow, to_pandas()",
                             lambda day, key: self._pandas(f"SELECT {self.columns} FROM {self.table} WHERE {self.date} = '{day}'")),
            "read_slice": Path("the same with AND symbol = 's'",
                               lambda day, key: self._pandas(f"SELECT {self.columns} FROM {self.table} WHERE {self.date} = '{day}' "
                                                             f"AND {self.key} = '{key}'")),
            "minute_bars": Path("toStartOfMinute GROUP BY with argMin/argMax over the arrival ordinal",
                                lambda day, key: self._pandas(
                                    f"SELECT toDateTime64(toStartOfMinute({self.time}), 0, 'UTC') AS minute, argMin(mid, {SEQ}) AS open, "
                                    f"max(mid) AS high, min(mid) AS low, argMax(mid, {SEQ}) AS close FROM "
                                    f"(SELECT {self.time}, {SEQ}, ({self.bid} + {self.ask}) / 2 AS mid FROM {self.table} "
                                    f"WHERE {self.date} = '{day}' AND {self.key} = '{key}') "
                                    "GROUP BY minute ORDER BY minute")),
            # ASOF JOIN leaves open which quote of one time a trade meets: the time and the arrival
            # ordinal in one key, a trade's above every quote's of its time, settle it (bench_asof_ties)
            "asof_join": Path("ASOF JOIN of the day's trades and quotes ON symbol AND (time, arrival) >=",
                              lambda day, key: self._pandas(
                                  f"SELECT t.symbol, t.time, t.price, t.size, q.bid, q.ofr FROM (SELECT symbol, time, "
                                  f"price, size, toUInt64(toUnixTimestamp64Milli(time)) * {ARRIVALS} + {ARRIVALS - 1} "
                                  f"AS k FROM {self.table}_trades WHERE date = '{day}') AS t ASOF JOIN "
                                  f"(SELECT symbol, bid, ofr, toUInt64(toUnixTimestamp64Milli(time)) * {ARRIVALS} + "
                                  f"{SEQ} AS k FROM {self.table} WHERE date = '{day}') AS q "
                                  "ON t.symbol = q.symbol AND t.k >= q.k")),
            "snapshot": Path("ORDER BY symbol, time DESC, _seq DESC LIMIT 1 BY symbol",
                             lambda day, key: self._pandas(
                                 f"SELECT symbol, time, bid, ofr, bidsiz, ofrsiz FROM {self.table} WHERE date = '{day}' "
                                 f"AND time <= toDateTime64('1970-01-01 {SNAPSHOT_AT}', 0, 'UTC') "
                                 f"ORDER BY symbol, time DESC, {SEQ} DESC LIMIT 1 BY symbol")),
        }


PATHS = ClickHousePaths
