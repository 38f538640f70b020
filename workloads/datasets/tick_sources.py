"""A user's tick files as Arrow batches, whatever their schema: a CSV (any delimiter, a header), a
Parquet or Feather/Arrow IPC file, or a folder of them (a file per day, or hive ``date=.../`` folders).

Types are inferred by pyarrow's own readers (a CSV's from its first blocks) and shown for a user to
confirm or change (``workloads.datasets.roles.schema_of``); the batches are then read with the chosen
types, streaming, so memory stays bounded whatever the size. A value that does not convert is named by
file, line and column; with ``skip_bad_rows`` such rows are counted and listed instead.
"""
from __future__ import annotations

import csv
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pcsv
import pyarrow.dataset as pds

from workloads.datasets.roles import Roles, TIMESTAMP_TYPES, TIME_OF_DAY_TYPES, schema_of
from workloads.datasets.schema import Schema
from workloads.datasets.text_format import (PLAIN, TextFormat, formatted_times, offsets_written, parse_times,
                                            unclosed_quote)

FORMATS = {".csv": "csv", ".txt": "csv", ".tsv": "csv", ".parquet": "parquet", ".pq": "parquet",
           ".feather": "feather", ".arrow": "feather", ".ipc": "feather"}
INFER_BYTES = 4 << 20            # a CSV's types are inferred from its first 4 MiB
# CSV blocks read at a time. A 5 GB CSV: 1 MiB (pyarrow's default) 27.0 s, 284 MiB peak; 4 MiB 24.7 s,
# 424 MiB; 16 MiB 26.3 s, 975 MiB (the reader reads ahead several blocks)
BLOCK_BYTES = 4 << 20
MAX_LISTED_BAD_ROWS = 100
_DELIMITERS = (",", ";", "\t", "|")
_KEY_NAMES = ("sym", "symbol", "ticker", "instrument", "securityid", "security_id", "code", "device_id",
              "device", "key", "isin", "ric")
_PRICE_NAMES = ("price", "px", "trade_price", "last", "last_price", "close")
_SIZE_NAMES = ("qty", "size", "quantity", "volume", "shares", "trade_size", "amount")
# a quote's bid and ask prices, and the sizes quoted at them, as files name them
_QUOTE_PRICES = (("bid", "ask"), ("bid", "ofr"), ("bid_px", "ask_px"), ("bid_price", "ask_price"),
                 ("bidprice", "askprice"), ("bidpx", "askpx"))
_QUOTE_SIZES = (("bidsiz", "ofrsiz"), ("bid_sz", "ask_sz"), ("bid_size", "ask_size"), ("bidsize", "asksize"),
                ("bid_qty", "ask_qty"), ("bidsz", "asksz"), ("bidsiz", "asksiz"))


class SourceError(ValueError):
    """A file or folder Tickbench cannot import as it is; the message names it and the problem."""


@dataclass(frozen=True)
class BadRow:
    where: str             # "trades.csv line 1,204" or "day1.parquet row 17"
    column: str
    problem: str

    def __str__(self) -> str:
        return f"{self.where}, column {self.column}: {self.problem}" if self.column else f"{self.where}: {self.problem}"


@dataclass
class SourcePreview:
    path: Path
    format: str                          # csv | parquet | feather
    files: list[Path]
    delimiter: str                       # a CSV's; "" otherwise
    arrow_schema: pa.Schema              # as read (inferred for a CSV)
    schema: Schema                       # the proposed Tickbench types
    first_rows: pd.DataFrame
    zone: str                            # what the file says of its time zone ("" when nothing)
    suggested: Roles | None
    hive: bool = False
    bytes: int = 0
    bad_rows: list[BadRow] = field(default_factory=list)
    text: TextFormat = PLAIN             # how a CSV writes its values (quote, decimal mark, time format, ...)

    @property
    def label(self) -> str:
        return self.path.name or str(self.path)


