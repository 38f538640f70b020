"""File → Import data…: a user's trades file previewed, typed, given roles and imported off the GUI thread."""
from __future__ import annotations

import threading
from pathlib import Path

import pytest
from PySide6.QtCore import Qt

from app.imports.dialog import ImportDialog
from tests.trades_file import trades_table, write_trades_csv, write_trades_parquet_days
from workloads.datasets import get_dataset
from workloads.datasets.imported import imports_dir
from workloads.datasets.roles import Roles
from workloads.datasets.schema import Scale


def _folders() -> list[str]:
    return sorted(p.name for p in imports_dir().iterdir()) if imports_dir().is_dir() else []


def _thread_names(signal) -> set[str]:
    """Where ``signal`` is emitted from: a direct connection runs in the emitting thread."""
    names: set[str] = set()
    signal.connect(lambda *_: names.add(threading.current_thread().name), Qt.ConnectionType.DirectConnection)
    return names


def _dialog(qtbot, path=None) -> ImportDialog:
    dialog = ImportDialog()
    qtbot.addWidget(dialog)
    dialog.show()
    if path is not None:
        previews = _thread_names(dialog._preview_done)
        with qtbot.waitSignal(dialog.previewed, timeout=30_000):
            dialog.set_source(path)
        assert previews == {"tickbench-preview"}
    return dialog


@pytest.fixture
def trades_csv(tmp_path) -> Path:
    return write_trades_csv(tmp_path / "trades.csv", trades_table(rows=3_000))


def _bad_qty_csv(tmp_path: Path) -> tuple[Path, int]:
    """The trades with one quantity that is not a number, on a line it returns."""
    path = write_trades_csv(tmp_path / "trades.csv", trades_table(rows=3_000))
    lines = path.read_text().splitlines()
    line = 1_500
    fields = lines[line - 1].split(",")
    fields[3] = "x1"
    lines[line - 1] = ",".join(fields)
    path.write_text("\n".join(lines) + "\n")
    return path, line


def test_preview_shows_rows_types_and_suggested_roles(qtbot, light_theme, trades_csv):
    dialog = _dialog(qtbot, trades_csv)
    table = dialog.preview_table
    assert [table.horizontalHeaderItem(i).text() for i in range(table.columnCount())] == \
        ["ts", "sym", "price", "qty", "side", "venue"]
    assert table.rowCount() == 1 + 20 and table.item(1, 1).text() == trades_table(rows=3_000)["sym"][0].as_py()
    assert [table.cellWidget(0, i).currentText() for i in range(6)] == \
        ["NANOTIMESTAMP", "SYMBOL", "DOUBLE", "LONG", "SYMBOL", "SYMBOL"]
    assert dialog.roles() == Roles(time="ts", key="sym", price=("price",), size="qty")
    assert dialog.name_edit.text() == "trades" and dialog.problems() == []
    assert "CSV, 1 file" in dialog.source_info.text() and "-05:00" in dialog.source_info.text()
    assert not dialog.zone_edit.isEnabled()               # the file's times carry their zone
    assert dialog.import_button.isEnabled()


def test_a_changed_role_and_type_are_imported_off_the_gui_thread(qtbot, light_theme, trades_csv):
    dialog = _dialog(qtbot, trades_csv)
    dialog.set_type("price", "FLOAT")
    pickers = dialog.role_pickers
    pickers.key_combo.setCurrentIndex(pickers.key_combo.findData("venue"))
    pickers.size_combo.setCurrentIndex(pickers.size_combo.findData(""))
    assert dialog.types() == {"price": "FLOAT"}
    assert dialog.roles() == Roles(time="ts", key="venue", price=("price",))
    dialog.set_name("mine")
    imports = _thread_names(dialog._job.progressed)
    with qtbot.waitSignal(dialog.imported, timeout=60_000) as signal:
        qtbot.mouseClick(dialog.import_button, Qt.MouseButton.LeftButton)
    assert signal.args == ["imp_mine"] and imports == {"tickbench-import"}
    info = get_dataset("imp_mine").info
    assert info.key_column == "venue" and info.size_column == ""
    assert dict((c.name, c.ddb_type) for c in info.schema.columns)["price"] == "FLOAT"
    assert sorted(get_dataset("imp_mine").all_keys) == ["ARCX", "BATS", "XNAS", "XNYS"]
    assert "Imported 3,000 rows over 3 days" in dialog.status_label.text() and not dialog.error_label.text()
    assert not dialog.skipped_list.isVisible() and dialog.import_button.isEnabled()
    assert dialog.name_hint.text() == "Imported as imp_mine; importing again replaces it."   # not its own "replaces"


