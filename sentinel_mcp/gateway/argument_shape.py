"""The arguments a guard reads are the arguments the upstream acts on: the schema's declared defaults filled,
and no key the schema does not declare.

Two gaps between the guard and the upstream, both from what a tool's ``inputSchema`` says:

- a default: ``transfer(amount, dry_run=false)``'s guard saw ``dry_run`` absent (a rule on ``D \\== false``
  held for a variable) while the upstream ran with ``false``. Sentinel fills each declared default the call
  leaves out, at every level of objects it finds in the arguments (a nested model's defaults too, through
  ``$ref``/``allOf`` and the object branch of an ``anyOf``/``oneOf`` the value matches, when it matches
  exactly one: filled, it must still match that one alone), and forwards exactly that: the
  upstream's own default is never used, so a default the upstream applies differently cannot differ either.
  A default that is not valid against its own property's schema (pydantic's ``x: str = None`` declares
  ``{"type": "string", "default": null}``) is not filled: sent, it would be refused by that upstream; the
  guard sees that argument absent, as the upstream's code does;
- an undeclared key: an object schema that lists ``properties`` without ``additionalProperties`` allows any
  other key, which a guard written against the schema never reads, while the upstream may act on it
  (``**kwargs``, pydantic ``extra="allow"``, a JS server spreading the object). Such a key is refused by
  default, with its path; ``additionalProperties`` true or a schema (or a ``patternProperties`` pattern it
  matches) declares it. Of several object branches of an ``anyOf``/``oneOf``, a key is declared only by a
  branch the value matches (``{"kind": "card", "iban": ...}`` matches the card branch alone: the bank
  branch's ``iban`` is not the card's). An upstream's ``undeclared_arguments`` setting may instead drop such
  keys (the guard and the upstream both go without them) or pass them (the guard's ``args(All)`` sees them).
  A key that reads as a declared name (``currency\u200b``, a Cyrillic ``\u0441urrency``: ``look_alike_keys``)
  is refused whatever the setting or a pattern says: an upstream that drops the invisible character acts on
  it as the declared argument the guard read as missing.

An object the schema declares no ``properties`` for (``{"type": "object"}``) is free-form: nothing is filled
or refused in it. The shape is compiled once per schema (with the validator: ``argument_check``), the walk of
a call is bounded by the arguments (within the wire's depth limit) and by ``MAX_FILLED`` defaults.
"""

from __future__ import annotations

import copy
from typing import TYPE_CHECKING, Any, Literal

from sentinel_mcp.core import outside_schema
from sentinel_mcp.core.display_text import compose
from sentinel_mcp.core.echoed_text import echoed
from sentinel_mcp.core.errors import GatewayError
from sentinel_mcp.core.outside_schema import TooCostly, UnusableSchema
from sentinel_mcp.core.wire_limits import MAX_ARGUMENT_DEPTH, ValueWalk, walk_value
from sentinel_mcp.gateway.look_alike_keys import LookBudget, TooManyToLook, declared_read_as

if TYPE_CHECKING:
    from jsonschema.protocols import Validator

Undeclared = Literal["refuse", "drop", "pass"]
MAX_FILLED = 1_000  # defaults filled into one call (a default object holding defaults cannot fan out)
MAX_SHAPES = 4_096  # object shapes compiled from one schema (local references are shared, not copied)
_REF_ROOTS = ("#/$defs/", "#/definitions/")
_SCALARS = (str, int, float, bool, type(None))


class Shape:
    """What the schema says of one object value (``defaults``, ``props``, which keys are ``declared``) and
    of the items of an array value (``items``). Mutable while compiled so that a recursive model's shape can
    refer to itself."""

    __slots__ = ("defaults", "props", "declared", "patterns", "items", "plain", "live", "filled_form",
                 "branches")

    def __init__(self) -> None:
        self.defaults: tuple[tuple[str, Any], ...] = ()
        self.props: dict[str, Shape] = {}
        self.declared: frozenset[str] | None = None  # None: any key may be present
        self.patterns: tuple[Any, ...] = ()  # compiled patternProperties (RE2): keys they match are declared
        self.items: Shape | None = None
        self.plain = True  # nothing to fill or refuse here or below (then the walk skips it)
        # each anyOf/oneOf of several object branches: (whether a value matches it, its shape) per branch
        self.branches: tuple[tuple[tuple[Any, Shape], ...], ...] = ()
        self.live: tuple[tuple[str, Shape], ...] = ()  # the props that are not plain (set once settled)
        # whether a default filled here or below may hold a float, an object of two keys or more: what the
        # argument form's checks look for (``argument_form``'s walk flags), so a fill keeps the call's walk
        self.filled_form = (False, False)