# --- what the source is ------------------------------------------------------------------------
def _format_of(path: Path) -> str:
    """The format the file's bytes say (its extension must agree)."""
    with path.open("rb") as handle:
        head = handle.read(8)
        if not head:
            raise SourceError(f"{path.name} is empty")
        handle.seek(-min(path.stat().st_size, 6), 2)
        tail = handle.read()
    found = "parquet" if head[:4] == b"PAR1" and tail[-4:] == b"PAR1" else (
        "feather" if head[:6] == b"ARROW1" or head[:4] == b"\xff\xff\xff\xff" else "csv")
    said = FORMATS.get(path.suffix.lower())
    if said is not None and said != found:
        what = {"csv": "text (a CSV?)", "parquet": "a Parquet file", "feather": "an Arrow IPC (Feather) file"}[found]
        raise SourceError(f"{path.name} is not a {said.capitalize()} file as its name says: its bytes are {what}")
    if found == "csv" and b"\x00" in head:
        raise SourceError(f"{path.name} is neither text (a CSV) nor a Parquet or Arrow IPC file")
    return found


def _folder_files(folder: Path) -> tuple[list[Path], bool]:
    files = sorted(p for p in folder.rglob("*") if p.is_file() and p.suffix.lower() in FORMATS
                   and not any(part.startswith((".", "_")) for part in p.relative_to(folder).parts))
    if not files:
        raise SourceError(f"{folder}: no CSV, Parquet or Feather file in the folder")
    hive = any("=" in part for f in files for part in f.relative_to(folder).parts[:-1])
    return files, hive


def sniff_delimiter(path: Path, text: TextFormat = PLAIN) -> str:
    """The delimiter the header and the first rows agree on (comma when nothing else does)."""
    with text.open(path) as handle:
        lines = [line for _, line in zip(range(20), handle) if line.strip()]
    if not lines:
        raise SourceError(f"{path.name} is empty: expected a header row naming the columns")
    best, best_fields = ",", 1
    for delimiter in _DELIMITERS:
        try:
            counts = {len(row) for row in text.reader(lines, delimiter)}
        except csv.Error:               # a quote that runs on: not this delimiter's fault, nor its proof
            continue
        fields = counts.pop() if len(counts) == 1 else 0
        if fields > best_fields:
            best, best_fields = delimiter, fields
    return best


def csv_header(path: Path, delimiter: str, text: TextFormat = PLAIN) -> list[str]:
    with text.open(path) as handle:
        try:
            header = [name.strip() for name in next(text.reader(handle, delimiter))]
        except StopIteration:
            raise SourceError(f"{path.name} is empty: expected a header row naming the columns") from None
        except csv.Error:
            raise SourceError(f"{path.name} line 1: the header's quote never closes: close it, or read the "
                              f"file with another quote character") from None
    _check_names(header, path.name)
    return header


def _check_names(names: list[str], label: str) -> None:
    seen: dict[str, int] = {}
    for index, name in enumerate(names, 1):
        if not name:
            raise SourceError(f"{label}: column {index} has no name: every column needs one in the header")
        if name in seen:
            raise SourceError(f"{label}: two columns are named {name!r} (columns {seen[name]} and {index}): "
                              f"rename one")
        seen[name] = index


