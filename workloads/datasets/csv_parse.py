"""Read a CSV file against a schema into its columns and dtypes (``workloads.datasets.csvread``
names the schema by dataset; an import names its base's).

pyarrow parses the file (multi-threaded) with every needed column as text; each column is then
converted with vectorised Arrow kernels. Temporal and CHAR columns are parsed once per distinct
value (a TAQ day has one date and ~23,400 distinct seconds in hundreds of millions of rows).
Only when a value is bad does anything slow happen: the first bad record is found, and the
file is re-scanned with Python's csv module to turn that record into a 1-based line number.
"""
from __future__ import annotations

import csv
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pcsv

from workloads.datasets._strings import ARROW_STR, arrow_strings
from workloads.datasets.schema import Column, Schema, StringMode

_INTEGERS = {"SHORT": pa.int16(), "INT": pa.int32(), "LONG": pa.int64()}
_FLOATS = {"FLOAT": pa.float32(), "DOUBLE": pa.float64()}
_DATE_RE = r"(?P<y>\d{4})(?:[-./](?P<m1>\d{1,2})[-./](?P<d1>\d{1,2})|(?P<m2>\d{2})(?P<d2>\d{2}))"
_TIME_RE = r"(?P<h>\d{1,2}):(?P<mi>\d{2}):(?P<s>\d{2})(?:\.(?P<f>\d{1,9}))?"
_TIMESTAMP_RE = f"^{_DATE_RE}(?:[ T]{_TIME_RE})?$"
_NS_PER_DAY = 86_400 * 10**9
_TRUNCATE_NS = {"SECOND": 10**9, "TIME": 10**6, "TIMESTAMP": 1, "NANOTIMESTAMP": 1}  # DolphinDB's resolution
_LOCATE_BLOCK = 65_536

_HINTS = {
    "DATE": "is not a date (use YYYY-MM-DD, YYYY.MM.DD or YYYYMMDD)",
    "SECOND": "is not a time of day (use HH:MM:SS)",
    "TIME": "is not a time of day (use HH:MM:SS or HH:MM:SS.mmm)",
    "TIMESTAMP": "is not a timestamp (use YYYY-MM-DD HH:MM:SS[.mmm], or YYYY.MM.DDTHH:MM:SS[.mmm])",
    "NANOTIMESTAMP": "is not a timestamp (use YYYY-MM-DD HH:MM:SS[.nnnnnnnnn])",
    "CHAR": "is not a single character or a character code (-128..127)",
    "BOOL": "is not a boolean (use true/false or 1/0)",
}


class CsvFormatError(ValueError):
    """A CSV file does not fit the dataset's schema; the message names file, line and column."""


def read_schema_csv(path: str | Path, schema: Schema, label: str, mapping: Mapping[str, str] | None = None,
                    strings: StringMode = StringMode.ARROW, *, delimiter: str = ",") -> pd.DataFrame:
    """The whole file as one DataFrame with the schema's columns, in schema order (``label``: the
    schema's name in messages)."""
    source = _CsvSource(Path(path), schema, label, mapping, delimiter)
    try:
        table = pcsv.read_csv(source.path, read_options=source.read_options(),
                              parse_options=source.parse_options(),
                              convert_options=source.convert_options())
    except pa.ArrowInvalid as error:
        raise source.shape_error(error) from None
    return source.frame(table, 0, StringMode.parse(strings))


def iter_schema_csv(path: str | Path, schema: Schema, label: str, mapping: Mapping[str, str] | None = None,
                    chunk_rows: int = 1_000_000, strings: StringMode = StringMode.ARROW, *,
                    delimiter: str = ",") -> Iterator[pd.DataFrame]:
    """The file in DataFrames of at most ``chunk_rows`` rows, for files larger than memory."""
    if chunk_rows < 1:
        raise ValueError("chunk rows must be at least 1")
    strings = StringMode.parse(strings)
    source = _CsvSource(Path(path), schema, label, mapping, delimiter)
    try:
        reader = pcsv.open_csv(source.path, read_options=source.read_options(),
                               parse_options=source.parse_options(),
                               convert_options=source.convert_options())
        pending: list[pa.RecordBatch] = []
        pending_rows = 0
        done = 0
        for batch in reader:
            pending.append(batch)
            pending_rows += batch.num_rows
            while pending_rows >= chunk_rows:
                table = pa.Table.from_batches(pending)
                yield source.frame(table.slice(0, chunk_rows), done, strings)
                done += chunk_rows
                rest = table.slice(chunk_rows)
                pending, pending_rows = rest.to_batches(), rest.num_rows
    except pa.ArrowInvalid as error:
        raise source.shape_error(error) from None
    if pending_rows or done == 0:
        table = pa.Table.from_batches(pending, schema=reader.schema)
        yield source.frame(table, done, strings)


