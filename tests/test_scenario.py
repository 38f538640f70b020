import pytest

from workloads.datasets.schema import Scale
from workloads.operations import WORKLOADS, get_workload
from workloads.operations.params import Param
from workloads.scenario import Scenario


def test_toml_round_trip_keeps_everything_but_the_password(tmp_path):
    scenario = Scenario(name="cold pickle", dataset="taq", scale=Scale(days=2, rows_per_day=5000),
                        target="dolphindb", target_config={"nodes": ["h:1"], "password": "secret"},
                        workload="slice-download", params={"rows_per_user": 1000}, users=(1, 2, 4),
                        cache="cold", operations=0, duration_s=5.0)
    path = tmp_path / "s.toml"
    scenario.save_toml(path)
    assert "secret" not in path.read_text()
    loaded = Scenario.load_toml(path)
    assert loaded.with_changes(target_config={**loaded.target_config, "password": "secret"}) == scenario


@pytest.mark.parametrize("changes, message", [
    ({"cache": "tepid"}, "cache must be one of"),
    ({"users": (0,)}, "users must be"),
    ({"strings": "utf16"}, "unknown string mode"),
    ({"operations": -1}, "must not be negative"),
])
def test_bad_scenarios_are_refused_with_a_reason(changes, message):
    with pytest.raises(ValueError, match=message):
        Scenario(**changes)


def test_broken_toml_names_the_file(tmp_path):
    path = tmp_path / "bad.toml"
    path.write_text("name = [unclosed")
    with pytest.raises(ValueError, match="bad.toml: not a valid scenario file"):
        Scenario.load_toml(path)


def test_param_coercion_and_limits():
    p = Param("n", "Rows", "int", 10, 1, 100, "rows")
    assert p.coerce("42") == 42
    with pytest.raises(ValueError, match="Rows: 0 is below the minimum 1 rows"):
        p.coerce(0)
    with pytest.raises(ValueError, match="is not a number"):
        p.coerce("lots")
    lst = Param("b", "Batches", "int_list", [1], 1, 1000, "rows")
    assert lst.coerce("10, 100,1000") == [10, 100, 1000]
    choice = Param("c", "Mode", "choice", "a", choices=("a", "b"))
    with pytest.raises(ValueError, match="not one of a, b"):
        choice.coerce("z")


def test_workload_params_validated_and_unknown_rejected():
    sweep = get_workload("upload-sweep")
    steps = sweep.steps(Scenario(workload="upload-sweep", params={"batch_sizes": "10,1000"}))
    assert [s.params["batch_rows"] for s in steps] == [10, 1000] and all(s.users == 1 for s in steps)
    with pytest.raises(ValueError, match="has no parameter"):
        get_workload("read-day").validate({"bogus": 1})
    with pytest.raises(ValueError, match="unknown workload"):
        get_workload("nope")
    assert {"read-day", "slice-download", "upload-sweep", "concurrent-append", "minute-bars"} <= set(WORKLOADS)


def test_operation_bounded_workload_needs_a_count_or_duration(tmp_path):
    from workloads.run.runner import Runner
    from workloads.results.store import ResultsStore
    store = ResultsStore(tmp_path / "results")
    with pytest.raises(ValueError, match="needs a number of operations per user or a duration"):
        Runner(Scenario(workload="read-day", operations=0, duration_s=0), store)
    Runner(Scenario(workload="slice-download", operations=0, duration_s=0), store)  # ends by rows


def test_shipped_scenarios_and_playlists_load():
    from workloads.paths import resources_dir
    from workloads.playlists import load_playlist
    folder = resources_dir() / "scenarios"
    presets = sorted(folder.glob("*.toml"))
    assert len(presets) >= 3
    for path in presets:
        Scenario.load_toml(path)
    title, scenarios = load_playlist(folder / "playlists" / "pickle_vs_duckdb.toml")
    assert title == "pickle vs DuckDB, cold vs warm"
    assert [(s.target, s.cache) for s in scenarios] == [("pickle", "cold"), ("pickle", "warm"),
                                                        ("duckdb", "cold"), ("duckdb", "warm")]


def test_broken_playlist_names_the_scenario(tmp_path):
    from workloads.playlists import load_playlist
    path = tmp_path / "p.toml"
    path.write_text('[[scenario]]\nworkload = "read-day"\ncache = "hot"\n')
    with pytest.raises(ValueError, match="scenario 1: cache must be one of"):
        load_playlist(path)
