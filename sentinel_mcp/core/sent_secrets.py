"""The secret argument values this process sent to upstreams lately, so that what an upstream writes on its
own (its stderr: a careless server's "wrong password 'hunter2'", a traceback quoting its arguments; the
questions it asks the person) is shown with them masked (``gateway/upstream_stderr.py``,
``gateway/front_held.relayed_question``).

The values of a call's secret arguments (``ToolCall.secret_arguments``) are kept when the call is made, the
last ``MAX_KEPT`` of them (an upstream may log a value some time after the call: none is dropped on the
call's end); a thread reads them (the relays run in threads). Standard library and Sentinel's own pure
modules only: ``early_spawn`` starts the relays before the SDK is imported.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Iterable, Mapping
from typing import Any

from sentinel_mcp.core.redactor import scrub_text
from sentinel_mcp.core.secret_values import mask_secret_values, secret_strings

__all__ = ["MAX_KEPT", "masked", "remember", "scrubbed"]

MAX_KEPT = 256
MAX_VALUE_CHARS = 4096  # a longer "secret" is a document: its strings are kept up to this many characters
_lock = threading.Lock()
_kept: OrderedDict[str, None] = OrderedDict()


def remember(arguments: Mapping[str, Any], secret: Iterable[str]) -> None:
    """Keep the texts of ``arguments``' secret ones (the newest last; past ``MAX_KEPT`` the oldest go)."""
    texts = [s[:MAX_VALUE_CHARS] for name in secret if name in arguments
             for s in secret_strings(arguments[name]) if s]
    if not texts:
        return
    with _lock:
        for s in texts:
            _kept[s] = None
            _kept.move_to_end(s)
        while len(_kept) > MAX_KEPT:
            _kept.popitem(last=False)


def masked(text: str) -> str:
    """``text`` with every kept value masked (in any escaped spelling: ``secret_values``), nothing else
    changed: what an upstream asks the person may quote no password a caller gave it."""
    with _lock:
        kept = list(_kept)
    return mask_secret_values(text, kept) if kept else text


def scrubbed(text: str) -> str:
    """``text`` with every kept value masked (in any escaped spelling: ``secret_values``) and the
    recognisable secrets of any text (tokens, codes, cards, ``password=...``: ``redactor.scrub_text``)."""
    with _lock:
        kept = list(_kept)
    return scrub_text(mask_secret_values(text, kept) if kept else text)
