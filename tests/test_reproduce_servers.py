"""Reports 001 and 004 reproduced at tiny scale against their comparators' servers: 001 against the
real Druid, 004 against the MongoDB stand-in (apart from test_reproduce so that only these wait for the
session's servers, in the worker that runs them)."""
from __future__ import annotations

import math

from tests.test_reproduce import _reproduce
from workloads.reproduce.findings import NOT_MEASURED
from workloads.reproduce.reproduction import reproduction


def test_report_001_tiny_against_the_real_druid(tmp_path, druid_engine):
    config = {**druid_engine.config, "drop_caches": False}
    store, planned, results = _reproduce(tmp_path, "001", "druid", config)
    assert [r.status for r in results] == ["completed"] * len(planned), [r.message for r in results]
    findings = {f.statement: f for f in reproduction(store, "001").findings}
    for statement in ("import: Druid's time / the database's", "disk: the database's size / Druid's",
                      "queries: Druid's time / the database's (geometric mean)"):
        assert findings[statement].verdict != NOT_MEASURED, findings[statement].line
        assert math.isfinite(findings[statement].measured_value)
    assert len(findings["import: Druid's time / the database's"].run_ids) == 2


def test_report_004_tiny_against_the_mongodb_stand_in(tmp_path, mongo_server):
    store, planned, results = _reproduce(tmp_path, "004", "mongodb", {**mongo_server.config, "batch_rows": 7_000})
    assert [r.status for r in results] == ["completed"] * len(planned), [r.message for r in results]
    repro = reproduction(store, "004")
    measured = [f for f in repro.findings if f.verdict != NOT_MEASURED]
    assert len(measured) == len(repro.findings), [f.line for f in repro.findings]
    imports = [p for p in repro.pairs if p.figure.startswith("import") and p.experiment.startswith("devices")]
    assert {p.measured is not None for p in imports} == {True} and len(imports) == 2
