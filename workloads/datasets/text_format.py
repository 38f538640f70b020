"""How a text (CSV) file writes its values, as a user says it: the options pyarrow's and DuckDB's CSV
readers offer (quote, escape, null markers, encoding, decimal comma), an explicit time format
(``%d/%m/%Y %H:%M:%S``) and the unit of integer times (epoch seconds, milliseconds, microseconds or
nanoseconds). One ``TextFormat`` gives both readers of a file their options: pyarrow's (the fast
path) and Python's ``csv`` module's (the error path, which finds a bad value's line), so the two
always split the file alike.
"""
from __future__ import annotations

import codecs
import csv
import re
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pcsv

from workloads.datasets.schema import Column, Schema

# nanoseconds per unit of an integer time, and the magnitudes that say which unit a value is in: an
# epoch time of 1973-5138 is 1e8-1e11 in seconds, 1e11-1e14 in ms, 1e14-1e17 in us, from 1e17 in ns
EPOCH_UNITS = {"s": 10**9, "ms": 10**6, "us": 10**3, "ns": 1}
_EPOCH_FROM = {"s": 1e8, "ms": 1e11, "us": 1e14, "ns": 1e17}
EPOCH_WORDS = {"s": "seconds", "ms": "milliseconds", "us": "microseconds", "ns": "nanoseconds"}
_OFFSET = re.compile(r"(Z|[+-]\d\d:?\d\d)$")
_EDGE_ROWS = 2_000


class TextFormatError(ValueError):
    """An option of the text format that cannot be used (two characters for a quote, an unknown encoding)."""


@dataclass(frozen=True)
class TextFormat:
    quote: str = '"'                  # "" when the file quotes nothing
    escape: str = ""                  # "" when a doubled quote is the only escape
    nulls: tuple[str, ...] = ()       # values read as missing; () for pyarrow's own list ("", NA, NULL, ...)
    encoding: str = "utf-8"
    decimal: str = "."                # "," for a decimal comma (168,6521)
    time_format: str = ""             # strptime format of the timestamps; "" for ISO 8601
    epoch: str = ""                   # the unit of integer times; "" to find it from their magnitude

    def __post_init__(self) -> None:
        for name in ("quote", "escape"):
            if len(getattr(self, name)) > 1:
                raise TextFormatError(f"the {name} character must be one character, not {getattr(self, name)!r}")
        if self.decimal not in (".", ","):
            raise TextFormatError(f"the decimal mark must be '.' or ',', not {self.decimal!r}")
        if self.epoch and self.epoch not in EPOCH_UNITS:
            raise TextFormatError(f"the epoch unit must be one of {', '.join(EPOCH_UNITS)}, not {self.epoch!r}")
        try:
            codecs.lookup(self.encoding)
        except LookupError:
            raise TextFormatError(f"unknown encoding {self.encoding!r}: use a name such as utf-8, latin-1 "
                                  f"or cp1252") from None
        if self.time_format and "%" not in self.time_format:
            raise TextFormatError(f"the time format {self.time_format!r} has no % field: write it as strptime "
                                  f"does, e.g. %d/%m/%Y %H:%M:%S")
        if "%f" in self.time_format and not self.time_format.endswith(".%f"):
            raise TextFormatError(f"the time format {self.time_format!r}: %f (the fraction of a second) can "
                                  f"only end it, after a '.': e.g. %d/%m/%Y %H:%M:%S.%f")

    # --- pyarrow's reader -------------------------------------------------------------------------
    def read_options(self, block_size: int, use_threads: bool = True) -> pcsv.ReadOptions:
        return pcsv.ReadOptions(block_size=block_size, use_threads=use_threads, encoding=self._arrow_encoding())

    def parse_options(self, delimiter: str, invalid_row_handler=None) -> pcsv.ParseOptions:
        return pcsv.ParseOptions(delimiter=delimiter, quote_char=self.quote or False,
                                 escape_char=self.escape or False, invalid_row_handler=invalid_row_handler)

    def convert_options(self, **options: Any) -> pcsv.ConvertOptions:
        if self.nulls:
            options["null_values"] = list(self.nulls)
        # a time format is not given to pyarrow: its parsers know no fraction of a second (%f); the
        # columns in it are read as text and parsed by ``parse_times``
        return pcsv.ConvertOptions(decimal_point=self.decimal, **options)

    def null_markers(self) -> list[str]:
        """The values read as missing in a column of numbers or times: the user's, else pyarrow's."""
        return list(self.nulls) if self.nulls else list(pcsv.ConvertOptions().null_values)

    def _arrow_encoding(self) -> str:
        name = codecs.lookup(self.encoding).name
        return "utf8" if name in ("utf-8", "utf-8-sig") else name

    # --- Python's reader (the error path) -------------------------------------------------------------
    def open(self, path: Path) -> IO[str]:
        encoding = "utf-8-sig" if codecs.lookup(self.encoding).name in ("utf-8", "utf-8-sig") else self.encoding
        return path.open(newline="", encoding=encoding, errors="replace")

    def reader(self, handle: IO[str], delimiter: str):
        if not self.quote:
            return csv.reader(handle, delimiter=delimiter, quoting=csv.QUOTE_NONE, escapechar=self.escape or None)
        return csv.reader(handle, delimiter=delimiter, quotechar=self.quote, escapechar=self.escape or None,
                          doublequote=True)

    # --- what it says ----------------------------------------------------------------------------------
    def time_words(self) -> str:
        """What a timestamp value must look like, for a refusal."""
        if self.time_format:
            return f"a time in the format {self.time_format} (from --time-format)"
        return "a timestamp (ISO 8601: 2024-03-04T09:30:00.123456789, with -05:00 or Z for a zone)"

    def describe(self) -> dict[str, Any]:
        """The options that differ from a plain CSV's, for an import's manifest and summary."""
        plain = TextFormat()
        return {name: list(value) if isinstance(value, tuple) else value
                for name, value in vars(self).items() if value != getattr(plain, name)}


