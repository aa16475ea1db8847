"""The secret argument values sent to upstreams lately, so that what an upstream writes on its own (its
stderr: a careless server's "wrong password 'hunter2'", a traceback quoting its arguments; the questions it
asks the person) is shown with them masked (``gateway/upstream_stderr.py``,
``gateway/front_held.relayed_question``).

Kept twice, each bounded on its own: by principal, for what a principal is shown (a relayed question masks
only the values *its own caller* sent: another principal's password masking a word of it would hide that
word from this person, and would answer the probe "is this text someone's password?"); and by upstream, for
that upstream's stderr (Sentinel's log, the operator's: what the upstream was sent, by anyone). Each list
holds its last ``MAX_KEPT`` values (an upstream may log a value some time after the call: none is dropped on
the call's end), so one principal's flood of calls never pushes out another's, and its newest values up to
``MAX_OWNER_CHARS`` characters; at most ``MAX_PRINCIPALS`` principals and ``MAX_UPSTREAMS`` upstreams, and
``MAX_CHARS`` characters of each kind, are kept (the least recently sent to go first). A thread reads
them (the relays run in threads). Standard library and Sentinel's own pure modules only: ``early_spawn``
starts the relays before the SDK is imported.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Iterable, Mapping
from typing import Any

from sentinel_mcp.core.redactor import scrub_text
from sentinel_mcp.core.secret_values import mask_secret_values, secret_strings

__all__ = ["MAX_KEPT", "MAX_PRINCIPALS", "MAX_UPSTREAMS", "masked", "remember", "scrubbed"]

MAX_KEPT = 256  # of one principal, of one upstream (``secret_values`` masks at most 256 values of a text)
MAX_PRINCIPALS = 1024
MAX_UPSTREAMS = 256
MAX_VALUE_CHARS = 4096  # a longer "secret" is a document: its strings are kept up to this many characters
MAX_OWNER_CHARS = 256 * 1024  # of one principal's (one upstream's) values: its newest kept first
MAX_CHARS = 16 * 1024 * 1024  # of all principals' (all upstreams'): the least recently sent to go first
_lock = threading.Lock()


class _Kept:
    """Each owner's last values (a principal's, an upstream's), bounded by count and characters; the
    owners by number and by all their characters, the least recently sent to dropped whole (never the one
    sending)."""

    def __init__(self, owners: int) -> None:
        self.owners = owners
        self.lists: OrderedDict[str, OrderedDict[str, None]] = OrderedDict()
        self.chars: dict[str, int] = {}
        self.total = 0

    def keep(self, owner: str, texts: list[str]) -> None:
        kept = self.lists.setdefault(owner, OrderedDict())
        self.lists.move_to_end(owner)
        before = n = self.chars.get(owner, 0)
        for s in texts:
            n += 0 if s in kept else len(s)
            kept[s] = None
            kept.move_to_end(s)
        while kept and (len(kept) > MAX_KEPT or n > MAX_OWNER_CHARS):
            n -= len(kept.popitem(last=False)[0])
        self.chars[owner], self.total = n, self.total + n - before
        while (len(self.lists) > self.owners or self.total > MAX_CHARS) and next(iter(self.lists)) != owner:
            oldest, _ = self.lists.popitem(last=False)
            self.total -= self.chars.pop(oldest)

    def values(self, owner: str) -> list[str]:
        return list(self.lists.get(owner) or ())


_by_principal = _Kept(MAX_PRINCIPALS)
_by_upstream = _Kept(MAX_UPSTREAMS)


def remember(principal: str | None, upstream: str, arguments: Mapping[str, Any],
             secret: Iterable[str]) -> None:
    """Keep the texts of ``arguments``' secret ones, sent by ``principal`` (None: the local user, unnamed)
    to ``upstream`` (the newest last; past ``MAX_KEPT`` the oldest go)."""
    texts = [s[:MAX_VALUE_CHARS] for name in secret if name in arguments
             for s in secret_strings(arguments[name]) if s]
    if not texts:
        return
    with _lock:
        _by_principal.keep(principal or "", texts)
        _by_upstream.keep(upstream, texts)


def _values(kept: _Kept, owner: str) -> list[str]:
    with _lock:
        return kept.values(owner)


def masked(text: str, principal: str | None) -> str:
    """``text``, shown to ``principal``'s person, with every value that principal sent lately masked (in any
    escaped spelling: ``secret_values``), nothing else changed: what an upstream asks the person may quote
    no password its caller gave it, and no other principal's value changes what it shows."""
    kept = _values(_by_principal, principal or "")
    return mask_secret_values(text, kept) if kept else text


def scrubbed(text: str, upstream: str) -> str:
    """``text`` (what ``upstream`` wrote on its stderr) with every value sent to it lately masked (in any
    escaped spelling: ``secret_values``) and the recognisable secrets of any text (tokens, codes, cards,
    ``password=...``: ``redactor.scrub_text``)."""
    kept = _values(_by_upstream, upstream)
    return scrub_text(mask_secret_values(text, kept) if kept else text)
