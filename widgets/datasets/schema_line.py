"""DatasetSchemaLine: under the scenario form's dataset picker, the chosen dataset's roles in one line
(``time ts · key sym · price price · size qty``, then its column count) and, in the tooltip, every
column with its type and the role it plays. Built-in datasets and imports alike: the roles come from
``DatasetInfo`` (an import's as the user named them, a built-in's from its fixed columns).
"""
from __future__ import annotations

from html import escape

from PySide6.QtWidgets import QLabel

from workloads.datasets.roles import Roles, quote_size_columns
from workloads.datasets.schema import DatasetInfo


def roles_from_info(info: DatasetInfo) -> Roles:
    """The roles a dataset's columns play, as a user would have named them."""
    stored = info.extra.get("roles")
    if stored:
        return Roles.from_dict(stored)
    bid, ask = info.price_columns
    price = () if not bid else (bid,) if bid == ask else (bid, ask)
    dated = info.date_column and info.date_column != info.time_column
    return Roles(time=info.date_column if dated else info.time_column, time_of_day=info.time_column if dated else "",
                 key=info.key_column, price=price, size=info.size_column, quote_size=quote_size_columns(info))


def role_of_column(roles: Roles) -> dict[str, str]:
    out: dict[str, str] = {}
    for column, role in ((roles.time, "time"), (roles.time_of_day, "time of day"), (roles.key, "key"),
                         (roles.size, "size")):
        if column:
            out.setdefault(column, role)
    for column, role in zip(roles.price, ("price", "ask") if len(roles.price) == 1 else ("bid", "ask")):
        out.setdefault(column, role)
    for column, role in zip(roles.quote_size, ("bid size", "ask size")):
        out.setdefault(column, role)
    return out


def schema_tooltip(info: DatasetInfo) -> str:
    """Every column with its type and role, as a small HTML table (rich text wraps; plain text would not)."""
    played = role_of_column(roles_from_info(info))
    rows = "".join(f"<tr><td>{escape(c.name)}</td><td>{c.ddb_type}</td><td><i>{played.get(c.name, '')}</i></td></tr>"
                   for c in info.schema.columns)
    return f"<b>{escape(info.name)}</b>: {len(info.schema.columns)} columns<table>{rows}</table>"


class DatasetSchemaLine(QLabel):
    def __init__(self, parent=None):
        super().__init__(parent)
        self.setObjectName("dataset_schema")
        self.setWordWrap(True)

    def set_info(self, info: DatasetInfo | None) -> None:
        if info is None:
            self.setText("")
            self.setToolTip("")
            return
        columns = len(info.schema.columns)
        self.setText(f"{roles_from_info(info).describe()} · {columns} column{'s' if columns != 1 else ''}")
        self.setToolTip(schema_tooltip(info))
