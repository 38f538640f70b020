"""DolphinDB's binary object encoding (little endian), both directions, for the test server.

Objects are plain Python values tagged with DolphinDB types:

- ``Scalar(type, value)``: ints/floats/bools/str; temporal values as their raw integer encodings.
- ``Vector(type, values)``: a numpy array (numeric and temporal types, raw encodings) or, for
  SYMBOL/STRING, a numpy object array of ``str``.
- ``AnyVector(items)``: a tuple (DolphinDB ANY vector), each item a full object.
- ``Table(name, columns)``: ordered ``{name: Vector}``.
- ``Dictionary(keys, values)``: two vectors.

The reader decodes from a ``Source`` (bytes or a socket), so requests whose argument objects are
not counted in the header's length can be read to their end by decoding them.
"""
from __future__ import annotations

import struct
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from tests.ddbserver import compress

# --- type and form numbers ---------------------------------------------------------------------
VOID, BOOL, CHAR, SHORT, INT, LONG = 0, 1, 2, 3, 4, 5
DATE, MONTH, TIME, MINUTE, SECOND, DATETIME, TIMESTAMP, NANOTIME, NANOTIMESTAMP = range(6, 15)
FLOAT, DOUBLE, SYMBOL, STRING = 15, 16, 17, 18
ANY, COMPRESS, DICTIONARY_TYPE = 25, 26, 27
SYMBOL_WITH_BASE = SYMBOL | 128

SCALAR, VECTOR, PAIR, MATRIX, SET, DICTIONARY, TABLE = range(7)
TABLE_PLAIN, TABLE_COMPRESSED = 0, 8      # a table's type byte (COMPRESSTBL when columns may be type 26)

TYPE_NAMES = {
    VOID: "VOID", BOOL: "BOOL", CHAR: "CHAR", SHORT: "SHORT", INT: "INT", LONG: "LONG",
    DATE: "DATE", MONTH: "MONTH", TIME: "TIME", MINUTE: "MINUTE", SECOND: "SECOND",
    DATETIME: "DATETIME", TIMESTAMP: "TIMESTAMP", NANOTIME: "NANOTIME",
    NANOTIMESTAMP: "NANOTIMESTAMP", FLOAT: "FLOAT", DOUBLE: "DOUBLE", SYMBOL: "SYMBOL",
    STRING: "STRING", ANY: "ANY",
}
TYPE_BY_NAME = {name: number for number, name in TYPE_NAMES.items()}

# fixed-width types: numpy dtype of the raw encoding
NUMPY_OF: dict[int, str] = {
    BOOL: "<i1", CHAR: "<i1", SHORT: "<i2", INT: "<i4", LONG: "<i8",
    DATE: "<i4", MONTH: "<i4", TIME: "<i4", MINUTE: "<i4", SECOND: "<i4", DATETIME: "<i4",
    TIMESTAMP: "<i8", NANOTIME: "<i8", NANOTIMESTAMP: "<i8", FLOAT: "<f4", DOUBLE: "<f8",
}
STRINGISH = (SYMBOL, STRING)

# DolphinDB null sentinels of each raw encoding
INT_NULL = -(2**31)
LONG_NULL = -(2**63)
NULLS: dict[int, Any] = {
    BOOL: -128, CHAR: -128, SHORT: -(2**15), INT: INT_NULL, LONG: LONG_NULL,
    DATE: INT_NULL, MONTH: INT_NULL, TIME: INT_NULL, MINUTE: INT_NULL, SECOND: INT_NULL,
    DATETIME: INT_NULL, TIMESTAMP: LONG_NULL, NANOTIME: LONG_NULL, NANOTIMESTAMP: LONG_NULL,
    FLOAT: -np.finfo(np.float32).max, DOUBLE: -np.finfo(np.float64).max,
}


class CodecError(ValueError):
    """Bytes that are not a DolphinDB object this codec knows."""


@dataclass
class Scalar:
    type: int
    value: Any


@dataclass
class Vector:
    type: int
    values: np.ndarray

    def __len__(self) -> int:
        return len(self.values)


@dataclass
class AnyVector:
    items: list


@dataclass
class Table:
    name: str
    columns: dict[str, Vector] = field(default_factory=dict)

    @property
    def rows(self) -> int:
        return len(next(iter(self.columns.values()))) if self.columns else 0


@dataclass
class Dictionary:
    keys: Vector
    values: Vector | AnyVector


