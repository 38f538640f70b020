"""The ``dialogs`` set of render_screenshots.py: import_dialog.png and table_dialog.png.

A real import of the tests' trades file (``tests/trades_file.py``) with one bad row skipped, and a
real Parquet folder read by the "Existing table..." dialog, in the set's temporary home.
"""
from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from PySide6.QtCore import QEventLoop, QSettings, QTimer  # noqa: E402


def wait_for(predicate, seconds: float = 60) -> None:
    loop, timer = QEventLoop(), QTimer()
    timer.timeout.connect(lambda: predicate() and loop.quit())
    timer.start(50)
    QTimer.singleShot(int(seconds * 1000), loop.quit)
    loop.exec()
    timer.stop()


def save(widget, path: Path) -> None:
    wait_for(lambda: False, 0.5)        # let layouts and paint timers settle before grabbing
    widget.grab().save(str(path))
    print(f"wrote {path}", flush=True)


def render_dialogs(app, home: Path, out: Path, width: int, height: int) -> None:
    from trades_file import trades_table, write_trades_csv, write_trades_parquet_days
    from app.window.main_window import MainWindow
    from workloads.results.store import ResultsStore

    csv = write_trades_csv(home / "trades.csv")
    lines = csv.read_text().splitlines()   # one bad row, so the picture shows it skipped and listed
    lines[5] = lines[5].rsplit(",", 3)[0] + ",x1,B,XNAS"
    csv.write_text("\n".join(lines) + "\n")
    lake = write_trades_parquet_days(home / "lake", trades_table(rows=2_000))
    store = ResultsStore(home / "results")
    window = MainWindow(store, home / "data", QSettings(str(home / "s.ini"), QSettings.Format.IniFormat))
    window.resize(width, height)
    window.show()

    dialog = window.scenario.import_data_dialog()
    dialog.set_source(csv)
    wait_for(lambda: dialog.preview is not None or dialog.error_label.text())
    dialog.set_type("qty", "LONG")          # the bad value made it text; the user says it is a number
    dialog.role_pickers.size_combo.setCurrentIndex(dialog.role_pickers.size_combo.findData("qty"))
    dialog.set_name("trades")
    dialog.skip_check.setChecked(True)
    dialog.start_import()
    wait_for(lambda: not dialog.running)
    save(dialog, out / "import_dialog.png")
    dialog.close()

    table = window.targets_panel.add_table_dialog()
    table.set_kind("parquet")
    table.name_edit.setText("lake")
    table.location_edit.setText(str(lake))
    table.read_columns()
    wait_for(lambda: not table.busy)
    save(table, out / "table_dialog.png")
    table.reject()
    window.close()
    app.processEvents()
    store.close()
