"""TargetsPanel: where data can live, a view of the engine's ``TargetRegistry``. The embedded
targets (ready, or what to install), DolphinDB clusters with a state light per node, other
servers (ClickHouse, QuestDB, PostgreSQL, Druid, MongoDB), and the buttons to add, edit, remove, test and refresh them.

Its parts: the tree and its lights (``widgets.targets.tree``, ``widgets.targets.lights``), the
dialogs and password prompt (``widgets.targets.dialogs``), and Test / Refresh nodes, which run off
the GUI thread (``widgets.targets.checks``).

The registry holds the profiles and resolves passwords (this session's, then the store's); the
panel adds only the prompt when neither has one, and the lights of the last checks. Passwords never
go into any state. ``password_store``: an object with ``load(profile, user) -> str | None``,
``save(profile, user, password) -> bool``, ``forget(profile, user)`` and optionally
``available() -> bool`` (the app passes ``workloads.passwords.KeyringPasswords``).

API for the main window: ``targets_changed()``; ``compare_requested(key)``; ``targets()`` -> [(key, label, kind, config)];
``resolve_config(key)`` -> config with the password, or None when the user cancels;
``save_state()`` / ``restore_state(state)``.
"""
from __future__ import annotations

import logging
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QHBoxLayout, QHeaderView, QLabel, QPushButton, QTreeWidget, QVBoxLayout, QWidget

from widgets.targets.cluster_dialog import ClusterDialog
from widgets.targets.local_engines_button import LocalEnginesButton
from widgets.targets.checks import TargetsChecks
from widgets.targets.dialogs import TargetsDialogs
from widgets.targets.lights import LIGHTS, Light, _Profile, light_icon
from widgets.targets.tree import STATE, TARGET, TargetsTree
from workloads.targets.profiles import Profile
from workloads.targets.registry import TargetRegistry

log = logging.getLogger(__name__)
STATE_VERSION = 1


