"""A parser for the subset of DolphinDB SQL the suite queries use (reports 001 and 004).

Written from DolphinDB's documentation, independently of the target's texts: ``select``/``exec``
with ``top``, a select list with ``as`` aliases, ``from`` a ``loadTable(...)``, a variable, a
``(select ...)`` in parentheses, or an ``ej(...)``/``aj(...)`` of two of those, ``where``
conditions separated by commas, ``group by`` (with ``having``), ``pivot by`` or ``context by``
(with ``csort``) keys (with aliases), ``order by`` (``asc``/``desc``) and ``limit``; expressions with arithmetic,
comparisons, ``between a : b``, ``in [...]``, ``like``, ``and``/``or``, function calls and DolphinDB
literals (``2007.08.23``, ``10:00:00``, ``2016.11.15T12:00:00.000``, ``"text"``, ```a`b`` string
vectors, ``60s`` durations, numbers). Anything
else is a syntax error, as a real server would answer a script it cannot parse.

Nodes are tuples: ``("col", name)``, ``("lit", kind, value)`` (kind: int, float, str, date, second,
time, timestamp; duration with value (count, unit)), ``("vec", items)``, ``("star",)``,
``("neg", x)``, ``("bin", op, a, b)``, ``("between", x, lo, hi)``, ``("in", x, vec)``, ``("like", x, pattern, negated)``,
``("call", name, args)``.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from tests.ddbserver import codec
from tests.ddbserver.syntax import ScriptError, parse_date, parse_time_ms, temporal_literal, unquote

KEYWORDS = {"select", "exec", "from", "where", "group", "by", "having", "pivot", "order", "limit", "top", "as",
            "asc", "desc", "between", "in", "like", "and", "or", "not", "context", "csort"}
DURATION_UNITS = ("ns", "us", "ms", "s", "m", "H", "d", "w", "M", "y")

_TOKEN = re.compile(r"""
    (?P<space>\s+)
  | (?P<ts>\d{4}\.\d{2}\.\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d{9}|\.\d{3})?)
  | (?P<date>\d{4}\.\d{2}\.\d{2})
  | (?P<time>\d{2}:\d{2}:\d{2}(?:\.\d{3})?)
  | (?P<dur>\d+(?:ns|us|ms|s|m|H|d|w|M|y)(?![A-Za-z0-9_]))
  | (?P<sym>(?:`[A-Za-z_][A-Za-z0-9_]*)+)
  | (?P<num>\d+\.\d*|\d+)
  | (?P<str>"(?:[^"\\]|\\.)*")
  | (?P<ident>[A-Za-z_][A-Za-z0-9_]*!?)
  | (?P<op><=|>=|!=|<>|==|[-+*/%()\[\],:=<>])
""", re.X | re.S)


@dataclass
class Token:
    kind: str
    text: str


def tokenize(text: str) -> list[Token]:
    tokens, pos = [], 0
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if not m:
            raise ScriptError(f"Syntax Error: [line #1] Cannot recognize the token {text[pos:pos + 20]}")
        pos = m.end()
        kind = m.lastgroup
        if kind == "space":
            continue
        word = m.group()
        if kind == "ident" and word.lower() in KEYWORDS:
            kind, word = "kw", word.lower()
        tokens.append(Token(kind, word))
    return tokens


@dataclass
class Select:
    exec: bool
    items: list                                   # [(expr, alias or None)]
    source: tuple                                  # ("load", db, table) | ("ej"|"aj", left, right, cols) |
                                                   # ("var", name) | ("select", Select)
    where: list = field(default_factory=list)
    group: list = field(default_factory=list)     # [(expr, alias or None)]
    having: list = field(default_factory=list)    # aggregate conditions on the groups
    pivot: list = field(default_factory=list)     # [(expr, alias or None)]
    context: list = field(default_factory=list)   # context by keys [(expr, alias or None)]
    csort: list = field(default_factory=list)     # [(expr, descending)]: the order within a context
    order: list = field(default_factory=list)     # [(expr, descending)]
    limit: int | None = None


class Parser:
    def __init__(self, text: str):
        self.tokens = tokenize(text)
        self.pos = 0

    # --- token helpers ------------------------------------------------------------------------
    def peek(self, offset: int = 0) -> Token | None:
        i = self.pos + offset
        return self.tokens[i] if i < len(self.tokens) else None

    def at(self, kind: str, text: str | None = None, offset: int = 0) -> bool:
        tok = self.peek(offset)
        return tok is not None and tok.kind == kind and (text is None or tok.text == text)

    def take(self, kind: str, text: str | None = None) -> Token:
        tok = self.peek()
        if tok is None or tok.kind != kind or (text is not None and tok.text != text):
            found = tok.text if tok else "end of statement"
            raise ScriptError(f"Syntax Error: [line #1] expected {text or kind}, found {found}")
        self.pos += 1
        return tok

    def accept(self, kind: str, text: str | None = None) -> bool:
        if self.at(kind, text):
            self.pos += 1
            return True
        return False

    # --- statements -----------------------------------------------------------------------------
    def statement(self) -> tuple[str | None, Select]:
        target = None
        if self.at("ident") and self.at("op", "=", 1):
            target = self.take("ident").text
            self.take("op", "=")
        query = self.select()
        if self.peek() is not None:
            raise ScriptError(f"Syntax Error: [line #1] Cannot recognize the token {self.peek().text}")
        return target, query

    def select(self) -> Select:
        is_exec = self.accept("kw", "exec")
        if not is_exec:
            self.take("kw", "select")
        limit = None
        if self.accept("kw", "top"):
            limit = int(self.take("num").text)
        items = self.aliased_list()
        self.take("kw", "from")
        source = self.source()
        query = Select(is_exec, items, source, limit=limit)
        if self.accept("kw", "where"):
            query.where = self.expr_list()
        if self.at("kw", "context"):
            self.take("kw", "context")
            self.take("kw", "by")
            query.context = self.aliased_list()
            if self.accept("kw", "csort"):
                query.csort = self.ordering()
        elif self.at("kw", "group") or self.at("kw", "pivot"):
            kind = self.take("kw").text
            self.take("kw", "by")
            keys = self.aliased_list()
            if kind == "group":
                query.group = keys
                if self.accept("kw", "having"):
                    query.having = self.expr_list()
            else:
                query.pivot = keys
        if self.accept("kw", "order"):
            self.take("kw", "by")
            query.order = self.ordering()
        if self.accept("kw", "limit"):
            query.limit = int(self.take("num").text)
        return query

    def ordering(self) -> list:
        """``expr [asc|desc], ...`` (order by, csort)."""
        out = []
        while True:
            expr = self.expr()
            desc = self.accept("kw", "desc")
            if not desc:
                self.accept("kw", "asc")
            out.append((expr, desc))
            if not self.accept("op", ","):
                return out

    def aliased_list(self) -> list:
        out = []
        while True:
            expr = self.expr()
            alias = self.take("ident").text if self.accept("kw", "as") else None
            out.append((expr, alias))
            if not self.accept("op", ","):
                return out

    def expr_list(self) -> list:
        out = [self.expr()]
        while self.accept("op", ","):
            out.append(self.expr())
        return out

    def source(self) -> tuple:
        if self.at("op", "(") and (self.at("kw", "select", 1) or self.at("kw", "exec", 1)):
            self.take("op", "(")
            query = self.select()
            self.take("op", ")")
            return ("select", query)
        if self.at("ident") and self.at("op", "(", 1):
            name = self.take("ident").text
            self.take("op", "(")
            if name == "loadTable":
                db = self.string()
                self.take("op", ",")
                table = self.string()
                self.take("op", ")")
                return ("load", db, table)
            if name in ("ej", "aj"):
                left = self.source()
                self.take("op", ",")
                right = self.source()
                self.take("op", ",")
                cols = self.primary()
                self.take("op", ")")
                if cols[0] == "lit" and cols[1] == "str":
                    names = [cols[2]]
                elif cols[0] == "vec" and all(c[0] == "lit" and c[1] == "str" for c in cols[1]):
                    names = [c[2] for c in cols[1]]
                else:
                    raise ScriptError(f"{name}: matchingCols must be a string scalar or vector")
                return (name, left, right, names)
            raise ScriptError(f"The test server does not read tables from {name}()")
        return ("var", self.take("ident").text)

    def string(self) -> str:
        return unquote(self.take("str").text[1:-1])

    # --- expressions ------------------------------------------------------------------------------
    def expr(self):
        left = self.conjunction()
        while self.accept("kw", "or"):
            left = ("bin", "or", left, self.conjunction())
        return left

    def conjunction(self):
        left = self.comparison()
        while self.accept("kw", "and"):
            left = ("bin", "and", left, self.comparison())
        return left

    def comparison(self):
        left = self.additive()
        if self.accept("kw", "between"):
            lo = self.additive()
            self.take("op", ":")
            return ("between", left, lo, self.additive())
        if self.accept("kw", "in"):
            return ("in", left, self.additive())
        negated = self.at("kw", "not") and self.at("kw", "like", 1)
        if negated:
            self.take("kw", "not")
        if self.accept("kw", "like"):
            return ("like", left, self.additive(), negated)
        tok = self.peek()
        if tok is not None and tok.kind == "op" and tok.text in ("=", "==", "!=", "<>", "<", ">", "<=", ">="):
            self.pos += 1
            op = {"=": "==", "<>": "!="}.get(tok.text, tok.text)
            return ("bin", op, left, self.additive())
        return left

    def additive(self):
        left = self.multiplicative()
        while self.at("op", "+") or self.at("op", "-"):
            op = self.take("op").text
            left = ("bin", op, left, self.multiplicative())
        return left

    def multiplicative(self):
        left = self.unary()
        while self.at("op", "*") or self.at("op", "/") or self.at("op", "%"):
            op = self.take("op").text
            left = ("bin", op, left, self.unary())
        return left

    def unary(self):
        if self.accept("op", "-"):
            inner = self.unary()
            if inner[0] == "lit" and inner[1] in ("int", "float"):
                return ("lit", inner[1], -inner[2])
            return ("neg", inner)
        return self.primary()

    def primary(self):
        tok = self.peek()
        if tok is None:
            raise ScriptError("Syntax Error: [line #1] the statement ends too early")
        if tok.kind == "num":
            self.pos += 1
            return ("lit", "float", float(tok.text)) if "." in tok.text else ("lit", "int", int(tok.text))
        if tok.kind == "str":
            return ("lit", "str", self.string())
        if tok.kind == "date":
            self.pos += 1
            return ("lit", "date", parse_date(tok.text))
        if tok.kind == "time":
            self.pos += 1
            # DolphinDB: 10:00:00 is a SECOND, 10:00:00.000 a TIME
            return ("lit", "time", parse_time_ms(tok.text)) if "." in tok.text else \
                ("lit", "second", parse_time_ms(tok.text) // 1000)
        if tok.kind == "dur":
            self.pos += 1
            unit = tok.text.lstrip("0123456789")
            return ("lit", "duration", (int(tok.text[:-len(unit)]), unit))
        if tok.kind == "sym":
            self.pos += 1
            names = tok.text.split("`")[1:]
            return ("lit", "str", names[0]) if len(names) == 1 else ("vec", [("lit", "str", n) for n in names])
        if tok.kind == "ts":
            self.pos += 1
            ddb_type, value = temporal_literal(tok.text)   # DATETIME, TIMESTAMP or NANOTIMESTAMP by its digits
            kind = {codec.DATETIME: "datetime", codec.TIMESTAMP: "timestamp"}.get(ddb_type, "nanotimestamp")
            return ("lit", kind, value)
        if self.accept("op", "("):
            inner = self.expr()
            self.take("op", ")")
            return inner
        if self.accept("op", "["):
            items = [self.expr()]
            while self.accept("op", ","):
                items.append(self.expr())
            self.take("op", "]")
            return ("vec", items)
        if self.accept("op", "*"):
            return ("star",)
        if tok.kind == "ident":
            self.pos += 1
            if self.accept("op", "("):
                args = []
                if not self.accept("op", ")"):
                    args = [self.expr()]
                    while self.accept("op", ","):
                        args.append(self.expr())
                    self.take("op", ")")
                return ("call", tok.text, args)
            return ("col", tok.text)
        raise ScriptError(f"Syntax Error: [line #1] Cannot recognize the token {tok.text}")


def parse_statement(text: str) -> tuple[str | None, Select]:
    """One statement: ``[name =] select ...`` or ``exec ...``."""
    return Parser(text).statement()


STATEMENT_START = re.compile(r"^\s*(?:[A-Za-z_][A-Za-z0-9_]*\s*=(?!=)\s*)?(?:select|exec)\b", re.I)


def split_statements(script: str) -> list[str] | None:
    """The statements of a script made only of queries, one per line (None otherwise)."""
    lines = [line for line in script.split("\n") if line.strip()]
    if not lines or not all(STATEMENT_START.match(line) for line in lines):
        return None
    return lines
