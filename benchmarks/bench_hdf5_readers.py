"""Which reader is fastest for a whole HDF5 day: the measurement behind ``hdf5_target``'s choice.

``.venv/bin/python benchmarks/bench_hdf5_readers.py [--rows 1000000] [--repeats 5]`` lays one TAQ day out
with each compressor (table format, in a temp folder), then times, warm, best and median of the
repeats: ``HDFStore.select`` (pandas' whole path), PyTables' ``Table.read`` and h5py's read of
the node's numpy records, the records' decode into a DataFrame, and a key's slice both ways.
"""
from __future__ import annotations

import argparse
import sys
import statistics
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import h5py
import pandas as pd
import tables

from workloads.datasets import get_dataset
from workloads.datasets.schema import Scale, StringMode
from workloads.targets.hdf5 import HDF5Target
from workloads.targets.hdf5.layout import day_node
from workloads.targets.hdf5.reads import records_frame

CODECS = (("blosc:lz4", 5), ("blosc:zstd", 3), ("zlib", 1), ("none", 0))


def timed(call, repeats: int) -> tuple[float, float, object]:
    seconds, result = [], None
    for _ in range(repeats):
        t0 = time.perf_counter()
        result = call()
        seconds.append(time.perf_counter() - t0)
    return min(seconds), statistics.median(seconds), result


def measure(rows: int, repeats: int, root: Path) -> list[str]:
    schema = get_dataset("taq").info.schema
    lines = [f"TAQ, {rows:,} rows, 500 symbols, table format, warm; best / median of {repeats}"]
    for complib, level in CODECS:
        target = HDF5Target({"root": str(root), "complib": complib, "complevel": level})
        layout = target.prepare("taq", Scale(days=1, rows_per_day=rows, symbols=500), StringMode.ARROW)
        day = layout.days[0]
        path, node = target.day_path(layout, day), day_node(day)
        key = layout.keys_sample[len(layout.keys_sample) // 2]
        with pd.HDFStore(path, mode="r") as store:
            select = timed(lambda: store.select(node), repeats)
            select_key = timed(lambda: store.select(node, where=f"symbol == {key!r}"), repeats)
        with tables.open_file(str(path), mode="r") as f:
            table = f.get_node(f"/{node}/table")
            read = timed(table.read, repeats)
            where = timed(lambda: table.read_where("symbol == v", condvars={"v": key.encode()}), repeats)
        try:
            with h5py.File(path, "r") as f:
                h5 = timed(lambda: f[node]["table"][()], repeats)
            h5_text = f"{h5[0]:.3f}/{h5[1]:.3f} s"
        except OSError:             # blosc needs the hdf5plugin package in h5py
            h5_text = "unreadable"
        decode = {mode: timed(lambda: records_frame(read[2], schema, mode), repeats) for mode in StringMode}
        same = decode[StringMode.ARROW][2].equals(select[2].reset_index(drop=True))
        lines.append(
            f"{complib} {level}: {path.stat().st_size / 1e6:.1f} MB | HDFStore.select {select[0]:.3f}/{select[1]:.3f} s"
            f" | Table.read {read[0]:.3f}/{read[1]:.3f} s | h5py {h5_text} | decode "
            + ", ".join(f"{m.value} {t[0]:.3f}" for m, t in decode.items())
            + f" s | slice {key} ({len(where[2]):,} rows): select(where) {select_key[0]:.4f} s,"
              f" read_where {where[0]:.4f} s | same frame: {same}")
    return lines


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as root:
        for line in measure(args.rows, args.repeats, Path(root)):
            print(line, flush=True)


if __name__ == "__main__":
    main()
