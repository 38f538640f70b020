"""Plain data fit for strict JSON: a NaN or an infinity becomes None (``json.dumps(allow_nan=False)``
refuses them, and other readers choke on them)."""
from __future__ import annotations

import json
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


MAX_DEPTH = 64            # deeper than any record Tickbench writes (a scenario: 4)


def json_record(text: Any, what: str) -> dict[str, Any]:
    """The record the JSON ``text`` holds ({} for none), nested at most ``MAX_DEPTH`` deep; a
    ``ValueError`` naming ``what`` otherwise (a list where a record belongs, text nested 100,000
    deep that would crash every reader after it)."""
    if text is None or text == "":
        return {}
    if not isinstance(text, str):
        raise ValueError(f"{what} is a {type(text).__name__}, not the JSON text of a record")
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):
        raise ValueError(f"{what} is not JSON") from None
    if not isinstance(value, dict):
        raise ValueError(f"{what} holds a {type(value).__name__}, not a record")
    if _depth(value) > MAX_DEPTH:
        raise ValueError(f"{what} is nested more than {MAX_DEPTH} deep")
    return value


def _depth(value: Any) -> int:
    """How deep ``value`` nests (1 for a flat record), counted without recursion."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        item, level = stack.pop()
        deepest = max(deepest, level)
        if deepest > MAX_DEPTH:
            break
        children = item.values() if isinstance(item, dict) else item if isinstance(item, list) else ()
        stack.extend((child, level + 1) for child in children if isinstance(child, (dict, list)))
    return deepest
