"""Every engine's session on UTC, whatever the server's, the database's or the machine's own zone.

Tickbench stores and compares instants in UTC (an import converts a file's zone; a day is a UTC day).
A session with a zone of its own reads a zone-less literal against a zoned column, and truncates a
zoned time to its minute, in that zone: a PostgreSQL database set to America/New_York put a user
suite's minute labels four hours off. So each engine's session is pinned where it has one:

- PostgreSQL: ``-c TimeZone=UTC`` in every connection's options (psycopg and ADBC alike);
- DuckDB: ``SET TimeZone = 'UTC'`` on every connection (it starts in the machine's zone);
- Druid: ``sqlTimeZone`` in every query's context (``targets.druid.connection``);
- ClickHouse: Tickbench's tables declare ``DateTime64(n, 'UTC')`` and every literal carries 'UTC'; a
  user's own texts are read on UTC too: every query of a server session is sent with
  ``session_timezone = 'UTC'`` (``clickhouse_on_utc``), so on a server whose ``<timezone>`` is
  America/New_York a ``date_trunc('minute', t)`` of a DateTime64 without a zone is a UTC minute, not a
  New York one. A column declared in a zone keeps it (its functions truncate there, whatever the
  session): a suite says 'UTC' for those, as the docs' suite does;
- QuestDB and MongoDB keep UTC instants by design; DolphinDB's times carry no zone at all.
"""
from __future__ import annotations

POSTGRES_OPTIONS = "-c TimeZone=UTC"


def duckdb_on_utc(con) -> None:
    """A DuckDB connection's session on UTC (ICU, built into DuckDB's wheels, holds the setting)."""
    con.execute("SET TimeZone = 'UTC'")


CLICKHOUSE_SESSION = {"session_timezone": "UTC"}


def clickhouse_on_utc(client) -> dict[str, str]:
    """A clickhouse-connect client's every later query on UTC (settings sent with each request), where
    the server lets the user change it: ``session_timezone`` came in ClickHouse 23.6 and a readonly user
    may change no setting (there the literals' 'UTC' is all there is). Returns the settings applied, for
    requests of the same session made without the client (``targets.clickhouse.server``'s probes)."""
    applied = {}
    for key, value in CLICKHOUSE_SESSION.items():
        known = client.server_settings.get(key)
        if known is not None and not known.readonly:
            client.set_client_setting(key, value)
            applied[key] = value
    return applied
