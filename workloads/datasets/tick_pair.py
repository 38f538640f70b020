"""Quotes and their trades, paired: the tick pack (as-of join, VWAP, snapshot, year-high bid, rolling mid)
on a desk's own files.

``tickbench import TRADES --name NAME --trades-of QUOTES ...`` imports the trades as any import is (their
own columns; roles time, key, price, size) and pairs them with the import QUOTES (time, key, bid and ask,
quote sizes). The pair, ``imp_NAME``, reads as TAQ does: quotes (``symbol, date, time, bid, ofr, bidsiz,
ofrsiz``) with a ``trades`` table beside them (``symbol, date, time, price, size, corr``), so the tick
pack's text on every engine, and pandas' reference, ask it unchanged.

Days and times of day are the exchange's (``exchange_zone``; by default the offset the quotes file
carries): the date a desk files a quote under and the 09:30-16:00 of its session, whatever UTC day the
import stored it in. Times of day are kept to the millisecond (``TIME``; finer times are cut to it, as
DolphinDB's TIME and most engines' timestamps hold them); rows of one millisecond keep their order in the
file, so "the last quote at or before a trade" is the last of its millisecond by arrival.
Trades carry no correction flag of their own: ``corr`` is 0 (as printed).
"""
from __future__ import annotations

import datetime as dt
import hashlib
import re
from collections.abc import Iterator
from typing import Any

import pandas as pd

from workloads.datasets.base import Dataset
from workloads.datasets.roles import Roles, dataset_info
from workloads.datasets.schema import Column, Scale, Schema, StringMode, apply_string_mode
from workloads.text import plural

QUOTE_ROLES = Roles(time="date", time_of_day="time", key="symbol", price=("bid", "ofr"),
                    quote_size=("bidsiz", "ofrsiz"))
VIEW_FORMAT = 1     # bump when the pair's columns or clock change: every layout of a pair is laid out again
_OFFSET = re.compile(r"^UTC offset ([+-]\d\d:\d\d)\b")
_GIVEN = re.compile(r"^(\S+) \(given, stored as UTC\)$")


class PairError(ValueError):
    """Quotes and trades that cannot be paired: a role missing, a zone not known."""


# --- what a pair needs of each import -------------------------------------------------------------------
def check_quotes(quotes: Dataset) -> Roles:
    """The quotes import's roles, or a PairError naming the role it lacks."""
    roles = _own_roles(quotes, "quotes")
    missing = [what for what, have in (("a key (--key SYMBOL)", roles.key),
                                       ("a bid and an ask (--price BID --price ASK)", len(roles.price) == 2),
                                       ("quote sizes (--quote-size BID_SIZE --quote-size ASK_SIZE)",
                                        roles.quote_size)) if not have]
    if missing:
        raise PairError(f"{quotes.info.name} cannot be the quotes of a pair: it has no {' and no '.join(missing)}; "
                        f"import it again with them")
    return roles


def check_trades(roles: Roles, label: str) -> None:
    """A PairError naming the role the trades lack (before anything is imported)."""
    missing = [what for what, have in (("a key (--key SYMBOL)", roles.key),
                                       ("one price (--price PRICE)", len(roles.price) == 1),
                                       ("a size (--size SIZE)", roles.size)) if not have]
    if missing:
        raise PairError(f"{label}: trades paired with quotes need {' and '.join(missing)}")


def _own_roles(dataset: Dataset, what: str) -> Roles:
    stored = dataset.info.extra.get("roles")
    if not stored or dataset.info.extra.get("tick_pack"):
        raise PairError(f"{dataset.info.name} cannot be the {what} of a pair: import the file in its own columns "
                        f"(tickbench import FILE --time ... --key ...)")
    return Roles.from_dict(stored)


def exchange_zone(quotes: Dataset, given: str = "") -> str:
    """The zone the pair's days and times of day are in: ``given``, else the one offset (or the zone
    given at import) the quotes carried, else UTC for quotes stored as written; a PairError when the
    file carried several offsets (a zone with summer time: name it)."""
    if given:
        _zone(given)
        return given
    words = str(quotes.info.extra.get("zone") or "")
    for pattern in (_OFFSET, _GIVEN):
        found = pattern.match(words)
        if found:
            return found.group(1)
    if words.startswith("UTC offsets"):
        raise PairError(f"the quotes carry several {words.split(' (')[0]}: name the exchange's zone with "
                        f"--exchange-zone (e.g. America/New_York)")
    return "UTC"


def _zone(name: str) -> dt.tzinfo:
    if re.fullmatch(r"[+-]\d\d:\d\d", name):
        sign = -1 if name[0] == "-" else 1
        return dt.timezone(sign * dt.timedelta(hours=int(name[1:3]), minutes=int(name[4:6])))
    try:
        from zoneinfo import ZoneInfo
        return ZoneInfo(name)
    except (ValueError, KeyError, OSError):
        raise PairError(f"unknown time zone {name!r}: use a name such as America/New_York, UTC or an offset "
                        f"such as -04:00") from None


