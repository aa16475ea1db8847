"""A Python check of GBNF syntax that mirrors llama.cpp's grammar parser.

llama.cpp reports a broken grammar only on stderr and hands back a NULL sampler, and it needs a
loaded model to try. This checker runs at start-up without a model and says which line is wrong;
the engine still compiles every grammar natively once the model is loaded.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from sentinel_mcp.core.errors import SentinelError

MAX_REPETITION = 2000  # llama.cpp's MAX_REPETITION_THRESHOLD
# llama.cpp parses groups recursively on the C++ stack, and so does this checker: a hostile grammar
# (or one converted from a hostile JSON Schema) nested deeper than this is refused, not parsed
MAX_NESTING = 300  # a JSON Schema maxLength of N becomes N nested groups in llama.cpp's converter
_WORD = re.compile(r"[A-Za-z0-9-]+")
_INT = re.compile(r"[0-9]+")
_ESCAPES = {"t", "r", "n", "\\", '"', "[", "]", "-"}
_HEX_LEN = {"x": 2, "u": 4, "U": 8}


class GbnfSyntaxError(SentinelError, ValueError):
    area = "llm"
    def __init__(self, message: str, line: int, column: int) -> None:
        super().__init__(f"line {line}, column {column}: {message}")
        self.line, self.column = line, column


@dataclass
class GbnfSummary:
    rules: list[str]
    references: set[str]


class _Parser:
    def __init__(self, src: str) -> None:
        self.src = src
        self.pos = 0
        self.defined: list[str] = []
        self.referenced: dict[str, int] = {}  # rule name -> position of its first use
        self.depth = 0

    # --- helpers ---------------------------------------------------------------------------------
    def fail(self, message: str, pos: int | None = None) -> GbnfSyntaxError:
        p = self.pos if pos is None else pos
        line = self.src.count("\n", 0, p) + 1
        column = p - (self.src.rfind("\n", 0, p) + 1) + 1
        near = self.src[p:p + 20].split("\n")[0]
        return GbnfSyntaxError(f"{message} (near {near!r})" if near else message, line, column)

    def peek(self, k: int = 0) -> str:
        i = self.pos + k
        return self.src[i] if i < len(self.src) else ""

    def space(self, newline_ok: bool) -> None:
        while True:
            c = self.peek()
            if c in (" ", "\t") or (newline_ok and c in ("\r", "\n")):
                self.pos += 1
            elif c == "#":
                while self.peek() not in ("", "\r", "\n"):
                    self.pos += 1
            else:
                return

    def name(self) -> str:
        m = _WORD.match(self.src, self.pos)
        if not m:
            raise self.fail("expecting a rule name")
        self.pos = m.end()
        return m.group(0)

    def char(self) -> None:
        c = self.peek()
        if c == "":
            raise self.fail("unexpected end of input")
        if c != "\\":
            self.pos += 1
            return
        e = self.peek(1)
        if e in _HEX_LEN:
            digits = self.src[self.pos + 2:self.pos + 2 + _HEX_LEN[e]]
            if len(digits) < _HEX_LEN[e] or not all(d in "0123456789abcdefABCDEF" for d in digits):
                raise self.fail(f"bad \\{e} escape: needs {_HEX_LEN[e]} hex digits")
            self.pos += 2 + _HEX_LEN[e]
        elif e in _ESCAPES:
            self.pos += 2
        else:
            raise self.fail(f"unknown escape \\{e}")

    # --- grammar ---------------------------------------------------------------------------------
    def grammar(self) -> None:
        self.space(True)
        while self.peek():
            self.rule()

    def rule(self) -> None:
        start = self.pos
        name = self.name()
        self.space(False)
        if self.src[self.pos:self.pos + 3] != "::=":
            raise self.fail(f"expecting ::= after rule name {name!r}")
        self.pos += 3
        self.space(True)
        if name in self.defined:
            raise self.fail(f"rule {name!r} is defined twice", start)
        self.defined.append(name)
        self.alternates(nested=False)
        if self.peek() == "\r":
            self.pos += 1
        if self.peek() == "\n":
            self.pos += 1
        elif self.peek():
            raise self.fail("expecting newline or end of rule")
        self.space(True)

    def alternates(self, nested: bool) -> None:
        self.sequence(nested)
        while self.peek() == "|":
            self.pos += 1
            self.space(True)
            self.sequence(nested)

    def sequence(self, nested: bool) -> None:
        has_item = False
        while self.peek():
            c = self.peek()
            if c == '"':
                self.pos += 1
                while self.peek() != '"':
                    self.char()
                self.pos += 1
            elif c == "[":
                self.pos += 1
                if self.peek() == "^":
                    self.pos += 1
                while self.peek() != "]":
                    self.char()
                    if self.peek() == "-" and self.peek(1) != "]":
                        self.pos += 1
                        self.char()
                self.pos += 1
            elif c in ("<", "!"):
                self.token()
            elif _WORD.match(c):
                at = self.pos
                self.referenced.setdefault(self.name(), at)
            elif c == "(":
                if self.depth >= MAX_NESTING:
                    raise self.fail(f"groups nested deeper than {MAX_NESTING} levels")
                self.pos += 1
                self.space(True)
                self.depth += 1
                self.alternates(nested=True)
                self.depth -= 1
                if self.peek() != ")":
                    raise self.fail("expecting ')'")
                self.pos += 1
            elif c == ".":
                self.pos += 1
            elif c in ("*", "+", "?", "{"):
                if not has_item:
                    raise self.fail(f"{c!r} must follow an item")
                self.pos += 1
                if c == "{":
                    self.space(nested)
                    self.repetition(nested)
            else:
                return
            has_item = True
            self.space(nested)

    def repetition(self, nested: bool) -> None:
        m = _INT.match(self.src, self.pos)
        if not m:
            raise self.fail("expecting an integer after '{'")
        lo, hi = int(m.group(0)), None
        self.pos = m.end()
        self.space(nested)
        if self.peek() == ",":
            self.pos += 1
            self.space(nested)
            m = _INT.match(self.src, self.pos)
            if m:
                hi = int(m.group(0))
                self.pos = m.end()
                self.space(nested)
        elif self.peek() == "}":
            hi = lo
        else:
            raise self.fail("expecting ',' or '}' in a repetition")
        if self.peek() != "}":
            raise self.fail("expecting '}'")
        self.pos += 1
        if lo > MAX_REPETITION:
            raise self.fail(f"repetition minimum {lo} exceeds llama.cpp's limit of {MAX_REPETITION}")
        if hi is not None and hi < lo:
            raise self.fail(f"repetition maximum {hi} is below its minimum {lo}")

    def token(self) -> None:
        if self.peek() == "!":
            self.pos += 1
        if self.peek() != "<":
            raise self.fail("expecting '<' to start a token")
        end = self.src.find(">", self.pos)
        if end < 0 or "\n" in self.src[self.pos:end]:
            raise self.fail("unterminated token reference")
        self.pos = end + 1


def check_gbnf(src: str, root: str = "root") -> GbnfSummary:
    """Raise GbnfSyntaxError for anything llama.cpp's parser would reject (except vocab-dependent tokens)."""
    p = _Parser(src)
    p.grammar()
    if not p.defined:
        raise GbnfSyntaxError("the grammar defines no rules", 1, 1)
    for ref, at in p.referenced.items():
        if ref not in p.defined:
            raise p.fail(f"undefined rule {ref!r}", at)
    if root not in p.defined:
        raise GbnfSyntaxError(f"the grammar has no {root!r} rule", 1, 1)
    return GbnfSummary(rules=p.defined, references=set(p.referenced))
