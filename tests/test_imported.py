"""Imported CSV files as datasets: real CSV files, real Parquet, real worker processes, the real
command line and the real dialog."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from workloads.datasets import DATASETS, available_datasets, get_dataset
from workloads.datasets import csv_import as csv_import_module
from workloads.datasets import imported as imported_module
from workloads.datasets.csv_parse import CsvFormatError
from workloads.datasets.csvwrite import write_csv
from workloads.datasets.csv_import import ImportCancelled, ImportFailed, csv_header, import_csv, suggest_mapping
from workloads.datasets.imported import ImportedDataset, imports_dir, list_imports, remove_import, suggest_name
from workloads.datasets.schema import Scale, StringMode
from workloads.run.runner import Runner
from workloads.scenario import Scenario
from workloads.results.store import ResultsStore
from workloads.targets import make_target

ROOT = Path(__file__).resolve().parent.parent
TAQ_SCALE = Scale(days=2, rows_per_day=3_000, symbols=20)
DEVICES_SCALE = Scale(days=2, rows_per_day=1_200, symbols=30)
ALL_DAYS = Scale(days=10)   # an import's scale: only the day count matters


def _by_time(frame: pd.DataFrame, time_column: str) -> pd.DataFrame:
    """What an imported day must hold: the rows in file order, then stably sorted by time."""
    order = np.argsort(frame[time_column].to_numpy(), kind="stable")
    return frame.iloc[order].reset_index(drop=True)


@pytest.fixture(scope="module")
def taq_source() -> pd.DataFrame:
    """Two generated TAQ days, shuffled: the import must split the days and sort each by time."""
    taq = get_dataset("taq")
    both = pd.concat([taq.day_frame(i, TAQ_SCALE) for i in range(2)], ignore_index=True)
    return both.sample(frac=1.0, random_state=7).reset_index(drop=True)


@pytest.fixture
def taq_csv(tmp_path, taq_source) -> Path:
    path = tmp_path / "quotes.csv"
    write_csv(taq_source, path, get_dataset("taq").info.schema)
    return path


@pytest.fixture(scope="module")
def devices_source() -> pd.DataFrame:
    devices = get_dataset("devices")
    return pd.concat([devices.day_frame(i, DEVICES_SCALE) for i in range(2)], ignore_index=True)


@pytest.fixture
def devices_csv(tmp_path, devices_source) -> Path:
    path = tmp_path / "readings.csv"
    write_csv(devices_source, path, get_dataset("devices").info.schema, style="iso")
    return path


def _day_of(frame: pd.DataFrame, column: str, day) -> pd.DataFrame:
    days = frame[column].to_numpy().astype("datetime64[D]")
    return frame[days == np.datetime64(day, "D")].reset_index(drop=True)


def _folders() -> list[str]:
    return sorted(p.name for p in imports_dir().iterdir()) if imports_dir().is_dir() else []


# --- importing ---------------------------------------------------------------------------------------
def test_taq_import_splits_days_sorts_each_by_time_and_counts_keys(taq_csv, taq_source):
    progress = []
    ds = import_csv(taq_csv, "taq", "x", progress=lambda *a: progress.append(a), chunk_rows=1_000)
    assert isinstance(ds, ImportedDataset) and ds.info.name == "imp_x"
    assert ds.info.title == "quotes.csv (imported TAQ)"
    assert ds.info.schema == DATASETS["taq"].info.schema
    assert ds.rows == len(taq_source) == 6_000
    expected_days = sorted(pd.Timestamp(d).date() for d in taq_source["date"].unique())
    assert ds.trading_days(ALL_DAYS) == expected_days
    assert ds.trading_days(Scale(days=1)) == expected_days[:1]
    counts = taq_source["symbol"].value_counts()
    assert ds.keys(TAQ_SCALE) == sorted(counts.index, key=lambda k: (-counts[k], k))
    assert ds.day_rows(ALL_DAYS) == [len(_day_of(taq_source, "date", d)) for d in expected_days]
    assert progress[-1][0] == progress[-1][1] and all(a[0] <= b[0] for a, b in zip(progress, progress[1:]))

    fetched = get_dataset("imp_x")
    for index, day in enumerate(expected_days):
        want = _by_time(_day_of(taq_source, "date", day), "time")
        pd.testing.assert_frame_equal(fetched.day_frame(index, ALL_DAYS), want)
        chunks = list(fetched.generate_day(index, ALL_DAYS, chunk_rows=700))
        assert max(len(c) for c in chunks) <= 700 and len(chunks) > 1
        pd.testing.assert_frame_equal(pd.concat(chunks, ignore_index=True), want)

    manifest = json.loads((imports_dir() / "x" / "manifest.json").read_text())
    assert manifest["base"] == "taq" and manifest["source"]["path"] == str(taq_csv.resolve())
    assert manifest["source"]["size"] == taq_csv.stat().st_size
    assert [d["date"] for d in manifest["days"]] == [d.isoformat() for d in expected_days]
    assert manifest["schema"][0] == ["symbol", "SYMBOL"] and manifest["keys"] == ds.keys(TAQ_SCALE)
    assert sorted(p.name for p in (imports_dir() / "x").iterdir()) == sorted(
        [f"{d.isoformat()}.parquet" for d in expected_days] + ["manifest.json"])
    assert _folders() == ["x"]                                  # no temp folder left behind


def test_imported_days_use_the_generators_dtypes_in_every_string_mode(taq_csv):
    ds = import_csv(taq_csv, "taq", "modes")
    for mode in StringMode:
        generated = DATASETS["taq"].day_frame(0, TAQ_SCALE, mode)
        got = ds.day_frame(0, ALL_DAYS, mode)
        assert got.dtypes.to_dict() == generated.dtypes.to_dict(), mode
        assert list(got.columns) == list(generated.columns)
    objects = ds.day_frame(0, ALL_DAYS, StringMode.OBJECT)
    assert isinstance(objects["symbol"].iloc[0], str)


def test_devices_days_come_from_the_timestamp(devices_csv, devices_source):
    ds = import_csv(devices_csv, "devices", "readings")
    days = sorted({pd.Timestamp(t).date() for t in devices_source["time"].dt.normalize().unique()})
    assert ds.trading_days(ALL_DAYS) == days and ds.rows == len(devices_source)
    assert ds.info.key_column == "device_id" and "info_table" not in ds.info.extra
    for index, day in enumerate(days):
        want = _by_time(_day_of(devices_source, "time", day), "time")
        pd.testing.assert_frame_equal(get_dataset("imp_readings").day_frame(index, ALL_DAYS), want)


def test_days_interleaved_in_time_order_are_streamed_from_many_parts(tmp_path, devices_source, monkeypatch):
    """Blocks of two days alternate, each in time order; with one open writer the days end up in
    several part files each, which are streamed (not sorted) into the day file."""
    monkeypatch.setattr(csv_import_module, "MAX_OPEN_DAYS", 1)
    day_index = devices_source["time"].to_numpy().astype("datetime64[D]")
    first, second = (devices_source[day_index == d] for d in np.unique(day_index))
    thirds = lambda frame: [frame.iloc[i * len(frame) // 3:(i + 1) * len(frame) // 3] for i in range(3)]  # noqa: E731
    blocks = [part for pair in zip(thirds(first), thirds(second)) for part in pair]
    path = tmp_path / "interleaved.csv"
    write_csv(blocks, path, get_dataset("devices").info.schema)
    ds = import_csv(path, "devices", "interleaved", chunk_rows=len(blocks[0]))
    for index, frame in enumerate((first, second)):
        pd.testing.assert_frame_equal(ds.day_frame(index, ALL_DAYS), frame.reset_index(drop=True))


def test_a_mapping_reads_differently_named_columns(tmp_path, taq_source):
    renamed = taq_source.head(500).rename(columns={"symbol": "ticker", "ofr": "ask"})
    path = tmp_path / "renamed.csv"
    schema = get_dataset("taq").info.schema
    write_csv(taq_source.head(500), path, schema)
    text = path.read_text().splitlines()
    text[0] = text[0].replace('"symbol"', '"ticker"').replace('"ofr"', '"ask"')
    path.write_text("\n".join(text) + "\n")
    assert csv_header(path)[0] == "ticker"
    assert suggest_mapping(csv_header(path), schema)["symbol"] is None
    with pytest.raises(CsvFormatError, match="missing columns symbol, ofr"):
        import_csv(path, "taq", "renamed")
    ds = import_csv(path, "taq", "renamed", {"ticker": "symbol", "ask": "ofr"})
    assert ds.rows == 500 and set(ds.all_keys) == set(renamed["ticker"])
    assert ds.manifest["mapping"] == {"ticker": "symbol", "ask": "ofr"}


@pytest.mark.parametrize("name", ["", "X", "1abc", "my-quotes", "a" * 41, "with space", "é"])
def test_bad_names_are_refused_before_reading(taq_csv, name):
    with pytest.raises(ValueError, match="import name .* is not valid"):
        import_csv(taq_csv, "taq", name)
    assert _folders() == []


def test_bad_base_or_missing_file_is_a_clear_error(taq_csv, tmp_path):
    with pytest.raises(ValueError, match="unknown base dataset 'quotes': choose one of taq"):
        import_csv(taq_csv, "quotes", "x")
    with pytest.raises(ValueError, match="nope.csv: no such file"):
        import_csv(tmp_path / "nope.csv", "taq", "x")


def test_suggested_names_are_valid():
    assert suggest_name("/data/Quotes 2007-08.csv") == "quotes_2007_08"
    assert suggest_name("2007.csv") == "data_2007"
    assert imported_module.NAME_RULE.fullmatch(suggest_name("---.csv"))


# --- failures leave nothing half-made -------------------------------------------------------------------
def _malformed(tmp_path, source: pd.DataFrame) -> tuple[Path, int]:
    """A CSV whose bid on one data record (line 3,003 of the file) is not a number."""
    path = tmp_path / "bad.csv"
    write_csv(source, path, get_dataset("taq").info.schema)
    lines = path.read_text().splitlines()
    line = 3_003
    fields = lines[line - 1].split(",")
    fields[3] = "12.3x"
    lines[line - 1] = ",".join(fields)
    path.write_text("\n".join(lines) + "\n")
    return path, line


def test_a_malformed_csv_leaves_no_import_and_keeps_the_older_one(taq_csv, taq_source, tmp_path):
    good = import_csv(taq_csv, "taq", "x")
    before = good.day_frame(0, ALL_DAYS)
    bad, line = _malformed(tmp_path, taq_source)
    with pytest.raises(CsvFormatError) as caught:
        import_csv(bad, "taq", "x", chunk_rows=1_000)
    assert str(caught.value) == f"bad.csv line {line}, column 'bid': '12.3x' is not a number"
    with pytest.raises(CsvFormatError, match=f"line {line}"):
        import_csv(bad, "taq", "fresh", chunk_rows=1_000)
    assert _folders() == ["x"]                                     # no 'fresh', no temp folder
    again = get_dataset("imp_x")
    assert again.manifest["import_id"] == good.manifest["import_id"]
    pd.testing.assert_frame_equal(again.day_frame(0, ALL_DAYS), before)


def test_reimporting_replaces_only_on_success(taq_csv, devices_csv, tmp_path):
    first = import_csv(taq_csv, "taq", "x")
    smaller = tmp_path / "smaller.csv"
    taq = get_dataset("taq")
    write_csv(taq.day_frame(0, Scale(days=1, rows_per_day=400, symbols=5)), smaller, taq.info.schema)
    second = import_csv(smaller, "taq", "x")
    assert second.rows == 400 and first.rows == 6_000
    assert get_dataset("imp_x").rows == 400 and get_dataset("imp_x").manifest["import_id"] != first.manifest["import_id"]
    third = import_csv(devices_csv, "devices", "x")                # another schema under the same name
    assert get_dataset("imp_x").info.key_column == "device_id" and third.base == "devices"
    assert _folders() == ["x"]


def test_cancel_stops_the_import_and_changes_nothing(taq_csv):
    import threading
    cancel = threading.Event()

    def progress(done, total, message):
        cancel.set()                                              # stop after the first chunk

    with pytest.raises(ImportCancelled, match="cancelled: nothing was changed"):
        import_csv(taq_csv, "taq", "x", progress=progress, chunk_rows=1_000, cancel=cancel)
    assert _folders() == []


def test_stale_temp_folders_of_dead_imports_are_removed(taq_csv):
    root = imports_dir()
    root.mkdir(parents=True, exist_ok=True)
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True,
                          text=True).stdout.strip()
    stale = root / f".tmp-x-{dead}-abcdef12"
    (stale / "parts").mkdir(parents=True)
    import_csv(taq_csv, "taq", "y")
    assert _folders() == ["y"]


@pytest.fixture
def tiny_home(tmp_path, monkeypatch):
    """TICKBENCH_HOME on a 384 KiB tmpfs (needs mount rights): a real full disk."""
    mount_point = tmp_path / "tiny"
    mount_point.mkdir()
    try:
        done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=384k", "tmpfs", str(mount_point)],
                              capture_output=True, check=False)
    except OSError:
        done = None
    if done is None or done.returncode != 0:
        pytest.skip("cannot mount a small tmpfs here (needs root): no real full disk to test")
    monkeypatch.setenv("TICKBENCH_HOME", str(mount_point))
    try:
        yield mount_point
    finally:
        subprocess.run(["umount", str(mount_point)], check=False)


def test_a_full_disk_is_a_clear_error_and_keeps_the_older_import(tiny_home, tmp_path, taq_csv):
    first = import_csv(taq_csv, "taq", "x")
    big = tmp_path / "big.csv"
    taq = get_dataset("taq")
    write_csv(taq.generate_day(0, Scale(days=1, rows_per_day=60_000, symbols=200), chunk_rows=20_000), big,
              taq.info.schema)
    with pytest.raises(ImportFailed, match=r"disk full while importing big.csv into .*MB free.*nothing was "
                                           r"imported\. The earlier import of that name is kept"):
        import_csv(big, "taq", "x", chunk_rows=10_000)
    assert _folders() == ["x"]
    assert get_dataset("imp_x").manifest["import_id"] == first.manifest["import_id"]
    assert get_dataset("imp_x").day_frame(1, ALL_DAYS).shape[0] == first.day_rows(ALL_DAYS)[1]


# --- the registry ---------------------------------------------------------------------------------------
def test_registry_lists_and_removes_imports(taq_csv, devices_csv):
    assert list(available_datasets()) == list(DATASETS)
    import_csv(taq_csv, "taq", "b_quotes")
    import_csv(devices_csv, "devices", "a_readings")
    assert [d.info.name for d in list_imports()] == ["imp_a_readings", "imp_b_quotes"]
    assert list(available_datasets()) == [*DATASETS, "imp_a_readings", "imp_b_quotes"]
    assert list(DATASETS) == ["taq", "level2", "devices", "api45"]     # built-ins only
    remove_import("imp_b_quotes")
    assert [d.info.name for d in list_imports()] == ["imp_a_readings"]
    with pytest.raises(ValueError, match="no import named 'b_quotes'"):
        remove_import("b_quotes")


def test_unknown_import_names_the_folder_searched():
    with pytest.raises(ValueError, match=r"unknown dataset 'imp_nothing': no import named 'nothing' in .*imports"):
        get_dataset("imp_nothing")
    with pytest.raises(ValueError, match="unknown dataset 'x': choose one of taq, level2, devices, api45"):
        get_dataset("x")


def test_a_damaged_manifest_is_named_and_left_out_of_the_list(taq_csv):
    import_csv(taq_csv, "taq", "x")
    (imports_dir() / "x" / "manifest.json").write_text("{not json")
    with pytest.raises(ValueError, match="import 'x' in .* is damaged"):
        get_dataset("imp_x")
    assert list_imports() == []


# --- targets and real worker processes -------------------------------------------------------------
@pytest.mark.parametrize("kind", ["parquet", "duckdb"])
def test_targets_lay_out_and_read_an_import(kind, taq_csv, taq_source, tmp_path):
    ds = import_csv(taq_csv, "taq", "x")
    config = {"root": str(tmp_path / "files")} if kind == "parquet" else {"path": str(tmp_path / "d.duckdb")}
    target = make_target(kind, config)
    layout = target.prepare("imp_x", Scale(days=2), StringMode.ARROW)
    assert layout.rows == 6_000 and list(layout.days) == ds.all_days
    assert list(layout.keys_sample) == ds.all_keys[:len(layout.keys_sample)]
    target.open(layout)
    try:
        day, key = ds.all_days[1], ds.all_keys[0]
        got = target.read_slice(layout, day, key).frame
        want = _day_of(taq_source, "date", day)
        want = want[want["symbol"] == key]
        assert len(got) == len(want) > 0
        columns = ["time", "bid", "ofr", "bidsiz"]
        ordered = lambda f: f[columns].sort_values(columns, kind="stable").reset_index(drop=True)  # noqa: E731
        pd.testing.assert_frame_equal(ordered(got), ordered(want))
    finally:
        target.close()


@pytest.mark.parametrize("kind", ["parquet", "duckdb"])
def test_runner_reads_days_and_slices_of_an_import_in_worker_processes(kind, taq_csv, taq_source, tmp_path):
    ds = import_csv(taq_csv, "taq", "x")
    config = {"root": str(tmp_path / "files")} if kind == "parquet" else {"path": str(tmp_path / "d.duckdb")}
    store = ResultsStore(tmp_path / "results")
    try:
        read_day = Runner(Scenario(dataset="imp_x", scale=Scale(days=2), target=kind, target_config=config,
                                   workload="read-day", users=(1,), operations=2), store).run()
        assert read_day.status == "completed", read_day.message
        measured = store.ops(read_day.run_id, kinds=("measured",))
        assert list(measured["rows"]) == ds.day_rows(ALL_DAYS)   # day 1, then day 2
        assert store.run(read_day.run_id)["layout"]["rows"] == 6_000

        slices = Runner(Scenario(dataset="imp_x", scale=Scale(days=2), target=kind, target_config=config,
                                 workload="slice-download", params={"rows_per_user": 1_000}, users=(1,),
                                 operations=0), store).run()
        assert slices.status == "completed", slices.message
        ops = store.ops(slices.run_id, kinds=("measured",))
        assert ops["ok"].all() and ops["rows"].sum() >= 1_000
        key_days = taq_source.groupby(["date", "symbol"]).size()
        assert set(ops["rows"]) <= set(key_days) | {0}
    finally:
        store.close()


# --- the command line -----------------------------------------------------------------------------
def tickbench(*args: str, home: Path) -> subprocess.CompletedProcess:
    env = {"TICKBENCH_HOME": str(home), "PATH": "/usr/bin:/bin", "COLUMNS": "200"}
    return subprocess.run([sys.executable, "-m", "app", *args], capture_output=True, text=True, timeout=120,
                          env=env, cwd=ROOT)


def test_cli_import_then_list(tmp_path, taq_csv, taq_source):
    home = tmp_path / "home"
    done = tickbench("import", str(taq_csv), "--dataset", "taq", "--name", "myquotes", home=home)
    assert done.returncode == 0, done.stderr
    assert "Imported 6,000 rows over 2 days (2007-08-23 .. 2007-08-24) and 20 keys from quotes.csv" in done.stdout
    assert "tickbench run --dataset imp_myquotes" in done.stdout
    assert (home / "imports" / "myquotes" / "manifest.json").is_file()
    listing = tickbench("datasets", home=home)
    assert "imp_myquotes — quotes.csv (imported TAQ): 6,000 rows, 2 days" in listing.stdout


def test_cli_import_errors_are_one_line_and_exit_2(tmp_path, taq_source):
    home = tmp_path / "home"
    bad, line = _malformed(tmp_path, taq_source)
    cases = [
        (["import", str(bad), "--dataset", "taq", "--name", "x"], f"bad.csv line {line}, column 'bid'"),
        (["import", str(bad), "--dataset", "taq", "--name", "Bad-Name"], "import name 'Bad-Name' is not valid"),
        (["import", str(bad), "--dataset", "taq", "--name", "x", "--map", "oops"], "--map takes CSVCOL=column"),
        (["import", str(bad), "--dataset", "taq", "--name", "x", "--map", "Ticker=symbol", "--map", "Ticker=date"],
         "--map names 'Ticker' twice"),          # issue 41: the last one kept silently before
        (["import", str(bad), "--dataset", "nope", "--name", "x"], "unknown base dataset 'nope'"),
    ]
    for args, message in cases:
        done = tickbench(*args, home=home)
        assert done.returncode == 2, (args, done.stderr)
        lines = done.stderr.strip().splitlines()
        assert len(lines) == 1 and message in lines[0] and "Traceback" not in done.stderr, done.stderr
    assert not (home / "imports").exists() or not any((home / "imports").iterdir())


def test_cli_map_renames_columns(tmp_path, taq_source):
    path = tmp_path / "renamed.csv"
    write_csv(taq_source.head(300), path, get_dataset("taq").info.schema)
    text = path.read_text().replace('"symbol"', '"Ticker"', 1)
    path.write_text(text)
    home = tmp_path / "home"
    done = tickbench("import", str(path), "--dataset", "taq", "--name", "renamed", "--map", "Ticker=symbol",
                     home=home)
    assert done.returncode == 0, done.stderr
    assert "Imported 300 rows" in done.stdout


# --- the dialog and the window ----------------------------------------------------------------------
def test_dialog_imports_a_csv_off_the_gui_thread(qtbot, light_theme, taq_csv):
    import threading

    from PySide6.QtCore import Qt

    from app.imports.builtin_dialog import BuiltinImportDialog

    dialog = BuiltinImportDialog()
    qtbot.addWidget(dialog)
    dialog.show()
    dialog.set_file(taq_csv)
    assert dialog.name_edit.text() == "quotes" and dialog.mapping() == {}
    assert dialog.columns_table.rowCount() == 10 and dialog.import_button.isEnabled()
    threads = set()   # where the import reports from: a direct connection runs in the emitting thread
    dialog._job.progressed.connect(lambda *_: threads.add(threading.current_thread().name),
                               Qt.ConnectionType.DirectConnection)
    with qtbot.waitSignal(dialog.imported, timeout=60_000) as signal:
        qtbot.mouseClick(dialog.import_button, Qt.MouseButton.LeftButton)
    assert signal.args == ["imp_quotes"]
    assert threads == {"tickbench-import"}
    assert "Imported 6,000 rows over 2 days" in dialog.status_label.text() and not dialog.error_label.text()
    assert dialog.progress_bar.value() == dialog.progress_bar.maximum() and get_dataset("imp_quotes").rows == 6_000
    assert dialog.import_button.isEnabled() and dialog.close_button.text() == "Close"


def test_dialog_shows_the_line_and_column_of_a_malformed_csv(qtbot, light_theme, tmp_path, taq_source):
    from app.imports.builtin_dialog import BuiltinImportDialog

    bad, line = _malformed(tmp_path, taq_source)
    dialog = BuiltinImportDialog(path=bad)
    qtbot.addWidget(dialog)
    dialog.show()
    imported = []
    dialog.imported.connect(imported.append)
    assert dialog.start_import()
    qtbot.waitUntil(lambda: not dialog.running and bool(dialog.error_label.text()), timeout=60_000)
    assert dialog.error_label.text() == f"bad.csv line {line}, column 'bid': '12.3x' is not a number"
    assert dialog.status_label.text() == "Import failed: nothing was changed."
    assert imported == [] and _folders() == []


def test_dialog_mapping_table_names_what_is_missing_or_doubled(qtbot, light_theme, tmp_path, taq_source):
    from app.imports.builtin_dialog import BuiltinImportDialog

    path = tmp_path / "renamed.csv"
    write_csv(taq_source.head(50), path, get_dataset("taq").info.schema)
    path.write_text(path.read_text().replace('"ofr"', '"ask"', 1))
    dialog = BuiltinImportDialog(path=path)
    qtbot.addWidget(dialog)
    assert "choose the CSV column for ofr" in dialog.problems()
    assert not dialog.import_button.isEnabled()
    ofr_row = [dialog.columns_table.item(r, 0).text() for r in range(10)].index("ofr")
    combo = dialog.columns_table.cellWidget(ofr_row, 2)
    combo.setCurrentIndex(combo.findData("bid"))
    assert "CSV column 'bid' is chosen for bid and ofr" in dialog.problems()
    combo.setCurrentIndex(combo.findData("ask"))
    assert dialog.problems() == [] and dialog.mapping() == {"ask": "ofr"}
    assert dialog.import_button.isEnabled()
    dialog.file_edit.editingFinished.emit()       # focus left the file field (as on Import): same file
    assert dialog.mapping() == {"ask": "ofr"}      # the user's choice is kept
    dialog.set_name("Bad")
    assert not dialog.import_button.isEnabled()


def test_window_menu_imports_and_the_builder_lists_the_import(qtbot, light_theme, tmp_path, taq_csv):
    from PySide6.QtCore import QSettings
    from PySide6.QtGui import QAction

    from app.window.main_window import MainWindow

    store = ResultsStore(tmp_path / "results")
    window = MainWindow(store, tmp_path / "data", QSettings(str(tmp_path / "s.ini"), QSettings.Format.IniFormat))
    qtbot.addWidget(window)
    try:
        builder = window.builder
        builder.set_scenario(builder.scenario().with_changes(dataset="devices", scale=Scale(days=2)))
        action = window.findChild(QAction, "import_data")
        assert action.text() == "Import data…"
        action.trigger()
        from app.imports.dialog import ImportDialog
        dialog = window.findChild(ImportDialog).open_builtin()     # a CSV in a built-in schema
        dialog.set_file(taq_csv)
        dialog.set_name("menu")
        with qtbot.waitSignal(dialog.imported, timeout=60_000):
            dialog.start_import()
        assert builder.dataset_combo.currentData() == "imp_menu"           # the new import is chosen
        assert not builder._data_form.isRowVisible(builder.rows_spin)      # its rows come from the file
        assert builder.scenario().dataset == "imp_menu"
        assert "2 imported days, 6,000 rows" in builder.estimate_label.text()
        builder.set_scenario(builder.scenario().with_changes(dataset="taq"))
        builder.refresh_datasets()                                         # keeps the current choice
        assert builder.dataset_combo.currentData() == "taq" and builder._data_form.isRowVisible(builder.rows_spin)
        dialog.close()
    finally:
        window.close()
        store.close()


@pytest.mark.parametrize("kind", ["parquet", "duckdb"])
def test_a_reimport_is_never_served_from_the_old_layout(tmp_path, taq_source, kind):
    """Same name, same days, other rows: the target must lay the new data out, not reuse the old."""
    first, second = tmp_path / "first.csv", tmp_path / "second.csv"
    write_csv([taq_source.iloc[::2]], first, get_dataset("taq").info.schema)
    write_csv([taq_source], second, get_dataset("taq").info.schema)
    config = {"path": str(tmp_path / "d.duckdb")} if kind == "duckdb" else {"root": str(tmp_path / "files")}
    import_csv(first, "taq", "again")
    old = make_target(kind, config).prepare("imp_again", ALL_DAYS, StringMode.ARROW)
    import_csv(second, "taq", "again")
    new = make_target(kind, config).prepare("imp_again", ALL_DAYS, StringMode.ARROW)
    assert old.days == new.days and not new.reused
    assert (old.rows, new.rows) == (len(taq_source.iloc[::2]), len(taq_source))
