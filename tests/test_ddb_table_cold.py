"""A DolphinDB table read in place, cold: its server's caches emptied as for a Tickbench layout,
a TSDB database's always-on cache engine flushed first (``flushTSDBCache``), on the wire test
server that keeps a TSDB database's fresh writes in memory until flushed and refuses
``flushOLAPCache`` where the OLAP cache engine is off, as DolphinDB does."""
from __future__ import annotations

import json

import dolphindb as ddb
import numpy as np
import pandas as pd
import pytest

from workloads.datasets.roles import Roles
from workloads.results.store import ResultsStore
from workloads.run.runner import Runner
from workloads.scenario import Scenario
from workloads.targets.table import add_table_target

DAYS = pd.to_datetime(["2024-03-04", "2024-03-05", "2024-03-06"])


def _session(server) -> ddb.session:
    session = ddb.session()
    session.connect(server.host, server.port, "admin", "123456")
    return session


@pytest.fixture
def tsdb_table(ddb_server):
    """A user's TSDB table (VALUE by day, RANGE by symbol, sorted by symbol and time), freshly
    written: its rows are in the TSDB cache engine, not yet on disk."""
    session = _session(ddb_server)
    try:
        session.run('dbDate = database("", VALUE, 2024.03.01..2024.03.31)\n'
                    'dbKey = database("", RANGE, symbol(["A", "M", "ZZZZ"]))\n'
                    'db = database("dfs://tsdbmine", COMPO, [dbDate, dbKey], engine="TSDB", atomic="CHUNK")')
        table = ('db = database("dfs://tsdbmine")\n'
                 'schemaTable = table(1:0, ["ts", "sym", "price", "qty"], [NANOTIMESTAMP, SYMBOL, DOUBLE, LONG])\n'
                 'pt = db.createPartitionedTable(schemaTable, "ticks", ["ts", "sym"]')
        with pytest.raises(RuntimeError, match="sortColumns must be specified"):
            session.run(table + ")")                 # a TSDB table needs its sort columns, as DolphinDB says
        session.run(table + ', sortColumns=["sym", "ts"])')
        rows = 40
        frame = pd.DataFrame({"ts": np.repeat(DAYS, rows) + pd.to_timedelta(np.tile(np.arange(rows), 3), "s"),
                              "sym": np.tile(["AAPL", "MSFT", "XOM", "IBM"], rows * 3 // 4),
                              "price": np.arange(rows * 3, dtype=float), "qty": np.arange(rows * 3, dtype="int64")})
        session.run('tableInsert{loadTable("dfs://tsdbmine", "ticks")}', frame)
        assert session.run('schema(loadTable("dfs://tsdbmine", "ticks")).engineType') == "TSDB"
        yield "dfs://tsdbmine/ticks"
    finally:
        session.run('dropDatabase("dfs://tsdbmine")')
        session.close()


def test_a_tsdb_table_in_place_is_read_cold_after_its_cache_engine_is_flushed(ddb_server, tsdb_table, tmp_path):
    connection = {"host": ddb_server.host, "port": ddb_server.port, "user": "admin", "password": "123456"}
    saved = add_table_target("tsdbticks", "dolphindb", f"{ddb_server.host}:{ddb_server.port}", tsdb_table,
                             Roles(time="ts", key="sym", price=("price",), size="qty"), connection)
    held = ddb_server.stats()["tsdb_cache"]["held_rows"]
    assert held > 0                                      # fresh writes: in the TSDB cache engine's memory
    seen = len(ddb_server.stats()["reads"])
    store = ResultsStore(tmp_path / "results")
    try:
        result = Runner(Scenario(dataset=saved.dataset, target="table", target_config={"name": saved.name, **connection},
                                 workload="read-day", users=(1,), operations=3, cache="cold", warmup_ops=0,
                                 probe_ops=0), store).run()
        assert result.status == "completed", result.message
        ops = store.ops(result.run_id, kinds=("measured",))
        assert len(ops) == 3 and ops["ok"].all()
        facts = [json.loads(e) for e in ops["extra"]]
        assert all(f["cold"] for f in facts)
        cleared = " ".join(f["cleared"] for f in facts)
        assert "pnodeRun(flushTSDBCache)" in cleared and "pnodeRun(clearAllCache)" in cleared
        assert "flushOLAPCache) failed" in cleared             # the OLAP engine is off: refused, noted
    finally:
        store.close()
    reads = [r for r in ddb_server.reads_since(seen) if r["kind"] == "plain"]
    assert len(reads) == 3 and all(r["cold"] for r in reads)     # none served from memory or a cache
    assert ddb_server.stats()["tsdb_cache"]["held_rows"] == 0
