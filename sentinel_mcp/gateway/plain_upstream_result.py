"""An upstream's plain ``tools/call`` result read into the model the SDK's client validation builds, without
its three pydantic passes.

The lean upstream client validates a result as the SDK's client does (``lean_upstream.validated_result``):
against the era's surface model (a validation and a dump), then through the client's union adapter
(``CallToolResult | InputRequiredResult``): some 6 % of the event loop's time under a forwarding load. A
plain result - text blocks of exactly ``type`` and ``text``, an object of structured content, a boolean
``isError``, a ``_meta`` object (its values are ``Any`` to both models), ``resultType`` "complete"
(2026-07-28; absent or "complete" before), every text writable as UTF-8, and nothing else - passes all of
them unchanged, so the same model (the same field values, the same fields set) is built directly. Anything
else, or a client whose adapter has extension claims, returns None and takes the SDK's passes.
``tests/gateway/test_plain_upstream_result.py`` compares both over generated results in every protocol
version.
"""

from __future__ import annotations

from typing import Any, Callable

from mcp.types import CallToolResult, TextContent
from mcp.types.version import MODERN_PROTOCOL_VERSIONS
from pydantic import BaseModel

from sentinel_mcp.gateway import result_shape

_KEYS = frozenset({"content", "structuredContent", "isError", "_meta", "resultType"})
_SHAREABLE = (type(None), bool, int, float, str)  # immutable: a default shared by every model is safe
_REQUIRED = object()


def constructor(cls: type[BaseModel]) -> Callable[..., Any]:
    """``cls.model_construct`` for values given by field name, without its walk of every field's aliases and
    default (some 5 us a model, two models a forwarded call; issue 21): the same ``__dict__`` (field order,
    the defaults of unset fields), fields set, extra and private. Read from the model once; a model this does
    not fit (a default factory or a mutable default, extra fields kept, a post-init or private attributes,
    a root model), or values that name an alias or leave a required field out, take ``model_construct``."""
    fields = cls.__pydantic_fields__
    shared_defaults = all(f.default_factory is None and (f.is_required() or type(f.default) in _SHAREABLE)
                          for f in fields.values())
    if (not shared_defaults or cls.model_config.get("extra") == "allow" or cls.__pydantic_post_init__
            or cls.__pydantic_root_model__):
        return cls.model_construct
    template = {name: _REQUIRED if f.is_required() else f.default for name, f in fields.items()}
    names = frozenset(template)
    required = frozenset(name for name, value in template.items() if value is _REQUIRED)
    new, set_attr, construct = cls.__new__, object.__setattr__, cls.model_construct

    def build(fields_set: set[str], **values: Any) -> Any:
        if not names.issuperset(values) or not required.issubset(values):
            return construct(fields_set, **values)
        m = new(cls)
        state = template.copy()
        state.update(values)  # a key keeps its place: the fields' order, as model_construct builds it
        set_attr(m, "__dict__", state)
        set_attr(m, "__pydantic_fields_set__", fields_set)
        set_attr(m, "__pydantic_extra__", None)
        set_attr(m, "__pydantic_private__", None)
        return m

    return build


_construct_block = constructor(TextContent)
_construct_result = constructor(CallToolResult)


def _writable(value: Any, depth: int = 0) -> bool:
    """Whether every text in ``value`` (keys too) can be written as UTF-8: the SDK's surface check dumps the
    result, and refuses one holding a lone surrogate (which a JSON ``\\ud800`` escape gives). Deep nesting
    goes to the SDK's passes too."""
    t = type(value)
    if t is str:
        if value.isascii():
            return True
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            return False
        return True
    if t is dict:
        return depth < 64 and all(_writable(k, depth) and _writable(v, depth + 1) for k, v in value.items())
    if t is list:
        return depth < 64 and all(_writable(v, depth + 1) for v in value)
    return True


def surrogate_free(body: bytes) -> bool:
    """Whether no text ``json.loads(body)`` can give holds a surrogate code point (every text then writable as
    UTF-8, ``_writable``'s question, answered by a scan of the bytes in C instead of a walk of the parsed
    value): a body ``json.loads`` reads as UTF-8 (no NUL byte, no UTF-16 or UTF-32 byte order mark: its
    ``detect_encoding``) with no ``\\u`` escape (the only other way JSON spells a surrogate) and no byte 0xED
    (the lead byte of an encoded surrogate, which ``json.loads`` lets through: it decodes with
    ``surrogatepass``; U+D000-U+D7FF start with it too and merely take the walk)."""
    return (b"\\u" not in body and b"\xed" not in body and b"\x00" not in body
            and not body.startswith((b"\xfe\xff", b"\xff\xfe")))


