"""What a run's operation records may say, checked batch by batch (bounded memory) before a run
from elsewhere is kept: every time finite and not negative (an end never before its start), rows
and bytes not negative, every record of a step and a worker the run's tables name. A record that
breaks one is a figure that would lie (``p50 -17.3 ms``, ``-8,639,881 rows/s``), so the bundle is
refused, naming the first such record."""
from __future__ import annotations

from collections.abc import Iterable

import pyarrow as pa
import pyarrow.compute as pc

TIMES = ("total_s", "io_s", "query_s", "server_s", "transfer_s", "decode_s", "read_s", "intended_s")
AMOUNTS = ("rows", "bytes", "wire_bytes")
REQUIRED = ("total_s", "t_start", "step")        # no record goes without these


def record_problem(batch: pa.RecordBatch, first_row: int, steps: Iterable[int],
                   workers: Iterable[int] | None = None) -> str | None:
    """Why a record of ``batch`` (its first at ``first_row`` of the file) cannot stand, or None."""
    names = batch.schema.names
    checks = []
    for column in TIMES:
        if column in names:
            values = batch.column(column)
            checks.append((column, pc.or_(pc.invert(pc.is_finite(values)), pc.less(values, 0.0)),
                           "a time is a finite number of seconds, not negative"))
    if "t_start" in names:
        checks.append(("t_start", pc.invert(pc.is_finite(batch.column("t_start"))), "a start is a finite time"))
    for column in AMOUNTS:
        if column in names:
            checks.append((column, pc.less(batch.column(column), 0), "an amount is not negative"))
    checks.append(("step", pc.invert(pc.is_in(_plain(batch.column("step")), value_set=pa.array(sorted(set(steps)),
                                                                                               pa.int32()))),
                   "every record is of a step the run's steps.json names"))
    if workers is not None and "worker" in names:
        known = pa.array(sorted(set(workers)), pa.int32())
        checks.append(("worker", pc.invert(pc.is_in(_plain(batch.column("worker")), value_set=known)),
                       "every record is of a worker the run's workers.json names"))
    for column, bad, rule in checks:
        bad = pc.fill_null(bad, column in REQUIRED)      # a missing optional time is fine, a missing total not
        if pc.any(bad).as_py():
            at = pc.index(bad, True).as_py()
            value = batch.column(column)[at].as_py()
            return f"record {first_row + at + 1:,} has {column} {value!r}: {rule}"
    return None


def _plain(values: pa.Array) -> pa.Array:
    return values.dictionary_decode() if pa.types.is_dictionary(values.type) else values