# --- preview ---------------------------------------------------------------------------------------
def preview_source(path: str | Path, delimiter: str | None = None, rows: int = 20,
                   text: TextFormat = PLAIN) -> SourcePreview:
    """What is in ``path``, read as cheaply as the format allows: its format, columns and inferred
    types, the first rows, the zone its timestamps carry, and the roles its column names suggest."""
    path = Path(path).expanduser()
    if not path.exists():
        raise SourceError(f"{path}: no such file or folder")
    if path.is_dir():
        files, hive = _folder_files(path)
    else:
        files, hive = [path], False
    formats = {f: _format_of(f) for f in files}
    kinds = set(formats.values())
    if len(kinds) > 1:
        by = {k: next(f for f, v in formats.items() if v == k) for k in kinds}
        raise SourceError(f"{path}: the folder mixes formats ({', '.join(f'{k}: {f.name}' for k, f in by.items())}): "
                          f"import one format at a time")
    fmt = kinds.pop()
    size = sum(f.stat().st_size for f in files)
    if fmt == "csv":
        delimiter = delimiter or sniff_delimiter(files[0], text)
        arrow_schema, first = _csv_sample(files[0], delimiter, rows, text)
        for other in files[1:]:
            _same_schema(path, files[0], arrow_schema, other, _csv_sample(other, delimiter, 1, text)[0])
        zone = _zone_of_text(files[0], delimiter, arrow_schema, text)
    else:
        delimiter = ""
        arrow_schema = _file_schema(files[0], fmt)
        for other in files[1:]:
            _same_schema(path, files[0], arrow_schema, other, _file_schema(other, fmt))
        dataset = _dataset(path if path.is_dir() else files[0], fmt, hive)
        arrow_schema = dataset.schema
        first = dataset.head(rows).to_pandas()
        zones = sorted({str(f.type.tz) for f in arrow_schema if pa.types.is_timestamp(f.type) and f.type.tz})
        zone = ", ".join(zones)
    _check_names(list(arrow_schema.names), path.name)
    if first.empty:
        raise SourceError(f"{files[0].name} has a header but no data rows")
    schema = formatted_times(schema_of(arrow_schema), first, text)
    return SourcePreview(path=path, format=fmt, files=files, delimiter=delimiter, arrow_schema=arrow_schema,
                         schema=schema, first_rows=first, zone=zone, suggested=suggest_roles(schema),
                         hive=hive, bytes=size, text=text)


def _csv_sample(path: Path, delimiter: str, rows: int, text: TextFormat) -> tuple[pa.Schema, pd.DataFrame]:
    header = csv_header(path, delimiter, text)
    size = path.stat().st_size
    try:
        reader = pcsv.open_csv(path, read_options=text.read_options(max(min(size, INFER_BYTES), 1)),
                               # a row of the wrong width is the import's to name (or skip), not the preview's
                               parse_options=text.parse_options(delimiter, lambda row: "skip"),
                               convert_options=text.convert_options())
        schema = reader.schema
        try:
            first = reader.read_next_batch().slice(0, rows).to_pandas()
        except StopIteration:
            first = pd.DataFrame(columns=header)
    except pa.ArrowInvalid as exc:
        raise _located(path, delimiter, header, {}, 0, exc, text) from None
    return schema, first


def _file_schema(path: Path, fmt: str) -> pa.Schema:
    try:
        return pds.dataset(path, format="ipc" if fmt == "feather" else fmt).schema
    except (pa.ArrowInvalid, OSError) as exc:
        raise SourceError(f"{path.name} is not a readable {fmt.capitalize()} file ({_plain(exc)})") from None


def _dataset(path: Path, fmt: str, hive: bool) -> pds.Dataset:
    try:
        return pds.dataset(path, format="ipc" if fmt == "feather" else fmt, partitioning="hive" if hive else None,
                           exclude_invalid_files=False)
    except (pa.ArrowInvalid, OSError) as exc:
        raise SourceError(f"{path.name}: {_plain(exc)}") from None


def _same_schema(folder: Path, first: Path, schema: pa.Schema, other: Path, found: pa.Schema) -> None:
    if found.names != schema.names:
        raise SourceError(f"{folder}: {other.name} has columns {', '.join(found.names)} but {first.name} has "
                          f"{', '.join(schema.names)}: a folder must hold one schema")
    for a, b in zip(schema, found):
        if schema_of(pa.schema([a])) != schema_of(pa.schema([b.with_name(a.name)])):
            raise SourceError(f"{folder}: column {a.name} is {b.type} in {other.name} but {a.type} in "
                              f"{first.name}: a folder must hold one schema")


