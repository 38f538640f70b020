"""A stored run written to files (CSV or Parquet): the run, its step figures, workers, records
(measured, warm-up and probe operations, told apart by ``kind``) and resource samples."""
from __future__ import annotations

import json
from pathlib import Path

import pandas as pd

from workloads.results.figures import step_figures
from workloads.results.store import ResultsStore
from workloads.text import FORMULA_START, spreadsheet_safe

FORMATS = ("csv", "parquet")


def export_run(store: ResultsStore, run_id: str, folder: Path, fmt: str = "csv") -> list[Path]:
    if fmt not in FORMATS:
        raise ValueError(f"export format must be csv or parquet, not {fmt!r}")
    run = store.run(run_id)
    run_id = run["run_id"]
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    tables = {
        "run": pd.DataFrame([{k: (json.dumps(v) if isinstance(v, dict) else v) for k, v in run.items()}]),
        "steps": step_figures(store, run_id),
        "workers": store.workers(run_id),
        "ops": store.ops(run_id),
        "resources": store.resources(run_id),
    }
    written = []
    for name, frame in tables.items():
        path = folder / f"{run_id}_{name}.{fmt}"
        if fmt == "csv":       # text a run carries is shown by a spreadsheet, never run as a formula
            _formulas_as_text(frame).rename(columns=spreadsheet_safe).to_csv(path, index=False)
        else:
            frame.to_parquet(path, index=False)
        written.append(path)
    return written


def _formulas_as_text(frame: pd.DataFrame) -> pd.DataFrame:
    """``spreadsheet_safe`` over the text columns only, column by column (a run's millions of
    operation records: a call per cell took seconds)."""
    text = [c for c in frame.columns if frame[c].dtype == object or pd.api.types.is_string_dtype(frame[c])]
    if not text:
        return frame
    safe = frame.copy()
    for column in text:
        values = frame[column]
        starts = values.str.startswith(FORMULA_START, na=False)     # not text (a number, None): False
        safe[column] = values.where(~starts, "'" + values.astype(str))
    return safe
