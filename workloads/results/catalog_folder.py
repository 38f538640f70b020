"""Where the results catalog is and how its folder is laid out: ``catalog.json`` (the format it
was written in) and ``runs/``, one folder per run (``workloads.results.run_files``); and
``StoreError``, the error of a catalog that cannot be opened or read.
"""
from __future__ import annotations

from pathlib import Path

FORMAT = 3                    # 1 and 2 were single DuckDB files (workloads.results.migration)
SCHEMA_VERSION = FORMAT
CATALOG_FILE = "catalog.json"
RUNS_DIR = "runs"


class StoreError(RuntimeError):
    """The results catalog cannot be opened or read; the message names it."""


def results_folder(path: Path | str) -> tuple[Path, Path | None]:
    """The catalog folder for ``path`` and an older results file to move into it, if any:
    ``results.duckdb`` (a file) -> ``results/``; ``results.duckdb`` (no file) -> ``results/``;
    ``results/`` -> itself, with ``results.duckdb`` beside it if that is a file."""
    path = Path(path)
    if path.is_file():
        return path.with_name(path.stem), path
    if path.suffix == ".duckdb":
        return path.with_name(path.stem), None
    legacy = path.with_name(path.name + ".duckdb")
    return path, legacy if legacy.is_file() else None


def old_catalog_folder(folder: Path) -> Path | None:
    """A catalog folder an earlier version named ``<folder>.duckdb/``, if there is one."""
    old = folder.with_name(folder.name + ".duckdb")
    return old if (old / CATALOG_FILE).is_file() and (old / RUNS_DIR).is_dir() else None
