"""Published figures from the five seed reports, shown as "published (their hardware)".

Each report is one JSON file in ``resources/reference/``: the report's id, title, source file,
environment, a ``missing`` list (tables that were images, so no figures exist for them) and its
``figures``. A figure names the Tickbench workload it corresponds to (``experiment``), the dataset
and target, the cache state, a ``series`` (one line on a chart), an optional ``x`` (users, nodes,
rows per batch), a ``value`` (with ``value_high`` for ranges such as "350-380 MB/s") and a unit.
"""
from __future__ import annotations

import json
import math
from functools import lru_cache
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from workloads.paths import resources_dir

# Tickbench workload names the published experiments map onto.
EXPERIMENTS = (
    "read-day", "slice-download", "upload-sweep", "concurrent-append", "minute-bars",
    "spread-by-minute", "mapreduce-minute-bars", "ols-spread", "import", "export", "disk", "query-suite",
)
DISK = "disk"           # footprint figures: shown beside every run that records a footprint
DATASETS = ("taq", "level2", "devices", "api45")
CACHE_STATES = ("cold", "warm")
X_UNITS = ("users", "nodes", "rows per batch")
UNITS = ("s", "ms", "M rows/s", "MB/s", "GB/s", "GB", "x", "%")

_HEADER_FIELDS = ("report", "title", "source_file", "environment", "missing", "figures")
_FIGURE_FIELDS = ("experiment", "dataset", "target", "cache", "series", "x", "x_unit",
                  "value", "value_high", "approx", "unit", "note")
# The columns of the results store's "references" table.
FRAME_COLUMNS = ("source", "experiment", "series", "x", "value", "unit", "note")


class ReferenceDataError(ValueError):
    """A reference file is malformed; the message names the file and the figure."""


@dataclass(frozen=True)
class Reference:
    """One published figure with the report it comes from."""

    report: str
    title: str
    environment: str
    source_file: str
    experiment: str
    dataset: str | None
    target: str            # "pickle", "dolphindb-server", "dolphindb-api-python", "druid"...
    cache: str | None
    series: str
    x: float | None
    x_unit: str | None
    value: float
    value_high: float | None
    approx: bool
    unit: str
    note: str

    @property
    def value_text(self) -> str:
        """The figure as the report gave it: "~1.8 GB/s", "350-380 MB/s", "402.88 MB/s"."""
        text = _number(self.value) if self.value_high is None else \
            f"{_number(self.value)}-{_number(self.value_high)}"
        unit = self.unit if self.unit in ("x", "%") else f" {self.unit}"
        return f"{'~' if self.approx else ''}{text}{unit}"

    @property
    def x_text(self) -> str | None:
        if self.x is None:
            return None
        unit = self.x_unit[:-1] if self.x == 1 and self.x_unit in ("users", "nodes") else self.x_unit
        return f"{_number(self.x)} {unit}"

    @property
    def label(self) -> str:
        """Target, dataset, cache and series in one line, for legends and the store."""
        return ", ".join(p for p in (self.target, self.dataset, self.cache, self.series) if p)


def reference_folder() -> Path:
    return resources_dir() / "reference"


def load_references(folder: str | Path | None = None) -> list[Reference]:
    """Every figure of every ``*.json`` in ``folder`` (default: the shipped references)."""
    folder = Path(folder) if folder is not None else reference_folder()
    if not folder.is_dir():
        raise ReferenceDataError(f"reference folder not found: {folder}")
    stats = [(path, path.stat()) for path in sorted(folder.glob("*.json"))]
    files = tuple((path, stat.st_mtime_ns, stat.st_size) for path, stat in stats)
    return list(_parsed(files))


@lru_cache(maxsize=8)
def _parsed(files: tuple[tuple[Path, int, int], ...]) -> tuple[Reference, ...]:
    """Parsed once per version of the files: every run start asks for them (tens of ms to parse)."""
    return tuple(ref for path, _mtime, _size in files for ref in load_reference_file(path))


