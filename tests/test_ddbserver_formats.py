"""Table reply formats of the test server, checked with the REAL client: compressed replies
(compress=True), PICKLE replies, and a server without the formatArrow plugin."""
from __future__ import annotations

import datetime as dt
import pickle
import struct

import dolphindb as ddb
import dolphindb.settings as keys
import numpy as np
import pandas as pd
import pyarrow as pa
import pytest
from pandas.testing import assert_frame_equal

from tests.ddbserver import codec as c
from tests.ddbserver import compress
from tests.ddbserver.fixture import ddb_server, ddb_server_factory  # noqa: F401
from tests.ddbserver.framing import FLAG_COMPRESS, FLAG_PICKLE
from tests.ddbserver.pickle_reply import table_to_pickle
from tests.ddbserver.rawclient import RawClient

pytestmark = pytest.mark.timeout(60)

BASE = 32                                   # the flag of a plain DDB request
TAQ_COLUMNS = '["date", "time", "sym", "bid", "size", "mode"]'
TAQ_TYPES = "[DATE, SECOND, SYMBOL, DOUBLE, INT, CHAR]"
TAQ_HINTS = {"date": keys.DT_DATE, "time": keys.DT_SECOND, "sym": keys.DT_SYMBOL}


def connect(server, port=None, **kw) -> ddb.session:
    s = ddb.session(**kw)
    assert s.connect(server.host, port or server.port, "admin", "123456",
                     timeout=dt.timedelta(seconds=5), netTimeout=dt.timedelta(seconds=20))
    return s


def taq_frame(rows: int, seed: int = 7) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    frame = pd.DataFrame({
        "date": pd.to_datetime("2007-08-23") + pd.to_timedelta(rng.integers(0, 3, rows), unit="D"),
        "time": pd.to_datetime("1970-01-01") + pd.to_timedelta(np.sort(rng.integers(34200, 57600, rows)), unit="s"),
        "sym": rng.choice(["AAPL", "MSFT", "IBM", "GE", "A"], rows),
        "bid": np.round(rng.uniform(10, 200, rows), 2),
        "size": rng.integers(1, 5000, rows).astype("int32"),
        "mode": rng.integers(0, 13, rows).astype("int8"),
    })
    object.__setattr__(frame, "__DolphinDB_Type__", TAQ_HINTS)
    return frame


@pytest.fixture
def shared_taq(ddb_server):  # noqa: F811
    """A 200,000-row TAQ-like shared table, uploaded by a compress=True session."""
    name = "fmt_taq"
    s = connect(ddb_server, compress=True)
    s.run(f"share table(1:0, {TAQ_COLUMNS}, {TAQ_TYPES}) as {name}")
    frame = taq_frame(200_000)
    try:
        assert s.run(f"tableInsert{{{name}}}", frame) == len(frame)   # a type-8 upload decodes
        yield name, frame
    finally:
        s.run(f'undef("{name}", SHARED)')
        s.close()


# --- compressed replies ------------------------------------------------------------------------------
def test_compressed_reply_decodes_to_the_same_frame(ddb_server, shared_taq):  # noqa: F811
    name, frame = shared_taq
    plain, packed = connect(ddb_server), connect(ddb_server, compress=True)
    expected, got = plain.run(name), packed.run(name)
    assert_frame_equal(got, expected)
    assert got["bid"].tolist() == frame["bid"].tolist()        # and it is the uploaded data
    assert got["sym"].tolist() == frame["sym"].tolist()
    assert (got["date"] == frame["date"]).all() and (got["time"] == frame["time"]).all()
    plain.close()
    packed.close()


