"""A playlist: scenarios run in order, from a file of ``[[scenario]]`` tables, or a ``[gallery]``
table naming report cards and a size (the report gallery's runs, defined once in its catalog)."""
from __future__ import annotations

import tomllib
from pathlib import Path

from workloads.reproduce.catalog import gallery_scenarios
from workloads.scenario import Scenario


def load_playlist(path: Path) -> tuple[str, list[Scenario]]:
    """A playlist file: ``title = "..."`` and one ``[[scenario]]`` table per scenario, run in order;
    or a ``[gallery]`` table naming reports and a size (``reports = ["000"]``, ``size = "tiny"``)."""
    try:
        data = tomllib.loads(Path(path).read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as exc:
        raise ValueError(f"{path}: not a valid playlist file ({exc})") from None
    if "gallery" in data:           # the report gallery's runs, defined once in its catalog
        gallery = data["gallery"]
        try:
            return str(data.get("title", Path(path).stem)), gallery_scenarios(gallery.get("reports"),
                                                                                gallery.get("size", "tiny"))
        except ValueError as exc:
            raise ValueError(f"{path}: [gallery]: {exc}") from None
    entries = data.get("scenario", [])
    if not entries:
        raise ValueError(f"{path}: a playlist needs at least one [[scenario]] table or a [gallery] table")
    scenarios = []
    for index, entry in enumerate(entries, start=1):
        try:
            scenarios.append(Scenario.from_dict(entry))
        except (TypeError, ValueError) as exc:
            raise ValueError(f"{path}: scenario {index}: {exc}") from None
    return str(data.get("title", Path(path).stem)), scenarios
