"""TableDialog: benchmark a table where it already lives, read-only ("Existing table…" in the targets panel).

The user gives the kind (a Parquet file or hive folder, a DuckDB file's table, a PostgreSQL, QuestDB,
ClickHouse or DolphinDB table), where it is (a path, or a server's address and login, or a saved
server), and the table. "Read columns" asks the table its columns on a plain thread
(``workloads.targets.table.describe_table``); the role pickers then offer them, prefilled from the
column names. Save checks the table there (reachable, readable, not empty, the roles' columns of
their types) and saves target ``table:<name>`` (``add_table_target``), also off the GUI thread; a
problem is the engine's one line. The password is kept by the registry (this session, and the store
when asked), never in the saved file.
"""
from __future__ import annotations

import threading
from typing import Any, Callable

from PySide6.QtCore import QRegularExpression, Signal
from PySide6.QtGui import QRegularExpressionValidator
from PySide6.QtWidgets import (QCheckBox, QComboBox, QDialog, QDialogButtonBox, QFileDialog, QFormLayout, QGroupBox,
                               QHBoxLayout, QLabel, QLineEdit, QPushButton, QSpinBox, QVBoxLayout, QWidget)

from widgets.datasets.role_pickers import RolePickers
from widgets.common.theme import current_theme
from workloads.datasets.roles import RoleError, Roles
from workloads.datasets.schema import Column, Schema
from workloads.datasets.tables import NAME_RULE
from workloads.datasets.tick_sources import suggest_roles
from workloads.targets.base import TargetError
from workloads.targets.engines import SERVER_TYPES
from workloads.targets.table import KINDS, SERVER_KINDS, add_table_target, describe_table

KIND_LABELS = {"parquet": "Parquet file or folder", "duckdb": "DuckDB file", "postgres": "PostgreSQL",
               "questdb": "QuestDB", "clickhouse": "ClickHouse", "dolphindb": "DolphinDB"}
# A server kind's defaults: SERVER_TYPES' where it has one; DolphinDB's own otherwise
_DDB_DEFAULTS = (8848, "admin", "")
TYPED = "— an address typed here —"


def _defaults(kind: str) -> tuple[int, str, str]:
    server = SERVER_TYPES.get(kind)
    return (server.port, server.user, server.database) if server else _DDB_DEFAULTS


