"""One rule for names that become files or folders (``workloads.names``): each part of it refuses
what it must and lets ordinary names through, and run ids and import names share it."""
from __future__ import annotations

import pytest

from workloads.datasets.imported import check_name as check_import_name
from workloads.names import MAX_BYTES, check_folder_name, check_name, look_alike
from workloads.paths import check_run_id, run_path


@pytest.mark.parametrize("name, rule", [
    ("\u3164", "U+3164 (HANGUL FILLER)"),
    ("a\u2800", "U+2800 (BRAILLE PATTERN BLANK)"),
    ("a\u200bb", "U+200B (ZERO WIDTH SPACE)"),
    ("a\u2066b", "U+2066 (LEFT-TO-RIGHT ISOLATE)"),
    ("a\ue000", "U+E000"),
    ("e\u0301", "not in its normal form"),
    ("\uff41", "write it 'a' (NFKC)"),
    ("CON", "device name"), ("con", "device name"), ("nul.txt", "device name"), ("COM1", "device name"),
    ("lpt9.tar.gz", "device name"), ("COM\u00b9", "not in its normal form"),
    ("run.", "no trailing dot"), ("run ", "no trailing dot or space"), (" run", "no leading space"),
    ("C:x", "as a drive"), ("a<b", "no '<'"), ('a"b', "no '\"'"), ("a|b", "no '|'"), ("a?", "no '?'"), ("a*", "no '*'"),
    ("a/b", "not a path"), ("..", "not a path"), (".hidden", "not a path"), ("a\\b", "not a path"),
    ("\U0001f600" * 33, f"{MAX_BYTES} bytes"), ("r" * 65, "at most 64 characters"), ("", "non-empty"),
])
def test_a_name_no_os_may_hold_or_that_is_not_what_it_shows_is_refused_naming_the_rule(name, rule):
    with pytest.raises(ValueError) as refused:
        check_name(name)
    assert rule in str(refused.value) and "\n" not in str(refused.value)


@pytest.mark.parametrize("name", ["20261203-102720-580d", "my run 1", "Über-lauf", "日本語のラン", "a.b", "[red]a1",
                                  "\U0001f600" * 32, "conveyor", "com10", "r" * 64])
def test_ordinary_names_pass(name):
    assert check_name(name) == name


def test_run_ids_and_import_names_share_the_rule():
    for check in (check_run_id, check_import_name):
        with pytest.raises(ValueError, match="device name"):
            check("con")
    assert check_import_name("quotes") == "quotes"


def test_a_folder_made_before_the_rule_is_still_found_but_never_outside(tmp_path):
    assert run_path(tmp_path, "run.") == tmp_path / "run."       # an old run named so can still be read and deleted
    for bad in ("../x", "a/b", "x\ny", ".."):
        with pytest.raises(ValueError):
            check_folder_name(bad)


@pytest.mark.parametrize("name, held", [("\u04301", "a1"), ("A1", "a1"), ("2O26", "2026"), ("I1", "l1"),
                                        ("r\u0075n", "RUN"), ("\u03bf1", "o1")])
def test_a_look_alike_of_a_held_name_is_found(name, held):
    assert look_alike(name, ["other", held]) == held


@pytest.mark.parametrize("name, held", [("ab", "ac"), ("a1", "a1x"), ("20261203-102720-580d", "20261203-102720-580e"),
                                        ("a1", "a1")])
def test_different_names_are_not_look_alikes(name, held):
    assert look_alike(name, [held]) is None