@dataclass
class _BadValue:
    record: int          # 0-based index of the data record in the file
    column: Column
    value: str
    reason: str


class _CsvSource:
    """One CSV file matched against one schema: which CSV column feeds which schema column."""

    def __init__(self, path: Path, schema: Schema, label: str, mapping: Mapping[str, str] | None, delimiter: str):
        self.path = path
        self.name = path.name
        self.schema = schema
        self.dataset_name = label
        self.delimiter = delimiter
        self.header = self._read_header()
        self.source_of = self._match_columns(dict(mapping or {}))

    # --- header ------------------------------------------------------------------------------
    def _read_header(self) -> list[str]:
        with self.path.open(newline="", encoding="utf-8-sig") as handle:
            try:
                header = next(csv.reader(handle, delimiter=self.delimiter))
            except StopIteration:
                raise CsvFormatError(f"{self.name} is empty: expected a header row naming the columns") from None
        return [name.strip() for name in header]

    def _match_columns(self, mapping: dict[str, str]) -> dict[str, str]:
        """schema column -> CSV header name; exact names first, then case-insensitive."""
        by_lower: dict[str, list[str]] = {}
        for name in self.header:
            by_lower.setdefault(name.lower(), []).append(name)
        columns = {c.name.lower(): c.name for c in self.schema.columns}
        source_of: dict[str, str] = {}
        for csv_name, column_name in mapping.items():
            column = columns.get(column_name.lower())
            if column is None:
                raise CsvFormatError(
                    f"{self.name}: the mapping names column {column_name!r}, which the "
                    f"{self.dataset_name} schema does not have (it has {', '.join(self.schema.names)})")
            found = csv_name if csv_name in self.header else _single(by_lower.get(csv_name.lower(), []))
            if found is None:
                raise CsvFormatError(
                    f"{self.name}: the mapping reads {csv_name!r}, which is not in the header "
                    f"({', '.join(self.header)})")
            source_of[column] = found
        for column in self.schema.names:
            if column in source_of:
                continue
            candidates = [column] if column in self.header else by_lower.get(column.lower(), [])
            if len(candidates) > 1:
                raise CsvFormatError(f"{self.name}: the header has {', '.join(candidates)}; "
                                     f"map one of them to {column!r}")
            if candidates:
                source_of[column] = candidates[0]
        missing = [c for c in self.schema.names if c not in source_of]
        if missing:
            raise CsvFormatError(
                f"{self.name}: missing column{'s' if len(missing) > 1 else ''} "
                f"{', '.join(missing)} for the {self.dataset_name} schema; the header has "
                f"{', '.join(self.header) or 'no names'}. Rename them or pass a mapping "
                f"from CSV header to column.")
        used = list(source_of.values())
        duplicated = sorted({n for n in used if self.header.count(n) > 1})
        if duplicated:
            raise CsvFormatError(f"{self.name}: the header repeats {', '.join(duplicated)}")
        return source_of

    # --- pyarrow options ---------------------------------------------------------------------
    def read_options(self) -> pcsv.ReadOptions:
        return pcsv.ReadOptions(use_threads=True, block_size=1 << 24)

    def parse_options(self) -> pcsv.ParseOptions:
        return pcsv.ParseOptions(delimiter=self.delimiter)

    def convert_options(self) -> pcsv.ConvertOptions:
        needed = list(dict.fromkeys(self.source_of.values()))
        return pcsv.ConvertOptions(include_columns=needed, column_types={n: pa.string() for n in needed},
                                   strings_can_be_null=False, quoted_strings_can_be_null=False)

    # --- conversion ----------------------------------------------------------------------------
    def frame(self, table: pa.Table, first_record: int, strings: StringMode) -> pd.DataFrame:
        """Convert one block of text columns; raise for the earliest bad value in it."""
        data: dict[str, object] = {}
        first_bad: _BadValue | None = None
        for column in self.schema.columns:
            text = table.column(self.source_of[column.name])
            values, bad = _convert(text, column, strings)
            if bad is not None and (first_bad is None or bad[0] < first_bad.record):
                first_bad = _BadValue(bad[0], column, text[bad[0]].as_py(), bad[1])
            data[column.name] = values
        if first_bad is not None:
            first_bad.record += first_record
            raise self.value_error(first_bad)
        return pd.DataFrame(data, copy=False)

    # --- errors ----------------------------------------------------------------------------------
    def value_error(self, bad: _BadValue) -> CsvFormatError:
        line = self._line_of_record(bad.record)
        source = self.source_of[bad.column.name]
        label = f"'{source}'" if source == bad.column.name else f"'{source}' ({bad.column.name})"
        value = bad.value if len(bad.value) <= 60 else bad.value[:57] + "..."
        return CsvFormatError(f"{self.name} line {line}, column {label}: {value!r} {bad.reason}")

    def shape_error(self, error: pa.ArrowInvalid) -> CsvFormatError:
        """pyarrow could not split the file into rows: find the first record with a wrong field count."""
        expected = len(self.header)
        for line, fields in self._records():
            if len(fields) != expected:
                return CsvFormatError(f"{self.name} line {line}: expected {expected} fields "
                                      f"as in the header, found {len(fields)}")
        return CsvFormatError(f"{self.name}: {error}")

    def _records(self) -> Iterator[tuple[int, list[str]]]:
        """(first line, fields) of each data record, skipping blank lines as pyarrow does."""
        with self.path.open(newline="", encoding="utf-8-sig", errors="replace") as handle:
            reader = csv.reader(handle, delimiter=self.delimiter)
            next(reader, None)
            line = reader.line_num + 1
            for fields in reader:
                if fields:
                    yield line, fields
                line = reader.line_num + 1

    def _line_of_record(self, record: int) -> int:
        for index, (line, _) in enumerate(self._records()):
            if index == record:
                return line
        return record + 2  # not reached for files pyarrow parsed


