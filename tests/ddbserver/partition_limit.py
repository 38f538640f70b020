"""DolphinDB's per-query partition limit: a ``select``/``exec`` on a DFS table whose conditions on
the partitioning columns leave more partitions than ``maxPartitionNumPerQuery`` (65,536 by
default) is refused with error S02039, before it reads anything.

The partitions counted are the scheme's, not only those holding rows: every day of the VALUE
domain the day conditions select, times the key level's RANGE buckets (one bucket when a condition
names the key). A day is selected when a day condition holds at its first or its last instant, so
the full-day windows and single days the target sends are counted exactly.
"""
from __future__ import annotations

import re

from tests.ddbserver import codec as c
from tests.ddbserver.store import Store
from tests.ddbserver.syntax import LOAD, ScriptError, split_conditions, unquote

DEFAULT_MAX_PARTITIONS = 65_536
SELECT = re.compile(rf"\b(?:select|exec)\b[^\n]*?\bfrom {LOAD}(?: where ([^\n]*))?")
CLAUSE_END = re.compile(r" (?:group|order|context|pivot|cgroup) by | limit |>\)$")
DAY_UNITS = {c.DATE: 1, c.DATETIME: 86_400, c.TIMESTAMP: 86_400_000, c.NANOTIMESTAMP: 86_400_000_000_000}


def refusal(count: int) -> ScriptError:
    return ScriptError(
        f"The number of partitions [{count}] relevant to the query is too large. Please add more specific "
        "filtering conditions on partition columns in WHERE clause, or consider changing the value of the "
        "configuration parameter maxPartitionNumPerQuery. RefId:S02039")


class PartitionLimit:
    def __init__(self, store: Store, condition, limit: int = DEFAULT_MAX_PARTITIONS):
        self.store = store
        self.condition = condition         # (meta, one condition's text) -> DuckDB SQL on raw values
        self.limit = limit

    def check(self, text: str) -> None:
        """Refuse ``text`` when one of its selects would touch more partitions than the limit."""
        for m in SELECT.finditer(text):
            count = self.partitions(unquote(m.group(1)), unquote(m.group(2)), m.group(3) or "")
            if count > self.limit:
                raise refusal(count)

    def partitions(self, path: str, table: str, where: str) -> int:
        meta, db = self.store.tables.get((path, table)), self.store.databases.get(path)
        if meta is None or db is None or not meta.partition_columns:
            return 1                       # a dimension table is one partition
        where = CLAUSE_END.split(where, maxsplit=1)[0]
        day_col, *key_cols = meta.partition_columns[:2]
        conds = split_conditions(where) if where.strip() else []
        on_day = [cond for cond in conds if re.match(rf"{re.escape(day_col)}\b", cond)]
        keyed = any(re.match(rf"{re.escape(k)}\b", cond) for k in key_cols for cond in conds)
        buckets = 1 if keyed or not db.key_bounds else len(db.key_bounds) - 1
        return self._days(db, meta, day_col, on_day) * buckets

    def _days(self, db, meta, day_col: str, conds: list[str]) -> int:
        if not conds:
            return db.date_hi - db.date_lo + 1
        unit = DAY_UNITS[meta.type_of(day_col)]
        test = " and ".join(self._translated(meta, conds)) or "true"
        first = test.replace(f'"{day_col}"', f"(d * {unit})")
        last = test.replace(f'"{day_col}"', f"(d * {unit} + {unit - 1})")
        with self.store.lock:
            return int(self.store.con.execute(
                f"select count(*) from range({db.date_lo}, {db.date_hi + 1}) t(d) "
                f"where ({first}) or ({last})").fetchall()[0][0])

    def _translated(self, meta, conds: list[str]) -> list[str]:
        """The conditions the read queries understand; any other prunes nothing here (counted high)."""
        out = []
        for cond in conds:
            try:
                out.append(self.condition(meta, cond))
            except ScriptError:
                continue
        return out
