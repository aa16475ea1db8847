"""Limits every incoming JSON-RPC message meets before anything reads it further, on every front.

A message is refused (with a JSON-RPC error, never silence) when it is too large, not UTF-8, not JSON,
gives a name twice in one object (``repeated_keys``: readers differ on which counts), holds too many values,
is nested too deep, carries an integer too long or a non-finite number, or is not a JSON-RPC 2.0 object with
a valid id and method (an id or method with a lone surrogate is refused: it is echoed, and could not be
encoded). Values may hold any text, lone surrogates included: they are data (the policy engine takes them as
such). Tool arguments meet the same value limits in the gateway core, whatever front they came through.
"""

from __future__ import annotations

import json
import math
import re
import unicodedata
from itertools import accumulate, repeat
from typing import Any
from sentinel_mcp.core.errors import GatewayError
from sentinel_mcp.core.repeated_keys import RepeatedKey, unique_object, where_repeated

MAX_MESSAGE_BYTES = 4 * 1024 * 1024
MAX_DEPTH = 64  # of a whole message
MAX_ARGUMENT_DEPTH = 32  # of a tool call's arguments (well below what upstreams' parsers survive)
MAX_INT_DIGITS = 100
MAX_SAFE_INTEGER = 2**53 - 1  # JSON's exact integers (IEEE 754 doubles): a progress token's bound
MAX_ECHOED_CHARS = 1000  # an id or a progress token, written back in an answer
# JSON values in one message (the items of its objects and arrays, all levels). Parsing and walking cost per
# value, not per byte: 4 MB of '[],' is 1.4 million arrays, and each message of them held the event loop
# (every client, the upstreams' pings) for 3 s while it was parsed and checked. Counted before parsing
MAX_VALUES = 100_000
_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"')
# what of a parsed text bears on its nesting: brackets and the quotes that delimit strings (every other ASCII
# byte deleted; what is not ASCII lies inside strings in text that parsed)
_NOT_NESTING = bytes(c for c in range(128) if chr(c) not in '[]{}"')
_PLAIN_STRING = re.compile(rb'"[^"]*"')  # a string once its escaped backslashes and quotes are gone
_NESTING = {ord("["): 1, ord("{"): 1, ord("]"): -1, ord("}"): -1}

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
INVALID_PARAMS = -32602


class WireError(GatewayError, ValueError):
    def __init__(self, code: int, message: str, id: Any = None) -> None:
        super().__init__(message)
        self.code, self.message, self.id = code, message, id

    def response(self) -> dict[str, Any]:
        return error_response(self.id, self.code, self.message)


def error_response(id: Any, code: int, message: str) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}}


def _int(text: str) -> int:
    if len(text.lstrip("-")) > MAX_INT_DIGITS:
        raise WireError(PARSE_ERROR, f"Parse error: an integer has more than {MAX_INT_DIGITS} digits")
    return int(text)


def _float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise WireError(PARSE_ERROR, f"Parse error: number {text[:40]} is out of range")
    return value


def _constant(name: str) -> Any:
    raise WireError(PARSE_ERROR, f"Parse error: {name} is not JSON")


# ``json.loads(text, parse_int=..., ...)`` builds this decoder (and its scanner) on every call: built once
_DECODER = json.JSONDecoder(parse_int=_int, parse_float=_float, parse_constant=_constant,
                            object_pairs_hook=unique_object)


def loads(raw: bytes | str) -> Any:
    """Parse one message under the limits; raises ``WireError`` (id unknown yet: null)."""
    if len(raw) > MAX_MESSAGE_BYTES:
        raise WireError(INVALID_REQUEST, f"Invalid Request: message larger than {MAX_MESSAGE_BYTES} bytes")
    if isinstance(raw, bytes):
        try:
            raw = raw.decode("utf-8")
        except UnicodeDecodeError as e:
            raise WireError(PARSE_ERROR, f"Parse error: not UTF-8 (byte {e.start})") from None
    if _too_many_values(raw):
        raise WireError(INVALID_REQUEST, f"Invalid Request: a message holds more than {MAX_VALUES} values")
    try:
        if raw.startswith("\ufeff"):  # what json.loads says before decoding
            raise json.JSONDecodeError("Unexpected UTF-8 BOM (decode using utf-8-sig)", raw, 0)
        try:
            value = _DECODER.decode(raw)
        except RepeatedKey:
            raise _repeated(raw) from None
    except WireError:
        raise
    except RecursionError:  # the parser gave up before the end: we cannot tell it is JSON at all
        raise WireError(PARSE_ERROR, f"Parse error: nested deeper than {MAX_DEPTH} levels") from None
    except ValueError as e:
        raise WireError(PARSE_ERROR, f"Parse error: {e}") from None
    problem = walk_value(value, MAX_DEPTH, MAX_VALUES, False)[0]
    if problem is None and _too_deep(raw):  # (after the parse: text that is no JSON stays a parse error)
        problem = f"nested deeper than {MAX_DEPTH} levels"
    if problem is not None:
        raise WireError(INVALID_REQUEST, f"Invalid Request: {problem}",
                        valid_id(value.get("id")) if isinstance(value, dict) else None)
    return value


