"""Ad-hoc JSON Schemas: checked, compiled to a GBNF grammar, and used to validate the output.

llama-cpp-python's converter silently ignores keywords it cannot express, so a schema using them
would "constrain" nothing; those are refused up front with the keyword's location. Keywords that
only bound values (minimum, maxItems on nested tuples, ...) are checked after generation.
"""

from __future__ import annotations

import json
import re
from typing import Any

from sentinel_mcp.core import outside_schema
from sentinel_mcp.core.outside_schema import TooCostly, UnusableSchema
from sentinel_mcp.llm.errors import OutputInvalid, SchemaError
from sentinel_mcp.llm.gbnf_syntax import GbnfSyntaxError, check_gbnf

# keywords the converter cannot turn into grammar rules
UNCONSTRAINABLE = ("not", "if", "then", "else", "dependentSchemas", "dependentRequired", "patternProperties",
                   "propertyNames", "contains", "unevaluatedProperties", "unevaluatedItems", "$dynamicRef")
MAX_SCHEMA_BYTES = 64_000
# a length or count bound becomes that many grammar repetitions, built before the model is asked: a schema of
# 60 bytes with "minLength": 20000000 took 20 s and 800 MB. Each bound, and all of them together, are capped
# (a model's answer is cut at max_tokens long before such lengths anyway).
REPEAT_KEYWORDS = ("minLength", "maxLength", "minItems", "maxItems", "minProperties", "maxProperties",
                   "minContains", "maxContains")
MAX_REPEAT = 4_096
MAX_REPEAT_TOTAL = 16_384
# the grammar a schema makes: the converter copies what allOf refers to into each place using it, so 3 KB of
# schema within the bounds above made 2.5 MB of grammar (9 s to check, 6 s of llama.cpp holding the model).
# The largest schema the bounds allow, used once, makes about 130 KB.
MAX_GRAMMAR_BYTES = 256 * 1024


def bounded_schema_text(schema: Any) -> str:
    """``schema`` as JSON text, refused (SchemaError) past ``MAX_SCHEMA_BYTES`` before anything reads it."""
    if isinstance(schema, str):
        text = schema
    else:
        try:
            text = json.dumps(schema)
        except (RecursionError, TypeError, ValueError):  # an in-process caller's dict: nested past the stack
            raise SchemaError("json_schema is nested too deep, or holds values JSON has not") from None
    if len(text) > MAX_SCHEMA_BYTES:
        raise SchemaError(f"json_schema is {len(text)} bytes; the limit is {MAX_SCHEMA_BYTES}")
    return text


def compile_schema(schema: Any) -> str:
    """Return the GBNF text for ``schema`` or raise SchemaError saying what cannot be constrained."""
    if isinstance(schema, str):
        bounded_schema_text(schema)
        try:
            schema = json.loads(schema)
        except json.JSONDecodeError as exc:
            raise SchemaError(
                f"json_schema is not valid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}"
            ) from None
    if not isinstance(schema, dict):
        raise SchemaError(f"json_schema must be a JSON object, got {type(schema).__name__}")
    text = bounded_schema_text(schema)
    # first: a pattern's counted repetitions are what makes compiling it costly (RE2's, then the grammar's)
    _bound_repetitions(schema)
    try:  # the caller's schema: no reference fetched, no backtracking pattern (core/outside_schema.py)
        outside_schema.validator(schema)
    except UnusableSchema as exc:
        raise SchemaError(f"json_schema is unusable: {exc}") from None
    _refuse_unconstrainable(schema, "#")
    _refuse_unwritable_literals(schema, "#")
    try:
        gbnf = _bounded_gbnf(text)
    except SchemaError:  # the grammar bound, met while the converter ran
        raise
    except Exception as exc:  # noqa: BLE001 - the converter raises assorted types (Assertion, Key, Value)
        raise SchemaError(
            f"json_schema cannot be turned into a grammar: {type(exc).__name__}: {exc}"
        ) from None
    if len(gbnf) > MAX_GRAMMAR_BYTES:  # the converter's own count aside, what it returned
        raise SchemaError(_too_large())
    try:
        check_gbnf(gbnf)
    except GbnfSyntaxError as exc:
        raise SchemaError(f"json_schema produced a grammar llama.cpp would reject: {exc}") from None
    return gbnf


