"""Query suites: the reports' analytic queries as data, each with its text per dialect.

A suite file (``resources/queries/<name>.toml``, or the user's own in ``<data dir>/queries``; a
built-in name wins) names its dataset and lists queries: an id, a
category, a one-line description, parameters drawn deterministically from the layout, the result
columns (every dialect returns them in that order), which day files the pandas version reads, and
one text per dialect (``duckdb`` SQL with ``$name`` parameters and ``{table}`` placeholders,
``dolphindb`` script with ``{name}`` parameters and ``{table}`` placeholders, ``clickhouse`` SQL with
ClickHouse's own ``{name:Type}`` parameters and the same ``{table}`` placeholders (the ClickHouse
target replaces only ``{quotes}``, ``{readings}`` and ``{info}``, so the two brace forms never
clash), ``pandas``: the name of a function in ``workloads.queries.pandas_suite``). A dialect without a text is "not supported".

A dialect's texts may also live in an overlay beside the suite, ``<suite>.<dialect>.toml``, with a
``[texts]`` table of query id -> text: an engine's texts in a file of their own (the server
engines'), merged into the suite when it loads; an overlay naming an unknown query or dialect is an
error, as is a text given twice.

Parameter grammar (values drawn from the layout, so every target answers the same question):
``day:K`` the K-th trading day (negative from the end); ``key:K`` the K-th most active key;
``keys:N`` the N most active keys; ``at:K HH:MM:SS`` a time on day K (24:00:00 is its end);
``tod:HH:MM:SS`` a time of day; numbers as they are.
"""
from __future__ import annotations

import datetime as dt
import re
import tomllib
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

from workloads.paths import data_dir, resources_dir

DIALECTS = ("duckdb", "dolphindb", "clickhouse", "questdb", "postgres", "druid", "mongodb", "pandas")
# The seed table of each dataset, as the suites' texts name it ({quotes}, {readings})
SEED_TABLES = {"taq": "quotes", "level2": "tick", "devices": "readings", "api45": "orders"}
_FIELDS = ("id", "category", "description", "params", "columns", "days", *DIALECTS)


class SuiteError(ValueError):
    """A suite file is malformed; the message names the file and the query."""


@dataclass(frozen=True)
class Query:
    id: str
    category: str
    description: str
    params: dict[str, Any]
    columns: tuple[str, ...]
    days: str                          # "day": only the parameters' first day; "all": every day
    texts: dict[str, str] = field(default_factory=dict)    # dialect -> text (or pandas function)
    dataset: str = ""                  # of its suite
    refusals: dict[str, str] = field(default_factory=dict)  # dialect -> why that engine cannot answer it

    @property
    def table(self) -> str:
        """The seed table's name in the texts (``{quotes}``...)."""
        return SEED_TABLES.get(self.dataset, self.dataset)

    def text(self, dialect: str) -> str | None:
        return self.texts.get(dialect)

    def missing(self, dialect: str, engine: str) -> str:
        """Why ``engine`` (its ``dialect``) has no text for this query: the suite's stated reason
        (a text ``not supported: REASON``), else that none was written."""
        reason = self.refusals.get(dialect)
        return f"query {self.id}: not supported by {engine}: {reason}" if reason else \
            f"query {self.id} has no {engine} text"


@dataclass(frozen=True)
class Suite:
    name: str
    title: str
    dataset: str
    report: str
    queries: tuple[Query, ...]

    def query(self, query_id: str) -> Query:
        for query in self.queries:
            if query.id == query_id:
                return query
        raise KeyError(f"suite {self.name} has no query {query_id!r}")


def suites_dir() -> Path:
    return resources_dir() / "queries"


def user_suites_dir() -> Path:
    """Where a user's own suites go (same format); read by the app, the CLI and the workers."""
    return data_dir() / "queries"