def _single(names: list[str]) -> str | None:
    return names[0] if len(names) == 1 else None


def _convert(text: pa.ChunkedArray, column: Column, strings: StringMode):
    """(pandas-ready values, None) or (None, (first bad row, reason))."""
    kind = column.ddb_type
    if column.is_string:
        return _strings(text, strings), None
    if kind in _INTEGERS or kind in _FLOATS:
        return _numbers(text, kind)
    return _by_distinct_value(text, kind)


def _strings(text: pa.ChunkedArray, strings: StringMode):
    if strings is StringMode.ARROW:
        return arrow_strings(text.cast(pa.large_string()))
    if strings is StringMode.OBJECT:
        return pd.Series(text.to_numpy(zero_copy_only=False), dtype=object, copy=False)
    dictionary, codes = _distinct(text)
    return pd.Categorical.from_codes(codes, dtype=pd.CategoricalDtype(pd.Index(dictionary, dtype=ARROW_STR)))


def _numbers(text: pa.ChunkedArray, kind: str):
    target = _INTEGERS.get(kind) or _FLOATS[kind]
    try:
        return _cast(text, target).to_numpy(), None
    except pa.ArrowInvalid:
        pass
    cleaned = pc.utf8_trim_whitespace(text)
    if kind in _FLOATS:
        cleaned = pc.if_else(pc.equal(cleaned, ""), pa.scalar(None, pa.string()), cleaned)  # empty = NaN
    else:
        cleaned = pc.replace_substring_regex(cleaned, r"^\+", "")
    try:
        values = _cast(cleaned, target)
    except pa.ArrowInvalid:
        row = _first_uncastable(cleaned, target)
        return None, (row, _number_reason(text[row].as_py(), kind))
    if kind in _INTEGERS and values.null_count:
        row = int(np.flatnonzero(values.is_null().to_numpy(zero_copy_only=False))[0])
        return None, (row, f"is empty ({kind} columns cannot hold empty values)")
    return values.to_numpy(zero_copy_only=False), None


def _cast(values, target: pa.DataType):
    if isinstance(values, pa.ChunkedArray) and values.num_chunks == 0:
        return pa.array([], type=target)
    return pc.cast(values, target)


def _first_uncastable(values: pa.ChunkedArray, target: pa.DataType) -> int:
    """Index of the first value pyarrow cannot cast: block scan, then bisection in the block."""
    def fails(lo: int, hi: int) -> bool:
        try:
            pc.cast(values.slice(lo, hi - lo), target)
            return False
        except pa.ArrowInvalid:
            return True

    start = 0
    while start < len(values) and not fails(start, min(start + _LOCATE_BLOCK, len(values))):
        start += _LOCATE_BLOCK
    lo, hi = start, min(start + _LOCATE_BLOCK, len(values))
    while hi - lo > 1:  # the failing value lies in [lo, hi)
        mid = (lo + hi) // 2
        if fails(lo, mid):
            hi = mid
        else:
            lo = mid
    return lo


def _number_reason(value: str, kind: str) -> str:
    text = value.strip()
    if not text:
        return f"is empty ({kind} columns cannot hold empty values)"
    if kind in _FLOATS:
        return "is not a number"
    try:
        int(text)
    except ValueError:
        try:
            float(text)
        except ValueError:
            return "is not a number"
        return "is not a whole number"
    info = np.iinfo(_INTEGERS[kind].to_pandas_dtype())
    return f"is out of range for {kind} ({info.min}..{info.max})"


