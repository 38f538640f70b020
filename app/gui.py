"""Start the desktop app: settings, results file, theme, main window; ``--self-test`` for builds."""
from __future__ import annotations

import argparse
import ctypes
import logging
import os
import sys
import time
from pathlib import Path

from workloads.paths import default_datasets_dir, default_results_path
from workloads.text import plural

log = logging.getLogger("tickbench")


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="tickbench", description="Tickbench desktop app "
                                     "(subcommands run, runs, show, export work without a window)")
    parser.add_argument("command", nargs="?", choices=("demo",),
                        help="demo: open full screen on the narrated demo of the five reports")
    parser.add_argument("--minutes", type=int, choices=(5, 10, 20), default=10,
                        help="with demo: how long the narrated demo lasts (default 10)")
    parser.add_argument("--replay", action="store_true",
                        help="with demo: play the runs an earlier demo recorded, at their pace")
    parser.add_argument("--target", default="duckdb",
                        help="with demo: the database under test, a configured target's key (default duckdb)")
    parser.add_argument("--versus", help="with demo: what the reports compared it with, a configured Druid "
                        "or MongoDB target's key (brings in report 001 or 004)")
    parser.add_argument("--results", type=Path, help="results file (default: in the user data folder)")
    parser.add_argument("--data-dir", type=Path, help="where local targets lay out datasets")
    parser.add_argument("--theme", choices=("light", "dark"), help="colour theme")
    parser.add_argument("--demo", action="store_true", help="start in demo mode (full screen, large fonts)")
    parser.add_argument("--scenario", type=Path, help="open this scenario file in the builder")
    parser.add_argument("--self-test", action="store_true",
                        help="run a small scenario with two worker processes and exit (for builds)")
    parser.add_argument("--quit-after", type=float, metavar="SECONDS", help=argparse.SUPPRESS)
    return parser


def display_problem() -> str | None:
    """Why no window can open here, in words a user can act on (Qt would just abort)."""
    if os.environ.get("QT_QPA_PLATFORM") or sys.platform != "linux":
        return None
    if not os.environ.get("DISPLAY") and not os.environ.get("WAYLAND_DISPLAY"):
        return ("no display found (neither DISPLAY nor WAYLAND_DISPLAY is set). Run Tickbench on a "
                "desktop, or headless: 'tickbench run ...' (see 'tickbench --help'), or with "
                "QT_QPA_PLATFORM=offscreen")
    if not os.environ.get("WAYLAND_DISPLAY"):
        missing = _missing_xcb_library()
        if missing:
            return (f"Qt's X11 plugin needs the system library {missing}, which is not installed. "
                    "On Debian/Ubuntu: sudo apt install libxcb-cursor0 libxcb-icccm4 libxcb-keysyms1 "
                    "libxkbcommon-x11-0 (Fedora: xcb-util-cursor xcb-util-wm xcb-util-keysyms)")
    return None


def _missing_xcb_library() -> str | None:
    """The first shared library Qt's xcb platform plugin cannot load, if any."""
    import importlib.util
    spec = importlib.util.find_spec("PySide6")
    if spec is None or not spec.submodule_search_locations:
        return None
    plugin = os.path.join(spec.submodule_search_locations[0], "Qt", "plugins", "platforms", "libqxcb.so")
    if not os.path.exists(plugin):
        return None
    try:
        ctypes.CDLL(plugin)  # the loader resolves every dependency, and names the first it lacks
    except OSError as exc:
        return str(exc).split(":")[0].strip() or "of the xcb plugin"
    return None


def _recorded_demo(store, minutes: int, data_dir: Path, engines) -> bool:
    """Whether an earlier demo on these engines left runs to replay (read before the window shows)."""
    from workloads.reproduce.story import narrated_playlist, recorded_runs
    return bool(recorded_runs(store, narrated_playlist(minutes, data_dir, engines)))


def enter_demo_mode(window, theme: str | None) -> None:
    """Demo mode in ``theme`` if one was given (else its own: white on black, for a projector)."""
    if theme:
        window.demo.demo_theme = theme
    window.view.toggle_demo()


def run_gui(argv: list[str]) -> int:
    started = time.perf_counter()
    args = _parser().parse_args(argv)
    if args.self_test:
        from app.self_test import run_self_test
        return run_self_test(args.results)
    problem = display_problem()
    if problem:
        print(f"tickbench: cannot open the window: {problem}", file=sys.stderr)
        return 1

    from PySide6.QtCore import QCoreApplication, QSettings, QTimer
    from PySide6.QtGui import QIcon
    from PySide6.QtWidgets import QApplication

    from widgets.common.gui_thread_gc import collect_on_gui_thread
    from widgets.common.theme import apply_theme
    from workloads.paths import resources_dir
    from workloads.results.store import ResultsStore, StoreError

    QCoreApplication.setOrganizationName("Tickbench")
    QCoreApplication.setApplicationName("Tickbench")
    app = QApplication.instance() or QApplication(sys.argv[:1])
    app.setWindowIcon(QIcon(str(resources_dir() / "icons" / "tickbench.svg")))
    collect_on_gui_thread(app)      # background readers never free Qt objects (widgets/common/gui_thread_gc.py)
    settings = QSettings()
    theme = args.theme or str(settings.value("theme", "light"))
    apply_theme(app, theme)
    data_dir = args.data_dir or default_datasets_dir()
    try:
        store = ResultsStore(args.results or default_results_path())
    except StoreError as exc:
        from PySide6.QtCore import Qt
        from PySide6.QtWidgets import QMessageBox
        box = QMessageBox(QMessageBox.Icon.Critical, "Tickbench", f"{exc}\n\nStart with --results to use another file.")
        box.setTextFormat(Qt.TextFormat.PlainText)          # the path is the user's, not markup
        box.exec()
        return 1
    aborted = store.aborted_on_open

    from app.window.main_window import MainWindow
    from workloads.passwords import KeyringPasswords
    window = MainWindow(store, data_dir, settings, KeyringPasswords(), theme)
    if args.scenario:
        window.scenario.load_scenario(args.scenario)
    if aborted:
        window.statusBar().showMessage(f"{plural(aborted, 'run')} whose process had stopped during the run marked aborted")
    if args.command == "demo":
        try:
            engines = window.presenting.demo_engines(args.target, args.versus, args.replay)
        except ValueError as exc:
            print(f"tickbench demo: {exc}", file=sys.stderr)
            store.close()
            return 2
        if args.replay and not _recorded_demo(store, args.minutes, data_dir, engines):
            print(f"tickbench demo: no recorded demo on {engines.subject} to replay: play it once first "
                  f"(tickbench demo --minutes {args.minutes}{'' if args.target == 'duckdb' else ' --target ' + args.target})",
                  file=sys.stderr)
            store.close()
            return 2
    elif args.replay or args.minutes != 10 or args.versus or args.target != "duckdb":
        print("tickbench: --minutes, --replay, --target and --versus go with 'tickbench demo'", file=sys.stderr)
    window.show()
    if args.demo or args.command == "demo":
        enter_demo_mode(window, args.theme)
    if args.command == "demo":        # once the window is up: the first card needs its size
        window.presenting.close_after = True
        QTimer.singleShot(0, lambda: window.presenting.present(args.minutes, args.replay, engines))

    def announce_ready() -> None:  # after the first event-loop turn: the window is usable
        print(f"tickbench ready in {time.perf_counter() - started:.3f} s", flush=True)

    QTimer.singleShot(0, announce_ready)
    if args.quit_after is not None:
        QTimer.singleShot(int(args.quit_after * 1000), window.close)
    code = app.exec()
    store.close()
    return code
