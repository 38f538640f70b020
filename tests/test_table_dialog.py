""""Existing table…" beside Add server: a Parquet hive folder or a DuckDB file's table read in place,
its columns read off the GUI thread, roles chosen from them, saved as target ``table:<name>``."""
from __future__ import annotations

import threading

import duckdb
import pytest
from PySide6.QtCore import Qt

from tests.trades_file import trades_table, write_trades_parquet_days
from widgets.targets.panel import TargetsPanel
from workloads.datasets.roles import Roles
from workloads.datasets.tables import list_tables


@pytest.fixture
def panel(make_widget, tmp_path):
    return make_widget(TargetsPanel, tmp_path / "data", None, size=(760, 520))


def _read(qtbot, dialog) -> set[str]:
    threads: set[str] = set()
    dialog._done.connect(lambda *_: threads.add(threading.current_thread().name), Qt.ConnectionType.DirectConnection)
    with qtbot.waitSignal(dialog.columns_read, timeout=30_000):
        qtbot.mouseClick(dialog.read_button, Qt.MouseButton.LeftButton)
    return threads


def test_a_hive_folder_is_read_given_roles_and_saved_as_a_target(qtbot, panel, tmp_path):
    folder = write_trades_parquet_days(tmp_path / "lake", trades_table(rows=1_500))
    assert panel.add_table_button.text() == "Existing table…"
    qtbot.mouseClick(panel.add_table_button, Qt.MouseButton.LeftButton)
    dialog = panel.active_dialog
    dialog.set_kind("parquet")
    assert not dialog.host_edit.isVisible() and dialog.location_edit.isVisible()
    dialog.location_edit.setText(str(folder))
    assert not dialog.save_button.isEnabled()              # no columns read yet
    assert _read(qtbot, dialog) == {"tickbench-table-columns"}
    assert "ts (NANOTIMESTAMP)" in dialog.columns_label.text() and "venue (SYMBOL)" in dialog.columns_label.text()
    assert dialog.role_pickers.roles() == Roles(time="ts", key="sym", price=("price",), size="qty")
    assert dialog.name_edit.text() == "lake"
    pickers = dialog.role_pickers
    pickers.size_combo.setCurrentIndex(pickers.size_combo.findData(""))
    with qtbot.waitSignal(dialog.saved, timeout=30_000) as signal:
        qtbot.mouseClick(dialog.save_button, Qt.MouseButton.LeftButton)
    assert signal.args == ["table:lake"]
    saved = {t.name: t for t in list_tables()}["lake"]
    assert saved.roles == Roles(time="ts", key="sym", price=("price",)) and saved.kind == "parquet"
    assert "table:lake" in [key for key, *_ in panel.targets()]
    assert panel.item_for("table:lake") is not None            # listed in the tree


def test_a_duckdb_table_is_read_and_a_wrong_table_named_in_one_line(qtbot, panel, tmp_path):
    path = tmp_path / "ticks.duckdb"
    con = duckdb.connect(str(path))
    trades = trades_table(rows=600)           # noqa: F841 - read by DuckDB's replacement scan
    con.execute("CREATE TABLE trades AS SELECT * FROM trades")
    con.close()
    dialog = panel.add_table_dialog()
    dialog.set_kind("duckdb")
    assert not dialog.folder_button.isVisible()
    dialog.location_edit.setText(str(path))
    dialog.table_edit.setText("nosuch")
    _read(qtbot, dialog)
    message = dialog.status_label.text()
    assert "nosuch" in message and "\n" not in message and not dialog.save_button.isEnabled()
    dialog.table_edit.setText("trades")
    _read(qtbot, dialog)
    assert dialog.role_pickers.roles().time == "ts" and dialog.status_label.text() == ""
    dialog.name_edit.setText("duck")
    with qtbot.waitSignal(dialog.saved, timeout=30_000):
        assert dialog.save()
    assert {t.name: t.kind for t in list_tables()} == {"duck": "duckdb"}


def test_server_kinds_ask_for_an_address_and_login(qtbot, panel):
    dialog = panel.add_table_dialog()
    dialog.set_kind("postgres")
    assert dialog.host_edit.isVisible() and not dialog.location_edit.isVisible()
    assert dialog.port_spin.value() == 5432 and dialog.user_edit.text() == "postgres"
    assert dialog.location() == "127.0.0.1:5432/tickbench"
    dialog.set_kind("dolphindb")
    assert dialog.port_spin.value() == 8848 and dialog.table_edit.placeholderText() == "dfs://db/table"


def test_a_postgres_table_is_read_with_the_login_typed_and_its_password_kept_apart(qtbot, panel, pg_engine):
    import psycopg

    config = pg_engine.config
    with psycopg.connect(host=config["host"], port=config["port"], user=config["user"], password=config["password"],
                         dbname=config["database"], autocommit=True) as con:
        con.execute("DROP TABLE IF EXISTS dialog_trades")
        con.execute("CREATE TABLE dialog_trades (ts timestamptz, sym text, price float8, qty bigint)")
        con.execute("INSERT INTO dialog_trades VALUES ('2024-03-04 14:30:00+00', 'S001', 10.5, 100)")
    dialog = panel.add_table_dialog()
    dialog.set_kind("postgres")
    dialog.host_edit.setText(config["host"])
    dialog.port_spin.setValue(int(config["port"]))
    dialog.user_edit.setText(config["user"])
    dialog.database_edit.setText(config["database"])
    dialog.table_edit.setText("dialog_trades")
    dialog.password_edit.setText("not-the-password")
    _read(qtbot, dialog)
    assert dialog.status_label.text() and "\n" not in dialog.status_label.text() and not dialog.save_button.isEnabled()
    assert "not-the-password" not in dialog.status_label.text()
    dialog.password_edit.setText(config["password"])
    _read(qtbot, dialog)
    assert dialog.role_pickers.roles() == Roles(time="ts", key="sym", price=("price",), size="qty")
    with qtbot.waitSignal(dialog.saved, timeout=30_000):
        assert dialog.save()
    saved = {t.name: t for t in list_tables()}["dialog_trades"]
    assert saved.kind == "postgres" and "password" not in saved.connection
    assert panel.resolve_config("table:dialog_trades")["password"] == config["password"]   # kept this session