# --- reading --------------------------------------------------------------------------------------
class Source:
    """Buffered reads of exact lengths and NUL-terminated strings from bytes or a socket."""

    def __init__(self, data: bytes = b"", sock=None, chunk: int = 1 << 20):
        self._buf = bytearray(data)
        self._pos = 0
        self._sock = sock
        self._chunk = chunk
        self.consumed = 0  # bytes handed out so far (wire size of what was read)

    def _fill(self, need: int) -> None:
        while len(self._buf) - self._pos < need:
            if self._sock is None:
                raise CodecError("truncated object: more bytes expected")
            if self._pos:
                del self._buf[: self._pos]
                self._pos = 0
            data = self._sock.recv(max(self._chunk, need))
            if not data:
                raise ConnectionError("peer closed the connection mid-message")
            self._buf += data

    def read(self, n: int) -> bytes:
        self._fill(n)
        out = bytes(self._buf[self._pos: self._pos + n])
        self._pos += n
        self.consumed += n
        return out

    def read_line(self) -> str:
        return self._read_until(b"\n").decode("utf-8")

    def read_cstr(self) -> str:
        return self._read_until(b"\0").decode("utf-8")

    def _read_until(self, sep: bytes) -> bytes:
        start = self._pos
        while True:
            idx = self._buf.find(sep, start)
            if idx >= 0:
                out = bytes(self._buf[self._pos: idx])
                self.consumed += idx + 1 - self._pos
                self._pos = idx + 1
                return out
            start = len(self._buf)
            scan_from = start - self._pos
            self._fill(len(self._buf) - self._pos + 1)
            start = self._pos + scan_from

    def read_cstrs(self, count: int) -> list[str]:
        """``count`` NUL-terminated strings, scanning the buffer in bulk (big string columns)."""
        out: list[str] = []
        while len(out) < count:
            avail = self._buf[self._pos:]
            parts = bytes(avail).split(b"\0")
            complete = parts[:-1][: count - len(out)]
            for p in complete:
                out.append(p.decode("utf-8"))
                self._pos += len(p) + 1
                self.consumed += len(p) + 1
            if len(out) < count:
                self._fill(len(self._buf) - self._pos + 1)
        return out

    def at_end(self) -> bool:
        return self._sock is None and self._pos >= len(self._buf)


class Decoder:
    """Decodes objects; keeps the symbol bases seen so far in one message."""

    def __init__(self, src: Source):
        self.src = src
        self.symbol_bases: dict[int, list[str]] = {}

    def header(self) -> tuple[int, int]:
        type_, form = struct.unpack("<BB", self.src.read(2))
        return type_, form

    def object(self) -> Any:
        type_, form = self.header()
        return self.body(type_, form)

    def body(self, type_: int, form: int) -> Any:
        if form == SCALAR:
            return self.scalar(type_)
        if type_ == COMPRESS and form in (VECTOR, PAIR, SET):
            return self.compressed()
        if form in (VECTOR, PAIR, SET):
            rows, cols = struct.unpack("<ii", self.src.read(8))
            return self.vector(type_, rows * cols)
        if form == TABLE:
            return self.table()
        if form == DICTIONARY:
            keys = self.object()
            values = self.object()
            return Dictionary(keys, values)
        raise CodecError(f"unsupported data form {form}")

    def scalar(self, type_: int) -> Scalar:
        if type_ == VOID:
            self.src.read(1)
            return Scalar(VOID, None)
        if type_ in STRINGISH:
            return Scalar(type_, self.src.read_cstr())
        if type_ in NUMPY_OF:
            dtype = np.dtype(NUMPY_OF[type_])
            value = np.frombuffer(self.src.read(dtype.itemsize), dtype)[0].item()
            if type_ == BOOL:
                value = None if value == -128 else bool(value)
            return Scalar(type_, value)
        raise CodecError(f"unsupported scalar type {type_}")

    def vector(self, type_: int, n: int) -> Vector | AnyVector:
        if type_ == ANY:
            return AnyVector([self.object() for _ in range(n)])
        if type_ in STRINGISH:
            return Vector(type_, np.array(self.src.read_cstrs(n), dtype=object))
        if type_ == SYMBOL_WITH_BASE:
            base_id, base_size = struct.unpack("<ii", self.src.read(8))
            if base_size:
                self.symbol_bases[base_id] = self.src.read_cstrs(base_size)
            elif base_id not in self.symbol_bases:
                raise CodecError(f"symbol base {base_id} reused before it was sent")
            base = np.array(self.symbol_bases[base_id], dtype=object)
            idx = np.frombuffer(self.src.read(4 * n), "<i4")
            return Vector(SYMBOL, base[idx])
        if type_ == VOID:
            self.src.read(n)  # one byte per element
            return Vector(VOID, np.zeros(n, dtype="<i1"))
        if type_ in NUMPY_OF:
            dtype = np.dtype(NUMPY_OF[type_])
            return Vector(type_, np.frombuffer(self.src.read(dtype.itemsize * n), dtype).copy())
        raise CodecError(f"unsupported vector type {type_}")

    def compressed(self) -> Vector:
        """A type-26 vector: decompress, then parse the values like an ordinary vector body."""
        try:
            ddb_type, rows, cols, raw = compress.read_compressed(self.src.read)
        except compress.CompressError as exc:
            raise CodecError(str(exc)) from None
        inner = Decoder(Source(raw))
        inner.symbol_bases = self.symbol_bases
        vec = inner.vector(ddb_type, rows * cols)
        if not inner.src.at_end():
            raise CodecError("compressed vector holds more bytes than its elements")
        return vec

    def table(self) -> Table:
        rows, cols = struct.unpack("<ii", self.src.read(8))
        name = self.src.read_cstr()
        names = [self.src.read_cstr() for _ in range(cols)]
        columns = {}
        for col in names:
            vec = self.object()
            if not isinstance(vec, Vector):
                raise CodecError(f"column {col} is not a vector")
            if len(vec) != rows:
                raise CodecError(f"column {col} has {len(vec)} rows, table says {rows}")
            columns[col] = vec
        return Table(name, columns)


