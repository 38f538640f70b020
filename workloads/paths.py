"""Where Tickbench finds its shipped resources and keeps its data, and the rule for a run's folder name."""
from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import platformdirs

from workloads.names import check_folder_name, check_name

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
    """The results catalog, a folder (``workloads.results.store``); a ``results.duckdb`` beside it (the
    file or the folder of an earlier version) is moved into it when it is opened."""
    return data_dir() / "results"


def default_datasets_dir() -> Path:
    path = data_dir() / "datasets"
    path.mkdir(parents=True, exist_ok=True)
    return path


def scratch_dir(run_id: str) -> Path:
    """A run's scratch files (``data_dir()/runs/<run_id>``): ValueError if ``run_id`` is not a name,
    so a run id can never point a deletion elsewhere."""
    return run_path(data_dir() / "runs", run_id)


def check_run_id(run_id: Any) -> str:
    """``run_id`` if it is a name a run folder may have on every OS (``workloads.names``), else
    ValueError naming it and the rule."""
    return check_name(run_id, "run id")


def run_path(runs_dir: Path, run_id: Any) -> Path:
    """The folder of ``run_id`` in ``runs_dir``: never anywhere else (a run made before the names
    rule is still found by its id)."""
    return Path(runs_dir) / check_folder_name(run_id, "run id")
