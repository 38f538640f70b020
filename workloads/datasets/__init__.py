"""Deterministic generators of the seed reports' datasets, by registry name.

``get_dataset("taq")`` returns the generator; ``Dataset.info`` describes its schema.
"""
from __future__ import annotations

from workloads.datasets.api45 import Api45Dataset
from workloads.datasets.base import Dataset
from workloads.datasets.devices import DevicesDataset
from workloads.datasets.level2 import Level2Dataset
from workloads.datasets.taq import TaqDataset

DATASETS: dict[str, Dataset] = {
    "taq": TaqDataset(),
    "level2": Level2Dataset(),
    "devices": DevicesDataset(),
    "api45": Api45Dataset(),
}


def get_dataset(name: str) -> Dataset:
    try:
        return DATASETS[name]
    except KeyError:
        choices = ", ".join(DATASETS)
        raise ValueError(f"unknown dataset {name!r}: choose one of {choices}") from None


__all__ = ["DATASETS", "Dataset", "get_dataset"]
