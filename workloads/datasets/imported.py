"""Users' own CSV files as first-class datasets: ``import_csv`` once, then benchmark ``imp_<name>``.

An import is read against a built-in dataset's schema (``taq``, ``level2``, ``devices``,
``api45``) and stored under ``<data dir>/imports/<name>/``: one Parquet file per trading day,
sorted by the time column (stable: rows of one time keep their file order), and ``manifest.json``
(base dataset, source file, days and rows per day, keys by row count, schema). Every target and
worker process then gets the data through ``get_dataset("imp_<name>")`` like generated data, in
the same DataFrame conventions (``workloads.datasets.schema``).

Scale for an import: ``days`` takes the first that many imported days (from ``start`` when it is
set); ``rows_per_day``, ``symbols`` and ``seed`` are ignored: the real counts come from the file.

Here: names and folders of imports, ``ImportedDataset`` and finding imports (``load_import``,
``list_imports``, ``remove_import``); importing a CSV is ``workloads.datasets.csv_import``.
"""
from __future__ import annotations

import datetime as dt
import json
import os
import re
import shutil
import threading
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from workloads.datasets._strings import ARROW_STR
from workloads.datasets.base import Dataset
from workloads.datasets.builtin import DATASETS, IMPORT_PREFIX as PREFIX
from workloads.datasets.schema import Column, DatasetInfo, Scale, Schema, StringMode, apply_string_mode
from workloads.names import check_name as check_names_rule
from workloads.paths import data_dir
from workloads.text import plural

NAME_RULE = re.compile(r"[a-z][a-z0-9_]{0,39}")  # matched whole: fullmatch
MANIFEST = "manifest.json"
FORMAT = 1                       # an import read against a built-in schema; bump when its layout changes
FORMAT_OWN = 2                   # an import in its own schema, with roles (``tick_import``)
_SHORT_BASE = {"taq": "TAQ", "level2": "level 2", "devices": "devices", "api45": "api45"}
_DROPPED_EXTRA = ("default_start", "seed_rows_per_day", "seed_symbols", "info_table")


def _content(manifest: dict[str, Any]) -> str:
    """The import's content digest; an import made before digests were kept is known by its id."""
    return str(manifest.get("content") or f"import {manifest['import_id']}")


# --- names and folders ---------------------------------------------------------------------------
def imports_dir() -> Path:
    """``<data dir>/imports``; worker processes inherit ``TICKBENCH_HOME`` and find the same one."""
    return data_dir() / "imports"


def check_name(name: str) -> str:
    """``name`` if an import may take it: the letters below, and a name every OS can hold
    (``workloads.names``: ``con`` or ``nul`` is a Windows device)."""
    if not isinstance(name, str) or not NAME_RULE.fullmatch(name):
        raise ValueError(f"import name {name!r} is not valid: use 1-40 lower-case letters, digits "
                         f"and underscores, starting with a letter (e.g. myquotes)")
    return check_names_rule(name, "import name")


def registry_name(name: str) -> str:
    """The dataset name to run with: ``imp_<name>``."""
    return PREFIX + check_name(name)


def short_name(registry: str) -> str:
    """``imp_myquotes`` -> ``myquotes``; ValueError for anything else."""
    if not registry.startswith(PREFIX):
        raise ValueError(f"{registry!r} is not an imported dataset's name (they start with {PREFIX})")
    return check_name(registry[len(PREFIX):])


def suggest_name(path: str | Path) -> str:
    """An import name made from a file name: ``Quotes 2007-08.csv`` -> ``quotes_2007_08``."""
    text = re.sub(r"[^a-z0-9_]+", "_", Path(path).stem.lower()).strip("_")
    if not text or not text[0].isalpha():
        text = "data_" + text if text else "data"
    return text[:40].rstrip("_") or "data"


