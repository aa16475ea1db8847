"""Notices an upstream sends that reach no one, sent by the hostile upstreams (``hostile_stdio_upstream.py``,
``hostile_http_upstream.py``, ``sse_storm_upstream.py``: attack ``odd_notices``) during a call, before its
answer: known methods with params of the wrong shape (``MALFORMED``), methods no era defines (``UNKNOWN``:
near spellings, a huge name), and messages whose method is no string (``NO_METHOD``) or whose params are no
object (``NOT_OBJECT``): an SDK transport cannot read them as a message (``unreadable_notices.py``)."""

from __future__ import annotations

from typing import Any

EACH = 20  # notices of each spelling
MALFORMED = [
    ("notifications/message", {"level": "info"}),  # no data
    ("notifications/message", {"level": "bogus", "data": "x"}),
    ("notifications/message", {"level": 5, "data": "x"}),
    ("notifications/message", None),
    ("notifications/resources/updated", {}),  # no uri
    ("notifications/cancelled", {"requestId": [1]}),
    ("notifications/tools/list_changed", {"_meta": 5}),
]
UNKNOWN = ["hostile/unknown", "notifications/made_up", "Notifications/message", "notifications/message ",
           "", "n" * 100_000]
# no SDK transport reads these as a message (it logged a traceback each and the call waiting failed, as for
# any line that is no message); the lean HTTP path takes them as notices; each is now an unfit notice
NO_METHOD = [5, None, ["notifications/message"]]
# likewise a known method whose params are no object: a notice, unfit (its params not of its method's shape)
NOT_OBJECT = [("notifications/message", 5), ("notifications/message", "data"),
              ("notifications/progress", [1]), ("notifications/tools/list_changed", True)]


def odd_notices(sdk: bool = True) -> list[dict[str, Any]]:
    """``EACH`` notices of each spelling (``sdk``: only those an SDK transport reads as a message, the method
    a string and the params an object or none)."""
    out: list[dict[str, Any]] = []
    for method, params in MALFORMED:
        note = {"jsonrpc": "2.0", "method": method, **({} if params is None else {"params": params})}
        out += [note] * EACH
    for method in UNKNOWN:
        out += [{"jsonrpc": "2.0", "method": method, "params": {"i": 1}}] * EACH
    if not sdk:
        for method in NO_METHOD:
            out += [{"jsonrpc": "2.0", "method": method, "params": {}}] * EACH
        for method, params in NOT_OBJECT:
            out += [{"jsonrpc": "2.0", "method": method, "params": params}] * EACH
    return out


def sent(sdk: bool = True) -> int:
    return len(odd_notices(sdk))
