"""Quote sizes are a role: a user's quotes whose sizes are named their own way (``bid_sz``, ``ask_sz``)
run report 003's OLS once the role is named, and answer as the same quotes do under TAQ's names; an
import without the role is refused for the OLS with the flag to name it, never a column that exists
nowhere; the spread and the minute bars, which read no size, run without it."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from workloads.datasets import get_dataset
from workloads.datasets.roles import RoleError, Roles
from workloads.datasets.schema import Scale, StringMode
from workloads.datasets.tick_import import import_source, preview_source
from workloads.operations import get_workload
from workloads.targets import make_target

SCALE = Scale(days=2, rows_per_day=6_000, symbols=12)
OWN_NAMES = {"date": "day", "time": "tod", "symbol": "ticker", "bid": "bid_px", "ofr": "ask_px",
             "bidsiz": "bid_sz", "ofrsiz": "ask_sz"}
ROLES = Roles(time="day", time_of_day="tod", key="ticker", price=("bid_px", "ask_px"),
              quote_size=("bid_sz", "ask_sz"))


@pytest.fixture
def quotes_csv(tmp_path) -> Path:
    """The taq dataset's quotes at ``SCALE`` under a desk's own column names."""
    taq = get_dataset("taq")
    frame = pd.concat([taq.day_frame(i, SCALE) for i in range(SCALE.days)], ignore_index=True)
    frame = frame[list(OWN_NAMES)].rename(columns=OWN_NAMES)
    frame["day"] = frame["day"].dt.strftime("%Y-%m-%d")
    frame["tod"] = frame["tod"].dt.strftime("%H:%M:%S")
    path = tmp_path / "quotes.csv"
    frame.to_csv(path, index=False)
    return path


def _ols(kind: str, root: Path, dataset: str, server=None) -> pd.DataFrame:
    if kind == "dolphindb":     # the stand-in: DolphinDB's scripts, run by its own interpreter
        config = {"host": server.host, "port": server.port, "user": "admin", "password": "123456",
                  "timeout": 3, "query_timeout": 60}
    else:
        config = {"path": str(root / "d.duckdb")} if kind == "duckdb" else {"root": str(root)}
    target = make_target(kind, config)
    try:
        layout = target.prepare(dataset, SCALE, StringMode.ARROW)
        target.open(layout, 0)
        return target.ols_spread(layout).frame
    finally:
        target.close()


def test_the_preview_suggests_quote_sizes_named_their_own_way(quotes_csv):
    assert preview_source(quotes_csv).suggested == ROLES


@pytest.mark.parametrize("kind", ["duckdb", "parquet", "dolphindb"])
def test_the_ols_on_quote_sizes_named_as_a_role_answers_as_taq(tmp_path, quotes_csv, kind, request):
    server = request.getfixturevalue("ddb_server") if kind == "dolphindb" else None
    dataset = import_source(quotes_csv, "mine", ROLES)
    assert not get_workload("ols-spread").refusal(dataset.info)
    mine = _ols(kind, tmp_path / "mine", dataset.info.name, server)
    taq = _ols(kind, tmp_path / "taq", "taq", server)
    assert list(mine.columns) == list(taq.columns) and len(mine) == 2
    np.testing.assert_allclose(mine[["beta", "stdError", "tstat"]].to_numpy(float),
                               taq[["beta", "stdError", "tstat"]].to_numpy(float), rtol=1e-9)


def test_without_the_role_the_ols_is_refused_with_the_flags_to_name_it(quotes_csv):
    dataset = import_source(quotes_csv, "nosizes", Roles(time="day", time_of_day="tod", key="ticker",
                                                         price=("bid_px", "ask_px")))
    refusal = get_workload("ols-spread").refusal(dataset.info)
    assert refusal == ("ols-spread needs quote sizes (bid size and ask size): dataset imp_nosizes has none "
                       "(import it with --quote-size BID_SIZE --quote-size ASK_SIZE)")
    assert not get_workload("spread-by-minute").refusal(dataset.info)
    assert not get_workload("mapreduce-minute-bars").refusal(dataset.info)


@pytest.mark.parametrize("roles,message", [
    (Roles(time="day", time_of_day="tod", key="ticker", price=("bid_px",), quote_size=("bid_sz", "ask_sz")),
     "beside a bid and an ask price"),
    (Roles(time="day", time_of_day="tod", key="ticker", price=("bid_px", "ask_px"), quote_size=("bid_sz",)),
     "quote sizes are two columns"),
    (Roles(time="day", time_of_day="tod", key="ticker", price=("bid_px", "ask_px"), quote_size=("bid_sz", "nope")),
     "no column 'nope' for the quote size role"),
    (Roles(time="day", time_of_day="tod", key="ticker", price=("bid_px", "ask_px"), quote_size=("ticker", "ask_sz")),
     "column 'ticker' is SYMBOL, the quote size role needs a number"),
])
def test_quote_sizes_that_cannot_hold_are_refused(quotes_csv, roles, message):
    with pytest.raises(RoleError, match=message):
        import_source(quotes_csv, "bad", roles)


def test_the_role_survives_the_manifest(quotes_csv):
    from workloads.datasets.imported import load_import
    import_source(quotes_csv, "kept", ROLES)
    stored = load_import("kept").info.extra["roles"]
    assert Roles.from_dict(stored) == ROLES and stored["quote_size"] == ["bid_sz", "ask_sz"]