def _too_large() -> str:
    return (
        f"json_schema makes a grammar of more than {MAX_GRAMMAR_BYTES} bytes (what allOf refers to is copied "
        "into every place that uses it); refer to shared parts with $ref alone, or make the schema smaller"
    )


def _bounded_gbnf(text: str) -> str:
    """llama-cpp-python's ``json_schema_to_gbnf``, stopped as soon as its rules pass the grammar bound."""
    from llama_cpp.llama_grammar import SchemaConverter  # heavy import, only when needed

    class Bounded(SchemaConverter):
        made = 0

        def _add_rule(self, name: str, rule: str) -> str:
            self.made += len(name) + len(rule)
            if self.made > MAX_GRAMMAR_BYTES:
                raise SchemaError(_too_large())  # stopped where it is, not made whole first
            return super()._add_rule(name, rule)

        def _format_literal(self, literal: str) -> str:
            # JSON text writes an astral character as a surrogate pair of escapes, and a grammar reads each
            # ``\\uXXXX`` as one code point: two surrogates no UTF-8 spells. The character itself goes in.
            return str(super()._format_literal(_SURROGATE_PAIR.sub(_astral, literal)))

    converter = Bounded(prop_order={}, allow_fetch=False, dotall=False, raw_pattern=False)
    schema = converter.resolve_refs(json.loads(text), "stdin")
    converter.visit(schema, "")
    return converter.format_grammar()


def _bound_repetitions(schema: Any) -> None:
    total = 0
    stack: list[tuple[Any, str]] = [(schema, "#")]
    while stack:
        node, where = stack.pop()
        if isinstance(node, dict):
            for key, value in node.items():
                if key in REPEAT_KEYWORDS and isinstance(value, (int, float)) and not isinstance(value, bool):
                    if value > MAX_REPEAT:
                        raise SchemaError(f"json_schema asks {key} {value:g} at {where}; at most "
                                          f"{MAX_REPEAT} here (a model's answer is cut at max_tokens long "
                                          "before that)")
                    total += int(value)
                    continue
                patterns = (
                    [value] if key == "pattern" and isinstance(value, str)
                    else list(value) if key == "patternProperties" and isinstance(value, dict) else []
                )
                for pattern in patterns:
                    total += _pattern_size(pattern, f"{where}/{key}")
                if key not in ("enum", "const", "default", "examples"):
                    stack.append((value, f"{where}/{key}"))
        elif isinstance(node, list):
            stack.extend((item, f"{where}/{i}") for i, item in enumerate(node))
    if total > MAX_REPEAT_TOTAL:
        raise SchemaError(f"json_schema's length and count bounds add up to {total}; at most "
                          f"{MAX_REPEAT_TOTAL} in one schema")


def _pattern_size(pattern: str, where: str) -> int:
    """How many copies of its atoms a pattern's counted repetitions spell out (``(ab){3}``: 6), refused past
    ``MAX_REPEAT``: RE2 and the grammar converter expand them, and RE2's compile time grows with the square of
    that (a 686-byte pattern of 60 alternatives, each ``{1,999}``, held the event loop for 17 s)."""
    import re._parser as sre_parse  # the standard library's own reader: only its tree is used, never re

    try:
        size = _atoms(sre_parse.parse(pattern))
    except Exception:  # noqa: BLE001 - re.error, or nesting past the reader's own bounds
        raise SchemaError(
            f"json_schema has a pattern at {where} that cannot be read: {pattern[:80]!r}"
        ) from None
    if size > MAX_REPEAT:
        raise SchemaError(
            f"json_schema's pattern at {where} spells out {size} repetitions; at most {MAX_REPEAT} "
            "(a model's answer is cut at max_tokens long before that)"
        )
    return size


def _atoms(items: Any) -> int:
    import re._constants as c

    size = 0
    for op, av in items:
        if op in (c.MAX_REPEAT, c.MIN_REPEAT, c.POSSESSIVE_REPEAT):
            lo, hi, sub = av
            size += max(1, lo + 1 if hi == c.MAXREPEAT else hi) * _atoms(sub)
        elif op is c.SUBPATTERN:
            size += _atoms(av[-1])
        elif op is c.BRANCH:
            size += sum(_atoms(branch) for branch in av[1])
        elif op in (c.ATOMIC_GROUP, c.ASSERT, c.ASSERT_NOT):
            size += _atoms(av if op is c.ATOMIC_GROUP else av[1])
        else:
            size += 1
    return size