def test_a_role_the_columns_cannot_play_stops_the_import(qtbot, light_theme, trades_csv):
    dialog = _dialog(qtbot, trades_csv)
    dialog.set_type("ts", "STRING")                       # then no column can be the time
    assert dialog.role_pickers.time_combo.currentData() == ""
    assert not dialog.import_button.isEnabled()
    assert "name the time column" in dialog.problems()[0]
    dialog.set_type("ts", "NANOTIMESTAMP")
    dialog.role_pickers.time_combo.setCurrentIndex(dialog.role_pickers.time_combo.findData("ts"))
    assert dialog.problems() == []


def test_a_bad_value_is_named_in_one_line_and_nothing_is_kept(qtbot, light_theme, tmp_path):
    path, line = _bad_qty_csv(tmp_path)
    dialog = _dialog(qtbot, path)
    assert dialog.type_combo("qty").currentData() == "SYMBOL"  # the bad value made the guess text
    dialog.set_type("qty", "LONG")
    imported = []
    dialog.imported.connect(imported.append)
    assert dialog.start_import()
    qtbot.waitUntil(lambda: not dialog.running and dialog.error_label.text() != "", timeout=60_000)
    assert dialog.error_label.text().startswith(f"trades.csv line {line:,}, column qty: 'x1' is not an integer")
    assert "\n" not in dialog.error_label.text()
    assert dialog.status_label.text() == "Import failed: nothing was kept."
    assert imported == [] and _folders() == []

    dialog.skip_check.setChecked(True)                    # the same file, bad rows skipped and listed
    with qtbot.waitSignal(dialog.imported, timeout=60_000):
        dialog.start_import()
    assert get_dataset("imp_trades").rows == 2_999 and not dialog.error_label.text()
    assert "Skipped 1 bad row (listed below)" in dialog.status_label.text()
    assert dialog.skipped_list.isVisible()
    assert dialog.skipped_list.toPlainText().startswith(f"trades.csv line {line:,}, column qty: 'x1'")
    assert len(dialog.skipped_list.toPlainText().splitlines()) == 1


def test_cancel_keeps_nothing(qtbot, light_theme, trades_csv):
    dialog = _dialog(qtbot, trades_csv)
    # the user presses Cancel import as the first progress arrives (before the next chunk is read)
    dialog._job.progressed.connect(lambda *_: dialog._job.cancel(), Qt.ConnectionType.DirectConnection)
    assert dialog.start_import()
    assert dialog.cancel_button.isVisible() and not dialog.import_button.isEnabled()
    qtbot.waitUntil(lambda: not dialog.running and "cancelled" in dialog.status_label.text(), timeout=60_000)
    assert dialog.status_label.text() == "Import cancelled: nothing was kept."
    assert _folders() == [] and not dialog.cancel_button.isVisible()


def test_a_hive_folder_previews_and_imports(qtbot, light_theme, tmp_path):
    folder = write_trades_parquet_days(tmp_path / "lake", trades_table(rows=2_000))
    dialog = _dialog(qtbot, folder)
    assert dialog.preview.format == "parquet" and dialog.preview.hive
    assert "PARQUET, 3 files, hive folders" in dialog.source_info.text()
    assert not dialog.delimiter_combo.isEnabled()
    assert dialog.roles().time == "ts" and dialog.roles().key == "sym"
    with qtbot.waitSignal(dialog.imported, timeout=60_000):
        dialog.start_import()
    assert get_dataset("imp_lake").rows == 2_000


