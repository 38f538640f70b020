"""Existing tables on a ClickHouse server, read in place with the engine's own client:
``clickhouse-connect``'s ``query_arrow`` (the engine target's client and its errors,
``workloads.targets.clickhouse.server``). Days: the first time at or after each next UTC midnight,
from the parts' min/max where the table is partitioned by day (``first_time``); rows and bytes from
``system.parts``, which the server keeps without reading a row. A Date column with a Time/Time64
column: days by ``min(date)`` from each next date (the parts' min/max where partitioned by the date),
bars by the date plus the time of day (``instant``).
"""
from __future__ import annotations

import datetime as dt

import pyarrow as pa

from workloads.targets.base import Footprint, TargetError
from workloads.targets.table.sources import Span
from workloads.targets.table.sql import SqlSource, _text_literal


def _one_line(text: str, limit: int = 300) -> str:
    return " ".join(str(text).split())[:limit]


class ClickHouseSource(SqlSource):
    def __init__(self, saved, config):
        super().__init__(saved, config)
        from workloads.targets.clickhouse.server import _Server, _ServerConn
        self.server = _Server({"host": config.get("host") or "127.0.0.1", **config})
        self.conn = _ServerConn(self.server)

    @property
    def table_ref(self) -> str:
        table = self.saved.table
        database = self.config.get("database") or ""
        if database and "." not in table:
            table = f"{database}.{table}"
        return ".".join(self.quote(part) for part in table.split("."))

    def fetch(self, sql: str) -> pa.Table:
        try:
            return self.conn.arrow(sql)
        except TargetError as exc:
            raise self._named(exc) from None

    def _named(self, exc: TargetError) -> TargetError:
        text = str(exc)
        if "UNKNOWN_TABLE" in text or "Code: 60." in text or "UNKNOWN_DATABASE" in text or "Code: 81." in text:
            return self.error("no such table")
        if "ACCESS_DENIED" in text or "Code: 497." in text:
            return self.error(f"user {self.server.user!r} may not read it (access denied)")
        if "answered:" in text:
            return self.error(_one_line(text.partition("answered: ")[2]))
        return exc                      # refused, wrong password, timeouts: already one line naming the server

    def time_literal(self, value: dt.datetime) -> str:
        if not isinstance(value, dt.datetime):
            return f"toDate('{value:%Y-%m-%d}')"
        if value.tzinfo is not None:
            value = value.astimezone(dt.timezone.utc)
        return f"toDateTime64('{value:%Y-%m-%d %H:%M:%S.%f}', 6, 'UTC')"

    def _utc_time(self) -> bool:
        zone = self.arrow_schema().field(self.saved.roles.time).type
        return pa.types.is_timestamp(zone) and zone.tz in ("UTC", "Etc/UTC")

    def first_time(self, at_or_after):
        """From whole UTC days of a UTC time column, ``min(t), count()`` over ``toDate(t) >= day``: on a table
        partitioned by ``toDate(t)`` ClickHouse answers it from its parts' min/max (``_minmax_count_projection``,
        no row read); otherwise the exact range (``minOrNull``: a plain min answers 1970-01-01 on no rows)."""
        t = self.quote(self.saved.roles.time)
        if self.dated:                 # a Date column: the parts' min/max where partitioned by it
            after = "" if at_or_after is None else f" WHERE {t} >= {self.time_literal(at_or_after)}"
            return _first_found(self.fetch(f"SELECT min({t}) AS first, count() AS n FROM {self.table_ref}{after}"))
        if at_or_after is None or (at_or_after.time() == dt.time() and self._utc_time()):
            after = "" if at_or_after is None else f" WHERE toDate({t}) >= toDate('{at_or_after:%Y-%m-%d}')"
            return _first_found(self.fetch(f"SELECT min({t}) AS first, count() AS n FROM {self.table_ref}{after}"))
        return self.scalar(f"SELECT minOrNull({t}) FROM {self.table_ref} WHERE {t} >= {self.time_literal(at_or_after)}")

    def instant(self) -> str:
        """A Date plus its Time/Time64 as a DateTime64 in UTC (ClickHouse adds a time of day to a DateTime64)."""
        roles = self.saved.roles
        if self.dated:
            return f"(toDateTime64({self.quote(roles.time)}, 6, 'UTC') + {self.quote(roles.time_of_day)})"
        return self.quote(roles.time)

    def bars_sql(self, span: Span, key) -> str:
        t, mid = self.instant(), self.mid()
        volume = f", sum({self.quote(self.saved.roles.size)}) AS volume" if self.saved.roles.size else ""
        # toStartOfMinute gives a DateTime, which Arrow carries as bare uint32 seconds: the minute as a timestamp
        return (f"SELECT toDateTime64(toStartOfMinute({t}), 0, 'UTC') AS minute, argMin({mid}, {t}) AS open, "
                f"max({mid}) AS high, min({mid}) AS low, argMax({mid}, {t}) AS close{volume} FROM {self.table_ref} "
                f"WHERE {self.condition(span, key)} GROUP BY minute ORDER BY minute")

    def _parts(self) -> dict:
        database, _, name = self.table_ref.replace('"', "").rpartition(".")
        where = f"database = {_text_literal(database)}" if database else "database = currentDatabase()"
        found = self.fetch(f"SELECT sum(rows) AS rows, sum(bytes_on_disk) AS bytes FROM system.parts "
                           f"WHERE active AND {where} AND table = {_text_literal(name)}").to_pylist()
        return found[0] if found else {}

    def rows(self) -> int:
        return int(self._parts().get("rows") or 0)

    def footprint(self) -> Footprint:
        return Footprint(int(self._parts().get("bytes") or 0), replicas=1,
                         method="system.parts bytes_on_disk of the table's active parts")

    def close(self) -> None:
        self.server.close()


def _first_found(answer) -> object:
    """The first time of a ``min(t) AS first, count() AS n`` answer, None on no rows (a plain min
    answers 1970-01-01 there: the count tells)."""
    found = answer.to_pylist()
    return found[0]["first"] if found and found[0]["n"] else None
