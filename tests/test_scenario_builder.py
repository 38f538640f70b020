"""The scenario form: what a user types becomes the Scenario the engine runs, and back."""
from __future__ import annotations

import pytest
from PySide6.QtWidgets import QMessageBox

from widgets.scenario.builder import ScenarioBuilder
from workloads.datasets.schema import Scale
from workloads.scenario import Scenario

LOCAL = [("duckdb", "DuckDB (embedded)", "duckdb", {"path": "/tmp/x.duckdb"}),
         ("pickle", "Pickle files", "pickle", {"root": "/tmp/files"})]


@pytest.fixture
def builder(make_widget, tmp_path):
    form = make_widget(ScenarioBuilder, tmp_path, size=(480, 900))
    form.set_targets(LOCAL)
    return form


def test_the_form_round_trips_a_scenario(builder, tmp_path):
    scenario = Scenario(name="slices", dataset="level2", scale=Scale(days=3, rows_per_day=50_000, symbols=80),
                        strings="category", target="pickle", target_config=LOCAL[1][3],
                        workload="slice-download", params={"rows_per_user": 12_345}, users=(1, 4, 16),
                        cache="cold", operations=0, duration_s=30.0)
    builder.set_scenario(scenario)
    assert builder.scenario() == scenario
    path = tmp_path / "s.toml"
    builder.save_to(path)
    builder.set_scenario(Scenario(target="duckdb", target_config=LOCAL[0][3]))
    assert builder.load_from(path) == scenario and builder.scenario() == scenario


def test_each_workload_shows_its_own_parameters(builder):
    builder.workload_combo.setCurrentIndex(builder.workload_combo.findData("upload-sweep"))
    assert set(builder.param_form.values()) == {"batch_sizes", "rows_per_step"}
    assert "report 002" in builder.workload_note.text()
    builder.workload_combo.setCurrentIndex(builder.workload_combo.findData("read-day"))
    assert builder.param_form.values() == {"columns": "all"}      # report 000: all, or without strings


def test_a_bad_users_list_is_explained_and_nothing_runs(builder, qtbot):
    builder.users_edit.setText("1,two,4")
    with qtbot.assertNotEmitted(builder.run_requested):
        builder.run_button.click()
    assert "Users" in builder.error_label.text() and "1,2,4,8" in builder.error_label.text()


def test_run_emits_the_scenario(builder, qtbot):
    builder.set_scenario(Scenario(name="go", target="duckdb", target_config=LOCAL[0][3], users=(1, 2)))
    with qtbot.waitSignal(builder.run_requested) as emitted:
        builder.run_button.click()
    assert emitted.args[0].name == "go" and emitted.args[0].users == (1, 2)


def test_too_large_data_is_flagged_and_needs_confirmation(builder, qtbot, monkeypatch):
    huge = Scenario(name="seed size", target="duckdb", target_config=LOCAL[0][3],
                    scale=Scale(days=5000, rows_per_day=2_000_000_000), users=(128,))
    builder.set_scenario(huge)
    assert builder.estimate_label.text().startswith("⚠ Too large for this machine")
    asked = []
    monkeypatch.setattr(QMessageBox, "question",
                        lambda *a, **k: asked.append(a) or QMessageBox.StandardButton.No)
    with qtbot.assertNotEmitted(builder.run_requested):
        builder.run_button.click()
    assert asked and "not started" in builder.error_label.text()
    monkeypatch.setattr(QMessageBox, "question", lambda *a, **k: QMessageBox.StandardButton.Yes)
    with qtbot.waitSignal(builder.run_requested):
        builder.run_button.click()


def test_small_data_shows_the_estimate_without_warning(builder):
    builder.set_scenario(Scenario(target="duckdb", target_config=LOCAL[0][3],
                                  scale=Scale(days=2, rows_per_day=100_000)))
    text = builder.estimate_label.text()
    assert text.startswith("Data ~") and "Free:" in text and "⚠" not in text


