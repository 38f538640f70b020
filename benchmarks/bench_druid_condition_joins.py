"""Why Druid refuses the tick pack's as-of join and rolling mid: the one form Druid SQL accepts for
either, a join on the symbol with the time compared after it, timed at growing scales.

Druid SQL has no ASOF JOIN, no LATERAL join, and its window frames take RANGE only between UNBOUNDED
and CURRENT ROW. The texts below answer both questions as DuckDB does (``--check`` verifies it at
the first scale), but their work grows with the square of a symbol's quotes, so
``resources/queries/tick.druid.toml`` refuses them with the figures this prints. It starts a local
Druid (``workloads.local_engines``) in its home, lays out one TAQ day of ``--symbols`` symbols per
scale, and times one call of the target's own ``run_query`` with each text (the snapshot, which Druid
answers with ``LATEST_BY``, beside them). A call is given ``--limit`` seconds (the client's reply
timeout); one past it is reported as not ended.

    .venv/bin/python benchmarks/bench_druid_condition_joins.py [--rows 10000,40000,160000]
        [--symbols 500] [--limit 600] [--check] [--home DIR]
"""
from __future__ import annotations

import argparse
import dataclasses
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from bench_engines import bench_home, local_servers, machine  # noqa: E402  (a sibling script)

CONDITION_JOINS = {
    "asof-join": """SELECT t.symbol, MILLIS_TO_TIMESTAMP(MOD(TIMESTAMP_TO_MILLIS(t.__time), 86400000)) AS "time",
t.price, t.size, LATEST_BY(q.bid, MILLIS_TO_TIMESTAMP(q."_seq")) AS bid, LATEST_BY(q.ofr, MILLIS_TO_TIMESTAMP(q."_seq")) AS ofr
FROM {quotes} q
JOIN (SELECT __time, symbol, price, size, "_seq" FROM {trades}
      WHERE __time >= {day} AND __time < TIMESTAMPADD(DAY, 1, {day})) t
ON q.symbol = t.symbol AND q.__time <= t.__time
WHERE q.__time >= {day} AND q.__time < TIMESTAMPADD(DAY, 1, {day})
GROUP BY t.symbol, t.__time, t.price, t.size, t."_seq\"""",
    "rolling-mid": """SELECT s.symbol, MILLIS_TO_TIMESTAMP(s.ms) AS "time", SUM(w.mids) / SUM(w.quotes) AS mid_avg
FROM (SELECT symbol, MOD(TIMESTAMP_TO_MILLIS(__time), 86400000) AS ms FROM {quotes}
      WHERE __time >= {day} AND __time < TIMESTAMPADD(DAY, 1, {day}) AND symbol IN ({symbols}) GROUP BY 1, 2) s
JOIN (SELECT symbol, MOD(TIMESTAMP_TO_MILLIS(__time), 86400000) AS ms, SUM((bid + ofr) / 2) AS mids, COUNT(*) AS quotes
      FROM {quotes} WHERE __time >= {day} AND __time < TIMESTAMPADD(DAY, 1, {day}) AND symbol IN ({symbols})
      GROUP BY 1, 2) w
ON s.symbol = w.symbol AND w.ms BETWEEN s.ms - ({seconds} - 1) * 1000 AND s.ms
GROUP BY s.symbol, s.ms""",
}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", default="10000,40000,160000", help="quotes a day, one scale each")
    parser.add_argument("--symbols", type=int, default=500)
    parser.add_argument("--limit", type=float, default=600.0, help="seconds a call may take")
    parser.add_argument("--check", action="store_true", help="verify the texts' answers against DuckDB first")
    parser.add_argument("--home", type=Path)
    args = parser.parse_args()
    home = bench_home(args.home, "tickbench-druid-joins-")

    from workloads.datasets.schema import Scale, StringMode
    from workloads.queries import load_suite
    from workloads.queries.suites import draw_values
    from workloads.targets import make_target

    suite = load_suite("tick")
    queries = {"snapshot": suite.query("snapshot")}
    for qid, text in CONDITION_JOINS.items():        # the refused form, put back for this benchmark only
        query = suite.query(qid)
        queries[qid] = dataclasses.replace(query, texts={**query.texts, "druid": text},
                                           refusals={k: v for k, v in query.refusals.items() if k != "druid"})
    print(f"# Druid's condition joins, one call each; {machine()}")
    with local_servers(home, ["druid"]) as servers:
        config = {**servers["druid"], "timeout": args.limit}
        for n, rows in enumerate(int(r) for r in args.rows.split(",")):
            scale = Scale(days=1, rows_per_day=rows, symbols=args.symbols)
            target = make_target("druid", config)
            layout = target.prepare("taq", scale, StringMode.ARROW)
            target.open(layout)
            try:
                if args.check and n == 0:
                    check(scale, queries, config, home)
                for qid, query in queries.items():
                    values = draw_values(query, layout.days, layout.keys_sample)
                    began = time.perf_counter()
                    try:
                        answer = f"{target.run_query(layout, query, values).rows:,} rows"
                    except Exception as exc:  # the server's timeout, or its refusal, in words
                        answer = f"not ended: {type(exc).__name__}: {str(exc)[:200]}"
                    print(f"{rows:>10,} quotes a day  {qid:<12} {time.perf_counter() - began:8.2f} s  {answer}",
                          flush=True)
            finally:
                target.close()
    return 0


def check(scale, queries: dict, config: dict, home: Path) -> None:
    """The condition joins answer as DuckDB does (``workloads.queries.verify``)."""
    from workloads.queries import load_suite
    from workloads.queries.verify import SAME, verify

    tick = load_suite("tick")
    suite = dataclasses.replace(tick, queries=tuple(queries.get(q.id, q) for q in tick.queries))
    verdicts = verify("taq", scale, [("duckdb", "duckdb", {"path": str(home / "check.duckdb")}),
                                     ("druid", "druid", config)], [suite])
    for key, row in verdicts.verdicts.items():
        if key[1] in queries:
            print(f"# verify {key[1]}: Druid {row['druid']}" + ("" if row["druid"] == SAME else " (not DuckDB's answer)"))


if __name__ == "__main__":
    raise SystemExit(main())
