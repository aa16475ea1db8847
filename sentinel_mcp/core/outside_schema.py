"""JSON Schemas that come from outside (an upstream's tool ``inputSchema``, an upstream's elicitation
``requestedSchema``, a client's ``json_schema``): validators that do nothing but check.

``jsonschema`` on its own would, for such a schema, fetch any ``$ref`` URL (``http:``, ``file:``) with urllib
and no timeout, and run its ``pattern``s with Python's backtracking ``re`` on the event loop (one
``^([a-z ]+)+$`` and a 40-character string block every caller for hours), and check ``uniqueItems`` on
unhashable items pairwise (100k small objects: 5e9 comparisons). So every validator of an outside schema is
built here:

- references resolve inside the schema document only (an empty ``referencing.Registry``: no retrieval); any
  other ``$ref`` makes the schema unusable, found when it is compiled, not when a call arrives;
- ``pattern`` and ``patternProperties`` run on RE2 (linear time in the input), and so do the patterns
  ``additionalProperties`` reads to find the keys none matches (jsonschema's own look-up joined them into one
  Python ``re``: ``^([a-z]+)+$`` and a 50-character key held the event loop for ever); a pattern RE2 cannot
  take (look-around, back-references) makes the schema unusable, as does ``unevaluatedProperties`` beside
  ``patternProperties`` (jsonschema's walk of what was evaluated has only Python's ``re``);
- ``uniqueItems`` compares hashed canonical forms (linear), with JSON Schema's equality (``1 == 1.0``,
  ``true`` is not ``1``);
- ``enum`` and ``const`` are paid for by the comparisons they make (each allowed value against the value's
  nodes), and their errors quote values briefly (jsonschema's words, a long value's outline): an
  upstream's ``enum`` of a million numbers (7 MB of listing) cost 0.4-0.9 s of the event loop on every
  call, and one of 10,000 lists checked against 30 items of an argument 2 s, each stalling every other
  caller;
- a schema of more than ``MAX_SUBSCHEMAS`` objects is unusable: the metaschema check alone costs ~170 us a
  subschema (an upstream's tool of 200,000 properties, 2.6 MB of listing: 47 s on its first call);
- checking one value is bounded by work in proportion to the value's size (``BASE_STEPS`` plus
  ``STEPS_PER_BYTE`` per byte of its JSON): every keyword applied is a step (one that applies subschemas,
  ``BRANCH_STEPS``), an error by its message's length (it quotes the value), a pattern's search by its
  program's size times the string's length (RE2 is linear in the string, but its fallback is linear in
  both). Local references are allowed, so a small schema can still fan out (``anyOf`` of two references to
  the next level, 40 levels: 2^40 steps); past the bound the check stops with ``TooCostly``.

What the caller does with an unusable schema is its own rule (the argument check lets the upstream judge its
own input; an answer to an unusable question does not count). A check that costs too much is not the schema's
verdict but one that cannot be had: the callers refuse the value (a check that fails denies).
"""

from __future__ import annotations

import functools
import json
import reprlib
import threading
from typing import TYPE_CHECKING, Any

from sentinel_mcp.core.errors import SentinelError

if TYPE_CHECKING:  # jsonschema and re2 are imported by the first schema compiled, not at start-up (issue 21)
    from jsonschema.exceptions import ValidationError
    from jsonschema.protocols import Validator

MAX_PATTERNS = 256  # distinct compiled patterns kept
# subschemas (objects) one schema may hold: checking a schema against the metaschema costs ~170 us each (a
# tool listing of 200,000 properties: 47 s), so a larger one is unusable here (about 0.7 s at the bound)
MAX_SUBSCHEMAS = 4_096
BASE_STEPS = 10_000  # the work any value may take to check (a step: one keyword applied, ~2-3 us)
STEPS_PER_BYTE = 4  # and per byte of its JSON (a legitimate schema takes about one step per byte)
# keywords that apply subschemas (and make errors of the branches that fail): 5 steps each, so that a
# schema fanning out through them stops at about the same time as one that does not (~5 us a step)
_BRANCHING = frozenset({
    "$ref", "$dynamicRef", "allOf", "anyOf", "oneOf", "not", "if", "contains", "dependentSchemas",
    "unevaluatedItems", "unevaluatedProperties",
})
BRANCH_STEPS = 5
COMPARISONS_PER_STEP = 8  # an enum's or const's allowed value against one node of the value (~0.3 us each)
MESSAGE_CHARS_PER_STEP = 16  # an error's message quotes the value it is about: it costs by its length
PATTERN_UNITS_PER_STEP = 512  # RE2 program size x characters searched that count as one step
_NOT_SCHEMAS = frozenset({"enum", "const", "default", "examples"})  # values, not subschemas: never walked
# keywords whose value maps names (property names, patterns, definition names) to subschemas: the names are
# data, never keywords (a property named "enum" still has a subschema to walk)
_NAMED_SCHEMAS = frozenset({"properties", "patternProperties", "$defs", "definitions", "dependentSchemas"})
_budget = threading.local()  # steps left to the check running on this thread (``errors``)


