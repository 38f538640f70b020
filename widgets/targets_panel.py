"""TargetsPanel: where data can live, a view of the engine's ``TargetRegistry``. The embedded
targets (ready, or what to install), DolphinDB clusters with a state light per node, other
servers (ClickHouse, QuestDB, PostgreSQL, Druid, MongoDB), and the buttons to add, edit, remove, test and refresh them.

Connection tests and node discovery run in a thread pool, never on the GUI thread; each result
comes back through a Qt signal emitted from the worker thread, which Qt queues to the panel's
(GUI) thread. A test gives a verdict within a few seconds (``workloads.cluster.test_connection``).

The registry holds the profiles and resolves passwords (this session's, then the store's); the
panel adds only the prompt when neither has one, and the lights of the last checks. Passwords never
go into any state. ``password_store``: an object with ``load(profile, user) -> str | None``,
``save(profile, user, password) -> bool``, ``forget(profile, user)`` and optionally
``available() -> bool`` (the app passes ``workloads.passwords.KeyringPasswords``).

API for the main window: ``targets_changed()``; ``targets()`` -> [(key, label, kind, config)];
``resolve_config(key)`` -> config with the password, or None when the user cancels;
``save_state()`` / ``restore_state(state)``.
"""
from __future__ import annotations

import logging
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QColor, QFont, QIcon, QPainter, QPixmap
from PySide6.QtWidgets import (QHBoxLayout, QHeaderView, QInputDialog, QLabel, QLineEdit, QMessageBox,
                               QPushButton, QTreeWidget, QTreeWidgetItem, QVBoxLayout, QWidget)

from widgets.cluster_dialog import ClusterDialog
from widgets.theme import OKABE_ITO
from widgets.local_engines_button import LocalEnginesButton
from widgets.server_dialog import ServerDialog
from workloads.cluster import (ClusterProfile, Discovery, Verdict, discover_nodes, profile_from_discovery,
                               test_connection)
from workloads.server_checks import check_server
from workloads.target_registry import DDB, SERVER_TYPES, Profile, ServerProfile, TargetRegistry, where

log = logging.getLogger(__name__)
STATE_VERSION = 1
TEST_TIMEOUT_S = 2.0         # per step of a test: a verdict within ~2 x this
DISCOVER_TIMEOUT_S = 3.0
LIGHTS = {"ready": OKABE_ITO["bluish_green"], "ok": OKABE_ITO["bluish_green"], "failed": OKABE_ITO["vermillion"],
          "testing": OKABE_ITO["sky_blue"], "unknown": "#8C8C8C"}
VERDICT_WORDS = {"ok": "ok", "refused": "refused", "timed_out": "timed out", "wrong_password": "wrong password",
                 "not_initialised": "not initialised", "error": "error"}
KEY_ROLE = Qt.ItemDataRole.UserRole
NODE_ROLE = Qt.ItemDataRole.UserRole + 1
TARGET, STATE, WHERE = range(3)


@dataclass
class Light:
    state: str = "unknown"       # unknown | testing | ok | failed | ready
    word: str = "not tested"     # short text beside the light
    detail: str = "Not tested yet: press Test."


@dataclass
class _Profile:
    """What the panel shows of a registry profile: the lights of its last checks."""
    profile: ClusterProfile | ServerProfile      # the registry's, never holding a password
    db_prefix: str
    lights: dict[str, Light] = field(default_factory=dict)   # node address -> light
    note: str = ""               # last discovery's remark
    generation: int = 0          # results of older jobs are ignored
    pending: int = 0
    kind: str = DDB

    @property
    def key(self) -> str:
        return Profile(self.kind, self.profile, self.db_prefix).key

    @property
    def addresses(self) -> list[str]:
        if self.kind == DDB:
            return [n.address for n in self.profile.nodes]
        return [f"{self.profile.host}:{self.profile.port}"]

    def light(self, address: str) -> Light:
        return self.lights.setdefault(address, Light())

    def overall(self) -> Light:
        lights = [self.light(address) for address in self.addresses]
        if any(l.state == "testing" for l in lights):
            return Light("testing", "testing…", "Testing the nodes…")
        failed = [l for l in lights if l.state == "failed"]
        if failed:
            words = {l.word for l in failed}
            word = words.pop() if len(words) == 1 and len(failed) == len(lights) else \
                f"{len(failed)} of {len(lights)} failed"
            return Light("failed", word, failed[0].detail)
        if lights and all(l.state == "ok" for l in lights):
            if self.kind != DDB:
                return Light("ok", "ok", lights[0].detail)
            return Light("ok", "ok", f"All {len(lights)} node{'s' if len(lights) > 1 else ''} answered.")
        return Light()