def _empty(folder: Path) -> Path:
    (folder / "empty.csv").write_text("")
    return folder / "empty.csv"


@pytest.mark.parametrize("make, says", [
    (lambda d: d / "missing.csv", "no such file or folder"),
    (_empty, "empty.csv is empty"),
])
def test_a_source_that_cannot_be_read_says_why_in_one_line(qtbot, light_theme, tmp_path, make, says):
    dialog = _dialog(qtbot, make(tmp_path))
    assert says in dialog.error_label.text() and "\n" not in dialog.error_label.text()
    assert dialog.preview is None and not dialog.import_button.isEnabled()
    assert dialog.preview_table.columnCount() == 0


def test_the_window_menu_imports_and_the_scenario_form_lists_the_import(qtbot, light_theme, tmp_path, trades_csv):
    from PySide6.QtCore import QSettings
    from PySide6.QtGui import QAction

    from app.window.main_window import MainWindow
    from workloads.results.store import ResultsStore

    store = ResultsStore(tmp_path / "results")
    window = MainWindow(store, tmp_path / "data", QSettings(str(tmp_path / "s.ini"), QSettings.Format.IniFormat))
    qtbot.addWidget(window)
    try:
        action = window.findChild(QAction, "import_data")
        assert action.text() == "Import data…"
        action.trigger()
        dialog = window.findChild(ImportDialog)
        with qtbot.waitSignal(dialog.previewed, timeout=30_000):
            dialog.set_source(trades_csv)
        with qtbot.waitSignal(dialog.imported, timeout=60_000):
            dialog.start_import()
        builder = window.builder
        assert builder.dataset_combo.currentData() == "imp_trades"
        assert builder.scenario().dataset == "imp_trades"
        # the form shows the import's roles, and its columns with their types in the tooltip
        assert builder.dataset_schema.text().startswith("time ts · key sym · price price · size qty · 6 columns")
        tip = builder.dataset_schema.toolTip()
        assert "<td>ts</td><td>NANOTIMESTAMP</td><td><i>time</i></td>" in tip and "<td>venue</td><td>SYMBOL</td>" in tip
        builder.set_scenario(builder.scenario().with_changes(dataset="taq"))
        assert builder.dataset_schema.text().startswith(
            "time date + time · key symbol · bid/ask bid/ofr · bid/ask size bidsiz/ofrsiz · 10 columns")
        assert "<td>ofr</td><td>DOUBLE</td><td><i>ask</i></td>" in builder.dataset_schema.toolTip()
        assert "<td>ofrsiz</td><td>INT</td><td><i>ask size</i></td>" in builder.dataset_schema.toolTip()
        dialog.close()
    finally:
        window.close()
        store.close()


def test_every_line_shown_during_an_import_reads_once_per_unit(qtbot, light_theme, tmp_path):
    """Each status and progress text an import shows: no unit written twice ("0.1 s s"), and the time
    left is never "about 0 s" (a big enough file that the rate is known while it reads)."""
    import re

    from PySide6.QtWidgets import QLabel

    dialog = _dialog(qtbot, write_trades_csv(tmp_path / "big.csv", trades_table(rows=200_000)))
    shown: set[str] = set()

    def look(*_):
        shown.update(label.text() for label in dialog.findChildren(QLabel))

    dialog._job.progressed.connect(lambda *args: (shown.add(args[2]), look()))
    with qtbot.waitSignal(dialog.imported, timeout=60_000):
        qtbot.mouseClick(dialog.import_button, Qt.MouseButton.LeftButton)
    look()
    paced = [text for text in shown if "rows/s" in text]
    assert paced, sorted(shown)                                   # the pace was shown at least once
    doubled = [text for text in shown if re.search(r"\b(s|ms|µs|rows/s|MB)\s+\1\b", text)]
    assert doubled == [] and not [text for text in shown if "about 0 s" in text]