def holds_lone_surrogate(value: Any) -> bool:
    """Whether a text (or key) anywhere in parsed JSON ``value`` holds a lone surrogate (no nesting limit:
    a stack, not recursion)."""
    stack = [value]
    while stack:
        item = stack.pop()
        t = type(item)
        if t is str:
            if not item.isascii():
                try:
                    item.encode("utf-8")
                except UnicodeEncodeError:
                    return True
        elif t is dict:
            stack.extend(item.keys())
            stack.extend(item.values())
        elif t is list:
            stack.extend(item)
    return False


def plain_call_result(era: str, raw: Any, utf8_texts: bool = False,
                      bound: bool = False) -> CallToolResult | None:
    """The model the SDK's validation of ``raw`` (a parsed ``tools/call`` result on ``era``) builds, when
    ``raw`` is plain; None otherwise. ``utf8_texts``: the caller knows every text of ``raw`` is writable
    (``surrogate_free`` of the bytes it was parsed from), so the texts are not walked again.

    ``bound``: only for a result ``result_shape.check_shape("tools/call", raw)`` passes, in the same pass
    (issue 21: the shape walk and this read each went over every block): the blocks' count and texts are
    bounded in this loop, only the structured content and ``_meta`` walked (``past_bounds``, the same walk,
    from where they sit); None as well for a result past a bound: the caller then runs ``check_shape``, which
    refuses it in its own words. Without ``bound`` the caller has run ``check_shape`` (the UTF-8 walk of the
    texts, ``_writable``, has no value bound of its own)."""
    walk = not utf8_texts  # not a no-op function called a text: two calls a call fewer (issue 21)
    if type(raw) is not dict or not raw.keys() <= _KEYS:
        return None
    kind = raw.get("resultType")
    if era in MODERN_PROTOCOL_VERSIONS:
        if kind != "complete" or type(kind) is not str:
            return None
    elif "resultType" in raw and (kind != "complete" or type(kind) is not str):
        return None
    content = raw.get("content")
    if type(content) is not list:
        return None
    # the bounds as ``check_shape`` reads them (its module's, at the call)
    longest = result_shape.MAX_TEXT_CHARS
    if bound and len(content) > result_shape.MAX_CONTENT_BLOCKS:
        return None
    texts = []
    for b in content:
        if type(b) is not dict or len(b) != 2 or b.get("type") != "text":
            return None
        text = b.get("text")
        if (type(text) is not str or type(b["type"]) is not str or (bound and len(text) > longest)
                or (walk and not _writable(text))):
            return None
        texts.append(text)
    fields: dict[str, Any] = {}
    nested = []  # the containers below the result the shape walk must still go through
    if "structuredContent" in raw:
        structured = raw["structuredContent"]
        if type(structured) is not dict:
            return None  # the surfaces type it an object
        fields["structured_content"] = structured
        nested.append(structured)
    if "isError" in raw:
        if type(raw["isError"]) is not bool:
            return None
        fields["is_error"] = raw["isError"]
    if "_meta" in raw:
        meta = raw["_meta"]
        if meta is not None:
            if type(meta) is not dict:
                return None
            nested.append(meta)
        fields["meta"] = meta
    # the shape walk's count so far: the result's entries, the list's blocks, each block's two; its other
    # texts are "complete" and "text"; the blocks sit at depth 3, the structured content and ``_meta`` at 2.
    # Bounded before the texts below are walked for UTF-8 (that walk has no value bound of its own) and
    # before any model is built (none is for a result past a bound, as ``check_shape`` first)
    if bound and nested and result_shape.past_bounds(nested, len(raw) + 3 * len(content), 2) is not None:
        return None
    if walk and not all(_writable(value) for value in nested):
        return None
    # the models last (``_construct_result`` lays the fields out in the model's order, whatever theirs here)
    fields["content"] = [_construct_block({"type", "text"}, type="text", text=text) for text in texts]
    if era in MODERN_PROTOCOL_VERSIONS:
        fields["result_type"] = "complete"
    return _construct_result(set(fields), **fields)