def _repeated(text: str) -> WireError:
    """The refusal of ``text``, which gives a name twice in one object (or a parse error: see
    ``where_repeated``): invalid params inside ``params``, an invalid request elsewhere; the id answered
    when it is given once and can be written back."""
    if _too_deep(text):  # (before it is read again) a value nested past the bound: that is said first
        return WireError(INVALID_REQUEST, f"Invalid Request: nested deeper than {MAX_DEPTH} levels")
    key, in_params, rid = where_repeated(text, _DECODER)
    said = f"the name {json.dumps(key[:40])} is given twice in one object (readers differ on which counts)"
    if in_params:
        return WireError(INVALID_PARAMS, f"Invalid params: {said}", valid_id(rid))
    return WireError(INVALID_REQUEST, f"Invalid Request: {said}", valid_id(rid))


def _too_many_values(text: str) -> bool:
    """Whether ``text`` surely holds more than ``MAX_VALUES`` values, told without parsing it: every comma
    outside a string separates two items, and every array or object but the outermost is an item. Counted
    over the whole text first (C speed); only a text past the bound that way has its strings taken out."""
    if text.count(",") + text.count("[") + text.count("{") <= MAX_VALUES:
        return False
    bare = _STRING.sub("", text)
    return max(bare.count(","), bare.count("[") + bare.count("{") - 1) > MAX_VALUES


def _too_deep(text: str) -> bool:
    """Whether ``text`` nests deeper than ``MAX_DEPTH``, told on the text: a value that a later duplicate name
    discards never reaches the parsed message (and its walk), yet every other parser of the same text meets
    it (the SDK's re-read of a body gave up with a logged traceback). Only a text with more brackets than the
    bound has its strings taken out and its brackets summed (C speed either way). Called on text that parsed
    (escapes are well formed, and outside its strings all is ASCII), or that was refused for a name given
    twice, which says it first (no name given twice is read now: the depth is still told on the text)."""
    if text.count("[") + text.count("{") <= MAX_DEPTH:
        return False
    escaped = text.encode("utf-8", "surrogatepass").replace(b"\\\\", b"").replace(b'\\"', b"")
    brackets = _PLAIN_STRING.sub(b"", escaped.translate(None, _NOT_NESTING))  # (other escapes: deleted)
    return max(accumulate(map(_NESTING.get, brackets, repeat(0))), default=0) > MAX_DEPTH


_WALKED = (dict, list, int, float)  # the values with something to check (bool is an int: let through below)


# What one walk of a value found, (problem, floats, nested_keys): the limits' verdict, and what the
# validate step's argument form needs to know so that it does not walk the arguments again (issue 21). The
# notes are conservative ("maybe" runs a check in full, only "surely not" skips it) and meaningful only
# without a problem (the walk stops there): floats, a float somewhere (else no number is made an integer:
# ``json_numbers.py``); nested_keys, an object below the top with two keys or more (else no two keys of one
# object below the top can be one name to a case-folding reader: ``gateway/key_spellings.py``). A plain
# tuple: a named one costs two calls a walk.
ValueWalk = tuple[str | None, bool, bool]


def value_problem(value: Any, max_depth: int, max_values: int = MAX_VALUES) -> str | None:
    """Depth, number of values, integer size and finiteness of a parsed JSON value."""
    return walk_value(value, max_depth, max_values, False)[0]


