"""The pieces the test server's query translation is made of: DolphinDB's type groups, a compiled
expression (its DuckDB SQL and DolphinDB type), quoting, and the checks and names every clause
uses (``suites``, ``timeseries``)."""
from __future__ import annotations

from dataclasses import dataclass

from tests.ddbserver import codec as c
from tests.ddbserver.syntax import ScriptError

NUMERIC = (c.BOOL, c.CHAR, c.SHORT, c.INT, c.LONG, c.FLOAT, c.DOUBLE)
INTEGRAL = (c.BOOL, c.CHAR, c.SHORT, c.INT, c.LONG)
TEMPORAL = (c.DATE, c.MONTH, c.TIME, c.MINUTE, c.SECOND, c.DATETIME, c.TIMESTAMP, c.NANOTIMESTAMP)
BOOL_TYPE = -1                      # a condition's type (not a column type)


@dataclass
class Expr:
    sql: str
    type: int
    agg: bool = False
    window: bool = False


def q(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def sql_string(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def numeric(x: Expr, where: str) -> None:
    if x.type not in NUMERIC:
        raise ScriptError(f"{where} takes numbers, not {c.TYPE_NAMES.get(x.type, 'conditions')}")


def comparable(a: Expr, b: Expr) -> None:
    if a.type in NUMERIC and b.type in NUMERIC:
        return
    if a.type in c.STRINGISH and b.type in c.STRINGISH:
        return
    if a.type == b.type and a.type in TEMPORAL:
        return
    raise ScriptError(f"The test server does not compare {c.TYPE_NAMES.get(a.type, a.type)} with "
                      f"{c.TYPE_NAMES.get(b.type, b.type)}")


def constant(node) -> bool:
    """No column in the expression (an interval, a window)."""
    if not isinstance(node, tuple):
        return not isinstance(node, list) or all(constant(n) for n in node)
    if node[0] == "col":
        return False
    return all(constant(n) for n in node[1:] if isinstance(n, (tuple, list)))


def default_name(node, index: int) -> str:
    """DolphinDB's name for an unnamed column: the column, ``func_column``, or ``count``."""
    if node[0] == "col":
        return node[1]
    if node[0] == "call":
        if node[2] == [("star",)]:
            return node[1]
        inner = [a for a in node[2] if a[0] == "col"]
        return f"{node[1]}_{inner[0][1]}" if inner else node[1]
    return f"col{index}"


def dedupe(names: list[str]) -> list[str]:
    seen: dict[str, int] = {}
    out = []
    for name in names:
        count = seen.get(name, 0)
        seen[name] = count + 1
        out.append(name if not count else f"{name}_{count}")
    return out


def exec_value(table: c.Table, scalar: bool):
    """``exec``: one column as a vector, or one aggregate as a scalar."""
    if len(table.columns) != 1:
        raise ScriptError("The test server execs one column only")
    vector = next(iter(table.columns.values()))
    if scalar:
        value = vector.values[0] if len(vector) else None
        if vector.type in c.NUMPY_OF and value is not None:
            value = value.item() if hasattr(value, "item") else value
        return c.Scalar(vector.type, value)
    return vector

