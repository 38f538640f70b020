"""Results files of Tickbench before the catalog (one DuckDB file, schema 1 or 2) moved into the
catalog's run folders, once: every run, step, worker, record and sample is copied, then the file is
renamed ``<name>.migrated`` (kept, never deleted). A run such a file still shows as running is
copied as it is; the catalog then marks it aborted if its process has ended. A run whose id is not a
name (``workloads.paths.check_run_id``) or is taken in the catalog stays in the kept file only."""
from __future__ import annotations

import json
from pathlib import Path

import duckdb
import pandas as pd
import pyarrow as pa

from workloads.results.run_files import RUN_FILE
from workloads.results.run_tables import OPS_COLUMNS, RESOURCE_COLUMNS, STEP_COLUMNS, WORKER_COLUMNS
from workloads.results.run_writer import RunWriter
from workloads.paths import run_path

LEGACY_SCHEMA_VERSION = 2
# the v1 -> v2 changes of the old file (records told apart by kind, the release, the host process...)
_V2_COLUMNS = {
    "runs": {"host": "VARCHAR", "host_pid": "INTEGER", "host_started": "DOUBLE"},
    "steps": {"released_at": "TIMESTAMP", "release_clock": "DOUBLE", "facts": "JSON"},
    "workers": {"traceback": "VARCHAR"},
    "ops": {"kind": "VARCHAR DEFAULT 'measured'", "read_s": "DOUBLE", "wire_bytes": "BIGINT", "extra": "JSON"},
}
# added once runs had folders of their own: no single-file format had them
_FOLDER_COLUMNS = {"workers": {"host": "VARCHAR"}, "ops": {"host": "VARCHAR"}}
MIGRATED_SUFFIX = ".migrated"


class LegacyFileError(RuntimeError):
    """The old file cannot be read, or a newer Tickbench wrote it."""


def migrate_legacy_file(path: Path, runs_dir: Path) -> int:
    """Copy the old file's runs into ``runs_dir``; the number of runs copied."""
    con = duckdb.connect(":memory:")
    try:
        con.execute(f"ATTACH '{_sql_text(path)}' AS old (READ_ONLY)")
    except duckdb.Error as exc:
        raise LegacyFileError(f"cannot read the old results file {path}: {exc}") from None
    version = int(con.execute("SELECT value FROM old.meta WHERE key = 'schema_version'").fetchall()[0][0])
    if version > LEGACY_SCHEMA_VERSION:
        raise LegacyFileError(f"{path} was written by a newer Tickbench (schema {version})")
    for table in ("runs", "steps", "workers", "ops", "resources"):
        con.execute(f"CREATE TABLE {table} AS SELECT * FROM old.{table}")
    if version == 1:
        con.execute("ALTER TABLE steps RENAME COLUMN duration_s TO window_s")
        for table, columns in _V2_COLUMNS.items():
            for name, kind in columns.items():
                con.execute(f"ALTER TABLE {table} ADD COLUMN {name} {kind}")
    for table, columns in _FOLDER_COLUMNS.items():
        for name, kind in columns.items():
            con.execute(f"ALTER TABLE {table} ADD COLUMN {name} {kind}")
    con.execute("DETACH old")
    runs = con.execute("SELECT * FROM runs").df()
    copied = 0
    for run in runs.to_dict("records"):
        run_id = run["run_id"]
        try:
            folder = run_path(runs_dir, run_id)   # an id is a name: never a path out of the catalog
        except ValueError:
            continue                              # left in the kept file, not copied
        if (folder / RUN_FILE).exists():
            continue                              # the catalog's run of that id is not overwritten
        writer = RunWriter(folder)
        for row in _rows(con, "steps", run_id, STEP_COLUMNS):
            writer.add_step(row)
        for row in _rows(con, "workers", run_id, WORKER_COLUMNS):
            writer.set_worker(row)
        for row in _rows(con, "resources", run_id, RESOURCE_COLUMNS, order="t"):
            writer.add_resource(row)
        ops = con.sql(f"SELECT {_selected(con, 'ops', OPS_COLUMNS)} FROM ops WHERE run_id = ? "
                      "ORDER BY step, t_start, worker, seq", params=[run_id]).to_arrow_table()
        writer.add_ops(ops.cast(pa.schema(OPS_COLUMNS)))
        writer.seal_ops()
        writer.update_run(**{k: _plain(v) for k, v in run.items()})   # last: a reader sees the run whole
        copied += 1
    con.close()
    path.rename(path.with_name(path.name + MIGRATED_SUFFIX))
    return copied


def _selected(con, table: str, columns: dict) -> str:
    """The select list of ``columns``, NULL for those the old file's table never had (added since)."""
    present = {row[0] for row in con.execute(f"DESCRIBE {table}").fetchall()}
    return ", ".join(name if name in present else f"NULL AS {name}" for name in columns)


def _rows(con, table: str, run_id: str, columns: dict, order: str = "") -> list[dict]:
    frame = con.execute(f"SELECT {_selected(con, table, columns)} FROM {table} WHERE run_id = ?"
                        + (f" ORDER BY {order}" if order else ""), [run_id]).df()
    return [{k: _plain(v) for k, v in row.items()} for row in frame.to_dict("records")]


def _plain(value):
    """A value as JSON keeps it: timestamps as ISO text, NULLs as None."""
    if isinstance(value, (dict, list)):
        return json.dumps(value)
    if value is None or (not isinstance(value, str) and pd.isna(value)):
        return None
    if isinstance(value, pd.Timestamp):
        return value.to_pydatetime().isoformat()
    if hasattr(value, "item"):
        return value.item()
    return value


def _sql_text(path: Path) -> str:
    return str(path).replace("'", "''")
