"""Importing any tick file as a dataset: ``import_source(path, name, roles)`` makes ``imp_<name>``.

The source is read by ``workloads.datasets.tick_sources`` (CSV, Parquet, Feather, or a folder of them) with
the types the user confirmed, batch by batch; each batch goes to the same per-day builder a built-in-schema
import uses (``csv_import._Builder``): a Parquet file per day, sorted by time, built in a hidden folder and
renamed into place only when everything worked, so a failure or a cancel keeps nothing.

Timestamps: a zone the data carries (ISO offsets, a Parquet column's zone) is converted to UTC and recorded;
zone-less timestamps are taken as written, or in ``zone`` when one is given. Nanoseconds are kept
(NANOTIMESTAMP); a column set to TIMESTAMP keeps milliseconds, as DolphinDB's TIMESTAMP does. Days are UTC days.
Integer times are epoch times (UTC instants, never shifted by ``zone``), in the unit the text format names
or the one their magnitude says (``text_format.epoch_unit``); the manifest records which and why.
"""
from __future__ import annotations

import datetime as dt
import shutil
import threading
import time
import uuid
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from workloads.datasets.builtin import IMPORT_PREFIX as PREFIX
from workloads.datasets.csv_import import (ImportCancelled, ImportFailed, ImportProgress, _Builder,
                                           _disk_full_message, _swap_in, _write_json, content_digest, work_folder)
from workloads.datasets.imported import FORMAT_OWN, MANIFEST, ImportedDataset, check_name, load_import
from workloads.datasets.roles import Roles, arrow_type_of, dataset_info, ddb_type_of, schema_of
from workloads.datasets.schema import Schema
from workloads.datasets.text_format import (EPOCH_WORDS, PLAIN, TextFormat, epoch_to_timestamps, epoch_unit,
                                            time_formats_of)
from workloads.datasets.tick_sources import (MAX_LISTED_BAD_ROWS, BadRow, SourceError, SourcePreview,
                                             preview_source, read_batches)

__all__ = ["ImportCancelled", "ImportFailed", "ImportSourceError", "import_source", "preview_source"]

ImportSourceError = SourceError
_PARSE_TYPES = {"SYMBOL": pa.string(), "STRING": pa.string(), "DATE": pa.date32(), "SECOND": pa.time32("s"),
                "TIME": pa.time64("ns"), "TIMESTAMP": pa.timestamp("ns"), "NANOTIMESTAMP": pa.timestamp("ns")}
_MS = 10**6


def import_source(path: str | Path, name: str, roles: Roles, types: dict[str, str] | None = None,
                  delimiter: str | None = None, zone: str = "", skip_bad_rows: bool = False,
                  progress: ImportProgress | None = None, cancel: threading.Event | None = None,
                  text: TextFormat = PLAIN) -> ImportedDataset:
    """Import ``path`` (file or folder) as ``imp_<name>`` with the user's ``roles`` and column ``types``
    (column -> type; the rest as inferred). Replaces an earlier import of that name only on success.
    Raises SourceError (file, line, column), RoleError, ValueError (a bad name or type), ImportCancelled,
    ImportFailed (disk full)."""
    check_name(name)
    preview = preview_source(path, delimiter, text=text)
    types = dict(types or {})
    epochs = epoch_columns(preview, roles, types)
    for field, proposed in zip(preview.arrow_schema, preview.schema.columns):   # times in the user's format
        if proposed.ddb_type != ddb_type_of(field.type) and field.name not in epochs:
            types.setdefault(field.name, proposed.ddb_type)
    _text_times(preview, roles, types)
    schema = schema_of(preview.arrow_schema, types)
    roles.check(schema, preview.label)
    if zone:
        _check_zone(zone)
    read_types = _read_types(preview, schema, epochs)
    root, work = work_folder(name)
    started = time.perf_counter()
    bad: list[BadRow] = []
    bad_count = [0]

    def on_bad(row: BadRow) -> None:
        bad_count[0] += 1
        if len(bad) < MAX_LISTED_BAD_ROWS:
            bad.append(row)

    try:
        info = dataset_info(PREFIX + name, preview.label, schema, roles)
        builder = _Builder(work, info, preview.path, progress, cancel)
        builder.expected_rows = _expected_rows(preview)
        for batch in read_batches(preview, read_types, skip_bad_rows, on_bad):
            table = _stored(pa.Table.from_batches([batch]), schema, builder.arrow_schema, zone, preview, roles,
                            skip_bad_rows, on_bad, epochs)
            builder.add_table(table)
        if builder.rows == 0:
            skipped = f" ({bad_count[0]:,} skipped as bad)" if bad_count[0] else ""
            raise SourceError(f"{preview.label} has no data rows{skipped}")
        days = builder.finish()
        _write_json(work / MANIFEST, {**_manifest(name, preview, schema, roles, zone, builder, days, bad, bad_count[0],
                                                  types, time.perf_counter() - started, epochs),
                                      "content": content_digest(work)})
        _swap_in(work, root / name)
    except BaseException as exc:
        shutil.rmtree(work, ignore_errors=True)
        from workloads.targets.common.storage import is_disk_full  # the targets package imports datasets
        if is_disk_full(exc):
            raise ImportFailed(_disk_full_message(preview.path, root, name)) from exc
        raise
    return load_import(name)


