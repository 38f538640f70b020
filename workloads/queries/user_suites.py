"""A query suite the user writes: a TOML file of SQL over one dataset, its placeholders filled per engine.

    title = "My trades"
    dataset = "imp_trades"    # optional: without it the suite runs on any dataset with the roles it names
    day = "day:0"             # which day {day} is: day:K the K-th day of the layout (-1 the last); default day:0
    key = "key:0"             # which key {key} is: key:K the K-th most active key; default key:0

    [[query]]
    id = "volume"
    description = "Trades and volume per symbol on a day"
    columns = ["sym", "trades", "volume"]      # the result's columns, in order (answers compare by position)
    sql = '''SELECT {key_column} AS sym, count(*) AS trades, sum(qty) AS volume FROM {table}
             WHERE {time} >= {day_start} AND {time} < {day_end} GROUP BY 1'''
    clickhouse = '''...'''    # optional, per dialect: replaces sql on that engine

Placeholders, filled for the engine that runs the text:
``{table}`` the engine's table of the dataset; ``{time}`` the time column as the engine stores it (quoted;
Druid's ``__time``); ``{key_column}`` the key column (quoted); ``{key}`` the chosen key as a literal;
``{day}`` the chosen day as a date literal; ``{day_start}`` / ``{day_end}`` that day's midnight and the
next midnight as timestamp literals (UTC; DolphinDB's of the time column's own kind), so ``{time} >= {day_start} AND {time} < {day_end}`` selects
the day on every engine. Only these names in braces are placeholders; other braces (a JSON pipeline's)
are left as written, and any other ``{name}`` is refused as a likely typo.

Per-dialect texts (``duckdb``, ``postgres``, ``questdb``, ``clickhouse``, ``druid``, ``dolphindb``) replace
``sql`` on that engine; an engine without one runs ``sql``. ``mongodb`` is a JSON aggregation pipeline
(extended JSON: ``{day_start}`` is ``{"$date": ...}``, ``{time}`` and ``{key_column}`` bare field names,
to be written ``"${time}"``); without one MongoDB answers "not supported". Engines with no SQL of their own
(pickle, Parquet, Feather, HDF5, ArcticDB) read the day(s) their own way and DuckDB runs the ``pandas``
text (default: the ``duckdb`` text, else ``sql``) over those DataFrames.

A query using ``{day}``, ``{day_start}`` or ``{day_end}`` reads that day on those engines; any other, every day.
"""
from __future__ import annotations

import datetime as dt
import json
import re
import tomllib
from dataclasses import dataclass, replace
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from workloads.queries import suites
from workloads.queries.suites import DIALECTS, SEED_TABLES, Query, Suite, SuiteError, _draw, draw_values

if TYPE_CHECKING:
    import pandas as pd

SQL_DIALECTS = ("duckdb", "postgres", "questdb", "clickhouse", "druid", "dolphindb")
PLACEHOLDERS = ("table", "time", "key_column", "key", "day", "day_start", "day_end")
DAY_PLACEHOLDERS = ("day", "day_start", "day_end")
_FIELDS = ("id", "category", "description", "columns", "sql", "day", "key", *DIALECTS)
_PLACEHOLDER = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")
_DAY_SPEC = re.compile(r"day:-?\d+")
_KEY_SPEC = re.compile(r"key:-?\d+")
# How the engines that run SQL over the days' DataFrames answered, for verify's notes
FRAMES_NOTE = "read the day(s) its own way, then DuckDB ran the suite's SQL over those DataFrames"
TICK_SUITE = "tick"                # the tick pack's suite, which a pair of quotes and trades runs too


def is_suite_file(name: str) -> bool:
    """A ``--suite``/``suite=`` value naming a file (``FILE.toml``) rather than a suite by name."""
    return name.endswith(".toml")


def load_suite(name: str) -> Suite:
    """A suite by name (``workloads.queries.suites``; one in the user's queries folder may be in this
    module's form, as the window lists it by name), or a user's suite file (``FILE.toml``)."""
    if is_suite_file(name):
        return load_user_suite(name)
    path = suites._suite_paths().get(name)
    if path is not None and path.parent == suites.user_suites_dir() and _in_user_form(path):
        return load_user_suite(path)
    return suites.load_suite(name)


