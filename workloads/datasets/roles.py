"""Roles: which of a dataset's own columns is the time, the key, a price, a size.

A workload names the roles it needs (read-day: time; slice-download: time and key; minute bars: time,
key and a price), so any schema can be benchmarked once its columns have roles: an imported file
(``workloads.datasets.tick_import``) or a table where it already lives (``workloads.targets.table``).
Here: the roles themselves, Arrow types in Tickbench's column vocabulary (``schema.Column``, DolphinDB's
type names) and a ``DatasetInfo`` made from a schema and its roles.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

import pyarrow as pa

from workloads.datasets.schema import Column, DatasetInfo, NUMPY_DTYPES, STRING_TYPES, Schema

TIMESTAMP_TYPES = frozenset({"TIMESTAMP", "NANOTIMESTAMP"})
TIME_OF_DAY_TYPES = frozenset({"SECOND", "TIME"})
NUMERIC_TYPES = frozenset({"SHORT", "INT", "LONG", "FLOAT", "DOUBLE"})
# What a user may choose for a column, in the order a type menu lists them
CHOOSABLE_TYPES = ("SYMBOL", "STRING", "BOOL", "SHORT", "INT", "LONG", "FLOAT", "DOUBLE",
                   "DATE", "SECOND", "TIME", "TIMESTAMP", "NANOTIMESTAMP")
ROLE_NAMES = ("time", "key", "price", "size", "quote-size")
ROLE_HELP = {"time": "a timestamp column, or a date column with a time-of-day column",
             "key": "symbol, instrument or device: what a slice selects",
             "price": "a price (or bid and ask): what minute bars aggregate",
             "size": "a traded size: minute bars add its sum as volume",
             "quote-size": "the sizes quoted at the bid and at the ask: what report 003's OLS regresses on"}
# how each role is named on the command line (``tickbench import`` and ``targets add-table``)
ROLE_FLAGS = {"time": "--time COLUMN", "key": "--key COLUMN", "price": "--price COLUMN",
              "size": "--size COLUMN", "quote-size": "--quote-size BID_SIZE --quote-size ASK_SIZE"}


class RoleError(ValueError):
    """A role names a column that is not there, or one of a type that cannot play it."""


@dataclass(frozen=True)
class Roles:
    time: str                          # a TIMESTAMP/NANOTIMESTAMP column, or a DATE column
    time_of_day: str = ""              # with a DATE ``time``: its SECOND/TIME column
    key: str = ""                      # optional
    price: tuple[str, ...] = ()        # none, one price, or (bid, ask)
    size: str = ""                     # optional
    quote_size: tuple[str, ...] = ()   # none, or (bid size, ask size) beside a bid and an ask

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "price": list(self.price), "quote_size": list(self.quote_size)}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "Roles":
        return cls(time=str(data["time"]), time_of_day=str(data.get("time_of_day") or ""),
                   key=str(data.get("key") or ""), price=tuple(str(p) for p in data.get("price") or ()),
                   size=str(data.get("size") or ""),
                   quote_size=tuple(str(c) for c in data.get("quote_size") or ()))

    def present(self) -> frozenset[str]:
        """The role names this dataset has (``time`` always)."""
        have = {"time"}
        if self.key:
            have.add("key")
        if self.price:
            have.add("price")
        if self.size:
            have.add("size")
        if self.quote_size:
            have.add("quote-size")
        return frozenset(have)

    def describe(self) -> str:
        """One line: ``time ts · key sym · price price · size qty``."""
        time = f"{self.time} + {self.time_of_day}" if self.time_of_day else self.time
        parts = [f"time {time}"]
        if self.key:
            parts.append(f"key {self.key}")
        if self.price:
            parts.append(("price " if len(self.price) == 1 else "bid/ask ") + "/".join(self.price))
        if self.size:
            parts.append(f"size {self.size}")
        if self.quote_size:
            parts.append("bid/ask size " + "/".join(self.quote_size))
        return " · ".join(parts)

    def check(self, schema: Schema, where: str) -> None:
        """RoleError naming ``where`` (a file or table) and the column, for a role that cannot hold."""
        types = {c.name: c.ddb_type for c in schema.columns}

        def need(role: str, column: str, allowed: frozenset[str], what: str) -> None:
            if column not in types:
                raise RoleError(f"{where}: no column {column!r} for the {role} role "
                                f"(its columns: {', '.join(types)})")
            if types[column] not in allowed:
                raise RoleError(f"{where}: column {column!r} is {types[column]}, the {role} role needs {what}")

        if not self.time:
            raise RoleError(f"{where}: name the time column ({ROLE_HELP['time']})")
        if self.time_of_day:
            need("time", self.time, frozenset({"DATE"}), "a DATE with a time-of-day column")
            need("time of day", self.time_of_day, TIME_OF_DAY_TYPES, "a time of day (SECOND or TIME)")
        else:
            need("time", self.time, TIMESTAMP_TYPES,
                 "a timestamp (or a DATE column with a time-of-day column beside it)")
        if self.key:
            need("key", self.key, frozenset(STRING_TYPES | {"SHORT", "INT", "LONG"}), "text or an integer")
        if len(self.price) > 2:
            raise RoleError(f"{where}: name one price column, or two (bid and ask), not {len(self.price)}")
        for column in self.price:
            need("price", column, NUMERIC_TYPES, "a number")
        if self.size:
            need("size", self.size, NUMERIC_TYPES, "a number")
        if self.quote_size:
            if len(self.quote_size) != 2 or len(self.price) != 2:
                raise RoleError(f"{where}: quote sizes are two columns, the bid's size and the ask's, beside a "
                                f"bid and an ask price (--price BID --price ASK {ROLE_FLAGS['quote-size']})")
            for column in self.quote_size:
                need("quote size", column, NUMERIC_TYPES, "a number")
        named = [c for c in (self.time, self.time_of_day, self.key, self.size, *self.quote_size) if c]
        if len(set(named)) != len(named):
            raise RoleError(f"{where}: one column cannot play two of the time, key and size roles (a quote size too)")


def dataset_info(name: str, title: str, schema: Schema, roles: Roles, notes: str = "",
                 extra: dict[str, Any] | None = None) -> DatasetInfo:
    """The ``DatasetInfo`` every target and workload reads, for a schema and its roles: a timestamp
    time is its own day column (``day_from``, as the devices dataset's); a DATE and a time of day are
    the date and time columns (as TAQ's); one price is its own bid and ask (its bars' mid is itself)."""
    price: tuple[str, str] = ("", "")
    if len(roles.price) == 1:
        price = (roles.price[0], roles.price[0])
    elif len(roles.price) == 2:
        price = (roles.price[0], roles.price[1])
    if roles.time_of_day:
        date_column, time_column, more = roles.time, roles.time_of_day, {}
    else:
        date_column, time_column, more = roles.time, roles.time, {"day_from": roles.time}
    return DatasetInfo(name=name, title=title, schema=schema, date_column=date_column,
                       key_column=roles.key, time_column=time_column, price_columns=price,
                       size_column=roles.size, notes=notes,
                       extra={**more, "roles": roles.to_dict(), **(extra or {})})


def quote_size_columns(info: DatasetInfo) -> tuple[str, ...]:
    """(bid size, ask size) of a dataset's quotes, or (): the quote-size role where the user named it,
    TAQ's own naming (``bid`` -> ``bidsiz``) for a built-in dataset."""
    stored = info.extra.get("roles")
    if stored:
        return Roles.from_dict(stored).quote_size
    bid, ask = info.price_columns
    names = set(info.schema.names)
    if bid and ask and bid != ask and {f"{bid}siz", f"{ask}siz"} <= names:
        return (f"{bid}siz", f"{ask}siz")
    return ()


def roles_of(info: DatasetInfo) -> frozenset[str]:
    """Which roles a dataset's columns play (a built-in dataset's from its fixed columns)."""
    stored = info.extra.get("roles")
    if stored:
        return Roles.from_dict(stored).present()
    have = {"time"}
    if quote_size_columns(info):
        have.add("quote-size")
    if info.key_column:
        have.add("key")
    if info.price_columns[0]:
        have.add("price")
    if info.size_column:
        have.add("size")
    return frozenset(have)


# --- Arrow types in the column vocabulary --------------------------------------------------------
def ddb_type_of(arrow_type: pa.DataType) -> str:
    """The column type a value of ``arrow_type`` is stored as (a user may change it before import)."""
    t = arrow_type
    if pa.types.is_dictionary(t):
        return ddb_type_of(t.value_type) if not pa.types.is_string(t.value_type) else "SYMBOL"
    if pa.types.is_boolean(t):
        return "BOOL"
    if pa.types.is_int8(t) or pa.types.is_int16(t) or pa.types.is_uint8(t):
        return "SHORT"
    if pa.types.is_int32(t) or pa.types.is_uint16(t):
        return "INT"
    if pa.types.is_integer(t):
        return "LONG"
    if pa.types.is_float16(t) or pa.types.is_float32(t):
        return "FLOAT"
    if pa.types.is_floating(t) or pa.types.is_decimal(t):
        return "DOUBLE"
    if pa.types.is_date(t):
        return "DATE"
    if pa.types.is_timestamp(t):
        return "TIMESTAMP" if t.unit in ("s", "ms") else "NANOTIMESTAMP"
    if pa.types.is_time(t):
        return "SECOND" if t.unit == "s" else "TIME"
    if pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_string_view(t) or pa.types.is_null(t):
        return "SYMBOL"
    raise ValueError(f"values of type {t} cannot be stored: cast them to a number, text or a time")


def arrow_type_of(ddb_type: str) -> pa.DataType:
    """The Arrow type a column of ``ddb_type`` is held in (strings as large_string, times in ns)."""
    if ddb_type in STRING_TYPES:
        return pa.large_string()
    if ddb_type not in NUMPY_DTYPES:
        raise ValueError(f"unknown column type {ddb_type!r}: choose one of {', '.join(CHOOSABLE_TYPES)}")
    if ddb_type == "DATE":
        return pa.timestamp("ns")           # the DataFrame convention: a DATE is midnight, datetime64[ns]
    return pa.from_numpy_dtype(NUMPY_DTYPES[ddb_type])


def schema_of(arrow_schema: pa.Schema, types: dict[str, str] | None = None) -> Schema:
    """Tickbench's schema of an Arrow schema, with ``types`` (column -> type) chosen by the user."""
    types = dict(types or {})
    unknown = set(types) - set(arrow_schema.names)
    if unknown:
        raise ValueError(f"no column {', '.join(sorted(unknown))} to set a type for "
                         f"(columns: {', '.join(arrow_schema.names)})")
    columns = []
    for f in arrow_schema:
        chosen = types.get(f.name) or ddb_type_of(f.type)
        if chosen not in CHOOSABLE_TYPES:
            raise ValueError(f"column {f.name}: unknown type {chosen!r}; choose one of {', '.join(CHOOSABLE_TYPES)}")
        columns.append(Column(f.name, chosen))
    return Schema(tuple(columns))


def rounding_note(schema: Schema, engine: str, unit: str) -> str:
    """A layout's line on what it does to nanosecond timestamps it cannot hold ('' when none)."""
    fine = [c.name for c in schema.columns if c.ddb_type == "NANOTIMESTAMP"]
    if not fine or unit == "ns":
        return ""
    return f"{engine} holds timestamps to the {unit}: {', '.join(fine)} rounded down to the {unit}"
