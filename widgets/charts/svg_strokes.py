"""SVG whose strokes every renderer draws as Qt does.

Qt's SVG generator writes a curve in data coordinates inside a group whose ``matrix(...)`` maps
them to pixels, and keeps the pen's pixel width with ``vector-effect="non-scaling-stroke"``.
Browsers honour that; librsvg (GNOME's viewers, ImageMagick, Inkscape's import) and resvg ignore
it, so the pen was scaled by the matrix: a 2 px line became a band ~130 px wide (one pixel per
x unit), drawn as large coloured blobs. Baking each such group's matrix into its children's
coordinates leaves nothing to scale: the same pixels everywhere, the attribute no longer needed.
"""
from __future__ import annotations

import re
import xml.etree.ElementTree as ET

SVG = "http://www.w3.org/2000/svg"
XLINK = "http://www.w3.org/1999/xlink"
NON_SCALING = "non-scaling-stroke"
MATRIX = re.compile(r"^\s*matrix\(([^)]*)\)\s*$")
NUMBER = r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?"
PATH_TOKEN = re.compile(rf"[A-Za-z]|{NUMBER}")
ABSOLUTE_PAIRS = set("MLCSQT")        # commands whose arguments are all (x, y) pairs


def bake_non_scaling_strokes(svg: str) -> str:
    """``svg`` with every group of non-scaling strokes under a matrix flattened into pixels."""
    ET.register_namespace("", SVG)
    ET.register_namespace("xlink", XLINK)
    root = ET.fromstring(svg)
    changed = False
    for group in root.iter(f"{{{SVG}}}g"):
        matrix = _matrix(group.get("transform", ""))
        children = list(group)
        if matrix is None or not children or not all(_bakeable(child, matrix) for child in children):
            continue
        for child in children:
            if child.tag == f"{{{SVG}}}polyline":
                child.set("points", _map_points(child.get("points", ""), matrix))
            elif child.tag == f"{{{SVG}}}rect":
                _map_rect(child, matrix)
            else:
                child.set("d", _map_path(child.get("d", ""), matrix))
            del child.attrib["vector-effect"]
        del group.attrib["transform"]
        changed = True
    if not changed:
        return svg
    return '<?xml version="1.0" encoding="UTF-8" standalone="no"?>\n' + ET.tostring(root, encoding="unicode")


def _absolute_pairs_only(d: str) -> bool:
    commands = set(re.findall(r"[A-Za-z]", d))
    return commands <= ABSOLUTE_PAIRS | {"Z", "z"}


def _bakeable(element: ET.Element, matrix: tuple[float, ...]) -> bool:
    if element.get("vector-effect") != NON_SCALING or len(element):
        return False
    if element.tag == f"{{{SVG}}}polyline":
        return True
    if element.tag == f"{{{SVG}}}rect":              # a bar: stays a rect if the matrix keeps axes
        return matrix[1] == matrix[2] == 0 and not {"rx", "ry", "transform"} & set(element.attrib)
    return element.tag == f"{{{SVG}}}path" and _absolute_pairs_only(element.get("d", ""))


def _matrix(transform: str) -> tuple[float, ...] | None:
    found = MATRIX.match(transform)
    if not found:
        return None
    values = tuple(float(v) for v in re.findall(NUMBER, found.group(1)))
    return values if len(values) == 6 else None


def _apply(matrix: tuple[float, ...], x: float, y: float) -> tuple[float, float]:
    a, b, c, d, e, f = matrix
    return a * x + c * y + e, b * x + d * y + f


def _fmt(value: float) -> str:
    return f"{value:.6g}"


def _map_points(points: str, matrix: tuple[float, ...]) -> str:
    numbers = [float(v) for v in re.findall(NUMBER, points)]
    pairs = [_apply(matrix, x, y) for x, y in zip(numbers[::2], numbers[1::2])]
    return " ".join(f"{_fmt(x)},{_fmt(y)}" for x, y in pairs)


def _map_rect(rect: ET.Element, matrix: tuple[float, ...]) -> None:
    a, _, _, d, e, f = matrix
    x, y = float(rect.get("x", 0)), float(rect.get("y", 0))
    width, height = a * float(rect.get("width", 0)), d * float(rect.get("height", 0))
    left, top = a * x + e + min(width, 0.0), d * y + f + min(height, 0.0)
    for name, value in (("x", left), ("y", top), ("width", abs(width)), ("height", abs(height))):
        rect.set(name, _fmt(value))


def _map_path(d: str, matrix: tuple[float, ...]) -> str:
    out, pending = [], []
    for token in PATH_TOKEN.findall(d):
        if token.isalpha():
            out.append(token)
            continue
        pending.append(float(token))
        if len(pending) == 2:
            x, y = _apply(matrix, *pending)
            out.append(f"{_fmt(x)},{_fmt(y)}")
            pending = []
    return " ".join(out)
