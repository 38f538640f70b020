"""Plain data fit for strict JSON: a NaN or an infinity becomes None (``json.dumps(allow_nan=False)``
refuses them, and other readers choke on them)."""
from __future__ import annotations

import math
from typing import Any


def finite_only(value: Any) -> Any:
    """``value`` with every float that is not finite replaced by None, through dicts and lists."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {str(k): finite_only(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [finite_only(v) for v in value]
    return value