def walk_value(
    value: Any, max_depth: int, max_values: int = MAX_VALUES, nested_keys: bool = True,
    one_reading: bool = False, composed: bool = True,
) -> ValueWalk:
    """``value_problem``'s walk, noting floats and (with ``nested_keys``) nested objects (iterative: no
    recursion; a value past ``max_values`` is not walked further). One walk serves the wire limits and the
    tool arguments' form; a message's walk does not ask for nested objects (a ``len`` a message).

    ``one_reading`` (a tool call's arguments): refuses what two readers read as two values, so that the guard
    and the upstream cannot differ on it: a text or key holding a lone surrogate (no Unicode: one reader
    replaces it, another drops it, UTF-8 cannot carry it) and an integer an IEEE double cannot hold exactly
    (``2**53 + 1`` is ``2**53`` to JavaScript's ``JSON.parse``, and to every reader that parses numbers as
    doubles), and a text or key not in Unicode's composed form, NFC (``one_text``; not with ``composed``
    false: an upstream set ``argument_texts: "as_sent"``, whose texts are exact bytes)."""
    stack: list[tuple[Any, int]] = [(value, 1)]
    seen = 0
    floats = nested = False
    while stack:
        v, depth = stack.pop()
        t = type(v)  # a parsed object or array is told by its type (no isinstance a container; issue 21)
        if t is not dict and t is not list:  # numbers, and subclasses of the containers, as before
            if isinstance(v, dict):
                t = dict
            elif isinstance(v, list):
                t = list
            elif isinstance(v, bool):
                continue
            elif isinstance(v, int):
                if v.bit_length() > MAX_INT_DIGITS * 3.33:
                    return (f"an integer has more than {MAX_INT_DIGITS} digits", floats, nested)
                if one_reading and v.bit_length() > _EXACT_BITS and not _exact_double(v):
                    return (_INEXACT, floats, nested)
                continue
            elif one_reading and isinstance(v, str):
                problem = None if v.isascii() else one_text(v, composed)
                if problem is not None:
                    return (problem, floats, nested)
                continue
            else:
                if isinstance(v, float):
                    floats = True
                    if not math.isfinite(v):
                        return ("a number is not finite", floats, nested)
                continue
        if t is dict:
            items: Any = v.values()
            if nested_keys and depth > 1 and not nested and len(v) > 1:
                nested = True
            if one_reading:
                for k in v:
                    if not k.isascii() and type(k) is str:
                        problem = one_text(k, composed)
                        if problem is not None:
                            return (problem, floats, nested)
        else:
            items = v
        seen += len(v)
        if seen > max_values:
            return (f"holds more than {max_values} values", floats, nested)
        if depth > max_depth:
            return (f"nested deeper than {max_depth} levels", floats, nested)
        for item in items:
            # text and null, most of the items, have nothing to check; objects and arrays are walked (both
            # told without isinstance's walk)
            ti = type(item)
            if ti is dict or ti is list or (ti is not str and item is not None and isinstance(item, _WALKED)):
                stack.append((item, depth + 1))
            elif one_reading and ti is str and not item.isascii():
                problem = one_text(item, composed)
                if problem is not None:
                    return (problem, floats, nested)
            elif one_reading and ti is int and item.bit_length() > _EXACT_BITS:
                stack.append((item, depth + 1))  # told on its own (above): exact as a double, or refused
    return (None, floats, nested)


_EXACT_BITS = 53  # every integer of at most 53 bits is exactly a double
_INEXACT = ("an integer is past what a double holds exactly (2**53); a reader that parses numbers as doubles "
            "(JavaScript) would act on another number: send it as text")
_NOT_UNICODE = "a text holds a lone surrogate (\\ud800-\\udfff alone), which is not Unicode"


_NOT_NFC = ("a text is not in Unicode's composed form (NFC): it has a spelling that reads the same and "
            "compares unequal (e + U+0301 for \u00e9); send it in NFC")


def one_text(s: str, composed: bool = True) -> str | None:
    """Why ``s`` (not ASCII: ASCII is its own NFC) is no one text to every reader, or None. A lone surrogate
    is no Unicode. And a text not in NFC reads to a person as its canonical equivalent (``e`` + U+0301 is
    ``\u00e9``, conjoining Hangul jamo are their syllable, the Kelvin sign is ``K``) while a rule's
    comparison and an upstream that normalizes see two texts: refused, not normalized, so the tool runs on
    the very text the guard judged, which is the one sent (compatibility forms such as ``\uff41`` or
    ``\ufb01`` look otherwise and are NFC: kept; folding them is a rule's choice, as ``key_spellings`` does
    for names). ``composed`` false: NFC is not asked (``config_arguments``' ``argument_texts``)."""
    if not _encodable(s):
        return _NOT_UNICODE
    if composed and not unicodedata.is_normalized("NFC", s):
        return _NOT_NFC
    return None


def _exact_double(n: int) -> bool:
    try:
        return float(n) == n
    except OverflowError:
        return False


def _encodable(s: str) -> bool:
    try:
        s.encode("utf-8")
        return True
    except UnicodeEncodeError:
        return False