def _refuse_unconstrainable(node: Any, where: str) -> None:
    if isinstance(node, dict):
        for key, value in node.items():
            if key in UNCONSTRAINABLE:
                raise SchemaError(
                    f"json_schema uses {key!r} at {where}, which grammar-constrained decoding cannot "
                    "enforce; rewrite the schema without it (enum, anyOf, properties, items work)"
                )
            if key == "$ref" and isinstance(value, str) and not value.startswith("#"):
                raise SchemaError(
                    f"json_schema has a remote $ref {value!r} at {where}; only local '#/...' refs work"
                )
            if key in ("properties", "$defs", "definitions") and isinstance(value, dict):
                # property names are data, not keywords: walk only their sub-schemas
                for name, sub in value.items():
                    _refuse_unconstrainable(sub, f"{where}/{key}/{name}")
            elif key not in ("enum", "const", "default", "examples"):
                _refuse_unconstrainable(value, f"{where}/{key}")
    elif isinstance(node, list):
        for i, item in enumerate(node):
            _refuse_unconstrainable(item, f"{where}/{i}")


def _refuse_unwritable_literals(node: Any, where: str) -> None:
    """``enum`` and ``const`` values and property names become grammar literals of their JSON text, which the
    converter escapes for a double quote but not for the backslash JSON writes before it: ``x" | [a-z]* #``
    closed the literal and the rest was grammar (llama.cpp compiled it). So no such value may hold a double
    quote or a backslash (their JSON text holds neither escape then); every other character is a literal."""
    if isinstance(node, dict):
        for key, value in node.items():
            if key in ("enum", "const"):
                values = value if key == "enum" and isinstance(value, list) else [value]
                for i, literal in enumerate(values):
                    _writable(literal, f"{where}/{key}" + (f"/{i}" if key == "enum" else ""))
            elif key in ("default", "examples"):
                continue
            elif key == "properties" and isinstance(value, dict):
                for name, sub in value.items():
                    _writable(name, f"{where}/properties")
                    _refuse_unwritable_literals(sub, f"{where}/properties/{name}")
            elif key in ("$defs", "definitions") and isinstance(value, dict):
                for name, sub in value.items():
                    _refuse_unwritable_literals(sub, f"{where}/{key}/{name}")
            else:
                _refuse_unwritable_literals(value, f"{where}/{key}")
    elif isinstance(node, list):
        for i, item in enumerate(node):
            _refuse_unwritable_literals(item, f"{where}/{i}")


def _writable(literal: Any, where: str) -> None:
    text = json.dumps(literal)
    if '\\"' in text or "\\\\" in text:
        raise SchemaError(
            f"json_schema has a value at {where} holding a double quote or backslash, which llama.cpp's "
            "grammar converter cannot write into a grammar; use other characters there"
        )
    # an astral character is one code point here; a surrogate one is a lone (or split) half, which no UTF-8
    # text, and so no model output, can hold
    if any("\ud800" <= c <= "\udfff" for c in json.dumps(literal, ensure_ascii=False)):
        raise SchemaError(
            f"json_schema has a value at {where} holding a lone surrogate code point, which no UTF-8 text "
            "(and so no model output) can hold"
        )


_SURROGATE_PAIR = re.compile(r"\\u(d[89ab][0-9a-f]{2})\\u(d[c-f][0-9a-f]{2})", re.IGNORECASE)


def _astral(m: re.Match[str]) -> str:
    high, low = int(m.group(1), 16), int(m.group(2), 16)
    return chr(0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00))


def validate_against_schema(data: Any, schema: dict[str, Any]) -> None:
    """Raise OutputInvalid listing (up to 3) places where ``data`` breaks ``schema``."""
    try:
        found = outside_schema.errors(outside_schema.validator(schema), data)
    except (UnusableSchema, TooCostly) as exc:
        raise OutputInvalid(f"the output cannot be checked against the schema: {exc}") from None
    errors = sorted(found, key=lambda e: list(e.absolute_path))
    if errors:
        parts = [f"{'/'.join(str(p) for p in e.absolute_path) or '(root)'}: {e.message}" for e in errors[:3]]
        raise OutputInvalid("the model's output does not satisfy the schema: " + "; ".join(parts))
