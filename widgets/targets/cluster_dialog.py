"""ClusterDialog: add or edit a DolphinDB cluster profile (nodes, login, protocol, node policy over
the data nodes, or users routed to the compute nodes).

It only edits plain data: ``entry()`` gives ``{"profile": ClusterProfile dict (no password),
"db_prefix": ...}``, ``password()`` what was typed ("" = keep the stored one / ask when needed),
``remember()`` whether to keep it in the system keyring (offered only when one is usable).
OK validates everything and names the field or node row that is wrong; nothing is accepted
until it is right.
"""
from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (QAbstractItemView, QCheckBox, QComboBox, QDialogButtonBox,
                               QFormLayout, QHBoxLayout, QHeaderView, QLineEdit, QPushButton,
                               QTableWidget, QTableWidgetItem, QVBoxLayout, QWidget)

from widgets.targets.profile_dialog import ProfileDialog, agent_fields, error_label, password_fields
from workloads.targets.dolphindb.cluster import NODE_POLICIES, PROTOCOLS, ROLES, ClusterProfile
from workloads.targets.profiles import DEFAULT_DB_PREFIX
from workloads.targets.dolphindb import quote as ddb_quote

DEFAULT_PORT = 8848          # DolphinDB's default port
NAME_MAX = 64
POLICY_LABELS = {
    "one": "one: every worker on the first data node",
    "round_robin": "round robin: workers take the data nodes in turn",
    "random": "random: a seeded random data node per worker",
}
HOST, PORT, ROLE = range(3)


