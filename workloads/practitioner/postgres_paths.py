"""PostgreSQL as its users read it into pandas: ADBC's PostgreSQL driver (``adbc_driver_postgresql
.dbapi``, Arrow's documented client), ``cursor.execute(sql)`` then ``fetch_arrow_table()
.to_pandas()``, the day and symbol written into the SQL as literals (with nothing bound the driver
reads the result as one ``COPY ... TO STDOUT (FORMAT binary)`` stream, its fastest path; a bound
parameter makes it fall back to the extended protocol, ~1.4x slower on a 1 M-row day). The table
is the one Tickbench laid out, each day partition CLUSTERed on (symbol, time, _seq), as a
practitioner keeps ticks; a day read has no ORDER BY (the partition's stored order).

Minute bars: ``date_trunc('minute', time)`` GROUP BY with the first and last quote of the minute
as ``(array_agg(mid ORDER BY _seq))[1]`` (PostgreSQL has no first/last aggregate: the ordered
array_agg is its idiom), ordered by minute."""
from __future__ import annotations

from urllib.parse import quote as escape

from workloads.practitioner import SNAPSHOT_AT, Path, Paths
from workloads.datasets import get_dataset


def _literal(text: str) -> str:
    return "'" + str(text).replace("'", "''") + "'"


class PostgresPaths(Paths):
    def open(self) -> None:
        import adbc_driver_postgresql.dbapi as dbapi

        config = self.target.config
        host = str(config["host"])
        host = f"[{host}]" if ":" in host else host
        uri = (f"postgresql://{escape(str(config.get('user') or 'postgres'), safe='')}:"
               f"{escape(str(config.get('password') or ''), safe='')}@{host}:{int(config.get('port') or 5432)}/"
               f"{escape(str(config.get('database') or 'tickbench'), safe='')}")
        self.con = dbapi.connect(uri, autocommit=True)
        info = get_dataset(self.layout.dataset).info
        self.table = f'"{self.target.table(self.layout)}"'
        self.trades = f'"{self.target.table(self.layout)}_trades"'
        self.columns = ", ".join(f'"{n}"' for n in info.schema.names)
        self.date, self.time, self.key = (f'"{c}"' for c in (info.date_column, info.time_column, info.key_column))
        from workloads.targets.common.bars import price_columns
        self.bid, self.ask = (f'"{c}"' for c in price_columns(info))

    def close(self) -> None:
        self.con.close()

    def _pandas(self, sql: str):
        with self.con.cursor() as cur:
            cur.execute(sql)
            return cur.fetch_arrow_table().to_pandas()

    def _day(self, day) -> str:
        return f"{self.date} = DATE '{day}'"

    def paths(self) -> dict[str, Path]:
        mid = f"({self.bid} + {self.ask}) / 2"
        return {
            "read_day": Path("ADBC cursor.execute(SELECT cols ... WHERE date = DATE 'd'); "
                             "fetch_arrow_table().to_pandas()",
                             lambda day, key: self._pandas(f"SELECT {self.columns} FROM {self.table} "
                                                           f"WHERE {self._day(day)}")),
            "read_slice": Path("the same with AND symbol = 's'",
                               lambda day, key: self._pandas(f"SELECT {self.columns} FROM {self.table} "
                                                             f"WHERE {self._day(day)} AND {self.key} = {_literal(key)}")),
            "minute_bars": Path("date_trunc('minute') GROUP BY with (array_agg(mid ORDER BY _seq))[1] for "
                                "open/close, ORDER BY minute, through ADBC",
                                lambda day, key: self._pandas(
                                    f"SELECT date_trunc('minute', {self.time}) AS minute, "
                                    f"(array_agg({mid} ORDER BY _seq))[1] AS open, max({mid}) AS high, "
                                    f"min({mid}) AS low, (array_agg({mid} ORDER BY _seq DESC))[1] AS close "
                                    f"FROM {self.table} WHERE {self._day(day)} AND {self.key} = {_literal(key)} "
                                    "GROUP BY 1 ORDER BY 1")),
            "asof_join": Path("JOIN LATERAL (... ORDER BY time DESC, _seq DESC LIMIT 1) per trade of the day, through ADBC",
                              lambda day, key: self._pandas(
                                  f"SELECT t.symbol, t.time, t.price, t.size, q.bid, q.ofr FROM {self.trades} t "
                                  f"JOIN LATERAL (SELECT bid, ofr FROM {self.table} q WHERE q.symbol = t.symbol AND "
                                  "q.date = t.date AND q.time <= t.time ORDER BY q.time DESC, q._seq DESC LIMIT 1) q "
                                  f"ON true WHERE t.date = DATE '{day}'")),
            "snapshot": Path("DISTINCT ON (symbol) ... ORDER BY symbol, time DESC, _seq DESC, through ADBC",
                             lambda day, key: self._pandas(
                                 f"SELECT DISTINCT ON (symbol) symbol, time, bid, ofr, bidsiz, ofrsiz FROM {self.table} "
                                 f"WHERE {self._day(day)} AND time::time <= TIME '{SNAPSHOT_AT}' "
                                 "ORDER BY symbol, time DESC, _seq DESC")),
        }


PATHS = PostgresPaths
