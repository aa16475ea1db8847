"""JSON text from an encoder built once, for the texts written on every call (an audit row's hashed text, the
lean path's answer, a sealed state, a kept envelope's key).

``json.JSONEncoder.encode`` builds a new C encoder, and a dict to detect cycles, on every call: about half the
time of encoding an audit row. ``compact_encoder`` builds the C encoder once, with the same options, so the
text is the same, byte for byte (``tests/records/test_json_text.py``). What it encodes is never cyclic (parsed
JSON, rows and answers built here), so it keeps no cycle check: a cycle ends in ``RecursionError``, as a value
nested too deep does with either encoder. Without CPython's C encoder, ``JSONEncoder.encode`` itself.
"""

from __future__ import annotations

import json
from json import encoder as _encoder
from typing import Any, Callable


def compact_encoder(*, separators: tuple[str, str] = (",", ":"), ensure_ascii: bool = True,
                    sort_keys: bool = False, allow_nan: bool = True) -> Callable[[Any], str]:
    """``json.JSONEncoder(separators=..., ensure_ascii=..., sort_keys=..., allow_nan=...).encode``, its C
    encoder built once (``allow_nan=False``: a NaN or an infinity is a ``ValueError``, as there)."""
    plain = json.JSONEncoder(separators=separators, ensure_ascii=ensure_ascii, sort_keys=sort_keys,
                             allow_nan=allow_nan)
    make = getattr(_encoder, "c_make_encoder", None)
    if make is None:
        return plain.encode
    item_separator, key_separator = separators
    strings = _encoder.encode_basestring_ascii if ensure_ascii else _encoder.encode_basestring
    # the arguments JSONEncoder.iterencode passes it, but no dict of the objects in hand (no cycle check)
    built = make(None, plain.default, strings, None, key_separator, item_separator, sort_keys, False,
                 allow_nan)
    join = "".join

    def encode(value: Any) -> str:
        if type(value) is str:  # what JSONEncoder.encode does for a string (the C encoder would do the same)
            return strings(value)  # type: ignore[no-any-return]
        return join(built(value, 0))

    return encode
