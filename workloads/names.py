"""The one rule for a name that becomes a file or folder name: a run id (``--run-id``, a bundle's
run), an import's dataset name. Such a name must be the same name on Windows, macOS and Linux and
look like no other:

- in its NFKC normal form (``ｒｕｎ`` is ``run``; NFC and NFD spellings of one name are one name);
- no control, format, bidi, private-use or unassigned character, none of the blank letters
  (U+3164 HANGUL FILLER, U+2800 BRAILLE BLANK, ...) that show as nothing;
- a name, never a path: no ``/`` or ``\\``, never ``..``, not ``.`` first; none of the characters
  Windows refuses (``<>:"|?*``: ``C:x`` would be a drive and a stream);
- no trailing dot or space (Windows drops them: ``run.`` is ``run``), no leading space;
- no reserved device name, with or without an extension, in any case (``CON``, ``nul.txt``, ``COM1``);
- at most ``MAX_CHARS`` characters and ``MAX_BYTES`` bytes of UTF-8 (every file system allows
  255; 64 emoji are 256);
- and where the name joins others (a catalog's run ids), not a look-alike of one of them: character
  by character the same but for case or a Unicode confusable (the ``confusable_homoglyphs`` data),
  as ``а1`` (Cyrillic) is of ``a1``, ``2O26`` of ``2026``, or ``A1`` of ``a1`` on a file system
  that ignores case.
"""
from __future__ import annotations

import json
import unicodedata
from collections.abc import Iterable
from functools import lru_cache
from pathlib import Path

MAX_CHARS = 64
MAX_BYTES = 128
WINDOWS_FORBIDDEN = '<>:"|?*'
RESERVED = frozenset({"CON", "PRN", "AUX", "NUL", "CONIN$", "CONOUT$", "CLOCK$",
                      *(f"COM{i}" for i in range(10)), *(f"LPT{i}" for i in range(10)),
                      *(f"COM{d}" for d in "¹²³"), *(f"LPT{d}" for d in "¹²³")})
INVISIBLE_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"})
BLANK_LETTERS = frozenset("\u115f\u1160\u3164\uffa0\u2800\u034f\u17b4\u17b5\u180e\u2060\u3000")


def check_folder_name(name: object, what: str = "run id") -> str:
    """``name`` if it is a name, never a path (what reading a folder made before this rule needs:
    it can point nowhere else); ValueError otherwise."""
    if not isinstance(name, str) or not name.strip():
        raise ValueError(f"{what} {name!r}: must be a non-empty name")
    if "/" in name or "\\" in name or ".." in name or name.startswith("."):
        raise ValueError(f"{what} {ascii(name)}: a name, not a path: no '/' or '\\', never '..', not '.' first")
    hidden = next((c for c in name if unicodedata.category(c) in INVISIBLE_CATEGORIES or c in BLANK_LETTERS), None)
    if hidden is not None:
        raise ValueError(f"{what} {ascii(name)}: holds U+{ord(hidden):04X} ({unicodedata.name(hidden, 'unnamed')}), "
                         "a character that shows as nothing or turns text around")
    return name


def check_name(name: object, what: str = "run id") -> str:
    """``name`` if it may name a new file or folder everywhere; ValueError naming it and the rule."""
    check_folder_name(name, what)
    shown = repr(name)
    normal = unicodedata.normalize("NFKC", name)
    if normal != name:
        raise ValueError(f"{what} {ascii(name)}: not in its normal form; write it {ascii(normal)} (NFKC)")
    forbidden = next((c for c in name if c in WINDOWS_FORBIDDEN), None)
    if forbidden is not None:
        raise ValueError(f"{what} {shown}: no {forbidden!r}: Windows cannot hold it in a file name"
                         + (" (it reads 'C:x' as a drive)" if forbidden == ":" else ""))
    if name != name.strip() or name.endswith("."):
        raise ValueError(f"{what} {shown}: no leading space, no trailing dot or space (Windows drops them)")
    if name.split(".")[0].strip().upper() in RESERVED:
        raise ValueError(f"{what} {shown}: {name.split('.')[0]!r} is a device name on Windows, "
                         "with or without an extension")
    if len(name) > MAX_CHARS or len(name.encode("utf-8")) > MAX_BYTES:
        raise ValueError(f"{what} {shown[:30]}...: at most {MAX_CHARS} characters and {MAX_BYTES} bytes "
                         f"({len(name)} characters, {len(name.encode('utf-8'))} bytes given)")
    return name


def look_alike(name: str, names: Iterable[str]) -> str | None:
    """One of ``names`` (not ``name`` itself) that looks like ``name``: as long, and character by
    character the same, the same but for case, or a Unicode confusable of it (one hop of
    Unicode's table: the table's chains would join letters no one confuses), else None."""
    mine = unicodedata.normalize("NFKC", name)
    return next((other for other in names if other != name and len(other) == len(mine)
                 and all(_looks_same(x, y) for x, y in zip(mine, other))), None)


def _looks_same(a: str, b: str) -> bool:
    return a == b or a.casefold() == b.casefold() or b in _alikes(a) or a in _alikes(b)


@lru_cache(maxsize=4096)
def _alikes(char: str) -> frozenset[str]:
    """``char``'s confusables (of it in either case), each in both cases."""
    found = {h["c"] for form in {char, char.upper(), char.lower()} for h in _confusables().get(form, ())
             if len(h["c"]) == 1}
    return frozenset(found | {c.casefold() for c in found} | {c.upper() for c in found})


@lru_cache(maxsize=1)
def _confusables() -> dict[str, list[dict[str, str]]]:
    """Unicode's look-alikes among letters and digits (what a name is made of), one character each:
    the library's data, or the same trimmed copy a frozen build ships (``confusables_data``)."""
    import confusable_homoglyphs                   # data only: read once, when a name is compared
    with open(Path(confusable_homoglyphs.__file__).with_name("confusables.json"), encoding="utf-8") as data:
        found = json.load(data)
    return {c: [{"c": h} for h in alikes] for c, alikes in confusables_data(found).items()}


def confusables_data(found: dict) -> dict[str, str]:
    """The library's table as kept here: each letter or digit and its one-character look-alikes
    that are letters or digits. An entry is the library's list of ``{"c": ...}`` or, in a frozen
    build's trimmed copy, already that string."""
    kept = {}
    for char, alikes in found.items():
        singles = [a if isinstance(a, str) else a["c"] for a in alikes]
        singles = "".join(h for h in singles if len(h) == 1 and h.isalnum())
        if char.isalnum() and singles:
            kept[char] = singles
    return kept
