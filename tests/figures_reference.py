"""Step figures computed independently of the engine, straight from the raw records, so tests
can check every place that shows a figure (the engine's own SQL, the live snapshot, compare,
history, the report, ``show``) against something that does not share its code."""
from __future__ import annotations

import numpy as np
import pandas as pd

PHASES = ("io", "read", "query", "server", "transfer", "decode")


def reference_steps(ops: pd.DataFrame) -> dict[int, dict]:
    """step -> figures, from every record of one run (any kind)."""
    result = {}
    for step, rows in ops.groupby("step"):
        measured = rows[rows["kind"] == "measured"]
        ok = measured[measured["ok"]]
        window = float((measured["t_start"] + measured["total_s"]).max()) if len(measured) else 0.0
        figures = {
            "ops": len(ok), "errors": int((~measured["ok"]).sum()), "window_s": window,
            "rows_per_s": ok["rows"].sum() / window if window else None,
            "mb_per_s": ok["bytes"].sum() / window / 1e6 if window else None,
            "ops_per_s": len(ok) / window if window else None,
        }
        totals = ok["total_s"].to_numpy(dtype=float)
        if totals.size:
            figures.update(zip(("p50_s", "p95_s", "p99_s"), np.percentile(totals, (50, 95, 99))))
            figures["mean_s"] = totals.mean()
        first = rows[(rows["kind"] == "warmup") & (rows["seq"] == 0) & rows["ok"]]["total_s"]
        figures["first_op_s"] = float(np.median(first)) if len(first) else None
        probes = rows[(rows["kind"] == "probe") & rows["ok"]]
        with_phases = lambda frame: frame[[f"{p}_s" for p in PHASES]].notna().any(axis=None)  # noqa: E731
        source = probes if len(probes) and with_phases(probes) else ok
        figures["phase_source"] = "probe" if source is probes else "measured"
        figures["phases"] = {}
        for phase in PHASES:
            values = source[f"{phase}_s"].dropna().to_numpy(dtype=float)
            if values.size:
                figures["phases"][phase] = (values.mean(), len(values))
        result[int(step)] = figures
    return result