class TargetsPanel(TargetsTree, TargetsChecks, TargetsDialogs, QWidget):
    targets_changed = Signal()
    check_finished = Signal(str)         # a profile's key, when its Test or Refresh has finished
    compare_requested = Signal(str)      # a target's key: its context menu's "Compare by running with…"
    _job_done = Signal(object)           # (tag, result) from a worker thread, queued to this thread

    def __init__(self, data_dir: Path, password_store=None, parent=None, registry: TargetRegistry | None = None):
        super().__init__(parent)
        self.setObjectName("targets_panel")
        self.registry = registry or TargetRegistry(Path(data_dir), password_store)
        self.data_dir = self.registry.data_dir
        self.password_store = self.registry.password_store
        self._profiles: dict[str, _Profile] = {}          # the registry's profiles with their lights
        self._clients_seen = [(e.key, e.missing) for e in self.registry.entries()]
        self._pool = ThreadPoolExecutor(max_workers=4, thread_name_prefix="tickbench-targets")
        self._icons = {state: light_icon(colour) for state, colour in LIGHTS.items()}
        self.active_dialog: ClusterDialog | None = None
        self._job_done.connect(self._on_job_done)
        pool = self._pool                                  # not self: the wrapper may be gone by then
        self.destroyed.connect(lambda *_: pool.shutdown(wait=False, cancel_futures=True))

        self.tree = QTreeWidget(objectName="targets_tree")
        self.tree.setColumnCount(3)
        self.tree.setHeaderLabels(["Target", "State", "Where"])
        self.tree.setRootIsDecorated(True)
        self.tree.setUniformRowHeights(True)
        header = self.tree.header()
        header.setStretchLastSection(True)
        header.setSectionResizeMode(TARGET, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(STATE, QHeaderView.ResizeMode.ResizeToContents)
        self.tree.itemSelectionChanged.connect(self._selection_changed)
        self.tree.itemDoubleClicked.connect(lambda item, _col: self._double_clicked(item))
        self.tree.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        self.tree.customContextMenuRequested.connect(self._context_menu)
        self.detail_label = QLabel(objectName="detail_label")
        self.detail_label.setWordWrap(True)
        self.detail_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.detail_label.setMinimumHeight(self.fontMetrics().lineSpacing() * 3)
        self.detail_label.setAlignment(Qt.AlignmentFlag.AlignTop | Qt.AlignmentFlag.AlignLeft)

        self.add_button = QPushButton("Add cluster…", objectName="add_button")
        self.add_server_button = QPushButton("Add server…", objectName="add_server_button")
        self.add_table_button = QPushButton("Existing table…", objectName="add_table_button")
        self.add_table_button.setToolTip("Benchmark a table where it already lives, read-only: a Parquet file or "
                                         "folder, a DuckDB file, a PostgreSQL, QuestDB, ClickHouse or DolphinDB table")
        self.edit_button = QPushButton("Edit…", objectName="edit_button")
        self.remove_button = QPushButton("Remove", objectName="remove_button")
        self.test_button = QPushButton("Test", objectName="test_button")
        self.refresh_button = QPushButton("Refresh nodes", objectName="refresh_button")
        self.start_button = QPushButton("Start", objectName="start_stopped_button")
        self.start_button.setToolTip("Start this local engine again (its data is kept)")
        self.start_button.clicked.connect(self.start_selected_engine)
        self.add_button.setToolTip("Add a DolphinDB cluster or single node")
        self.test_button.setToolTip("Log in to every node of the cluster and show each verdict")
        self.refresh_button.setToolTip("Ask the cluster which nodes it has (getClusterPerf) and list them")
        self.add_server_button.setToolTip("Add a ClickHouse, QuestDB, PostgreSQL, Druid or MongoDB server")
        self.add_button.clicked.connect(self.add_dialog)
        self.add_server_button.clicked.connect(self.add_server_dialog)
        self.add_table_button.clicked.connect(self.add_table_dialog)
        self.engines_button = LocalEnginesButton(self.registry.data_dir, self)
        self.engines_button.progress.connect(self._say)
        self.engines_button.start_failed.connect(lambda _kind, message: self._say(message, failed=True))
        self.engines_button.engine_started.connect(self._local_engine_started)
        self.edit_button.clicked.connect(lambda: self.edit_dialog())
        self.remove_button.clicked.connect(lambda: self.remove_with_confirmation())
        self.test_button.clicked.connect(lambda: self.test_profile())
        self.refresh_button.clicked.connect(lambda: self.refresh_nodes())

        # two rows (adding; acting on the selection), so the dock stays narrow beside the charts
        layout = QVBoxLayout(self)
        layout.addWidget(self.tree, 1)
        layout.addWidget(self.detail_label)
        for row in ((self.add_button, self.add_server_button, self.add_table_button, self.engines_button),
                    (self.edit_button, self.remove_button, self.test_button, self.refresh_button,
                     self.start_button)):
            buttons = QHBoxLayout()
            for button in row:
                buttons.addWidget(button)
            buttons.addStretch(1)
            layout.addLayout(buttons)
        self._sync()

    # --- the main window's API ----------------------------------------------------------------------
    def targets(self) -> list[tuple[str, str, str, dict[str, Any]]]:
        """(key, label, kind, config) of every usable target (its client installed); no passwords."""
        return [(e.key, e.label, e.kind, e.config) for e in self.registry.entries() if e.missing is None]

    def resolve_config(self, key: str) -> dict[str, Any] | None:
        """The target's config ready to run: a server's with its password (asked for if need be)."""
        return self.registry.resolve(key, ask=self._ask_password)

    def save_state(self) -> dict[str, Any]:
        return self.registry.state()

    def restore_state(self, state: dict[str, Any]) -> None:
        self.registry.restore(state)
        self._profiles = {}
        self._sync()
        self.targets_changed.emit()

    def recheck_clients(self) -> bool:
        """After a client was installed (or removed) outside the app, e.g. ``pip install
        'tickbench[questdb]'`` in a terminal: the targets as they are now, without a restart
        (the window asks when it is activated). True when something changed."""
        import importlib
        importlib.invalidate_caches()          # the import system's cached directory listings
        now = [(e.key, e.missing) for e in self.registry.entries()]
        engines_changed = self._mark_local_engines()        # started or stopped elsewhere meanwhile
        if now == self._clients_seen:
            if engines_changed:
                self._rebuild(select=self.selected_key())
            return False
        self._clients_seen = now
        self._rebuild(select=self.selected_key())
        self.targets_changed.emit()
        return True

    def _sync(self, select: tuple[str, str] | str | None = None) -> None:
        """Mirror the registry's profiles, keeping the lights of those unchanged."""
        views = {}
        for profile in self.registry.profiles():
            view = self._profiles.get(profile.key)
            if view is None or view.profile != profile.profile or view.db_prefix != profile.db_prefix:
                view = _Profile(profile.profile, profile.db_prefix, kind=profile.kind,
                                note=self.registry.notes.get(profile.key, ""),
                                generation=view.generation + 1 if view else 0)
            views[profile.key] = view
        self._profiles = views
        self._mark_local_engines()
        self._rebuild(select=select)

    def _mark_local_engines(self) -> bool:
        """A local engine's profile whose server is not running shows "stopped" (with Start beside
        it) before any Test; one running again loses that light. True when a light changed."""
        changed = False
        for key, view in self._profiles.items():
            if not self.registry.config(key).get("local_engine"):
                continue
            address = view.addresses[0]
            try:
                self.registry.resolve(key)      # a local engine: its record, no prompt, no network
            except ValueError as exc:
                if view.light(address).word != "stopped":
                    view.lights[address] = Light("failed", "stopped", str(exc))
                    changed = True
                continue
            if view.light(address).word == "stopped":
                view.lights[address] = Light()
                changed = True
        return changed

    def _stopped_engine_kind(self, key: str | None) -> str | None:
        """The kind of the selected local engine when it is stopped (Start can start it)."""
        if key is None or not self.registry.config(key).get("local_engine"):
            return None
        return self._profiles[key].kind if self._profiles[key].overall().word == "stopped" else None

    def start_selected_engine(self) -> bool:
        """Start the selected stopped local engine (as Start local engine would); False if none."""
        kind = self._stopped_engine_kind(self.selected_profile_key())
        return kind is not None and self.engines_button.start(kind)

    # --- profiles -----------------------------------------------------------------------------------
    def profile_keys(self) -> list[str]:
        return list(self._profiles)

    def add_profile(self, entry: dict[str, Any], password: str = "", remember: bool = False) -> str:
        """Add a server from plain data ({"profile": ..., "db_prefix": ...} for a DolphinDB cluster,
        {"kind": "clickhouse" | "questdb" | ..., "profile": ...} for another server); returns its key."""
        key = self.registry.add(Profile.from_dict(entry), password, remember)
        self._password_kept_note(password, remember)
        self._sync(select=key)
        self.targets_changed.emit()
        return key

    def replace_profile(self, key: str, entry: dict[str, Any], password: str = "", remember: bool = False) -> str:
        new_key = self.registry.replace(key, Profile.from_dict(entry), password, remember)
        old = self._profiles.pop(key, None)
        if old is not None:      # answers of checks on the old profile are ignored
            self._profiles[new_key] = _Profile(old.profile, old.db_prefix, kind=old.kind, generation=old.generation)
        self._password_kept_note(password, remember)
        self._sync(select=new_key)
        self.targets_changed.emit()
        return new_key

    def remove_profile(self, key: str) -> None:
        self.registry.remove(key)
        self._sync()
        self.targets_changed.emit()

    def _local_engine_started(self, engine) -> None:
        key = self.registry.add_local_engine(engine)
        self._sync(select=key)
        self.targets_changed.emit()
        self._say(f"{self.registry.profile(key).label} runs on 127.0.0.1:{engine.config['port']} "
                  f"(data in {engine.folder}); it stops when Tickbench closes.")
        self.test_profile(key)

    def stop_local_engines(self) -> list[str]:
        """Stop the local engines started from this panel (the app calls it when it closes)."""
        return self.engines_button.stop_started()

    def _say(self, text: str, failed: bool = False) -> None:
        self.detail_label.setText(text)
        self.detail_label.setProperty("role", "error" if failed else None)
        self.detail_label.style().unpolish(self.detail_label)
        self.detail_label.style().polish(self.detail_label)

    def _password_kept_note(self, password: str, remember: bool) -> None:
        if password and remember and not self.registry.last_save_ok:
            self.detail_label.setText("The keyring did not store the password: it will be asked for "
                                      "once per session.")

    def light(self, key: str, address: str | None = None) -> Light:
        """The light of a profile (overall) or of one of its nodes: for tests and tooltips."""
        entry = self._profiles[key]
        return entry.overall() if address is None else entry.light(address)
