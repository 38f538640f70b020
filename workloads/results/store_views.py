"""What ``ResultsStore`` reads by SQL: DuckDB views named as the tables they replace (``runs``,
``steps``, ``workers``, ``ops``, ``resources``) over every run folder, rebuilt only when a run's
files changed (``StoreViews``, a part of ``ResultsStore``), and what they hold of each run
(``_CachedRun``).

Readers never fail on one run: a run folder whose file cannot be read back (truncated, garbage,
wrong types) is listed with status ``damaged: <file>: <reason>`` and nothing else of it, every other
run stays readable. A run whose process died reads as aborted at once, as its sealer will write it
(``workloads.results.dead_runs``).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

import duckdb
import pandas as pd
import pyarrow as pa

from workloads.results.atomic_files import DamagedFile
from workloads.results.dead_runs import dead_message
from workloads.results.ops_stream import is_stream, read_stream
from workloads.results.run_files import RUN_FILE, RunFolder, ended, measured_ends, check_parquet_records
from workloads.results.run_tables import (OPS_COLUMNS, RESOURCE_COLUMNS, RUN_COLUMNS, STEP_COLUMNS, WORKER_COLUMNS,
                                          plain_strings, table)


MEMO_ROWS = 1_000              # a finished run's answers kept up to this size: figures, not records


class StoreViews:
    """The views over every run folder and SQL over them; ``ResultsStore`` holds the connection,
    its lock and the cache of runs read."""

    # --- the views -------------------------------------------------------------------------
    def _refresh(self) -> None:
        """Point the views at the files as they are now. A run's small files are re-read only when
        they changed, and a finished run's never again (it is final once its status is); the views
        are rebuilt only when something changed."""
        changed, order = False, []
        for folder in self._folders():
            cached = self._cache.get(folder.run_id)
            if cached is not None and cached.final:
                order.append(folder.run_id)
                continue
            stamp = _stamp(folder)
            if cached is None or cached.stamp != stamp:
                cached = self._cache[folder.run_id] = _CachedRun.read(folder, stamp)
                changed = True
            elif not cached.final and not cached.damage:
                try:                                           # a running run appends records
                    ops = _RunOps.read(folder, cached.ops.state)
                except DamagedFile as exc:
                    ops, cached = None, _CachedRun.damaged(folder, stamp, exc)
                    self._cache[folder.run_id], changed = cached, True
                if ops is not None:
                    cached.ops, changed = ops, True
            order.append(folder.run_id)
        gone = set(self._cache) - set(order)
        for run_id in gone:
            del self._cache[run_id]
        if not changed and not gone and self._views_built:
            return
        self._views_built = False                # until every view below is built
        # runs stored before a column was added lack it: the empty table of every column gives
        # it to them as NULL (a parquet list without it would not know the column at all)
        self._register("ops_columns", pa.schema(OPS_COLUMNS).empty_table())
        runs = [self._cache[r] for r in order if self._cache[r].tables["runs"].num_rows]   # run.json comes first
        for name, columns in (("runs", RUN_COLUMNS), ("steps", STEP_COLUMNS), ("workers", WORKER_COLUMNS),
                              ("resources", RESOURCE_COLUMNS)):
            self._register(name, pa.concat_tables([pa.schema(columns).empty_table()]
                                                   + [run.tables[name] for run in runs]))
        ops_files = [f for run in runs for f in run.ops.parquet]
        live = [run.ops.live for run in runs if run.ops.live is not None]
        if ops_files or live:
            sources = []
            if ops_files:
                listed = ", ".join(_literal(p) for p in ops_files)
                sources.append(f"SELECT * FROM read_parquet([{listed}], union_by_name = true)")
            if live:                             # running runs' streams, read by Arrow
                self._register("ops_live", pa.concat_tables(live, promote_options="default"))
                sources.append("SELECT * FROM ops_live")
            sources.append("SELECT * FROM ops_columns")
            self._con.execute(f"CREATE OR REPLACE TEMP VIEW ops AS SELECT {', '.join(OPS_COLUMNS)} "
                              f"FROM ({' UNION ALL BY NAME '.join(sources)})")
        else:
            self._register("ops", pa.schema(OPS_COLUMNS).empty_table())
        self._views_built = True

    def _register(self, name: str, data: pa.Table) -> None:
        self._con.execute(f"DROP VIEW IF EXISTS {name}")
        self._con.register(name, data)

    # --- reading by SQL (the views are this connection's own: no cursors) ---------------------
    def query(self, sql: str, params: list | None = None) -> list[tuple]:
        return self._read(lambda cursor: cursor.execute(sql, params or []).fetchall())

    def frame(self, sql: str, params: list | None = None) -> pd.DataFrame:
        return self._read(lambda cursor: cursor.execute(sql, params or []).df())

    def run_frame(self, run_id: str, sql: str, params: list | None = None, categories: bool = False) -> pd.DataFrame:
        """``frame`` with ``ops`` holding only ``run_id``'s records: what one run's figures cost
        then does not grow with the catalog (the view opens every run's files). A finished run's
        small answers (its figures, up to ``MEMO_ROWS`` rows) are kept with it: its files never
        change again, and a comparison or a view reads them over and over. ``categories``: text
        columns as pandas categories (a million records' kinds are three strings, not a million)."""
        def fetch(con):
            cached = self._cache.get(run_id)
            memo = cached.frames if cached is not None and cached.final and cached.ops.live is None else None
            key = (sql, tuple(params or ()), categories)
            if memo is not None and key in memo:
                return memo[key].copy()
            if categories:          # through Arrow: no Python string is made per record
                frame = con.sql(self._own_ops(run_id, sql), params=params or None).to_arrow_table() \
                    .to_pandas(strings_to_categorical=True)
            else:
                frame = con.execute(self._own_ops(run_id, sql), params or []).df()
            if memo is not None and len(frame) <= MEMO_ROWS:
                memo[key] = frame.copy()
            return frame
        return self._read(fetch)

    def _own_ops(self, run_id: str, sql: str) -> str:
        """``sql`` with a common table ``ops`` of ``run_id``'s records before it (it hides the view)."""
        cached = self._cache.get(run_id)
        if cached is None or not self._views_built:
            return sql
        sources = []
        if cached.ops.parquet:
            listed = ", ".join(_literal(p) for p in cached.ops.parquet)
            sources.append(f"SELECT * FROM read_parquet([{listed}], union_by_name = true)")
        if cached.ops.live is not None:
            sources.append(f"SELECT * FROM ops_live WHERE run_id = {_literal(run_id)}")
        sources.append("SELECT * FROM ops_columns")
        own = f"ops AS (SELECT {', '.join(OPS_COLUMNS)} FROM ({' UNION ALL BY NAME '.join(sources)}))"
        text = sql.lstrip()
        if text[:5].upper() == "WITH ":
            return f"WITH {own}, {text[5:]}"
        return f"WITH {own} {text}"

    def _read(self, fetch):
        with self._lock:
            for attempt in (1, 2, 3):
                try:
                    self._refresh()
                    return fetch(self._con)
                except (duckdb.IOException, FileNotFoundError):
                    if attempt == 3:      # a run sealed its parts between the listing and the read
                        raise
                except duckdb.Error:
                    # records past a sound footer that cannot be read: set that run aside, read the rest
                    if attempt == 3 or not self._find_damaged_records():
                        raise

    def _find_damaged_records(self) -> bool:
        """Read every record of every run the views hold; a run whose records cannot be read is
        damaged from now on. True if one was found (the views are then rebuilt)."""
        found = False
        for run_id, cached in list(self._cache.items()):
            for path in cached.ops.parquet:
                try:
                    check_parquet_records(Path(path))
                except DamagedFile as exc:
                    self._cache[run_id] = _CachedRun.damaged(RunFolder(Path(path).parent if Path(path).parent.name != "ops"
                                                                       else Path(path).parent.parent), cached.stamp, exc)
                    found = True
                    break
        if found:
            self._views_built = False
        return found


@dataclass
class _RunOps:
    """A run's operation records as the views read them: its Parquet files by path, its streams'
    whole batches as one Arrow table, and what they were when read (``state``)."""
    state: tuple = ()
    parquet: tuple[str, ...] = ()
    live: pa.Table | None = None

    @classmethod
    def read(cls, folder: RunFolder, known: tuple | None = None) -> "_RunOps | None":
        """The records as they are now, or None if ``known`` still describes them. A stream that
        became a part between the listing and the read is listed again."""
        for attempt in (1, 2, 3):
            try:
                files = folder.ops_files()
                state = tuple((str(p), p.stat().st_size if is_stream(p) else -1) for p in files)
                if state == known:
                    return None
                streams = [plain_strings(read_stream(p)) for p in files if is_stream(p)]
            except FileNotFoundError:
                if attempt == 3:
                    raise
                continue
            return cls(state, tuple(str(p) for p in files if not is_stream(p)),
                       pa.concat_tables(streams, promote_options="default") if streams else None)


@dataclass
class _CachedRun:
    """What the views hold of one run folder, and when it was read."""
    stamp: tuple
    tables: dict[str, pa.Table]
    ops: _RunOps
    final: bool                   # its status is no longer 'running': its files never change again
    damage: str = ""              # "damaged: <file>: <reason>" when a file cannot be read back
    frames: dict = field(default_factory=dict)      # (sql, params) -> a finished run's answer (run_frame)

    @classmethod
    def read(cls, folder: RunFolder, stamp: tuple) -> "_CachedRun":
        try:
            found = folder.checked()
            ops = _RunOps.read(folder)
        except DamagedFile as exc:
            return cls.damaged(folder, stamp, exc)
        run, tables, files = found["run"], found["tables"], found["ops_files"]
        message = dead_message(run)
        if message is not None:       # its process has ended: read as its sealer will write it
            steps, workers = ended("aborted", message, found["rows"]["steps"], found["rows"]["workers"],
                                   measured_ends(files))
            run = {**run, "status": "aborted", "message": message}
            tables = {**tables, "runs": table([run], RUN_COLUMNS), "steps": table(steps, STEP_COLUMNS),
                      "workers": table(workers, WORKER_COLUMNS)}
            return cls(stamp, tables, ops, final=False)
        final = bool(run) and run.get("status") != "running"
        return cls(stamp, tables, ops, final)

    @classmethod
    def damaged(cls, folder: RunFolder, stamp: tuple, exc: DamagedFile) -> "_CachedRun":
        """The run as one row saying what is damaged (what its run.json still tells, if it can)."""
        damage = f"damaged: {exc}"
        run = folder.run()
        row = {name: "" for name, kind in RUN_COLUMNS.items() if kind == pa.string()}    # listed as text
        row.update({name: run.get(name) for name in RUN_COLUMNS if isinstance(run.get(name), (str, int, float))})
        try:
            created = datetime.fromisoformat(str(run.get("created_at")))
        except ValueError:
            created = datetime.fromtimestamp(folder.folder.stat().st_mtime, timezone.utc).replace(tzinfo=None)
        row.update(run_id=folder.run_id, name=str(run.get("name") or folder.run_id), created_at=created,
                   status=damage, message=damage)
        for name in ("host_pid", "host_started"):
            row.pop(name, None)
        try:
            runs = table([row], RUN_COLUMNS)
        except (pa.ArrowException, TypeError, ValueError):
            runs = table([{**{name: "" for name, kind in RUN_COLUMNS.items() if kind == pa.string()},
                           "run_id": folder.run_id, "name": folder.run_id, "created_at": created,
                           "status": damage, "message": damage}], RUN_COLUMNS)
        empty = {name: pa.schema(columns).empty_table() for name, columns in
                 (("steps", STEP_COLUMNS), ("workers", WORKER_COLUMNS), ("resources", RESOURCE_COLUMNS))}
        return cls(stamp, {"runs": runs, **empty}, _RunOps(), final=False, damage=damage)


def _literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def _stamp(folder: RunFolder) -> tuple:
    """What changes when one of a run's small files changes."""
    out = []
    for name in (RUN_FILE, "steps.json", "workers.json", "resources.jsonl"):
        try:
            stat = (folder.folder / name).stat()
            out.append((stat.st_mtime_ns, stat.st_size))
        except FileNotFoundError:
            out.append(None)
    return tuple(out)
