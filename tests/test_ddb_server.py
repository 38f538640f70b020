"""The REAL dolphindb client against the test server: login, scripts, uploads, inserts, protocols,
and every injected fault (clear error, no hang)."""
from __future__ import annotations

import datetime as dt
import time

import dolphindb as ddb
import dolphindb.settings as keys
import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

from tests.ddbserver.fixture import ddb_cluster, ddb_server, ddb_server_factory  # noqa: F401

pytestmark = pytest.mark.timeout(60)


def connect(server, password="123456", **kw):
    s = ddb.session(**kw)
    ok = s.connect(server.host, server.port, "admin", password, timeout=dt.timedelta(seconds=3),
                   netTimeout=dt.timedelta(seconds=3))
    return s, ok


@pytest.fixture
def faults(ddb_server):  # noqa: F811
    """Faults set in a test are reset afterwards, so the shared server stays clean."""
    yield ddb_server.control
    ddb_server.control(reset=True)


def test_login_runs_scripts_and_reports_errors(ddb_server):  # noqa: F811
    s, ok = connect(ddb_server)
    assert ok
    assert "tickbench-test-server" in s.run("version()")
    assert s.run("20+22") == 42
    with pytest.raises(RuntimeError, match="Syntax Error"):
        s.run("select * from nowhere")
    assert s.run("2*3") == 6          # the session survives an error reply
    s.close()


def test_wrong_password_makes_connect_return_false(ddb_server):  # noqa: F811
    s, ok = connect(ddb_server, password="wrong")
    assert ok is False


def test_upload_round_trips_a_typed_frame(ddb_server):  # noqa: F811
    s, _ = connect(ddb_server)
    frame = pd.DataFrame({
        "sym": pd.Series(["AAPL", "MSFT", "AAPL", ""], dtype="str"),
        "txt": pd.Series(["a b", "ü", "x\\y", 'q"'], dtype=object),
        "day": pd.to_datetime(["2007-08-23", "2007-08-24", "2007-08-23", "1999-12-31"]),
        "sec": pd.to_datetime(["1970-01-01 09:30:01", "1970-01-01 15:59:59", "1970-01-01 00:00:00",
                               "1970-01-01 12:00:00"]),
        "ms": pd.to_datetime(["1970-01-01 09:30:01.250"] * 4),
        "ts": pd.to_datetime(["2016-11-15 10:00:00.123", "2016-11-16 00:00:00", "2016-11-17 23:59:59.999",
                              "2016-11-18 01:02:03"], format="ISO8601"),
        "px": [1.5, -2.25, 1e300, 0.0],
        "n": np.array([1, -2, 2**31 - 1, 7], dtype="int32"),
        "big": np.array([2**40, -1, 0, 5], dtype="int64"),
        "c": np.array([65, 66, -5, 0], dtype="int8"),
    })
    object.__setattr__(frame, "__DolphinDB_Type__", {"sym": keys.DT_SYMBOL, "day": keys.DT_DATE,
                                                     "sec": keys.DT_SECOND, "ms": keys.DT_TIME,
                                                     "ts": keys.DT_TIMESTAMP})
    s.upload({"up": frame})
    back = s.run("up")
    for col in frame.columns:
        expected = frame[col].fillna("") if frame[col].dtype == object else frame[col]
        assert back[col].tolist() == expected.tolist(), col
    s.close()


def test_table_insert_into_a_shared_table(ddb_server):  # noqa: F811
    s, _ = connect(ddb_server)
    s.run('share table(1:0, ["k", "v", "d"], [SYMBOL, DOUBLE, DATE]) as insert_probe')
    chunk = pd.DataFrame({"k": ["a", "b", "c"], "v": [1.0, 2.0, 3.0], "d": pd.to_datetime(["2020-01-02"] * 3)})
    object.__setattr__(chunk, "__DolphinDB_Type__", {"k": keys.DT_SYMBOL, "d": keys.DT_DATE})
    assert s.run("tableInsert{insert_probe}", chunk) == 3
    assert s.run("tableInsert{insert_probe}", chunk) == 3
    back = s.run("insert_probe")
    assert back["k"].tolist() == ["a", "b", "c"] * 2 and back["v"].sum() == 12.0
    bad = chunk.drop(columns=["d"])
    with pytest.raises(RuntimeError, match="number of columns"):
        s.run("tableInsert{insert_probe}", bad)
    s.run('undef("insert_probe", SHARED)')
    s.close()