# --- the stored dataset ----------------------------------------------------------------------------
class ImportedDataset(Dataset):
    """An imported CSV, read back day by day from its Parquet files."""

    def __init__(self, folder: Path, manifest: dict[str, Any]):
        self.folder = Path(folder)
        self.manifest = manifest
        self.name: str = manifest["name"]
        days = manifest["days"]
        if "roles" in manifest:
            self.base = ""
            self.info = self._own_info(manifest)
        else:
            self.base = manifest["base"]
            self.info = self._base_info(manifest)
        self._days = [dt.date.fromisoformat(d["date"]) for d in days]
        self._entries = {d: entry for d, entry in zip(self._days, days)}
        self._keys = [str(k) for k in manifest["keys"]]

    def size_words(self) -> str:
        """``300,000 rows over 3 days, 20 keys``: the import's own size, as a form shows it."""
        keys = len(self._keys)
        return (f"{self.rows:,} rows over {plural(len(self._days), 'day')}"
                + (f", {plural(keys, 'key')}" if keys else ""))

    def _base_info(self, manifest: dict[str, Any]) -> DatasetInfo:
        """An import read against a built-in dataset's schema: that dataset's columns and roles."""
        days = manifest["days"]
        base = DATASETS[self.base].info
        stored = [tuple(c) for c in manifest["schema"]]
        if stored != [(c.name, c.ddb_type) for c in base.schema.columns]:
            raise ValueError(f"import {self.name!r} in {self.folder} was made with another {self.base} "
                             f"schema: import the CSV again")
        extra = {k: v for k, v in base.extra.items() if k not in _DROPPED_EXTRA}
        extra.update(imported=True, import_id=manifest["import_id"], content=_content(manifest), base=self.base,
                     source=manifest["source"]["path"], default_start=days[0]["date"])
        return DatasetInfo(
            name=PREFIX + self.name,
            title=f"{Path(manifest['source']['path']).name} (imported {_SHORT_BASE.get(self.base, self.base)})",
            schema=base.schema, date_column=base.date_column, key_column=base.key_column,
            time_column=base.time_column, price_columns=base.price_columns,
            notes=(f"Imported from {manifest['source']['path']} on {manifest['created'][:16].replace('T', ' ')}: "
                   f"{manifest['rows']:,} rows over {len(days)} day{'s' if len(days) != 1 else ''}, "
                   f"{len(manifest['keys']):,} keys, {base.title} schema. The scale's days pick the "
                   f"first imported days; its rows per day and symbols are ignored."),
            extra=extra)

    def _own_info(self, manifest: dict[str, Any]) -> DatasetInfo:
        """An import in its own schema: its columns as stored, its roles as the user named them."""
        from workloads.datasets.roles import Roles, dataset_info
        days = manifest["days"]
        schema = Schema(tuple(Column(str(n), str(t)) for n, t in manifest["schema"]))
        roles = Roles.from_dict(manifest["roles"])
        roles.check(schema, f"import {self.name!r}")
        source = Path(manifest["source"]["path"]).name
        skipped = int(manifest.get("skipped", {}).get("count", 0))
        keys = f"{len(manifest['keys']):,} keys" if roles.key else "no key column"
        return dataset_info(
            PREFIX + self.name, f"{source} (imported)", schema, roles,
            notes=(f"Imported from {manifest['source']['path']} on {manifest['created'][:16].replace('T', ' ')}: "
                   f"{manifest['rows']:,} rows over {len(days)} day{'s' if len(days) != 1 else ''}, {keys}; "
                   f"{len(schema.columns)} columns ({roles.describe()}); time zone {manifest.get('zone') or 'none'}"
                   + (f"; {skipped:,} bad rows skipped" if skipped else "") + ". The scale's days pick the first "
                   "imported days; its rows per day and symbols are ignored."),
            extra={"imported": True, "import_id": manifest["import_id"], "content": _content(manifest),
                   "source": manifest["source"]["path"],
                   "default_start": days[0]["date"], "zone": manifest.get("zone", "")})

    # --- facts from the manifest ---
    @property
    def rows(self) -> int:
        return int(self.manifest["rows"])

    @property
    def all_days(self) -> list[dt.date]:
        return list(self._days)

    @property
    def all_keys(self) -> list[str]:
        return list(self._keys)

    @property
    def source(self) -> dict[str, Any]:
        return dict(self.manifest["source"])

    def footprint(self) -> int:
        return sum(int(e["bytes"]) for e in self.manifest["days"])

    # --- the Dataset interface ---
    def trading_days(self, scale: Scale) -> list[dt.date]:
        """The first ``scale.days`` imported days (from ``scale.start`` when set); fewer if the
        file has fewer."""
        days = self._days
        if scale.start:
            try:
                first = dt.date.fromisoformat(scale.start)
            except ValueError:
                raise ValueError(f"start day {scale.start!r} is not a date: use YYYY-MM-DD") from None
            days = [d for d in days if d >= first]
            if not days:
                raise ValueError(f"{self.info.name} has no day on or after {first} "
                                 f"(its days: {self._days[0]} .. {self._days[-1]})")
        return days[:scale.days]

    def keys(self, scale: Scale) -> list[str]:
        """Every key of the file, most rows first (the scale's symbols are ignored)."""
        return list(self._keys)

    def day_rows(self, scale: Scale) -> list[int]:
        """Rows of each of ``trading_days(scale)``: what sizing estimates should use."""
        return [int(self._entries[d]["rows"]) for d in self.trading_days(scale)]

    def generate_day(self, day_index: int, scale: Scale, strings: StringMode = StringMode.ARROW,
                     chunk_rows: int = 1_000_000) -> Iterator[pd.DataFrame]:
        strings = StringMode.parse(strings)
        days = self.trading_days(scale)
        if not 0 <= day_index < len(days):
            raise ValueError(f"day index {day_index} is outside the {plural(len(days), 'day')} of "
                             f"{self.info.name} at this scale")
        if chunk_rows < 1:
            raise ValueError("chunk rows must be at least 1")
        path = self.folder / self._entries[days[day_index]]["file"]
        try:
            parquet = pq.ParquetFile(path)
        except FileNotFoundError:
            raise FileNotFoundError(f"{path} is missing: import the CSV again") from None
        with parquet:
            for batch in parquet.iter_batches(batch_size=chunk_rows):
                yield _frame(batch, self.info.schema, strings)


