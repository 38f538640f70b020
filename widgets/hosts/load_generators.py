"""LoadGeneratorsPanel: where a run's users run: on this machine, or on the workers of a Dask
cluster, each worker one load-generating host.

It holds plain values (the scheduler's address, the placement, the users pinned per host) and
shows what it is given. It never connects: Connect emits ``connect_requested(address)`` and the
window answers with ``show_cluster(view)`` or ``show_error(message)``; a run's live snapshots come
in through ``show_live``.

Pins keep the key they were given (a worker's name or address, as a scenario file may say); a
host pinned here for the first time is keyed by its worker name, which outlives the worker's port.
"""
from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (QCheckBox, QComboBox, QFormLayout, QFrame, QHBoxLayout, QLabel, QLineEdit,
                               QPushButton, QScrollArea, QVBoxLayout, QWidget)

from widgets.hosts.host_table import HostTable
from widgets.common.wheel_guard import guard_wheel
from workloads.distributed.cluster import ClusterView, HostView
from workloads.distributed.placement import PLACEMENTS, place_users, users_per_host
from workloads.text import plural

PLACEMENT_LABELS = {"spread": "spread evenly", "packed": "packed up to each host's cores",
                    "pinned": "pinned per host"}
ADDRESS_EXAMPLE = "tcp://127.0.0.1:8786"
OFF_TEXT = ("The users run on this machine.\n\nTo load the target from several client machines, "
            "start `dask scheduler` on one machine and `dask worker <its address>` on each client "
            "machine, tick the box above and Connect.")
NOT_CONNECTED_TEXT = ("Not connected: type the Dask scheduler's address and Connect to see its "
                      "workers, the hosts the users will run on.")


