"""ServerDialog: add or edit a server profile: ClickHouse, QuestDB, PostgreSQL, Apache Druid or
MongoDB (DolphinDB clusters have ``ClusterDialog``): kind, name, host, port, TLS, user, password,
database and the kind's other settings (QuestDB's HTTP port, Druid's coordinator port, MongoDB's
authentication database).

It edits plain data: ``entry()`` gives ``{"kind": ..., "profile": ServerProfile dict}`` (no
password), ``password()`` and ``remember()``. OK validates and names the field that is wrong.
"""
from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from PySide6.QtWidgets import (QCheckBox, QComboBox, QDialogButtonBox, QFormLayout, QLineEdit, QSpinBox,
                               QVBoxLayout, QWidget)

from widgets.targets.cluster_dialog import NAME_MAX
from widgets.targets.profile_dialog import ProfileDialog, agent_fields, error_label, password_fields
from workloads.targets.engines import CLICKHOUSE, SERVER_TYPES, missing_client
from workloads.targets.profiles import ServerProfile


def _port_spin(value: int, name: str) -> QSpinBox:
    spin = QSpinBox(objectName=name)
    spin.setRange(1, 65535)
    spin.setValue(int(value))
    return spin



def usable_kind() -> str:
    """The kind Add server starts on: ClickHouse if this install has its client, else the first
    kind whose client it has (a new user's install may lack ClickHouse's), else ClickHouse."""
    usable = [kind for kind in SERVER_TYPES if missing_client(kind, server=True) is None]
    return CLICKHOUSE if CLICKHOUSE in usable or not usable else usable[0]

class ServerDialog(ProfileDialog):
    def __init__(self, entry: dict[str, Any] | None = None, taken_names: Iterable[tuple[str, str]] = (),
                 keyring_available: bool = False, password_stored: bool = False,
                 token_stored: bool = False, parent=None):
        """``taken_names``: (kind, name) of the profiles there are (a name is unique per kind)."""
        super().__init__(parent)
        self.setObjectName("server_dialog")
        kind = (entry or {}).get("kind") or usable_kind()
        profile = (entry or {}).get("profile") or {}
        self.setWindowTitle(f"Edit {SERVER_TYPES[kind].label} server" if entry else "Add a server")
        self._taken = {(k, n) for k, n in taken_names if (k, n) != (kind, profile.get("name"))}
        self.kind_combo = QComboBox(objectName="kind_combo")
        for key, server in SERVER_TYPES.items():
            self.kind_combo.addItem(server.label, key)
        self.kind_combo.setCurrentIndex(self.kind_combo.findData(kind))
        self.kind_combo.setEnabled(not entry)           # a profile keeps its kind: add another instead
        self.name_edit = QLineEdit(str(profile.get("name", "")), objectName="name_edit")
        self.name_edit.setPlaceholderText("e.g. analytics server")
        self.host_edit = QLineEdit(str(profile.get("host", "localhost")), objectName="host_edit")
        self.port_spin = _port_spin(profile.get("port", SERVER_TYPES[kind].port), "port_spin")
        self.secure_check = QCheckBox("TLS", objectName="secure_check")
        self.secure_check.setChecked(bool(profile.get("secure", False)))
        self.user_edit = QLineEdit(str(profile.get("user", SERVER_TYPES[kind].user)), objectName="user_edit")
        self.user_edit.setPlaceholderText("none: the server asks no login")
        self.password_edit, self.remember_check = password_fields(keyring_available, password_stored)
        self.agents_edit, self.agent_token_edit = agent_fields(list((entry or {}).get("agents") or ()), token_stored)
        self.database_edit = QLineEdit(str(profile.get("database", SERVER_TYPES[kind].database)),
                                       objectName="database_edit")
        self.option_widgets: dict[str, QWidget] = {}
        self._saved_options = dict(profile.get("options") or {})
        self.error_label = error_label()
        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel)
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)
        self.form = QFormLayout()
        self.form.addRow("Kind", self.kind_combo)
        self.form.addRow("Name", self.name_edit)
        self.form.addRow("Host", self.host_edit)
        self.form.addRow(SERVER_TYPES[kind].port_label, self.port_spin)
        self.form.addRow("", self.secure_check)
        self.form.addRow("User", self.user_edit)
        self.form.addRow("Password", self.password_edit)
        self.form.addRow("", self.remember_check)
        self.form.addRow("Database", self.database_edit)
        self.form.addRow("Host agents", self.agents_edit)
        self.form.addRow("Agent token", self.agent_token_edit)
        layout = QVBoxLayout(self)
        layout.addLayout(self.form)
        layout.addWidget(self.error_label)
        layout.addWidget(self.buttons)
        self._show_options(kind)
        self.kind_combo.currentIndexChanged.connect(lambda _i: self._kind_changed())
        self.resize(460, self.sizeHint().height())

    @property
    def kind(self) -> str:
        return self.kind_combo.currentData()

    def _kind_changed(self) -> None:
        """A new kind: its default port, user and database, and its own settings."""
        server = SERVER_TYPES[self.kind]
        self.port_spin.setValue(server.port)
        self.user_edit.setText(server.user)
        self.database_edit.setText(server.database)
        self.form.labelForField(self.port_spin).setText(server.port_label)
        self._show_options(self.kind)

    def _show_options(self, kind: str) -> None:
        for widget in self.option_widgets.values():
            self.form.removeRow(widget)
        self.option_widgets = {}
        for name, default in SERVER_TYPES[kind].options:
            value = self._saved_options.get(name, default)
            if name.endswith("_port"):
                widget = _port_spin(value, f"{name}_spin")
            else:
                widget = QLineEdit(str(value), objectName=f"{name}_edit")
            self.option_widgets[name] = widget
            before_agents = self.form.getWidgetPosition(self.agents_edit)[0]      # the kind's settings, then agents
            self.form.insertRow(before_agents, name.replace("_", " ").capitalize(), widget)

    def _options(self) -> dict[str, Any]:
        return {name: widget.value() if isinstance(widget, QSpinBox) else widget.text().strip()
                for name, widget in self.option_widgets.items()}

    def _profile(self) -> ServerProfile:
        return ServerProfile(self.name_edit.text().strip(), self.host_edit.text().strip(), self.port_spin.value(),
                             self.user_edit.text().strip(), self.database_edit.text().strip(),
                             self.secure_check.isChecked(), self._options())

    def validate(self) -> str:
        """"" when everything is right, else one message naming the field."""
        name = self.name_edit.text().strip()
        if not name:
            return "Name: give the server a name"
        if len(name) > NAME_MAX:
            return f"Name: at most {NAME_MAX} characters"
        if (self.kind, name) in self._taken:
            return f"Name: a {SERVER_TYPES[self.kind].label} server named {name!r} exists already"
        database = self.database_edit.text().strip()
        if database and not database.replace("_", "").isalnum():
            return "Database: letters, digits and underscores only"
        try:
            self._profile()
        except ValueError as exc:
            return str(exc)
        return self.agents_problem()

    def entry(self) -> dict[str, Any]:
        return {"kind": self.kind, "profile": self._profile().to_dict(), "agents": self.agents()}
