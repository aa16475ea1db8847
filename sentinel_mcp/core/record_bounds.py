"""The one bound on what a durable record keeps of a value a caller, an upstream, a peer or a screen shaped.

Every record Sentinel writes (audit rows, the built-ins' decision records, stored facts, task records) may
quote a value from outside: a tool's arguments, a result, a peer's message. Kept whole, one call could make
the record (and the disk every call needs) grow by megabytes, and a value nested ten thousand levels deep
would end a recursive writer in ``RecursionError``. So each record kind has ``RecordLimits`` (below), and
``bounded`` keeps a value within them:

- a value within its limits is kept as it is (the usual value: one encode, nothing else);
- otherwise a copy is kept, cut iteratively (no recursion, whatever the depth): strings to ``string``
  characters, objects and arrays to ``items`` entries, nesting to ``depth`` levels, integers to ``digits``
  digits, the whole to about ``chars`` characters of JSON. Each cut says what it left out, and the kept
  value is wrapped as ``{"sentinel_cut": {...}, "kept": <copy>}``: the full value's length and SHA-256 (of
  its canonical JSON, ``canonical_digest``) so whoever holds the full value can check the cut against it.

The result is always valid JSON of bounded size. Readers that need the whole value (a replay) tell a cut
record by ``was_cut`` and say so instead of using the copy.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import asdict, dataclass
from json import encoder as _encoder
from typing import Any

from sentinel_mcp.core.errors import SentinelError

__all__ = [
    "AUDIT_ARGUMENTS", "AUDIT_PROOF", "CHARS_PER_VALUE", "CUT_KEY", "DEVICE_DECISION", "FACT_VALUE",
    "KEPT_KEY", "MAX_FACTS_PER_RESULT", "RecordLimits", "bounded", "bounded_json",
    "canonical_digest", "cut_text", "shallow", "values_past", "was_cut", "within",
]

CUT_KEY = "sentinel_cut"
KEPT_KEY = "kept"


@dataclass(frozen=True)
class RecordLimits:
    """What one record kind keeps of one value. A value whose JSON text is at most ``chars`` characters and
    ``depth`` levels deep is kept whole; the others are cut to a copy whose strings, objects, arrays and
    integers are at most ``string``, ``items``, ``digits`` long, shortened further until it fits ``chars``."""

    chars: int  # the kept value's JSON text (the cut notice adds under 400)
    string: int  # characters of one string (and of one object key) in a cut copy
    items: int  # entries of one object or array in a cut copy
    depth: int  # levels of nesting
    digits: int = 100  # digits of one integer in a cut copy (as the wire: ``wire_limits.MAX_INT_DIGITS``)


# the audit row's columns (``gateway/audit.py``): a tool's arguments, and a decision's proof
AUDIT_ARGUMENTS = RecordLimits(chars=4000, string=1000, items=100, depth=32)
AUDIT_PROOF = RecordLimits(chars=20000, string=2000, items=500, depth=64)
# the device firewall's decision record (``device_tools/runtime.py``): one line of decisions.jsonl
DEVICE_DECISION = RecordLimits(chars=8000, string=1000, items=100, depth=16)

# a fact learned from a tool's result (``policy/fact_bounds.py``): never cut (a cut value is another fact),
# so only ``chars`` and ``depth`` count: a binding whose fact is past them is not learned from that result;
# and how many facts one result may teach
FACT_VALUE = RecordLimits(chars=16000, string=4000, items=1000, depth=16)
MAX_FACTS_PER_RESULT = 20_000

# characters of a string that cost a redaction what one more value does (``values_past``): a key is walked
# in ~20 us, a string scanned for secrets at ~1.5 us a character
CHARS_PER_VALUE = 16
# the canonical text hashed is built from the value's parts; past this many it is not hashed (a cycle, or
# a value no wire message can carry: a message holds at most ``wire_limits.MAX_VALUES``)
MAX_HASHED_VALUES = 2_000_000
_STORED = json.JSONEncoder(ensure_ascii=True, default=str, sort_keys=True)
_quote = _encoder.encode_basestring_ascii  # type: ignore[attr-defined]
_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"')  # a JSON string, escapes and all
_INT_BITS = 14_000  # past this, ``str(int)`` refuses (Python's 4300-digit limit): hex instead


class _Lit(str):
    """Punctuation pushed on the canonical walk's stack, told apart from string values by its type."""