@pytest.mark.parametrize("protocol,compress", [("ARROW", False), ("PICKLE", False), ("DDB", True)])
def test_protocols_and_compression(ddb_server, protocol, compress):  # noqa: F811
    s, ok = connect(ddb_server, protocol=getattr(keys, f"PROTOCOL_{protocol}"), compress=compress)
    assert ok
    s.run('share table(1:0, ["k", "v"], [SYMBOL, INT]) as proto_probe')
    try:
        s.run("tableInsert{proto_probe}", pd.DataFrame({"k": ["x", "y"], "v": np.array([1, 2], "int32")}))
        result = s.run("proto_probe")
        if protocol == "ARROW":
            assert isinstance(result, pa.Table)     # the client hands Arrow replies over as Arrow
            result = result.to_pandas()
        assert result["k"].astype(str).tolist() == ["x", "y"] and result["v"].tolist() == [1, 2]
    finally:
        s.run('undef("proto_probe", SHARED)')
        s.close()


def test_cluster_perf_lists_the_fake_topology(ddb_cluster):  # noqa: F811
    s = ddb.session()
    assert s.connect(ddb_cluster.host, ddb_cluster.port, "admin", "123456")
    perf = s.run("getClusterPerf(true)")
    assert perf["mode"].tolist() == [2, 0, 0, 0]
    assert perf["port"].tolist() == ddb_cluster.ports
    for port, name in zip(ddb_cluster.data_ports, ["dnode1", "dnode2", "dnode3"]):
        node = ddb.session()
        assert node.connect(ddb_cluster.host, port, "admin", "123456")
        assert node.run("getNodeAlias()") == name   # every port is a distinct node
        node.close()
    s.close()


# --- faults ---------------------------------------------------------------------------------------
def test_error_fault_raises_with_the_message(ddb_server, faults):  # noqa: F811
    faults(error_match=r"^version", error_message="Out of memory on node dnode7")
    s, _ = connect(ddb_server)
    with pytest.raises(RuntimeError, match="Out of memory on node dnode7"):
        s.run("version()")
    assert s.run("1+1") == 2
    s.close()


def test_close_mid_reply_fails_fast(ddb_server, faults):  # noqa: F811
    faults(close_match=r"^getNodeAlias")
    s, _ = connect(ddb_server)
    start = time.monotonic()
    with pytest.raises(RuntimeError):
        s.run("getNodeAlias()")
    assert time.monotonic() - start < 5


def test_slow_reply_hits_the_client_timeout(ddb_server, faults):  # noqa: F811
    faults(delay=6.0, delay_match=r"^version")
    s, _ = connect(ddb_server)    # 3 s receive timeout
    s2, _ = connect(ddb_server)
    start = time.monotonic()
    with pytest.raises(RuntimeError):
        s.run("version()")
    assert time.monotonic() - start < 5
    assert s2.run("1+1") == 2      # other requests are not delayed


def test_refused_login_and_uninitialised_node(ddb_server, faults):  # noqa: F811
    faults(refuse_login=True)
    assert connect(ddb_server)[1] is False
    faults(reset=True, not_initialised=True)
    assert connect(ddb_server)[1] is False
    faults(reset=True)
    assert connect(ddb_server)[1] is True


def test_silent_server_times_out(ddb_server_factory):  # noqa: F811
    server = ddb_server_factory("--silent")
    start = time.monotonic()
    assert connect(server)[1] is False
    assert time.monotonic() - start < 8