def test_the_csv_value_fields_read_day_first_times_and_a_decimal_comma(qtbot, light_theme, tmp_path):
    path = tmp_path / "eu.csv"
    path.write_text("exec_time;sym;price;qty\n" + "".join(
        f"10/03/2025 13:{30 + i // 60:02d}:{i % 60:02d}.{i:06d};{('BRK.B', 'BF B')[i % 2]};{100 + i % 7},25;{i + 1}\n"
        for i in range(120)))
    dialog = _dialog(qtbot, path)
    assert dict((c.name, c.ddb_type) for c in dialog.preview.schema.columns)["exec_time"] == "SYMBOL"
    fields = dialog.format_fields
    fields.time_format.setText("%d/%m/%Y %H:%M:%S.%f")
    fields.decimal.setCurrentIndex(fields.decimal.findData(","))
    with qtbot.waitSignal(dialog.previewed, timeout=30_000):
        fields.changed.emit()
    types = dict((c.name, c.ddb_type) for c in dialog.preview.schema.columns)
    assert types["exec_time"] == "NANOTIMESTAMP" and types["price"] == "DOUBLE"
    assert dialog.roles().time == "exec_time"
    dialog.set_name("eu")
    with qtbot.waitSignal(dialog.imported, timeout=60_000):
        qtbot.mouseClick(dialog.import_button, Qt.MouseButton.LeftButton)
    frame = get_dataset("imp_eu").day_frame(0, Scale())
    assert str(frame["exec_time"].iloc[1]) == "2025-03-10 13:30:01.000001" and frame["price"].iloc[0] == 100.25


def test_trades_paired_with_quotes_in_the_window_make_the_tick_pack_dataset(qtbot, light_theme, tmp_path):
    """File → Import data…'s "Trades of" is --trades-of: the quotes imported before are offered, the
    import pairs off the GUI thread and the pair is what the dialog announces."""
    from tests.desk_files import QUOTE_ROLES, TRADE_ROLES, write_desk_files
    from workloads.datasets import get_dataset
    from workloads.datasets.tick_import import import_source
    quotes_path, trades_path = write_desk_files(tmp_path, quotes_a_day=500)
    import_source(quotes_path, "quotes", QUOTE_ROLES)
    import_source(quotes_path, "plain", Roles(time="timestamp", key="ticker"))       # no bid/ask: cannot take trades
    dialog = _dialog(qtbot, trades_path)
    combo = dialog.trades_of.quotes_combo
    assert [combo.itemData(i) for i in range(combo.count())] == ["", "imp_quotes"]
    assert not dialog.trades_of.zone_edit.isEnabled()
    dialog.set_type("exec_time", "NANOTIMESTAMP")             # epoch nanoseconds, read as instants
    dialog.role_pickers.set_roles(TRADE_ROLES)
    combo.setCurrentIndex(combo.findData("imp_quotes"))
    assert dialog.trades_of.zone_edit.isEnabled()
    dialog.set_name("desk")
    assert dialog.problems() == []
    with qtbot.waitSignal(dialog.imported, timeout=60_000) as signal:
        qtbot.mouseClick(dialog.import_button, Qt.MouseButton.LeftButton)
    assert signal.args == ["imp_desk"] and "paired with the trades of imp_desk" in dialog.status_label.text()
    # what it says of the files (their names, titles) is shown as written, never as markup
    assert {label.textFormat() for label in (dialog.status_label, dialog.error_label, dialog.name_hint)} == {
        Qt.TextFormat.PlainText}
    assert get_dataset("imp_desk").info.extra["tick_pack"]
    dialog.set_name("nosize")
    dialog.role_pickers.set_roles(Roles(time="exec_time", key="sym", price=("px",)))
    qtbot.mouseClick(dialog.import_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: not dialog.running and dialog.error_label.text() != "", timeout=60_000)
    assert "need a size (--size SIZE)" in dialog.error_label.text()