def decode(data: bytes) -> Any:
    """One object from ``data`` (which must hold exactly that object)."""
    src = Source(data)
    obj = Decoder(src).object()
    if not src.at_end():
        raise CodecError("trailing bytes after the object")
    return obj


# --- writing --------------------------------------------------------------------------------------
def _head(type_: int, form: int) -> bytes:
    return struct.pack("<BB", type_, form)


def _cstrs(values) -> bytes:
    return b"".join(str(v).encode("utf-8") + b"\0" for v in values)


class Encoder:
    """Encodes objects; numbers symbol bases per message like the real server.

    ``compress=True`` sends tables as a real server answers a client that set the compress flag:
    type byte 8, fixed-width columns LZ4-compressed (type 26), SYMBOL/STRING columns as usual.
    """

    def __init__(self, symbol_base: bool = True, compress: bool = False):
        self.symbol_base = symbol_base
        self.compress = compress
        self._next_base = 0

    def object(self, obj: Any) -> bytes:
        if isinstance(obj, Scalar):
            return self.scalar(obj)
        if isinstance(obj, Vector):
            return self.vector(obj)
        if isinstance(obj, AnyVector):
            body = b"".join(self.object(i) for i in obj.items)
            return _head(ANY, VECTOR) + struct.pack("<ii", len(obj.items), 1) + body
        if isinstance(obj, Table):
            return self.table(obj)
        if isinstance(obj, Dictionary):
            vtype = obj.values.type if isinstance(obj.values, Vector) else ANY
            return _head(vtype, DICTIONARY) + self.object(obj.keys) + self.object(obj.values)
        raise CodecError(f"cannot encode {type(obj).__name__}")

    def scalar(self, s: Scalar) -> bytes:
        if s.type == VOID:
            return _head(VOID, SCALAR) + b"\0"
        if s.type in STRINGISH:
            return _head(s.type, SCALAR) + _cstrs([s.value])
        if s.type not in NUMPY_OF:
            raise CodecError(f"cannot encode a scalar of type {s.type}")
        value = s.value
        if value is None:
            value = NULLS[s.type]
        return _head(s.type, SCALAR) + np.array([value], dtype=NUMPY_OF[s.type]).tobytes()

    def vector(self, v: Vector, form: int = VECTOR) -> bytes:
        n = len(v.values)
        size = struct.pack("<ii", n, 1)
        if v.type == SYMBOL and self.symbol_base:
            codes, uniques = _factorize(v.values)
            base_id = self._next_base
            self._next_base += 1
            base = [""] + [u for u in uniques if u != ""]
            lookup = {u: i for i, u in enumerate(base)}
            remap = np.array([lookup[u] for u in uniques], dtype="<i4")
            idx = remap[codes] if n else np.zeros(0, "<i4")
            return (_head(SYMBOL_WITH_BASE, form) + size + struct.pack("<ii", base_id, len(base))
                    + _cstrs(base) + idx.astype("<i4").tobytes())
        if v.type in STRINGISH:
            return _head(v.type, form) + size + _cstrs(v.values)
        if v.type not in NUMPY_OF:
            raise CodecError(f"cannot encode a vector of type {v.type}")
        data = np.asarray(v.values).astype(NUMPY_OF[v.type], copy=False)
        return _head(v.type, form) + size + data.tobytes()

    def compressed_vector(self, v: Vector) -> bytes:
        dtype = np.dtype(NUMPY_OF[v.type])
        raw = np.asarray(v.values).astype(dtype, copy=False).tobytes()
        return _head(COMPRESS, VECTOR) + compress.compress_values(raw, v.type, dtype.itemsize, len(v.values))

    def table(self, t: Table) -> bytes:
        parts = [_head(TABLE_COMPRESSED if self.compress else TABLE_PLAIN, TABLE),
                 struct.pack("<ii", t.rows, len(t.columns)), _cstrs([t.name]), _cstrs(t.columns.keys())]
        for col in t.columns.values():
            # an empty column goes uncompressed: client 3.0.6.1 aborts on a type-26 vector of no blocks
            packed = self.compress and col.type in NUMPY_OF and len(col) > 0
            parts.append(self.compressed_vector(col) if packed else self.vector(col))
        return b"".join(parts)


def _factorize(values: np.ndarray) -> tuple[np.ndarray, list[str]]:
    import pandas as pd

    codes, uniques = pd.factorize(np.asarray(values, dtype=object))
    return codes, [str(u) for u in uniques]


def encode(obj: Any) -> bytes:
    return Encoder().object(obj)
