"""JSON Schemas that come from outside (an upstream's tool ``inputSchema``, an upstream's elicitation
``requestedSchema``, a client's ``json_schema``): validators that do nothing but check.

``jsonschema`` on its own would, for such a schema, fetch any ``$ref`` URL (``http:``, ``file:``) with urllib
and no timeout, and run its ``pattern``s with Python's backtracking ``re`` on the event loop (one
``^([a-z ]+)+$`` and a 40-character string block every caller for hours), and check ``uniqueItems`` on
unhashable items pairwise (100k small objects: 5e9 comparisons). So every validator of an outside schema is
built here:

- references resolve inside the schema document only (an empty ``referencing.Registry``: no retrieval); any
  other ``$ref`` makes the schema unusable, found when it is compiled, not when a call arrives;
- ``pattern`` and ``patternProperties`` run on RE2 (linear time in the input); a pattern RE2 cannot take
  (look-around, back-references) makes the schema unusable;
- ``uniqueItems`` compares hashed canonical forms (linear), with JSON Schema's equality (``1 == 1.0``,
  ``true`` is not ``1``).

What the caller does with an unusable schema is its own rule (the argument check lets the upstream judge its
own input; an answer to an unusable question does not count).
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Any

from sentinel_mcp.core.errors import SentinelError

if TYPE_CHECKING:  # jsonschema and re2 are imported by the first schema compiled, not at start-up (issue 21)
    from jsonschema.exceptions import ValidationError
    from jsonschema.protocols import Validator

MAX_PATTERNS = 256  # distinct compiled patterns kept
_NOT_SCHEMAS = frozenset({"enum", "const", "default", "examples"})  # values, not subschemas: never walked


class UnusableSchema(SentinelError):
    """The schema cannot be checked here: invalid, a reference outside itself, or a pattern RE2 cannot run."""


def validator(schema: Any) -> Validator:
    """A checked, compiled validator for ``schema`` (Draft 2020-12); raises ``UnusableSchema``."""
    from jsonschema.exceptions import SchemaError

    cls = _validator_class()
    try:
        cls.check_schema(schema)
    except SchemaError as e:
        where = "/".join(str(p) for p in e.absolute_path) or "(root)"
        raise UnusableSchema(f"not a valid JSON Schema at {where}: {e.message}") from None
    _refuse_outside_parts(schema, "#")
    from referencing import Registry

    return cls(schema, registry=Registry())  # no retrieve: a reference resolves inside the document or fails


def errors(checker: Validator, instance: Any) -> list[ValidationError]:
    """Every error of ``instance``; raises ``UnusableSchema`` when checking itself fails (nothing escapes)."""
    try:
        return list(checker.iter_errors(instance))
    except RecursionError:
        raise UnusableSchema("the schema refers to itself without end") from None
    except Exception as e:  # noqa: BLE001 - an outside schema's failure is the schema's, never the gateway's
        raise UnusableSchema(f"checking against it failed: {type(e).__name__}") from None


def _refuse_outside_parts(node: Any, where: str, depth: int = 0) -> None:
    if depth > 64:
        raise UnusableSchema(f"nested deeper than 64 at {where}")
    if isinstance(node, dict):
        for key, value in node.items():
            if key in ("$ref", "$dynamicRef") and isinstance(value, str) and not value.startswith("#"):
                raise UnusableSchema(f"{key} {value[:80]!r} at {where} points outside the schema")
            if key == "pattern" and isinstance(value, str):
                _linear(value)
            elif key == "patternProperties" and isinstance(value, dict):
                for pattern in value:
                    _linear(pattern)
            if key not in _NOT_SCHEMAS:
                _refuse_outside_parts(value, f"{where}/{key}", depth + 1)
    elif isinstance(node, list):
        for i, item in enumerate(node):
            _refuse_outside_parts(item, f"{where}/{i}", depth + 1)


@functools.lru_cache(maxsize=MAX_PATTERNS)
def _linear(pattern: str) -> Any:
    import re2

    options = re2.Options()
    options.log_errors = False  # a refused pattern is reported as the schema's problem, not on stderr
    options.max_mem = 8 << 20  # RE2's own bound on one pattern's automaton
    try:
        return re2.compile(pattern, options)
    except Exception:  # noqa: BLE001 - re2.error and friends
        raise UnusableSchema(
            f"pattern {pattern[:80]!r} cannot be checked in linear time (RE2 refuses it: look-around, "
            "back-references or a repetition too large)"
        ) from None


def _pattern(validator: Any, pattern: Any, instance: Any, schema: Any) -> Any:
    from jsonschema.exceptions import ValidationError

    if validator.is_type(instance, "string") and not _linear(pattern).search(instance):
        yield ValidationError(f"{instance[:200]!r} does not match {pattern[:200]!r}")


def _pattern_properties(validator: Any, properties: Any, instance: Any, schema: Any) -> Any:
    if not validator.is_type(instance, "object"):
        return
    for pattern, subschema in properties.items():
        compiled = _linear(pattern)
        for key, value in instance.items():
            if compiled.search(key):
                yield from validator.descend(value, subschema, path=key, schema_path=pattern)


def _unique_items(validator: Any, unique: Any, instance: Any, schema: Any) -> Any:
    from jsonschema.exceptions import ValidationError

    if unique and validator.is_type(instance, "array") and len({_same(v) for v in instance}) != len(instance):
        yield ValidationError(f"the array of {len(instance)} items has non-unique elements")


def _same(value: Any) -> Any:
    """A hashable form equal for exactly the values JSON Schema calls equal."""
    if isinstance(value, bool) or value is None:
        return ("b", value)
    if isinstance(value, (int, float)):
        return ("n", value)  # 1 and 1.0 are equal and hash alike
    if isinstance(value, str):
        return ("s", value)
    if isinstance(value, list):
        return ("l", tuple(_same(v) for v in value))
    if isinstance(value, dict):
        return ("d", frozenset((k, _same(v)) for k, v in value.items()))
    return ("o", id(value))  # not JSON: never equal to another


@functools.cache
def _validator_class() -> Any:
    from jsonschema import validators

    base = validators.Draft202012Validator
    return validators.extend(
        base,
        {"pattern": _pattern, "patternProperties": _pattern_properties, "uniqueItems": _unique_items},
    )