def _suite_paths() -> dict[str, Path]:
    """Suite name -> file; overlays (``<suite>.<dialect>.toml``) are not suites."""
    paths = {p.stem: p for p in sorted(user_suites_dir().glob("*.toml")) if "." not in p.stem}
    paths.update({p.stem: p for p in suites_dir().glob("*.toml") if "." not in p.stem})  # a built-in name wins
    return paths


def _overlays(path: Path) -> tuple[tuple[Path, int], ...]:
    return tuple((p, p.stat().st_mtime_ns) for p in sorted(path.parent.glob(f"{path.stem}.*.toml")))


def suite_names() -> list[str]:
    return sorted(_suite_paths())


def load_suite(name: str) -> Suite:
    path = _suite_paths().get(name)
    if path is None:
        raise SuiteError(f"unknown query suite {name!r}: choose one of {', '.join(suite_names())}")
    return _load(path, path.stat().st_mtime_ns, _overlays(path))


def read_suite_toml(path: Path) -> dict[str, Any]:
    """A suite file's TOML; SuiteError naming the file when it cannot be read or parsed."""
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as exc:
        raise SuiteError(f"{path.name}: not valid TOML ({exc})") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise SuiteError(f"{path.name}: cannot read it ({type(exc).__name__})") from None


@lru_cache(maxsize=32)
def _load(path: Path, mtime_ns: int, overlays: tuple[tuple[Path, int], ...] = ()) -> Suite:
    # the mtimes make an edited file load afresh
    name = path.stem
    data = read_suite_toml(path)
    if data.get("dataset") not in SEED_TABLES:
        raise SuiteError(f"{path.name}: dataset must be one of {', '.join(SEED_TABLES)}")
    for key in ("title", "report"):
        _expect(data.get(key, ""), str, f"{path.name}: {key}", "text")
    _expect(data.get("query", []), list, f"{path.name}: query", "a list of [[query]] tables")
    queries = []
    for index, item in enumerate(data.get("query", []), start=1):
        _expect(item, dict, f"{path.name}: query {index}", "a [[query]] table")
        _check_types(item, f"{path.name}: query {index}")
        unknown = set(item) - set(_FIELDS)
        missing = {"id", "category", "description", "columns"} - set(item)
        if unknown or missing:
            raise SuiteError(f"{path.name}: query {index}: unknown {sorted(unknown)} / missing {sorted(missing)}")
        for value in (item.get("params") or {}).values():
            _check_spec(value, f"{path.name}: query {item['id']}")
        queries.append(Query(
            id=item["id"], category=item["category"], description=item["description"],
            params=dict(item.get("params") or {}), columns=tuple(item["columns"]),
            days=item.get("days", "all"), dataset=data["dataset"]))
        for dialect in DIALECTS:
            if dialect in item:
                _add_text(queries[-1], dialect, item[dialect])
    ids = [q.id for q in queries]
    if len(set(ids)) != len(ids) or not ids:
        raise SuiteError(f"{path.name}: query ids must be unique and there must be at least one")
    for overlay, _mtime in overlays:
        _merge_overlay(overlay, queries)
    return Suite(name, data.get("title", name), data["dataset"], str(data.get("report", "")), tuple(queries))


def _expect(value: Any, kind: type, where: str, expected: str) -> None:
    if not isinstance(value, kind):
        raise SuiteError(f"{where}: expected {expected}, not {type(value).__name__} {value!r:.60}")


def _check_types(item: dict, where: str) -> None:
    """A query table's keys of the right types: one line naming the file, query and key."""
    for key in ("id", "category", "description", *DIALECTS):
        if key in item:
            _expect(item[key], str, f"{where}: {key}", "text")
    if "columns" in item:
        _expect(item["columns"], list, f"{where}: columns", "a list of column names")
        for column in item["columns"]:
            _expect(column, str, f"{where}: columns", "a list of column names")
    if "params" in item:
        _expect(item["params"], dict, f"{where}: params", "a table of name = value")
    if item.get("days", "all") not in ("all", "day"):
        raise SuiteError(f"{where}: days: expected \"all\" or \"day\", not {item['days']!r:.60}")