class LoadGeneratorsPanel(QWidget):
    connect_requested = Signal(str)       # a scheduler address
    changed = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("load_generators")
        self._hosts: list[HostView] = []
        self._pins: dict[str, int] = {}
        self._users = 1
        self._live_users: dict[str, int] = {}
        self._build()
        self._status("")
        self._refresh()

    def _build(self) -> None:
        self.enabled_check = QCheckBox("Run the users on a Dask cluster", objectName="use_dask")
        self.address_edit = QLineEdit(objectName="scheduler_address", placeholderText=ADDRESS_EXAMPLE)
        self.address_edit.setToolTip("The Dask scheduler whose workers run the users: tcp://host:port")
        self.connect_button = QPushButton("Connect", objectName="connect_button")
        self.placement_combo = QComboBox(objectName="placement")
        for key in PLACEMENTS:
            self.placement_combo.addItem(PLACEMENT_LABELS[key], key)
        self.status_label = QLabel(wordWrap=True, objectName="cluster_status")
        self.table = HostTable()
        self.empty_label = QLabel(wordWrap=True, objectName="hosts_empty")
        self.empty_label.setProperty("role", "muted")
        self.note_label = QLabel(wordWrap=True, objectName="placement_note")
        self.note_label.setProperty("role", "muted")

        address_row = QHBoxLayout()
        address_row.addWidget(self.address_edit, 1)
        address_row.addWidget(self.connect_button)
        form = QFormLayout()
        form.addRow("Scheduler:", address_row)
        form.addRow("Placement:", self.placement_combo)
        self.cluster_box = QWidget(objectName="cluster_box")
        box = QVBoxLayout(self.cluster_box)
        box.setContentsMargins(0, 0, 0, 0)
        box.addLayout(form)
        box.addWidget(self.status_label)
        box.addWidget(self.table, 1)
        box.addWidget(self.note_label)
        content = QWidget()
        layout = QVBoxLayout(content)
        layout.setContentsMargins(6, 6, 6, 6)
        layout.addWidget(self.enabled_check)
        layout.addWidget(self.cluster_box, 1)
        layout.addWidget(self.empty_label)
        layout.addStretch(1)
        self._layout = layout
        # a dock made short scrolls the panel rather than cutting its text
        scroll = QScrollArea(widgetResizable=True, objectName="load_generators_scroll")
        scroll.setFrameShape(QFrame.Shape.NoFrame)
        scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        scroll.setWidget(content)
        outer = QVBoxLayout(self)
        outer.setContentsMargins(0, 0, 0, 0)
        outer.addWidget(scroll)
        guard_wheel(self)

        self.enabled_check.toggled.connect(self._on_changed)
        self.address_edit.textChanged.connect(self.changed)
        self.address_edit.returnPressed.connect(self._request_connect)
        self.connect_button.clicked.connect(self._request_connect)
        self.placement_combo.currentIndexChanged.connect(self._on_placement_changed)
        self.table.pins_edited.connect(self._on_pins_edited)

    # ---- values -------------------------------------------------------------------------------
    def scheduler(self) -> str:
        """The scheduler's address, or "" for users on this machine."""
        return self._address() if self.enabled_check.isChecked() else ""

    def placement(self) -> str:
        return self.placement_combo.currentData()

    def pins(self) -> dict[str, int]:
        return {key: users for key, users in self._pins.items() if users > 0}

    def set_values(self, scheduler: str, placement: str, pins: dict[str, int]) -> None:
        """A loaded scenario's values; an empty scheduler keeps the address typed before."""
        for widget in (self.enabled_check, self.address_edit, self.placement_combo):
            widget.blockSignals(True)
        self.enabled_check.setChecked(bool(scheduler))
        if scheduler:
            self.address_edit.setText(scheduler)
        self.placement_combo.setCurrentIndex(max(0, self.placement_combo.findData(placement)))
        for widget in (self.enabled_check, self.address_edit, self.placement_combo):
            widget.blockSignals(False)
        self._pins = {str(key): int(users) for key, users in pins.items()}
        self._refresh()
        self.changed.emit()

    def set_users(self, users: int) -> None:
        """The users to place: the scenario's largest step."""
        if users != self._users:
            self._users = max(1, int(users))
            self._live_users = {}
            self._show_users()

    # ---- the window's answers -------------------------------------------------------------------
    def set_connecting(self, connecting: bool) -> None:
        self.connect_button.setEnabled(not connecting)
        self.connect_button.setText("Connecting…" if connecting else "Connect")
        if connecting:
            self._status(f"Connecting to {self._address()}…")

    def show_cluster(self, view: ClusterView) -> None:
        self.set_connecting(False)
        self._hosts = list(view.hosts)
        self._live_users = {}
        keys = {h.address for h in self._hosts} | {h.name for h in self._hosts if h.name}
        dropped = sorted(k for k in self._pins if k not in keys)
        self._pins = {k: v for k, v in self._pins.items() if k in keys}
        self.table.show_hosts(self._hosts, view.differences)
        seeded = self._seed_pins()
        cores = sum(h.cores for h in self._hosts)
        text = (f"Connected: {plural(len(self._hosts), 'host')}, {plural(cores, 'core')}, "
                f"clocks known to ±{view.max_clock_error_s * 1000:.2f} ms.")
        if view.differences:
            text += " ⚠ Versions differ between hosts (see Versions)."
        if dropped:
            text += f" Pins for hosts not in this cluster dropped: {', '.join(dropped)}."
        self._status(text, "warning" if view.differences or dropped else "")
        self._refresh()
        if seeded or dropped:
            self.changed.emit()

    def show_error(self, message: str) -> None:
        """The message in the status line; the hosts shown before stay."""
        self.set_connecting(False)
        self._status(message, "error")

    def show_live(self, host_users: dict[str, int], host_rows_per_s: dict[str, float]) -> None:
        """A run's current users and rows/s per host; empty dicts (a run on this machine) put
        back the placed users."""
        if not self._hosts:
            return
        self._live_users = dict(host_users)
        self._show_users()
        self.table.set_rows_per_s(host_rows_per_s)

    # ---- state ----------------------------------------------------------------------------------
    def save_state(self) -> dict:
        return {"version": 1, "enabled": self.enabled_check.isChecked(), "address": self.address_edit.text(),
                "placement": self.placement(), "pins": dict(self._pins)}

    def restore_state(self, state: dict) -> None:
        self.address_edit.setText(str(state.get("address", "")))
        pins = state.get("pins") if isinstance(state.get("pins"), dict) else {}
        self.set_values(self._address() if state.get("enabled") else "", str(state.get("placement", "")),
                        {str(k): int(v) for k, v in pins.items() if isinstance(v, int)})

    # ---- reactions ------------------------------------------------------------------------------
    def _address(self) -> str:
        text = self.address_edit.text().strip()
        return text if not text or "://" in text else f"tcp://{text}"    # Dask's default protocol

    def _request_connect(self) -> None:
        address = self._address()
        if not address:
            self.show_error(f"Type the Dask scheduler's address first, e.g. {ADDRESS_EXAMPLE}")
            return
        self.set_connecting(True)
        self.connect_requested.emit(address)

    def _on_changed(self, *_args) -> None:
        self._refresh()
        self.changed.emit()

    def _on_placement_changed(self, *_args) -> None:
        self._live_users = {}
        self._seed_pins()
        self._on_changed()

    def _seed_pins(self) -> bool:
        """Pinned with no host pinned yet: start from an even spread, for the user to edit."""
        if self.placement() != "pinned" or not self._hosts or any(self._pin_of(h) for h in self._hosts):
            return False
        spread = self._placed("spread")
        for host in self._hosts:
            self._pins[self._key(host)] = spread.get(host.address, 0)
        return True

    def _on_pins_edited(self) -> None:
        for address, users in self.table.pins().items():
            self._pins[self._key(next(h for h in self._hosts if h.address == address))] = users
        self._show_note()
        self.changed.emit()

    def _refresh(self) -> None:
        on, hosts = self.enabled_check.isChecked(), bool(self._hosts)
        self.cluster_box.setEnabled(on)
        self.table.setVisible(hosts)
        self.note_label.setVisible(hosts)
        self.empty_label.setVisible(not on or not hosts)
        self.empty_label.setText(OFF_TEXT if not on else NOT_CONNECTED_TEXT)
        self._layout.setStretchFactor(self.cluster_box, 1 if hosts else 0)    # the table takes the room
        self._layout.setStretch(self._layout.count() - 1, 0 if hosts else 1)
        self._show_users()

    def _show_users(self) -> None:
        if not self._hosts:
            return
        if self.placement() == "pinned":
            self.table.set_pins({h.address: self._pin_of(h) for h in self._hosts})
        else:
            self.table.set_users(self._live_users or self._placed(self.placement()))
        self._show_note()

    def _show_note(self) -> None:
        if self.placement() == "pinned":
            pinned = sum(self._pin_of(h) for h in self._hosts)
            text = (f"Pinned: {plural(pinned, 'user')} in all. Each step's users go to the hosts "
                    "in these proportions.") if pinned else "Pin at least one user to a host."
        else:
            text = f"Users placed for the largest step ({plural(self._users, 'user')})."
        if self._live_users:
            text = ("Rows/s of the running step; its users follow the pins' proportions." if
                    self.placement() == "pinned" else "Users and rows/s of the running step.")
        self.note_label.setText(text)

    def _placed(self, placement: str) -> dict[str, int]:
        return users_per_host(place_users(self._users, [h.host for h in self._hosts], placement))

    def _key(self, host: HostView) -> str:
        for key in (host.address, host.name):
            if key and key in self._pins:
                return key
        return host.name or host.address

    def _pin_of(self, host: HostView) -> int:
        return self._pins.get(self._key(host), 0)

    def _status(self, text: str, role: str = "") -> None:
        self.status_label.setText(text)
        self.status_label.setVisible(bool(text))
        self.status_label.setProperty("role", role)
        self.status_label.style().unpolish(self.status_label)    # the role's colour, now
        self.status_label.style().polish(self.status_label)
