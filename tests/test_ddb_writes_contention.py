"""DolphinDB writes a real cluster accepts: each writing user owns its partitions (no chunk lock
taken from another user), the import table is created once before any worker starts, and a cold
clear flushes the OLAP cache engine before it clears the caches.

The test server is as strict as DolphinDB here (tests/ddbserver/transactions.py): a DFS write
holds the chunks it writes for its transaction (``--write-delay`` makes it last long enough to
overlap), a concurrent write to a held chunk is retried (atomic='CHUNK') or fails with DolphinDB's
own text (atomic='TRANS'), each conflict is counted; a create of a table that exists by then fails;
fresh writes stay in the OLAP cache engine (``--olap-cache-rows``) until flushed.
"""
from __future__ import annotations

import datetime as dt
import threading

import dolphindb as ddb
import dolphindb.settings  # noqa: F401  (ddb.settings: the client's type codes)
import pandas as pd
import pytest

from tests.ddbserver.fixture import ddb_server_factory  # noqa: F401
from workloads.datasets import get_dataset
from workloads.datasets.schema import Scale, StringMode
from workloads.operations.shares import write_share
from workloads.results.store import ResultsStore
from workloads.run.runner import Runner
from workloads.scenario import Scenario
from workloads.targets.base import IMPORT_TABLE
from workloads.targets.dolphindb import DolphinDBTarget, scripts
from workloads.targets.dolphindb.frames import typed_frame, upload_hints

pytestmark = pytest.mark.timeout(300)
SCALE = Scale(days=2, rows_per_day=5_000, symbols=20)
PASSWORD = "123456"
USERS = 8


def config(server, **extra) -> dict:
    return {"host": server.host, "port": server.port, "user": "admin", "password": PASSWORD,
            "timeout": 5, "query_timeout": 60, **extra}


def session(server_or_target) -> ddb.session:
    """A real client session on the server (or on a single-node target's server)."""
    where = getattr(server_or_target, "config", None)
    host, port = (where["host"], where["port"]) if where else (server_or_target.host, server_or_target.port)
    s = ddb.session()
    s.connect(host, port, "admin", PASSWORD)
    return s


