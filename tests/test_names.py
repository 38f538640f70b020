"""Every name a user types is checked whole: nothing after the name (a newline above all) gets
through into a DolphinDB script, a folder name or a table name.

Property tests, each with explicit examples of the trailing-newline case, so a run that happens
not to generate such a string still checks it (hypothesis examples always run).
"""
from __future__ import annotations

import re

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from workloads.datasets.imported import check_name
from workloads.targets.dolphindb import quote as q
from workloads.targets.files import ParquetTarget

names = st.text(alphabet=st.sampled_from("abcAZ_09-\n\r\t ./\\\"'"), max_size=12)
TRAILING = ["A\n", "quotes\n", "abc\n", "a\r\n", "x\t", "name \n"]


def _accepted(check, value) -> bool:
    try:
        check(value)
    except ValueError:
        return False
    return True


@settings(max_examples=300, deadline=None)
@given(names)
@example("A\n")
@example("quotes\n")
@example("q\r")
@example("")
def test_identifiers_accept_only_plain_names(value):
    assert _accepted(q.identifier, value) == bool(
        re.fullmatch(r"[A-Za-z][A-Za-z0-9_]{0,62}", value) and value.lower() not in q.RESERVED)


@settings(max_examples=300, deadline=None)
@given(names.map(lambda s: "dfs://" + s))
@example("dfs://x\n")
@example("dfs://tickbench\n")
@example("dfs://a/b\n")
@example("dfs://x\r\n")
def test_database_paths_accept_only_plain_paths(value):
    assert _accepted(q.db_path, value) == bool(
        re.fullmatch(r"dfs://[A-Za-z0-9_/]+", value) and "//" not in value[6:])


@settings(max_examples=300, deadline=None)
@given(names)
@example("abc\n")
@example("myquotes\n")
@example("a\n\n")
def test_import_names_accept_only_folder_safe_names(value):
    assert _accepted(check_name, value) == bool(re.fullmatch(r"[a-z][a-z0-9_]{0,39}", value))


@settings(max_examples=200, deadline=None)
@given(names)
@example("upload\n")
@example("scratch\n")
def test_append_table_names_of_file_targets_accept_only_plain_names(value):
    from workloads.datasets.schema import Scale, StringMode
    from workloads.targets.base import Layout

    layout = Layout("taq", Scale(), StringMode.ARROW, (), (), 0, 0, False, "/nonexistent")
    accepted = _accepted(lambda v: ParquetTarget({"root": "/nonexistent"}).append_dir(layout, v), value)
    # "" means the default scratch table
    assert accepted == (value == "" or bool(re.fullmatch(r"[A-Za-z0-9_]{1,64}", value)))


@pytest.mark.parametrize("value", TRAILING)
def test_a_trailing_newline_is_refused_everywhere(value):
    for check in (q.identifier, lambda v: q.db_path("dfs://" + v), check_name):
        assert not _accepted(check, value), (check, value)
