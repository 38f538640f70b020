"""Which columns a day read returns: report 000 loaded a day with every column and again "without
the two string columns" (TAQ: symbol and mmid; level 2: Market and SecurityID).

The ``read-day`` workload's ``columns`` parameter is text: ``"all"`` (every column),
``"without strings"`` (every column but the schema's SYMBOL/STRING ones) or a comma-separated list
of column names. ``resolve_columns`` turns it, against the dataset's schema, into what a target's
``read_day(layout, day, columns)`` takes: None for every column, else a tuple of names in the
schema's order (every target then returns the same frame, whatever order the list gave). A list
naming every column resolves to None, so no target prepares a copy of what it already has.
"""
from __future__ import annotations

from collections.abc import Iterable

from workloads.datasets.schema import Schema

ALL = "all"
WITHOUT_STRINGS = "without strings"
LABEL = "Columns"               # the parameter's label: messages start with it, as Param's do
_ALIASES = {"all": ALL, "*": ALL, "without strings": WITHOUT_STRINGS, "no strings": WITHOUT_STRINGS}


def normalise_spec(value: object) -> str:
    """The parameter's value in one spelling: ``"all"``, ``"without strings"`` or ``"a,b,c"``
    (names stripped, case kept: names are case-sensitive). Syntax only: the names are checked
    against a dataset by ``resolve_columns``. A list or tuple of names is taken as such."""
    if value is None:
        return ALL
    if isinstance(value, (list, tuple)):
        value = ",".join(str(v) for v in value)
    text = str(value).strip()
    folded = " ".join(text.lower().replace("_", " ").replace("-", " ").split())
    if not folded:
        return ALL
    if folded in _ALIASES:
        return _ALIASES[folded]
    names = [name.strip() for name in text.split(",")]
    if any(not name for name in names):
        raise ValueError(f"{LABEL}: {text!r} has an empty name; give \"all\", \"without strings\" "
                         "or column names separated by commas")
    repeated = sorted({name for name in names if names.count(name) > 1})
    if repeated:
        raise ValueError(f"{LABEL}: {', '.join(repeated)} named more than once")
    return ",".join(names)


def _known(names: Iterable[str], schema: Schema, dataset: str) -> set[str]:
    wanted = list(names)
    unknown = [name for name in wanted if name not in schema.names]
    if unknown:
        raise ValueError(f"{LABEL}: {dataset or 'the dataset'} has no column "
                         f"{', '.join(repr(n) for n in unknown)}; its columns are {', '.join(schema.names)}")
    return set(wanted)


def resolve_columns(spec: object, schema: Schema, dataset: str = "") -> tuple[str, ...] | None:
    """The columns ``spec`` names in ``schema``: None for every column, else names in the schema's
    order. ValueError naming the unknown names and the valid ones, or saying that "without
    strings" leaves nothing out (or nothing at all) in this dataset."""
    spec = normalise_spec(spec)
    if spec == ALL:
        return None
    name = dataset or "the dataset"
    if spec == WITHOUT_STRINGS:
        if not any(c.is_string for c in schema.columns):
            raise ValueError(f"{LABEL}: \"without strings\" leaves nothing out: {name} has no string "
                             f"(SYMBOL/STRING) column; its columns are {', '.join(schema.names)}")
        chosen = tuple(c.name for c in schema.columns if not c.is_string)
        if not chosen:
            raise ValueError(f"{LABEL}: \"without strings\" leaves no column: every column of {name} is a string")
        return chosen
    wanted = _known(spec.split(","), schema, dataset)
    chosen = tuple(n for n in schema.names if n in wanted)
    return None if len(chosen) == len(schema.names) else chosen


def column_schema(schema: Schema, columns: Iterable[str] | None, dataset: str = "") -> Schema:
    """``schema`` cut to ``columns`` (None: all of it), in the schema's order; ValueError for a
    name it does not have. What a target's ``read_day`` builds its select list and result from."""
    if columns is None:
        return schema
    wanted = _known(columns, schema, dataset)
    if not wanted:
        raise ValueError(f"{LABEL}: no column asked for")
    return Schema(tuple(c for c in schema.columns if c.name in wanted))