class _TooMany(SentinelError):
    """More items than the walk keeps: it stops there (caught inside this module)."""


def _key(k: Any) -> str:
    """An object key as JSON writes it (``json.dumps`` turns numbers, booleans and null into text)."""
    if isinstance(k, str):
        return k
    if k is True or k is False or k is None:
        return json.dumps(k)
    if isinstance(k, float):
        return repr(k)
    return str(k)


def _number(v: int | float) -> str:
    if isinstance(v, float):
        return json.dumps(v)  # its repr, or NaN / Infinity as json writes them
    if v.bit_length() > _INT_BITS:
        return _quote(f"int:0x{v:x}")
    return str(v)


def _chunks(value: Any) -> Any:
    """The canonical JSON text of ``value`` (``json.dumps(value, sort_keys=True, separators=(",", ":"),
    ensure_ascii=True, default=str)`` wherever that succeeds) in pieces, built without recursion."""
    stack: list[Any] = [value]
    seen = 0
    while stack:
        v = stack.pop()
        if type(v) is _Lit:
            yield str(v)
            continue
        seen += 1
        if seen > MAX_HASHED_VALUES:
            raise _TooMany
        if isinstance(v, str):
            yield _quote(v)
        elif v is None or v is True or v is False:
            yield json.dumps(v)
        elif isinstance(v, (int, float)):
            yield _number(v)
        elif isinstance(v, dict):
            entries = sorted(((_key(k), item) for k, item in v.items()), key=lambda e: e[0])
            stack.append(_Lit("}"))
            for n, (k, item) in enumerate(reversed(entries)):
                stack.append(item)
                stack.append(_Lit(("," if n < len(entries) - 1 else "") + _quote(k) + ":"))
            stack.append(_Lit("{"))
        elif isinstance(v, (list, tuple)):
            stack.append(_Lit("]"))
            for n, item in enumerate(reversed(v)):
                stack.append(item)
                if n < len(v) - 1:
                    stack.append(_Lit(","))
            stack.append(_Lit("["))
        else:
            yield _quote(str(v))


def canonical_digest(value: Any) -> tuple[str | None, int | None]:
    """(SHA-256 hex, length) of ``value``'s canonical JSON text (sorted keys, no spaces, ASCII); (None, None)
    for a value of more than ``MAX_HASHED_VALUES`` parts. No recursion: any depth."""
    h, n = hashlib.sha256(), 0
    try:
        for piece in _chunks(value):
            h.update(piece.encode("ascii"))
            n += len(piece)
    except _TooMany:
        return None, None
    return h.hexdigest(), n


def cut_text(text: Any, limit: int) -> Any:
    """``text`` cut to ``limit`` characters, saying how many it lost (anything not a string as it is)."""
    if isinstance(text, str) and len(text) > limit:
        return f"{text[:limit]}…[cut: {len(text) - limit} more characters]"
    return text


def _copy(value: Any, string: int, items: int, depth: int, digits: int) -> Any:
    """A copy of ``value`` within the given caps, each cut said in place (iterative: any depth)."""
    holder: list[Any] = [None]
    stack: list[tuple[Any, Any, Any, int]] = [(value, holder, 0, 1)]
    while stack:
        v, parent, slot, level = stack.pop()
        if isinstance(v, str):
            out: Any = cut_text(v, string)
        elif v is None or isinstance(v, (bool, float)):
            out = v
        elif isinstance(v, int):
            out = v if v.bit_length() <= digits * 3.33 else f"[cut: an integer of {v.bit_length()} bits]"
        elif isinstance(v, (dict, list, tuple)):
            if level > depth:
                out = f"[cut: nested deeper than {depth} levels]"
            elif isinstance(v, dict):
                out = {}
                for n, (k, item) in enumerate(v.items()):
                    if n >= items:
                        out["…"] = f"[cut: {len(v) - items} more keys]"
                        break
                    name = _key(k)
                    name = name if len(name) <= string else f"{name[:string]}…[cut]"
                    out[name] = None
                    stack.append((item, out, name, level + 1))
            else:
                out = [None] * min(len(v), items)
                for n in range(len(out)):
                    stack.append((v[n], out, n, level + 1))
                if len(v) > items:
                    out.append(f"[cut: {len(v) - items} more items]")
        else:
            out = cut_text(str(v), string)
        parent[slot] = out
    return holder[0]


