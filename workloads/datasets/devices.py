"""TimescaleDB's "devices" sample (report 004): a ``readings`` table and a device ``info`` table.

Every device reports at every time point (the seed: 3,000 devices x 10,000 points), the points
evenly spread over the day. Each device's battery runs down and charges in its own cycle, CPU load
and memory follow the time of day, and the phone joins its office Wi-Fi during working hours
and its home Wi-Fi otherwise. Readings have no DATE column: the partition day is the date of
``time`` (``info.extra["day_from"]``).
"""
from __future__ import annotations

import datetime as dt
import math
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
import pandas as pd

from workloads.datasets._chunks import ChunkedDataset, ChunkRandom, dataset_tag, seeded
from workloads.datasets._names import device_ids, mac_addresses
from workloads.datasets._strings import Vocabulary, vocabulary
from workloads.datasets.schema import Column, DatasetInfo, Scale, Schema, StringMode, apply_string_mode

SCHEMA = Schema((
    Column("time", "TIMESTAMP"), Column("device_id", "SYMBOL"), Column("battery_level", "INT"),
    Column("battery_status", "SYMBOL"), Column("battery_temperature", "DOUBLE"),
    Column("bssid", "SYMBOL"), Column("cpu_avg_1min", "DOUBLE"), Column("cpu_avg_5min", "DOUBLE"),
    Column("cpu_avg_15min", "DOUBLE"), Column("mem_free", "LONG"), Column("mem_used", "LONG"),
    Column("rssi", "SHORT"), Column("ssid", "SYMBOL"),
))
INFO_SCHEMA = Schema((
    Column("device_id", "SYMBOL"), Column("api_version", "SYMBOL"), Column("manufacturer", "SYMBOL"),
    Column("model", "SYMBOL"), Column("os_name", "SYMBOL"),
))

INFO = DatasetInfo(
    name="devices", title="Devices (TimescaleDB sample)", schema=SCHEMA,
    date_column="time", key_column="device_id", time_column="time",
    price_columns=("battery_temperature", "battery_temperature"),
    notes="TimescaleDB's devices sample as in report 004: readings of every device at evenly "
          "spaced time points, plus an info table (Dataset.info_frame). The seed: 3,000 devices x "
          "10,000 points over 2016.11.15-19, 30 million rows.",
    extra={"default_start": "2016-11-15", "day_from": "time", "info_table": "info",
           "seed_rows_per_day": 7_500_000, "seed_symbols": 3000},
)

BATTERY_STATUS = ("discharging", "charging", "full")
SSIDS = ("stealth-net", "FBI-van", "jackson-home", "CampusNet", "dlink", "NETGEAR-5G", "linksys",
         "TP-LINK_2F1A", "eduroam", "CoffeeShop", "Airport-Free", "xfinitywifi", "ATT-WiFi",
         "HOME-4C21", "BTHub6-9RZQ", "Office-Guest", "corp-secure", "Library")
API_VERSIONS = ("19", "21", "22", "23", "24", "25")
MODELS = {"pinto": "iobeam", "focus": "iobeam", "mustang": "iobeam", "nexus 5": "LG",
          "nexus 6": "Motorola", "galaxy s6": "Samsung", "one m9": "HTC"}
OS_NAMES = ("4.4.4", "5.0.0", "5.1.0", "6.0.0", "6.0.1", "7.0.0")
_WORK_HOURS = (9.0, 18.0)
_DISCHARGE_SHARE = 0.8  # of a battery cycle spent discharging


@dataclass(frozen=True)
class _Devices:
    ids: list[str]
    cycle_hours: np.ndarray
    cycle_phase: np.ndarray
    battery_low: np.ndarray
    temperature: np.ndarray     # °F at rest
    load: np.ndarray            # mean CPU load average
    mem_total: np.ndarray
    home_ap: np.ndarray
    work_ap: np.ndarray
    ap_bssids: list[str]
    ap_ssid: np.ndarray         # code into SSIDS per access point
    ap_rssi: np.ndarray         # signal strength near that access point, dBm


@dataclass(frozen=True)
class _Day:
    devices: _Devices
    day_ns: int
    day_index: int
    points: int                 # time points per day
    ids: Vocabulary
    bssids: Vocabulary


