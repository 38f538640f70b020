"""A worker's records as columns from the start: what one operation costs the harness.

Each operation appends four numbers to typed columns (``array.array``: C storage, no Python
object kept per record): its start, its time, its rows and bytes. What a batch's records share is
said once: the batch's kind, its first sequence number (they follow one another), its operation
name; what few records have goes to a short side list (a name other than the workload's, phases,
wire bytes, a node, facts, an error, a failure or an unsupported verdict), and an open loop's
intended starts to a fifth column. ``take()`` turns what was added into one ``Columns`` batch for
the pipe (``workloads.run.records``) with a few array copies, never record by record, and empties the
columns in place, so the appenders the worker's loop holds stay valid (a bound ``append`` kept in a
local is the cheapest call Python has).
"""
from __future__ import annotations

import json
from array import array
from typing import Any, Callable

import numpy as np

from workloads.run.records import FIELD_DTYPES, PHASE_FIELDS, UNKNOWN_BYTES, Columns, extra_json
from workloads.targets.base import PHASES

_NAN = float("nan")


class RecordBuffer:
    __slots__ = ("step", "worker", "host", "kind", "first_seq", "_t_start", "_total", "_rows", "_bytes",
                 "_intended", "_rare", "_names", "_codes", "_default", "_named")

    def __init__(self, step: int, worker: int, host: str = "", kind: str = ""):
        self.step, self.worker, self.host, self.kind = step, worker, host, kind
        self.first_seq = 0
        self._names: list[str] = []
        self._codes: dict[str, int] = {}
        self._default = 0
        self._t_start, self._total, self._intended = array("d"), array("d"), array("d")
        self._rows, self._bytes = array("q"), array("q")
        self._named: dict[int, int] = {}       # index -> code of a name other than the batch's
        # (index, kind, failed, phases, wire_bytes, error, node, extra): what most records leave empty
        self._rare: list[tuple[int, str, bool, dict | None, int | None, str, str, str]] = []

    def __len__(self) -> int:
        return len(self._total)

    def begin(self, kind: str, first_seq: int = 0, op_name: str = "") -> None:
        """The records to come: their kind, the first one's sequence number (each next one's is
        one more), the name they go under unless ``name`` says otherwise."""
        if len(self) and (kind != self.kind or first_seq != self.first_seq + len(self)):
            raise ValueError("one batch holds one kind of record in sequence: take() the batch first")
        if not len(self):
            self.first_seq = first_seq
        self.kind = kind
        self._default = self.code(op_name)

    def code(self, op_name: str) -> int:
        """The code of an operation's name (added on first sight)."""
        code = self._codes.get(op_name)
        if code is None:
            code = self._codes[op_name] = len(self._names)
            self._names.append(op_name)
        return code

    def appenders(self) -> tuple[Callable[[Any], None], ...]:
        """t_start, total_s, rows, bytes: one call each per record, in that order; an open loop's
        ``intended_s`` goes to ``intended_appender`` (for every record of the batch, or none)."""
        return self._t_start.append, self._total.append, self._rows.append, self._bytes.append

    def intended_appender(self) -> Callable[[float], None]:
        return self._intended.append

    def name(self, index: int, op_name: str) -> None:
        """Record ``index`` goes under ``op_name`` (a query of a suite), not the batch's name."""
        code = self.code(op_name)
        if code != self._default:
            self._named[index] = code

    def rare(self, index: int, result, error: str = "", facts: dict[str, Any] | None = None,
             kind: str = "") -> None:
        """What record ``index`` holds beyond the columns: a failure (``result`` None) and its error,
        its result's phases, wire bytes, node and facts, a cold step's cache facts, another kind
        ("unsupported")."""
        if result is None:
            self._rare.append((index, kind, True, None, None, error, "", extra_json(facts)))
            return
        extra = {**result.extra, **facts} if facts else result.extra
        self._rare.append((index, kind, False, result.phases or None, result.wire_bytes, error, result.node or "",
                           extra_json(extra)))

    def add(self, kind: str, seq: int, t_start: float, total: float, result, error: str, op_name: str,
            facts: dict[str, Any] | None = None, intended: float | None = None, kind_override: str = "") -> None:
        """One record, all at once (warm-ups, missed starts: the loop's hot path uses ``appenders``)."""
        self.begin(kind, seq, self._names[self._default] if len(self) else op_name)
        index = len(self)
        ok = result is not None
        for append, value in zip(self.appenders(), (t_start, total, result.rows if ok else 0,
                                                    result.nbytes if ok else 0)):
            append(value)
        if intended is not None:
            self._intended.append(intended)
        self.name(index, op_name)
        if not ok or error or facts or kind_override or result.phases or result.node or result.extra \
                or result.wire_bytes is not None:
            self.rare(index, result, error, facts, kind_override)

    def add_facts(self, index: int, facts: dict[str, Any]) -> None:
        """Facts learnt after record ``index`` was added (an answer checked later), into its extra."""
        for at, (where, kind, failed, phases, wire, error, node, extra) in enumerate(self._rare):
            if where == index:
                merged = {**(json.loads(extra) if extra else {}), **facts}
                self._rare[at] = (where, kind, failed, phases, wire, error, node, extra_json(merged))
                return
        self._rare.append((index, "", False, None, None, "", "", extra_json(facts)))

    def take(self) -> Columns:
        """What was added, as one batch; the columns are emptied in place."""
        n = len(self)
        if len(self._intended) not in (0, n):
            raise ValueError("an intended start for some records of a batch and not others")
        codes = np.full(n, self._default, np.intp)
        for index, code in self._named.items():
            codes[index] = code
        columns: Columns = {
            "step": np.full(n, self.step, np.int32), "worker": np.full(n, self.worker, np.int32),
            "seq": np.arange(self.first_seq, self.first_seq + n, dtype=np.int32),
            "op": np.array(self._names)[codes] if n else np.empty(0, np.str_),
            "t_start": np.array(self._t_start, np.float64), "total_s": np.array(self._total, np.float64),
            "rows": np.array(self._rows, np.int64), "bytes": np.array(self._bytes, np.int64),
            "ok": np.ones(n, np.bool_), "kind": np.full(n, self.kind),
            "wire_bytes": np.full(n, UNKNOWN_BYTES, np.int64), "host": np.full(n, self.host),
            "intended_s": np.array(self._intended, np.float64) if len(self._intended) else np.full(n, np.nan),
        }
        for name in PHASE_FIELDS:
            columns[name] = np.full(n, np.nan)
        if self._rare:
            texts = {name: [""] * n for name in ("error", "node", "extra", "kind")}
            for index, kind, failed, phases, wire, error, node, extra in self._rare:
                columns["ok"][index] = not failed
                if phases:
                    for phase in PHASES:
                        value = phases.get(phase)
                        if value is not None:
                            columns[f"{phase}_s"][index] = value
                if wire is not None:
                    columns["wire_bytes"][index] = int(wire)
                texts["error"][index], texts["node"][index], texts["extra"][index] = error, node, extra
                texts["kind"][index] = kind
            if any(texts["kind"]):
                columns["kind"] = np.array([k or self.kind for k in texts["kind"]])
            for name in ("error", "node", "extra"):
                columns[name] = np.array(texts[name])
        else:
            for name in ("error", "node", "extra"):
                columns[name] = np.full(n, "")
        for column in (self._t_start, self._total, self._rows, self._bytes, self._intended):
            del column[:]
        self._rare, self._named = [], {}
        self.first_seq += n
        return {name: columns[name] for name in FIELD_DTYPES}
