"""Tables as a pickle stream, the reply format the client expects under PROTOCOL_PICKLE.

The client unpickles the stream with its own copy of CPython's unpickler (protocol <= 4, plus two
vendor opcodes this server never sends) and returns the object as-is, so the stream rebuilds a
``pandas.DataFrame`` itself: ``pandas.DataFrame({name: column, ...})``, each column built by public
numpy calls (``numpy.frombuffer`` over the little-endian values, ``numpy.array(items, "O")`` for
strings). Written opcode by opcode because ``pickle.dumps`` would name pandas' private modules.

Columns get the dtypes the client gives the same table under PROTOCOL_DDB: every temporal type
as datetime64[ns], nulls as NaN/NaT/None (integer columns with nulls become float64),
SYMBOL/STRING as Python strings ("" stays "").
"""
from __future__ import annotations

import struct

import numpy as np

from tests.ddbserver import codec as c

PROTO = b"\x80\x04"
STOP, MARK, SETITEMS, EMPTY_DICT, REDUCE = b".", b"(", b"u", b"}", b"R"
TUPLE1, TUPLE2 = b"\x85", b"\x86"
STACK_GLOBAL, EMPTY_LIST, APPENDS = b"\x93", b"]", b"e"
NONE, NEWTRUE, NEWFALSE = b"N", b"\x88", b"\x89"
BATCH = 1000                                   # items per APPENDS, as CPython's pickler batches

# raw encoding -> nanoseconds since 1970-01-01 (MONTH is handled apart: months since year 0)
NS_PER_UNIT = {
    c.DATE: 86_400 * 10**9, c.TIME: 10**6, c.MINUTE: 60 * 10**9, c.SECOND: 10**9,
    c.DATETIME: 10**9, c.TIMESTAMP: 10**6, c.NANOTIME: 1, c.NANOTIMESTAMP: 1,
}


def table_to_pickle(table: c.Table) -> bytes:
    parts = [PROTO, _global("pandas", "DataFrame"), EMPTY_DICT]
    if table.columns:
        parts.append(MARK)
        for name, vec in table.columns.items():
            parts += [_unicode(name), _column(vec)]
        parts.append(SETITEMS)
    parts += [TUPLE1, REDUCE, STOP]
    return b"".join(parts)


def _column(vec: c.Vector) -> bytes:
    values = np.asarray(vec.values)
    if vec.type in c.STRINGISH:
        return _object_array([str(v) for v in values])
    if vec.type == c.BOOL:
        if (values == -128).any():
            return _object_array([None if v == -128 else bool(v) for v in values.tolist()])
        return _frombuffer(values.astype(bool))
    null = values == c.NULLS[vec.type] if vec.type in c.NULLS else np.zeros(len(values), bool)
    if vec.type == c.MONTH:
        months = values.astype("i8") - 1970 * 12
        out = months.astype("M8[M]").astype("M8[ns]")
        out[null] = np.datetime64("NaT")
        return _frombuffer(out)
    if vec.type in NS_PER_UNIT:
        out = (values.astype("i8") * NS_PER_UNIT[vec.type]).view("M8[ns]")
        out[null] = np.datetime64("NaT")
        return _frombuffer(out)
    if vec.type in (c.FLOAT, c.DOUBLE):
        out = values.copy()
        out[null] = np.nan
        return _frombuffer(out)
    if null.any():                              # the client turns integers with nulls into float64
        out = values.astype("f8")
        out[null] = np.nan
        return _frombuffer(out)
    return _frombuffer(values)


def _frombuffer(arr: np.ndarray) -> bytes:
    arr = np.ascontiguousarray(arr)
    dtype = arr.dtype.newbyteorder("<") if arr.dtype.byteorder == ">" else arr.dtype
    return (_global("numpy", "frombuffer") + _bytes(arr.astype(dtype, copy=False).tobytes())
            + _unicode(dtype.str) + TUPLE2 + REDUCE)


def _object_array(items: list) -> bytes:
    parts = [_global("numpy", "array"), EMPTY_LIST]
    for start in range(0, len(items), BATCH):
        parts.append(MARK)
        parts += [_item(v) for v in items[start:start + BATCH]]
        parts.append(APPENDS)
    parts += [_unicode("O"), TUPLE2, REDUCE]
    return b"".join(parts)


def _item(value) -> bytes:
    if value is None:
        return NONE
    if value is True:
        return NEWTRUE
    if value is False:
        return NEWFALSE
    return _unicode(value)


def _global(module: str, name: str) -> bytes:
    return _unicode(module) + _unicode(name) + STACK_GLOBAL


def _unicode(text: str) -> bytes:
    data = text.encode("utf-8", "surrogatepass")
    if len(data) < 256:
        return b"\x8c" + bytes([len(data)]) + data          # SHORT_BINUNICODE
    return b"X" + struct.pack("<I", len(data)) + data         # BINUNICODE


def _bytes(data: bytes) -> bytes:
    if len(data) < 256:
        return b"C" + bytes([len(data)]) + data               # SHORT_BINBYTES
    if len(data) < 2**32:
        return b"B" + struct.pack("<I", len(data)) + data     # BINBYTES
    return b"\x8e" + struct.pack("<Q", len(data)) + data      # BINBYTES8