def _merge_overlay(path: Path, queries: list[Query]) -> None:
    """Add an overlay's texts (one dialect, ``[texts]`` query id -> text) to the suite's queries."""
    dialect = path.stem.split(".", 1)[1]
    if dialect not in DIALECTS:
        raise SuiteError(f"{path.name}: {dialect!r} is not a dialect ({', '.join(DIALECTS)})")
    try:
        texts = tomllib.loads(path.read_text(encoding="utf-8")).get("texts") or {}
    except tomllib.TOMLDecodeError as exc:
        raise SuiteError(f"{path.name}: not valid TOML ({exc})") from None
    _expect(texts, dict, f"{path.name}: texts", "a table of query id = text")
    by_id = {q.id: q for q in queries}
    for query_id, text in texts.items():
        _expect(text, str, f"{path.name}: texts.{query_id}", "text")
        query = by_id.get(query_id)
        if query is None:
            raise SuiteError(f"{path.name}: no query {query_id!r} in the suite")
        if dialect in query.texts or dialect in query.refusals:
            raise SuiteError(f"{path.name}: query {query_id} has a {dialect} text in the suite already")
        _add_text(query, dialect, text)


REFUSAL = re.compile(r"\s*not supported:\s*(.+)", re.IGNORECASE | re.DOTALL)


def _add_text(query: Query, dialect: str, text: str) -> None:
    """A dialect's text, or its ``not supported: REASON`` (an engine that cannot express the query)."""
    refused = REFUSAL.fullmatch(text)
    if refused:
        query.refusals[dialect] = " ".join(refused.group(1).split())
    else:
        query.texts[dialect] = text.strip()


_SPEC = re.compile(r"(day|key):(-?\d+)|keys:(\d+)|at:(-?\d+) (\d\d):(\d\d):(\d\d)|tod:(\d\d):(\d\d):(\d\d)")


def _check_spec(value: Any, where: str) -> None:
    if isinstance(value, str) and not _SPEC.fullmatch(value):
        raise SuiteError(f"{where}: parameter {value!r} is not day:K, key:K, keys:N, at:K HH:MM:SS "
                         "or tod:HH:MM:SS")


def query_days(query: Query, values: dict[str, Any], days: tuple[dt.date, ...]) -> list[dt.date]:
    """The days a query reads: every day, or its parameters' first day (a date, or a time's date)."""
    if query.days == "all":
        return list(days)
    dates = [v.date() if isinstance(v, dt.datetime) else v for v in values.values()
             if isinstance(v, (dt.date, dt.datetime))]
    return [min(dates)] if dates else list(days)


def draw_values(query: Query, days: tuple[dt.date, ...], keys: tuple[str, ...]) -> dict[str, Any]:
    """The query's parameter values on a layout (its days and most active keys, in order)."""
    values = {}
    for name, spec in query.params.items():
        values[name] = _draw(spec, days, keys, f"query {query.id}, parameter {name}")
    return values


def _draw(spec: Any, days, keys, where: str) -> Any:
    if not isinstance(spec, str):
        return spec
    match = _SPEC.fullmatch(spec)
    kind, index = match.group(1), match.group(2)
    try:
        if kind == "day":
            return days[int(index)]
        if kind == "key":
            return str(keys[int(index)])
        if match.group(3):
            count = int(match.group(3))
            if count > len(keys):
                raise IndexError
            return [str(k) for k in keys[:count]]
        if match.group(4):
            day = days[int(match.group(4))]
            h, m, s = (int(match.group(i)) for i in (5, 6, 7))
            return dt.datetime.combine(day, dt.time()) + dt.timedelta(hours=h, minutes=m, seconds=s)
        h, m, s = (int(match.group(i)) for i in (8, 9, 10))
        return dt.time(h, m, s)
    except IndexError:
        raise SuiteError(f"{where}: {spec!r} is beyond the layout ({len(days)} days, "
                         f"{len(keys)} keys)") from None
