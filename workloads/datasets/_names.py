"""Deterministic, unique key names: US tickers, China security ids, device ids, MAC addresses."""
from __future__ import annotations

import numpy as np

_TICKER_LENGTHS = (1, 2, 3, 4, 5)
_TICKER_LENGTH_WEIGHTS = (0.01, 0.06, 0.36, 0.47, 0.10)  # most US tickers have 3 or 4 letters
MAX_TICKERS = 1_000_000


def tickers(rng: np.random.Generator, count: int) -> list[str]:
    """``count`` distinct tickers of 1-5 upper-case letters, in draw order."""
    if count > MAX_TICKERS:
        raise ValueError(f"{count} symbols asked; at most {MAX_TICKERS:,} tickers can be generated")
    seen: dict[str, None] = {}
    while len(seen) < count:
        batch = 4096  # fixed, so asking for more tickers extends the same list
        lengths = rng.choice(_TICKER_LENGTHS, size=batch, p=_TICKER_LENGTH_WEIGHTS)
        letters = rng.integers(65, 91, size=(batch, 5), dtype=np.uint8)
        for row, length in zip(letters, lengths):
            seen.setdefault(row[:length].tobytes().decode("ascii"))
            if len(seen) == count:
                break
    return list(seen)


# Exchange code prefixes of A shares: Shanghai main board / STAR, Shenzhen main board / ChiNext.
_CHINA_BOARDS = (("SH", 600000, 4000), ("SH", 688000, 1000), ("SZ", 0, 3000), ("SZ", 300000, 1000))
MAX_CHINA_IDS = sum(size for _, _, size in _CHINA_BOARDS)


def china_security_ids(rng: np.random.Generator, count: int) -> tuple[list[str], list[str]]:
    """``count`` distinct 6-digit A-share codes (e.g. "600000", "000001") and their markets."""
    if count > MAX_CHINA_IDS:
        raise ValueError(f"{count} securities asked; at most {MAX_CHINA_IDS:,} A-share codes can be generated")
    pool = np.concatenate([np.arange(first + 1, first + 1 + size) for _, first, size in _CHINA_BOARDS])
    markets = np.concatenate([np.full(size, market) for market, _, size in _CHINA_BOARDS])
    picked = rng.choice(len(pool), size=count, replace=False)
    return [f"{code:06d}" for code in pool[picked]], [str(m) for m in markets[picked]]


def device_ids(count: int) -> list[str]:
    """TimescaleDB's sample names: demo000000, demo000001, ..."""
    return [f"demo{i:06d}" for i in range(count)]


def mac_addresses(rng: np.random.Generator, count: int) -> list[str]:
    """``count`` distinct upper-case MAC addresses such as "A0:B1:C5:D2:E0:F3"."""
    seen: dict[str, None] = {}
    while len(seen) < count:
        for row in rng.integers(0, 256, size=(count, 6)):
            seen.setdefault(":".join(f"{b:02X}" for b in row))
            if len(seen) == count:
                break
    return list(seen)