class TableDialog(QDialog):
    saved = Signal(str)                   # the target's key: "table:<name>"
    columns_read = Signal()               # the columns (or the error) have been shown
    _done = Signal(int, str, object)      # (generation, "columns" | "saved", result or error text), queued

    def __init__(self, servers: list[tuple[str, str, str]] = (), resolve: Callable[[str], dict | None] | None = None,
                 keep_password: Callable[[str, dict, str, bool], Any] | None = None,
                 keyring_available: bool = False, parent=None):
        """``servers``: (key, label, kind) of the saved servers; ``resolve(key)``: a saved server's config
        with its password (None when the user cancels); ``keep_password(key, config, password, remember)``."""
        super().__init__(parent)
        self.setObjectName("table_dialog")
        self.setWindowTitle("Benchmark an existing table, read-only")
        self.setMinimumWidth(620)
        self._servers, self._resolve, self._keep_password = list(servers), resolve, keep_password
        self._generation = 0
        self._thread: threading.Thread | None = None
        self._columns: list[tuple[str, str, str]] = []

        intro = QLabel("Tickbench reads the table where it lives and never writes, alters or drops anything "
                       "there: only the read workloads run on it.", wordWrap=True)
        self.name_edit = QLineEdit(objectName="name_edit")
        self.name_edit.setValidator(QRegularExpressionValidator(QRegularExpression(NAME_RULE.pattern), self))
        self.name_edit.setPlaceholderText("e.g. trades: the target is then table:trades")
        self.kind_combo = QComboBox(objectName="kind_combo")
        for kind in KINDS:
            self.kind_combo.addItem(KIND_LABELS.get(kind, kind), kind)
        self.location_edit = QLineEdit(objectName="location_edit")
        self.file_button = QPushButton("File…", objectName="file_button")
        self.folder_button = QPushButton("Folder…", objectName="folder_button")
        location_row = QHBoxLayout()
        location_row.addWidget(self.location_edit, 1)
        location_row.addWidget(self.file_button)
        location_row.addWidget(self.folder_button)
        self.location_widget = QWidget()
        self.location_widget.setLayout(location_row)
        location_row.setContentsMargins(0, 0, 0, 0)
        self.server_combo = QComboBox(objectName="server_combo")
        self.host_edit = QLineEdit("127.0.0.1", objectName="host_edit")
        self.port_spin = QSpinBox(objectName="port_spin")
        self.port_spin.setRange(1, 65535)
        self.database_edit = QLineEdit(objectName="database_edit")
        self.user_edit = QLineEdit(objectName="user_edit")
        self.password_edit = QLineEdit(objectName="password_edit", echoMode=QLineEdit.EchoMode.Password)
        self.remember_check = QCheckBox("Remember the password in the system keyring", objectName="remember_check")
        self.remember_check.setEnabled(keyring_available)
        self.table_edit = QLineEdit(objectName="table_edit")
        self.read_button = QPushButton("Read columns", objectName="read_button")
        table_row = QHBoxLayout()
        table_row.addWidget(self.table_edit, 1)
        table_row.addWidget(self.read_button)
        self.form = QFormLayout()
        self.form.addRow("Name:", self.name_edit)
        self.form.addRow("Kind:", self.kind_combo)
        self.form.addRow("Location:", self.location_widget)
        self.form.addRow("Saved server:", self.server_combo)
        self.form.addRow("Host:", self.host_edit)
        self.form.addRow("Port:", self.port_spin)
        self.form.addRow("Database:", self.database_edit)
        self.form.addRow("User:", self.user_edit)
        self.form.addRow("Password:", self.password_edit)
        self.form.addRow("", self.remember_check)
        self.form.addRow("Table:", table_row)

        roles_box = QGroupBox("Roles, from the table's columns")
        self.columns_label = QLabel("Press Read columns to list the table's columns.", objectName="columns_label",
                                    wordWrap=True)
        self.role_pickers = RolePickers()
        roles_layout = QVBoxLayout(roles_box)
        roles_layout.addWidget(self.columns_label)
        roles_layout.addWidget(self.role_pickers)
        self.status_label = QLabel(objectName="status_label", wordWrap=True)
        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Save | QDialogButtonBox.StandardButton.Cancel)
        self.save_button = self.buttons.button(QDialogButtonBox.StandardButton.Save)
        self.save_button.setObjectName("save_button")

        layout = QVBoxLayout(self)
        layout.addWidget(intro)
        layout.addLayout(self.form)
        layout.addWidget(roles_box)
        layout.addWidget(self.status_label)
        layout.addWidget(self.buttons)

        self.kind_combo.currentIndexChanged.connect(self._on_kind)
        self.server_combo.currentIndexChanged.connect(self._update_state)
        self.file_button.clicked.connect(self._browse_file)
        self.folder_button.clicked.connect(self._browse_folder)
        self.read_button.clicked.connect(self.read_columns)
        self.buttons.accepted.connect(self.save)
        self.buttons.rejected.connect(self.reject)
        self.role_pickers.changed.connect(self._update_state)
        self.name_edit.textChanged.connect(self._update_state)
        self._done.connect(self._on_done)
        self._on_kind()

    # ---- inputs ---------------------------------------------------------------------------------
    @property
    def kind(self) -> str:
        return self.kind_combo.currentData()

    def set_kind(self, kind: str) -> None:
        self.kind_combo.setCurrentIndex(self.kind_combo.findData(kind))

    def _on_kind(self) -> None:
        kind, server = self.kind, self.kind in SERVER_KINDS
        port, user, database = _defaults(kind)
        self.port_spin.setValue(port)
        self.user_edit.setText(user)
        self.database_edit.setText(database)
        self.server_combo.clear()
        self.server_combo.addItem(TYPED, "")
        for key, label, server_kind in self._servers:
            if server_kind == kind:
                self.server_combo.addItem(label, key)
        self.location_edit.setPlaceholderText("a .parquet file, or a folder of them (hive date=… folders too)"
                                              if kind == "parquet" else "a .duckdb file")
        self.folder_button.setVisible(kind == "parquet")
        self.table_edit.setPlaceholderText("dfs://db/table" if kind == "dolphindb" else
                                           "not needed for Parquet" if kind == "parquet" else "e.g. trades")
        self.form.setRowVisible(self.location_widget, not server)
        for widget in (self.server_combo, self.host_edit, self.port_spin, self.database_edit, self.user_edit,
                       self.password_edit, self.remember_check):
            self.form.setRowVisible(widget, server)
        self._forget_columns()

    def _browse_file(self) -> None:
        filter_ = "Parquet (*.parquet *.pq);;All files (*)" if self.kind == "parquet" else \
            "DuckDB (*.duckdb *.db);;All files (*)"
        path, _ = QFileDialog.getOpenFileName(self, "The table's file", self.location_edit.text(), filter_)
        if path:
            self.location_edit.setText(path)

    def _browse_folder(self) -> None:
        path = QFileDialog.getExistingDirectory(self, "The table's folder", self.location_edit.text())
        if path:
            self.location_edit.setText(path)

    def location(self) -> str:
        if self.kind not in SERVER_KINDS:
            return self.location_edit.text().strip()
        if self.server_combo.currentData():
            return self.server_combo.currentData()
        database = self.database_edit.text().strip()
        return f"{self.host_edit.text().strip()}:{self.port_spin.value()}" + (f"/{database}" if database else "")

    def connection(self) -> dict[str, Any] | None:
        """What the engine connects with (a saved server's with its password); None when cancelled."""
        if self.kind not in SERVER_KINDS:
            return {}
        key = self.server_combo.currentData()
        if key:
            resolved = self._resolve(key) if self._resolve else None
            return None if resolved is None else {**resolved, "server_key": key}
        out: dict[str, Any] = {"host": self.host_edit.text().strip(), "port": self.port_spin.value(),
                               "user": self.user_edit.text().strip(), "database": self.database_edit.text().strip(),
                               "password": self.password_edit.text()}
        if self.kind == "questdb":
            out["http_port"] = dict(SERVER_TYPES["questdb"].options)["http_port"]
        return out

    # ---- reading the columns and saving, off the GUI thread ---------------------------------------
    @property
    def busy(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def _start(self, tag: str, work: Callable[[], Any]) -> bool:
        if self.busy:
            return False
        self._generation += 1
        generation = self._generation

        def run() -> None:
            try:
                result: object = work()
            except (TargetError, ValueError, OSError) as exc:
                result = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            except Exception as exc:  # a client's own error still reaches the user, in one line
                result = f"{self.location()}: {type(exc).__name__}: {str(exc).strip().splitlines()[0] if str(exc).strip() else ''}"
            try:
                self._done.emit(generation, tag, result)
            except RuntimeError:
                pass  # the dialog is gone
        self._thread = threading.Thread(target=run, name=f"tickbench-table-{tag}", daemon=True)
        self._thread.start()
        self._update_state()
        return True

    def read_columns(self) -> bool:
        connection = self.connection()
        if connection is None:
            return False
        kind, location, table = self.kind, self.location(), self.table_edit.text().strip()
        self._say(f"Reading the columns of {table or location}…")
        return self._start("columns", lambda: describe_table(kind, location, table, connection))

    def save(self) -> bool:
        problems = self.problems()
        connection = self.connection() if not problems else None
        if problems or connection is None:
            self._say("; ".join(problems), failed=bool(problems))
            return False
        name, kind, location, table, roles = (self.name_edit.text(), self.kind, self.location(),
                                              self.table_edit.text().strip(), self.role_pickers.roles())
        self._say(f"Checking {table or location} (its rows, its roles' columns)…")
        return self._start("saved", lambda: add_table_target(name, kind, location, table, roles, connection))

    def _on_done(self, generation: int, tag: str, result: object) -> None:
        if self._thread is not None:
            self._thread.join()
            self._thread = None
        if generation != self._generation:
            return
        if isinstance(result, str):
            if tag == "columns":
                self._forget_columns()
            self._say(result, failed=True)
        elif tag == "columns":
            self._columns = list(result)
            self.columns_label.setText("Columns: " + ", ".join(f"{n} ({t})" for n, t, _ in self._columns))
            schema = Schema(tuple(Column(n, t) for n, t, _ in self._columns))
            self.role_pickers.set_columns([(n, t) for n, t, _ in self._columns], suggest_roles(schema) or Roles(""))
            self._say("")
            if not self.name_edit.text():
                self.name_edit.setText(_name_from(self.table_edit.text() or self.location()))
        else:
            key = f"table:{result.name}"
            password = self.password_edit.text()
            if password and self._keep_password and not self.server_combo.currentData():
                self._keep_password(key, {**result.connection, "source": result.kind}, password,
                                    self.remember_check.isChecked())
            self._say(f"Saved {key}: {result.where}; {result.roles.describe()}.")
            self.saved.emit(key)
            self.accept()
        self._update_state()
        if tag == "columns":
            self.columns_read.emit()

    def _forget_columns(self) -> None:
        self._columns = []
        self.columns_label.setText("Press Read columns to list the table's columns.")
        self.role_pickers.set_columns([], Roles(""))
        self._update_state()

    # ---- state ----------------------------------------------------------------------------------
    def problems(self) -> list[str]:
        found = []
        if not NAME_RULE.fullmatch(self.name_edit.text()):
            found.append("name: 1-40 lower-case letters, digits and _, starting with a letter")
        if not self._columns:
            found.append("read the table's columns first")
        else:
            try:
                schema = Schema(tuple(Column(n, t) for n, t, _ in self._columns))
                self.role_pickers.roles().check(schema, self.table_edit.text() or self.location())
            except RoleError as exc:
                found.append(str(exc))
        return found

    def _update_state(self) -> None:
        busy = self.busy
        problems = self.problems()
        self.save_button.setEnabled(not busy and not problems)
        self.save_button.setToolTip("; ".join(problems))
        self.read_button.setEnabled(not busy)
        typed = not self.server_combo.currentData()
        for widget in (self.host_edit, self.port_spin, self.database_edit, self.user_edit, self.password_edit):
            widget.setEnabled(typed)

    def _say(self, text: str, failed: bool = False) -> None:
        self.status_label.setText(text)
        self.status_label.setStyleSheet(f"color: {current_theme().error};" if failed and text else "")


def _name_from(text: str) -> str:
    """A target name from a table or file name: ``/data/Trades.parquet`` or ``public.trades`` -> ``trades``."""
    import re
    last = text.rstrip("/").rsplit("/", 1)[-1]
    for extension in (".parquet", ".pq", ".duckdb", ".db"):
        if last.endswith(extension):
            last = last[:-len(extension)]
            break
    else:
        last = last.rsplit(".", 1)[-1]            # schema.table -> table
    name = re.sub(r"[^a-z0-9_]+", "_", last.lower()).strip("_")
    return (name if name[:1].isalpha() else f"t_{name}")[:40].rstrip("_") or "table"
