"""The built-in generators by registry name (``workloads.datasets`` adds users' imports to them)."""
from __future__ import annotations

from workloads.datasets.api45 import Api45Dataset
from workloads.datasets.base import Dataset
from workloads.datasets.devices import DevicesDataset
from workloads.datasets.level2 import Level2Dataset
from workloads.datasets.taq import TaqDataset

IMPORT_PREFIX = "imp_"          # the registry name of an imported CSV: imp_<name>
TABLE_PREFIX = "tbl_"           # an existing table read in place (``workloads.datasets.tables``): tbl_<name>

DATASETS: dict[str, Dataset] = {
    "taq": TaqDataset(),
    "level2": Level2Dataset(),
    "devices": DevicesDataset(),
    "api45": Api45Dataset(),
}
