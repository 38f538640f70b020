"""An A/B session's record: one JSON file in the catalog's ``ab/`` folder, rewritten after every pair
(``AbResult.to_dict()``), so a session cut short keeps what it measured."""
from __future__ import annotations

import secrets
from datetime import datetime
from pathlib import Path
from typing import Any

from workloads.results.atomic_files import read_json, write_json

AB_DIR = "ab"


def new_ab_id() -> str:
    return f"ab-{datetime.now():%Y%m%d-%H%M%S}-{secrets.token_hex(2)}"


def ab_path(store, ab_id: str) -> Path:
    return Path(store.path) / AB_DIR / f"{ab_id}.json"


def load_ab(store, ab_id: str) -> dict[str, Any] | None:
    """An A/B session's record as ``AbResult.to_dict()`` wrote it; None when there is none."""
    return read_json(ab_path(store, ab_id), None)


def save_ab(store, result) -> None:
    """Write ``result`` (an ``AbResult``) as its record, whole or not at all."""
    path = ab_path(store, result.ab_id)
    path.parent.mkdir(parents=True, exist_ok=True)
    write_json(path, result.to_dict())
