"""MongoDB target through pymongo and pymongoarrow against the wire-protocol stand-in
(mongo-java-server: a real server process, NOT MongoDB: these tests check answers, never timings).
Checked against the generator and against DuckDB; the fill pipelines, which the stand-in refuses,
also against the pandas suite's fills through an evaluator of their window stages."""
from __future__ import annotations

import bisect
import datetime as dt
import itertools
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path

import pandas as pd
import pytest

import pymongo  # the test extra installs pymongo<4.18: a missing one fails here, never skips
import pymongoarrow.api  # the mongodb extra installs it: a missing one fails here, never skips

from tests.test_targets_files import (assert_phases, assert_same_rows, assert_string_dtypes, busiest_key,
                                      reference_bars, timed)
from workloads.datasets import get_dataset
from workloads.datasets.csv_files import csv_files
from workloads.datasets.csvread import read_csv
from workloads.datasets.schema import Scale, StringMode
from workloads.queries.answers import normalise
from workloads.local_engines.base import free_port
from workloads.targets import make_target
from workloads.targets.base import IMPORT_TABLE, NotSupported, TargetError
from workloads.targets.mongodb.dialect import SEQ, STAND_IN, bson_value, table_name
from workloads.queries.verify import NOT_SUPPORTED, SAME, verify
from workloads.run.worker import describe_error

SCALE = Scale(days=2, rows_per_day=20_000, symbols=50)
DEVICES_SCALE = Scale(days=1, rows_per_day=6_000, symbols=40)
LOOPBACK = "127.0.0.1"


def config(server, **more) -> dict:
    return {**server.config, "batch_rows": 7_000, **more}


@pytest.fixture(scope="module")
def laid_out(mongo_server):
    target = make_target("mongodb", config(mongo_server))
    layout = target.prepare("taq", SCALE, StringMode.ARROW)
    target.close()
    return config(mongo_server), layout


@pytest.fixture
def opened(laid_out):
    cfg, layout = laid_out
    target = make_target("mongodb", cfg)
    target.open(layout)
    yield target, layout
    target.close()


def test_pymongo_is_one_the_stand_in_accepts():
    major, minor = (int(p) for p in pymongo.version.split(".")[:2])
    assert (major, minor) < (4, 18), "pymongo 4.18+ refuses mongo-java-server: pip install 'pymongo<4.18'"


