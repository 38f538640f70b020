"""Declared workload parameters: enough for the GUI to generate a form with units and limits."""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Param:
    name: str                    # key in Scenario.params
    label: str
    kind: str                    # "int" | "float" | "choice" | "bool" | "int_list"
    default: Any
    minimum: float | None = None
    maximum: float | None = None
    unit: str = ""               # shown beside the field: "rows", "s", "ops"
    choices: tuple[str, ...] = ()
    help: str = ""

    def coerce(self, value: Any) -> Any:
        """Validate one value; raise ValueError with a message a user can act on."""
        if self.kind == "bool":
            if isinstance(value, str):
                return value.strip().lower() in {"1", "true", "yes", "on"}
            return bool(value)
        if self.kind == "choice":
            if value not in self.choices:
                raise ValueError(f"{self.label}: {value!r} is not one of {', '.join(self.choices)}")
            return value
        if self.kind == "int_list":
            items = value.split(",") if isinstance(value, str) else list(value)
            return [self._number(int, v) for v in items if str(v).strip()]
        return self._number(int if self.kind == "int" else float, value)

    def _number(self, cast, value: Any):
        try:
            number = cast(str(value).strip()) if isinstance(value, str) else cast(value)
        except (TypeError, ValueError):
            raise ValueError(f"{self.label}: {value!r} is not a number") from None
        if not math.isfinite(number):
            raise ValueError(f"{self.label}: {value!r} is not a finite number")
        if self.minimum is not None and number < self.minimum:
            raise ValueError(f"{self.label}: {number} is below the minimum {self.minimum:g} {self.unit}".rstrip())
        if self.maximum is not None and number > self.maximum:
            raise ValueError(f"{self.label}: {number} is above the maximum {self.maximum:g} {self.unit}".rstrip())
        return number
