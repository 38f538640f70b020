"""Every engine's session on UTC, whatever the server's, the database's or the machine's own zone.

Tickbench stores and compares instants in UTC (an import converts a file's zone; a day is a UTC day).
A session with a zone of its own reads a zone-less literal against a zoned column, and truncates a
zoned time to its minute, in that zone: a PostgreSQL database set to America/New_York put a user
suite's minute labels four hours off. So each engine's session is pinned where it has one:

- PostgreSQL: ``-c TimeZone=UTC`` in every connection's options (psycopg and ADBC alike);
- DuckDB: ``SET TimeZone = 'UTC'`` on every connection (it starts in the machine's zone);
- Druid: ``sqlTimeZone`` in every query's context (``targets.druid.connection``);
- ClickHouse: Tickbench's tables declare ``DateTime64(n, 'UTC')`` and every literal carries 'UTC';
- QuestDB and MongoDB keep UTC instants by design; DolphinDB's times carry no zone at all.
"""
from __future__ import annotations

POSTGRES_OPTIONS = "-c TimeZone=UTC"


def duckdb_on_utc(con) -> None:
    """A DuckDB connection's session on UTC (ICU, built into DuckDB's wheels, holds the setting)."""
    con.execute("SET TimeZone = 'UTC'")
