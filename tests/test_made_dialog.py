"""The window's "What Tickbench made here…" on a DolphinDB cluster (the stand-in, the real client):
the databases of Tickbench's prefix listed with tables and sizes off the GUI thread, dropped only
after a Yes, the unchecked and the user's own left alone."""
from __future__ import annotations

import dolphindb as ddb
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QMessageBox

from tests.ddbserver.fixture import ddb_server_factory  # noqa: F401
from tests.test_targets_panel import PASSWORD, FakeStore, entry
from widgets.targets.panel import TargetsPanel
from workloads.datasets.schema import Scale, StringMode
from workloads.targets.dolphindb import DolphinDBTarget

SCALES = (Scale(days=1, rows_per_day=1_000, symbols=5), Scale(days=1, rows_per_day=2_000, symbols=5))


def _databases(server) -> list[str]:
    session = ddb.session()
    session.connect(server.host, server.port, "admin", PASSWORD)
    try:
        return sorted(session.run("getClusterDFSDatabases()"))
    finally:
        session.close()


def test_the_window_lists_what_tickbench_made_and_drops_only_the_checked_after_a_yes(
        qtbot, make_widget, tmp_path, ddb_server_factory, monkeypatch):  # noqa: F811
    server = ddb_server_factory()
    made = []
    for scale in SCALES:
        target = DolphinDBTarget({"profile": server.profile(), "password": PASSWORD, "timeout": 5})
        target.prepare("taq", scale, StringMode.ARROW)
        made.append(target.names("taq", scale).db)
        target.close()
    panel = make_widget(TargetsPanel, tmp_path / "data", FakeStore(), size=(700, 520))
    key = panel.add_profile(entry("lab", (server.port, "single")), password=PASSWORD, remember=True)
    assert "What Tickbench made here…" in [a.text() for a in panel.target_menu(key).actions()]

    dialog = panel.made_dialog(key)
    qtbot.waitUntil(lambda: dialog.table.rowCount() == 2 and dialog.drop_button.isEnabled(), timeout=15_000)
    assert [dialog.table.item(r, 0).text() for r in range(2)] == sorted(made)
    assert "quotes" in dialog.table.item(0, 1).text() and dialog.table.item(0, 2).text().endswith("KB")
    assert dialog.status.text().startswith("2 database(s) Tickbench made on ddb:lab")
    assert dialog.status.textFormat() == Qt.TextFormat.PlainText

    monkeypatch.setattr(QMessageBox, "question", lambda *a, **k: QMessageBox.StandardButton.No)
    assert not dialog.drop_checked() and _databases(server) == sorted(made)          # No: nothing dropped
    dialog.table.item(1, 0).setCheckState(Qt.CheckState.Unchecked)
    monkeypatch.setattr(QMessageBox, "question", lambda *a, **k: QMessageBox.StandardButton.Yes)
    assert dialog.drop_checked()
    qtbot.waitUntil(lambda: dialog.table.rowCount() == 1 and dialog.drop_button.isEnabled(), timeout=15_000)
    assert _databases(server) == [sorted(made)[1]]                                   # the unchecked stays
    dialog.table.item(0, 0).setCheckState(Qt.CheckState.Unchecked)
    assert not dialog.drop_button.isEnabled()                                        # nothing checked
    dialog.close()