# --- the exchange's days and seconds ---------------------------------------------------------------------
def _on_exchange_clock(frame: pd.DataFrame, roles: Roles, zone: str) -> tuple[pd.Series, pd.Series]:
    """(date at midnight, time of day on 1970-01-01 to the ms) of each row, on the exchange's clock.
    A date with a time of day was written on it already; a timestamp is a UTC instant, moved to ``zone``."""
    if roles.time_of_day:
        date = frame[roles.time].dt.floor("D")
        tod = frame[roles.time_of_day] - frame[roles.time_of_day].dt.floor("D")
    else:
        local = frame[roles.time].dt.tz_localize("UTC").dt.tz_convert(_zone(zone)).dt.tz_localize(None)
        date = local.dt.floor("D")
        tod = local - date
    return date.astype("datetime64[ns]"), (pd.Timestamp(0) + tod.dt.floor("ms")).astype("datetime64[ns]")


def quotes_as_taq(frame: pd.DataFrame, roles: Roles, zone: str) -> pd.DataFrame:
    date, time = _on_exchange_clock(frame, roles, zone)
    (bid, ofr), (bidsiz, ofrsiz) = roles.price, roles.quote_size
    return pd.DataFrame({"symbol": frame[roles.key].astype(str).to_numpy(), "date": date.to_numpy(),
                         "time": time.to_numpy(), "bid": frame[bid].astype("float64").to_numpy(),
                         "ofr": frame[ofr].astype("float64").to_numpy(), "bidsiz": _size(frame[bidsiz]),
                         "ofrsiz": _size(frame[ofrsiz])})


def trades_as_taq(frame: pd.DataFrame, roles: Roles, zone: str) -> pd.DataFrame:
    date, time = _on_exchange_clock(frame, roles, zone)
    return pd.DataFrame({"symbol": frame[roles.key].astype(str).to_numpy(), "date": date.to_numpy(),
                         "time": time.to_numpy(), "price": frame[roles.price[0]].astype("float64").to_numpy(),
                         "size": _size(frame[roles.size]), "corr": pd.Series(0, index=frame.index, dtype="int32")})


def _size(values: pd.Series):
    """Sizes as the file counts them: whole numbers as LONG (TAQ's shares), fractions (crypto) DOUBLE."""
    numbers = values.to_numpy()
    return numbers.astype("int64") if numbers.dtype.kind in "iu" else numbers.astype("float64")


def _size_type(schema: Schema, column: str) -> str:
    return "LONG" if schema.column(column).ddb_type in ("SHORT", "INT", "LONG") else "DOUBLE"


def day_counts(dataset: Dataset, convert, roles: Roles, zone: str) -> dict[str, int]:
    """Rows per exchange day (``YYYY-MM-DD``) of every stored day of an import, read a day at a time."""
    counts: dict[str, int] = {}
    for index in range(len(dataset.all_days)):
        frame = dataset.day_frame(index, Scale(days=len(dataset.all_days)))
        for day, rows in convert(frame, roles, zone)["date"].dt.strftime("%Y-%m-%d").value_counts().items():
            counts[day] = counts.get(day, 0) + int(rows)
    return dict(sorted(counts.items()))


def pairing(quotes: Dataset, trades: Dataset, zone: str) -> dict[str, Any]:
    """What a pair's manifest keeps: the quotes import, the zone, and each exchange day's quotes and
    trades (read once here, so a run never has to)."""
    q_roles, t_roles = check_quotes(quotes), _own_roles(trades, "trades")
    check_trades(t_roles, trades.info.name)
    quote_days = day_counts(quotes, quotes_as_taq, q_roles, zone)
    trade_days = day_counts(trades, trades_as_taq, t_roles, zone)
    if not set(quote_days) & set(trade_days):
        raise PairError(f"the trades ({_span(trade_days)}) and the quotes ({_span(quote_days)}) share no day "
                        f"on the exchange's clock ({zone})")
    return {"quotes": quotes.info.name, "quotes_content": quotes.info.extra.get("content", ""),
            "exchange_zone": zone, "days": [{"date": d, "quotes": n, "trades": trade_days.get(d, 0)}
                                            for d, n in quote_days.items()]}


def _span(days: dict[str, int]) -> str:
    return f"{min(days)} .. {max(days)}" if days else "no rows"


# --- the pair as a dataset -------------------------------------------------------------------------------
def quotes_schema(sizes: str) -> Schema:
    return Schema((Column("symbol", "SYMBOL"), Column("date", "DATE"), Column("time", "TIME"),
                   Column("bid", "DOUBLE"), Column("ofr", "DOUBLE"), Column("bidsiz", sizes), Column("ofrsiz", sizes)))


def trades_schema(sizes: str) -> Schema:
    return Schema((Column("symbol", "SYMBOL"), Column("date", "DATE"), Column("time", "TIME"),
                   Column("price", "DOUBLE"), Column("size", sizes), Column("corr", "INT")))