# --- names, length, the foot ---------------------------------------------------------------------------
def test_a_presets_name_goes_when_a_setting_changes_and_the_run_is_named_by_what_it_is(builder):
    builder.set_scenario(Scenario(name="Quick start: DuckDB read-day", target="duckdb",
                                  target_config=LOCAL[0][3], users=(1,)))
    assert builder.scenario().name == "Quick start: DuckDB read-day"
    builder.target_combo.setCurrentIndex(builder.target_combo.findData("pickle"))
    assert builder.name_edit.text() == ""
    assert builder.scenario().name == "pickle · read-day · 1 user · warm cache"
    assert builder.name_edit.placeholderText() == "pickle · read-day · 1 user · warm cache"
    builder.users_edit.setText("1,2,4")
    assert builder.scenario().name == "pickle · read-day · 1-4 users · warm cache"


def test_a_name_the_user_types_stays_whatever_changes(builder, qtbot):
    builder.name_edit.clear()
    qtbot.keyClicks(builder.name_edit, "my own")
    builder.cache_combo.setCurrentIndex(builder.cache_combo.findData("cold"))
    builder.users_edit.setText("8")
    assert builder.scenario().name == "my own"


def test_the_length_is_operations_or_a_duration_never_both(builder):
    builder.set_scenario(Scenario(name="x", target="duckdb", target_config=LOCAL[0][3], operations=7,
                                  duration_s=30.0))
    assert builder.by_ops_radio.isChecked() and not builder.duration_spin.isEnabled()
    assert (builder.scenario().operations, builder.scenario().duration_s) == (7, 0.0)
    builder.by_duration_radio.setChecked(True)
    assert not builder.ops_spin.isEnabled()
    assert (builder.scenario().operations, builder.scenario().duration_s) == (0, 30.0)
    builder.workload_combo.setCurrentIndex(builder.workload_combo.findData("concurrent-append"))
    assert builder.by_ops_radio.isHidden() and "or after as many operations as set below" in builder.length_note.text()


def test_run_and_stop_stay_visible_at_the_foot_however_tall_the_form(make_widget, tmp_path):
    form = make_widget(ScenarioBuilder, tmp_path, size=(420, 300))
    form.set_targets(LOCAL)
    for button in (form.run_button, form.stop_button):
        assert button.isVisible() and button.visibleRegion().boundingRect().height() == button.height()
    assert form.scroll.verticalScrollBar().maximum() > 0          # the form scrolls, the buttons do not


def test_counts_are_said_in_the_singular_for_one(builder):
    builder.days_spin.setValue(1)
    assert builder.days_spin.text().endswith("1 day")
    builder.days_spin.setValue(3)
    assert builder.days_spin.text().endswith("3 days")


def test_the_wheel_scrolls_the_form_and_never_changes_an_unfocused_target(make_widget, tmp_path):
    from tests.wheel_events import wheel

    form = make_widget(ScenarioBuilder, tmp_path, size=(420, 300))
    form.set_targets(LOCAL)
    form.set_scenario(Scenario(name="x", target="duckdb", target_config=LOCAL[0][3]))
    form.scroll.ensureWidgetVisible(form.target_combo)
    before, scrolled = form.target_combo.currentData(), form.scroll.verticalScrollBar().value()
    wheel(form.target_combo, steps=-2)
    assert form.target_combo.currentData() == before == "duckdb"
    assert form.scroll.verticalScrollBar().value() != scrolled          # the form moved instead


def test_a_form_error_goes_once_the_field_is_fixed(builder, qtbot):
    """Issue 41: the error stayed after the field was fixed."""
    builder.users_edit.setText("1,two")
    with qtbot.assertNotEmitted(builder.run_requested):
        builder.run_button.click()
    assert "Users" in builder.error_label.text()
    builder.users_edit.setText("1,2")
    assert builder.error_label.text() == ""
