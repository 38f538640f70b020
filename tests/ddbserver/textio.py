"""Text files on the server side: ``loadTextEx`` reads a CSV file into a DFS table, ``saveText``
writes a table as CSV, both in DolphinDB's text formats (DATE ``2007.08.23``, SECOND ``09:30:07``,
TIME ``09:30:07.123``, TIMESTAMP ``2016.11.15T00:00:00.000``, a CHAR as its one letter, the empty
field for NULL). The CSV is read with DuckDB's ``read_csv`` (every field as text, then converted
to the target table's types by position, as DolphinDB appends by position).
"""
from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pcsv

from tests.ddbserver import codec as c
from tests.ddbserver.store import DUCK_TYPES, Store, from_arrow
from tests.ddbserver.syntax import ScriptError

_SECONDS = ("(date_part('hour', {t}) * 3600 + date_part('minute', {t}) * 60 + "
            "CAST(floor(date_part('second', {t})) AS INTEGER))")
# DolphinDB type -> DuckDB expression of one text field ``{x}`` as the raw encoding
_FROM_TEXT = {
    c.DATE: "date_diff('day', DATE '1970-01-01', CAST(strptime({x}, '%Y.%m.%d') AS DATE))",
    c.SECOND: _SECONDS.format(t="strptime({x}, '%H:%M:%S')"),
    c.TIME: ("(" + _SECONDS.format(t="strptime({x}, ['%H:%M:%S.%g', '%H:%M:%S'])") + " * 1000 + "
             "date_part('millisecond', strptime({x}, ['%H:%M:%S.%g', '%H:%M:%S'])) % 1000)"),
    c.TIMESTAMP: "epoch_ms(strptime({x}, ['%Y.%m.%dT%H:%M:%S.%g', '%Y.%m.%dT%H:%M:%S']))",
    c.CHAR: "(CASE WHEN length({x}) = 1 THEN ascii({x}) ELSE error('not a CHAR: ' || {x}) END)",
    c.SYMBOL: "{x}",
    c.STRING: "{x}",
}
# DolphinDB type -> (Arrow timestamp unit, raw value -> that unit, format; %S prints ms of "ms")
_TO_TEXT = {c.DATE: ("s", 86_400, "%Y.%m.%d"), c.SECOND: ("s", 1, "%H:%M:%S"),
            c.TIME: ("ms", 1, "%H:%M:%S"), c.TIMESTAMP: ("ms", 1, "%Y.%m.%dT%H:%M:%S")}


def load_text(store: Store, db_path: str, table: str, partition_columns: list[str], path: str,
              delimiter: str, schema: list[tuple[str, int]]) -> int:
    """Append the CSV file at ``path`` (a header line, then rows) to ``db_path``/``table``,
    creating the table from ``schema`` when it does not exist; return the rows appended."""
    if db_path not in store.databases:
        raise ScriptError(f"The database [{db_path}] does not exist.")
    if (db_path, table) not in store.tables:
        store.create_table(db_path, table, schema, partition_columns)
    meta = store.dfs_table(db_path, table)
    if [t for _, t in schema] != [t for _, t in meta.columns]:
        raise ScriptError(f"The schema of the text file does not match the table {table}")
    fields = [f"c{i}" for i in range(len(schema))]
    selects = []
    for name, (_, ddb_type) in zip(fields, schema):
        pattern = _FROM_TEXT.get(ddb_type, f"CAST({{x}} AS {DUCK_TYPES[ddb_type]})")
        selects.append(pattern.format(x=f'"{name}"') + f' AS "{name}"')
    sql = (f"SELECT {', '.join(selects)} FROM read_csv(?, header = true, all_varchar = true, "
           f"delim = ?, quote = '\"', columns = {{{', '.join(repr(f) + ': ' + repr('VARCHAR') for f in fields)}}})")
    try:
        with store.lock:
            arrow = store.con.sql(sql, params=[path, delimiter]).to_arrow_table()
    except Exception as exc:        # DuckDB's IO and conversion errors, as the server's message
        message = str(exc).split("\n")[0]
        raise ScriptError(f"loadTextEx failed to load {path}: {message}") from None
    rows = from_arrow(arrow, [t for _, t in schema])
    return store.insert(meta, c.Table(table, dict(zip([n for n, _ in meta.columns], rows.columns.values()))),
                        store.databases[db_path])


def save_text(table: c.Table, path: str) -> None:
    """Write ``table`` as CSV at ``path``: a header line, DolphinDB's text formats."""
    columns = {name: _text(vec) for name, vec in table.columns.items()}
    arrow = pa.table(columns) if columns else pa.table({})
    try:
        pcsv.write_csv(arrow, path, write_options=pcsv.WriteOptions(quoting_style="needed"))
    except OSError as exc:
        raise ScriptError(f"saveText failed to write {path}: {exc.strerror or exc}") from None


def _text(vec: c.Vector) -> pa.Array:
    values = np.asarray(vec.values)
    if vec.type in c.STRINGISH:
        return pa.array([None if v == "" else str(v) for v in values], pa.string())
    null = values == c.NULLS[vec.type] if vec.type in c.NULLS else np.zeros(len(values), bool)
    if vec.type in (c.FLOAT, c.DOUBLE):
        null |= np.isnan(values)
    if vec.type == c.CHAR:
        return pa.array([None if n else chr(int(v) & 0xFF) for v, n in zip(values, null)], pa.string())
    if vec.type in _TO_TEXT:
        unit, factor, fmt = _TO_TEXT[vec.type]
        stamps = pa.array(values.astype("i8") * factor, pa.int64(), mask=null).cast(pa.timestamp(unit))
        return pc.strftime(stamps, format=fmt)
    if vec.type in c.NUMPY_OF:
        return pa.array(values, mask=null)
    raise ScriptError(f"saveText cannot write a {c.TYPE_NAMES.get(vec.type, vec.type)} column")
