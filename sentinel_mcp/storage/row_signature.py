"""A MAC over a shared row's fields that another replica acts on (the cluster's seal key, one per purpose).

Anyone who can write the shared database (a replica's credentials, a DBA) but does not hold
``sentinel.cluster.seal_key`` cannot make a row that a replica then takes for a person's answer or question:
the row's fields are signed by the replica that wrote them and checked by the one that acts on them. A server
store without a seal key is refused at start (``gateway/replica.py``); ``PROCESS_KEY`` (random, this process's
own) is what a store built without one signs with (an embedded store, a test): its rows count in this process.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
from typing import Any, Sequence

PROCESS_KEY = os.urandom(32)


def sign(key: bytes, purpose: str, *fields: str) -> str:
    """Lower hex; the purpose keeps one kind of row's signature from standing for another's."""
    message = json.dumps([purpose, *fields], separators=(",", ":")).encode()
    return hmac.new(key, message, hashlib.sha256).hexdigest()


def signed(key: bytes, mac: Any, purpose: str, *fields: Any) -> bool:
    """Whether ``mac`` (as read from the database: any type) signs exactly these fields (all strings)."""
    if not isinstance(mac, str) or not all(isinstance(f, str) for f in fields):
        return False
    # as bytes: ``compare_digest`` raises on a non-ASCII string (a hostile row would stop the reader)
    return hmac.compare_digest(mac.encode("utf-8", "replace"), sign(key, purpose, *fields).encode())


_encode = json.JSONEncoder(separators=(",", ":"), check_circular=False).encode
_PLAIN = (str, float, type(None))  # what a row's columns hand back: text, REAL (always a float), NULL


def _plain(value: Any) -> Any:
    """A value other than text, a float or None as it is signed: any other number as a float (a database
    hands a REAL back as a float whatever was written); any other type (no column holds it) is refused."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    raise TypeError(type(value).__name__)


def sign_row(key: bytes, purpose: str, row: Sequence[Any]) -> str:
    """``sign`` for a row of text, numbers and NULLs (times, expiries), exactly as the database keeps it."""
    values = [purpose, *(v if type(v) in _PLAIN else _plain(v) for v in row)]
    return hmac.digest(key, _encode(values).encode(), "sha256").hex()


def signed_row(key: bytes, mac: Any, purpose: str, row: Sequence[Any]) -> bool:
    """Whether ``mac`` signs exactly this row (as read: any types; a value no column holds is refused)."""
    if not isinstance(mac, str):
        return False
    try:
        expected = sign_row(key, purpose, row)
    except (TypeError, ValueError):
        return False
    return hmac.compare_digest(mac.encode("utf-8", "replace"), expected.encode())


def derived_key(seal_key: bytes, purpose: str) -> bytes:
    """The key for one purpose from the cluster's seal key (never interchangeable between purposes)."""
    return hmac.new(seal_key, f"sentinel seal: {purpose}".encode(), hashlib.sha256).digest()


def configured_key(seal_key: str | None, purpose: str) -> bytes:
    """``derived_key`` from the config's ``sentinel.cluster.seal_key`` as written (``${VAR}`` expanded), for a
    command on a server store without the gateway's wiring (``sentinel-mcp sensors``); none set raises
    ``LocationError`` naming the setting (as ``gateway/replica.py`` does: a key of the command's own would
    sign rows no replica reads)."""
    from sentinel_mcp.storage.location import LocationError, expand

    if not seal_key:
        raise LocationError("sentinel.store names a server store, so sentinel.cluster.seal_key must be set "
                            "(the same as the replicas')")
    return derived_key(expand(seal_key).encode(), purpose)
