"""Pairing an import of trades with an import of quotes (``tickbench import TRADES --trades-of QUOTES``):
what is refused before the trades are read, and the trades import's manifest made a pair's. Kept apart
from ``tick_pair`` (the pair as a dataset), which ``imported`` loads."""
from __future__ import annotations

import json
import os

from workloads.datasets.base import Dataset
from workloads.datasets.csv_import import _write_json
from workloads.datasets.imported import MANIFEST, imports_dir, load_import, remove_import
from workloads.datasets.roles import Roles
from workloads.datasets.tick_pair import PairError, check_quotes, check_trades, exchange_zone, pairing


def pair_trades(trades_name: str, quotes_name: str, zone: str) -> Dataset:
    """Make the import ``trades_name`` the pair of its trades with the quotes ``quotes_name`` (its
    manifest rewritten whole, then renamed over the old one); the pair, or a PairError (the trades
    import is then removed: nothing half-paired is kept)."""
    try:
        quotes, trades = load_import(quotes_name), load_import(trades_name)
        facts = pairing(quotes, trades, zone)
        path = imports_dir() / trades.name / MANIFEST
        manifest = {**json.loads(path.read_text(encoding="utf-8")), "pair": facts}
        _write_json(path.with_name(MANIFEST + ".new"), manifest)
        os.replace(path.with_name(MANIFEST + ".new"), path)
    except BaseException:
        remove_import(trades_name)
        raise
    return load_import(trades_name)


def pair_before_import(quotes_name: str, trades_roles: Roles, zone: str, label: str) -> str:
    """Everything a pair can be refused for before the trades are read: the quotes and their roles,
    the trades' roles, the zone. The exchange's zone the pair will use."""
    quotes = load_import(quotes_name)
    check_quotes(quotes)
    check_trades(trades_roles, label)
    return exchange_zone(quotes, zone)


def can_be_quotes(dataset: Dataset) -> bool:
    """Whether an import can take trades (its key, bid and ask and quote sizes named)."""
    try:
        check_quotes(dataset)
    except PairError:
        return False
    return True