def _zone_of_text(path: Path, delimiter: str, schema: pa.Schema, text: TextFormat) -> str:
    """A CSV's timestamps parsed with offsets are UTC instants: say which offsets its rows carry."""
    zoned = [i for i, f in enumerate(schema) if pa.types.is_timestamp(f.type) and f.type.tz]
    if not zoned:
        return ""
    offsets = offsets_written(path, delimiter, zoned, text)
    return f"UTC offset {', '.join(offsets)}" if offsets else "UTC"


def suggest_roles(schema: Schema) -> Roles | None:
    """Roles from column names and types: the first timestamp (or DATE + time of day), a key named
    like one, a price, a size. None when there is no time column at all."""
    types = {c.name: c.ddb_type for c in schema.columns}
    lower = {c.name.lower(): c.name for c in schema.columns}
    stamps = [n for n, t in types.items() if t in TIMESTAMP_TYPES]
    dates = [n for n, t in types.items() if t == "DATE"]
    tods = [n for n, t in types.items() if t in TIME_OF_DAY_TYPES]
    if stamps:
        time, tod = stamps[0], ""
    elif dates and tods:
        time, tod = dates[0], tods[0]
    else:
        return None

    def named(names: tuple[str, ...], allowed: set[str]) -> str:
        return next((lower[n] for n in names if n in lower and types[lower[n]] in allowed), "")

    numbers = {"SHORT", "INT", "LONG", "FLOAT", "DOUBLE"}
    key = named(_KEY_NAMES, {"SYMBOL", "STRING", "INT", "LONG"})
    price = named(_PRICE_NAMES, {"FLOAT", "DOUBLE"})
    def pair(candidates: tuple[tuple[str, str], ...]) -> tuple[str, ...]:
        return next((tuple(lower[n] for n in two) for two in candidates
                     if set(two) <= set(lower) and all(types[lower[n]] in numbers for n in two)), ())

    prices: tuple[str, ...] = (price,) if price else pair(_QUOTE_PRICES)
    quote_size = pair(_QUOTE_SIZES) if len(prices) == 2 else ()
    return Roles(time=time, time_of_day=tod, key=key, price=prices, size=named(_SIZE_NAMES, numbers),
                 quote_size=quote_size)


def _plain(exc: BaseException) -> str:
    return str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__


# --- reading with the chosen types ----------------------------------------------------------------------
BadRowSink = Callable[[BadRow], None]


def read_batches(preview: SourcePreview, read_types: dict[str, pa.DataType], skip_bad_rows: bool,
                 on_bad: BadRowSink) -> Iterator[pa.RecordBatch]:
    """Every row of the source as batches with ``read_types`` (column -> Arrow type), streaming.
    A row that does not fit raises SourceError naming file, line and column, unless ``skip_bad_rows``:
    then it goes to ``on_bad`` and is left out."""
    if preview.format == "csv":
        for path in preview.files:
            yield from _csv_batches(path, preview.delimiter, read_types, skip_bad_rows, on_bad, preview.text)
        return
    dataset = _dataset(preview.path if preview.path.is_dir() else preview.files[0], preview.format, preview.hive)
    for fragment in dataset.get_fragments():
        name, row = Path(fragment.path).name, 0
        for batch in fragment.to_batches(schema=dataset.schema):
            yield _cast_batch(batch, read_types, lambda i: f"{name} row {row + i + 1:,}", skip_bad_rows, on_bad,
                              preview.text)
            row += batch.num_rows