PLAIN = Shape()


def compile_shape(schema: Any, validator: Validator | None) -> Shape:
    """The shape of arguments valid against ``schema``; ``validator``: the schema's (None: the schema could
    not be checked here, and no default is filled, since none can be checked either)."""
    if not isinstance(schema, dict):
        return PLAIN
    try:
        shape = _Compiler(schema, validator).shape(schema, 0)
    except (_TooMany, UnusableSchema, RecursionError):
        return PLAIN  # the schema is past what is compiled here: the validator's verdict stands alone
    _settle(shape, set())
    floats = nested = False
    for node in _all_shapes(shape):
        for _, default in node.defaults:
            walked = walk_value(default, MAX_ARGUMENT_DEPTH)
            floats, nested = floats or walked[1], nested or walked[2] or isinstance(default, dict)
    shape.filled_form = (floats, nested)
    return shape


def _all_shapes(shape: Shape) -> list[Shape]:
    seen: dict[int, Shape] = {}
    stack = [shape]
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen[id(node)] = node
        stack.extend(node.props.values())
        stack.extend(b for group in node.branches for _, b in group)
        if node.items is not None:
            stack.append(node.items)
    return list(seen.values())


class _TooMany(GatewayError):  # noqa: N818 - internal: never leaves this module
    pass


class _Gathered:
    __slots__ = ("properties", "patterns", "closed", "has_properties", "items", "groups")

    def __init__(self) -> None:
        self.properties: dict[str, Any] = {}
        self.patterns: list[Any] = []
        self.closed, self.has_properties = True, False
        self.items: Any = None
        self.groups: list[list[Any]] = []  # anyOf/oneOf of several object branches: judged per value