class DevicesDataset(ChunkedDataset):
    info = INFO
    info_schema = INFO_SCHEMA
    default_start = "2016-11-15"

    def keys(self, scale: Scale) -> list[str]:
        return list(self._devices(scale.seed, scale.symbols).ids)

    def info_frame(self, scale: Scale, strings: StringMode = StringMode.ARROW) -> pd.DataFrame:
        """The ``info`` table: one row per device."""
        count = scale.symbols
        rng = seeded(scale.seed, dataset_tag(INFO.name), 3)
        models = list(MODELS)
        model = rng.choice(len(models), size=count, p=[0.3, 0.2, 0.15, 0.12, 0.1, 0.08, 0.05])
        frame = pd.DataFrame({
            "device_id": self.keys(scale),
            "api_version": np.array(API_VERSIONS, dtype=object)[rng.integers(0, len(API_VERSIONS), count)],
            "manufacturer": [MODELS[models[m]] for m in model],
            "model": [models[m] for m in model],
            "os_name": np.array(OS_NAMES, dtype=object)[rng.integers(0, len(OS_NAMES), count)],
        })
        return apply_string_mode(frame, INFO_SCHEMA, StringMode.parse(strings))

    @staticmethod
    @lru_cache(maxsize=8)
    def _devices(seed: int, count: int) -> _Devices:
        tag = dataset_tag(INFO.name)
        rng = seeded(seed, tag, 2)
        access_points = max(8, count // 4)
        offices = max(2, access_points // 10)       # the first APs are offices, shared by many
        cycle = rng.uniform(14.0, 40.0, count)
        return _Devices(
            ids=device_ids(count), cycle_hours=cycle, cycle_phase=rng.uniform(0.0, cycle),
            battery_low=rng.uniform(5.0, 25.0, count), temperature=rng.uniform(86.0, 91.0, count),
            load=np.exp(rng.normal(0.0, 0.6, count)), mem_total=rng.choice([1, 2, 3, 4], count) * 1_000_000_000,
            home_ap=rng.integers(offices, access_points, count), work_ap=rng.integers(0, offices, count),
            ap_bssids=mac_addresses(seeded(seed, tag, 1), access_points),
            ap_ssid=rng.integers(0, len(SSIDS), access_points),
            ap_rssi=rng.uniform(-80.0, -40.0, access_points),
        )

    def day_context(self, day_index: int, day: dt.date, scale: Scale) -> _Day:
        devices = self._devices(scale.seed, scale.symbols)
        return _Day(devices, int(np.datetime64(day, "ns").astype(np.int64)), day_index,
                    points=math.ceil(scale.rows_per_day / scale.symbols),
                    ids=vocabulary(tuple(devices.ids)), bssids=vocabulary(tuple(devices.ap_bssids)))

    def rows(self, day: _Day, random: ChunkRandom, start: int, stop: int) -> dict:
        dev = day.devices
        row = np.arange(start, stop)
        point, device = np.divmod(row, len(dev.ids))
        hour = point * (24.0 / day.points)                  # hour of day of each reading
        elapsed = day.day_index * 24.0 + hour               # hours since the first day

        cycle = np.mod((elapsed + dev.cycle_phase[device]) / dev.cycle_hours[device], 1.0)
        charging = cycle >= _DISCHARGE_SHARE
        low = dev.battery_low[device]
        level = np.where(charging, low + (100.0 - low) * (cycle - _DISCHARGE_SHARE) / (1 - _DISCHARGE_SHARE),
                         100.0 - (100.0 - low) * cycle / _DISCHARGE_SHARE)
        level = np.clip(np.round(level + 2.0 * (random.uniform(0) - 0.5)), 0, 100).astype(np.int32)
        status = np.where(charging, np.where(level >= 99, 2, 1), 0)

        daytime = np.sin(2 * np.pi * (hour - 9.0) / 24.0)  # peaks mid-afternoon
        temperature = dev.temperature[device] + 2.0 * charging + 1.2 * daytime + 0.6 * (random.uniform(1) - 0.5)
        at_work = (hour >= _WORK_HOURS[0]) & (hour < _WORK_HOURS[1])
        ap = np.where(at_work, dev.work_ap[device], dev.home_ap[device])
        rssi = np.round(dev.ap_rssi[ap] + 16.0 * (random.uniform(2) - 0.5)).astype(np.int16)

        load = dev.load[device] * (1.0 + 0.5 * daytime + 0.4 * at_work)
        used_share = np.clip(0.45 + 0.15 * daytime + 0.2 * (random.uniform(3) - 0.5), 0.05, 0.95)
        mem_used = (dev.mem_total[device] * used_share).astype(np.int64)
        timestamp = day.day_ns + np.round(point * (86_400_000.0 / day.points)).astype(np.int64) * 1_000_000
        return {
            "time": timestamp.view("datetime64[ns]"),
            "device_id": day.ids.codes(device),
            "battery_level": level,
            "battery_status": vocabulary(BATTERY_STATUS).codes(status),
            "battery_temperature": np.round(temperature, 1),
            "bssid": day.bssids.codes(ap),
            "cpu_avg_1min": _load(load, random.uniform(4), 0.6),
            "cpu_avg_5min": _load(load, random.uniform(5), 0.3),
            "cpu_avg_15min": _load(load, random.uniform(6), 0.1),
            "mem_free": dev.mem_total[device] - mem_used,
            "mem_used": mem_used,
            "rssi": rssi,
            "ssid": vocabulary(SSIDS).codes(dev.ap_ssid[ap]),
        }


def _load(mean: np.ndarray, u: np.ndarray, noise: float) -> np.ndarray:
    """A load average: the longer the window, the less it strays from the mean load."""
    return np.round(np.maximum(mean * (1.0 + noise * 2.0 * (u - 0.5)), 0.0), 2)
