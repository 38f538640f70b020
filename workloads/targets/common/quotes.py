"""Report 003's three computations over TAQ-like quotes, shared by the DuckDB and files targets.

Same definitions as the DolphinDB scripts (``ddb_scripts``) of the report:
a) spread by minute: ``avg((ofr-bid)/(ofr+bid)*2)`` per minute of day, over days in a span, with
   time in 09:30:00-15:59:59, ofr > bid, bid > 0, ofr/bid < 1.2. Columns: minute, avgSpread.
b) map-reduce minute quotes: ``avg(bid), avg(ofr)`` per (symbol, date, minute), every quote of
   the span, written to a per-layout table; the operation's answer is the number of bars written
   (one column ``bars``).
c) OLS of ``spread = ofr/bid - 1`` on ``quoteSize = (bidsiz+ofrsiz)*(ofr+bid)/2`` with an
   intercept, filters as in (a) plus ofr > 0. Columns: factor, beta, stdError, tstat (the test
   server's shape of ``olsEx(...)["Coefficient"]``; no p-value: it needs a t distribution).

"TAQ-like" means distinct bid and ask price columns, a DATE day column and a separate time column;
the OLS also the quote sizes (the quote-size role; taq: bidsiz, ofrsiz, found by TAQ's naming).
The pandas versions here work day by day and combine partial results, so memory stays at one
day whatever the span.
"""
from __future__ import annotations

import datetime as dt
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np
import pandas as pd

from workloads.datasets.schema import DatasetInfo
from workloads.datasets.roles import ROLE_FLAGS, quote_size_columns

SESSION_OPEN = dt.time(9, 30, 0)
SESSION_CLOSE = dt.time(15, 59, 59)
MAX_ASK_BID_RATIO = 1.2
OLS_COLUMNS = ("factor", "beta", "stdError", "tstat")


@dataclass(frozen=True)
class QuoteColumns:
    key: str
    date: str
    time: str
    bid: str
    ask: str
    bid_size: str
    ask_size: str


def quote_columns(info: DatasetInfo, sizes: bool = False) -> QuoteColumns:
    """The quote columns of ``info``, or a ValueError naming the roles it lacks; with ``sizes`` (the
    OLS) its quote sizes too (the quote-size role; otherwise "" where it has none)."""
    bid, ask = info.price_columns
    quote_sizes = quote_size_columns(info)
    missing = []
    if not bid or not ask or bid == ask:
        missing.append("a bid and an ask price (--price BID --price ASK)")
    elif sizes and not quote_sizes:
        missing.append(f"quote sizes ({ROLE_FLAGS['quote-size']})")
    if info.date_column == info.time_column or info.schema.column(info.date_column).ddb_type != "DATE":
        missing.append("a date and a time of day in columns of their own (--time DATE --time-of-day TIME)")
    if missing:
        raise ValueError(f"report 003's computations read quotes as TAQ has them; dataset {info.name!r} lacks "
                         f"{' and '.join(missing)}")
    bid_size, ask_size = quote_sizes or ("", "")
    return QuoteColumns(info.key_column, info.date_column, info.time_column, bid, ask, bid_size, ask_size)


def day_span(all_days: Iterable[dt.date], days: Iterable[dt.date] = ()) -> tuple[dt.date, dt.date]:
    """(first, last) of ``days``, or of every day of the layout when ``days`` is empty."""
    chosen = sorted(days) or sorted(all_days)
    if not chosen:
        raise ValueError("no days to compute over")
    return chosen[0], chosen[-1]


