"""The practitioner's hand-written tick paths answer as Tickbench's suite text does (shared by the
engines' tests of ``workloads.practitioner``)."""
from __future__ import annotations

from workloads.queries import load_suite
from workloads.queries.answers import normalise
from workloads.queries.suites import draw_values

TICK_OPS = (("asof_join", "asof-join"), ("snapshot", "snapshot"))


def assert_tick_paths_answer_as_tickbench(target, layout, paths: dict, day, key="") -> None:
    """Each path's answer on ``day``, normalised as verify does, equals the target's own run_query;
    an engine has a path for each tick query it answers, and none for one it refuses."""
    for op, query_id in TICK_OPS:
        query = load_suite("tick").query(query_id)
        assert (op in paths) == target.supports(query), op
        if op not in paths:
            continue
        values = {**draw_values(query, layout.days, layout.keys_sample), "day": day}
        ours = normalise(target.run_query(layout, query, values).frame, query.columns)
        theirs = normalise(paths[op].call(day, key), query.columns)
        assert len(ours) > 0 and theirs.equals(ours), (op, ours.head(), theirs.head())
