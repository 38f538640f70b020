"""Building string columns in each ``StringMode`` without going through Python objects.

Generators draw integer codes into a fixed vocabulary (``Coded``: SYMBOL columns) or assemble
fixed-width bytes (``Chars``: unique STRING values); blocks of those are joined and turned into
pandas columns once per chunk here. Arrow strings and categories are built straight from
buffers, so only ``StringMode.OBJECT`` pays for Python ``str`` objects.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
import pandas as pd
import pyarrow as pa
from pandas.arrays import ArrowStringArray

from workloads.datasets.schema import StringMode

ARROW_STR = pd.StringDtype(storage="pyarrow", na_value=np.nan)  # pandas 3's default ``str``


def arrow_strings(values: pa.Array) -> ArrowStringArray:
    """An Arrow string array as a pandas ``str`` column without copying the strings."""
    try:
        return ArrowStringArray(values, dtype=ARROW_STR)
    except TypeError:  # pandas 2 (ArcticDB pins pandas<3): the "str" array has its own class
        from pandas.core.arrays.string_arrow import ArrowStringArrayNumpySemantics
        return ArrowStringArrayNumpySemantics(values)


class Vocabulary:
    """A fixed list of strings, ready to be indexed by codes in any string mode."""

    def __init__(self, values: Sequence[str]):
        self.values = list(values)
        self.objects = np.array(self.values, dtype=object)
        self.arrow = pa.array(self.values, type=pa.large_string())
        self.category = pd.CategoricalDtype(pd.Index(self.values, dtype=ARROW_STR))

    def __len__(self) -> int:
        return len(self.values)

    def codes(self, codes: np.ndarray) -> "Coded":
        return Coded(codes, self)

    def column(self, codes: np.ndarray, strings: StringMode):
        """The strings at ``codes`` (int indices into this vocabulary) as a pandas column."""
        if strings is StringMode.CATEGORY:
            # Every chunk shares one categories index, so chunks concatenate as category.
            return pd.Categorical.from_codes(codes, dtype=self.category)
        if strings is StringMode.OBJECT:
            return _object_column(self.objects[codes])
        return arrow_strings(self.arrow.take(pa.array(codes)))


@lru_cache(maxsize=32)
def vocabulary(values: tuple[str, ...]) -> Vocabulary:
    """A shared ``Vocabulary``: chunks of one day reuse it (and its categories)."""
    return Vocabulary(values)


def fixed_width_column(chars: np.ndarray, strings: StringMode):
    """Turn an ``(n, width)`` uint8 matrix of ASCII characters into a string column."""
    n, width = chars.shape
    data = np.ascontiguousarray(chars)
    offsets = np.arange(0, n * width + 1, width, dtype=np.int64)
    arrow = pa.LargeStringArray.from_buffers(n, pa.py_buffer(offsets), pa.py_buffer(data))
    column = arrow_strings(arrow)
    if strings is StringMode.ARROW:
        return column
    if strings is StringMode.OBJECT:
        return _object_column(arrow.to_numpy(zero_copy_only=False))
    return pd.Categorical(column)


@dataclass(frozen=True)
class Coded:
    """A string column still as codes into a vocabulary (converted once per chunk)."""

    codes: np.ndarray
    vocabulary: Vocabulary


@dataclass(frozen=True)
class Chars:
    """A string column still as an ``(n, width)`` matrix of ASCII bytes."""

    chars: np.ndarray


def join_parts(parts: list):
    """Concatenate the pieces of one column generated block by block."""
    first = parts[0]
    if len(parts) == 1:
        return first
    if isinstance(first, Coded):
        return Coded(np.concatenate([p.codes for p in parts]), first.vocabulary)
    if isinstance(first, Chars):
        return Chars(np.concatenate([p.chars for p in parts]))
    return np.concatenate(parts)


def to_column(value, strings: StringMode):
    """A generated column as pandas wants it; string columns in the requested representation."""
    if isinstance(value, Coded):
        return value.vocabulary.column(value.codes, strings)
    if isinstance(value, Chars):
        return fixed_width_column(value.chars, strings)
    return value


def _object_column(values: np.ndarray) -> pd.Series:
    # A bare object ndarray would be re-inferred as pandas 3's ``str`` by the DataFrame constructor.
    return pd.Series(values, dtype=object, copy=False)


def put_digits(chars: np.ndarray, first: int, width: int, numbers: np.ndarray) -> None:
    """Write ``numbers`` zero-padded into columns ``first .. first+width`` of ``chars``."""
    rest = numbers.astype(np.int64, copy=True)
    for position in range(first + width - 1, first - 1, -1):
        chars[:, position] = rest % 10 + 48
        rest //= 10


def put_text(chars: np.ndarray, first: int, text: str) -> None:
    """Write the same ASCII ``text`` into every row starting at column ``first``."""
    chars[:, first:first + len(text)] = np.frombuffer(text.encode("ascii"), dtype=np.uint8)


def put_choice(chars: np.ndarray, first: int, options: Sequence[str], codes: np.ndarray) -> None:
    """Write one of several equal-width ASCII ``options`` per row, chosen by ``codes``."""
    width = len(options[0])
    table = np.frombuffer("".join(options).encode("ascii"), dtype=np.uint8).reshape(len(options), width)
    chars[:, first:first + width] = table[codes]