def light_icon(colour: str, size: int = 12) -> QIcon:
    pixmap = QPixmap(size, size)
    pixmap.fill(Qt.GlobalColor.transparent)
    painter = QPainter(pixmap)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    painter.setPen(QColor(colour).darker(130))
    painter.setBrush(QColor(colour))
    painter.drawEllipse(1, 1, size - 2, size - 2)
    painter.end()
    icon = QIcon(pixmap)
    icon.addPixmap(pixmap, QIcon.Mode.Selected)     # keep the colour on a selected row (no tint)
    return icon


class TargetsPanel(QWidget):
    targets_changed = Signal()
    check_finished = Signal(str)         # a profile's key, when its Test or Refresh has finished
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
        self.detail_label = QLabel(objectName="detail_label")
        self.detail_label.setWordWrap(True)
        self.detail_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.detail_label.setMinimumHeight(self.fontMetrics().lineSpacing() * 3)
        self.detail_label.setAlignment(Qt.AlignmentFlag.AlignTop | Qt.AlignmentFlag.AlignLeft)

        self.add_button = QPushButton("Add cluster…", objectName="add_button")
        self.add_server_button = QPushButton("Add server…", objectName="add_server_button")
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
        for row in ((self.add_button, self.add_server_button, self.engines_button),
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

    # --- dialogs ------------------------------------------------------------------------------------
    def _keyring_available(self) -> bool:
        if self.password_store is None:
            return False
        available = getattr(self.password_store, "available", None)
        return bool(available()) if callable(available) else True

    def _open_dialog(self, entry: dict[str, Any] | None, on_accept: Callable[[ClusterDialog], None]) -> ClusterDialog:
        stored = bool(entry) and self.registry.stored_password(Profile.from_dict(entry)) is not None
        dialog = ClusterDialog(entry, [e.profile.name for e in self._profiles.values() if e.kind == DDB],
                               keyring_available=self._keyring_available(), password_stored=stored, parent=self)
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

    def add_dialog(self) -> ClusterDialog:
        return self._open_dialog(None, lambda d: self.add_profile(d.entry(), d.password(), d.remember()))

    def add_server_dialog(self) -> ServerDialog:
        return self._open_server_dialog(None, lambda d: self.add_profile(d.entry(), d.password(), d.remember()))

    def _open_server_dialog(self, entry: dict[str, Any] | None, on_accept) -> ServerDialog:
        stored = bool(entry) and self.registry.stored_password(Profile.from_dict(entry)) is not None
        dialog = ServerDialog(entry, [(e.kind, e.profile.name) for e in self._profiles.values() if e.kind != DDB],
                              keyring_available=self._keyring_available(), password_stored=stored, parent=self)
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
            return self._open_server_dialog(data, lambda d: self.replace_profile(key, d.entry(), d.password(),
                                                                                 d.remember()))
        return self._open_dialog(data, lambda d: self.replace_profile(key, d.entry(), d.password(), d.remember()))

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

    # --- passwords: the registry's, and a prompt when it has none -----------------------------------
    def _ask_password(self, profile: Profile, refused: bool) -> str | None:
        what = profile.kind_label
        note = " (the stored one was refused)" if refused else ""
        text, ok = QInputDialog.getText(self, f"{what} password",
                                        f"Password of {profile.user} on “{profile.name}”{note}:",
                                        QLineEdit.EchoMode.Password)
        return text if ok else None

    # --- tests and discovery, off the GUI thread ------------------------------------------------------
    def _submit(self, tag: tuple, job: Callable[[], Any]) -> None:
        def run() -> None:
            try:
                result = job()
            except Exception as exc:  # the verdict of an unexpected failure, not a lost thread
                result = Verdict(False, "error", f"{type(exc).__name__}: {exc}")
            try:
                self._job_done.emit((tag, result))
            except RuntimeError:      # the panel was deleted meanwhile
                pass
        self._pool.submit(run)

    def _start_check(self, key: str | None):
        """(key, entry, profile with its password) for a Test or Refresh; profile None: nothing to do."""
        key = key or self.selected_profile_key()
        if key is None:
            return None, None, None
        entry = self._profiles[key]
        if self.registry.config(key).get("local_engine"):      # its password is in its record
            try:
                config = self.registry.resolve(key)
            except ValueError as exc:                           # stopped: say so and how to start it
                entry.lights[entry.addresses[0]] = Light("failed", "stopped", str(exc))
                self._say(str(exc), failed=True)
                self._rebuild(select=self.selected_key())
                return key, entry, None
            entry.generation += 1
            return key, entry, config
        password = self.registry.password(key, ask=self._ask_password)
        if password is None:
            return key, entry, None
        entry.generation += 1   # answers of an older check are ignored
        if entry.kind != DDB:
            return key, entry, {**self.registry.config(key), "password": password}
        return key, entry, entry.profile.with_password(password)

    def test_profile(self, key: str | None = None) -> bool:
        """Test every node of the profile; False if there is none or the password was not given."""
        key, entry, profile = self._start_check(key)
        if profile is None:
            return False
        if entry.kind != DDB:              # a server: one check of its HTTP interface
            address = entry.addresses[0]
            entry.pending = 1
            entry.lights[address] = Light("testing", "testing…", f"Testing {address}…")
            self._submit(("test", key, entry.generation, address),
                         lambda: check_server(entry.kind, profile, timeout=TEST_TIMEOUT_S))
            self._rebuild(select=self.selected_key())
            return True
        entry.pending = len(profile.nodes)
        for node in profile.nodes:
            entry.lights[node.address] = Light("testing", "testing…", f"Testing {node.address}…")
            self._submit(("test", key, entry.generation, node.address),
                         lambda node=node: test_connection(profile, node, timeout=TEST_TIMEOUT_S))
        self._rebuild(select=self.selected_key())
        return True

    def refresh_nodes(self, key: str | None = None) -> bool:
        """Ask the cluster for its nodes (getClusterPerf) and list them instead of the typed ones."""
        if (key or self.selected_profile_key()) in self._profiles and \
                self._profiles[key or self.selected_profile_key()].kind != DDB:
            return self.test_profile(key)  # a server has no nodes to discover
        key, entry, profile = self._start_check(key)
        if profile is None:
            return False
        entry.pending = 1
        entry.lights[profile.entry.address] = Light("testing", "asking…", f"Asking {profile.entry.address} "
                                                    "for the cluster's nodes…")

        def discover():
            verdict = test_connection(profile, profile.entry, timeout=TEST_TIMEOUT_S)
            if not verdict.ok:
                return verdict
            return discover_nodes(profile, timeout=DISCOVER_TIMEOUT_S)
        self._submit(("discover", key, entry.generation, profile.entry.address), discover)
        self._rebuild(select=self.selected_key())
        return True

    def busy(self) -> bool:
        return any(e.pending for e in self._profiles.values())

    def _on_job_done(self, payload) -> None:
        (kind, key, generation, address), result = payload
        entry = self._profiles.get(key)
        if entry is None or generation != entry.generation:
            return                                   # removed or edited since: a stale answer
        entry.pending = max(0, entry.pending - 1)
        if isinstance(result, Verdict):
            entry.lights[address] = self._verdict_light(result)
            if not result.ok and result.kind == "wrong_password":          # ask again next time
                self.registry.distrust(key)
        elif kind == "discover":
            self._apply_discovery(entry, address, result)
        self._rebuild(select=self.selected_key())
        if not entry.pending:
            self.check_finished.emit(key)

    @staticmethod
    def _verdict_light(verdict: Verdict) -> Light:
        if verdict.ok:
            return Light("ok", "ok", verdict.message)
        return Light("failed", VERDICT_WORDS.get(verdict.kind, verdict.kind), verdict.message)

    def _apply_discovery(self, entry: _Profile, asked: str, discovery: Discovery) -> None:
        old = entry.profile
        entry.profile = profile_from_discovery(old, discovery).with_password("")
        infos = discovery.nodes
        if not discovery.from_cluster:    # the typed nodes stay: a single node's answer says nothing of the rest
            info = infos[0] if infos else None
            entry.lights[asked] = Light("ok", "running", f"{asked} ({info.name if info else 'node'}) is running "
                                        f"but reported no cluster: {discovery.note}.")
            entry.note = f"{asked} is not part of a cluster; the profile's nodes are kept as typed."
            return
        reported = {f"{n.host}:{n.port}": n for n in infos}
        entry.lights = {}
        for node in entry.profile.nodes:
            info = reported.get(node.address)
            load = f"; CPU {info.cpu_percent:.0f}%, {info.connections} connections" if info else ""
            entry.lights[node.address] = Light("ok", "running", f"{node.address} ({info.name if info else node.role}) "
                                               f"is running, as {asked} reports{load}.")
        down = [f"{n.host}:{n.port}" for n in infos if not n.state]
        entry.note = (f"{len(entry.profile.nodes)} node{'s' if len(entry.profile.nodes) != 1 else ''} found via {asked}"
                      + (f"; left out, not running: {', '.join(down)}" if down else "") + ".")
        if entry.profile.to_dict() != old.with_password("").to_dict():
            self.registry.update_profile(Profile(DDB, entry.profile, entry.db_prefix))
            self.targets_changed.emit()

    # --- the tree -------------------------------------------------------------------------------------
    def selected_key(self) -> tuple[str, str] | None:
        """(target key, node address or "") of the selected row, or None."""
        items = self.tree.selectedItems()
        if not items or items[0].data(0, KEY_ROLE) is None:
            return None
        return items[0].data(0, KEY_ROLE), items[0].data(0, NODE_ROLE) or ""

    def selected_profile_key(self) -> str | None:
        selected = self.selected_key()
        return selected[0] if selected and selected[0] in self._profiles else None

    def select(self, key: str, address: str = "") -> None:
        for item in self._items():
            if item.data(0, KEY_ROLE) == key and (item.data(0, NODE_ROLE) or "") == address:
                self.tree.setCurrentItem(item)
                return

    def _items(self):
        stack = [self.tree.topLevelItem(i) for i in range(self.tree.topLevelItemCount())]
        while stack:
            item = stack.pop(0)
            yield item
            stack.extend(item.child(i) for i in range(item.childCount()))

    def item_for(self, key: str, address: str = "") -> QTreeWidgetItem | None:
        return next((i for i in self._items() if i.data(0, KEY_ROLE) == key
                     and (i.data(0, NODE_ROLE) or "") == address), None)

    def _row(self, parent, name: str, light: Light | None, where: str, key: str | None = None,
             address: str = "") -> QTreeWidgetItem:
        item = QTreeWidgetItem(parent, [name, light.word if light else "", where])
        if light is not None:
            item.setIcon(STATE, self._icons[light.state])
            for column in (TARGET, STATE):
                item.setToolTip(column, light.detail)
        item.setToolTip(WHERE, where)
        item.setData(0, KEY_ROLE, key)
        item.setData(0, NODE_ROLE, address)
        return item

    def _group(self, title: str) -> QTreeWidgetItem:
        item = QTreeWidgetItem(self.tree, [title])
        font = QFont(item.font(0))
        font.setBold(True)
        item.setFont(0, font)
        item.setFlags(Qt.ItemFlag.ItemIsEnabled)
        item.setFirstColumnSpanned(True)
        return item

    def _rebuild(self, select: tuple[str, str] | str | None = None) -> None:
        if isinstance(select, str):
            select = (select, "")
        self.tree.clear()
        local = self._group("On this computer")
        for item in self.registry.local_entries():
            self._row(local, item.label, self._local_light(item), where(item.config), item.key)
        for servers, title, hint in ((True, "DolphinDB clusters", "press Add cluster… to describe a cluster or a single node"),
                                     (False, "Servers", "press Add server… for ClickHouse, QuestDB, PostgreSQL, Druid "
                                                        "or MongoDB")):
            group = self._group(title)
            entries = [e for e in self._profiles.values() if (e.kind == DDB) == servers]
            if not entries:
                row = QTreeWidgetItem(group, [f"None yet: {hint}."])
                row.setFlags(Qt.ItemFlag.ItemIsEnabled)
                row.setFirstColumnSpanned(True)
                row.setForeground(0, self.palette().placeholderText())
            for entry in entries:
                self._profile_rows(group, entry)
            group.setExpanded(True)
        local.setExpanded(True)
        if select is not None:
            self.select(*select)
        self._selection_changed()

    @staticmethod
    def _local_light(item) -> Light:
        if item.missing:
            return Light("unknown", "not installed", f"{item.label}: {item.missing}.")
        return Light("ready", "ready", f"{item.label}: {item.holds}, in {where(item.config)}. Always available.")

    def _profile_rows(self, group: QTreeWidgetItem, entry: _Profile) -> None:
        p = entry.profile
        if entry.kind == DDB:
            summary = f"{p.user} · {p.protocol}{' compressed' if p.compress else ''} · {p.node_policy.replace('_', ' ')}"
            top = self._row(group, p.name, entry.overall(), f"{entry.db_prefix} · {summary}", entry.key)
            for node in p.nodes:
                self._row(top, node.address, entry.light(node.address), f"{node.role} node", entry.key, node.address)
            top.setExpanded(True)
            return
        missing = self.registry.entry(entry.key).missing
        light = Light("unknown", "not installed", missing) if missing else entry.overall()
        login = " · ".join(part for part in (p.user, p.database) if part)
        where_text = f"{SERVER_TYPES[entry.kind].label} · {p.host}:{p.port}{' (TLS)' if p.secure else ''}"
        self._row(group, p.name, light, where_text + (f" · {login}" if login else ""), entry.key)

    def _selection_changed(self) -> None:
        selected = self.selected_key()
        key = self.selected_profile_key()
        busy = key is not None and self._profiles[key].pending > 0
        self.edit_button.setEnabled(key is not None)
        self.remove_button.setEnabled(key is not None)
        self.test_button.setEnabled(key is not None and not busy)
        self.refresh_button.setEnabled(key is not None and not busy)
        self.start_button.setVisible(self._stopped_engine_kind(key) is not None)
        text, failed = self._detail(selected)
        self.detail_label.setText(text)
        if self.detail_label.property("role") != ("error" if failed else None):
            self.detail_label.setProperty("role", "error" if failed else None)   # the theme's error style
            self.detail_label.style().unpolish(self.detail_label)
            self.detail_label.style().polish(self.detail_label)

    def _detail(self, selected: tuple[str, str] | None) -> tuple[str, bool]:
        """The detail line for the selection, and whether it reports a failure."""
        if selected is None:
            return "Select a target to see where it keeps its data, or a cluster to test it.", False
        key, address = selected
        if key not in self._profiles:
            item = self.registry.entry(key)
            return self._local_light(item).detail, False
        entry = self._profiles[key]
        light = entry.light(address) if address else entry.overall()
        text = light.detail if address or light.state != "unknown" else "Not tested yet: press Test."
        if not address and entry.note:
            text += f"\n{entry.note}"
        return text, light.state == "failed"

    def _double_clicked(self, item: QTreeWidgetItem) -> None:
        if item.data(0, KEY_ROLE) in self._profiles:
            self.edit_dialog(item.data(0, KEY_ROLE))
