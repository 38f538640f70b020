"""What the server-profile dialogs share: the password box with its keyring check, the database
hosts' agents with their token, the error line, and OK that accepts only what ``validate()`` finds
right (``ClusterDialog``, ``ServerDialog``)."""
from __future__ import annotations

from PySide6.QtWidgets import QCheckBox, QDialog, QLabel, QLineEdit


def password_fields(keyring_available: bool, password_stored: bool) -> tuple[QLineEdit, QCheckBox]:
    """The password box and the keyring check box of a server dialog."""
    edit = QLineEdit(objectName="password_edit")
    edit.setEchoMode(QLineEdit.EchoMode.Password)
    edit.setPlaceholderText("stored: leave empty to keep it" if password_stored else "optional: asked for when needed")
    remember = QCheckBox("Remember in the system keyring", objectName="remember_check")
    remember.setEnabled(keyring_available)
    remember.setChecked(keyring_available and password_stored)
    if not keyring_available:
        remember.setToolTip("No usable keyring on this computer: the password is asked for once per session "
                            "and never written to disk.")
    return edit, remember


def agent_fields(agents: list[str], token_stored: bool) -> tuple[QLineEdit, QLineEdit]:
    """The database hosts' agents (``HOST:PORT, ...``) and their token: a cold round asks each to
    drop its host's page cache after the engine's own clear (``tickbench agent`` on each host)."""
    agents_edit = QLineEdit(", ".join(agents), objectName="agents_edit")
    agents_edit.setPlaceholderText("none: cold clears the engine's caches only")
    agents_edit.setToolTip("HOST:PORT of `tickbench agent` on each database host, comma-separated. Without them a "
                           "cold round empties the engine's caches only and the servers' page caches keep the "
                           "data, which the reports' cold runs dropped.")
    token_edit = QLineEdit(objectName="agent_token_edit")
    token_edit.setEchoMode(QLineEdit.EchoMode.Password)
    token_edit.setPlaceholderText("stored: leave empty to keep it" if token_stored else "kept in the keyring")
    token_edit.setToolTip("The token each agent was started with; kept in the system keyring, never in the "
                          "profile's file. Without a keyring: set TICKBENCH_AGENT_TOKEN before a run.")
    return agents_edit, token_edit


def error_label() -> QLabel:
    label = QLabel(objectName="error_label")
    label.setProperty("role", "error")     # the theme's error style
    label.setWordWrap(True)
    label.hide()
    return label


class ProfileDialog(QDialog):
    """Subclasses build ``password_edit``, ``remember_check`` and ``error_label`` (the helpers
    above) and implement ``validate() -> str`` ("" when right) and ``entry()``."""

    password_edit: QLineEdit
    remember_check: QCheckBox
    agents_edit: QLineEdit
    agent_token_edit: QLineEdit
    error_label: QLabel

    def validate(self) -> str:
        raise NotImplementedError

    def password(self) -> str:
        return self.password_edit.text()

    def agents(self) -> list[str]:
        """The agents given, each checked (ValueError naming the wrong one)."""
        from workloads.targets.profiles import check_agent
        return [check_agent(a) for a in self.agents_edit.text().replace(";", ",").split(",") if a.strip()]

    def agent_token(self) -> str:
        return self.agent_token_edit.text().strip()

    def agents_problem(self) -> str:
        try:
            self.agents()
        except ValueError as exc:
            return f"Host agents: {exc}"
        return ""

    def remember(self) -> bool:
        return self.remember_check.isEnabled() and self.remember_check.isChecked()

    def show_error(self, message: str) -> None:
        self.error_label.setText(message)
        self.error_label.setVisible(bool(message))

    def accept(self) -> None:
        message = self.validate()
        self.show_error(message)
        if not message:
            super().accept()
