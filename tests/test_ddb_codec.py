"""The test server's codec, the target's raw-reply framing and the script quoting, fuzzed."""
from __future__ import annotations

import datetime as dt
import re
import socket
import struct
import threading

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from tests.ddbserver import codec as c
from tests.ddbserver.dispatch import MEASURED, QS, split_conditions, unquote
from tests.ddbserver.framing import read_request
from workloads.targets.dolphindb import quote as q
from workloads.targets.dolphindb import scripts
from workloads.targets.dolphindb.wire import _Reader, _skip_object

FIXED = [c.BOOL, c.CHAR, c.SHORT, c.INT, c.LONG, c.DATE, c.SECOND, c.TIME, c.MINUTE,
         c.TIMESTAMP, c.NANOTIMESTAMP, c.FLOAT, c.DOUBLE]
text = st.text(alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\0"), max_size=12)


def fixed_vector(ddb_type: int, n: int, draw) -> c.Vector:
    dtype = np.dtype(c.NUMPY_OF[ddb_type])
    if dtype.kind == "f":
        values = draw(st.lists(st.floats(width=dtype.itemsize * 8, allow_nan=False), min_size=n, max_size=n))
    else:
        info = np.iinfo(dtype)
        lo, hi = (0, 1) if ddb_type == c.BOOL else (int(info.min), int(info.max))
        values = draw(st.lists(st.integers(lo, hi), min_size=n, max_size=n))
    return c.Vector(ddb_type, np.array(values, dtype=dtype))


@st.composite
def vectors(draw, n=None):
    n = draw(st.integers(0, 20)) if n is None else n
    ddb_type = draw(st.sampled_from(FIXED + [c.SYMBOL, c.STRING]))
    if ddb_type in c.STRINGISH:
        return c.Vector(ddb_type, np.array(draw(st.lists(text, min_size=n, max_size=n)), dtype=object))
    return fixed_vector(ddb_type, n, draw)


@st.composite
def tables(draw):
    n = draw(st.integers(0, 15))
    names = draw(st.lists(st.from_regex(r"[a-z][a-z0-9_]{0,8}", fullmatch=True), min_size=1,
                          max_size=6, unique=True))
    return c.Table(draw(st.from_regex(r"[a-z]{0,5}", fullmatch=True)),
                   {name: draw(vectors(n)) for name in names})


@st.composite
def scalars(draw):
    ddb_type = draw(st.sampled_from(FIXED + [c.STRING, c.SYMBOL]))
    if ddb_type in c.STRINGISH:
        return c.Scalar(ddb_type, draw(text))
    vec = fixed_vector(ddb_type, 1, draw)
    value = vec.values[0].item()
    return c.Scalar(ddb_type, bool(value) if ddb_type == c.BOOL else value)


objects = st.recursive(st.one_of(scalars(), vectors(), tables()),
                       lambda inner: st.lists(inner, max_size=4).map(c.AnyVector), max_leaves=8)


def same(a, b) -> bool:
    if type(a) is not type(b):
        return False
    if isinstance(a, c.Scalar):
        return a.type == b.type and (a.value == b.value or (a.value != a.value and b.value != b.value))
    if isinstance(a, c.Vector):
        return a.type == b.type and len(a) == len(b) and all(
            x == y for x, y in zip(a.values.tolist(), b.values.tolist()))
    if isinstance(a, c.AnyVector):
        return len(a.items) == len(b.items) and all(same(x, y) for x, y in zip(a.items, b.items))
    if isinstance(a, c.Table):
        return a.name == b.name and list(a.columns) == list(b.columns) and all(
            same(a.columns[k], b.columns[k]) for k in a.columns)
    if isinstance(a, c.Dictionary):
        return same(a.keys, b.keys) and same(a.values, b.values)
    return False


@settings(max_examples=150, deadline=None)
@given(objects)
def test_codec_round_trip(obj):
    assert same(c.decode(c.encode(obj)), obj)


@settings(max_examples=60, deadline=None)
@given(st.lists(text, min_size=1, max_size=10, unique=True), vectors())
def test_dictionary_round_trip(keys, values):
    d = c.Dictionary(c.Vector(c.STRING, np.array(keys, dtype=object)), values)
    assert same(c.decode(c.encode(d)), d)


def test_symbol_base_is_reused_within_one_message():
    """Two SYMBOL columns: each sends its own base; a base id sent with size 0 reuses one."""
    base = struct.pack("<BB", c.SYMBOL_WITH_BASE, c.VECTOR) + struct.pack("<ii", 2, 1)
    first = base + struct.pack("<ii", 0, 2) + b"\0AAPL\0" + struct.pack("<ii", 1, 0)
    again = base + struct.pack("<ii", 0, 0) + struct.pack("<ii", 0, 1)
    decoder = c.Decoder(c.Source(first + again))
    assert decoder.object().values.tolist() == ["AAPL", ""]
    assert decoder.object().values.tolist() == ["", "AAPL"]
    with pytest.raises(c.CodecError, match="reused before"):
        c.Decoder(c.Source(again)).object()


def test_truncated_object_is_an_error():
    data = c.encode(c.Vector(c.INT, np.arange(5, dtype="i4")))
    with pytest.raises(c.CodecError, match="truncated"):
        c.decode(data[:-3])


def test_function_request_is_framed_by_decoding_its_arguments():
    args = [c.Scalar(c.LONG, 5), c.Table("", {"a": c.Vector(c.DOUBLE, np.array([1.0, 2.0]))})]
    body = "function\nf\n2\n1"
    payload = f"API2 77 {len(body)} / 32_1_4_64__0\n{body}".encode() + b"".join(c.encode(a) for a in args)
    src = c.Source(payload + b"API2 77 10 / 32_1_4_64__0\nscript\n1+1")
    first = read_request(src)
    assert (first.command, first.lines[0], len(first.args)) == ("function", "f", 2)
    assert same(first.args[1], args[1])
    second = read_request(src)
    assert (second.command, second.script) == ("script", "1+1")


# --- the target's raw reader walks the same bytes without decoding -------------------------------
def _skip_all(payload: bytes, objects: int = 1) -> int:
    a, b = socket.socketpair()
    try:
        threading.Thread(target=lambda: (a.sendall(payload + b"TAIL"), a.close()), daemon=True).start()
        reader = _Reader(b)
        for _ in range(objects):
            _skip_object(reader)
        return reader.pos
    finally:
        b.close()


@settings(max_examples=80, deadline=None)
@given(st.lists(objects, min_size=1, max_size=3))
def test_raw_reader_consumes_exactly_one_encoding(objs):
    payload = b"".join(c.Encoder().object(o) for o in objs)
    assert _skip_all(payload, len(objs)) == len(payload)


def test_raw_reader_skips_compressed_vectors_by_byte_count():
    """DolphinDB's compressed vector (type 26): rows = byte count of the 20-byte header + data."""
    body = bytes(range(40))
    compressed = struct.pack("<BB", c.COMPRESS, c.VECTOR) + struct.pack("<ii", len(body), 1) + body
    table = (struct.pack("<BB", 0, c.TABLE) + struct.pack("<ii", 10, 2) + b"t\0a\0b\0" + compressed
             + c.encode(c.Vector(c.INT, np.arange(10, dtype="i4"))))
    assert _skip_all(table) == len(table)


# --- quoting: no value can change the meaning of a script -----------------------------------------
@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=40))
def test_string_literal_is_one_token_and_round_trips(value):
    try:
        literal = q.string(value)
    except ValueError:
        assert any(ord(ch) < 32 and ch not in "\n\r\t\0" or ord(ch) == 127 for ch in value)
        return
    assert re.fullmatch(rf'"{QS}"', literal)
    assert unquote(literal[1:-1]) == value.replace("\0", "")


