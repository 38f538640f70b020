"""Render File → Import data… and the "Existing table…" dialog offscreen to PNG (visual checks, docs).

    QT_QPA_PLATFORM=offscreen .venv/bin/python scripts/render_import_dialog.py [--out /tmp/shots]

The trades file of the tests (``tests/trades_file.py``) is previewed, imported with one bad row
skipped, in a temporary home; the dialog is drawn at 1280x800 and 1366x768, and the main window with
the import chosen in the scenario form.
"""
from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ["TICKBENCH_HOME"] = tempfile.mkdtemp(prefix="tickbench-shots-")

from PySide6.QtCore import QEventLoop, QSettings, QTimer  # noqa: E402
from PySide6.QtWidgets import QApplication  # noqa: E402

SIZES = ((1280, 800), (1366, 768))


def wait_for(predicate, seconds: float = 60) -> None:
    loop, timer = QEventLoop(), QTimer()
    timer.timeout.connect(lambda: predicate() and loop.quit())
    timer.start(50)
    QTimer.singleShot(int(seconds * 1000), loop.quit)
    loop.exec()
    timer.stop()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", default="/tmp/shots")
    args = parser.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    app = QApplication.instance() or QApplication(sys.argv)
    from widgets.theme import apply_theme
    apply_theme(app, "light")
    from trades_file import write_trades_csv
    home = Path(os.environ["TICKBENCH_HOME"])
    csv = write_trades_csv(home / "trades.csv")
    text = csv.read_text().splitlines()
    text[5] = text[5].replace(",100,", ",1OO,") if ",100," in text[5] else text[5].rsplit(",", 3)[0] + ",x1,B,XNAS"
    csv.write_text("\n".join(text) + "\n")

    from trades_file import trades_table, write_trades_parquet_days
    lake = write_trades_parquet_days(home / "lake", trades_table(rows=2_000))
    from workloads.datasets import get_dataset
    from workloads.datasets.csvwrite import write_csv
    from workloads.datasets.schema import Scale
    taq_set = get_dataset("taq")
    taq = home / "quotes.csv"
    write_csv(taq_set.generate_day(0, Scale(days=1, rows_per_day=3_000, symbols=20)), taq, taq_set.info.schema)
    from app.main_window import MainWindow
    from workloads.results.store import ResultsStore
    store = ResultsStore(home / "results")
    window = MainWindow(store, home / "data", QSettings(str(home / "s.ini"), QSettings.Format.IniFormat))
    for width, height in SIZES:
        window.resize(width, height)
        window.show()
        dialog = window.import_data_dialog()
        dialog.set_source(csv)
        wait_for(lambda: dialog.preview is not None or dialog.error_label.text())
        app.processEvents()
        dialog.grab().save(str(out / f"import_preview_{width}x{height}.png"))
        dialog.set_type("qty", "LONG")          # a bad value made it text; the user says it is a number
        dialog.role_pickers.size_combo.setCurrentIndex(dialog.role_pickers.size_combo.findData("qty"))
        dialog.set_name("trades")
        dialog.skip_check.setChecked(True)
        dialog.start_import()
        wait_for(lambda: not dialog.running)
        app.processEvents()
        dialog.grab().save(str(out / f"import_done_{width}x{height}.png"))
        dialog.close()
        app.processEvents()
        window.grab().save(str(out / f"window_{width}x{height}.png"))
        table = window.targets_panel.add_table_dialog()
        table.set_kind("parquet")
        table.location_edit.setText(str(lake))
        table.read_columns()
        wait_for(lambda: not table.busy)
        app.processEvents()
        table.grab().save(str(out / f"table_dialog_{width}x{height}.png"))
        table.set_kind("postgres")
        app.processEvents()
        table.grab().save(str(out / f"table_dialog_postgres_{width}x{height}.png"))
        table.reject()
        builtin = window.import_data_dialog()
        builtin.set_source(taq)
        wait_for(lambda: builtin.preview is not None)
        old = builtin.open_builtin()
        old.set_name("quotes")
        old.start_import()
        wait_for(lambda: not old.running)
        app.processEvents()
        old.grab().save(str(out / f"import_builtin_{width}x{height}.png"))
        old.close()
        builtin.close()
    window.close()
    store.close()


if __name__ == "__main__":
    main()
