"""Reproductions carry each report's DolphinDB method (node policy, protocol, compression,
replicas, each citing its section); the user can run with their own settings instead, and the
report's card shows where the two differ."""
from __future__ import annotations

import sys
from collections import namedtuple

import pytest

from widgets.reports.gallery import ReportGallery
from workloads.reproduce.catalog import REPORTS, report_card
from workloads.reproduce.method import Setting, apply, differences, summary

DDB_KEY = "ddb:lab"
VersionInfo = namedtuple("VersionInfo", "major minor micro releaselevel serial")


def lab_profile(**overrides) -> dict:
    """A DolphinDB target as the targets panel gives it: a profile with its own settings."""
    return {"profile": {"name": "lab", "user": "admin", "protocol": "DDB", "compress": False,
                        "node_policy": "one", **overrides,
                        "nodes": [{"host": "127.0.0.1", "port": 8900, "role": "controller"},
                                  {"host": "127.0.0.1", "port": 8848, "role": "data"}]},
            "db_prefix": "dfs://tickbench"}


def ddb_target(**overrides):
    return (DDB_KEY, "DolphinDB (lab)", "dolphindb", lab_profile(**overrides))


# --- the catalog -----------------------------------------------------------------------------------
def test_report_002s_downloads_run_users_on_random_nodes_with_compression():
    download = report_card("002").experiment("download")
    ((arm, scenario),) = download.scenarios("tiny", subject="dolphindb", subject_config=lab_profile())
    assert scenario.target_config["node_policy"] == "random" and scenario.target_config["compress"] is True
    assert scenario.target_config["protocol"] == "DDB"
    assert scenario.target_config["profile"]["node_policy"] == "one"          # the user's profile is kept
    cites = {s.key: s.cite for s in download.method_of(arm)}
    assert cites["node_policy"].startswith("§5") and "§7" in cites["compress"]
    # the user's own settings, when asked for
    ((_, own),) = download.scenarios("tiny", subject="dolphindb", subject_config=lab_profile(), use_method=False)
    assert "node_policy" not in own.target_config and "compress" not in own.target_config


def test_the_method_reaches_the_target_the_run_builds():
    from workloads.targets.dolphindb import profile_from_config

    (_, scenario), = report_card("002").experiment("download").scenarios(
        "tiny", subject="dolphindb", subject_config={**lab_profile(), "password": "x"})
    profile = profile_from_config(scenario.target_config)
    assert (profile.node_policy, profile.compress, profile.protocol) == ("random", True, "DDB")


def test_report_000_reads_with_pickle_on_one_node_and_its_readers_on_one_and_on_several():
    readers = report_card("000").experiment("readers")
    configs = {arm.key: s.target_config for arm, s in readers.scenarios("tiny", subject="dolphindb",
                                                                         subject_config=lab_profile())}
    assert configs["db-3"]["node_policy"] == "one" and configs["db-3-nodes"]["node_policy"] == "round_robin"
    if sys.version_info.minor < 13:
        assert configs["db-3"]["protocol"] == "PICKLE" and configs["db-3"]["compress"] is False
    assert "node_policy" not in configs["pickle-3"]
    day = report_card("000").experiment("day-l1")
    assert {s.key: s.value for s in day.method} == {"node_policy": "one", "protocol": "PICKLE", "compress": False,
                                                    "replicas": 2}
    assert all(s.cite.startswith("§") for s in day.method)


def test_every_report_runs_dolphindb_jobs_at_parallelism_2_unless_the_user_keeps_their_own():
    for report in REPORTS.values():
        for exp in report.experiments:
            for arm, s in exp.scenarios("tiny", subject="dolphindb", subject_config=lab_profile()):
                if arm.target == "subject":
                    assert (s.target_config["parallelism"], s.target_config["priority"]) == (2, 4), s.experiment
            for arm, s in exp.scenarios("tiny", subject="dolphindb", subject_config=lab_profile(), use_method=False):
                assert "parallelism" not in s.target_config


def test_other_subjects_and_sides_are_untouched():
    download = report_card("002").experiment("download")
    ((_, scenario),) = download.scenarios("tiny", subject="duckdb", subject_config={"path": "/tmp/x.duckdb"})
    assert scenario.target_config == {"path": "/tmp/x.duckdb"}
    for report in REPORTS.values():                      # replicas are never written into a config
        for exp in report.experiments:
            for arm, s in exp.scenarios("tiny", subject="dolphindb", subject_config=lab_profile()):
                assert "replicas" not in s.target_config