NAMES = scripts.Names("dfs://tickbench_taq_x", "quotes", "quotes_append", "quotes_minute")
COLS = scripts.Columns(("symbol", "date", "time", "bid", "ofr"), ("SYMBOL", "DATE", "SECOND", "DOUBLE", "DOUBLE"),
                       "date", "DATE", "symbol", "time", "SECOND", "bid", "ofr")


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.one_of(st.characters(blacklist_categories=("Cs", "Cc")),
                                  st.sampled_from(['"', "\\", "\n", "\t", ",", ")", ">", "`"])), max_size=30))
def test_any_key_stays_inside_its_literal(key):
    """A key with quotes, backslashes, commas, newlines of script... stays one string value: the
    slice script still has exactly the template's shape and carries the key unchanged."""
    body = scripts.select_slice(NAMES, COLS, dt.date(2007, 8, 23), key)
    script = scripts.measured("tickbench_w0_1_abc", body)
    m = re.fullmatch(MEASURED, script, flags=re.S)
    assert m, script
    inner = re.fullmatch(
        rf'tickbench_res = select \* from loadTable\("({QS})", "({QS})"\) where (.+)', m.group(1), flags=re.S)
    assert inner and inner.group(1) == NAMES.db
    conditions = split_conditions(inner.group(3))
    assert conditions[0] == "date = 2007.08.23" and len(conditions) == 2
    cm = re.fullmatch(rf'symbol = "({QS})"', conditions[1], flags=re.S)
    assert cm and unquote(cm.group(1)) == key


@pytest.mark.parametrize("path", ["dfs://a b", 'dfs://x")\nwhatever', "dfs:/x", "/tmp/x", "dfs://x;y",
                                  "dfs://", "DFS://x", "dfs://x//y", 123, "dfs://x\n"])
def test_bad_database_paths_are_refused(path):
    with pytest.raises(ValueError, match="database path"):
        q.db_path(path)


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=20))
@example("A\n")
@example("quotes\n")
@example("tickbench_res\r\n")   # found by hypothesis once: always tried now
def test_identifiers_are_plain_names(value):
    try:
        q.identifier(value)
    except ValueError as exc:
        assert "name" in str(exc)
        return
    assert re.fullmatch(r"[A-Za-z][A-Za-z0-9_]*", value) and value.lower() not in q.RESERVED


def test_keywords_and_types_are_refused():
    with pytest.raises(ValueError, match="keyword"):
        q.identifier("select", "table name")
    with pytest.raises(ValueError, match="column type"):
        q.type_literal("DOUBLE]); dropDatabase(\"dfs://x\"")


def test_dates_and_times_are_formatted_by_code():
    assert q.date(dt.date(2007, 8, 3)) == "2007.08.03"
    assert q.date(dt.datetime(2019, 9, 10, 15, 0)) == "2019.09.10"
    assert q.time_of_day(9 * 3600 + 30 * 60, "SECOND") == "09:30:00"
    assert q.time_of_day(15 * 3600 + 59 * 60 + 59, "TIME") == "15:59:59.000"
    with pytest.raises(ValueError):
        q.date("2007.08.23; dropDatabase")
    with pytest.raises(ValueError):
        q.time_of_day(90000, "SECOND")
