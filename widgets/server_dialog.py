"""ServerDialog: add or edit a ClickHouse server profile (HTTP interface, as clickhouse-connect
speaks it): name, host, port, TLS, user, password and database.

Like ``ClusterDialog`` it edits plain data: ``entry()`` gives ``{"kind": "clickhouse", "profile":
ServerProfile dict}`` (no password), ``password()`` and ``remember()``. OK validates and names the
field that is wrong.
"""
from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from PySide6.QtWidgets import QCheckBox, QDialogButtonBox, QFormLayout, QLineEdit, QSpinBox, QVBoxLayout

from widgets.cluster_dialog import NAME_MAX
from widgets.profile_dialog import ProfileDialog, error_label, password_fields
from workloads.target_registry import CLICKHOUSE, ServerProfile

DEFAULT_HTTP_PORT = 8123


class ServerDialog(ProfileDialog):
    def __init__(self, entry: dict[str, Any] | None = None, taken_names: Iterable[str] = (),
                 keyring_available: bool = False, password_stored: bool = False, parent=None):
        super().__init__(parent)
        self.setObjectName("server_dialog")
        self.setWindowTitle("Edit ClickHouse server" if entry else "Add ClickHouse server")
        profile = (entry or {}).get("profile") or {}
        self._taken = {n for n in taken_names if n != profile.get("name")}
        self.name_edit = QLineEdit(str(profile.get("name", "")), objectName="name_edit")
        self.name_edit.setPlaceholderText("e.g. analytics server")
        self.host_edit = QLineEdit(str(profile.get("host", "localhost")), objectName="host_edit")
        self.port_spin = QSpinBox(objectName="port_spin")
        self.port_spin.setRange(1, 65535)
        self.port_spin.setValue(int(profile.get("port", DEFAULT_HTTP_PORT)))
        self.secure_check = QCheckBox("HTTPS (TLS)", objectName="secure_check")
        self.secure_check.setChecked(bool(profile.get("secure", False)))
        self.user_edit = QLineEdit(str(profile.get("user", "default")), objectName="user_edit")
        self.password_edit, self.remember_check = password_fields(keyring_available, password_stored)
        self.database_edit = QLineEdit(str(profile.get("database", "tickbench")), objectName="database_edit")
        self.error_label = error_label()
        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel)
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)
        form = QFormLayout()
        form.addRow("Name", self.name_edit)
        form.addRow("Host", self.host_edit)
        form.addRow("HTTP port", self.port_spin)
        form.addRow("", self.secure_check)
        form.addRow("User", self.user_edit)
        form.addRow("Password", self.password_edit)
        form.addRow("", self.remember_check)
        form.addRow("Database", self.database_edit)
        layout = QVBoxLayout(self)
        layout.addLayout(form)
        layout.addWidget(self.error_label)
        layout.addWidget(self.buttons)
        self.resize(460, self.sizeHint().height())

    def _profile(self) -> ServerProfile:
        return ServerProfile(self.name_edit.text().strip(), self.host_edit.text().strip(), self.port_spin.value(),
                             self.user_edit.text().strip(), self.database_edit.text().strip(),
                             self.secure_check.isChecked())

    def validate(self) -> str:
        """"" when everything is right, else one message naming the field."""
        name = self.name_edit.text().strip()
        if not name:
            return "Name: give the server a name"
        if len(name) > NAME_MAX:
            return f"Name: at most {NAME_MAX} characters"
        if name in self._taken:
            return f"Name: a server named {name!r} exists already"
        if not self.database_edit.text().strip().replace("_", "").isalnum():
            return "Database: letters, digits and underscores only"
        try:
            self._profile()
        except ValueError as exc:
            return str(exc)
        return ""

    def entry(self) -> dict[str, Any]:
        return {"kind": CLICKHOUSE, "profile": self._profile().to_dict()}