PLAIN = TextFormat()


_FRACTION = r"^(?P<head>.*?)(?:\.(?P<fraction>\d{1,9}))?$"


def parse_times(values: pa.Array | pa.ChunkedArray, time_format: str) -> pa.Array | pa.ChunkedArray:
    """Text times in ``time_format`` (strptime's fields; ``.%f`` at the end for a fraction of a second,
    up to nanoseconds) as timestamps in ns, no zone. Raises ``pa.ArrowInvalid`` when a value does not
    fit (``pc.strptime``'s own error)."""
    values = pc.utf8_trim_whitespace(values)
    if not time_format.endswith(".%f"):
        return pc.strptime(values, format=time_format, unit="ns", error_is_null=False)
    parts = pc.extract_regex(values, _FRACTION)
    seconds = pc.strptime(parts.field("head"), format=time_format[:-3], unit="ns", error_is_null=False)
    digits = pc.utf8_rpad(pc.if_else(pc.equal(parts.field("fraction"), ""), "0", parts.field("fraction")), 9, "0")
    return pc.add(seconds.cast(pa.int64()), digits.cast(pa.int64())).cast(pa.timestamp("ns"))


def formatted_times(schema: Schema, first: pd.DataFrame, text: TextFormat) -> Schema:
    """The proposed types with each text column whose first values are all times in the user's time
    format proposed as a timestamp (nanoseconds when the format has a fraction of a second)."""
    if not text.time_format or first.empty:
        return schema
    wanted = "NANOTIMESTAMP" if text.time_format.endswith(".%f") else "TIMESTAMP"
    columns = []
    for column in schema.columns:
        values = first[column.name].dropna().astype(str).tolist() if column.is_string else []
        if values and all_in_format(values, text.time_format):
            column = Column(column.name, wanted)
        columns.append(column)
    return Schema(tuple(columns))


def unclosed_quote(path: Path, text: TextFormat, delimiter: str) -> tuple[int, int] | None:
    """(first line, last line) of the first record whose quote never closes where its line ends: a
    record Python's reader takes over several lines (values never hold line breaks here: pyarrow
    reads without ``newlines_in_values``), or one it cannot read at all. None when every quote closes."""
    if not text.quote:
        return None
    with text.open(path) as handle:
        reader = text.reader(handle, delimiter)
        start = 1
        while True:
            try:
                row = next(reader)
            except StopIteration:
                return None
            except csv.Error:            # e.g. a field past the csv module's limit: the quote ran on
                return start, reader.line_num
            if row and reader.line_num > start:
                return start, reader.line_num
            start = reader.line_num + 1


