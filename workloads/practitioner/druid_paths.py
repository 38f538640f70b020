"""Druid as its users read it: SQL over HTTP (``POST /druid/v2/sql``) with ``resultFormat: csv``, the
reply read by ``pyarrow.csv`` and ``to_pandas()`` (the fastest documented result format measured
for a 1 M-row day: csv 6.05 s, ``objectLines`` + ``pyarrow.json`` 8.55 s, ``array`` + ``json.loads``
8.57 s, of which Druid's own exchange is 5.7 s); ``__time`` asked as milliseconds
(``TIMESTAMP_TO_MILLIS``: 0.5 s less than its ISO text) and made a timestamp in Arrow; a day chosen by
``__time`` (its DAY segment only), rows in the order Druid returns them; bars by
``TIME_FLOOR(__time, 'PT1M')`` with ``EARLIEST_BY``/``LATEST_BY`` on the layout's arrival ordinal
(``_seq``: quotes are stamped to the second, so plain ``EARLIEST``/``LATEST`` on ``__time`` would pick
among a second's quotes arbitrarily), the labels made times of day in pandas (the TAQ dataset's
convention). The tick pack's snapshot: each symbol's LATEST_BY quote by arrival up to 12:00 (its
as-of join is refused: ``resources/queries/tick.druid.toml``). Plain ``urllib``; query cache off, as
Tickbench's target runs it."""
from __future__ import annotations

import io
import json
import urllib.request

import pandas as pd
import pyarrow as pa
import pyarrow.csv as pacsv

from workloads.practitioner import SNAPSHOT_AT, Path, Paths
from workloads.datasets import get_dataset
from workloads.targets.common.text_tables import text_tables

CONTEXT = {"useCache": False, "populateCache": False}
DAY_MS = 86_400_000


class DruidPaths(Paths):
    def open(self) -> None:
        http = self.target.http
        self.url = f"http://{http.host}:{http.port}/druid/v2/sql"
        self.headers = http._headers()
        info = get_dataset(self.layout.dataset).info
        from workloads.targets.common.bars import price_columns
        self.table = self.target.table(self.layout)
        self.trades = text_tables(self.layout.dataset, self.table).get("trades", "")
        self.key = info.key_column
        # the columns Druid stores beside __time (TAQ's date and time are __time)
        parts = {info.date_column, info.time_column}
        self.columns = [c.name for c in info.schema.columns if c.name not in parts]
        self.bid, self.ask = price_columns(info)
        self.of_day = info.date_column != info.time_column

    def _csv(self, sql: str, names: list[str], at: int = 0) -> pa.Table:
        """The reply, its column ``at`` (milliseconds) made a timestamp."""
        body = json.dumps({"query": sql, "resultFormat": "csv", "context": CONTEXT}).encode()
        with urllib.request.urlopen(urllib.request.Request(self.url, data=body, headers=self.headers)) as reply:
            data = reply.read()
        table = pacsv.read_csv(io.BytesIO(data), read_options=pacsv.ReadOptions(column_names=names))
        return table.set_column(at, names[at], table.column(at).cast(pa.timestamp("ms")))

    def _where(self, day, time: str = "__time") -> str:
        end = (pd.Timestamp(day) + pd.Timedelta(days=1)).date()
        return f"{time} >= TIMESTAMP '{day} 00:00:00' AND {time} < TIMESTAMP '{end} 00:00:00'"

    def _rows(self, day, key=None) -> pd.DataFrame:
        cols = ", ".join(f'"{c}"' for c in self.columns)
        sql = f'SELECT TIMESTAMP_TO_MILLIS(__time) AS "__time", {cols} FROM "{self.table}" WHERE {self._where(day)}'
        if key is not None:
            sql += f" AND \"{self.key}\" = '{key}'"
        return self._csv(sql, ["__time", *self.columns]).to_pandas()

    def _bars(self, day, key) -> pd.DataFrame:
        mid, seq = f'(("{self.bid}" + "{self.ask}") / 2)', 'MILLIS_TO_TIMESTAMP("_seq")'
        frame = self._csv(
            f"SELECT TIMESTAMP_TO_MILLIS(TIME_FLOOR(__time, 'PT1M')), EARLIEST_BY({mid}, {seq}), MAX({mid}), "
            f'MIN({mid}), LATEST_BY({mid}, {seq}) FROM "{self.table}" WHERE {self._where(day)} '
            f"AND \"{self.key}\" = '{key}' GROUP BY 1 ORDER BY 1",
            ["minute", "open", "high", "low", "close"]).to_pandas()
        if self.of_day:
            frame["minute"] = (frame["minute"] - pd.Timestamp(day)) + pd.Timestamp(0)
        return frame

    def _snapshot(self, day, key) -> pd.DataFrame:
        at = pd.Timedelta(SNAPSHOT_AT) // pd.Timedelta(milliseconds=1)
        tod, seq = f"MOD(TIMESTAMP_TO_MILLIS(__time), {DAY_MS})", 'MILLIS_TO_TIMESTAMP("_seq")'
        return self._csv(
            f"SELECT symbol, MAX({tod}), LATEST_BY(bid, {seq}), LATEST_BY(ofr, {seq}), LATEST_BY(bidsiz, {seq}), "
            f'LATEST_BY(ofrsiz, {seq}) FROM "{self.table}" WHERE {self._where(day)} AND {tod} <= {at} GROUP BY symbol',
            ["symbol", "time", "bid", "ofr", "bidsiz", "ofrsiz"], at=1).to_pandas()

    def paths(self) -> dict[str, Path]:
        ways = {
            "read_day": Path("POST /druid/v2/sql resultFormat=csv, SELECT TIMESTAMP_TO_MILLIS(__time), <columns> "
                             "WHERE __time in the day (Druid's order), pyarrow.csv.read_csv().to_pandas()",
                             lambda day, key: self._rows(day)),
            "read_slice": Path("the same with AND symbol = 's'", lambda day, key: self._rows(day, key)),
            "minute_bars": Path("TIME_FLOOR(__time, 'PT1M') with EARLIEST_BY/MAX/MIN/LATEST_BY (by arrival), "
                                "ORDER BY minute, csv", self._bars),
        }
        if self.trades:                  # TAQ: the tick pack's snapshot (its as-of join Druid refuses)
            ways["snapshot"] = Path("LATEST_BY(<column>, _seq) GROUP BY symbol up to 12:00, csv", self._snapshot)
        return ways

PATHS = DruidPaths