def all_at_once(count: int, work) -> list:
    """``work(i)`` in ``count`` threads released together; the exceptions they raised (or None)."""
    barrier, outcomes = threading.Barrier(count), [None] * count

    def run(i: int) -> None:
        barrier.wait()
        try:
            work(i)
        except Exception as exc:                            # kept: the test asserts on them
            outcomes[i] = exc

    threads = [threading.Thread(target=run, args=(i,)) for i in range(count)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    return outcomes


def append_frames(target, layout, frames: list) -> list:
    """Each frame appended to the append table at the same moment, one real session each."""
    names = target.names("taq", layout.scale)
    hints = upload_hints(get_dataset("taq").info.schema)
    sessions = [session(target) for _ in frames]
    try:
        return all_at_once(len(frames), lambda i: sessions[i].run(
            scripts.insert_function(names, names.append), typed_frame(frames[i], hints)))
    finally:
        for s in sessions:
            s.close()


def conflicts(server) -> int:
    return server.stats()["locks"]["conflicts"]


@pytest.fixture
def slow_writes(ddb_server_factory):  # noqa: F811
    """A server whose writes hold their chunks 0.1 s, with the TAQ layout prepared on it."""
    server = ddb_server_factory()
    target = DolphinDBTarget(config(server))
    layout = target.prepare("taq", SCALE, StringMode.ARROW)
    server.control(write_delay=0.1)
    return server, target, layout


# --- shares: whose partitions a writing user owns -------------------------------------------------
def test_each_user_owns_its_day_and_on_a_shared_day_its_own_run_of_key_partitions():
    groups = [frozenset({k}) for k in "ABCDEFGHIJ"]
    assert [write_share(w, 3, 5, groups) for w in range(3)] == [write_share(w, 3, 5, []) for w in range(3)]
    assert [write_share(w, 3, 5, groups).day_index for w in range(3)] == [0, 1, 2]    # a day each, every key
    shares = [write_share(w, 8, 2, groups) for w in range(8)]
    for day in (0, 1):
        keys = [s.keys for s in shares if s.day_index == day]
        assert len(keys) == 4 and set().union(*keys) == set("ABCDEFGHIJ")
        assert sum(len(k) for k in keys) == 10                                     # disjoint runs
    crowded = write_share(0, 30, 2, groups)                                        # 15 users, 10 ranges a day
    assert crowded.keys is None and crowded.shared_with == 14
    with pytest.raises(ValueError):
        write_share(3, 3, 2, groups)


# --- the test server is strict: locks, their retry and DolphinDB's error ------------------------
def test_users_writing_day_0_conflict_and_users_writing_their_own_partitions_do_not(slow_writes):
    server, target, layout = slow_writes
    day0 = get_dataset("taq").day_frame(0, SCALE).head(1_000)        # spans most key ranges of day 0
    before = conflicts(server)
    assert append_frames(target, layout, [day0] * USERS) == [None] * USERS     # CHUNK: retried, not failed
    assert conflicts(server) - before >= USERS - 1                    # the old way: everyone waited on chunks

    groups = target.key_groups(layout)
    assert len(groups) == SCALE.symbols and all(len(g) == 1 for g in groups)   # 20 keys: 20 RANGE buckets
    own = []
    for worker in range(USERS):
        share = write_share(worker, USERS, len(layout.days), groups)
        frame = get_dataset("taq").day_frame(share.day_index, SCALE)
        own.append(frame[frame["symbol"].isin(list(share.keys))].head(1_000))
    before = conflicts(server)
    assert append_frames(target, layout, own) == [None] * USERS
    assert conflicts(server) == before                                 # own partitions: nobody waited


def test_a_locked_chunk_fails_a_trans_write_with_dolphindbs_message(ddb_server_factory):  # noqa: F811
    server = ddb_server_factory("--write-delay", "0.3")
    s = session(server)
    try:
        s.run('db = database("dfs://trans_db", VALUE, 2024.01.01..2024.01.02, engine="OLAP", atomic="TRANS")')
        s.run('db = database("dfs://trans_db")\nschemaTable = table(1:0, ["d", "v"], [DATE, INT])\n'
              'pt = db.createPartitionedTable(schemaTable, "t", ["d"])')
    finally:
        s.close()
    sessions = [session(server) for _ in range(2)]
    frame = typed_frame(pd.DataFrame({"d": [dt.date(2024, 1, 1)] * 3, "v": [1, 2, 3]}),
                        {"d": ddb.settings.DT_DATE, "v": ddb.settings.DT_INT})
    try:
        outcomes = all_at_once(2, lambda i: sessions[i].run('tableInsert{loadTable("dfs://trans_db", "t")}', frame))
    finally:
        for one in sessions:
            one.close()
    failed = [str(e) for e in outcomes if e is not None]
    assert len(failed) == 1, outcomes
    assert "<ChunkInTransaction>The openChunks operation failed because the chunk '/trans_db/20240101/0/t' " \
           "is currently locked and in use by transaction" in failed[0] and "RefId:S00002" in failed[0]
    locks = server.stats()["locks"]
    assert locks["conflicts"] == 1 and locks["failed"] == 1 and locks["log"][0]["atomic"] == "TRANS"


# --- through the runner: 8 users appending at once ------------------------------------------------
def test_eight_users_appending_at_once_take_no_chunk_lock(slow_writes, tmp_path):
    server, target, layout = slow_writes
    before = server.stats()["locks"]
    scenario = Scenario(dataset="taq", scale=SCALE, target="dolphindb", target_config=config(server),
                        workload="concurrent-append", params={"rows_per_user": 2_000, "batch_rows": 500},
                        users=(USERS,), warmup_ops=0)
    store = ResultsStore(tmp_path / "results")
    result = Runner(scenario, store).run()
    assert result.status == "completed", result.message
    ops = store.ops(result.run_id)
    measured = ops[ops["kind"] == "measured"]
    assert measured["ok"].all() and measured["rows"].sum() == USERS * 2_000
    after = server.stats()["locks"]
    assert after["transactions"] - before["transactions"] >= USERS * 4        # every batch was a transaction
    assert after["conflicts"] == before["conflicts"], after["log"][-5:]
    names = target.names("taq", SCALE)
    s = session(server)
    try:   # every day got its four users' rows
        per_day = s.run(f"select count(*) as n from {scripts.load(names, names.append)} group by date(date) as day")
    finally:
        s.close()
    assert list(per_day["n"]) == [USERS // 2 * 2_000] * 2
    store.close()


def test_two_users_map_reduce_into_their_own_days_without_chunk_locks(slow_writes, tmp_path):
    server, target, layout = slow_writes
    before = conflicts(server)
    scenario = Scenario(dataset="taq", scale=SCALE, target="dolphindb", target_config=config(server),
                        workload="mapreduce-minute-bars", params={"days": 1}, users=(2,), operations=3,
                        warmup_ops=0, probe_ops=0)
    store = ResultsStore(tmp_path / "results")
    result = Runner(scenario, store).run()
    assert result.status == "completed", result.message
    assert conflicts(server) == before
    store.close()


# --- the import table: created once, in prepare -----------------------------------------------------
def test_a_first_import_with_four_users_creates_its_table_once(ddb_server_factory, tmp_path):  # noqa: F811
    server = ddb_server_factory("--write-delay", "0.1")
    scale = Scale(days=4, rows_per_day=1_000, symbols=20)
    scenario = Scenario(dataset="taq", scale=scale, target="dolphindb", target_config=config(server),
                        workload="import", users=(4,), warmup_ops=0)
    store = ResultsStore(tmp_path / "results")
    result = Runner(scenario, store).run()
    assert result.status == "completed", result.message
    assert result.figures["rows"].iloc[0] == scale.days * scale.rows_per_day
    names = DolphinDBTarget(config(server)).names("taq", scale)
    creates = server.stats()["creates"]
    assert creates["tables"][f"{names.db}/{names.imports}"] == 1 and creates["errors"] == []
    store.close()


def test_two_sessions_that_both_saw_no_table_race_and_the_second_create_fails(ddb_server_factory):  # noqa: F811
    server = ddb_server_factory("--write-delay", "0.2")
    target = DolphinDBTarget(config(server))
    layout = target.prepare("taq", Scale(days=1, rows_per_day=500, symbols=5), StringMode.ARROW)
    names, cols = target.names("taq", layout.scale), target.columns("taq")
    sessions = [session(server) for _ in range(4)]

    def old_first_use(i: int) -> None:           # what each import worker did before: look, then create
        if not sessions[i].run(scripts.exists_table(names, "raced")):
            sessions[i].run(scripts.create_table(names, "raced", list(zip(cols.names, cols.types)), cols.partition))
    try:
        outcomes = all_at_once(4, old_first_use)
    finally:
        for s in sessions:
            s.close()
    assert sum(e is None for e in outcomes) == 1
    assert all("already exists" in str(e) for e in outcomes if e is not None)
    creates = server.stats()["creates"]
    assert creates["tables"][f"{names.db}/raced"] == 1 and len(creates["errors"]) == 3


def test_the_import_table_exists_after_prepare_empty(ddb_server_factory):  # noqa: F811
    server = ddb_server_factory()
    target = DolphinDBTarget(config(server))
    layout = target.prepare("taq", Scale(days=1, rows_per_day=500, symbols=5), StringMode.ARROW)
    names = target.names("taq", layout.scale)
    s = session(server)
    try:
        assert s.run(scripts.exists_table(names, names.imports))
        assert s.run(scripts.count_rows(names, names.imports)) == 0
    finally:
        s.close()
    target.clear_table(layout, IMPORT_TABLE)


# --- the OLAP cache engine: flushed before the clears -------------------------------------------------
def test_a_cold_clear_flushes_the_olap_cache_engine_first(ddb_server_factory):  # noqa: F811
    server = ddb_server_factory("--data-nodes", "2", "--olap-cache-rows", "10000000")
    profile = server.profile()
    target = DolphinDBTarget({"profile": profile, "password": PASSWORD, "timeout": 5, "query_timeout": 30})
    layout = target.prepare("taq", SCALE, StringMode.ARROW)
    held = server.stats()["olap_cache"]
    assert held["held_rows"] >= SCALE.days * SCALE.rows_per_day         # fresh writes: in memory, not on disk
    target.open(layout, 0)
    try:
        admin = target._session
        target._run(admin, target._node, 'pnodeRun(clearAllCache, ["dnode1", "dnode2"])')
        seen = len(server.stats()["reads"])
        target.read_day(layout, layout.days[0])
        assert [r["cold"] for r in server.reads_since(seen)] == [False]     # the engine still held the day
        clears_seen = len(server.stats()["clears"])
        applied = target.drop_cache(layout)
        assert applied == ["pnodeRun(flushOLAPCache) on dnode1, dnode2", "pnodeRun(clearAllCache) on dnode1, dnode2"]
        clears = server.stats()["clears"][clears_seen:]
        assert [c["function"] for c in clears] == ["flushOLAPCache", "clearAllCache"]
        assert clears[0]["partitions"] > 0 and server.stats()["olap_cache"]["held_rows"] == 0
        seen = len(server.stats()["reads"])
        target.read_day(layout, layout.days[0])
        assert [r["cold"] for r in server.reads_since(seen)] == [True]      # from disk now
    finally:
        target.close()


def test_the_olap_cache_engine_writes_to_disk_when_30_percent_full(ddb_server_factory):  # noqa: F811
    server = ddb_server_factory("--olap-cache-rows", "20000")             # 30 %: 6,000 rows
    DolphinDBTarget(config(server)).prepare("taq", SCALE, StringMode.ARROW)   # 2 x 5,000 rows
    olap = server.stats()["olap_cache"]
    assert olap["full_flushes"] >= 1 and olap["held_rows"] < 6_000


def test_a_flush_the_server_refuses_is_noted_and_the_clears_still_run(ddb_server_factory):  # noqa: F811
    """DolphinDB documents flushOLAPCache for nodes with the cache engine on: where it fails, the
    engine's caches are still cleared, and the clear says the flush did not happen."""
    server = ddb_server_factory("--data-nodes", "2", "--error-match", "flushOLAPCache",
                                "--error-message", "The cache engine is not enabled.")
    target = DolphinDBTarget({"profile": server.profile(), "password": PASSWORD, "timeout": 5, "query_timeout": 30})
    layout = target.prepare("taq", SCALE, StringMode.ARROW)
    target.open(layout, 0)
    try:
        applied = target.drop_cache(layout)
    finally:
        target.close()
    assert applied[0].startswith("note: pnodeRun(flushOLAPCache) failed (") and "not enabled" in applied[0]
    assert applied[1:] == ["pnodeRun(clearAllCache) on dnode1, dnode2"]
    assert [c["function"] for c in server.stats()["clears"]][-1:] == ["clearAllCache"]
    from workloads.targets.common.cleared import kinds_of
    assert kinds_of(applied) == "engine caches"


def test_a_database_reused_from_a_build_with_other_key_ranges_is_refused_in_one_line(ddb_server_factory):  # noqa: F811
    """The key groups writers own come from the live scheme's check, not from code alone: a
    database of the same name cut into other ranges (an older build's) would make writers share
    partitions again, silently."""
    server = ddb_server_factory()
    target = DolphinDBTarget(config(server, db_prefix="dfs://older"))
    names = target.names("taq", SCALE)
    days = get_dataset("taq").trading_days(SCALE)
    older = session(server)
    try:                                        # an older build's cut: 4 ranges where this one cuts 20
        older.run(scripts.create_database(names, days[0], days[-1] + dt.timedelta(days=31),
                                          ["A", "G", "M", "S", "~"]))
    finally:
        older.close()
    layout = target.prepare("taq", SCALE, StringMode.ARROW)
    target.close()
    with pytest.raises(Exception, match=r"^dfs://older\S* holds 4 key ranges \(A to ~\), not the 20 this version "
                                        r"cuts .*: made by another build; drop it"):
        target.key_groups(layout)
    fresh = DolphinDBTarget(config(server, db_prefix="dfs://fresh"))
    assert len(fresh.key_groups(fresh.prepare("taq", SCALE, StringMode.ARROW))) == SCALE.symbols
    fresh.close()
