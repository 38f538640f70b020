"""TargetsPanel: where data can live. The embedded targets (always ready) and DolphinDB clusters
with a state light per node, and the buttons to add, edit, remove, test and refresh them.

Connection tests and node discovery run in a thread pool, never on the GUI thread; each result
comes back through a Qt signal emitted from the worker thread, which Qt queues to the panel's
(GUI) thread. A test gives a verdict within a few seconds (``workloads.cluster.test_connection``).

Passwords never go into the panel's state. They come, in this order, from what was typed this
session, from ``password_store`` (an object with ``load(profile, user) -> str | None``,
``save(profile, user, password) -> bool``, ``forget(profile, user)`` and optionally
``available() -> bool``; the app passes a keyring adapter), or from a password prompt.

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

from widgets.cluster_dialog import DEFAULT_DB_PREFIX, ClusterDialog
from widgets.theme import OKABE_ITO
from workloads.cluster import (ClusterProfile, Discovery, Verdict, discover_nodes, profile_from_discovery,
                               test_connection)

log = logging.getLogger(__name__)
STATE_VERSION = 1
TEST_TIMEOUT_S = 2.0         # per step of a test: a verdict within ~2 x this
DISCOVER_TIMEOUT_S = 3.0
LIGHTS = {"ready": OKABE_ITO["bluish_green"], "ok": OKABE_ITO["bluish_green"], "failed": OKABE_ITO["vermillion"],
          "testing": OKABE_ITO["sky_blue"], "unknown": "#8C8C8C"}
VERDICT_WORDS = {"ok": "ok", "refused": "refused", "timed_out": "timed out", "wrong_password": "wrong password",
                 "not_initialised": "not initialised", "error": "error"}
EMBEDDED = (  # key, label, what the folder holds
    ("duckdb", "DuckDB (embedded)", "one database file"),
    ("pickle", "Pickle files", "one file per day"),
    ("parquet", "Parquet files", "one file per day"),
    ("feather", "Feather files", "one file per day"),
)
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
    profile: ClusterProfile      # never holds a password
    db_prefix: str
    lights: dict[str, Light] = field(default_factory=dict)   # node address -> light
    note: str = ""               # last discovery's remark
    generation: int = 0          # results of older jobs are ignored
    pending: int = 0

    @property
    def key(self) -> str:
        return f"ddb:{self.profile.name}"

    def light(self, address: str) -> Light:
        return self.lights.setdefault(address, Light())

    def overall(self) -> Light:
        lights = [self.light(n.address) for n in self.profile.nodes]
        if any(l.state == "testing" for l in lights):
            return Light("testing", "testing…", "Testing the nodes…")
        failed = [l for l in lights if l.state == "failed"]
        if failed:
            words = {l.word for l in failed}
            word = words.pop() if len(words) == 1 and len(failed) == len(lights) else \
                f"{len(failed)} of {len(lights)} failed"
            return Light("failed", word, failed[0].detail)
        if lights and all(l.state == "ok" for l in lights):
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

    def __init__(self, data_dir: Path, password_store=None, parent=None):
        super().__init__(parent)
        self.setObjectName("targets_panel")
        self.data_dir = Path(data_dir)
        self.password_store = password_store
        self._profiles: dict[str, _Profile] = {}
        self._session_passwords: dict[str, str] = {}     # profile name -> typed this session
        self._pool = ThreadPoolExecutor(max_workers=4, thread_name_prefix="tickbench-targets")
        self._icons = {state: light_icon(colour) for state, colour in LIGHTS.items()}
        self.active_dialog: ClusterDialog | None = None
        self._distrusted: set[str] = set()                # profiles whose stored password was refused
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

        self.add_button = QPushButton("Add…", objectName="add_button")
        self.edit_button = QPushButton("Edit…", objectName="edit_button")
        self.remove_button = QPushButton("Remove", objectName="remove_button")
        self.test_button = QPushButton("Test", objectName="test_button")
        self.refresh_button = QPushButton("Refresh nodes", objectName="refresh_button")
        self.add_button.setToolTip("Add a DolphinDB cluster or single node")
        self.test_button.setToolTip("Log in to every node of the cluster and show each verdict")
        self.refresh_button.setToolTip("Ask the cluster which nodes it has (getClusterPerf) and list them")
        self.add_button.clicked.connect(self.add_dialog)
        self.edit_button.clicked.connect(lambda: self.edit_dialog())
        self.remove_button.clicked.connect(lambda: self.remove_with_confirmation())
        self.test_button.clicked.connect(lambda: self.test_profile())
        self.refresh_button.clicked.connect(lambda: self.refresh_nodes())

        buttons = QHBoxLayout()
        for button in (self.add_button, self.edit_button, self.remove_button, self.test_button, self.refresh_button):
            buttons.addWidget(button)
        buttons.addStretch(1)
        layout = QVBoxLayout(self)
        layout.addWidget(self.tree, 1)
        layout.addWidget(self.detail_label)
        layout.addLayout(buttons)
        self._rebuild()

    # --- the main window's API ----------------------------------------------------------------------
    def targets(self) -> list[tuple[str, str, str, dict[str, Any]]]:
        """(key, label, kind, config) of every target; DolphinDB configs carry no password."""
        out = [(key, label, key, self._embedded_config(key)) for key, label, _ in EMBEDDED]
        for entry in self._profiles.values():
            p = entry.profile
            config = {"profile": p.to_dict(), "db_prefix": entry.db_prefix, "protocol": p.protocol,
                      "compress": p.compress, "node_policy": p.node_policy}
            out.append((entry.key, f"DolphinDB: {p.name}", "dolphindb", config))
        return out

    def resolve_config(self, key: str) -> dict[str, Any] | None:
        """The target's config ready to run: DolphinDB's with its password (asked for if need be)."""
        for target_key, _label, _kind, config in self.targets():
            if target_key == key:
                break
        else:
            raise KeyError(f"no target {key!r} in the targets panel")
        if not key.startswith("ddb:"):
            return config
        password = self._password_for(self._profiles[key].profile)
        if password is None:
            return None
        return {**config, "password": password}

    def save_state(self) -> dict[str, Any]:
        return {"version": STATE_VERSION,
                "profiles": [{"profile": e.profile.to_dict(), "db_prefix": e.db_prefix}
                             for e in self._profiles.values()]}

    def restore_state(self, state: dict[str, Any]) -> None:
        profiles: dict[str, _Profile] = {}
        for i, item in enumerate(state.get("profiles") or []):
            try:
                data, note = dict(item["profile"]), ""
                if data.get("compress") and str(data.get("protocol", "DDB")).upper() != "DDB":
                    # saved by a version that allowed it; the client refuses or ignores it
                    data["compress"], note = False, (f"Compression was turned off: it works only with the "
                                                     f"DDB protocol, not {str(data['protocol']).upper()}.")
                profile = ClusterProfile.from_dict(data)
                entry = _Profile(profile.with_password(""), str(item.get("db_prefix") or DEFAULT_DB_PREFIX),
                                 note=note)
            except (KeyError, TypeError, ValueError) as exc:
                log.warning("targets panel: ignoring saved cluster %d: %s", i + 1, exc)
                continue
            profiles[entry.key] = entry
        self._profiles = profiles
        self._rebuild()
        self.targets_changed.emit()

    # --- profiles -----------------------------------------------------------------------------------
    def profile_keys(self) -> list[str]:
        return list(self._profiles)

    def add_profile(self, entry: dict[str, Any], password: str = "", remember: bool = False) -> str:
        """Add a cluster from plain data ({"profile": ..., "db_prefix": ...}); returns its key."""
        profile = ClusterProfile.from_dict(entry["profile"]).with_password("")
        item = _Profile(profile, str(entry.get("db_prefix") or DEFAULT_DB_PREFIX))
        if item.key in self._profiles:
            raise ValueError(f"a cluster named {profile.name!r} exists already")
        self._profiles[item.key] = item
        self._keep_password(profile, password, remember)
        self._rebuild(select=item.key)
        self.targets_changed.emit()
        return item.key

    def replace_profile(self, key: str, entry: dict[str, Any], password: str = "", remember: bool = False) -> str:
        old = self._profiles[key]
        profile = ClusterProfile.from_dict(entry["profile"]).with_password("")
        new = _Profile(profile, str(entry.get("db_prefix") or DEFAULT_DB_PREFIX),
                       generation=old.generation + 1)
        if new.key != key and new.key in self._profiles:
            raise ValueError(f"a cluster named {profile.name!r} exists already")
        renamed = (old.profile.name, old.profile.user) != (profile.name, profile.user)
        if renamed and not password:   # carry a known password over to the new name or user
            password = self._session_passwords.get(old.profile.name) or self._stored(old.profile) or ""
            remember = remember and bool(password)
        if renamed:
            self._forget(old.profile)
        profiles = {}
        for k, v in self._profiles.items():          # keep the order; the edited one in its place
            profiles[new.key if k == key else k] = new if k == key else v
        self._profiles = profiles
        self._keep_password(profile, password, remember, drop_stored=not remember)
        self._rebuild(select=new.key)
        self.targets_changed.emit()
        return new.key

    def remove_profile(self, key: str) -> None:
        entry = self._profiles.pop(key)
        self._forget(entry.profile)
        self._rebuild()
        self.targets_changed.emit()

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
        stored = bool(entry) and self._stored(ClusterProfile.from_dict(entry["profile"])) is not None
        dialog = ClusterDialog(entry, [e.profile.name for e in self._profiles.values()],
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

    def edit_dialog(self, key: str | None = None) -> ClusterDialog | None:
        key = key or self.selected_profile_key()
        if key is None:
            return None
        entry = self._profiles[key]
        data = {"profile": entry.profile.to_dict(), "db_prefix": entry.db_prefix}
        return self._open_dialog(data, lambda d: self.replace_profile(key, d.entry(), d.password(), d.remember()))

    def remove_with_confirmation(self, key: str | None = None) -> bool:
        key = key or self.selected_profile_key()
        if key is None:
            return False
        name = self._profiles[key].profile.name
        answer = QMessageBox.question(self, "Remove cluster",
                                      f"Remove the cluster “{name}” from Tickbench?\n"
                                      "Its data on the cluster is not touched; a stored password is forgotten.")
        if answer != QMessageBox.StandardButton.Yes:
            return False
        self.remove_profile(key)
        return True

    # --- passwords ----------------------------------------------------------------------------------
    def _stored(self, profile: ClusterProfile) -> str | None:
        if self.password_store is None:
            return None
        try:
            return self.password_store.load(profile.name, profile.user)
        except Exception as exc:  # a broken keyring must not break the panel
            log.warning("password store: %s", exc)
            return None

    def _keep_password(self, profile: ClusterProfile, password: str, remember: bool,
                       drop_stored: bool = False) -> None:
        if password:
            self._session_passwords[profile.name] = password
            self._distrusted.discard(profile.name)
        if self.password_store is None:
            return
        try:
            if password and remember:
                if not self.password_store.save(profile.name, profile.user, password):
                    self.detail_label.setText("The keyring did not store the password: it will be asked for "
                                              "once per session.")
            elif drop_stored:
                self.password_store.forget(profile.name, profile.user)
        except Exception as exc:
            log.warning("password store: %s", exc)

    def _forget(self, profile: ClusterProfile) -> None:
        self._session_passwords.pop(profile.name, None)
        self._distrusted.discard(profile.name)
        if self.password_store is not None:
            try:
                self.password_store.forget(profile.name, profile.user)
            except Exception as exc:
                log.warning("password store: %s", exc)

    def _password_for(self, profile: ClusterProfile) -> str | None:
        if profile.name in self._session_passwords:
            return self._session_passwords[profile.name]
        stored = self._stored(profile)
        if stored is not None and profile.name not in self._distrusted:
            return stored
        refused = " (the stored one was refused)" if stored is not None else ""
        text, ok = QInputDialog.getText(self, "DolphinDB password",
                                        f"Password of {profile.user} on “{profile.name}”{refused}:",
                                        QLineEdit.EchoMode.Password)
        if not ok:
            return None
        self._session_passwords[profile.name] = text
        if stored is not None:          # the user keeps passwords in the keyring: replace the refused one
            self._distrusted.discard(profile.name)
            self._keep_password(profile, text, remember=True)
        return text

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
        password = self._password_for(entry.profile)
        if password is None:
            return key, entry, None
        entry.generation += 1   # answers of an older check are ignored
        return key, entry, entry.profile.with_password(password)

    def test_profile(self, key: str | None = None) -> bool:
        """Test every node of the profile; False if there is none or the password was not given."""
        key, entry, profile = self._start_check(key)
        if profile is None:
            return False
        entry.pending = len(profile.nodes)
        for node in profile.nodes:
            entry.lights[node.address] = Light("testing", "testing…", f"Testing {node.address}…")
            self._submit(("test", key, entry.generation, node.address),
                         lambda node=node: test_connection(profile, node, timeout=TEST_TIMEOUT_S))
        self._rebuild(select=self.selected_key())
        return True

    def refresh_nodes(self, key: str | None = None) -> bool:
        """Ask the cluster for its nodes (getClusterPerf) and list them instead of the typed ones."""
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
                self._session_passwords.pop(entry.profile.name, None)
                self._distrusted.add(entry.profile.name)
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
            self.targets_changed.emit()

    # --- the tree -------------------------------------------------------------------------------------
    def _embedded_config(self, key: str) -> dict[str, Any]:
        if key == "duckdb":
            return {"path": str(self.data_dir / "tickbench_data.duckdb")}
        return {"root": str(self.data_dir)}

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
        for key, label, holds in EMBEDDED:
            where = self._embedded_config(key).get("path") or self._embedded_config(key)["root"]
            self._row(local, label, Light("ready", "ready", f"{label}: {holds}, in {where}. Always available."),
                      where, key)
        clusters = self._group("DolphinDB clusters")
        if not self._profiles:
            hint = QTreeWidgetItem(clusters, ["None yet: press Add… to describe a cluster or a single node."])
            hint.setFlags(Qt.ItemFlag.ItemIsEnabled)
            hint.setFirstColumnSpanned(True)
            hint.setForeground(0, self.palette().placeholderText())
        for entry in self._profiles.values():
            p = entry.profile
            summary = f"{p.user} · {p.protocol}{' compressed' if p.compress else ''} · {p.node_policy.replace('_', ' ')}"
            top = self._row(clusters, p.name, entry.overall(), f"{entry.db_prefix} · {summary}", entry.key)
            for node in p.nodes:
                self._row(top, node.address, entry.light(node.address), f"{node.role} node", entry.key, node.address)
            top.setExpanded(True)
        local.setExpanded(True)
        clusters.setExpanded(True)
        if select is not None:
            self.select(*select)
        self._selection_changed()

    def _selection_changed(self) -> None:
        selected = self.selected_key()
        key = self.selected_profile_key()
        busy = key is not None and self._profiles[key].pending > 0
        self.edit_button.setEnabled(key is not None)
        self.remove_button.setEnabled(key is not None)
        self.test_button.setEnabled(key is not None and not busy)
        self.refresh_button.setEnabled(key is not None and not busy)
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
            label, holds = next((l, h) for k, l, h in EMBEDDED if k == key)
            config = self._embedded_config(key)
            return f"{label}: {holds}, in {config.get('path') or config['root']}. Always ready.", False
        entry = self._profiles[key]
        light = entry.light(address) if address else entry.overall()
        text = light.detail if address or light.state != "unknown" else "Not tested yet: press Test."
        if not address and entry.note:
            text += f"\n{entry.note}"
        return text, light.state == "failed"

    def _double_clicked(self, item: QTreeWidgetItem) -> None:
        if item.data(0, KEY_ROLE) in self._profiles:
            self.edit_dialog(item.data(0, KEY_ROLE))
