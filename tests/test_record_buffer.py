"""A worker's record columns (``workloads.run.record_buffer``) hold exactly what the records say."""
from __future__ import annotations

import math

import numpy as np
import pytest

from workloads.run.record_buffer import RecordBuffer
from workloads.run.records import MEASURED, MISSED, UNSUPPORTED, OpRecord, to_columns
from workloads.targets.base import PHASES, OpResult


def _same(got, want) -> None:
    assert list(got) == list(want)
    for name in want:
        a, b = got[name], want[name]
        if a.dtype.kind == "f":
            assert np.array_equal(a, b, equal_nan=True), name
        else:
            assert a.tolist() == b.tolist(), name


def test_a_batch_holds_what_the_same_records_hold_field_by_field():
    buffer = RecordBuffer(step=2, worker=3, host="tcp://127.0.0.1:1")
    plain = OpResult(rows=10, nbytes=450)
    phased = OpResult(rows=5, nbytes=200, phases={"query": 0.25, "decode": 0.5}, node="n1",
                      extra={"lock_wait_s": 0.1}, wire_bytes=999)
    rows = [(0, 0.1, 0.01, "read_day", plain, "", None, 0.05, ""),
            (1, 0.2, 0.02, "q01", phased, "", {"cold": True}, 0.15, ""),
            (2, 0.3, 0.03, "q02", None, "NotSupported: no text", None, 0.28, UNSUPPORTED),
            (3, 0.4, 0.04, "read_day", None, "TimeoutError: slow", None, 0.35, "")]
    want = []
    for seq, start, total, name, result, error, facts, intended, kind in rows:
        buffer.add(MEASURED, seq, start, total, result, error, name, facts, intended, kind)
        extra = '{"lock_wait_s":0.1,"cold":true}' if result is phased else ""
        want.append(OpRecord(
            2, 3, seq, name, start, total, result.rows if result else 0, result.nbytes if result else 0,
            result is not None, kind or MEASURED,
            *(((result.phases or {}).get(p) if result else None) for p in PHASES),
            wire_bytes=999 if result is phased else -1, error=error, node="n1" if result is phased else "",
            extra=extra, host="tcp://127.0.0.1:1", intended_s=intended))
    _same(buffer.take(), to_columns(want))


def test_the_loops_appenders_fill_a_batch_in_sequence_and_take_empties_it_in_place():
    buffer = RecordBuffer(step=0, worker=0)
    buffer.begin(MEASURED, 0, "read_day")
    add_start, add_total, add_rows, add_bytes = buffer.appenders()
    for seq in range(3):
        for append, value in zip((add_start, add_total, add_rows, add_bytes), (seq * 0.1, 0.001, 1, 2)):
            append(value)
    buffer.name(1, "q07")
    first = buffer.take()
    assert first["seq"].tolist() == [0, 1, 2] and first["op"].tolist() == ["read_day", "q07", "read_day"]
    assert first["ok"].all() and np.isnan(first["intended_s"]).all() and len(buffer) == 0
    for append, value in zip((add_start, add_total, add_rows, add_bytes), (1.0, 0.002, 4, 5)):
        append(value)
    second = buffer.take()
    assert second["seq"].tolist() == [3] and second["rows"].tolist() == [4] and second["op"].tolist() == ["read_day"]
    assert first["rows"].tolist() == [1, 1, 1]          # the first batch is a copy, not a view


def test_a_batch_with_intended_starts_for_some_records_only_is_refused():
    buffer = RecordBuffer(step=0, worker=0)
    buffer.add(MEASURED, 0, 0.0, 0.001, OpResult(rows=1, nbytes=1), "", "noop", intended=0.0)
    buffer.add(MEASURED, 1, 0.1, 0.001, OpResult(rows=1, nbytes=1), "", "noop")
    with pytest.raises(ValueError, match="intended start"):
        buffer.take()


def test_missed_starts_are_records_of_their_own_kind_with_no_time():
    buffer = RecordBuffer(step=0, worker=1)
    buffer.add(MISSED, 40, float("nan"), float("nan"), None, "", "noop", intended=1.25)
    batch = buffer.take()
    assert batch["kind"].tolist() == [MISSED] and batch["intended_s"].tolist() == [1.25]
    assert batch["seq"].tolist() == [40]
    assert not batch["ok"][0] and math.isnan(batch["total_s"][0]) and batch["error"].tolist() == [""]
