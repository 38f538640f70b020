"""Reports 001 and 004's bulk transfers: CSV files loaded with the target's own loader (import)
and days written out with its own exporter (export).

One operation per CSV file or per day; the users value is how many load (or write) at once
(report 001 loaded its 23 daily files in parallel, report 004 one after another). Worker w takes
files w, w + users, w + 2 users... so each step moves every file once. The CSV files are written
once from the generators and reused (``workloads.datasets.csv_files``), in the parent, before any
worker starts; each step's import table is emptied right before the release, so warm-up loads do
not count twice.
"""
from __future__ import annotations

import shutil
from pathlib import Path

from workloads.datasets.csv_files import csv_files
from workloads.operations.base import Operation, WorkerContext, Workload
from workloads.scenario import Scenario
from workloads.targets.base import IMPORT_TABLE, Layout


def _share(ctx: WorkerContext, seq: int, count: int) -> int | None:
    """The index of this worker's ``seq``-th item of ``count``, or None when it has done its share."""
    index = ctx.worker + seq * ctx.step.users
    return index if index < count else None


class ImportCsv(Workload):
    name = "import"
    title = "Import daily CSV files"
    description = ("Bulk-load the dataset's daily CSV files with the target's own loader (DuckDB "
                   "read_csv, DolphinDB loadTextEx, pyarrow's CSV reader then the file format). One "
                   "operation per file; users = files loading at once. MB/s on the wire = CSV bytes.")
    reference = "report 001 §5.2, report 004 §3.1"
    op_name = "import_csv"
    roles = frozenset({"time"})
    bounded_by_operations = False
    ends_when = "every CSV file is loaded once"
    writes = True

    def scratch_table(self, params) -> str:
        return IMPORT_TABLE

    def operations_per_step(self, scenario, step, params) -> int:
        return scenario.scale.days          # every file once

    def prepare_run(self, scenario: Scenario, layout: Layout | None, run_dir: Path) -> dict:
        csv_files(scenario.dataset, scenario.scale)      # written now, in the parent, or found
        return {}

    def setup(self, ctx: WorkerContext) -> None:
        ctx.state["files"] = csv_files(ctx.scenario.dataset, ctx.scenario.scale)

    def next_op(self, ctx: WorkerContext, seq: int) -> Operation | None:
        files = ctx.state["files"]
        index = _share(ctx, seq, len(files))
        if index is None:
            return None
        file = files[index]
        return lambda: ctx.target.import_csv(ctx.layout, file.path, file.day)


class ExportCsv(Workload):
    name = "export"
    title = "Export days to CSV"
    description = ("Write each day of the layout to a CSV file with the target's own exporter "
                   "(DuckDB COPY ... TO, DolphinDB saveText, pyarrow's CSV writer for files). One "
                   "operation per day; users = days written at once. The files are removed after "
                   "each step.")
    reference = "report 004 §3.2"
    op_name = "export_csv"
    roles = frozenset({"time"})
    bounded_by_operations = False
    ends_when = "every day is written once"

    def operations_per_step(self, scenario, step, params) -> int:
        return scenario.scale.days          # every day once

    def prepare_run(self, scenario: Scenario, layout: Layout | None, run_dir: Path) -> dict:
        folder = run_dir / "export"
        folder.mkdir(parents=True, exist_ok=True)
        return {"export_dir": str(folder)}

    def finish_step(self, params: dict) -> None:
        shutil.rmtree(params["export_dir"], ignore_errors=True)
        Path(params["export_dir"]).mkdir(parents=True, exist_ok=True)

    def next_op(self, ctx: WorkerContext, seq: int) -> Operation | None:
        days = ctx.layout.days
        index = _share(ctx, seq, len(days))
        if index is None:
            return None
        day = days[index]
        path = Path(ctx.params["export_dir"]) / f"{day.isoformat()}.csv"
        return lambda: ctx.target.export_csv(ctx.layout, day, path)