# --- pandas, one day at a time ----------------------------------------------------------------
def _time_of_day_s(times: pd.Series) -> np.ndarray:
    return ((times - times.dt.normalize()) // pd.Timedelta(seconds=1)).to_numpy()


def _filtered(frame: pd.DataFrame, cols: QuoteColumns, ask_positive: bool = False) -> pd.DataFrame:
    bid, ask = frame[cols.bid].to_numpy(), frame[cols.ask].to_numpy()
    seconds = _time_of_day_s(frame[cols.time])
    lo = SESSION_OPEN.hour * 3600 + SESSION_OPEN.minute * 60 + SESSION_OPEN.second
    hi = SESSION_CLOSE.hour * 3600 + SESSION_CLOSE.minute * 60 + SESSION_CLOSE.second
    with np.errstate(divide="ignore", invalid="ignore"):
        keep = (seconds >= lo) & (seconds <= hi) & (ask > bid) & (bid > 0) & (ask / bid < MAX_ASK_BID_RATIO)
    if ask_positive:
        keep &= ask > 0
    return frame[keep]


def spread_partial(frame: pd.DataFrame, cols: QuoteColumns) -> pd.DataFrame:
    """Per minute of one day's quotes: sum and count of the relative spread (to combine days)."""
    quotes = _filtered(frame, cols)
    bid, ask = quotes[cols.bid], quotes[cols.ask]
    spread = (ask - bid) / (ask + bid) * 2
    minute = quotes[cols.time].dt.floor("min").to_numpy()
    return spread.groupby(minute).agg(["sum", "count"])


def spread_combine(partials: list[pd.DataFrame]) -> pd.DataFrame:
    """The average spread per minute over every partial (columns minute, avgSpread)."""
    if not partials:
        return pd.DataFrame({"minute": pd.Series(dtype="datetime64[ns]"), "avgSpread": pd.Series(dtype=float)})
    total = pd.concat(partials).groupby(level=0).sum().sort_index()
    out = pd.DataFrame({"minute": total.index.to_numpy(), "avgSpread": (total["sum"] / total["count"]).to_numpy()})
    return out


def minute_quotes(frame: pd.DataFrame, cols: QuoteColumns) -> pd.DataFrame:
    """The map step of report 003 (b): avg bid/ask per (key, date, minute) of one day's quotes."""
    minute = frame[cols.time].dt.floor("min").rename("minute")
    grouped = frame.groupby([frame[cols.key].astype(str), frame[cols.date], minute], sort=True, observed=True)
    bars = grouped[[cols.bid, cols.ask]].mean().reset_index()
    return bars


@dataclass(frozen=True)
class Moments:
    """Sufficient statistics of a simple regression, combinable across days (Chan et al.)."""

    n: int = 0
    mean_x: float = 0.0
    mean_y: float = 0.0
    sxx: float = 0.0
    syy: float = 0.0
    sxy: float = 0.0

    @classmethod
    def of(cls, x: np.ndarray, y: np.ndarray) -> "Moments":
        if len(x) == 0:
            return cls()
        mx, my = float(x.mean()), float(y.mean())
        dx, dy = x - mx, y - my
        return cls(len(x), mx, my, float(dx @ dx), float(dy @ dy), float(dx @ dy))

    def __add__(self, other: "Moments") -> "Moments":
        if other.n == 0:
            return self
        if self.n == 0:
            return other
        n = self.n + other.n
        dx, dy = other.mean_x - self.mean_x, other.mean_y - self.mean_y
        w = self.n * other.n / n
        return Moments(n, self.mean_x + dx * other.n / n, self.mean_y + dy * other.n / n,
                       self.sxx + other.sxx + dx * dx * w, self.syy + other.syy + dy * dy * w,
                       self.sxy + other.sxy + dx * dy * w)


def ols_moments(frame: pd.DataFrame, cols: QuoteColumns) -> Moments:
    quotes = _filtered(frame, cols, ask_positive=True)
    bid, ask = quotes[cols.bid].to_numpy(float), quotes[cols.ask].to_numpy(float)
    size = quotes[cols.bid_size].to_numpy(float) + quotes[cols.ask_size].to_numpy(float)
    return Moments.of(size * (ask + bid) / 2, ask / bid - 1)


def ols_table(m: Moments) -> pd.DataFrame:
    """Intercept and slope with standard errors and t statistics, from the moments."""
    if m.n < 3 or m.sxx <= 0:
        raise ValueError(f"OLS needs at least 3 quotes with varying quote size; the filters left {m.n}")
    slope = m.sxy / m.sxx
    intercept = m.mean_y - slope * m.mean_x
    sse = max(m.syy - slope * m.sxy, 0.0)
    sigma2 = sse / (m.n - 2)
    se_slope = (sigma2 / m.sxx) ** 0.5
    se_intercept = (sigma2 * (1.0 / m.n + m.mean_x ** 2 / m.sxx)) ** 0.5
    beta = np.array([intercept, slope])
    se = np.array([se_intercept, se_slope])
    with np.errstate(divide="ignore", invalid="ignore"):
        tstat = beta / se
    return pd.DataFrame({"factor": ["intercept", "quoteSize"], "beta": beta, "stdError": se, "tstat": tstat})


def ols_from_sums(n: int, avg_x: float, avg_y: float, sxx: float, syy: float, sxy: float) -> pd.DataFrame:
    """The same table from SQL's regr_count/regr_avgx/regr_avgy/regr_sxx/regr_syy/regr_sxy."""
    return ols_table(Moments(int(n or 0), float(avg_x or 0), float(avg_y or 0), float(sxx or 0),
                             float(syy or 0), float(sxy or 0)))