def test_compressed_reply_has_the_real_servers_layout(ddb_server, shared_taq):  # noqa: F811
    """Table type 8, fixed-width columns as type-26 vectors of several LZ4 blocks, SYMBOL as usual."""
    name, frame = shared_taq
    with RawClient(ddb_server.host, ddb_server.port) as raw:
        status = raw.send_script(name, BASE | FLAG_COMPRESS)
        assert status == "OK"
        type_, form = struct.unpack("<BB", raw.read(2))
        assert (type_, form) == (c.TABLE_COMPRESSED, c.TABLE)
        rows, cols = struct.unpack("<ii", raw.read(8))
        assert (rows, cols) == (len(frame), 6)
        raw.src.read_cstrs(1 + cols)                           # table name, column names
        for ddb_type, width in [(c.DATE, 4), (c.SECOND, 4), (c.SYMBOL, 0), (c.DOUBLE, 8), (c.INT, 4),
                                (c.CHAR, 1)]:
            head = struct.unpack("<BB", raw.read(2))
            if ddb_type == c.SYMBOL:
                assert head == (c.SYMBOL_WITH_BASE, c.VECTOR)
                c.Decoder(raw.src).body(c.SYMBOL_WITH_BASE, c.VECTOR)
                continue
            assert head == (c.COMPRESS, c.VECTOR)
            header = compress.HEADER.unpack(raw.read(compress.HEADER.size))
            byte_size, col_count, version, little, charcode, method, dtype, unit, reserved, extra, count, checksum = header
            assert (col_count, version, little, charcode, method, dtype, unit, reserved, extra, count, checksum) == (
                1, 0, 1, -1, 1, ddb_type, width, 0, -1, len(frame), -1)
            blocks, left = 0, byte_size - 20
            while left:
                (size,) = struct.unpack("<i", raw.read(4))
                raw.read(size)
                left -= 4 + size
                blocks += 1
            assert blocks == -(-len(frame) * width // (65536 // width * width))   # whole elements per block


def test_compressed_reply_of_an_empty_table_and_scalars(ddb_server):  # noqa: F811
    s = connect(ddb_server, compress=True)
    s.run(f"share table(1:0, {TAQ_COLUMNS}, {TAQ_TYPES}) as fmt_empty")
    try:
        empty = s.run("fmt_empty")
        assert list(empty.columns) == ["date", "time", "sym", "bid", "size", "mode"] and len(empty) == 0
        assert s.run("20+22") == 42                            # non-tables stay as they were
    finally:
        s.run('undef("fmt_empty", SHARED)')
        s.close()


@pytest.mark.parametrize("ddb_type,values", [
    (c.DOUBLE, np.random.default_rng(1).random(70_000)),
    (c.INT, np.arange(100_000, dtype="i4")),
    (c.CHAR, np.arange(200_000, dtype="i8").astype("i1")),
    (c.TIMESTAMP, np.arange(0, 30_000_000, 1000, dtype="i8")),
    (c.STRING, np.array([f"s{i}" for i in range(50_000)], dtype=object)),
])
def test_compressed_vectors_round_trip_through_the_codec(ddb_type, values):
    """What a client with per-column LZ4 sends (type 26) decodes to the original values."""
    if ddb_type == c.STRING:   # the codec never compresses strings; build the body by hand
        raw = b"".join(v.encode() + b"\0" for v in values)
        data = struct.pack("<BB", c.COMPRESS, c.VECTOR) + compress.compress_values(raw, c.STRING, 1, len(values))
    else:
        data = c.Encoder().compressed_vector(c.Vector(ddb_type, values))
    back = c.decode(data)
    assert back.type == ddb_type and back.values.tolist() == values.tolist()


def test_lz4_block_size_is_read_from_the_block():
    rng = np.random.default_rng(3)
    for raw in [b"", b"x", b"ab" * 40_000, rng.bytes(65_536), bytes(range(256)) * 100]:
        block = pa.compress(raw, codec="lz4_raw", asbytes=True)
        assert compress.lz4_block_size(block) == len(raw)
    with pytest.raises(compress.CompressError):
        compress.lz4_block_size(pa.compress(b"ab" * 1000, codec="lz4_raw", asbytes=True)[:-3])


# --- pickle replies ------------------------------------------------------------------------------------
MIXED_COLUMNS = '["d", "s", "ts", "px", "n", "big", "c", "k", "txt", "ok"]'
MIXED_TYPES = "[DATE, SECOND, TIMESTAMP, DOUBLE, INT, LONG, CHAR, SYMBOL, STRING, BOOL]"


def mixed_frame() -> pd.DataFrame:
    frame = pd.DataFrame({
        "d": pd.to_datetime(["2007-08-23", "1999-12-31", "2007-08-24", None]),
        "s": pd.to_datetime(["1970-01-01 09:30:01", "1970-01-01 15:59:59", "1970-01-01 00:00:00",
                           "1970-01-01 12:00:00"]),
        "ts": pd.to_datetime(["2016-11-15 10:00:00.123", "2016-11-16", "2016-11-17 23:59:59.999", "2016-11-18"],
                             format="ISO8601"),
        "px": [1.5, np.nan, 1e300, -0.25],
        "n": np.array([1, -2, 2**31 - 1, 7], dtype="int32"),
        "big": np.array([2**40, -1, 0, 5], dtype="int64"),
        "c": np.array([65, 66, -5, 0], dtype="int8"),
        "k": ["AAPL", "MSFT", "", "AAPL"],
        "txt": ["a b", "ü", "", 'q"'],
        "ok": [True, False, True, True],
    })
    object.__setattr__(frame, "__DolphinDB_Type__", {"d": keys.DT_DATE, "s": keys.DT_SECOND,
                                                     "ts": keys.DT_TIMESTAMP, "k": keys.DT_SYMBOL})
    return frame


def test_pickle_session_gets_the_same_frame_as_ddb(ddb_server):  # noqa: F811
    ddb_s, pickle_s = connect(ddb_server), connect(ddb_server, protocol=keys.PROTOCOL_PICKLE)
    ddb_s.run(f"share table(1:0, {MIXED_COLUMNS}, {MIXED_TYPES}) as fmt_mixed")
    try:
        assert ddb_s.run("fmt_mixed").empty
        # an empty table: strings stay object columns under both protocols
        assert_frame_equal(pickle_s.run("fmt_mixed"), ddb_s.run("fmt_mixed"))
        ddb_s.run("tableInsert{fmt_mixed}", mixed_frame())
        expected, got = ddb_s.run("fmt_mixed"), pickle_s.run("fmt_mixed")
        # Same dtypes as the DDB path: the null DATE is NaT, the null DOUBLE NaN, every temporal
        # column datetime64[ns], strings pandas' str dtype; no dtype differs.
        assert_frame_equal(got, expected)
        assert got["d"].isna().tolist() == [False, False, False, True]
        assert got["k"].tolist() == ["AAPL", "MSFT", "", "AAPL"]
        assert pickle_s.run("getNodeAlias()") == "local8848"   # scalars stay DDB-encoded
    finally:
        ddb_s.run('undef("fmt_mixed", SHARED)')
        ddb_s.close()
        pickle_s.close()


def test_pickle_reply_is_a_protocol_4_stream_after_the_table_flag(ddb_server):  # noqa: F811
    s = connect(ddb_server)
    s.run('share table(1:0, ["a"], [INT]) as fmt_pickle_raw')
    try:
        with RawClient(ddb_server.host, ddb_server.port) as raw:
            assert raw.send_script("fmt_pickle_raw", BASE | FLAG_PICKLE) == "OK"
            assert raw.read(4) == bytes([0, c.TABLE | 32]) + b"\x80\x04"
    finally:
        s.run('undef("fmt_pickle_raw", SHARED)')
        s.close()


def test_pickle_stream_keeps_nulls_like_the_ddb_path():
    """Columns with nulls change dtype exactly as the client's DDB decoder changes them."""
    table = c.Table("", {
        "i": c.Vector(c.INT, np.array([1, c.INT_NULL, 3], "i4")),
        "b": c.Vector(c.BOOL, np.array([1, -128, 0], "i1")),
        "m": c.Vector(c.MINUTE, np.array([570, c.INT_NULL, 0], "i4")),
        "nt": c.Vector(c.NANOTIMESTAMP, np.array([1187827200123456789, c.LONG_NULL, 5], "i8")),
        "f": c.Vector(c.FLOAT, np.array([1.5, c.NULLS[c.FLOAT], 2], "f4")),
    })
    stream = table_to_pickle(table)
    assert stream.startswith(b"\x80\x04") and b"pandas.core" not in stream
    frame = pickle.loads(stream)
    assert frame.dtypes.astype(str).tolist() == ["float64", "object", "datetime64[ns]", "datetime64[ns]", "float32"]
    assert frame["b"].tolist() == [True, None, False]
    assert frame["m"].tolist()[0] == pd.Timestamp("1970-01-01 09:30") and frame["m"].isna().tolist() == [False, True, False]
    assert frame["nt"][0] == pd.Timestamp("2007-08-23 00:00:00.123456789")


# --- no formatArrow plugin -----------------------------------------------------------------------------
def test_without_the_arrow_plugin_arrow_requests_get_ddb_replies(ddb_server_factory):  # noqa: F811
    server = ddb_server_factory("--no-arrow-plugin")
    arrow_s, ddb_s = connect(server, protocol=keys.PROTOCOL_ARROW), connect(server)
    ddb_s.run('share table(1:0, ["k", "v"], [SYMBOL, DOUBLE]) as fmt_arrow')
    ddb_s.run("tableInsert{fmt_arrow}", pd.DataFrame({"k": ["x", "y"], "v": [1.5, 2.5]}))
    got = arrow_s.run("fmt_arrow")
    assert isinstance(got, pd.DataFrame)                       # not a pyarrow.Table
    assert_frame_equal(got, ddb_s.run("fmt_arrow"))


def test_with_the_arrow_plugin_arrow_requests_get_arrow(ddb_server):  # noqa: F811
    s = connect(ddb_server, protocol=keys.PROTOCOL_ARROW)
    assert isinstance(s.run("getClusterPerf(true)"), pa.Table)
    s.close()
