"""DolphinDB's LZ4-compressed vector body (data type 26, DT_COMPRESS), both directions.

Layout, after the object's 2-byte flag (form<<8 | 26), as the client's Compress.cpp and
ConstantMarshall.cpp read and write it: a packed little-endian 28-byte header, then blocks of
``int32 compressedSize`` + one raw LZ4 block; each block holds whole elements, at most 65536
uncompressed bytes. ``byteSize`` counts from the header's third field: 20 + all the blocks.
Decompressed, the blocks are the vector's raw values; the reader puts ``rows, cols`` in front so
the result parses like an ordinary vector body.

Pure byte work, no knowledge of DolphinDB types beyond the numbers handed in.
"""
from __future__ import annotations

import struct

import pyarrow as pa

HEADER = struct.Struct("<iibbbbbbhiii")    # byteSize colCount version flag charCode method type unit reserved extra count checksum
BLOCK_BYTES = 1 << 16
LZ4 = 1


class CompressError(ValueError):
    """A compressed vector this module cannot read."""


def available() -> bool:
    return pa.Codec.is_available("lz4_raw")


def compress_values(raw: bytes, ddb_type: int, unit: int, rows: int) -> bytes:
    """Header + LZ4 blocks of ``raw`` (``rows`` elements of ``unit`` bytes each)."""
    step = (BLOCK_BYTES // unit) * unit         # whole elements per block, like the real encoder
    view = memoryview(raw)
    blocks = []
    for start in range(0, len(raw), step):
        comp = pa.compress(view[start:start + step], codec="lz4_raw", asbytes=True)
        blocks.append(struct.pack("<i", len(comp)) + comp)
    body = b"".join(blocks)
    header = HEADER.pack(20 + len(body), 1, 0, 1, -1, LZ4, ddb_type, unit, 0, -1, rows, -1)
    return header + body


def read_compressed(read) -> tuple[int, int, int, bytes]:
    """Read one compressed body with ``read(n) -> bytes``; returns (data type, rows, cols, raw values)."""
    (byte_size, cols, _version, little, _charcode, method, ddb_type, _unit, _reserved, _extra,
     rows, _checksum) = HEADER.unpack(read(HEADER.size))
    if method != LZ4:
        raise CompressError(f"compression method {method} is not supported (only LZ4 = 1)")
    if little != 1:
        raise CompressError("big-endian compressed vectors are not supported")
    remaining = byte_size - 20
    parts = []
    while remaining > 0:
        (size,) = struct.unpack("<i", read(4))
        size &= 0x7FFFFFFF                      # the top bit only marks a trailing LSN
        if size <= 0 or size + 4 > remaining:
            raise CompressError(f"bad compressed block size {size}")
        block = read(size)
        parts.append(pa.decompress(block, decompressed_size=lz4_block_size(block),
                                   codec="lz4_raw", asbytes=True))
        remaining -= 4 + size
    return ddb_type, rows, cols, b"".join(parts)


def lz4_block_size(block: bytes) -> int:
    """The decompressed size of one raw LZ4 block, from its sequence headers alone.

    pyarrow's decompress needs the exact output size and the container does not store it (STRING
    blocks hold a variable number of bytes), so the sequences are walked without copying data.
    """
    def length(value: int, pos: int) -> tuple[int, int]:
        """A 4-bit length, extended by bytes while they are 255 (LZ4's encoding)."""
        if value == 15:
            while True:
                b = block[pos]
                pos += 1
                value += b
                if b != 255:
                    break
        return value, pos

    pos, out, end = 0, 0, len(block)
    while pos < end:
        token = block[pos]
        literals, pos = length(token >> 4, pos + 1)
        pos += literals
        out += literals
        if pos >= end:                          # the last sequence has literals only
            break
        match, pos = length(token & 15, pos + 2)  # after the 2-byte match offset
        out += match + 4
    if pos != end:
        raise CompressError("truncated LZ4 block")
    return out
