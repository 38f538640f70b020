"""A user's own trades on DolphinDB (its wire-protocol stand-in, spoken to by the real ``dolphindb``
client), beyond what tests/test_user_data_servers.py runs on every server engine: a dataset imported
without a key is partitioned by day alone and read back in time order, a slice and minute bars of it
are refused in one line; a temporal literal is compared only with a column of its own type, as
DolphinDB compares them, and the target's day bounds are of the time column's own type. A dataset
keyed by an integer (a security id) is RANGE-partitioned by boundaries of that integer type and
sliced with integer literals; text boundaries or a quoted key are refused, as DolphinDB refuses them."""
from __future__ import annotations

import datetime as dt

import dolphindb as ddb
import numpy as np
import pandas as pd
import pytest

from tests.trades_file import trades_table, write_trades_csv
from workloads.datasets import get_dataset
from workloads.datasets.roles import Roles
from workloads.datasets.schema import Scale, StringMode
from workloads.targets import make_target
from workloads.targets.base import TargetError
from workloads.targets.common.bars import minute_bars as pandas_bars
from workloads.targets.dolphindb import scripts

ROWS, DAYS, SYMBOLS = 3_000, 2, 5
SCALE = Scale(days=DAYS, rows_per_day=ROWS // DAYS, symbols=SYMBOLS)


def _config(server) -> dict:
    return {"host": server.host, "port": server.port, "user": "admin", "password": "123456"}


def _import(tmp_path, name: str, roles: Roles) -> str:
    from workloads.datasets.tick_import import import_source
    path = write_trades_csv(tmp_path / f"{name}.csv", trades_table(rows=ROWS, days=DAYS, symbols=SYMBOLS))
    return import_source(path, name, roles).info.name


def _session(server) -> ddb.session:
    session = ddb.session()
    session.connect(server.host, server.port, "admin", "123456")
    return session


def _chunks(server, names: scripts.Names) -> int:
    session = _session(server)
    try:
        frame = session.run(scripts.footprint_detail(names, names.table))
    finally:
        session.close()
    return int(frame["chunks"].iloc[0])


def test_a_dataset_without_a_key_is_partitioned_by_day_and_read_in_time_order(ddb_server, tmp_path):
    dataset = _import(tmp_path, "ticks", Roles(time="ts", price=("price",), size="qty"))
    ds = get_dataset(dataset)
    assert ds.info.key_column == ""
    target = make_target("dolphindb", _config(ddb_server))
    layout = target.prepare(dataset, SCALE, StringMode.ARROW)
    target.close()
    assert layout.rows == ROWS and len(layout.days) == DAYS
    # one partition per day: a (day, key) layout would hold a partition per key range of each day
    assert _chunks(ddb_server, target.names(dataset, SCALE)) == DAYS
    target = make_target("dolphindb", _config(ddb_server))
    target.open(layout)
    try:
        for index, day in enumerate(layout.days):
            expected = ds.day_frame(index, SCALE, StringMode.ARROW)
            got = target.read_day(layout, day).frame
            assert got["ts"].is_monotonic_increasing, f"{day} is not in time order"
            assert got["ts"].reset_index(drop=True).equals(expected["ts"].reset_index(drop=True))
        for read in (target.read_slice, target.minute_bars):
            with pytest.raises(TargetError, match=r"^dataset 'imp_ticks' has no key column: .* needs one "
                                                  r"\(name it with --key when importing\)$"):
                read(layout, layout.days[0], "S000")
    finally:
        target.close()
    # the workloads that need no key run through the real runner (upload-sweep creates its tables by day)
    sweep = {"batch_sizes": [100, 1000], "rows_per_step": 2_000}
    for workload, params in (("read-day", {}), ("upload-sweep", sweep)):
        _run(tmp_path, _config(ddb_server), dataset, workload, **params)


def _run(tmp_path, config: dict, dataset: str, workload: str, **params) -> None:
    from workloads.results.store import ResultsStore
    from workloads.run.runner import Runner
    from workloads.scenario import Scenario

    store = ResultsStore(tmp_path / f"results_{workload}")
    scenario = Scenario(dataset=dataset, scale=SCALE, target="dolphindb", target_config=config, workload=workload,
                        users=(1,), operations=2, params=params)
    result = Runner(scenario, store).run()
    try:
        assert result.status == "completed", f"{workload}: {result.message}"
        ops = store.ops(result.run_id, ("measured",))
        assert len(ops) and ops["ok"].all(), f"{workload}: {ops[~ops['ok']]['error'].tolist()}"
    finally:
        store.close()


def test_the_day_bounds_of_a_nanotimestamp_column_are_nanotimestamp_literals():
    cols = scripts.Columns(names=("ts", "sym"), types=("NANOTIMESTAMP", "SYMBOL"), date="ts",
                           date_type="NANOTIMESTAMP", key="sym", time="ts", time_type="NANOTIMESTAMP")
    assert scripts.day_filter(cols, dt.date(2024, 3, 4)) == \
        "ts between 2024.03.04T00:00:00.000000000 : 2024.03.04T23:59:59.999999999"
    millis = scripts.Columns(names=("ts", "sym"), types=("TIMESTAMP", "SYMBOL"), date="ts",
                             date_type="TIMESTAMP", key="sym", time="ts", time_type="TIMESTAMP")
    assert scripts.day_filter(millis, dt.date(2024, 3, 4)) == \
        "ts between 2024.03.04T00:00:00.000 : 2024.03.04T23:59:59.999"


def test_a_temporal_literal_is_compared_only_with_a_column_of_its_own_type(ddb_server, tmp_path):
    """DolphinDB: "Temporal data comparison should have the same data type." The stand-in refuses a
    TIMESTAMP literal against the import's NANOTIMESTAMP column and takes the NANOTIMESTAMP one,
    to the nanosecond."""
    dataset = _import(tmp_path, "trades", Roles(time="ts", key="sym", price=("price",), size="qty"))
    target = make_target("dolphindb", _config(ddb_server))
    layout = target.prepare(dataset, SCALE, StringMode.ARROW)
    target.close()
    names = target.names(dataset, SCALE)
    day = get_dataset(dataset).day_frame(0, SCALE, StringMode.ARROW)
    first = pd.Timestamp(day["ts"].min())
    stamp = first.strftime("%Y.%m.%dT%H:%M:%S")
    nanos = f"{first.microsecond * 1000 + first.nanosecond:09d}"
    table = f'loadTable("{names.db}", "{names.table}")'
    session = _session(ddb_server)
    try:
        for lo, hi in ((f"{stamp}.{nanos[:3]}", f"{stamp}.999999999"), (f"{stamp}.{nanos}", f"{stamp}.999")):
            with pytest.raises(RuntimeError, match="Temporal data comparison should have the same data type"):
                session.run(f"select * from {table} where ts between {lo} : {hi}")
        # the first row's own instant, to the ns: it alone (a TIMESTAMP reading would widen it to its ms)
        exact = session.run(f"select * from {table} where ts between {stamp}.{nanos} : {stamp}.{nanos}")
        assert len(exact) == (day["ts"] == first).sum() and pd.Timestamp(exact["ts"].iloc[0]) == first
    finally:
        session.close()
    assert layout.rows == ROWS


# ids whose text order (105 < 12 < 2048 < 7 < 99) differs from their numeric order
SECURITY_IDS = (7, 12, 99, 105, 2048)


def _write_ids_csv(path, rows: int = 1_200, days: int = 2):
    """``ts,id,price,qty``: ISO timestamps (ms), an integer security id, a price and an integer size."""
    rng = np.random.default_rng(39)
    per_day = rows // days
    stamps = np.concatenate([pd.Timestamp(f"2024-03-0{4 + d} 09:30").value
                             + np.sort(rng.integers(0, 6 * 3600 * 10**9, per_day)) // 10**6 * 10**6
                             for d in range(days)])
    frame = pd.DataFrame({"ts": pd.to_datetime(stamps).strftime("%Y-%m-%dT%H:%M:%S.%f").str[:-3],
                          "id": rng.choice(SECURITY_IDS, rows), "price": rng.uniform(10, 20, rows).round(2),
                          "qty": rng.integers(1, 500, rows)})
    frame.to_csv(path, index=False)
    return path


@pytest.mark.parametrize("id_type", ["LONG", "INT"])
def test_an_integer_key_is_partitioned_and_sliced_by_its_own_type(ddb_server, tmp_path, id_type):
    from workloads.datasets.tick_import import import_source
    path = _write_ids_csv(tmp_path / "ids.csv")
    roles = Roles(time="ts", key="id", price=("price",), size="qty")
    dataset = import_source(path, f"ids_{id_type.lower()}", roles, types={"id": id_type}).info.name
    ds = get_dataset(dataset)
    assert ds.info.schema.column("id").ddb_type == id_type
    scale = SCALE          # the runner's below: one layout
    target = make_target("dolphindb", _config(ddb_server))
    layout = target.prepare(dataset, scale, StringMode.ARROW)
    target.close()
    assert layout.rows == 1_200
    names = target.names(dataset, scale)
    # (day, key range) partitions cut by numbers: 2 days x 5 ids, each id its own range
    assert _chunks(ddb_server, names) == 2 * len(SECURITY_IDS)
    target = make_target("dolphindb", _config(ddb_server))
    target.open(layout)
    try:
        for index, day in enumerate(layout.days):
            expected = ds.day_frame(index, scale, StringMode.ARROW)
            for key in SECURITY_IDS:
                rows = expected[expected["id"] == key].reset_index(drop=True)
                got = target.read_slice(layout, day, str(key)).frame.reset_index(drop=True)
                pd.testing.assert_frame_equal(got, rows, check_dtype=False)
                reference = pandas_bars(rows, "ts", "price", "price", "qty")
                # DolphinDB labels its bars by minute() of the day (a MINUTE)
                minute = reference["minute"]
                reference["minute"] = pd.Timestamp("1970-01-01") + (minute - minute.dt.floor("D"))
                bars = target.minute_bars(layout, day, str(key)).frame
                pd.testing.assert_frame_equal(bars.reset_index(drop=True), reference, check_dtype=False,
                                              check_index_type=False)
        with pytest.raises(TargetError, match=r"key '7x' is not valid for .* column id"):
            target.read_slice(layout, layout.days[0], "7x")
    finally:
        target.close()
    table = f'loadTable("{names.db}", "{names.table}")'
    session = _session(ddb_server)
    try:
        # the stand-in is as strict as DolphinDB: a quoted key against the integer column is refused ...
        with pytest.raises(RuntimeError, match="Incompatible string literal for column id"):
            session.run(f'select * from {table} where id = "7"')
        # ... and so is a text RANGE scheme for an integer partitioning column
        session.run(scripts.create_database(scripts.Names(db=names.db + "_text", table="t", append="t_append",
                                                          minute="t_minute"),
                                            layout.days[0], layout.days[-1], ["105", "12", "7~"]))
        with pytest.raises(RuntimeError, match="partitioning column id .* incompatible with the partition scheme"):
            session.run(scripts.create_table(scripts.Names(db=names.db + "_text", table="t", append="t_append",
                                                           minute="t_minute"),
                                             "t", [("ts", "TIMESTAMP"), ("id", id_type)], ["ts", "id"]))
    finally:
        session.close()
    for workload in ("read-day", "slice-download", "minute-bars"):
        _run(tmp_path, _config(ddb_server), dataset, workload)


def test_an_integer_keyed_quote_dataset_prepares_its_minute_table_keyed_by_that_integer(ddb_server, tmp_path):
    """The minute-bars table of a dataset with a bid and an ask is partitioned like the table: its
    key column of the key's own type (a SYMBOL key in an INT scheme is refused, as DolphinDB does)."""
    from workloads.datasets.tick_import import import_source
    path = _write_ids_csv(tmp_path / "quotes.csv")
    frame = pd.read_csv(path)                                   # a day and a time of day: bars of their own
    frame = pd.DataFrame({"day": frame["ts"].str[:10], "tod": frame["ts"].str[11:], "id": frame["id"],
                          "bid": frame["price"], "ask": frame["price"] + 0.01})
    frame.to_csv(path, index=False)
    dataset = import_source(path, "id_quotes", Roles(time="day", time_of_day="tod", key="id", price=("bid", "ask")),
                            types={"id": "INT", "day": "DATE", "tod": "TIME"}).info.name
    target = make_target("dolphindb", _config(ddb_server))
    try:
        layout = target.prepare(dataset, SCALE, StringMode.ARROW)
    finally:
        target.close()
    assert layout.rows == 1_200
    names = target.names(dataset, SCALE)
    session = _session(ddb_server)
    try:
        columns = session.run(f'schema(loadTable("{names.db}", "{names.minute}")).colDefs')
    finally:
        session.close()
    assert dict(zip(columns["name"], columns["typeString"]))["id"] == "INT"
