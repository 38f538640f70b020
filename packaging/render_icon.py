"""Render the app icon (resources/icons/tickbench.svg) to a raster file with Qt.

Linux desktop entries want a PNG, Windows executables an .ico (PyInstaller's ``icon=``);
Qt writes both (the .ico through the ``qico`` image-format plugin).

    python packaging/render_icon.py OUT.png [--size 256]
    python packaging/render_icon.py OUT.ico --size 256
"""
from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

SVG = Path(__file__).resolve().parent.parent / "resources" / "icons" / "tickbench.svg"


def render(svg: Path, out: Path, size: int) -> None:
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")  # no display needed on build machines
    from PySide6.QtCore import Qt
    from PySide6.QtGui import QGuiApplication, QImage, QPainter
    from PySide6.QtSvg import QSvgRenderer

    app = QGuiApplication.instance() or QGuiApplication(sys.argv[:1])  # noqa: F841 (image plugins)
    renderer = QSvgRenderer(str(svg))
    if not renderer.isValid():
        raise SystemExit(f"render_icon: {svg} is not a valid SVG")
    image = QImage(size, size, QImage.Format.Format_ARGB32_Premultiplied)
    image.fill(Qt.GlobalColor.transparent)
    painter = QPainter(image)
    renderer.render(painter)
    painter.end()
    out.parent.mkdir(parents=True, exist_ok=True)
    if not image.save(str(out)):
        raise SystemExit(f"render_icon: Qt could not write {out} (is the image-format plugin for "
                         f"{out.suffix} available?)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path, help="output file; the suffix picks the format (.png, .ico)")
    parser.add_argument("--size", type=int, default=256, help="width and height in pixels")
    parser.add_argument("--svg", type=Path, default=SVG)
    args = parser.parse_args()
    render(args.svg, args.out, args.size)
    print(f"{args.out} ({args.size}x{args.size})")


if __name__ == "__main__":
    main()
