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
    window.close()
    store.close()


if __name__ == "__main__":
    main()