def valid_id(id: Any) -> Any:
    """The id to answer with: the request's if it is a text of at most ``MAX_ECHOED_CHARS`` characters that
    can be written back, or an integer JSON carries exactly (|n| <= 2**53 - 1, a progress token's bound: a
    client in JavaScript reads 2**53 + 1 as 2**53, and would match the answer to a request it never sent);
    else null. Type-strict: ``true`` is no integer (Python's bool is one), nor is ``1.0``; any integer of
    64 bits was taken before."""
    kind = type(id)
    if kind is str:
        return id if len(id) <= MAX_ECHOED_CHARS and (id.isascii() or _encodable(id)) else None
    if kind is int and -MAX_SAFE_INTEGER <= id <= MAX_SAFE_INTEGER:
        return id
    return None


def check_echoed_text(message: Any) -> None:
    """An id or method that an answer would echo must be encodable text (no lone surrogates)."""
    if not isinstance(message, dict):
        return
    mid, method = message.get("id"), message.get("method")
    if isinstance(mid, str) and not _encodable(mid):
        raise WireError(INVALID_REQUEST, "Invalid Request: id holds a lone surrogate (not valid Unicode)")
    if isinstance(method, str) and not _encodable(method):
        raise WireError(INVALID_REQUEST, "Invalid Request: method holds a lone surrogate", valid_id(mid))


def check_envelope(message: Any) -> None:
    """A JSON-RPC 2.0 request, notification or response object (no batches: MCP has none)."""
    if isinstance(message, list):
        raise WireError(INVALID_REQUEST, "Invalid Request: batches are not supported")
    if not isinstance(message, dict):
        raise WireError(INVALID_REQUEST, "Invalid Request: a message is a JSON object")
    mid = message.get("id")
    if message.get("jsonrpc") != "2.0":
        raise WireError(INVALID_REQUEST, 'Invalid Request: "jsonrpc" must be "2.0"', valid_id(mid))
    if "id" in message and valid_id(mid) is None:
        raise WireError(INVALID_REQUEST, "Invalid Request: id must be a string or an integer (a string of at "
                        f"most {MAX_ECHOED_CHARS} characters, an integer of at most 2**53 - 1 either way)")
    check_echoed_text(message)
    if "method" in message:
        if not isinstance(message["method"], str):
            raise WireError(INVALID_REQUEST, "Invalid Request: method must be a string", valid_id(mid))
        if "params" in message:
            check_params(message["params"], mid, "id" in message)
    elif "result" not in message and "error" not in message:
        raise WireError(INVALID_REQUEST, "Invalid Request: neither a request nor a response", valid_id(mid))


def check_params(params: Any, mid: Any, request: bool) -> None:
    """A request's or notification's ``params``, when sent, is an object (JSON-RPC 2.0's by-name params: MCP
    has no positional ones, and null is no object), and its ``_meta``, when sent, an object: the SDK's
    handshake-era reader answered "Invalid request parameters" without saying why, and took ``"_meta": null``
    as no ``_meta``. A request's ``_meta.progressToken`` is held to ``progress_token_ok``. Refused before
    anything runs, on every front (a notification is dropped: its error carries id null). One call a message,
    type tests and a ``get`` inside (the hot path: issue 21)."""
    if type(params) is not dict:
        raise WireError(INVALID_REQUEST, "Invalid Request: params must be an object", valid_id(mid))
    meta = params.get("_meta", params)  # ``params`` itself: no ``_meta`` was sent
    if meta is params:
        return
    if type(meta) is not dict:
        raise WireError(INVALID_PARAMS, "Invalid params: params._meta must be an object", valid_id(mid))
    if request and "progressToken" in meta and not progress_token_ok(meta["progressToken"]):
        raise WireError(INVALID_PARAMS, "Invalid params: _meta.progressToken must be a string of at most "
                        f"{MAX_ECHOED_CHARS} characters or an integer of at most 2**53 - 1 either way",
                        valid_id(mid))


def progress_token_ok(token: Any) -> bool:
    """A progress token the gateway takes: a text it can write back (``valid_id``'s bound, no lone surrogate)
    or an integer JSON carries exactly to every client (|n| <= 2**53 - 1: a client in JavaScript reads a
    larger one as another number, so progress would come under a token it never sent). ``true`` is no
    integer, nor is ``1.0``. The SDK passed over a token of another type (``true``, ``1.5``, ``{}``, null) and
    ran the request without progress, while the lean paths handed it on as if it were one."""
    kind = type(token)
    if kind is int:
        return -MAX_SAFE_INTEGER <= token <= MAX_SAFE_INTEGER
    return kind is str and len(token) <= MAX_ECHOED_CHARS and (token.isascii() or _encodable(token))


def parse_message(raw: bytes | str) -> dict[str, Any]:
    message = loads(raw)
    check_envelope(message)
    return message