def _in_user_form(path: Path) -> bool:
    """A suite file written in this module's form: queries with ``sql``, or an import's or a table's dataset
    (any other dataset is the built-in form's, whose loader names what is wrong)."""
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return False                     # the built-in loader names what is wrong with it
    queries = data.get("query") if isinstance(data.get("query"), list) else []
    dataset = data.get("dataset")
    own = isinstance(dataset, str) and dataset.startswith(("imp_", "tbl_"))    # an import's or a table's
    return own or any(isinstance(q, dict) and "sql" in q for q in queries)


def runs_on(suite: Suite, dataset: str) -> bool:
    """Whether ``suite`` runs on ``dataset``: the one it names (an import of a built-in schema runs its
    base's suites), or any dataset for a user's suite that names none."""
    from workloads.datasets import get_dataset     # the registry, imported on use
    extra = get_dataset(dataset).info.extra
    # a desk's quotes paired with its trades read as TAQ does: the tick pack asks them as it asks taq's
    return suite.dataset in ("", dataset, extra.get("base", dataset)) or (
        bool(extra.get("tick_pack")) and suite.name == TICK_SUITE)


@dataclass(frozen=True)
class UserQuery(Query):
    """A query of a user's suite: ``texts`` hold the templates per dialect (``sql`` where no override)."""

    day_spec: str = "day:0"
    key_spec: str = "key:0"
    frames_sql: bool = False        # bound for a client-side engine: DuckDB runs ``texts['pandas']`` over frames

    @property
    def uses_day(self) -> bool:
        return any("{" + p + "}" in text for text in self.texts.values() for p in DAY_PLACEHOLDERS)


def load_user_suite(path: str | Path) -> Suite:
    path = Path(path).expanduser()
    try:
        return _load(path.resolve(), path.stat().st_mtime_ns)
    except FileNotFoundError:
        raise SuiteError(f"{path}: no such query suite file") from None


@lru_cache(maxsize=16)
def _load(path: Path, mtime_ns: int) -> Suite:   # the mtime makes an edited file load afresh
    data = suites.read_suite_toml(path)
    for key in ("title", "dataset", "day", "key"):
        if not isinstance(data.get(key, ""), str):
            raise SuiteError(f"{path.name}: {key}: expected text, not {data[key]!r:.60}")
    items = data.get("query")
    if not isinstance(items, list) or not items:
        raise SuiteError(f"{path.name}: no [[query]] tables: a suite lists at least one")
    queries = [_query(item, index, path.name, data) for index, item in enumerate(items, start=1)]
    ids = [q.id for q in queries]
    if len(set(ids)) != len(ids):
        raise SuiteError(f"{path.name}: query ids must be unique ({', '.join(sorted(i for i in set(ids) if ids.count(i) > 1))} twice)")
    return Suite(str(path), data.get("title") or path.stem, data.get("dataset", ""), "", tuple(queries))


