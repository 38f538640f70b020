"""The targets panel's tree (``widgets.targets.panel``): the embedded targets, the DolphinDB
clusters with a row per node, and the other servers, each with its light; the selection and the
detail line under the tree.
"""
from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QFont
from PySide6.QtWidgets import QMenu, QTreeWidgetItem

from widgets.targets.lights import Light, _Profile
from workloads.targets.engines import DDB, SERVER_TYPES, where

KEY_ROLE = Qt.ItemDataRole.UserRole
NODE_ROLE = Qt.ItemDataRole.UserRole + 1
TARGET, STATE, WHERE = range(3)


class TargetsTree:
    """TargetsPanel's tree rows, selection and detail line (a mixin: the tree is the panel's)."""

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
        tables = self.registry.table_entries()
        if tables:
            group = self._group("Existing tables, read in place")
            for item in tables:
                self._row(group, item.label, Light("ready", "read-only", f"{item.label}: read in place, never "
                                                   f"written; {item.holds}."), item.holds, item.key)
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

    def _context_menu(self, pos) -> None:
        item = self.tree.itemAt(pos)
        menu = self.target_menu(item.data(0, KEY_ROLE) if item is not None else None)
        if menu is not None:
            menu.exec(self.tree.viewport().mapToGlobal(pos))

    def target_menu(self, key: str | None) -> QMenu | None:
        """A usable target's context menu: "Compare by running with…" (the window asks for the
        second) and, on a DolphinDB cluster, "What Tickbench made here…"; None for a group's or an
        unusable row."""
        if key not in {t[0] for t in self.targets()}:
            return None
        menu = QMenu(self.tree)
        action = menu.addAction("Compare by running with…")
        action.triggered.connect(lambda: self.compare_requested.emit(key))
        if key in self._profiles and self._profiles[key].kind == DDB:
            made = menu.addAction("What Tickbench made here…")
            made.triggered.connect(lambda: self.made_dialog(key))
        return menu