class _Compiler:
    def __init__(self, root: dict[str, Any], validator: Validator | None) -> None:
        self.root, self.validator = root, validator
        self.by_ref: dict[str, Shape] = {}
        self.by_node: dict[int, Shape] = {}  # by the subschema's id (the schema is held: ids stay its own)
        self.count = 0

    def shape(self, node: Any, depth: int) -> Shape:
        if not isinstance(node, dict) or depth > MAX_ARGUMENT_DEPTH:
            return PLAIN
        kept = self.by_node.get(id(node))  # a subschema reached twice is compiled once (no fan-out)
        if kept is not None:
            return kept
        made = self.by_node[id(node)] = self._made(node, depth)
        return made

    def _made(self, node: dict[str, Any], depth: int) -> Shape:
        ref = node.get("$ref")
        if isinstance(ref, str) and len(node) == 1:  # a pure reference: its target's shape, shared
            return self._ref(ref, depth)
        acc = _Gathered()
        self._gather(node, depth, acc, own=True)
        out = Shape()
        defaults = []
        for key, sub in acc.properties.items():
            target = self._target(sub)
            if isinstance(target, dict) and "default" in target and self._valid(target, target["default"]):
                defaults.append((key, target["default"]))
            inner = self.shape(sub, depth + 1)
            if inner is not PLAIN:
                out.props[key] = inner
        out.defaults = tuple(defaults)
        out.branches = tuple(tuple((self._matches(b), self.shape(b, depth + 1)) for b in group)
                             for group in acc.groups)
        if acc.closed and (acc.has_properties or out.branches):
            out.declared = frozenset(acc.properties)
            out.patterns = tuple(acc.patterns)
        if acc.items is not None:
            out.items = self.shape(acc.items, depth + 1)
        nothing = not out.defaults and not out.props and out.declared is None and not out.branches
        return PLAIN if nothing and out.items in (None, PLAIN) else out

    def _gather(self, node: Any, depth: int, acc: _Gathered, own: bool) -> None:
        """What ``node`` says of an object (and of an array's items), with its ``$ref``, its ``allOf``
        branches and the one object branch of an ``anyOf``/``oneOf``; closed unless something in them lets
        other keys in. ``own``: its properties' schemas are taken (False: only their names, for branches of
        which the upstream picks one: nothing is filled from them)."""
        self.count += 1
        if self.count > MAX_SHAPES:
            raise _TooMany
        if not isinstance(node, dict) or depth > MAX_ARGUMENT_DEPTH:
            acc.closed = False
            return
        given = node.get("properties")
        if isinstance(given, dict):
            acc.has_properties = True
            for k, v in given.items():
                acc.properties.setdefault(k, v if own else {})
        extra = node.get("additionalProperties", node.get("unevaluatedProperties"))
        if extra is not None and extra is not False:
            acc.closed = False  # true or a schema: other keys are declared (the validator checks them)
        patterns = node.get("patternProperties")
        if isinstance(patterns, dict):
            acc.patterns.extend(outside_schema.linear_pattern(p) for p in patterns)
        if acc.items is None and isinstance(node.get("items"), dict):
            acc.items = node["items"]
        ref = node.get("$ref")
        if isinstance(ref, str):
            self._gather(self._resolve(ref), depth + 1, acc, own)
        for branch in node.get("allOf") or ():
            self._gather(branch, depth + 1, acc, own)
        for key in ("anyOf", "oneOf"):
            branches = [self._target(b) for b in node.get(key) or ()]
            objects = [b for b in branches if isinstance(b, dict) and _may_be(b, "object")]
            if len(objects) > 1 and own and self.validator is not None:
                acc.groups.append(objects)  # which of them a value matches says what it declares and fills
                continue
            for b in objects:  # not checkable here: the keys of every branch are declared, nothing filled
                self._gather(b, depth + 1, acc, own and len(objects) == 1)
            arrays = [b for b in branches if isinstance(b, dict) and _may_be(b, "array")]
            if len(arrays) == 1 and acc.items is None and isinstance(arrays[0].get("items"), dict):
                acc.items = arrays[0]["items"]

    def _ref(self, ref: str, depth: int) -> Shape:
        kept = self.by_ref.get(ref)
        if kept is not None:
            return kept
        target = self._resolve(ref)
        placeholder = self.by_ref[ref] = Shape()  # a reference back to it (a recursive model) finds it
        made = self.shape(target, depth + 1)
        for slot in Shape.__slots__:
            setattr(placeholder, slot, getattr(made, slot))
        return placeholder

    def _resolve(self, ref: str) -> Any:
        if ref == "#":
            return self.root
        for prefix in _REF_ROOTS:
            if ref.startswith(prefix):
                found = self.root.get(prefix[2:-1])
                name = ref[len(prefix):].replace("~1", "/").replace("~0", "~")
                if isinstance(found, dict) and name in found:
                    return found[name]
        raise UnusableSchema("a reference this compiler does not follow")  # the shape is left plain

    def _target(self, node: Any) -> Any:
        """``node``, or what its pure ``$ref`` names (a default sits beside the reference or in its
        target)."""
        if isinstance(node, dict) and "default" not in node and isinstance(node.get("$ref"), str):
            try:
                return self._resolve(node["$ref"])
            except UnusableSchema:
                return node
        return node

    def _matches(self, branch: dict[str, Any]) -> Any:
        """Whether a value matches ``branch`` (a value the check cannot judge matches nothing)."""
        assert self.validator is not None  # groups are gathered only with one
        checker = self.validator.evolve(schema=branch)

        def matches(value: Any) -> bool:
            try:
                return not outside_schema.errors(checker, value)
            except (UnusableSchema, TooCostly):
                return False

        return matches

    def _valid(self, schema: dict[str, Any], default: Any) -> bool:
        if self.validator is None:
            return False
        try:
            return not outside_schema.errors(self.validator.evolve(schema=schema), default)
        except (UnusableSchema, TooCostly):
            return False


def _may_be(schema: dict[str, Any], kind: str) -> bool:
    given = schema.get("type")
    if given is None:
        return kind == "object" and ("properties" in schema or "$ref" in schema or "allOf" in schema)
    return given == kind or (isinstance(given, list) and kind in given)


def _settle(shape: Shape, seen: set[int]) -> bool:
    """Marks each shape plain when nothing is filled or refused in it or below; whether ``shape`` is."""
    if shape is PLAIN:
        return True
    if id(shape) in seen:
        return shape.plain  # a recursive model: decided on its first visit (a cycle is taken as not plain)
    seen.add(id(shape))
    shape.plain = False  # while its parts are settled (a cycle back to it is not plain)
    plain = not shape.defaults and shape.declared is None and not shape.branches
    for inner in list(shape.props.values()) + ([shape.items] if shape.items is not None else []):
        plain = _settle(inner, seen) and plain
    for group in shape.branches:
        for _, inner in group:
            _settle(inner, seen)
    shape.plain = plain
    shape.live = tuple((k, v) for k, v in shape.props.items() if not v.plain)
    return plain


def walk_after(shape: Shape, walk: ValueWalk | None) -> ValueWalk | None:
    """The walk of arguments ``shaped`` changed: the call's own, with what the filled defaults may hold."""
    if walk is None:
        return None
    floats, nested = shape.filled_form
    return (walk[0], walk[1] or floats, walk[2] or nested)