def _query(item: Any, index: int, file: str, suite: dict) -> UserQuery:
    where = f"{file}: query {item.get('id', index) if isinstance(item, dict) else index}"
    if not isinstance(item, dict):
        raise SuiteError(f"{where}: expected a [[query]] table")
    unknown = sorted(set(item) - set(_FIELDS))
    missing = sorted({"id", "columns"} - set(item))
    if unknown or missing:
        raise SuiteError(f"{where}: " + "; ".join(
            ([f"unknown {', '.join(unknown)} (a query has {', '.join(_FIELDS)})"] if unknown else [])
            + ([f"missing {', '.join(missing)}"] if missing else [])))
    for key in ("id", "category", "description", "sql", "day", "key", *DIALECTS):
        if key in item and not isinstance(item[key], str):
            raise SuiteError(f"{where}: {key}: expected text, not {item[key]!r:.60}")
    columns = item["columns"]
    if not isinstance(columns, list) or not columns or not all(isinstance(c, str) for c in columns):
        raise SuiteError(f"{where}: columns: expected a list of the result's column names")
    if "sql" not in item and not any(d in item for d in DIALECTS):
        raise SuiteError(f"{where}: no text: give sql (or a text per dialect)")
    day_spec, key_spec = item.get("day", suite.get("day", "day:0")), item.get("key", suite.get("key", "key:0"))
    if not _DAY_SPEC.fullmatch(day_spec) or not _KEY_SPEC.fullmatch(key_spec):
        raise SuiteError(f"{where}: day must be day:K and key key:K (K an index; -1 the last), "
                         f"not {day_spec!r} / {key_spec!r}")
    sql = item.get("sql")
    texts = {d: item.get(d, sql) for d in SQL_DIALECTS}
    texts["pandas"] = item.get("pandas", item.get("duckdb", sql))
    texts["mongodb"] = item.get("mongodb")
    texts = {d: t.strip() for d, t in texts.items() if t is not None}
    for dialect, text in texts.items():
        for match in _PLACEHOLDER.finditer(text):
            if match.group(1) not in PLACEHOLDERS:
                raise SuiteError(f"{where}: {dialect} text names {{{match.group(1)}}}: the placeholders are "
                                 f"{', '.join('{' + p + '}' for p in PLACEHOLDERS)}")
    return UserQuery(id=item["id"], category=item.get("category", "user"), description=item.get("description", ""),
                     params={}, columns=tuple(columns), days="all", texts=texts, day_spec=day_spec, key_spec=key_spec)


# --- binding a query to an engine ----------------------------------------------------------------
def bind(query: Query, target, layout) -> tuple[Query, dict[str, Any]]:
    """The query and parameter values ``target.run_query`` gets: a suite query with its values drawn from
    the layout, or a user's query with its placeholders filled for this target's dialect."""
    if not isinstance(query, UserQuery):
        return query, draw_values(query, layout.days, layout.keys_sample)
    from workloads.datasets import get_dataset     # the registry, imported on use
    dialect = target.query_dialect
    info = get_dataset(layout.dataset).info
    day = _draw(query.day_spec, layout.days, layout.keys_sample, f"query {query.id}: day")
    needs_key = any("{key}" in t for t in query.texts.values())
    key = _draw(query.key_spec, layout.days, layout.keys_sample, f"query {query.id}: key") if needs_key else ""
    if any("{key" in t for t in query.texts.values()) and not info.key_column:
        raise SuiteError(f"query {query.id} names the key, and {layout.dataset} has no key column")
    text = query.text(dialect)
    table = SEED_TABLES.get(layout.dataset, layout.dataset)
    texts = {} if text is None else {dialect: fill_placeholders(dialect, text, info, day, key, table)}
    days = "day" if query.uses_day else "all"
    return (replace(query, texts=texts, days=days, dataset=layout.dataset, frames_sql=dialect == "pandas"),
            {"day": day} if query.uses_day else {})


def fill_placeholders(dialect: str, text: str, info, day: dt.date, key: str, table: str) -> str:
    """``text`` with its placeholders filled for ``dialect``. The table becomes the placeholder the
    target itself fills (``{quotes}`` in the SQL engines' texts, the dataset's table in DolphinDB's), so
    every target keeps naming its own tables; DuckDB's target fills it with ``str.format``, so there the
    text's own braces are doubled."""
    lit = _LITERALS[dialect]
    if dialect == "dolphindb" and info.schema.column(info.time_column).ddb_type == "NANOTIMESTAMP":
        lit = {**lit, "stamp": _ddb_nanos}   # DolphinDB compares a NANOTIMESTAMP column with its own kind
    key_column = info.schema.column(info.key_column) if info.key_column else None
    values = {
        "table": {"dolphindb": "{" + table + "}", "pandas": _ident(table), "mongodb": table}.get(dialect, "{quotes}"),
        "time": _time_column(dialect, info),
        "key_column": _field(dialect, info.key_column),
        "key": lit["number"](key) if key_column is not None and not key_column.is_string and key else lit["text"](key),
        "day": lit["date"](day),
        "day_start": lit["stamp"](dt.datetime.combine(day, dt.time())),
        "day_end": lit["stamp"](dt.datetime.combine(day + dt.timedelta(days=1), dt.time())),
    }
    pieces, end = [], 0
    for match in _PLACEHOLDER.finditer(text):
        pieces += [_escaped(dialect, text[end:match.start()]), values[match.group(1)]]
        end = match.end()
    return "".join(pieces + [_escaped(dialect, text[end:])])


