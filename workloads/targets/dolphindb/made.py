"""What Tickbench made on a DolphinDB cluster, and its drop: the databases named
``<db_prefix>_...`` (every scale and dataset laid out gets one, and they stay: the full report 002
layout is 12.5 billion rows), each with its tables and bytes on disk (``getTabletsMeta``, as a
layout's footprint), and ``dropDatabase`` of those the user confirms
(``tickbench targets clean KEY``). Nothing outside the prefix is listed or dropped."""
from __future__ import annotations

from dataclasses import dataclass

from workloads.targets.base import TargetError
from workloads.targets.dolphindb import quote as q
from workloads.targets.dolphindb import scripts


@dataclass(frozen=True)
class MadeDatabase:
    path: str
    tables: tuple[str, ...]
    bytes: int


def dfs_databases() -> str:
    return "getClusterDFSDatabases()"


def tables_of(path: str) -> str:
    return f"getTables(database({q.string(q.db_path(path))}))"


def drop_database(path: str) -> str:
    return f"dropDatabase({q.string(q.db_path(path))})"


class DolphinDBMade:
    """``made`` and ``drop_made`` (a mixin of ``DolphinDBTarget``)."""

    def made(self) -> list[MadeDatabase]:
        """Every database of this target's prefix, its tables and their bytes on disk."""
        session, node = self._admin_session()
        try:
            paths = sorted(str(p) for p in self._run(session, node, dfs_databases())
                           if str(p).startswith(self.prefix + "_"))
            found = []
            for path in paths:
                tables = tuple(sorted(str(t) for t in self._run(session, node, tables_of(path))))
                size = 0
                for table in tables:
                    used = self._run(session, node, scripts.footprint(scripts.Names(path, table, table, table)))
                    size += int(used) if used is not None and used == used and used > 0 else 0
                found.append(MadeDatabase(path, tables, size))
            return found
        finally:
            session.close()

    def drop_made(self, paths: list[str]) -> list[str]:
        """Drop the databases ``paths``, each one this target made (else nothing is dropped); the
        paths dropped."""
        made = {m.path for m in self.made()}
        other = [p for p in paths if p not in made]
        if other:
            raise TargetError(f"{other[0]} is not a database Tickbench made here (prefix {self.prefix}_): "
                              "nothing dropped")
        session, node = self._admin_session()
        try:
            for path in paths:
                self._run(session, node, drop_database(path))
        finally:
            session.close()
        return list(paths)