_GUESSES = ("%d/%m/%Y %H:%M:%S", "%m/%d/%Y %H:%M:%S", "%d.%m.%Y %H:%M:%S", "%d-%m-%Y %H:%M:%S",
            "%Y/%m/%d %H:%M:%S", "%d/%m/%Y %H:%M", "%m/%d/%Y %H:%M", "%d/%m/%Y", "%m/%d/%Y", "%d.%m.%Y")


def time_formats_of(values: list[str]) -> list[str]:
    """The common formats every one of ``values`` parses in (``.%f`` added where they carry a fraction of
    a second): what to suggest for a time column read as text. Two when day and month could swap."""
    fraction = any("." in v.rsplit(":", 1)[-1] for v in values if ":" in v)
    candidates = [guess + ".%f" if fraction and guess.endswith("%S") else guess for guess in _GUESSES]
    return [candidate for candidate in candidates if all_in_format(values, candidate)]


def all_in_format(values: list[str], time_format: str) -> bool:
    """Whether every one of ``values`` is a time in ``time_format`` (``parse_times``' rules)."""
    try:
        parse_times(pa.array(values, pa.string()), time_format)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        return False
    return True


def epoch_unit(values: pa.Array | pa.ChunkedArray) -> str | None:
    """The unit integer times are in, from the magnitude of their median: None when it is below an
    epoch time in seconds of 1973 (not times at all, or times too small to tell)."""
    present = pc.drop_null(values)
    if len(present) == 0:
        return None
    middle = float(np.median(np.abs(present.to_numpy(zero_copy_only=False).astype(np.float64))))
    found = None
    for unit, start in _EPOCH_FROM.items():
        if middle >= start:
            found = unit
    return found


def epoch_to_timestamps(values: pa.Array | pa.ChunkedArray, unit: str) -> pa.Array | pa.ChunkedArray:
    """Integer epoch times in ``unit`` as UTC timestamps (ns, no zone: instants stored as UTC)."""
    try:
        ns = pc.multiply_checked(values.cast(pa.int64()), pa.scalar(EPOCH_UNITS[unit], pa.int64()))
    except pa.ArrowInvalid:
        raise ValueError(f"integer times in {EPOCH_WORDS[unit]} overflow nanoseconds since 1970: are they "
                         f"in a finer unit?") from None
    return ns.cast(pa.timestamp("ns"))


# --- the UTC offsets a file's times carry -----------------------------------------------------------------
def offsets_written(path: Path, delimiter: str, columns: list[int], text: TextFormat) -> list[str]:
    """The UTC offsets (``-05:00``, ``Z``) written in ``columns`` of the file's first rows and its last
    (a file across a change to summer time carries two), west to east."""
    found: set[str] = set()
    for rows in (_first_rows(path, delimiter, text), _last_rows(path, delimiter, text)):
        found |= {m.group(1) for row in rows for i in columns if i < len(row)
                  for m in [_OFFSET.search(row[i].strip())] if m}
    return sorted(found, key=_offset_order)


def _first_rows(path: Path, delimiter: str, text: TextFormat) -> list[list[str]]:
    with text.open(path) as handle:
        rows = text.reader(handle, delimiter)
        try:
            next(rows, None)
            return [row for _, row in zip(range(_EDGE_ROWS), rows)]
        except csv.Error:
            return []


def _last_rows(path: Path, delimiter: str, text: TextFormat, tail_bytes: int = 1 << 20) -> list[list[str]]:
    start = max(0, path.stat().st_size - tail_bytes)
    with text.open(path) as handle:
        handle.seek(start)
        handle.readline()                # the header, or the rest of a row cut in two
        try:
            return list(text.reader(handle, delimiter))
        except csv.Error:
            return []


def _offset_order(offset: str) -> int:
    if offset == "Z":
        return 0
    sign = -1 if offset[0] == "-" else 1
    digits = offset[1:].replace(":", "")
    return sign * (int(digits[:2]) * 60 + int(digits[2:]))