class TickPair(Dataset):
    """A quotes import and a trades import on the exchange's clock, in TAQ's columns."""

    base = ""          # in columns of its own (TAQ's names), not an import read against a built-in schema

    def __init__(self, name: str, trades, quotes, pair: dict[str, Any]):
        self.trades, self.quotes, self.pair = trades, quotes, pair
        self.zone = str(pair["exchange_zone"])
        self._q_roles, self._t_roles = check_quotes(quotes), _own_roles(trades, "trades")
        self._days = [dt.date.fromisoformat(d["date"]) for d in pair["days"]]
        self._rows = {dt.date.fromisoformat(d["date"]): int(d["quotes"]) for d in pair["days"]}
        quote_rows, trade_rows = sum(self._rows.values()), sum(int(d["trades"]) for d in pair["days"])
        content = f"{quotes.info.extra.get('content', '')}+{trades.info.extra.get('content', '')}@{self.zone}"
        # what the targets key a prepared layout by: the two imports, the clock and this view of them
        layout_id = hashlib.sha256(f"{quotes.content_id}+{trades.content_id}@{self.zone}#{VIEW_FORMAT}".encode())
        self.quotes_schema = quotes_schema(_size_type(quotes.info.schema, self._q_roles.quote_size[0]))
        self.trades_schema = trades_schema(_size_type(trades.info.schema, self._t_roles.size))
        self.info = dataset_info(
            name, f"{quotes.info.title} with the trades of {trades.info.title}", self.quotes_schema, QUOTE_ROLES,
            notes=(f"The quotes of {quotes.info.name} ({quote_rows:,} rows) paired with the trades of "
                   f"{trades.info.name} ({trade_rows:,} rows) over {plural(len(self._days), 'day')}, in TAQ's "
                   f"columns on the exchange's clock ({self.zone}), times of day to the millisecond."),
            extra={"imported": True, "import_id": layout_id.hexdigest()[:32], "content": content,
                   "source": trades.info.extra.get("source", ""), "default_start": str(self._days[0]),
                   "zone": self.zone, "side_tables": ["trades"], "tick_pack": True})

    # --- facts (an import's: the folder, name and manifest are the trades import's own) ---
    @property
    def name(self) -> str:
        return self.trades.name

    @property
    def folder(self):
        return self.trades.folder

    @property
    def manifest(self) -> dict[str, Any]:
        return self.trades.manifest

    @property
    def rows(self) -> int:
        return sum(self._rows.values())

    @property
    def all_days(self) -> list[dt.date]:
        return list(self._days)

    @property
    def all_keys(self) -> list[str]:
        return self.quotes.all_keys

    @property
    def source(self) -> dict[str, Any]:
        return self.trades.source

    def size_words(self) -> str:
        return (f"{self.rows:,} quotes over {plural(len(self._days), 'day')}, "
                f"{plural(len(self.all_keys), 'key')}, with their trades")

    def footprint(self) -> int:
        return self.quotes.footprint() + self.trades.footprint()

    # --- the Dataset interface ---
    def trading_days(self, scale: Scale) -> list[dt.date]:
        days = self._days
        if scale.start:
            first = dt.date.fromisoformat(scale.start)
            days = [d for d in days if d >= first]
        return days[:scale.days]

    def keys(self, scale: Scale) -> list[str]:
        return self.all_keys

    def day_rows(self, scale: Scale) -> list[int]:
        return [self._rows[d] for d in self.trading_days(scale)]

    def generate_day(self, day_index: int, scale: Scale, strings: StringMode = StringMode.ARROW,
                     chunk_rows: int = 1_000_000) -> Iterator[pd.DataFrame]:
        day = self.trading_days(scale)[day_index]
        frame = self._on_day(self.quotes, quotes_as_taq, self._q_roles, day)
        frame = apply_string_mode(frame, self.quotes_schema, StringMode.parse(strings))
        for start in range(0, max(len(frame), 1), chunk_rows):
            yield frame.iloc[start:start + chunk_rows].reset_index(drop=True)

    def trades_frame(self, scale: Scale, strings: StringMode = StringMode.ARROW) -> pd.DataFrame:
        """Every day's trades of ``scale``, in time order (ties in the file's order)."""
        days = [self._on_day(self.trades, trades_as_taq, self._t_roles, day) for day in self.trading_days(scale)]
        frame = pd.concat(days, ignore_index=True)
        return apply_string_mode(frame, self.trades_schema, StringMode.parse(strings))

    def _on_day(self, dataset, convert, roles: Roles, day: dt.date) -> pd.DataFrame:
        """The rows of exchange day ``day``: from the UTC days stored that can hold it (the day before,
        the day, the day after), in stored order."""
        stored = dataset.all_days
        wanted = [i for i, d in enumerate(stored) if abs((d - day).days) <= 1]
        scale = Scale(days=len(stored))
        frames = [convert(dataset.day_frame(i, scale), roles, self.zone) for i in wanted]
        frame = pd.concat(frames, ignore_index=True) if frames else convert(
            dataset.day_frame(0, scale).iloc[:0], roles, self.zone)
        frame = frame[frame["date"] == pd.Timestamp(day)]
        return frame.sort_values("time", kind="stable", ignore_index=True)