def _distinct(text: pa.ChunkedArray) -> tuple[pa.Array, np.ndarray]:
    """Distinct values and each row's index into them."""
    encoded = pc.dictionary_encode(text)
    if encoded.num_chunks == 0:
        return pa.array([], type=pa.string()), np.empty(0, dtype=np.int32)
    encoded = encoded.unify_dictionaries()
    codes = np.concatenate([chunk.indices.to_numpy(zero_copy_only=False) for chunk in encoded.chunks])
    return encoded.chunk(0).dictionary, codes


def _by_distinct_value(text: pa.ChunkedArray, kind: str):
    """Parse DATE/SECOND/TIME/TIMESTAMP/CHAR/BOOL once per distinct value, then spread to rows."""
    dictionary, codes = _distinct(text)
    trimmed = pc.utf8_trim_whitespace(dictionary)
    if kind == "CHAR":
        parsed, ok = _chars(trimmed)
    elif kind == "BOOL":
        lowered = pc.utf8_lower(trimmed)
        parsed = pc.is_in(lowered, pa.array(["true", "1"])).to_numpy(zero_copy_only=False)
        ok = pc.is_in(lowered, pa.array(["true", "false", "1", "0"])).to_numpy(zero_copy_only=False)
    else:
        parsed, ok = _temporal(trimmed, kind)
    if not ok.all():
        bad_rows = np.flatnonzero(~ok[codes])
        return None, (int(bad_rows[0]), _HINTS[kind])
    return parsed[codes], None


def _chars(values: pa.Array) -> tuple[np.ndarray, np.ndarray]:
    codes = np.zeros(len(values), dtype=np.int8)
    ok = np.zeros(len(values), dtype=bool)
    for i, value in enumerate(values.to_pylist()):  # distinct values only: a handful
        if len(value) == 1 and not value.isdigit() and ord(value) < 128:
            codes[i], ok[i] = ord(value), True
        elif value.lstrip("-").isdigit() and -128 <= int(value) <= 127:
            codes[i], ok[i] = int(value), True
    return codes, ok


def _temporal(values: pa.Array, kind: str) -> tuple[np.ndarray, np.ndarray]:
    """datetime64[ns] per value and whether it parsed: DATE at midnight, SECOND/TIME on 1970-01-01."""
    pattern = f"^{_TIME_RE}$" if kind in ("SECOND", "TIME") else (
        f"^{_DATE_RE}$" if kind == "DATE" else _TIMESTAMP_RE)
    parts = pc.extract_regex(values, pattern)
    ok = parts.is_valid().to_numpy(zero_copy_only=False)
    names = {field.name for field in parts.type}
    ns = np.zeros(len(values), dtype=np.int64)
    if "y" in names:
        day_ns, date_ok = _dates(parts)
        ns += day_ns
        ok &= date_ok
    if "h" in names:
        hours, minutes, seconds = (_ints(parts.field(f)) for f in ("h", "mi", "s"))
        fraction = pc.utf8_rpad(pc.fill_null(parts.field("f"), ""), width=9, padding="0")
        ok &= (hours < 24) & (minutes < 60) & (seconds < 60)
        time_ns = ((hours * 60 + minutes) * 60 + seconds) * 10**9 + _ints(fraction)
        ns += time_ns - time_ns % _TRUNCATE_NS[kind]
    return np.where(ok, ns, 0).view("datetime64[ns]"), ok


def _dates(parts: pa.StructArray) -> tuple[np.ndarray, np.ndarray]:
    """Nanoseconds at midnight of each (y, m, d), and whether that day exists."""
    year = _ints(parts.field("y"))
    month = np.maximum(_ints(parts.field("m1")), _ints(parts.field("m2")))
    day = np.maximum(_ints(parts.field("d1")), _ints(parts.field("d2")))
    ok = (month >= 1) & (month <= 12) & (day >= 1) & (day <= 31)
    months = (year - 1970) * 12 + np.where(ok, month, 1) - 1
    first = months.astype("datetime64[M]").astype("datetime64[D]")
    date = first + (np.where(ok, day, 1) - 1)
    ok &= date.astype("datetime64[M]") == first.astype("datetime64[M]")  # no 30 February
    return date.astype(np.int64) * _NS_PER_DAY, ok


def _ints(strings: pa.Array) -> np.ndarray:
    """Digit strings to int64; missing or empty (a group that did not match) count as 0."""
    cleaned = pc.fill_null(strings, "")
    cleaned = pc.if_else(pc.equal(cleaned, ""), "0", cleaned)
    return pc.cast(cleaned, pa.int64()).to_numpy(zero_copy_only=False)
