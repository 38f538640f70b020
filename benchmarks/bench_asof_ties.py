"""What settling tied quotes costs the as-of join on DuckDB and ClickHouse (chDB).

Their ASOF JOIN leaves open which of a symbol's quotes of one time a trade meets (DuckDB picked the
first by arrival on one table and the last on another). The tick pack's texts join on the time with
the arrival ordinal below it (a quote's ``rowid`` or ``_seq``, a trade's the largest), so the last
quote by arrival wins, as in DolphinDB's ``aj``. This times one TAQ day's as-of join with the suite's
text and with the plain join on the time alone, in turns, through the target's own ``run_query`` (the
call a run times), and prints the median of each (on TAQ both give one answer: its trades print only
at a symbol's lone quote of a second).

    .venv/bin/python benchmarks/bench_asof_ties.py [--rows 1000000] [--symbols 500] [--repeats 7]
"""
from __future__ import annotations

import argparse
import dataclasses
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

PLAIN = {   # the texts before ties were settled
    "duckdb": """SELECT t.symbol, t.time, t.price, t.size, q.bid, q.ofr
FROM (SELECT symbol, time, price, size FROM {trades} WHERE date = $day) t
ASOF JOIN (SELECT symbol, time, bid, ofr FROM {quotes} WHERE date = $day) q
ON t.symbol = q.symbol AND t.time >= q.time""",
    "clickhouse": """SELECT t.symbol, t.time, t.price, t.size, q.bid, q.ofr
FROM (SELECT symbol, time, price, size FROM {trades} WHERE date = {day:Date}) AS t
ASOF JOIN (SELECT symbol, time, bid, ofr FROM {quotes} WHERE date = {day:Date}) AS q
ON t.symbol = q.symbol AND t.time >= q.time""",
}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000, help="quotes a day")
    parser.add_argument("--symbols", type=int, default=500)
    parser.add_argument("--repeats", type=int, default=7)
    args = parser.parse_args()

    from workloads.datasets.schema import Scale, StringMode
    from workloads.queries import load_suite
    from workloads.queries.verify import bind
    from workloads.targets import make_target
    scale = Scale(days=1, rows_per_day=args.rows, symbols=args.symbols)
    settled = load_suite("tick").query("asof-join")
    home = Path(tempfile.mkdtemp(prefix="bench-asof-"))
    print(f"TAQ day of {args.rows:,} quotes, {args.symbols} symbols; median of {args.repeats} calls each, in turns")
    for kind, config in (("duckdb", {"path": str(home / "d.duckdb")}), ("clickhouse", {"path": str(home / "ch")})):
        target = make_target(kind, config)
        layout = target.prepare("taq", scale, StringMode.ARROW)
        target.open(layout, 0)
        plain = dataclasses.replace(settled, texts={**settled.texts, kind: PLAIN[kind]})
        seconds: dict[str, list[float]] = {"settled": [], "plain": []}
        rows = {}
        for _ in range(args.repeats + 1):             # the first of each: a warm-up, not counted
            for name, query in (("settled", settled), ("plain", plain)):
                bound, values = bind(query, target, layout)
                started = time.perf_counter()
                result = target.run_query(layout, bound, values)
                seconds[name].append(time.perf_counter() - started)
                rows[name] = result.rows
        target.close()
        settled_s, plain_s = (statistics.median(seconds[n][1:]) for n in ("settled", "plain"))
        print(f"{kind:10}  settled {settled_s * 1000:8.1f} ms   plain {plain_s * 1000:8.1f} ms   "
              f"x{settled_s / plain_s:.2f}   ({rows['settled']:,} trades; plain {rows['plain']:,})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
