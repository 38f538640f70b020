"""PostgreSQL's reads keep what does not change between them: a layout's every-column SELECT and
how its result is cast are worked out on its first read (``ReadShape``); deciding them for every
read cost a 3 ms slice ~2 % beside the hand-written call."""
from __future__ import annotations

import pyarrow as pa
import pytest

from workloads.datasets.schema import Scale, StringMode
from workloads.targets import make_target
from workloads.targets.postgres import reads as postgres_reads
from workloads.targets.postgres.copy_formats import ReadShape


def test_a_shape_casts_a_chars_smallint_names_the_columns_and_learns_again_when_the_types_change():
    shape = ReadShape(["symbol", "ex", "time"], [pa.large_string(), pa.int8(), pa.timestamp("ns")])
    first = pa.table({"symbol": ["A", "B"], "ex": pa.array([66, 67], pa.int16()),
                      "time": pa.array([1, 2], pa.timestamp("us"))})
    read = shape.apply(first)
    assert read.schema.types == [pa.string(), pa.int8(), pa.timestamp("us")]    # text and times as they came
    assert read.column("ex").to_pylist() == [66, 67]
    other = ReadShape(["symbol", "ex", "time"], [pa.large_string(), pa.int8(), pa.timestamp("ns")])
    renamed = other.apply(first.rename_columns(["s", "e", "t"]))                 # named as the shape says
    assert renamed.column_names == ["symbol", "ex", "time"] and renamed.column("ex").type == pa.int8()
    already = pa.table({"symbol": ["A"], "ex": pa.array([70], pa.int8()), "time": pa.array([3], pa.timestamp("us"))})
    fresh = ReadShape(["symbol", "ex", "time"], [pa.large_string(), pa.int8(), pa.timestamp("ns")])
    assert fresh.apply(already).column("ex").type == pa.int8()                   # nothing to cast: none learnt
    assert fresh.apply(first).column("ex").type == pa.int8()                     # learnt again when types change


@pytest.fixture(scope="module")
def target_and_layout(pg_engine):
    target = make_target("postgres", pg_engine.config)
    layout = target.prepare("taq", Scale(days=1, rows_per_day=4_000, symbols=8), StringMode.ARROW)
    yield target, layout
    target.close()


def test_a_layouts_every_column_reads_write_their_select_once(target_and_layout, monkeypatch):
    target, layout = target_and_layout
    target._whole = None
    written = []
    select = postgres_reads.PostgresReads._select
    monkeypatch.setattr(postgres_reads.PostgresReads, "_select",
                        lambda self, lay, schema: written.append(lay) or select(self, lay, schema))
    day, key = layout.days[0], layout.keys_sample[0]
    frames = [target.read_slice(layout, day, key).frame, target.read_slice(layout, day, key).frame,
              target.read_day(layout, day).frame]
    assert len(written) == 1
    assert frames[0]["ex"].dtype == "int8" and frames[0].equals(frames[1]) and len(frames[2]) > len(frames[0])
    target.read_day(layout, day, ("time", "bid"))          # some columns: a SELECT of their own
    assert len(written) == 2
    from dataclasses import replace
    target.read_slice(replace(layout, strings=StringMode.OBJECT), day, key)       # another layout: its own
    assert len(written) == 3
