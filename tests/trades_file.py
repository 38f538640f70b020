"""A user's own tick file, as a new user brings one: trades ``ts,sym,price,qty,side,venue``.

Timestamps are ISO 8601 with nanoseconds and a New York offset (``2024-03-04T09:30:00.123456789-05:00``),
so an import must keep the nanoseconds and store the instants in UTC. Deterministic for a seed.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv
import pyarrow.parquet as pq

DAYS = ("2024-03-04", "2024-03-05", "2024-03-06")
OPEN_NS, CLOSE_NS = (9 * 3600 + 30 * 60) * 10**9, 16 * 3600 * 10**9
OFFSET_NS = 5 * 3600 * 10**9          # New York in March before DST: UTC-05:00


def trades_table(rows: int = 20_000, days: int = 3, symbols: int = 20, seed: int = 7, first_day: int = 0) -> pa.Table:
    """The trades as Arrow: ``ts`` a UTC timestamp[ns] in time order, then the other columns; day d is
    calendar day ``first_day + d`` after 2024-03-04."""
    rng = np.random.default_rng(seed)
    names = [f"S{i:03d}" for i in range(symbols)]
    per_day = np.full(days, rows // days)
    per_day[: rows % days] += 1
    stamps = []
    for d, n in enumerate(per_day):
        midnight = np.datetime64(DAYS[0], "ns").astype(np.int64) + (first_day + d) * 86400 * 10**9
        local = np.sort(rng.integers(OPEN_NS, CLOSE_NS, n))
        stamps.append(midnight + local + OFFSET_NS)           # the instant, in UTC
    ts = np.concatenate(stamps)
    weights = 1.0 / np.arange(1, symbols + 1)
    sym = rng.choice(symbols, size=rows, p=weights / weights.sum())
    price = np.round(50 + sym * 10 + rng.normal(0, 0.5, rows).cumsum() / 100, 2)
    qty = np.where(rng.random(rows) < 0.7, rng.integers(1, 10, rows) * 100, rng.integers(1, 100, rows))
    return pa.table({
        "ts": pa.array(ts.astype("datetime64[ns]"), pa.timestamp("ns", tz="UTC")),
        "sym": pa.array([names[i] for i in sym]),
        "price": pa.array(price),
        "qty": pa.array(qty.astype(np.int64)),
        "side": pa.array(np.where(rng.random(rows) < 0.5, "B", "S")),
        "venue": pa.array(rng.choice(["XNAS", "XNYS", "ARCX", "BATS"], size=rows)),
    })


def as_written(table: pa.Table) -> pa.Table:
    """``table`` with ``ts`` as the text a user's export holds: New York local time with its offset."""
    local = pc.subtract(table.column("ts").cast(pa.int64()), OFFSET_NS).cast(pa.timestamp("ns"))
    text = pc.binary_join_element_wise(pc.strftime(local, format="%Y-%m-%dT%H:%M:%S"), "-05:00", "")
    return table.set_column(0, "ts", text)


def write_trades_csv(path: Path, table: pa.Table | None = None, delimiter: str = ",") -> Path:
    """``table`` (default ``trades_table()``) as the CSV a user exports, nanoseconds written out."""
    table = table if table is not None else trades_table()
    pacsv.write_csv(as_written(table), path, pacsv.WriteOptions(delimiter=delimiter, quoting_style="needed"))
    return Path(path)


def write_trades_parquet_days(folder: Path, table: pa.Table | None = None, hive: bool = True,
                              fmt: str = "parquet") -> Path:
    """One file per UTC day: ``date=YYYY-MM-DD/part-0.parquet`` (hive) or ``YYYY-MM-DD.parquet``."""
    table = table if table is not None else trades_table()
    folder.mkdir(parents=True, exist_ok=True)
    days = pc.cast(pc.floor_temporal(table.column("ts"), unit="day"), pa.date32())
    for day in pc.unique(days).to_pylist():
        part = table.filter(pc.equal(days, pa.scalar(day, pa.date32())))
        if hive:
            (folder / f"date={day}").mkdir(exist_ok=True)
            target = folder / f"date={day}" / f"part-0.{fmt}"
        else:
            target = folder / f"{day}.{fmt}"
        if fmt == "parquet":
            pq.write_table(part, target)
        else:
            with pa.ipc.new_file(target, part.schema) as writer:   # Feather V2 is the Arrow IPC file format
                writer.write_table(part)
    return folder