def _frame(batch: pa.RecordBatch, schema: Schema, strings: StringMode) -> pd.DataFrame:
    """One stored batch as a generator-like chunk: schema dtypes, strings in ``strings``."""
    frame = batch.to_pandas(types_mapper=_arrow_str, date_as_object=False, coerce_temporal_nanoseconds=True)
    return apply_string_mode(frame, schema, strings) if strings is not StringMode.ARROW else frame


def _arrow_str(typ: pa.DataType):
    return ARROW_STR if pa.types.is_large_string(typ) or pa.types.is_string(typ) else None


# --- finding imports -------------------------------------------------------------------------------
_loaded: dict[Path, tuple[tuple[int, int, int], ImportedDataset]] = {}
_loaded_lock = threading.Lock()


def load_import(name: str) -> ImportedDataset:
    """The import ``name`` (``myquotes`` or ``imp_myquotes``) from disk; ValueError naming the
    folder searched when it is not there."""
    short = short_name(name) if name.startswith(PREFIX) else check_name(name)
    folder = imports_dir() / short
    path = folder / MANIFEST
    try:
        stat = path.stat()
    except FileNotFoundError:
        have = ", ".join(PREFIX + d.name for d in _import_folders()) or "none"
        raise ValueError(f"unknown dataset {PREFIX + short!r}: no import named {short!r} in "
                         f"{imports_dir()} (imports there: {have})") from None
    stamp = (stat.st_ino, stat.st_mtime_ns, stat.st_size)  # a re-import is a new file
    with _loaded_lock:
        cached = _loaded.get(path)
    if cached and cached[0] == stamp:
        return _as_paired(cached[1])
    try:
        manifest = json.loads(path.read_text(encoding="utf-8"))
        if manifest.get("format") not in (FORMAT, FORMAT_OWN):
            raise ValueError(f"stored format {manifest.get('format')!r}, this version reads {FORMAT} and {FORMAT_OWN}")
        dataset = ImportedDataset(folder, manifest)
    except (OSError, KeyError, TypeError, IndexError, ValueError) as exc:
        raise ValueError(f"import {short!r} in {folder} is damaged ({exc}): import the CSV again") from None
    with _loaded_lock:
        _loaded[path] = (stamp, dataset)
    return _as_paired(dataset)


def _as_paired(dataset: ImportedDataset):
    """Trades imported with ``--trades-of QUOTES``: the pair (``tick_pair``), made again each time from
    the quotes' own current import (which may have changed since); any other import as it is."""
    pair = dataset.manifest.get("pair")
    if not pair:
        return dataset
    from workloads.datasets.tick_pair import TickPair
    trades = dataset
    quotes_name = str(pair.get("quotes", ""))
    again = f"import the trades again with --trades-of {quotes_name.removeprefix(PREFIX)} --replace"
    try:
        quotes = load_import(quotes_name)
    except ValueError:
        raise ValueError(f"{trades.info.name} pairs trades with the quotes {quotes_name}, which are gone: "
                         f"{again}") from None
    if quotes.info.extra.get("content") != pair.get("quotes_content"):
        raise ValueError(f"{trades.info.name}: the quotes {quotes_name} were imported again since the trades were "
                         f"paired with them: {again}")
    try:
        return TickPair(trades.info.name, trades, quotes, pair)
    except (KeyError, TypeError, ValueError) as exc:
        raise ValueError(f"{trades.info.name} cannot pair its trades with {quotes_name} ({exc}): {again}") from None


def _import_folders() -> list[Path]:
    root = imports_dir()
    if not root.is_dir():
        return []
    return sorted(p for p in root.iterdir() if p.is_dir() and NAME_RULE.fullmatch(p.name)
                  and (p / MANIFEST).is_file())


def list_imports() -> list[ImportedDataset]:
    """Every readable import, by name. Damaged ones are left out (``load_import`` says why)."""
    found = []
    for folder in _import_folders():
        try:
            found.append(load_import(folder.name))
        except ValueError:
            continue
    return found


def remove_import(name: str) -> None:
    """Delete an import (``myquotes`` or ``imp_myquotes``); ValueError when there is none."""
    short = short_name(name) if name.startswith(PREFIX) else check_name(name)
    folder = imports_dir() / short
    if not (folder / MANIFEST).is_file():
        raise ValueError(f"no import named {short!r} in {imports_dir()}")
    doomed = folder.with_name(f".del-{short}-{os.getpid()}-{uuid.uuid4().hex[:8]}")
    os.rename(folder, doomed)   # gone from view at once; the files go next
    shutil.rmtree(doomed, ignore_errors=True)
