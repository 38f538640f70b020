"""The workloads a scenario can run, by name."""
from __future__ import annotations

from workloads.operations.base import StepPlan, WorkerContext, Workload
from workloads.operations.compute import MapReduceMinuteBars, OlsSpread, SpreadByMinute
from workloads.operations.reads import MinuteBars, ReadDay, SliceDownload
from workloads.operations.writes import ConcurrentAppend, UploadSweep
from workloads.operations.harness import NoOp
from workloads.operations.queries import QuerySuite
from workloads.operations.tick import TICK_WORKLOADS
from workloads.operations.transfers import ExportCsv, ImportCsv

WORKLOADS: dict[str, Workload] = {w.name: w for w in (
    ReadDay(), SliceDownload(), UploadSweep(), ConcurrentAppend(), MinuteBars(), NoOp(),
    SpreadByMinute(), MapReduceMinuteBars(), OlsSpread(), ImportCsv(), ExportCsv(), QuerySuite(),
    *TICK_WORKLOADS,
)}


def get_workload(name: str) -> Workload:
    try:
        return WORKLOADS[name]
    except KeyError:
        raise ValueError(f"unknown workload {name!r}: choose one of {', '.join(WORKLOADS)}") from None


__all__ = ["WORKLOADS", "get_workload", "StepPlan", "WorkerContext", "Workload"]