class ClusterDialog(ProfileDialog):
    def __init__(self, entry: dict[str, Any] | None = None, taken_names: Iterable[str] = (),
                 keyring_available: bool = False, password_stored: bool = False,
                 token_stored: bool = False, parent=None):
        super().__init__(parent)
        self.setObjectName("cluster_dialog")
        self.setWindowTitle("Edit DolphinDB cluster" if entry else "Add DolphinDB cluster")
        self._taken = {n for n in taken_names if not entry or n != entry["profile"].get("name")}
        profile = (entry or {}).get("profile") or {}

        self.name_edit = QLineEdit(str(profile.get("name", "")), objectName="name_edit")
        self.name_edit.setPlaceholderText("e.g. lab cluster")
        self.nodes_table = QTableWidget(0, 3, objectName="nodes_table")
        self.nodes_table.setHorizontalHeaderLabels(["Host", "Port", "Role"])
        header = self.nodes_table.horizontalHeader()
        header.setSectionResizeMode(HOST, QHeaderView.ResizeMode.Stretch)
        header.setSectionResizeMode(PORT, QHeaderView.ResizeMode.Fixed)
        self.nodes_table.setColumnWidth(PORT, self.fontMetrics().horizontalAdvance("6553500") + 12)
        header.setSectionResizeMode(ROLE, QHeaderView.ResizeMode.ResizeToContents)
        self.nodes_table.verticalHeader().setVisible(False)
        self.nodes_table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.nodes_table.setMinimumHeight(130)
        for node in profile.get("nodes") or [{"host": "localhost", "port": DEFAULT_PORT, "role": "single"}]:
            self.add_node_row(str(node.get("host", "")), str(node.get("port", "")), str(node.get("role", "single")))
        self.add_node_button = QPushButton("Add node", objectName="add_node_button")
        self.remove_node_button = QPushButton("Remove node", objectName="remove_node_button")
        self.add_node_button.clicked.connect(lambda: self.add_node_row("", str(DEFAULT_PORT), "data"))
        self.remove_node_button.clicked.connect(self._remove_selected_node)

        self.user_edit = QLineEdit(str(profile.get("user", "admin")), objectName="user_edit")
        self.password_edit, self.remember_check = password_fields(keyring_available, password_stored)
        self.agents_edit, self.agent_token_edit = agent_fields(list((entry or {}).get("agents") or ()), token_stored)
        self.protocol_combo = QComboBox(objectName="protocol_combo")
        self.protocol_combo.addItems(PROTOCOLS)
        self.protocol_combo.setCurrentText(str(profile.get("protocol", "DDB")).upper())
        self.compress_check = QCheckBox("Compress transfers", objectName="compress_check")
        self.compress_check.setChecked(bool(profile.get("compress", False)))
        self.policy_combo = QComboBox(objectName="policy_combo")
        for policy in NODE_POLICIES:
            self.policy_combo.addItem(POLICY_LABELS.get(policy, policy), policy)
        self.policy_combo.setCurrentIndex(max(0, self.policy_combo.findData(profile.get("node_policy", "one"))))
        self.compute_check = QCheckBox("Route users to the compute nodes instead", objectName="compute_check")
        self.compute_check.setChecked(bool(profile.get("use_compute_nodes", False)))
        self.prefix_edit = QLineEdit(str((entry or {}).get("db_prefix", DEFAULT_DB_PREFIX)), objectName="prefix_edit")

        self.error_label = error_label()
        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel)
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)

        node_buttons = QHBoxLayout()
        node_buttons.addWidget(self.add_node_button)
        node_buttons.addWidget(self.remove_node_button)
        node_buttons.addStretch(1)
        nodes_box = QWidget()
        nodes_layout = QVBoxLayout(nodes_box)
        nodes_layout.setContentsMargins(0, 0, 0, 0)
        nodes_layout.addWidget(self.nodes_table)
        nodes_layout.addLayout(node_buttons)
        form = QFormLayout()
        form.addRow("Name", self.name_edit)
        form.addRow("Nodes", nodes_box)
        form.addRow("User", self.user_edit)
        form.addRow("Password", self.password_edit)
        form.addRow("", self.remember_check)
        form.addRow("Protocol", self.protocol_combo)
        form.addRow("", self.compress_check)
        form.addRow("Node policy", self.policy_combo)
        form.addRow("", self.compute_check)
        form.addRow("Database prefix", self.prefix_edit)
        form.addRow("Host agents", self.agents_edit)
        form.addRow("Agent token", self.agent_token_edit)
        layout = QVBoxLayout(self)
        layout.addLayout(form)
        layout.addWidget(self.error_label)
        layout.addWidget(self.buttons)
        self.resize(520, self.sizeHint().height())

    # --- nodes -----------------------------------------------------------------------------------
    def add_node_row(self, host: str, port: str, role: str) -> int:
        row = self.nodes_table.rowCount()
        self.nodes_table.insertRow(row)
        self.nodes_table.setItem(row, HOST, QTableWidgetItem(host))
        port_item = QTableWidgetItem(port)
        port_item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        self.nodes_table.setItem(row, PORT, port_item)
        combo = QComboBox()
        combo.addItems(ROLES)
        combo.setCurrentText(role if role in ROLES else "data")
        self.nodes_table.setCellWidget(row, ROLE, combo)
        return row

    def _remove_selected_node(self) -> None:
        rows = sorted({i.row() for i in self.nodes_table.selectedIndexes()}, reverse=True)
        for row in rows or [self.nodes_table.rowCount() - 1]:
            if row >= 0:
                self.nodes_table.removeRow(row)

    def _cell(self, row: int, column: int) -> str:
        item = self.nodes_table.item(row, column)
        return item.text().strip() if item is not None else ""

    def _nodes(self) -> tuple[list[dict[str, Any]], str]:
        nodes, seen = [], set()
        for row in range(self.nodes_table.rowCount()):
            host, port_text = self._cell(row, HOST), self._cell(row, PORT)
            where = f"Node {row + 1}"
            if not host:
                return [], f"{where}: the host is empty"
            if any(ch.isspace() for ch in host):
                return [], f"{where}: host {host!r} must not contain spaces"
            try:
                port = int(port_text)
            except ValueError:
                return [], f"{where}: port {port_text!r} is not a number"
            if not 1 <= port <= 65535:
                return [], f"{where}: port {port} is not between 1 and 65535"
            if (host, port) in seen:
                return [], f"{where}: {host}:{port} is listed twice"
            seen.add((host, port))
            nodes.append({"host": host, "port": port, "role": self.nodes_table.cellWidget(row, ROLE).currentText()})
        if not nodes:
            return [], "Nodes: add at least one node (host and port)"
        return nodes, ""

    # --- result ----------------------------------------------------------------------------------
    def validate(self) -> str:
        """"" when everything is right, else one message naming the field."""
        name = self.name_edit.text().strip()
        if not name:
            return "Name: give the cluster a name"
        if len(name) > NAME_MAX:
            return f"Name: at most {NAME_MAX} characters"
        if name in self._taken:
            return f"Name: a cluster named {name!r} exists already"
        nodes, problem = self._nodes()
        if problem:
            return problem
        if not self.user_edit.text().strip():
            return "User: give a user name (DolphinDB's default is admin)"
        try:
            ddb_quote.db_path(self.prefix_edit.text().strip())
        except ValueError as exc:
            return f"Database prefix: {exc}"
        try:
            ClusterProfile.from_dict(self._profile_dict(name, nodes))
        except ValueError as exc:
            return str(exc)
        return self.agents_problem()

    def _profile_dict(self, name: str, nodes: list[dict[str, Any]]) -> dict[str, Any]:
        return {"name": name, "nodes": nodes, "user": self.user_edit.text().strip(),
                "protocol": self.protocol_combo.currentText(), "compress": self.compress_check.isChecked(),
                "node_policy": self.policy_combo.currentData(), "use_compute_nodes": self.compute_check.isChecked()}

    def entry(self) -> dict[str, Any]:
        """{"profile": profile dict without password, "db_prefix": ...}; call after validate()."""
        nodes, problem = self._nodes()
        if problem:
            raise ValueError(problem)
        profile = ClusterProfile.from_dict(self._profile_dict(self.name_edit.text().strip(), nodes))
        return {"profile": profile.to_dict(), "db_prefix": self.prefix_edit.text().strip(), "agents": self.agents()}
