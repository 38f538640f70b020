"""The targets panel's dialogs (``widgets.targets.panel``): adding and editing a DolphinDB cluster
or another server, confirming a removal, and the password prompt when neither this session nor
the password store has one.
"""
from __future__ import annotations

from typing import Any, Callable

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QInputDialog, QLineEdit, QMessageBox

from widgets.targets.cluster_dialog import ClusterDialog
from widgets.targets.made_dialog import MadeDialog
from widgets.targets.server_dialog import ServerDialog
from workloads.targets.engines import DDB, SERVER_TYPES
from workloads.targets.profiles import Profile


class TargetsDialogs:
    """TargetsPanel's dialogs and password prompt (a mixin: the registry and the profiles are the panel's)."""

    def _keyring_available(self) -> bool:
        if self.password_store is None:
            return False
        available = getattr(self.password_store, "available", None)
        return bool(available()) if callable(available) else True

    def _open_dialog(self, entry: dict[str, Any] | None, on_accept: Callable[[ClusterDialog], None]) -> ClusterDialog:
        stored = bool(entry) and self.registry.stored_password(Profile.from_dict(entry)) is not None
        dialog = ClusterDialog(entry, [e.profile.name for e in self._profiles.values() if e.kind == DDB],
                               keyring_available=self._keyring_available(), password_stored=stored,
                               token_stored=self._token_stored(entry), parent=self)
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)

        def accepted() -> None:
            try:
                on_accept(dialog)
            except ValueError as exc:      # e.g. a name taken meanwhile: say so in the panel
                self.detail_label.setText(str(exc))
        dialog.accepted.connect(accepted)
        dialog.finished.connect(lambda _result: setattr(self, "active_dialog", None))
        self.active_dialog = dialog
        dialog.open()                      # window-modal, without a nested event loop
        return dialog

    def _token_stored(self, entry: dict[str, Any] | None) -> bool:
        return bool(entry) and self.registry.stored_agent_token(Profile.from_dict(entry)) is not None

    def _keep_agent_token(self, key: str, dialog) -> None:
        """A token typed for the profile's agents goes to the keyring (never to the profile's file)."""
        token = dialog.agent_token()
        if token and not self.registry.set_agents(key, dialog.agents(), token):
            self.detail_label.setText("No usable keyring here: the agents' token is read from "
                                      "TICKBENCH_AGENT_TOKEN at run time.")

    def add_dialog(self) -> ClusterDialog:
        return self._open_dialog(None, lambda d: self._keep_agent_token(
            self.add_profile(d.entry(), d.password(), d.remember()), d))

    def add_server_dialog(self) -> ServerDialog:
        return self._open_server_dialog(None, lambda d: self._keep_agent_token(
            self.add_profile(d.entry(), d.password(), d.remember()), d))

    def add_table_dialog(self):
        """"Existing table…": a table read in place; once saved it is target ``table:<name>``."""
        from widgets.targets.table_dialog import TableDialog
        servers = [(e.key, e.label, e.kind) for e in self.registry.profile_entries()]
        dialog = TableDialog(servers, resolve=self.resolve_config, keep_password=self.registry.keep_table_password,
                             keyring_available=self._keyring_available(), parent=self)
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.saved.connect(lambda key: (self._sync(select=key), self.targets_changed.emit()))
        dialog.finished.connect(lambda _result: setattr(self, "active_dialog", None))
        self.active_dialog = dialog
        dialog.open()
        return dialog

    def _open_server_dialog(self, entry: dict[str, Any] | None, on_accept) -> ServerDialog:
        stored = bool(entry) and self.registry.stored_password(Profile.from_dict(entry)) is not None
        dialog = ServerDialog(entry, [(e.kind, e.profile.name) for e in self._profiles.values() if e.kind != DDB],
                              keyring_available=self._keyring_available(), password_stored=stored,
                              token_stored=self._token_stored(entry), parent=self)
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)

        def accepted() -> None:
            try:
                on_accept(dialog)
            except ValueError as exc:
                self.detail_label.setText(str(exc))
        dialog.accepted.connect(accepted)
        dialog.finished.connect(lambda _result: setattr(self, "active_dialog", None))
        self.active_dialog = dialog
        dialog.open()
        return dialog

    def edit_dialog(self, key: str | None = None):
        key = key or self.selected_profile_key()
        if key is None:
            return None
        data = self.registry.profile(key).to_dict()
        if self._profiles[key].kind != DDB:
            return self._open_server_dialog(data, lambda d: self._keep_agent_token(
                self.replace_profile(key, d.entry(), d.password(), d.remember()), d))
        return self._open_dialog(data, lambda d: self._keep_agent_token(
            self.replace_profile(key, d.entry(), d.password(), d.remember()), d))

    def remove_with_confirmation(self, key: str | None = None) -> bool:
        key = key or self.selected_profile_key()
        if key is None:
            return False
        name = self._profiles[key].profile.name
        what = "cluster" if self._profiles[key].kind == DDB else f"{SERVER_TYPES[self._profiles[key].kind].label} server"
        answer = QMessageBox.question(self, f"Remove {what}",
                                      f"Remove the {what} “{name}” from Tickbench?\n"
                                      "Its data on the cluster is not touched; a stored password is forgotten.")
        if answer != QMessageBox.StandardButton.Yes:
            return False
        self.remove_profile(key)
        return True

    def made_dialog(self, key: str | None = None) -> MadeDialog | None:
        """What Tickbench made on a DolphinDB profile, with sizes, dropped once confirmed (the
        window's ``tickbench targets clean``)."""
        key = key or self.selected_profile_key()
        if key is None or key not in self._profiles or self._profiles[key].kind != DDB:
            return None
        config = self.registry.resolve(key, ask=self._ask_password)
        if config is None:
            return None
        from workloads.targets import make_target

        def on_target(action):
            def run(*args):
                target = make_target(DDB, config)
                try:
                    return action(target, *args)
                finally:
                    target.close()
            return run
        dialog = MadeDialog(key, on_target(lambda t: t.made()), on_target(lambda t, paths: t.drop_made(paths)), self)
        dialog.open()
        return dialog

    # --- passwords: the registry's, and a prompt when it has none -----------------------------------
    def _ask_password(self, profile: Profile, refused: bool) -> str | None:
        what = profile.kind_label
        note = " (the stored one was refused)" if refused else ""
        text, ok = QInputDialog.getText(self, f"{what} password",
                                        f"Password of {profile.user} on “{profile.name}”{note}:",
                                        QLineEdit.EchoMode.Password)
        return text if ok else None