def _check_zone(zone: str) -> None:
    try:
        pc.assume_timezone(pa.array([0], pa.timestamp("ns")), zone)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        raise ValueError(f"unknown time zone {zone!r}: use a name such as America/New_York or UTC") from None


def epoch_columns(preview: SourcePreview, roles: Roles, types: dict[str, str]) -> dict[str, dict[str, str]]:
    """Integer columns read as epoch times, {column: {"unit": "ns", "from": "option" | "magnitude"}}: the
    time role's when the user left its type (it becomes a timestamp in ``types``), and any the user set to a
    timestamp. A column the user set to a timestamp whose unit cannot be told is refused."""
    found: dict[str, dict[str, str]] = {}
    for field in preview.arrow_schema:
        if not pa.types.is_integer(field.type):
            continue
        chosen = types.get(field.name, "")
        if chosen not in ("TIMESTAMP", "NANOTIMESTAMP") and not (field.name == roles.time and not chosen
                                                                 and not roles.time_of_day):
            continue
        unit, source = preview.text.epoch, "option"
        if not unit:
            unit, source = epoch_unit(pa.array(preview.first_rows[field.name], pa.int64())), "magnitude"
        if unit is None:
            if chosen:
                raise SourceError(f"{preview.label}, column {field.name}: its integers are too small for epoch "
                                  f"times (under 1e8, 1973 in seconds): say their unit (--epoch s, ms, us or ns)")
            continue
        found[field.name] = {"unit": unit, "from": source}
        types.setdefault(field.name, "TIMESTAMP" if unit in ("s", "ms") else "NANOTIMESTAMP")
    return found


def _text_times(preview: SourcePreview, roles: Roles, types: dict[str, str]) -> None:
    """A time role on a text column: read in the user's time format (it becomes a timestamp in
    ``types``), or refused showing its first value and the formats that would read it."""
    name = roles.time
    if roles.time_of_day or name not in preview.arrow_schema.names or types.get(name):
        return
    field = preview.arrow_schema.field(name)
    if not (pa.types.is_string(field.type) or pa.types.is_large_string(field.type)):
        return
    if preview.text.time_format:
        types[name] = "NANOTIMESTAMP" if preview.text.time_format.endswith(".%f") else "TIMESTAMP"
        return
    values = [str(v) for v in preview.first_rows[name].dropna().head(20)]
    guesses = time_formats_of(values) if values else []
    seen = f" ({values[0]!r} in its first row)" if values else ""
    how = (" or ".join(f'--time-format "{g}"' for g in guesses[:2]) if guesses
           else "--time-format with its format in strptime's fields (e.g. %d/%m/%Y %H:%M:%S)")
    raise SourceError(f"{preview.label}: column {name!r} is text{seen}, and the time role needs times: read it "
                      f"with {how}")