class UnusableSchema(SentinelError):
    """The schema cannot be checked here: invalid, a reference outside itself, or a pattern RE2 cannot run."""


class TooLargeSchema(UnusableSchema):
    """More subschemas than are checked here (``MAX_SUBSCHEMAS``): valid or not, the asker judges."""


class TooCostly(SentinelError):
    """Checking this value against the schema takes more work than the value's size allows."""


def validator(schema: Any) -> Validator:
    """A checked, compiled validator for ``schema`` (Draft 2020-12); raises ``UnusableSchema``."""
    from jsonschema.exceptions import SchemaError

    cls = _validator_class()
    walk = _Walk()
    # first: its depth bound keeps the metaschema's recursion short
    _refuse_outside_parts(schema, "#", walk=walk)
    if {"unevaluatedProperties", "patternProperties"} <= walk.keywords:
        # jsonschema finds the properties other keywords evaluated with Python's backtracking ``re`` on every
        # patternProperties pattern (its own walk of the branches, not a keyword replaced here)
        raise UnusableSchema(
            "unevaluatedProperties beside patternProperties cannot be checked in linear time"
        )
    try:
        cls.check_schema(schema)
    except SchemaError as e:
        where = "/".join(str(p) for p in e.absolute_path) or "(root)"
        raise UnusableSchema(f"not a valid JSON Schema at {where}: {e.message}") from None
    except RecursionError:
        raise UnusableSchema("nested too deep to check") from None
    from referencing import Registry

    for enums in walk.enums:  # their look-up sets made here, with the compiling (off the event loop)
        _allowed_scalars(enums)
    return cls(schema, registry=Registry())  # no retrieve: a reference resolves inside the document or fails


def errors(checker: Validator, instance: Any, size: int | None = None) -> list[ValidationError]:
    """Every error of ``instance``; raises ``UnusableSchema`` when checking itself fails (nothing escapes) and
    ``TooCostly`` past the work bound. ``size``: the length of ``instance``'s JSON, when the caller has it."""
    if size is None:
        try:
            size = len(json.dumps(instance, default=str))
        except (TypeError, ValueError, RecursionError):
            raise TooCostly("the value cannot be measured (not JSON, or nested too deep)") from None
    steps = BASE_STEPS + STEPS_PER_BYTE * size
    _budget.left = steps
    try:
        return list(checker.iter_errors(instance))
    except TooCostly:
        raise TooCostly(f"checking it against the schema takes more than {steps} steps") from None
    except RecursionError:
        raise UnusableSchema("the schema refers to itself without end") from None
    except Exception as e:  # noqa: BLE001 - an outside schema's failure is the schema's, never the gateway's
        raise UnusableSchema(f"checking against it failed: {type(e).__name__}") from None
    finally:
        _budget.left = 0  # a validator used outside ``errors`` has no steps: it stops at its first keyword


def _spend(steps: int) -> None:
    left = getattr(_budget, "left", 0) - steps
    _budget.left = left
    if left < 0:
        raise TooCostly


def _counted(keyword: Any, steps: int) -> Any:
    def counted(validator: Any, value: Any, instance: Any, schema: Any) -> Any:
        _spend(steps)
        found = keyword(validator, value, instance, schema)
        return None if found is None else _charged(found)

    return counted


