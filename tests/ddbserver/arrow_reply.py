"""Tables as Arrow IPC streams, the reply format the client expects under PROTOCOL_ARROW."""
from __future__ import annotations

import numpy as np
import pyarrow as pa

from tests.ddbserver import codec as c
from tests.ddbserver.store import to_arrow

# DolphinDB type -> (Arrow type, factor from the raw encoding to the Arrow unit)
_ARROW = {
    c.DATE: (pa.date32(), 1), c.SECOND: (pa.time32("s"), 1), c.TIME: (pa.time32("ms"), 1),
    c.MINUTE: (pa.time32("s"), 60), c.DATETIME: (pa.timestamp("s"), 1),
    c.TIMESTAMP: (pa.timestamp("ms"), 1), c.NANOTIMESTAMP: (pa.timestamp("ns"), 1),
    c.NANOTIME: (pa.time64("ns"), 1),
}


def column_to_arrow(vec: c.Vector) -> pa.Array:
    raw = to_arrow(vec.values, vec.type)
    if vec.type == c.SYMBOL:
        return raw.dictionary_encode()
    if vec.type in _ARROW:
        arrow_type, factor = _ARROW[vec.type]
        if factor != 1:
            raw = pa.array(np.asarray(raw.to_numpy(zero_copy_only=False), dtype="int64") * factor,
                           mask=raw.is_null().to_numpy(zero_copy_only=False))
            raw = raw.cast(pa.int32())
        return raw.view(arrow_type) if raw.type.bit_width == arrow_type.bit_width else raw.cast(arrow_type)
    return raw


def table_to_ipc(table: c.Table) -> bytes:
    arrow = pa.table([column_to_arrow(v) for v in table.columns.values()],
                     names=list(table.columns.keys()))
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, arrow.schema) as writer:
        writer.write_table(arrow)
    return sink.getvalue().to_pybytes()