def load_reference_file(path: str | Path) -> list[Reference]:
    path = Path(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise ReferenceDataError(f"{path.name}: not valid JSON: {exc.msg} at line {exc.lineno}, "
                                 f"column {exc.colno}") from None
    head = _check_header(path.name, data)
    references, seen = [], {}
    for index, figure in enumerate(data["figures"]):
        ref = _figure(f"{path.name}: figure {index}", figure, head)
        # Two figures with the same coordinates are a copy-paste slip, not two facts.
        key = (ref.experiment, ref.dataset, ref.target, ref.cache, ref.series, ref.x, ref.unit)
        if key in seen:
            raise ReferenceDataError(f"{path.name}: figure {index} repeats figure {seen[key]} "
                                     f"({ref.label}, x={ref.x_text}, {ref.unit})")
        seen[key] = index
        references.append(ref)
    return references


def references_for(workload: str, dataset: str | None = None, target: str | None = None,
                   folder: str | Path | None = None) -> list[Reference]:
    """Published figures for one workload, optionally one dataset and one target.

    ``target`` matches a whole family: "dolphindb" selects "dolphindb-server" and every
    "dolphindb-api-*"; "dolphindb-api" selects every API language.
    """
    return [r for r in load_references(folder)
            if r.experiment == workload
            and (dataset is None or r.dataset == dataset)
            and (target is None or r.target == target or r.target.startswith(target + "-"))]


def as_frame(references: Iterable[Reference] | None = None) -> pd.DataFrame:
    """Figures as rows of the results store's "references" table."""
    refs = load_references() if references is None else list(references)
    rows = []
    for r in refs:
        notes = [f"as published: {r.value_text}" if (r.value_high is not None or r.approx) else "", r.note]
        rows.append({
            "source": f"{r.report}: {r.title}",
            "experiment": r.experiment,
            "series": r.label,
            "x": r.x_text,
            "value": float(r.value),
            "unit": r.unit,
            "note": "; ".join(n for n in notes if n) or None,
        })
    frame = pd.DataFrame(rows, columns=list(FRAME_COLUMNS))
    return frame.astype({c: ("float64" if c == "value" else "str") for c in FRAME_COLUMNS})


# --- validation -----------------------------------------------------------------------------

def _check_header(name: str, data: Any) -> dict[str, str]:
    if not isinstance(data, dict):
        raise ReferenceDataError(f"{name}: expected a JSON object at the top level")
    unknown = set(data) - set(_HEADER_FIELDS)
    if unknown:
        raise ReferenceDataError(f"{name}: unknown field(s) {', '.join(sorted(unknown))}")
    for key in ("report", "title", "source_file", "environment"):
        if not isinstance(data.get(key), str) or not data[key].strip():
            raise ReferenceDataError(f"{name}: '{key}' must be a non-empty string")
    if not name.startswith(data["report"] + "_"):
        raise ReferenceDataError(f"{name}: 'report' {data['report']!r} does not match the file name")
    missing = data.get("missing", [])
    if not isinstance(missing, list) or not all(isinstance(m, str) for m in missing):
        raise ReferenceDataError(f"{name}: 'missing' must be a list of strings")
    if not isinstance(data.get("figures"), list) or not data["figures"]:
        raise ReferenceDataError(f"{name}: 'figures' must be a non-empty list")
    return {k: data[k] for k in ("report", "title", "environment", "source_file")}


def _figure(where: str, figure: Any, head: dict[str, str]) -> Reference:
    if not isinstance(figure, dict):
        raise ReferenceDataError(f"{where}: expected an object, got {type(figure).__name__}")
    unknown = set(figure) - set(_FIGURE_FIELDS)
    if unknown:
        raise ReferenceDataError(f"{where}: unknown field(s) {', '.join(sorted(unknown))}")

    def text(key: str, allowed: tuple[str, ...] | None = None, required: bool = True) -> str | None:
        value = figure.get(key)
        if value is None and not required:
            return None
        if not isinstance(value, str) or not value.strip():
            raise ReferenceDataError(f"{where}: '{key}' must be a non-empty string, not {value!r}")
        if allowed is not None and value not in allowed:
            raise ReferenceDataError(f"{where}: '{key}' {value!r} is not one of {', '.join(allowed)}")
        return value

    def number(key: str, required: bool = True) -> float | None:
        value = figure.get(key)
        if value is None and not required:
            return None
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
            raise ReferenceDataError(f"{where}: '{key}' must be a number, not {value!r}")
        return value

    x, x_unit = number("x", required=False), text("x_unit", X_UNITS, required=False)
    if (x is None) != (x_unit is None):
        raise ReferenceDataError(f"{where}: 'x' and 'x_unit' go together (got x={x!r}, x_unit={x_unit!r})")
    value, value_high = number("value"), number("value_high", required=False)
    if value_high is not None and value_high <= value:
        raise ReferenceDataError(f"{where}: 'value_high' {value_high} must be above 'value' {value}")
    approx = figure.get("approx", False)
    if not isinstance(approx, bool):
        raise ReferenceDataError(f"{where}: 'approx' must be true or false, not {approx!r}")
    return Reference(
        **head,
        experiment=text("experiment", EXPERIMENTS),
        dataset=text("dataset", DATASETS, required=False),
        target=text("target"),
        cache=text("cache", CACHE_STATES, required=False),
        series=text("series"),
        x=x, x_unit=x_unit, value=value, value_high=value_high, approx=approx,
        unit=text("unit", UNITS),
        note=text("note", required=False) or "",
    )


def _number(value: float) -> str:
    return f"{value:,.0f}" if float(value).is_integer() else f"{value:g}"


_SWEEP_UNITS = {"M rows/s": ("rows_per_s", 1e6), "MB/s": ("bytes_per_s", 1e6), "GB/s": ("bytes_per_s", 1e9)}


@dataclass(frozen=True)
class PublishedSweep:
    """A published throughput-vs-users curve, in base units, ready to draw beside a measured one."""

    label: str            # e.g. "report 003, 8 nodes"
    metric: str           # "rows_per_s" or "bytes_per_s"
    users: tuple[float, ...]
    values: tuple[float, ...]


def published_sweeps(workload: str, dataset: str | None = None, folder: str | Path | None = None
                     ) -> list[PublishedSweep]:
    """Every published users sweep (two or more points) of this workload and dataset."""
    groups: dict[tuple[str, str, str, str], list[Reference]] = {}
    for ref in references_for(workload, dataset=dataset, folder=folder):
        if ref.x_unit != "users" or ref.x is None or ref.unit not in _SWEEP_UNITS:
            continue
        groups.setdefault((ref.report, ref.target, ref.series, ref.unit), []).append(ref)
    sweeps = []
    for (report, _target, series, unit), refs in groups.items():
        if len(refs) < 2:
            continue
        metric, scale = _SWEEP_UNITS[unit]
        refs.sort(key=lambda r: r.x)
        sweeps.append(PublishedSweep(f"report {report}, {series}", metric,
                                     tuple(r.x for r in refs), tuple(r.value * scale for r in refs)))
    return sweeps


def published_findings(experiment: str, dataset: str | None = None, folder: str | Path | None = None,
                       target: str | None = None, cache: str | None = None) -> list[str]:
    """The published figures of an experiment as one line each, for a note beside a chart:
    "report 001, dolphindb: query speed vs Druid, typical ~10x". Beside a run (``target`` and
    ``cache`` given), only figures that measure what it measured: of its dataset, or, for a figure
    of no dataset (a disk's read limit, a size ratio), of its own target family and cache state:
    report 000's pickle HDD limit is no figure to set beside a DuckDB run."""
    return [f"report {r.report}, {r.target}: {r.series} {r.value_text}" + (f" ({r.note})" if r.note else "")
            for r in references_for(experiment, folder=folder)
            if (dataset is None or r.dataset in (None, dataset)) and _same_measure(r, target, cache)]


def _same_measure(ref: Reference, target: str | None, cache: str | None) -> bool:
    if ref.dataset is not None or target is None:
        return True
    family = ref.target == target or ref.target.startswith(target + "-")
    return family and (ref.cache is None or cache is None or ref.cache == cache)
