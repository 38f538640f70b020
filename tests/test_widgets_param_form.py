"""ParamForm: editors per kind, limits and units, validation through Param.coerce, state."""
import pytest
from PySide6.QtWidgets import QCheckBox, QComboBox, QDoubleSpinBox, QLineEdit, QSpinBox

from widgets.scenario.param_form import ParamForm
from workloads.operations.params import Param

PARAMS = [
    Param("batch_rows", "Batch size", "int", 25_000, 10, 1_000_000, "rows", help="rows per request"),
    Param("duration", "Duration", "float", 30.0, 1, 3600, "s"),
    Param("strings", "Strings as", "choice", "arrow", choices=("object", "arrow", "category")),
    Param("cold", "Cold cache", "bool", False),
    Param("users", "Users sweep", "int_list", [1, 2, 4], 1, 128, "users"),
]


@pytest.fixture
def form(make_widget):
    return make_widget(ParamForm, PARAMS, size=(500, 300))


def test_each_kind_gets_its_editor_with_limits_and_unit(form):
    batch = form.editor("batch_rows")
    assert isinstance(batch, QSpinBox)
    assert (batch.minimum(), batch.maximum(), batch.suffix()) == (10, 1_000_000, " rows")
    assert batch.toolTip() == "rows per request"
    duration = form.editor("duration")
    assert isinstance(duration, QDoubleSpinBox) and duration.suffix() == " s"
    assert isinstance(form.editor("strings"), QComboBox)
    assert [form.editor("strings").itemText(i) for i in range(3)] == ["object", "arrow", "category"]
    assert isinstance(form.editor("cold"), QCheckBox)
    assert isinstance(form.editor("users"), QLineEdit)


def test_defaults_come_out_coerced(form):
    assert form.values() == {"batch_rows": 25_000, "duration": 30.0, "strings": "arrow",
                             "cold": False, "users": [1, 2, 4]}
    assert form.is_valid()


def test_spin_box_clamps_to_the_declared_limits(form):
    form.editor("batch_rows").setValue(5)
    assert form.values()["batch_rows"] == 10


def test_bad_int_list_shows_a_red_hint_and_blocks_values(form, qtbot):
    edit = form.editor("users")
    with qtbot.waitSignal(form.validity_changed, timeout=1000) as blocker:
        edit.setText("1, 2, 400")
    assert blocker.args == [False]
    hint = form._hints["users"]
    assert hint.isVisibleTo(form)
    assert hint.text() == "Users sweep: 400 is above the maximum 128 users"
    assert "color" in hint.styleSheet()
    assert form.errors() == {"users": "Users sweep: 400 is above the maximum 128 users"}
    with pytest.raises(ValueError, match="400 is above the maximum"):
        form.values()
    with qtbot.waitSignal(form.validity_changed, timeout=1000) as blocker:
        edit.setText("1, 2, 8")
    assert blocker.args == [True]
    assert not hint.isVisibleTo(form)
    assert form.values()["users"] == [1, 2, 8]


def test_not_a_number_is_named(form):
    form.editor("users").setText("1, two")
    assert form.errors()["users"] == "Users sweep: 'two' is not a number"


def test_changed_fires_on_edits(form, qtbot):
    with qtbot.waitSignal(form.changed, timeout=1000):
        form.editor("cold").setChecked(True)
    with qtbot.waitSignal(form.changed, timeout=1000):
        form.editor("strings").setCurrentText("category")
    assert form.values()["cold"] is True and form.values()["strings"] == "category"


def test_set_values_fills_and_ignores_unknown_keys(form):
    form.set_values({"batch_rows": 500, "users": [8, 16], "cold": "yes", "gone": 1})
    values = form.values()
    assert values["batch_rows"] == 500 and values["users"] == [8, 16] and values["cold"] is True
    with pytest.raises(ValueError, match="'fast' is not one of object, arrow, category"):
        form.set_values({"strings": "fast"})


def test_state_round_trip_skips_stale_values(make_widget, form):
    form.set_values({"duration": 12.5, "users": "1, 3"})
    state = form.save_state()
    other = make_widget(ParamForm, PARAMS)
    state["values"]["strings"] = "removed-choice"
    other.restore_state(state)
    assert other.values()["duration"] == 12.5 and other.values()["users"] == [1, 3]
    assert other.values()["strings"] == "arrow"


def test_rebuild_for_other_params_and_unknown_kind(form):
    form.set_params([Param("n", "N", "int", 3)])
    assert form.values() == {"n": 3}
    with pytest.raises(ValueError, match="parameter 'x': unknown kind 'date'"):
        form.set_params([Param("x", "X", "date", None)])


def test_every_shipped_workload_gets_a_form(make_widget):
    from widgets.scenario.param_form import ParamForm
    from workloads.operations import WORKLOADS

    form = make_widget(ParamForm)
    for workload in WORKLOADS.values():
        form.set_params(list(workload.params))
        assert set(form.values()) == {p.name for p in workload.params}


def test_a_word_unit_follows_the_number(make_widget):
    from widgets.scenario.param_form import unit_for

    form = make_widget(ParamForm, [Param("days", "Days", "int", 1, 0, 100, "days"),
                                   Param("batch", "Batch", "int", 1, 1, 10, "rows"),
                                   Param("wait", "Wait", "float", 1.0, 0, 10, "s")])
    days = form.editor("days")
    assert days.text() == "1 day" and form.editor("batch").text() == "1 row"
    days.setValue(2)
    assert days.text() == "2 days"
    form.set_values({"days": 1})               # set_values blocks the signals: the unit still follows
    assert days.text() == "1 day"
    assert form.editor("wait").suffix() == " s"
    assert form.values() == {"days": 1, "batch": 1, "wait": 1.0}
    assert [unit_for(1, u) for u in ("queries", "users", "ops", "s", "MB", "rows/s", "class")] == \
        ["query", "user", "op", "s", "MB", "rows/s", "class"]
    assert unit_for(0, "users") == "users" and unit_for(1.5, "days") == "days"
