"""A running run's operation records as they arrive: one Arrow IPC stream in ``ops/``, appended
batch by batch (``OpsStream``) and read back by anyone at any moment (``read_stream``).

Why a stream: appending a batch costs ~0.02 ms of CPU where a Parquet part cost ~0.9 ms, and the
run's process appends every few hundredths of a second while its workers are measured; what the
parent spends beside them shows in their figures (``benchmarks/bench_parent_writes.py``). Each
append reaches the operating system before it returns, so a ``kill -9`` of the run's process loses
only what the collector had not yet handed over. A power cut or a full disk can leave the last
batch half-written: readers keep every whole batch before it.
"""
from __future__ import annotations

from pathlib import Path

import pyarrow as pa

from workloads.results.atomic_files import DamagedFile
from workloads.results.run_tables import OPS_COLUMNS

STREAM_SUFFIX = ".arrows"
_MARKER = b"\xff\xff\xff\xff"     # every IPC stream message starts with it (the continuation marker)


class OpsStream:
    """One stream being appended by the run's writer; its batches are also kept in memory, so the
    writer turns them into a Parquet part without reading the file back."""

    def __init__(self, path: Path, schema: pa.Schema):
        self.path = Path(path)
        self.schema = schema
        self.tables: list[pa.Table] = []
        self.nbytes = 0
        self._file = pa.OSFile(str(self.path), "ab")
        try:
            self._buffer = pa.BufferedOutputStream(self._file, 1 << 20)
            self._writer = pa.ipc.new_stream(self._buffer, schema)
        except BaseException:
            self._file.close()
            raise

    def append(self, table: pa.Table) -> None:
        """``table`` written and handed to the operating system (one ``write`` for a small batch);
        an OSError leaves the stream broken: ``abandon`` it and start another."""
        self._writer.write_table(table)
        self._buffer.flush()
        self.tables.append(table)
        self.nbytes += table.nbytes

    def close(self) -> None:
        """The end marker written and the file closed; on a full disk closed without the marker
        (readers stop at the file's end all the same)."""
        try:
            self._writer.close()
            self._buffer.close()
        except OSError:
            self.abandon()

    def abandon(self) -> None:
        """Stop writing after a failed append: what reached the file stays, readers stop at its
        torn end. The file is closed first, so nothing the writer still holds (the rest of the
        torn batch, the end marker) can follow the torn end."""
        self._file.close()
        for closing in (self._writer.close, self._buffer.close):
            try:
                closing()
            except (OSError, pa.ArrowException):    # they find the file closed: as intended
                continue


def is_stream(path: Path) -> bool:
    return Path(path).suffix == STREAM_SUFFIX


def check_stream(path: Path) -> None:
    """``DamagedFile`` unless ``path`` begins as an Arrow stream (or is too short to tell yet)."""
    with open(path, "rb") as file:
        start = file.read(len(_MARKER))
    if len(start) == len(_MARKER) and start != _MARKER:
        raise DamagedFile(f"{Path(path).parent.name}/{Path(path).name}", "not an Arrow stream of operation records")


def read_stream(path: Path, columns: list[str] | None = None) -> pa.Table:
    """Every whole batch of the stream at ``path`` (a last batch still being written, or torn by a
    crash or a full disk, is left out); ``DamagedFile`` if it is not an Arrow stream at all.
    FileNotFoundError if it is gone (turned into a Parquet part meanwhile)."""
    check_stream(path)
    if Path(path).stat().st_size <= len(_MARKER):
        return _empty(columns)                   # created, its schema not yet written
    data = pa.memory_map(str(path)).read_buffer()
    try:
        reader = pa.ipc.open_stream(data)
    except (pa.ArrowInvalid, OSError):
        return _empty(columns)                   # its schema still being written
    batches = []
    while True:
        try:
            batches.append(reader.read_next_batch())
        except StopIteration:
            break
        except (pa.ArrowInvalid, OSError):
            break                                # the torn last batch
    whole = pa.Table.from_batches(batches, schema=reader.schema)
    return whole.select(columns) if columns is not None else whole


def _empty(columns: list[str] | None) -> pa.Table:
    schema = pa.schema(OPS_COLUMNS)
    return schema.empty_table().select(columns) if columns is not None else schema.empty_table()