def _escaped(dialect: str, text: str) -> str:
    return text.replace("{", "{{").replace("}", "}}") if dialect == "duckdb" else text


def _ident(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _field(dialect: str, name: str) -> str:
    return name if dialect in ("dolphindb", "mongodb") else _ident(name)


def _time_column(dialect: str, info) -> str:
    if dialect == "druid":              # Druid keeps a row's time only as __time (targets/druid/shape.py)
        return "__time"
    return _field(dialect, info.time_column)


def _sql_text(value: str) -> str:
    return "'" + str(value).replace("'", "''") + "'"


def _ch_text(value: str) -> str:
    return "'" + str(value).replace("\\", "\\\\").replace("'", "\\'") + "'"


def _iso(stamp: dt.datetime, sep: str = " ") -> str:
    return stamp.isoformat(sep=sep, timespec="seconds")


def _ddb_nanos(stamp: dt.datetime) -> str:
    return stamp.strftime("%Y.%m.%dT%H:%M:%S.000000000")


# Each dialect's literals: text, number, date, timestamp (UTC, as the engines store imported instants)
_LITERALS: dict[str, dict[str, Any]] = {
    "duckdb": {"text": _sql_text, "number": str, "date": lambda d: f"DATE '{d}'",
               "stamp": lambda t: f"TIMESTAMP '{_iso(t)}'"},
    "postgres": {"text": _sql_text, "number": str, "date": lambda d: f"DATE '{d}'",
                 "stamp": lambda t: f"TIMESTAMP '{_iso(t)}'"},
    "questdb": {"text": _sql_text, "number": str, "date": lambda d: f"'{d}'",
                "stamp": lambda t: f"'{_iso(t, 'T')}.000000Z'"},
    "clickhouse": {"text": _ch_text, "number": str, "date": lambda d: f"toDate('{d}')",
                   "stamp": lambda t: f"toDateTime64('{_iso(t)}', 3, 'UTC')"},
    "druid": {"text": _sql_text, "number": str, "date": lambda d: f"TIMESTAMP '{d} 00:00:00'",
              "stamp": lambda t: f"TIMESTAMP '{_iso(t)}'"},
    "dolphindb": {"text": lambda v: json.dumps(str(v)), "number": str, "date": lambda d: d.strftime("%Y.%m.%d"),
                  "stamp": lambda t: t.strftime("%Y.%m.%dT%H:%M:%S.000")},
    "mongodb": {"text": lambda v: json.dumps(str(v)), "number": str,
                "date": lambda d: json.dumps({"$date": f"{d}T00:00:00Z"}),
                "stamp": lambda t: json.dumps({"$date": f"{_iso(t, 'T')}Z"})},
}
_LITERALS["pandas"] = _LITERALS["duckdb"]


# --- what the engines without a SQL of their own run -----------------------------------------------
def frames_sql(sql: str, tables: dict[str, pd.DataFrame], values: dict[str, Any]) -> pd.DataFrame:
    """DuckDB runs a user's query over the DataFrames a client-side target read (``tables``: name -> frame)."""
    import duckdb
    import pyarrow as pa

    from workloads.targets.common.zones import duckdb_on_utc

    con = duckdb.connect()
    try:
        duckdb_on_utc(con)                # a zoned frame's minutes in UTC, as every engine's
        for name, frame in tables.items():
            con.register(name, pa.Table.from_pandas(frame, preserve_index=False))
        return con.sql(sql).to_arrow_table().to_pandas()
    finally:
        con.close()


def pipeline(text: str) -> list[dict]:
    """A bound ``mongodb`` text as an aggregation pipeline (extended JSON: ``$date`` values become dates)."""
    from bson import json_util

    try:
        stages = json_util.loads(text)
    except ValueError as exc:
        raise SuiteError(f"the mongodb text is not a JSON pipeline ({exc})") from None
    if not isinstance(stages, list) or not all(isinstance(s, dict) for s in stages):
        raise SuiteError("the mongodb text must be a JSON list of pipeline stages")
    return stages