def test_the_module_imports_pymongo_only_when_it_connects():
    code = ("import sys, workloads.targets.mongodb as m; m.MongoDBTarget({'host': '127.0.0.1'}); "
            "print('pymongo' in sys.modules, 'pymongoarrow' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         cwd=Path(__file__).resolve().parents[1]).stdout.split()
    assert out == ["False", "False"]


def test_a_missing_pymongoarrow_names_the_extra():
    code = ("import sys; sys.modules['pymongoarrow'] = None\n"
            "import workloads.targets.mongodb.connection as m\n"
            "try:\n    m._arrow_api()\nexcept Exception as e:\n    print(type(e).__name__, e)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         cwd=Path(__file__).resolve().parents[1]).stdout.strip()
    assert out.startswith("MissingClient mongodb needs the pymongoarrow package: install tickbench[mongodb]"), out


def test_a_layout_variant_must_be_one_the_target_knows():
    with pytest.raises(TargetError, match="layout 'columns': choose one of documents, timeseries"):
        make_target("mongodb", {"host": LOOPBACK, "layout": "columns"})
    with pytest.raises(TargetError, match="granularity 'days'"):
        make_target("mongodb", {"host": LOOPBACK, "layout": "timeseries", "granularity": "days"})


# --- layout ---------------------------------------------------------------------------------------
def test_prepare_lays_out_one_collection_with_the_day_key_index(laid_out):
    cfg, layout = laid_out
    target = make_target("mongodb", cfg)
    assert layout.rows == SCALE.rows_per_day * SCALE.days and not layout.reused and layout.footprint_bytes > 0
    assert layout.days == tuple(get_dataset("taq").trading_days(SCALE))
    assert target.row_count(layout) == layout.rows
    coll = target.db()[table_name("taq", SCALE)]
    keys = {i["name"]: list(i["key"].items()) for i in coll.list_indexes()}
    assert keys["day_key"] == [("date", 1), ("symbol", 1), ("time", 1), (SEQ, 1)]
    doc = coll.find_one({}, {"_id": 0})
    assert set(doc) == set(get_dataset("taq").info.schema.names) | {SEQ}
    assert doc["date"].hour == 0 and doc["time"].date().isoformat() == "1970-01-01"   # datetimes, UTC
    manifest = target.db()["_tickbench_layouts"].find_one({"_id": table_name("taq", SCALE)})
    assert manifest["complete"] and len(manifest["keys_sample"]) == 50 and "content" in manifest["scale"]
    target.close()


def test_second_prepare_is_reused_without_generating(laid_out, monkeypatch):
    cfg, layout = laid_out

    def must_not_generate(*args, **kwargs):
        raise AssertionError("a reused layout must not generate data")
    monkeypatch.setattr(type(get_dataset("taq")), "generate_day", must_not_generate)
    again = make_target("mongodb", cfg).prepare("taq", SCALE, StringMode.CATEGORY)
    assert again.reused and again.rows == layout.rows and again.days == layout.days


def test_the_stand_in_is_named_everywhere(opened):
    target, layout = opened
    described = target.describe()
    assert described["server"] == STAND_IN and "not MongoDB" in described["server"]
    assert described["server_version"] and described["local_engine"] is True and "warning" in described
    assert target.read_slice(layout, layout.days[0], layout.keys_sample[0]).extra["server"] == STAND_IN
    assert target.probed_ops == frozenset()        # the stand-in has no explain: no server time


# --- reads ----------------------------------------------------------------------------------------
def in_row_order(frame: pd.DataFrame, info) -> pd.DataFrame:
    """The frame's rows sorted by every column's value (strings compared as objects): order is not
    part of a day or slice read's answer. Dtypes are kept."""
    plain = frame.reset_index(drop=True).astype({c.name: object for c in info.schema.columns if c.is_string})
    order = plain.sort_values(list(plain.columns), kind="stable").index
    return frame.reset_index(drop=True).iloc[order].reset_index(drop=True)


def test_reads_are_pymongoarrow_calls_without_a_sort(opened, monkeypatch):
    """A day and a slice are each one ``find_arrow_all`` with the dataset's BSON schema and no sort,
    and the frame is that call's table (no document decoded in Python)."""
    target, layout = opened
    calls, tables = [], []
    real = pymongoarrow.api.find_arrow_all

    def spy(collection, query, **kwargs):
        calls.append(kwargs)
        tables.append(real(collection, query, **kwargs))
        return tables[-1]
    monkeypatch.setattr(pymongoarrow.api, "find_arrow_all", spy)
    day = target.read_day(layout, layout.days[0])
    part = target.read_day(layout, layout.days[0], ("symbol", "time", "bid"))
    target.read_slice(layout, layout.days[0], layout.keys_sample[0])
    assert len(calls) == 3 and all("sort" not in c for c in calls)
    assert [list(c["schema"].to_arrow().names) for c in calls[:2]] == \
        [list(get_dataset("taq").info.schema.names), ["symbol", "time", "bid"]]
    assert day.rows == tables[0].num_rows == SCALE.rows_per_day and list(part.frame.columns) == ["symbol", "time", "bid"]
    assert day.frame["bid"].tolist() == tables[0].column("bid").to_pylist()


@pytest.mark.parametrize("strings", list(StringMode), ids=lambda m: m.value)
def test_read_day_gives_back_duckdbs_frame(strings, opened, duck, day_frames):
    target, layout = opened
    duck_target, duck_layout = duck
    info = get_dataset("taq").info
    lay = replace(layout, strings=strings)
    for index, day in enumerate(lay.days[:1] if strings is not StringMode.ARROW else lay.days):
        result, wall = timed(lambda: target.read_day(lay, day))
        assert result.rows == SCALE.rows_per_day and result.nbytes == SCALE.rows_per_day * 45
        assert_phases(result, wall, {"query", "decode"})
        assert result.extra["read_path"] == "pymongoarrow find_arrow_all"
        assert_string_dtypes(result.frame, info, strings)
        want = duck_target.read_day(replace(duck_layout, strings=strings), day).frame
        # categories come in the order the rows do (pyarrow's dictionary): the same set, any order
        pd.testing.assert_frame_equal(in_row_order(result.frame, info), in_row_order(want, info),
                                      check_categorical=strings is not StringMode.CATEGORY)
        if strings is StringMode.CATEGORY:
            assert all(set(result.frame[c.name].cat.categories) == set(want[c.name].cat.categories)
                       for c in info.schema.columns if c.is_string)
        if strings is StringMode.OBJECT:
            assert_same_rows(in_row_order(result.frame, info), in_row_order(day_frames[index], info), info)


def test_read_slice_holds_only_that_key_and_day(opened, day_frames):
    target, layout = opened
    info = get_dataset("taq").info
    lay = replace(layout, strings=StringMode.OBJECT)
    key = busiest_key(day_frames[0], info)
    got = target.read_slice(lay, lay.days[0], key).frame
    want = day_frames[0][day_frames[0][info.key_column].astype(object) == key]
    assert_same_rows(in_row_order(got, info), in_row_order(want, info), info)
    assert target.read_slice(lay, lay.days[0], "NO_SUCH_KEY").rows == 0
    assert target.read_slice(lay, lay.days[0], "{'$ne': 1}").rows == 0           # a value, never a query


def test_minute_bars_match_an_independent_pandas_reference(opened, day_frames):
    target, layout = opened
    info = get_dataset("taq").info
    for index in range(SCALE.days):
        key = busiest_key(day_frames[index], info)
        result = target.minute_bars(layout, layout.days[index], key)
        want = reference_bars(day_frames[index], info, key)
        assert result.rows == len(want) > 10
        pd.testing.assert_frame_equal(result.frame, want, check_dtype=True)


# --- writes, import, export, footprint --------------------------------------------------------------
def test_append_adds_rows_to_the_layouts_append_collection(opened, day_frames):
    target, layout = opened
    target.clear_table(layout)
    batch = day_frames[0].iloc[:500]
    result, wall = timed(lambda: target.append(layout, batch))
    assert result.rows == 500 and result.nbytes == 500 * 45
    assert_phases(result, wall, {"decode", "query"})
    assert target.appended_rows(layout) == 500
    target.append(layout, batch, table="upload_test")
    assert target.row_count(layout, "upload_test") == 500 and target.row_count(layout) == layout.rows
    target.clear_table(layout)
    assert target.appended_rows(layout) == 0


def test_import_and_export_round_trip(opened, tmp_path):
    target, layout = opened
    files = csv_files("taq", SCALE)
    target.clear_table(layout, IMPORT_TABLE)
    results = [target.import_csv(layout, f.path, f.day) for f in files]
    assert [r.rows for r in results] == [f.rows for f in files] == [SCALE.rows_per_day] * 2
    assert [r.wire_bytes for r in results] == [f.bytes for f in files]
    assert all(r.extra["queryable_s"] > 0 and set(r.phases) == {"decode", "query"} for r in results)
    columns = tuple(get_dataset("taq").info.schema.names)
    coll = target.db()[target.import_table(layout)]
    imported = pd.DataFrame(list(coll.find({}, {"_id": 0})))
    generated = pd.concat([get_dataset("taq").day_frame(i, SCALE) for i in range(2)], ignore_index=True)
    assert normalise(imported[list(columns)], columns).equals(normalise(generated, columns))
    assert target.footprint_detail(layout, IMPORT_TABLE).bytes > 0
    target.clear_table(layout, IMPORT_TABLE)
    assert target.footprint_detail(layout, IMPORT_TABLE).bytes == 0
    path = tmp_path / "day.csv"
    result = target.export_csv(layout, layout.days[1], path)
    assert result.rows == SCALE.rows_per_day and result.wire_bytes == path.stat().st_size > 0
    assert normalise(read_csv(path, "taq"), columns).equals(normalise(get_dataset("taq").day_frame(1, SCALE), columns))


def test_footprint_detail_says_how_it_was_measured(opened):
    target, layout = opened
    footprint = target.footprint_detail(layout)               # the seed collection's
    trades = target._stats(f"{target.table(layout)}_trades")[0]
    assert footprint.bytes + trades == target.footprint(layout) and footprint.bytes > 0 and trades > 0
    assert footprint.replicas == 1
    assert footprint.columns == {} and "collStats" in footprint.method


def test_cold_cache_lists_only_what_was_applied(opened):
    target, layout = opened
    assert target.drop_cache(layout) == []       # WiredTiger's cache empties only on a restart
    assert target.data_files(layout) == []


# --- report 003 -----------------------------------------------------------------------------------
def test_report_003_computations_equal_duckdbs(opened, duck):
    target, layout = opened
    duck_target, duck_layout = duck
    pd.testing.assert_frame_equal(target.spread_by_minute(layout).frame,
                                  duck_target.spread_by_minute(duck_layout).frame, rtol=1e-9)
    ols = target.ols_spread(layout)
    pd.testing.assert_frame_equal(ols.frame, duck_target.ols_spread(duck_layout).frame, rtol=1e-6)
    assert ols.extra["observations"] > 0
    target.clear_table(layout, "minute")
    bars = target.mapreduce_minute_bars(layout, layout.days[:1])
    want = duck_target.mapreduce_minute_bars(duck_layout, layout.days[:1]).frame["bars"].iloc[0]
    assert bars.frame["bars"].iloc[0] == want == target.row_count(layout, target.minute_table(layout)) > 0


# --- devices: the index, the time-series variant, the fills ---------------------------------------------
@pytest.fixture(scope="module")
def devices(mongo_server):
    cfg = config(mongo_server, database="devices_test")
    target = make_target("mongodb", cfg)
    layout = target.prepare("devices", DEVICES_SCALE, StringMode.OBJECT)
    target.open(layout)
    yield target, layout
    target.close()


def test_the_devices_index_is_equality_then_range(devices):
    """The server's own account of the index: (device_id, time), a device's span being equality on
    the key then a range of time."""
    target, layout = devices
    indexes = target.db()[target.table(layout)].index_information()
    assert indexes["day_key"]["key"] == [("device_id", 1), ("time", 1)]


def test_a_devices_day_reads_back_the_generators_rows(devices):
    target, layout = devices
    info = get_dataset("devices").info
    got = target.read_day(layout, layout.days[0]).frame
    want = get_dataset("devices").day_frame(0, DEVICES_SCALE, StringMode.OBJECT)
    assert_string_dtypes(got, info, StringMode.OBJECT)
    assert_same_rows(in_row_order(got, info), in_row_order(want, info), info)


def test_the_time_series_variant_works_or_gets_the_servers_verdict(mongo_server):
    """Asked of the server: a time-series layout either reads back the generator's rows from a
    collection the server lists as 'timeseries', or is refused with the server's verdict, and then
    the server, asked directly, indeed has no such collection type."""
    cfg = config(mongo_server, database="timeseries_test", layout="timeseries")
    target = make_target("mongodb", cfg)
    name = table_name("devices", DEVICES_SCALE, "timeseries")
    db = target.db()
    try:
        layout = target.prepare("devices", DEVICES_SCALE, StringMode.OBJECT)
    except NotSupported as exc:
        assert str(exc).startswith("this server does not support time-series collections (MongoDB at "), exc
        assert name not in db.list_collection_names()                 # nothing half-made left behind
        db.create_collection("probe_ts", timeseries={"timeField": "time", "metaField": "device_id"})
        listed = {c["name"]: c.get("type") for c in db.list_collections()}
        assert listed["probe_ts"] != "timeseries"                      # the verdict is the server's
        assert f"lists {name} as {listed['probe_ts']!r}" in str(exc)
    else:
        assert {c["name"]: c.get("type") for c in db.list_collections()}[name] == "timeseries"
        target.open(layout)
        info = get_dataset("devices").info
        want = get_dataset("devices").day_frame(0, DEVICES_SCALE, StringMode.OBJECT)
        got = target.read_day(layout, layout.days[0]).frame
        assert_same_rows(in_row_order(got, info), in_row_order(want, info), info)
    finally:
        target.close()


FILLS = {"d14": "devices_ffill", "d15": "devices_bfill", "d16": "devices_linear_fill"}


def _fill_query(query_id: str):
    from workloads.queries.suites import load_suite
    query = load_suite("devices004").query(query_id)
    return replace(query, texts={**query.texts, "mongodb": FILLS[query_id]})


@pytest.mark.parametrize("query_id", sorted(FILLS))
def test_a_server_without_set_window_fields_gives_its_verdict_and_the_run_goes_on(devices, query_id):
    """The stand-in refuses $setWindowFields: the fill's verdict is one line naming that stage,
    a NotSupported (the worker records it as unsupported), and the next query still answers."""
    from workloads.queries import mongo_suite
    from workloads.queries.suites import draw_values, load_suite

    target, layout = devices
    query = _fill_query(query_id)
    values = draw_values(query, layout.days, layout.keys_sample)
    _, pipeline = getattr(mongo_suite, FILLS[query_id])({k: bson_value(v) for k, v in values.items()}, {})
    assert any("$setWindowFields" in stage for stage in pipeline)
    with pytest.raises(NotSupported) as refused:
        target.run_query(layout, query, values)
    assert str(refused.value) == "this server does not support $setWindowFields"
    assert describe_error(refused.value).startswith(NotSupported.__name__ + ": this server")
    after = load_suite("devices004").query("d17")
    answer = target.run_query(layout, after, draw_values(after, layout.days, layout.keys_sample))
    assert answer.rows > 0


@pytest.mark.parametrize("said, verdict", [
    ("Unrecognized pipeline stage name: '$setWindowFields'", "$setWindowFields"),    # MongoDB < 5.0, the stand-in
    ("Unrecognized window function, $linearFill", "$linearFill"),                     # MongoDB 5.0-5.2
    ("Invalid $project :: caused by :: Unrecognized expression '$dateTrunc'", "$dateTrunc"),
    ("unknown group operator '$stdDevSamp'", "$stdDevSamp")])
def test_a_refused_stage_or_operator_is_named_from_the_servers_error(said, verdict):
    target = make_target("mongodb", {"host": LOOPBACK})
    error = target.error(pymongo.errors.OperationFailure(said, code=40324))
    assert isinstance(error, NotSupported) and str(error) == f"this server does not support {verdict}"
    other = target.error(pymongo.errors.OperationFailure("E11000 duplicate key error", code=11000))
    assert not isinstance(other, NotSupported)


# An evaluator of the window pipelines' stages (the fills, the rolling mid) as MongoDB documents
# them, for a server-free check of their meaning: any stage or operator it does not model fails.
def _value(expr, doc):
    if isinstance(expr, str) and expr.startswith("$"):
        for part in expr[1:].split("."):
            doc = doc.get(part) if isinstance(doc, dict) else None
        return doc
    if not isinstance(expr, dict):
        return expr
    (op, args), = expr.items()
    if op in ("$add", "$divide"):
        a, b = (_value(x, doc) for x in args)
        return a + b if op == "$add" else a / b
    if op == "$cond":
        return _value(args[1], doc) if _value(args[0], doc) else _value(args[2], doc)
    if op == "$eq":
        return _value(args[0], doc) == _value(args[1], doc)
    if op == "$mod":
        return _value(args[0], doc) % _value(args[1], doc)
    if op == "$toDouble":
        value = _value(args, doc)
        return None if value is None else float(value)
    if op == "$dateTrunc" and args.get("unit") == "second":     # the date cut to its second, as documented
        value = _value(args["date"], doc)
        return value.replace(microsecond=0)
    raise AssertionError(f"the evaluator does not model {op}")


def _matches(doc, match):
    for field, want in match.items():
        value = doc.get(field)
        if not isinstance(want, dict):
            if value != want:
                return False
            continue
        for op, bound in want.items():
            if op == "$in" and value not in bound:
                return False
            if op != "$in" and not {"$gte": value >= bound, "$lt": value < bound, "$lte": value <= bound}[op]:
                return False
    return True


def _window(docs, spec):
    (field, direction), = spec["sortBy"].items()
    if spec.get("partitionBy") is not None:     # each partition on its own
        parts: dict = {}
        for doc in docs:
            parts.setdefault(_value(spec["partitionBy"], doc), []).append(doc)
        return [d for part in parts.values() for d in _window(part, {**spec, "partitionBy": None})]
    docs = sorted(docs, key=lambda d: _value(f"${field}", d), reverse=direction < 0)
    out = [dict(d) for d in docs]
    for name, output in spec["output"].items():
        (op, arg), = ((k, v) for k, v in output.items() if k != "window")
        if op == "$sum":                        # a range window [lo, hi] in seconds of the sort field
            (lo, hi), unit = output["window"]["range"], output["window"]["unit"]
            assert unit == "second" and direction > 0
            at = [_value(f"${field}", d) for d in docs]
            running = list(itertools.accumulate((_value(arg, d) for d in docs), initial=0))
            for doc, t in zip(out, at):
                first = bisect.bisect_left(at, t + dt.timedelta(seconds=lo))
                doc[name] = running[bisect.bisect_right(at, t + dt.timedelta(seconds=hi))] - running[first]
        elif op == "$documentNumber":
            for number, doc in enumerate(out, 1):
                doc[name] = number
        elif op == "$locf":                     # the last non-null value so far, in sort order
            last = None
            for doc, src in zip(out, docs):
                value = _value(arg, src)
                last = value if value is not None else last
                doc[name] = last
        elif op == "$linearFill":               # along the sortBy field, between known values only
            known = [(d[field], _value(arg, d)) for d in docs if _value(arg, d) is not None]
            for doc, src in zip(out, docs):
                x = src[field]
                value = _value(arg, src)
                before = [k for k in known if k[0] <= x]
                after = [k for k in known if k[0] >= x]
                if value is None and before and after:
                    (x0, y0), (x1, y1) = before[-1], after[0]
                    value = y0 + (y1 - y0) * (x - x0) / (x1 - x0)
                doc[name] = value
        else:
            raise AssertionError(f"the evaluator does not model {op}")
    return out


def _evaluate(pipeline, docs):
    for stage in pipeline:
        (name, spec), = stage.items()
        if name == "$match":
            docs = [d for d in docs if _matches(d, spec)]
        elif name == "$project":
            docs = [{f: (d.get(f) if e == 1 else _value(e, d)) for f, e in spec.items() if e != 0} for d in docs]
        elif name == "$setWindowFields":
            docs = _window(docs, spec)
        elif name == "$group":                  # first-seen order of the keys; $sum only
            groups: dict = {}
            for d in docs:
                key = _value(spec["_id"], d) if not isinstance(spec["_id"], dict) else \
                    tuple((k, _value(e, d)) for k, e in spec["_id"].items())
                acc = groups.setdefault(key, {f: 0 for f in spec if f != "_id"})
                for f, (op, e) in ((f, next(iter(a.items()))) for f, a in spec.items() if f != "_id"):
                    assert op == "$sum"
                    acc[f] += _value(e, d)
            docs = [{"_id": dict(k) if isinstance(k, tuple) else k, **acc} for k, acc in groups.items()]
        else:
            raise AssertionError(f"the evaluator does not model {name}")
    return docs


@pytest.mark.parametrize("query_id", sorted(FILLS))
def test_the_fill_pipelines_mean_the_pandas_suites_fills(query_id):
    """Server-free: each fill pipeline, evaluated by MongoDB's documented meaning of its stages,
    gives the pandas suite's answer (gaps where the level is a multiple of 3, fills by position)."""
    from workloads.queries import mongo_suite, pandas_suite
    from workloads.queries.suites import draw_values

    ds = get_dataset("devices")
    readings = ds.day_frame(0, DEVICES_SCALE, StringMode.OBJECT)
    query = _fill_query(query_id)
    values = draw_values(query, tuple(ds.trading_days(DEVICES_SCALE)), tuple(str(k) for k in ds.keys(DEVICES_SCALE)))
    mongo_values = {k: bson_value(v) for k, v in values.items()}
    source, pipeline = getattr(mongo_suite, FILLS[query_id])(mongo_values, {})
    docs = [{k: (v.to_pydatetime() if isinstance(v, pd.Timestamp) else v) for k, v in row.items()}
            for row in readings.to_dict("records")]
    got = pd.DataFrame(_evaluate(pipeline, docs), columns=list(query.columns))
    want = pandas_suite.run(query.text("pandas"), {"readings": readings}, values)
    assert source == "readings" and list(got.columns) == list(query.columns) == ["time", "level"]
    got = got.assign(time=pd.to_datetime(got["time"]).astype("datetime64[ns]"),
                     level=got["level"].astype("float64")).sort_values("time", ignore_index=True)
    want = want.assign(level=want["level"].astype("float64")).sort_values("time", ignore_index=True)
    assert len(got) > 20 and got["level"].isna().sum() < want["level"].size and want["level"].notna().any()
    pd.testing.assert_frame_equal(got, want[["time", "level"]], check_dtype=True, rtol=1e-12)


def test_the_rolling_mid_pipeline_means_the_pandas_suites(laid_out):
    """Server-free (the stand-in refuses $setWindowFields): the rolling mid's pipeline, evaluated by
    MongoDB's documented meaning of its stages, gives the pandas suite's answer."""
    from workloads.queries import load_suite, mongo_suite, pandas_suite
    from workloads.queries.suites import draw_values

    _, layout = laid_out
    quotes = get_dataset("taq").day_frame(0, SCALE, StringMode.OBJECT)
    query = load_suite("tick").query("rolling-mid")
    values = draw_values(query, layout.days, layout.keys_sample)
    source, pipeline = getattr(mongo_suite, query.text("mongodb"))({k: bson_value(v) for k, v in values.items()}, {})
    docs = [{k: bson_value(v) for k, v in row.items()} for row in quotes.to_dict("records")]
    got = pd.DataFrame(_evaluate(pipeline, docs), columns=list(query.columns))
    want = pandas_suite.run(query.text("pandas"), {"quotes": quotes}, values)
    assert source == "quotes" and len(got) > 100 and (got["mid_avg"] != got["mid_avg"].round(2)).any()
    assert normalise(got, query.columns).equals(normalise(want, query.columns))


# --- every suite query ------------------------------------------------------------------------------
# The tick pack runs at a smaller scale: the stand-in runs the as-of join's $lookup sub-pipeline over
# the whole quotes collection once per trade (mongo-java-server uses no index there), so its time
# grows with trades x quotes (measured: 14 s at 4,000 quotes a day, over 3 min at 20,000).
TAQ_CASES = {"reports": (("taq001", "taq004"), Scale(days=2, rows_per_day=20_000, symbols=30)),
             "tick": (("tick",), Scale(days=2, rows_per_day=3_000, symbols=30))}
# what the stand-in refuses, by its own error: the $setWindowFields stage (MongoDB 5.0+) of the
# devices fills and of the tick pack's rolling mid (a range window by time)
REFUSED_BY_THE_STAND_IN = {"d14", "d15", "d16", "rolling-mid"}


def test_the_cases_cover_every_suite_of_taq():
    from workloads.queries.verify import suites_of
    assert sorted(n for names, _ in TAQ_CASES.values() for n in names) == sorted(s.name for s in suites_of("taq"))


@pytest.mark.parametrize("dataset, scale, suites", [
    *[pytest.param("taq", scale, names, id=f"taq-{case}") for case, (names, scale) in TAQ_CASES.items()],
    pytest.param("devices", Scale(days=2, rows_per_day=40_000, symbols=400), None, id="devices")])
def test_every_suite_query_answers_as_duckdb_and_parquet(dataset, scale, suites, tmp_path, mongo_server):
    from workloads.queries import load_suite
    verdicts = verify(dataset, scale, [
        ("duckdb", "duckdb", {"path": str(tmp_path / "d.duckdb")}),
        ("parquet", "parquet", {"root": str(tmp_path / "files")}),
        ("mongo", "mongodb", config(mongo_server, database=f"verify_{dataset}")),
    ], suites=[load_suite(name) for name in suites] if suites else None)
    unsupported = {q for (_, q), row in verdicts.verdicts.items() if row["mongo"] == NOT_SUPPORTED}
    # texts MongoDB 5.0+ runs; the stand-in refuses the stage, and the verdict says whose limit
    # that is: the server's, named from its own error
    assert unsupported == {q for _, q in verdicts.queries} & REFUSED_BY_THE_STAND_IN
    for (_, query), answers in verdicts.answers.items():
        if query in unsupported:
            assert answers["mongo"].error == "this server does not support $setWindowFields", answers["mongo"]
    assert {v for row in verdicts.verdicts.values() for k, v in row.items() if k != "mongo" or v != NOT_SUPPORTED} \
        == {SAME}, verdicts.verdicts
    assert all(a.rows > 0 for answers in verdicts.answers.values() for a in answers.values()
               if a.status == "answered"), verdicts.answers


# --- a server that cannot be used -------------------------------------------------------------------
def test_a_refused_port_is_a_clear_error_quickly():
    target = make_target("mongodb", {"host": LOOPBACK, "port": free_port(), "timeout_ms": 1500})
    start = time.monotonic()
    with pytest.raises(TargetError, match=r"MongoDB at 127\.0\.0\.1:\d+: connection refused") as caught:
        target.prepare("taq", SCALE, StringMode.ARROW)
    assert time.monotonic() - start < 10 and caught.value.__suppress_context__
    with pytest.raises(TargetError, match="port 'x' is not a number"):
        make_target("mongodb", {"host": LOOPBACK, "port": "x"})


def test_a_wrong_password_is_a_clear_error(mongo_server):
    """The stand-in has no authentication at all: credentials are refused as an authentication
    failure that says so (a real MongoDB answers code 18, mapped to 'wrong password')."""
    target = make_target("mongodb", config(mongo_server, user="tick", password="wrong"))
    with pytest.raises(TargetError, match=r"authentication failed for user 'tick'.*does not support authentication"):
        target.prepare("taq", SCALE, StringMode.ARROW)


def test_a_wrong_password_is_refused_by_scram_and_the_right_one_passes(mongo_server, laid_out):
    """MongoDB's own SCRAM conversation (tests/auth_gateways.py) in front of the stand-in: a wrong
    password gets code 18 from the real protocol; the right one reads a day through it."""
    from tests.auth_gateways import ScramGateway
    from workloads.targets.server_checks import check_server

    cfg, layout = laid_out
    gateway = ScramGateway(mongo_server.config["port"], "tick", "s3cret")
    try:
        gated = {**cfg, "port": gateway.port, "user": "tick", "auth_source": "admin"}
        with pytest.raises(TargetError, match=r"MongoDB at 127\.0\.0\.1:\d+: authentication failed for user "
                                              r"'tick' \(wrong password, or no such user\)$"):
            make_target("mongodb", {**gated, "password": "wrong"}).prepare("taq", SCALE, StringMode.ARROW)
        verdict = check_server("mongodb", {**gated, "password": "wrong"}, timeout=5)
        assert verdict.kind == "wrong_password" and not verdict.ok, verdict
        assert gateway.failed_logins >= 2
        assert check_server("mongodb", {**gated, "password": "s3cret"}, timeout=5).ok
        target = make_target("mongodb", {**gated, "password": "s3cret"})
        target.open(layout)
        try:
            assert target.read_day(layout, layout.days[0]).rows == SCALE.rows_per_day
        finally:
            target.close()
    finally:
        gateway.close()


# --- worker processes through the runner ---------------------------------------------------------------
@pytest.mark.parametrize("workload,params", [("read-day", {}),
                                             ("concurrent-append", {"rows_per_user": 1_000, "batch_rows": 250})])
def test_runner_workers_use_the_target(mongo_server, laid_out, tmp_path, workload, params):
    from workloads.run.runner import Runner
    from workloads.scenario import Scenario
    from workloads.results.store import ResultsStore

    cfg, _ = laid_out
    store = ResultsStore(tmp_path / "results")
    scenario = Scenario(dataset="taq", scale=SCALE, target="mongodb", target_config=cfg,
                        workload=workload, params=params, users=(2,), operations=2)
    result = Runner(scenario, store).run()
    assert result.status == "completed", result.message
    ops = store.ops(result.run_id)
    assert ops["ok"].all() and len(ops) > 0 and set(ops["worker"]) == {0, 1}
    if workload == "read-day":
        assert (ops[ops["kind"] == "measured"]["rows"] == SCALE.rows_per_day).all()
        from app.report.references import _where          # what the report says answered: never "MongoDB" alone
        assert "stand-in" in _where(store.run(result.run_id)) and "not the real engine's" in _where(store.run(result.run_id))
    store.close()