def epoch_words(epochs: dict[str, dict[str, str]]) -> str:
    """``exec_time: epoch nanoseconds (from their magnitude)``, for an import's summary."""
    return "; ".join(f"{name}: epoch {EPOCH_WORDS[e['unit']]} ("
                     f"{'from their magnitude' if e['from'] == 'magnitude' else 'as given'})"
                     for name, e in epochs.items())


def _read_types(preview: SourcePreview, schema: Schema, epochs: dict[str, dict[str, str]]) -> dict[str, pa.DataType]:
    """What each column is read as: its inferred type where the user kept it (fast, and a zone's
    offsets parse), else the chosen type's own parse type; an epoch column as its integers."""
    out: dict[str, pa.DataType] = {}
    for field, column in zip(preview.arrow_schema, schema.columns):
        if field.name in epochs:
            out[field.name] = pa.int64()
        elif ddb_type_of(field.type) == column.ddb_type:
            out[field.name] = field.type
        else:
            out[field.name] = _PARSE_TYPES.get(column.ddb_type) or arrow_type_of(column.ddb_type)
    return out


def _stored(table: pa.Table, schema: Schema, stored: pa.Schema, zone: str, preview: SourcePreview, roles: Roles,
            skip_bad_rows: bool, on_bad, epochs: dict[str, dict[str, str]]) -> pa.Table:
    """A batch in the stored form: strings large, every time a naive UTC timestamp[ns] (a DATE at
    midnight, a time of day on 1970-01-01), numbers in the column's type; rows without a time refused."""
    arrays = []
    for column, target in zip(schema.columns, stored):
        values = table.column(column.name).combine_chunks() if table.num_rows else table.column(column.name)
        if column.name in epochs:          # instants: UTC whatever the zone given for written times
            values = _epoch(values, epochs[column.name]["unit"], preview.label, column.name)
            arrays.append(_convert(values, column.ddb_type, target.type, "", preview.label, column.name))
            continue
        arrays.append(_convert(values, column.ddb_type, target.type, zone, preview.label, column.name))
    out = pa.Table.from_arrays(arrays, schema=stored)
    for name in (roles.time, roles.time_of_day):
        if name and out.column(name).null_count:
            missing = pc.is_null(out.column(name))
            if not skip_bad_rows:
                raise SourceError(f"{preview.label}: column {name} is empty on {out.column(name).null_count:,} "
                                  f"row(s): every row needs a time (or skip bad rows)")
            for _ in range(out.column(name).null_count):
                on_bad(BadRow(preview.label, name, "no time"))
            out = out.filter(pc.invert(missing))
    return out


def _convert(values, ddb_type: str, target: pa.DataType, zone: str, label: str, name: str):
    typ = values.type
    try:
        if pa.types.is_dictionary(typ):
            values, typ = values.cast(typ.value_type), typ.value_type
        if target == pa.large_string():
            return values.cast(pa.large_string())
        if ddb_type == "DATE":
            if pa.types.is_timestamp(typ):
                values = pc.floor_temporal(_naive_utc(values, zone), unit="day")
            return values.cast(pa.timestamp("ns"))
        if ddb_type in ("SECOND", "TIME"):
            if pa.types.is_timestamp(typ):        # a timestamp's time of day
                ns = pc.subtract(_naive_utc(values, zone).cast(pa.int64()),
                                 pc.floor_temporal(_naive_utc(values, zone), unit="day").cast(pa.int64()))
            else:
                ns = values.cast(pa.time64("ns")).cast(pa.int64())
            if ddb_type == "SECOND":
                ns = pc.multiply(pc.divide(ns, 10**9), 10**9)
            return ns.cast(pa.timestamp("ns"))
        if ddb_type in ("TIMESTAMP", "NANOTIMESTAMP"):
            stamps = _naive_utc(values if pa.types.is_timestamp(typ) else values.cast(pa.timestamp("ns")), zone)
            if ddb_type == "TIMESTAMP":
                stamps = pc.floor_temporal(stamps, unit="millisecond")
            return stamps.cast(pa.timestamp("ns"))
        return values.cast(target)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as exc:
        raise SourceError(f"{label}, column {name}: its values do not fit {ddb_type} ({str(exc).splitlines()[0]}): "
                          f"choose another type for it") from None