def test_pickle_is_not_applied_where_the_client_would_send_ddb(monkeypatch):
    monkeypatch.setattr(sys, "version_info", VersionInfo(3, 13, 0, "final", 0))
    method = report_card("000").experiment("day-l1").method
    assert "protocol" not in apply(method, {}) and apply(method, {})["node_policy"] == "one"
    text = summary([("", method)], "dolphindb", lab_profile(), True)
    assert text.differs and "Not applied here:</b> PICKLE is not available on Python 3.13" in text.html


def test_differences_read_the_config_as_the_target_does():
    method = (Setting("node_policy", "random", "§5"), Setting("compress", True, "§5"),
              Setting("replicas", 2, "§2"))
    assert [d.text for d in differences(method, lab_profile())] == [
        "node policy: yours every user on one data node, the report's each user on a data node chosen at random",
        "compression: yours no compression, the report's compressed transfer"]
    assert differences(method, {**lab_profile(), "node_policy": "random", "compress": True}) == []
    assert differences(method, lab_profile(node_policy="random", compress="true")) == []


# --- the card ------------------------------------------------------------------------------------------
@pytest.fixture
def gallery(make_widget, tmp_path):
    widget = make_widget(ReportGallery, tmp_path / "data", size=(1100, 900))
    widget.set_targets([ddb_target()])
    return widget


def test_the_card_shows_the_difference_between_the_reports_method_and_the_users_settings(qtbot, gallery):
    row = gallery.row("002", "download")
    row.subject_combo.setCurrentIndex(row.subject_combo.findData(DDB_KEY))
    assert row.method_check.isVisible() and row.method_check.isChecked()
    text = row.method_label.text()
    assert "each user on a data node chosen at random (§5: each user connects to a data node chosen at random)" in text
    assert "These runs use it; your target's own settings differ: node policy: yours every user on one data node" in text
    assert row.method_label.property("differs") is False
    assert [s.target_config["node_policy"] for s in row.scenarios()] == ["random"]

    row.method_check.setChecked(False)                      # the user's own settings
    text = row.method_label.text()
    assert "These runs use your target's settings, which differ:" in text
    assert "compression: yours no compression, the report's compressed transfer" in text
    assert row.method_label.property("differs") is True
    assert "node_policy" not in row.scenarios()[0].target_config
    _save(qtbot, gallery.card("002"), "/tmp/tickbench_method_card_own_settings.png")

    gallery.set_targets([ddb_target(node_policy="random", compress=True)])
    row.method_check.setChecked(True)
    assert ("your target's own settings differ: job parallelism: yours job parallelism 64, the report's "
            "job parallelism 2.") in row.method_label.text()
    gallery.set_targets([(DDB_KEY, "DolphinDB (lab)", "dolphindb",
                          {**lab_profile(node_policy="random", compress=True), "parallelism": 2})])
    assert "Your target's settings already match it." in row.method_label.text()


def test_the_card_names_replicas_and_other_subjects(qtbot, gallery):
    row = gallery.row("003", "read")
    assert "Replicas: the report's cluster kept 2 replicas; Tickbench does not set them" not in row.method_label.text()
    assert "not DolphinDB" in row.method_label.text()          # the embedded default is the subject
    row.subject_combo.setCurrentIndex(row.subject_combo.findData(DDB_KEY))
    assert "Replicas: the report's cluster kept 2 replicas; Tickbench does not set them" in row.method_label.text()
    upload = gallery.row("002", "upload").method_label.text()      # the report says nothing but its API's
    assert "job parallelism 2 (the reports name none: their API sent 2" in upload and "node policy" not in upload
    readers = gallery.row("000", "readers")
    readers.subject_combo.setCurrentIndex(readers.subject_combo.findData(DDB_KEY))
    text = readers.method_label.text()
    assert "method for database API, 1 and 3 readers on one node:</b>" in text
    assert "method for database API, 1 and 3 readers on different nodes:</b>" in text
    _save(qtbot, gallery.card("000"), "/tmp/tickbench_method_card_000.png")


def _save(qtbot, widget, path: str) -> None:
    """The card as a user sees it, for a look (offscreen), once every label has the height its
    wrapped text needs (the layout catches up with a changed text on the event loop)."""
    from PySide6.QtWidgets import QLabel

    labels = [w for w in widget.findChildren(QLabel) if w.isVisible() and w.wordWrap()]
    qtbot.waitUntil(lambda: all(w.height() >= w.heightForWidth(w.width()) for w in labels), timeout=3000)
    assert widget.grab().save(path)
