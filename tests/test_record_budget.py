"""What a run's records can weigh (``workloads.results.record_budget``), read from real Parquet
footers: each budget refuses a file just over it and lets a genuine run's file through, and text
is checked without decoding what is repeated."""
from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from workloads.results import record_budget
from workloads.results.record_budget import (MAX_OPS_PER_WORKER_S, OPS_SLACK, metadata_problem, records_budget,
                                             text_problem)


def _records(n: int, *, distinct: bool = True, row_group_size: int | None = None, path=None, error: str = "") -> tuple:
    rng = np.random.default_rng(3)
    table = pa.table({"t_start": rng.uniform(0, 10, n) if distinct else np.zeros(n),
                      "total_s": rng.uniform(0.001, 0.01, n) if distinct else np.full(n, 0.005),
                      "error": pa.array([error] * n, pa.string())})
    pq.write_table(table, path, row_group_size=row_group_size)
    return pq.read_metadata(path), path.stat().st_size


def test_a_genuine_file_passes_every_budget(tmp_path):
    meta, size = _records(50_000, path=tmp_path / "ops.parquet")
    assert metadata_problem(meta, size, budget=records_budget(
        {"created_at": "2026-12-03T10:00:00", "finished_at": "2026-12-03T10:00:10"}, 1)) is None


def test_more_records_than_the_run_s_length_allows_is_refused(tmp_path):
    run = {"created_at": "2026-12-03T10:00:00", "finished_at": "2026-12-03T10:00:10"}
    assert records_budget(run, 2) == 70 * 2 * MAX_OPS_PER_WORKER_S + OPS_SLACK
    assert records_budget({"created_at": "2026-12-03T10:00:00", "finished_at": None}, 2) is None   # still going
    meta, size = _records(2_000, path=tmp_path / "ops.parquet")
    assert metadata_problem(meta, size, budget=2_000) is None
    assert "2,000 records: more than a run of its length could measure (at most 1,999" in \
        metadata_problem(meta, size, budget=1_999)


def test_records_that_compress_to_nothing_are_a_bomb(tmp_path):
    meta, size = _records(2_000_000, distinct=False, path=tmp_path / "ops.parquet")
    assert size < 100_000                      # two million identical records: a few KB
    assert "no measured record compresses to" in metadata_problem(meta, size, budget=None)
    meta, size = _records(2_000_000, path=tmp_path / "real.parquet")
    assert metadata_problem(meta, size, budget=None) is None


def test_row_groups_too_many_or_too_large_are_refused(tmp_path, monkeypatch):
    meta, size = _records(10_000, row_group_size=1_000, path=tmp_path / "ops.parquet")
    assert metadata_problem(meta, size, None) is None
    monkeypatch.setattr(record_budget, "MAX_ROW_GROUPS", 9)
    assert "10 row groups; at most 9" in metadata_problem(meta, size, None)
    monkeypatch.setattr(record_budget, "MAX_ROW_GROUPS", 10)
    monkeypatch.setattr(record_budget, "MAX_ROW_GROUP_BYTES", 1_000)
    assert "row group 1 decodes to" in metadata_problem(meta, size, None)


def test_records_that_decode_to_more_than_a_record_holds_are_refused(tmp_path, monkeypatch):
    meta, size = _records(10_000, path=tmp_path / "ops.parquet", error="e" * 3_000)
    monkeypatch.setattr(record_budget, "MIN_FILE_BYTES_PER_RECORD", 0.001)
    monkeypatch.setattr(record_budget, "MAX_DECODED_BYTES_PER_RECORD", 100)
    assert metadata_problem(meta, size, None) is None          # repeated text is dictionary-encoded: small
    meta, size = _records(10_000, path=tmp_path / "long.parquet", error="e" * 300)
    with pq.ParquetWriter(tmp_path / "plain.parquet", pq.read_schema(tmp_path / "long.parquet"),
                          use_dictionary=False) as writer:
        writer.write_table(pq.read_table(tmp_path / "long.parquet"))
    meta = pq.read_metadata(tmp_path / "plain.parquet")
    assert "a record" in metadata_problem(meta, (tmp_path / "plain.parquet").stat().st_size, None)


@pytest.mark.parametrize("as_dictionary", [True, False])
def test_a_text_value_over_the_limit_is_named_by_its_record(as_dictionary):
    values = ["ok"] * 5 + ["x" * (record_budget.MAX_TEXT_BYTES + 1)] + ["ok"]
    array = pa.array(values).dictionary_encode() if as_dictionary else pa.array(values)
    batch = pa.RecordBatch.from_arrays([array], ["error"])
    assert text_problem(batch, 100) == (f"record 106: its error is {record_budget.MAX_TEXT_BYTES + 1:,} bytes; "
                                        f"at most {record_budget.MAX_TEXT_BYTES:,}")
    short = pa.RecordBatch.from_arrays([pa.array(["x" * record_budget.MAX_TEXT_BYTES])], ["error"])
    assert text_problem(short, 0) is None