def shaped(shape: Shape, arguments: dict[str, Any], undeclared: Undeclared = "refuse"
           ) -> tuple[dict[str, Any], str | None]:
    """``(arguments with the declared defaults filled, undeclared keys dropped if so told, None)``, or
    ``(arguments, why refused)``; the very object when nothing changes (no copy)."""
    if shape.plain:
        return arguments, None
    try:
        return _object(shape, arguments, undeclared, [0], 0, LookBudget()), None
    except _Refused as e:
        return arguments, e.why()


class _Refused(GatewayError):  # noqa: N818 - internal: its text is the refusal
    def __init__(self, what: str, key: str | None = None, alike: str | None = None) -> None:
        super().__init__(what)
        self.what = what
        self.alike = alike  # the declared name the key reads as
        self.path = [] if key is None else [key]  # filled in on the way out: no path built for a good call

    def why(self) -> str:
        if not self.path:
            return self.what
        if self.alike is not None:
            return compose("the argument ", echoed("/".join(self.path)), " reads as the declared ",
                           echoed(self.alike), " (an invisible or look-alike character); send each argument "
                           "spelled as the tool declares it")
        return compose("the argument ", echoed("/".join(self.path)), " is not one the tool declares; send "
                       "only the arguments its schema lists")


def _object(shape: Shape, value: dict[str, Any], undeclared: Undeclared, filled: list[int],
            depth: int, budget: LookBudget) -> dict[str, Any]:
    if depth > MAX_ARGUMENT_DEPTH:
        raise _Refused("the schema's defaults nest deeper than arguments may")
    out: dict[str, Any] | None = None
    declared, patterns, taken = shape.declared, shape.patterns, _taken(shape, value)
    for branch in taken:
        if declared is not None:
            declared = None if branch.declared is None else declared | branch.declared
            patterns = patterns + branch.patterns
    if declared is not None and not declared.issuperset(value):
        for key in value:
            if key in declared:
                continue
            try:  # whatever the setting or a pattern admits
                alike = declared_read_as(key, declared, budget)
            except TooManyToLook as e:
                raise _Refused(str(e)) from None
            if alike is not None:
                raise _Refused("alike", key, alike)
            if undeclared == "pass" or (patterns and any(p.search(key) for p in patterns)):
                continue
            if undeclared != "drop":
                raise _Refused("undeclared", key)
            out = out if out is not None else dict(value)
            del out[key]
    filled_from = [b for b, alone in taken.items() if alone]
    for key, default in shape.defaults + tuple(d for b in filled_from for d in b.defaults):
        if key not in value:
            filled[0] += 1
            if filled[0] > MAX_FILLED:
                raise _Refused(f"the schema's defaults fill more than {MAX_FILLED} values")
            out = out if out is not None else dict(value)
            out[key] = default if isinstance(default, _SCALARS) else copy.deepcopy(default)
    source = out if out is not None else value
    if filled_from and source is not value and _taken(shape, source) != taken:
        raise _Refused("the schema's defaults, filled, make the arguments match another of its branches")
    for key, inner in shape.live + tuple(p for b in filled_from for p in b.live):
        old = source.get(key)
        if old is None:
            continue
        try:
            new = _value(inner, old, undeclared, filled, depth + 1, budget)
        except _Refused as e:
            if e.path:
                e.path.insert(0, key)
            raise
        if new is not old:
            out = out if out is not None else dict(value)
            out[key] = new
            source = out
    return value if out is None else out


def _taken(shape: Shape, value: dict[str, Any]) -> dict[Shape, bool]:
    """The branch shapes ``value`` matches, of each of ``shape``'s anyOf/oneOf groups; True for the one
    branch it matches alone in its group (whose defaults are filled)."""
    taken: dict[Shape, bool] = {}
    for group in shape.branches:
        matched = [b for matches, b in group if matches(value)]
        for b in matched:
            taken[b] = taken.get(b, False) or len(matched) == 1
    return taken


def _value(shape: Shape, value: Any, undeclared: Undeclared, filled: list[int], depth: int,
           budget: LookBudget) -> Any:
    if type(value) is dict:
        return _object(shape, value, undeclared, filled, depth, budget)
    items_shape = shape.items
    if type(value) is list and items_shape is not None and not items_shape.plain:
        items = []
        for i, v in enumerate(value):
            try:
                items.append(_value(items_shape, v, undeclared, filled, depth + 1, budget))
            except _Refused as e:
                if e.path:
                    e.path.insert(0, str(i))
                raise
        return value if all(a is b for a, b in zip(items, value)) else items
    return value
