"""Play the narrated demo in the real window and save what the audience sees: a PNG every
``--every`` seconds, one at each card, and a list of every card's text (to read for run ids,
warnings or cut text), and how long the demo took against its minutes.

    xvfb-run -s "-screen 0 1920x1080x24" .venv/bin/python scripts/record_demo.py --minutes 10 \
        --theme dark --out /tmp/demo-shots [--replay]

Real runs on the embedded engines in a temporary home (``--home`` keeps one, e.g. to replay the
runs a first recording made). Without a display it uses the offscreen platform at ``--size``.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minutes", type=int, choices=(5, 10, 20), default=10)
    parser.add_argument("--replay", action="store_true")
    parser.add_argument("--theme", choices=("light", "dark"), default="dark")
    parser.add_argument("--every", type=float, default=20.0, help="seconds between shots")
    parser.add_argument("--size", default="1920x1080", help="the screen without a display")
    parser.add_argument("--target", default="duckdb", help="the database under test: a configured target's key")
    parser.add_argument("--versus", help="a configured Druid or MongoDB target's key (reports 001, 004)")
    parser.add_argument("--home", type=Path, help="Tickbench's home (default: a new temporary one)")
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    width, height = (int(v) for v in args.size.lower().split("x"))
    if not os.environ.get("DISPLAY"):
        config = Path(tempfile.mkdtemp(prefix="tickbench-screen-")) / "screens.json"
        config.write_text(json.dumps({"screens": [{"name": "demo", "x": 0, "y": 0, "width": width, "height": height,
                                                   "logicalDpi": 96, "logicalBase": 96, "dpr": 1}]}))
        os.environ["QT_QPA_PLATFORM"] = f"offscreen:configfile={config}"
    home = args.home or Path(tempfile.mkdtemp(prefix="tickbench-demo-"))
    os.environ["TICKBENCH_HOME"] = str(home)
    args.out.mkdir(parents=True, exist_ok=True)

    from PySide6.QtCore import QSettings, QTimer
    from PySide6.QtWidgets import QApplication

    from app.window.main_window import MainWindow
    from widgets.common.theme import apply_theme
    from workloads.paths import default_datasets_dir, default_results_path
    from workloads.results.store import ResultsStore

    app = QApplication(sys.argv[:1])
    apply_theme(app, args.theme)
    store = ResultsStore(default_results_path())
    settings = QSettings(str(home / "settings.ini"), QSettings.Format.IniFormat)
    window = MainWindow(store, default_datasets_dir(), settings, None, args.theme)
    window.show()
    started = time.monotonic()
    cards: list[dict] = []

    def shot(name: str) -> None:
        path = args.out / f"{time.monotonic() - started:06.1f}s-{name}.png"
        window.grab().save(str(path))

    def on_state(state: str) -> None:
        presenter = window.presenting.presenter
        if presenter is None:
            return
        # a card's figures arrive a moment after it shows: look once they have
        QTimer.singleShot(1500, lambda: presenter.state == state and record_card(state, presenter))

    def record_card(state: str, presenter) -> None:
        if presenter.card.isVisible():
            cards.append({"at_s": round(time.monotonic() - started, 1), "state": state, "text": presenter.card.text()})
            shot(f"{presenter.index + 1:02d}-{state}")

    presented: list[float] = []

    def begin() -> None:
        window.demo.demo_theme = args.theme
        presented.append(time.monotonic())
        window.presenting.present(args.minutes, args.replay, window.presenting.demo_engines(args.target, args.versus, args.replay))
        QTimer.singleShot(3000, follow)

    def follow() -> None:
        presenter = window.presenting.presenter
        if presenter is None:
            print("the demo did not start (no recorded runs to replay?)", file=sys.stderr)
            app.quit()
            return
        presenter.state_changed.connect(on_state)
        presenter.finished.connect(lambda: presented.append(time.monotonic()))
        presenter.finished.connect(app.quit)            # the demo ends by itself when its minutes are up
        on_state(presenter.state)
        every = QTimer(window)
        every.timeout.connect(lambda: shot("frame"))
        every.start(int(args.every * 1000))

    QTimer.singleShot(500, begin)
    app.exec()
    (args.out / "cards.json").write_text(json.dumps(cards, indent=1, ensure_ascii=False))
    print(f"{len(cards)} cards and {len(list(args.out.glob('*.png')))} pictures in {args.out} after "
          f"{time.monotonic() - started:.0f} s (home {home})")
    if len(presented) == 2:
        took = presented[1] - presented[0]
        print(f"the demo took {took:.1f} s for --minutes {args.minutes} ({args.minutes * 60} s): "
              f"{(took / (args.minutes * 60) - 1) * 100:+.1f} %")
    window.close()
    store.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
