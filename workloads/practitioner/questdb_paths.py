"""QuestDB as its users read it: the query in an HTTP ``/exp?fmt=parquet`` request (QuestDB's
documented Parquet export of a query result), the reply read by ``pyarrow.parquet`` and
``to_pandas()``; a day chosen by the designated timestamp (``_ts IN '2007-08-23'``: that day's
partition only), rows in the table's stored order; bars by ``SAMPLE BY 1m`` on the designated
timestamp, the labels made times of day in pandas (the TAQ dataset's convention). One HTTP
connection kept open across requests, as ``requests.Session`` keeps it."""
from __future__ import annotations

import io
import urllib.parse

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from workloads.practitioner import SNAPSHOT_AT, Path, Paths
from workloads.datasets import get_dataset
from workloads.targets.common.kept_http import KeptConnection


def _naive(table: pa.Table) -> pa.Table:
    """QuestDB's Parquet times carry UTC; the datasets' times are naive UTC."""
    fields = [pa.field(f.name, pa.timestamp(f.type.unit)) if pa.types.is_timestamp(f.type) and f.type.tz else f
              for f in table.schema]
    return table.cast(pa.schema(fields))


class QuestDBPaths(Paths):
    def open(self) -> None:
        server = self.target._server
        self.http = KeptConnection(server.host, server.http_port, 3600.0)
        self.headers = dict(server._auth)
        info = get_dataset(self.layout.dataset).info
        from workloads.targets.common.bars import price_columns
        from workloads.targets.questdb.dialect import designated
        self.table = self.target.table(self.layout)
        self.columns = ", ".join(info.schema.names)
        self.ts, self.key, self.time = designated(info), info.key_column, info.time_column
        self.bid, self.ask = price_columns(info)
        # a time of day (TAQ's ``time``) is on 1970-01-01: bars on the designated timestamp get the day taken off
        self.of_day = self.ts != self.time

    def close(self) -> None:
        self.http.close()

    def _pandas(self, sql: str):
        status, data = self.http.request("GET", "/exp?" + urllib.parse.urlencode({"query": sql, "fmt": "parquet"}),
                                         headers=self.headers)
        if status != 200:
            raise RuntimeError(f"QuestDB /exp answered {status}: {data[:200]!r}")
        return _naive(pq.read_table(io.BytesIO(data))).to_pandas()

    def _bars(self, day, key):
        frame = self._pandas(
            f"SELECT {self.ts} AS minute, first(mid) AS open, max(mid) AS high, min(mid) AS low, last(mid) AS close "
            f"FROM (SELECT {self.ts}, ({self.bid} + {self.ask}) / 2 AS mid FROM {self.table} "
            f"WHERE {self.ts} IN '{day}' AND {self.key} = '{key}') SAMPLE BY 1m ALIGN TO CALENDAR")
        if self.of_day:
            frame["minute"] = (frame["minute"] - pd.Timestamp(day)) + pd.Timestamp(0)
        return frame

    def paths(self) -> dict[str, Path]:
        where = f"WHERE {self.ts} IN '{{day}}'"
        return {
            "read_day": Path("/exp?fmt=parquet of SELECT <columns> ... WHERE _ts IN 'd' (stored order), "
                             "pq.read_table().to_pandas()",
                             lambda day, key: self._pandas(f"SELECT {self.columns} FROM {self.table} "
                                                           + where.format(day=day))),
            "read_slice": Path("the same with AND symbol = 's'",
                               lambda day, key: self._pandas(f"SELECT {self.columns} FROM {self.table} "
                                                             + where.format(day=day) + f" AND {self.key} = '{key}'")),
            "minute_bars": Path("SAMPLE BY 1m with first/max/min/last on the designated timestamp, "
                                "/exp?fmt=parquet, labels as times of day in pandas",
                                self._bars),
            "asof_join": Path("ASOF JOIN ON (symbol) of the day's trades and quotes (_ts IN 'd'), /exp?fmt=parquet",
                              lambda day, key: self._pandas(
                                  f"SELECT t.symbol, t.time, t.price, t.size, q.bid, q.ofr FROM (SELECT symbol, time, "
                                  f"price, size, _ts FROM {self.table}_trades WHERE _ts IN '{day}') t ASOF JOIN "
                                  f"(SELECT symbol, bid, ofr, _ts FROM {self.table} WHERE _ts IN '{day}') q ON (symbol)")),
            "snapshot": Path("LATEST ON _ts PARTITION BY symbol of the day's quotes up to noon, /exp?fmt=parquet",
                             lambda day, key: self._pandas(
                                 f"SELECT symbol, time, bid, ofr, bidsiz, ofrsiz FROM {self.table} WHERE _ts IN '{day}' "
                                 f"AND time <= '1970-01-01T{SNAPSHOT_AT}.000000Z' LATEST ON _ts PARTITION BY symbol")),
        }


PATHS = QuestDBPaths