def _within(value: Any, limits: RecordLimits) -> str | None:
    """``value``'s stored text when it is within ``limits`` as it is (the usual value), else None."""
    try:
        text = _STORED.encode(value)
    except (RecursionError, ValueError, TypeError):  # deeper than Python recurses; an integer too long
        return None
    if len(text) > limits.chars:
        return None
    # within the size, the text may still be deeper than the record kind keeps: told by its brackets outside
    # strings, counted only when there are enough of them to matter (two C counts on the usual value)
    if text.count("[") + text.count("{") > limits.depth:
        level = 0
        for ch in _STRING.sub("", text):
            if ch in "[{":
                level += 1
                if level > limits.depth:
                    return None
            elif ch in "]}":
                level -= 1
    return text


def values_past(value: Any, count: int) -> bool:
    """Whether ``value`` weighs more than ``count`` values: each key, item and scalar one, and a string (a
    value or a key) one more for every ``CHARS_PER_VALUE`` characters. Seen without recursion and never
    past the ``count``-th: its cost is bounded, whatever ``value``."""
    stack, seen = [value], 0
    while stack:
        v = stack.pop()
        seen += 1
        if isinstance(v, str):
            seen += len(v) // CHARS_PER_VALUE
        elif isinstance(v, dict):
            for k, item in v.items():
                seen += 1 + (len(k) // CHARS_PER_VALUE if isinstance(k, str) else 0)
                if seen > count:
                    return True
                stack.append(item)
        elif isinstance(v, (list, tuple)):
            stack.extend(v[: max(0, count - seen + 1)])
        if seen > count:
            return True
    return False


def within(value: Any, limits: RecordLimits) -> bool:
    """Whether ``value`` is within ``limits`` as it is (for a record that is kept whole or not at all)."""
    return _within(value, limits) is not None


def bounded(value: Any, limits: RecordLimits) -> Any:
    """``value`` if it is within ``limits``, else ``{"sentinel_cut": {...}, "kept": <cut copy>}``."""
    return value if _within(value, limits) is not None else _cut(value, limits)[0]


def bounded_json(value: Any, limits: RecordLimits) -> str:
    """The stored JSON text of ``bounded(value, limits)`` (sorted keys, ASCII): always valid JSON."""
    text = _within(value, limits)
    return text if text is not None else _cut(value, limits)[1]


def _cut(value: Any, limits: RecordLimits) -> tuple[dict[str, Any], str]:
    digest, length = canonical_digest(value)
    string, items = limits.string, limits.items
    while True:
        kept = _copy(value, string, items, limits.depth, limits.digits)
        kept_text = _STORED.encode(kept)
        if len(kept_text) <= limits.chars or (string <= 16 and items <= 1):
            break
        string, items = max(16, string // 2), max(1, items // 2)  # many small parts: fewer, shorter ones
    if len(kept_text) > limits.chars:
        kept, kept_text = None, "null"
    notice = {
        "full_sha256": digest,  # of the full value's canonical JSON (``canonical_digest``); None: not hashed
        "full_chars": length,
        "kept_chars": len(kept_text),
        "limits": asdict(limits),
    }
    record = {CUT_KEY: notice, KEPT_KEY: kept}
    return record, _STORED.encode(record)


def was_cut(value: Any) -> bool:
    """A value ``bounded`` cut (the record does not hold it whole)."""
    return isinstance(value, dict) and isinstance(value.get(CUT_KEY), dict) and KEPT_KEY in value


def shallow(value: Any, depth: int) -> Any:
    """``value`` with whatever lies deeper than ``depth`` levels, and any integer too long for ``str``,
    replaced by a note (iterative), for a recursive step (the redactor, ``json.dumps``) that must not meet a
    value nested thousands of levels deep; ``value`` itself when it holds neither."""
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        v, level = stack.pop()
        if isinstance(v, dict):
            children: Any = v.values()
        elif isinstance(v, (list, tuple)):
            children = v
        else:
            if isinstance(v, int) and v.bit_length() > _INT_BITS:
                break
            continue
        if level > depth:
            break
        stack.extend((c, level + 1) for c in children)
    else:
        return value
    return _copy(value, 1 << 62, 1 << 62, depth, _INT_BITS // 4)