def _csv_batches(path: Path, delimiter: str, read_types: dict[str, pa.DataType], skip_bad_rows: bool,
                 on_bad: BadRowSink, text: TextFormat = PLAIN) -> Iterator[pa.RecordBatch]:
    """Typed reads at pyarrow's speed; in skip mode the non-text columns are read as text and cast here,
    so a bad value loses its row only. A quote that never closes is refused in either mode: the rest of
    the file would be one bad row."""
    header = csv_header(path, delimiter, text)
    # skip mode: every column as text (empty and NULL-like values null), cast here row by row; times in
    # the user's format are read as text in either mode and parsed here (pyarrow's parsers know no %f)
    formatted = {n for n, t in read_types.items() if text.time_format and pa.types.is_timestamp(t)}
    convert = {n: pa.string() if n in formatted else t for n, t in read_types.items()} if not skip_bad_rows \
        else {n: pa.string() for n in header}
    runaway = []

    def wrong_width(row) -> str:
        if "\n" in (row.text or "") or "\r" in (row.text or ""):
            runaway.append(row)          # a quote ran on past its line: refused below, not skipped
            return "skip"
        on_bad(BadRow(f"{path.name} line {row.number or '?'}", "", f"{row.actual_columns} fields where the "
                      f"header has {row.expected_columns}: {row.text[:80]!r}"))
        return "skip"

    options = text.parse_options(delimiter, wrong_width if skip_bad_rows else None)
    try:
        reader = pcsv.open_csv(path, parse_options=options,
                               read_options=text.read_options(BLOCK_BYTES, use_threads=not skip_bad_rows),
                               # text stays text: a ticker "NA" is no missing value (a number column's
                               # null markers are read as missing by _cast_text)
                               convert_options=text.convert_options(column_types=convert))
    except pa.ArrowInvalid as exc:
        raise _located(path, delimiter, header, read_types, 0, exc, text) from None
    rows_before = 0
    while True:
        try:
            batch = reader.read_next_batch()
        except StopIteration:
            return
        except pa.ArrowInvalid as exc:
            raise _located(path, delimiter, header, read_types, rows_before, exc, text) from None
        if runaway:
            raise _quote_error(path, delimiter, text) or SourceError(
                f"{path.name}: a quote never closes ({runaway[0].text[:80]!r})")
        read = batch.num_rows
        if skip_bad_rows or formatted:   # lines from the rows read (a skipped row of the wrong width shifts them)
            batch = _cast_batch(batch, read_types, lambda i, b=rows_before: f"{path.name} line {b + i + 2:,}",
                                skip_bad_rows, on_bad, text)
        rows_before += read
        yield batch


def _quote_error(path: Path, delimiter: str, text: TextFormat) -> SourceError | None:
    found = unclosed_quote(path, text, delimiter)
    if found is None:
        return None
    first, last = found
    return SourceError(f"{path.name} line {first:,}: a quote opened in this row never closes (it swallows the lines "
                       f"after it, at least to line {last:,}); close it, or read the file with --quote none if it "
                       f"quotes nothing")


def _cast_batch(batch: pa.RecordBatch, read_types: dict[str, pa.DataType], where: Callable[[int], str],
                skip_bad_rows: bool, on_bad: BadRowSink, text: TextFormat = PLAIN) -> pa.RecordBatch:
    """``batch`` with ``read_types``; a value that does not cast is a SourceError, or (skip mode) its row
    is reported and left out."""
    keep = None
    columns = []
    for name, column in zip(batch.schema.names, batch.columns):
        want = read_types.get(name, column.type)
        try:
            columns.append(column if column.type == want else _cast_text(column, want, text))
            continue
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
            if not skip_bad_rows:
                bad = _first_bad(column, want, text)
                raise SourceError(f"{where(bad)}, column {name}: {column[bad].as_py()!r} is not "
                                  f"{_type_words(want, text)}; fix the row, set the column's type, or skip bad "
                                  f"rows") from None
        good = _castable(column, want, text)
        for index in pc.indices_nonzero(pc.invert(good)).to_pylist():
            on_bad(BadRow(where(index), name, f"{column[index].as_py()!r} is not {_type_words(want, text)}"))
        keep = good if keep is None else pc.and_(keep, good)
        columns.append(column)
    if keep is None:
        return pa.RecordBatch.from_arrays(columns, names=batch.schema.names)
    return _cast_batch(batch.filter(keep), read_types, where, False, on_bad, text)   # every value now casts