def _epoch(values, unit: str, label: str, name: str):
    try:
        return epoch_to_timestamps(values, unit)
    except ValueError as exc:
        raise SourceError(f"{label}, column {name}: {exc}") from None


def _naive_utc(stamps, zone: str):
    """UTC wall times without a zone: a zone the values carry converted, else ``zone`` assumed."""
    stamps = stamps.cast(pa.timestamp("ns", stamps.type.tz)) if stamps.type.unit != "ns" else stamps
    if stamps.type.tz:
        return stamps.cast(pa.timestamp("ns", "UTC")).cast(pa.timestamp("ns"))
    if zone:                                  # times written without one: the user's zone
        return pc.assume_timezone(stamps, zone, ambiguous="earliest", nonexistent="earliest").cast(
            pa.timestamp("ns", "UTC")).cast(pa.timestamp("ns"))
    return stamps


def _expected_rows(preview: SourcePreview) -> int:
    if preview.format == "csv":
        from workloads.datasets.csv_import import _estimate_rows
        return max(sum(_estimate_rows(f) for f in preview.files), 1)
    import pyarrow.dataset as pds
    return max(pds.dataset([str(f) for f in preview.files],
                           format="ipc" if preview.format == "feather" else "parquet").count_rows(), 1)


def _zone_words(preview: SourcePreview, zone: str, roles: Roles, epochs: dict[str, dict[str, str]]) -> str:
    if roles.time in epochs:
        return "UTC (epoch times are instants)"
    if preview.zone:
        return f"{preview.zone} (the file's zone, stored as UTC)"
    return f"{zone} (given, stored as UTC)" if zone else "none (times as written)"


def _manifest(name: str, preview: SourcePreview, schema: Schema, roles: Roles, zone: str, builder: _Builder,
              days: list[dict[str, Any]], bad: list[BadRow], bad_count: int, types: dict[str, str] | None,
              seconds: float, epochs: dict[str, dict[str, str]]) -> dict[str, Any]:
    first = preview.files[0]
    return {
        "format": FORMAT_OWN, "name": name, "dataset": PREFIX + name, "import_id": uuid.uuid4().hex,
        "source": {"path": str(preview.path.resolve()), "format": preview.format, "files": len(preview.files),
                   "size": preview.bytes, "delimiter": preview.delimiter, "hive": preview.hive,
                   "mtime": dt.datetime.fromtimestamp(first.stat().st_mtime).isoformat()},
        "schema": [[c.name, c.ddb_type] for c in schema.columns],
        "inferred": [[f.name, str(f.type)] for f in preview.arrow_schema],
        "types_chosen": dict(types or {}),
        "roles": roles.to_dict(), "zone": _zone_words(preview, zone, roles, epochs),
        "days": days, "rows": builder.rows,
        "keys": [k for k, _ in builder.key_rows], "key_rows": [n for _, n in builder.key_rows],
        "skipped": {"count": bad_count, "rows": [str(b) for b in bad]},
        "created": dt.datetime.now().isoformat(timespec="seconds"),
        "text_format": preview.text.describe(), "epochs": epochs,
        "seconds": round(seconds, 3),
        "versions": {"pandas": pd.__version__, "pyarrow": pa.__version__},
    }