def _charged(found: Any) -> Any:
    """The errors a keyword yields, each paid for once (by its message's length) as it is made: a value of
    a megabyte quoted in the errors of a thousand failing branches is a gigabyte of formatting."""
    for error in found:
        if not getattr(error, "_sentinel_paid", False):  # a subschema's error passing up is paid for already
            error._sentinel_paid = True
            _spend(1 + len(error.message) // MESSAGE_CHARS_PER_STEP)
        yield error


class _Walk:
    """What the walk of one schema met: the keywords it uses, how many objects it holds."""

    def __init__(self) -> None:
        self.keywords: set[str] = set()
        self.objects = 0
        self.enums: list[list[Any]] = []  # each enum's list of allowed values


def _refuse_outside_parts(node: Any, where: str, depth: int = 0, walk: _Walk | None = None) -> None:
    """Refuses what cannot be checked here; ``walk`` (one per schema): what it met."""
    if depth > 64:
        raise UnusableSchema(f"nested deeper than 64 at {where}")
    if walk is None:
        walk = _Walk()
    if isinstance(node, dict):
        walk.keywords.update(k for k in node if isinstance(k, str))
        walk.objects += 1
        if walk.objects > MAX_SUBSCHEMAS:
            raise TooLargeSchema(f"more than {MAX_SUBSCHEMAS} subschemas: too large to check here")
        for key, value in node.items():
            if key in ("$ref", "$dynamicRef") and isinstance(value, str) and not value.startswith("#"):
                raise UnusableSchema(f"{key} {value[:80]!r} at {where} points outside the schema")
            if key == "pattern" and isinstance(value, str):
                _linear(value)
            if key == "enum" and isinstance(value, list):
                walk.enums.append(value)
            if key in _NAMED_SCHEMAS and isinstance(value, dict):
                for name, sub in value.items():
                    if key == "patternProperties":
                        _linear(name)
                    _refuse_outside_parts(sub, f"{where}/{key}/{name}", depth + 1, walk)
            elif key not in _NOT_SCHEMAS:
                _refuse_outside_parts(value, f"{where}/{key}", depth + 1, walk)
    elif isinstance(node, list):
        for i, item in enumerate(node):
            _refuse_outside_parts(item, f"{where}/{i}", depth + 1, walk)


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


def linear_pattern(pattern: str) -> Any:
    """``pattern`` compiled for RE2 (linear time: ``search`` as JSON Schema reads it); raises
    ``UnusableSchema`` for one RE2 cannot run."""
    return _linear(pattern)


def _pattern(validator: Any, pattern: Any, instance: Any, schema: Any) -> Any:
    from jsonschema.exceptions import ValidationError

    if not validator.is_type(instance, "string"):
        return
    compiled = _linear(pattern)
    _spend(len(instance) * compiled.programsize // PATTERN_UNITS_PER_STEP)
    if not compiled.search(instance):
        yield ValidationError(f"{instance[:200]!r} does not match {pattern[:200]!r}")


def _pattern_properties(validator: Any, properties: Any, instance: Any, schema: Any) -> Any:
    if not validator.is_type(instance, "object"):
        return
    for pattern, subschema in properties.items():
        compiled = _linear(pattern)
        for key, value in instance.items():
            _spend(1 + len(key) * compiled.programsize // PATTERN_UNITS_PER_STEP)
            if compiled.search(key):
                yield from validator.descend(value, subschema, path=key, schema_path=pattern)


def _additional_properties(validator: Any, extra: Any, instance: Any, schema: Any) -> Any:
    """jsonschema's ``additionalProperties`` with the ``patternProperties`` beside it run on RE2: its own
    look-up ran them joined with Python's backtracking ``re`` (``^(a+)+$``, a 30-character key: minutes)."""
    from jsonschema.exceptions import ValidationError

    if not validator.is_type(instance, "object"):
        return
    properties = schema.get("properties", {})
    patterns = [_linear(p) for p in schema.get("patternProperties", {})]
    extras = []
    for key in instance:
        if key in properties:
            continue
        _spend(1 + sum(len(key) * p.programsize for p in patterns) // PATTERN_UNITS_PER_STEP)
        if not any(p.search(key) for p in patterns):
            extras.append(key)
    if validator.is_type(extra, "object"):
        for key in set(extras):
            yield from validator.descend(instance[key], extra, path=key)
    elif not extra and extras:
        if "patternProperties" in schema:
            verb = "does" if len(extras) == 1 else "do"
            joined = ", ".join(repr(each) for each in sorted(extras))
            shown = ", ".join(repr(each) for each in sorted(schema["patternProperties"]))
            yield ValidationError(f"{joined} {verb} not match any of the regexes: {shown}")
        else:
            verb = "was" if len(extras) == 1 else "were"
            joined = ", ".join(repr(each) for each in sorted(extras, key=str))
            yield ValidationError(f"Additional properties are not allowed ({joined} {verb} unexpected)")


def _unique_items(validator: Any, unique: Any, instance: Any, schema: Any) -> Any:
    from jsonschema.exceptions import ValidationError

    if not (unique and validator.is_type(instance, "array")):
        return
    _spend(len(instance))
    if len({_same(v) for v in instance}) != len(instance):
        yield ValidationError(f"the array of {len(instance)} items has non-unique elements")


def _enum(validator: Any, enums: Any, instance: Any, schema: Any) -> Any:
    from jsonschema._utils import equal
    from jsonschema.exceptions import ValidationError

    if not isinstance(enums, list):
        return
    if isinstance(instance, (str, int, float)) or instance is None:  # bool is an int: a scalar, one look-up
        _spend(1)
        if instance not in _allowed_scalars(enums):
            yield ValidationError(f"{_brief(instance)} is not one of {_brief(enums)}")
        return
    _spend(len(enums) * _nodes(instance, len(enums)) // COMPARISONS_PER_STEP)
    if all(not equal(each, instance) for each in enums):
        yield ValidationError(f"{_brief(instance)} is not one of {_brief(enums)}")


# an enum's allowed scalars as sets, per enum list of a compiled schema (the list is kept with them, so its id
# is not reused while cached): a scalar is then checked in one look-up, not compared with each allowed value
# (a form of 200,000 choices could not be answered within a small answer's steps). Made when the validator is
# compiled (a worker thread, ``validator``), or at the first check; the sets hold the list's own objects, and
# at most ``SCALAR_SET_ENTRIES`` values are kept in all (the least recently made dropped first)
SCALAR_SET_ENTRIES = 2_000_000
_SCALAR_SETS: dict[int, tuple[list[Any], "_Scalars"]] = {}
_scalar_entries = 0
_scalar_lock = threading.Lock()  # compiling threads and the event loop both make them


class _Scalars:
    __slots__ = ("texts", "numbers", "constants", "size")

    def __init__(self, enums: list[Any]) -> None:
        self.texts = frozenset(v for v in enums if isinstance(v, str))
        # a bool is an int to Python (True == 1 in a set): kept apart, as JSON Schema tells them apart
        self.numbers = frozenset(v for v in enums if isinstance(v, (int, float)) and not isinstance(v, bool))
        self.constants = frozenset(v for v in enums if isinstance(v, bool) or v is None)
        self.size = len(self.texts) + len(self.numbers) + len(self.constants)

    def __contains__(self, value: Any) -> bool:
        if isinstance(value, str):
            return value in self.texts
        if isinstance(value, bool) or value is None:
            return value in self.constants
        return value in self.numbers


def _allowed_scalars(enums: list[Any]) -> _Scalars:
    global _scalar_entries
    cached = _SCALAR_SETS.get(id(enums))
    if cached is not None and cached[0] is enums:
        return cached[1]
    allowed = _Scalars(enums)
    with _scalar_lock:
        while _SCALAR_SETS and _scalar_entries + allowed.size > SCALAR_SET_ENTRIES:
            _, dropped = _SCALAR_SETS.pop(next(iter(_SCALAR_SETS)))
            _scalar_entries -= dropped.size
        _SCALAR_SETS[id(enums)] = (enums, allowed)
        _scalar_entries += allowed.size
    return allowed


def _const(validator: Any, const: Any, instance: Any, schema: Any) -> Any:
    from jsonschema._utils import equal
    from jsonschema.exceptions import ValidationError

    _spend(_nodes(instance, 1) // COMPARISONS_PER_STEP)
    if not equal(instance, const):
        yield ValidationError(f"{_brief(const)} was expected")


def _nodes(value: Any, per_node: int) -> int:
    """How many values ``value`` holds (itself included), counted no further than the steps left allow at
    ``per_node`` comparisons each (past that the charge fails anyway)."""
    cap = max(1, getattr(_budget, "left", 0)) * COMPARISONS_PER_STEP // max(1, per_node) + 1
    count, stack = 0, [value]
    while stack and count <= cap:
        item = stack.pop()
        count += 1
        if isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return count


_BRIEF = reprlib.Repr()  # keyword arguments only from Python 3.12
_BRIEF.maxlevel, _BRIEF.maxdict, _BRIEF.maxlist, _BRIEF.maxstring, _BRIEF.maxother = 3, 8, 8, 120, 60


def _brief(value: Any) -> str:
    """A value as an error quotes it: as written when short (as jsonschema's messages have it), else its
    outline (at most 300 characters)."""
    if _short(value):
        return repr(value)
    return _BRIEF.repr(value)[:300]


def _short(value: Any) -> bool:
    """At most 16 values holding at most 200 characters of text (its repr is short: made whole)."""
    nodes, chars, stack = 0, 0, [value]
    while stack:
        item = stack.pop()
        nodes += 1
        if nodes > 16:
            return False
        if isinstance(item, dict):
            chars += sum(len(k) for k in item if isinstance(k, str))
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
        elif isinstance(item, str):
            chars += len(item)
        elif not isinstance(item, (int, float, bool)) and item is not None:
            return False
        if chars > 200:
            return False
    return True


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
    own = {"pattern": _pattern, "patternProperties": _pattern_properties, "uniqueItems": _unique_items,
           "enum": _enum, "const": _const, "additionalProperties": _additional_properties}
    keywords = {**base.VALIDATORS, **own}
    steps = {name: BRANCH_STEPS if name in _BRANCHING else 1 for name in keywords}
    counted = {name: _counted(keyword, steps[name]) for name, keyword in keywords.items()}
    return validators.extend(base, counted)