def _cast_text(column: pa.Array, want: pa.DataType, text: TextFormat) -> pa.Array:
    """A text column (skip mode reads every column as text) as ``want``, read as the file writes it:
    with its time format, with its decimal comma."""
    if (pa.types.is_string(column.type) or pa.types.is_large_string(column.type)) and not (
            pa.types.is_string(want) or pa.types.is_large_string(want)):
        # what pyarrow's typed read takes as missing ("", NA, NULL, ... or the user's markers)
        column = pc.if_else(pc.is_in(column, pa.array(text.null_markers(), column.type)),
                            pa.scalar(None, column.type), column)
        if pa.types.is_timestamp(want) and text.time_format:
            try:
                return parse_times(column, text.time_format).cast(want)
            except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as not_in_format:
                try:                      # a column of ISO times beside the formatted one
                    return pc.cast(column, want)
                except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
                    raise not_in_format from None       # the user's format is the one to name
        if pa.types.is_floating(want) and text.decimal == ",":
            column = pc.replace_substring(column, ",", ".")
    return pc.cast(column, want)


def _castable(column: pa.Array, want: pa.DataType, text: TextFormat = PLAIN) -> pa.Array:
    """Which values cast to ``want`` (nulls do), found by halving: a few casts per bad value."""
    flags = [True] * len(column)

    def visit(lo: int, hi: int) -> None:
        try:
            _cast_text(column.slice(lo, hi - lo), want, text)
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
            if hi - lo == 1:
                flags[lo] = False
                return
            mid = (lo + hi) // 2
            visit(lo, mid)
            visit(mid, hi)

    visit(0, len(column))
    return pa.array(flags)


def _first_bad(column: pa.Array, want: pa.DataType, text: TextFormat = PLAIN) -> int:
    lo, hi = 0, len(column)
    while hi - lo > 1:                       # the first half that fails holds the first bad value
        mid = (lo + hi) // 2
        try:
            _cast_text(column.slice(lo, mid - lo), want, text)
            lo = mid
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
            hi = mid
    return lo


def _type_words(typ: pa.DataType, text: TextFormat = PLAIN) -> str:
    if pa.types.is_timestamp(typ):
        return text.time_words()
    if pa.types.is_time(typ):
        return "a time of day (HH:MM:SS[.fff])"
    if pa.types.is_date(typ):
        return "a date (YYYY-MM-DD)"
    if pa.types.is_integer(typ):
        return "an integer"
    if pa.types.is_floating(typ):
        return "a number" + (" with a decimal comma (from --decimal)" if text.decimal == "," else "")
    if pa.types.is_boolean(typ):
        return "true or false"
    return f"a {typ}"


def _located(path: Path, delimiter: str, header: list[str], read_types: dict[str, pa.DataType], rows_before: int,
             exc: BaseException, text: TextFormat = PLAIN) -> SourceError:
    """pyarrow's message names a column (or a row's width) but no line: find the line by reading the
    file with Python's csv module from the failing block on (the error path only)."""
    said = _plain(exc)
    column = re.search(r"In CSV column #(\d+)", said)
    if column is None:                   # a row of the wrong width: a quote that never closes makes one
        quote = _quote_error(path, delimiter, text)
        if quote is not None:
            return quote
    with text.open(path) as handle:
        reader = text.reader(handle, delimiter)
        try:
            next(reader, None)
            for index, row in enumerate(reader):
                if index < rows_before or not row:
                    continue
                number = reader.line_num
                if len(row) != len(header):
                    return SourceError(f"{path.name} line {number:,}: {len(row)} fields where the header has "
                                       f"{len(header)}; fix the row or skip bad rows")
                if column is not None:
                    name = header[int(column.group(1))]
                    value = row[int(column.group(1))]
                    want = read_types.get(name)
                    if want is not None and value != "" and value not in text.nulls:
                        try:
                            _cast_text(pa.array([value]), want, text)
                        except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
                            return SourceError(f"{path.name} line {number:,}, column {name}: {value!r} is not "
                                               f"{_type_words(want, text)}; fix the row, set the column's type, "
                                               f"or skip bad rows")
        except csv.Error:
            return _quote_error(path, delimiter, text) or SourceError(f"{path.name}: {said}")
    return SourceError(f"{path.name}: {said}")
