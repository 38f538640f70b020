"""Where Tickbench finds its shipped resources and keeps its data."""
from __future__ import annotations

import os
import sys
from pathlib import Path

import platformdirs

APP_NAME = "Tickbench"


def resources_dir() -> Path:
    """The top-level ``resources/`` folder, also inside a frozen (PyInstaller) build."""
    frozen_root = getattr(sys, "_MEIPASS", None)
    if frozen_root:
        return Path(frozen_root) / "resources"
    return Path(__file__).resolve().parent.parent / "resources"


def data_dir() -> Path:
    """Per-user data folder (results file, laid-out datasets); ``TICKBENCH_HOME`` overrides it."""
    override = os.environ.get("TICKBENCH_HOME")
    path = Path(override) if override else Path(platformdirs.user_data_dir(APP_NAME, appauthor=False))
    path.mkdir(parents=True, exist_ok=True)
    return path


def default_results_path() -> Path:
    """The results catalog, a folder (``workloads.store``); a ``results.duckdb`` beside it (the
    file or the folder of an earlier version) is moved into it when it is opened."""
    return data_dir() / "results"


def default_datasets_dir() -> Path:
    path = data_dir() / "datasets"
    path.mkdir(parents=True, exist_ok=True)
    return path


def scratch_dir(run_id: str) -> Path:
    """A run's scratch files (``data_dir()/runs/<run_id>``): ValueError if ``run_id`` is not a name,
    so a run id can never point a deletion elsewhere."""
    from workloads.run_files import run_path
    return run_path(data_dir() / "runs", run_id)
