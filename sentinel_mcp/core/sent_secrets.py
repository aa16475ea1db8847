"""The secret argument values sent to upstreams lately, so that what an upstream writes on its own (its
stderr: a careless server's "wrong password 'hunter2'", a traceback quoting its arguments; the questions it
asks the person) is shown with them masked (``gateway/upstream_stderr.py``,
``gateway/front_held.relayed_question``).

Kept twice, each bounded on its own: by principal, for what a principal is shown (a relayed question masks
only the values *its own caller* sent: another principal's password masking a word of it would hide that
word from this person, and would answer the probe "is this text someone's password?"); and by (upstream,
principal), for that upstream's stderr (Sentinel's log, the operator's). A ``per_principal`` upstream's
process carries one principal's calls only: its lines are masked with that principal's values alone (another
principal's "secret" never hides a word of them). A shared process's line cannot be told to belong to a call
(a server writes when it likes: a value some time after its call, a line between calls), so it is masked with
the values of every principal that sent that upstream some lately (up to ``MAX_SENDERS``, the latest): a word
a principal hides so from the operator's log is marked ``[redacted N chars]``, where a password left in
clear could not be taken back. Each list holds its last ``MAX_KEPT`` values (an upstream may log a value some
time after the call: none is dropped on the call's end), so one principal's flood of calls never pushes out
another's, and its newest values up to ``MAX_OWNER_CHARS`` characters (a principal's lists of all upstreams
together too); at most ``MAX_PRINCIPALS`` principals and ``MAX_PAIRS`` (upstream, principal) lists, and
``MAX_CHARS`` characters of each kind, are kept (the least recently sent to go first). A thread reads
them (the relays run in threads). Standard library and Sentinel's own pure modules only: ``early_spawn``
starts the relays before the SDK is imported.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Iterable, Mapping
from typing import Any, Hashable

from sentinel_mcp.core.redactor import scrub_text
from sentinel_mcp.core.secret_values import mask_secret_values, secret_strings

__all__ = ["MAX_KEPT", "MAX_PAIRS", "MAX_PRINCIPALS", "MAX_SENDERS", "masked", "remember", "scrubbed"]

MAX_KEPT = 256  # of one principal, of one upstream (``secret_values`` masks at most 256 values of a text)
MAX_PRINCIPALS = 1024
MAX_PAIRS = 4096  # (upstream, principal) lists
MAX_SENDERS = 64  # principals whose values mask a shared process's line: the latest to send it some
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
        self.lists: OrderedDict[Hashable, OrderedDict[str, None]] = OrderedDict()
        self.chars: dict[Hashable, int] = {}
        self.total = 0

    def keep(self, owner: Hashable, texts: list[str]) -> None:
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

    def values(self, owner: Hashable) -> list[str]:
        return list(self.lists.get(owner) or ())

    def drop(self, owner: Hashable) -> None:
        self.lists.pop(owner, None)
        self.total -= self.chars.pop(owner, 0)


_by_principal = _Kept(MAX_PRINCIPALS)
_by_pair = _Kept(MAX_PAIRS)  # by (upstream, principal)


def _keep_pair(upstream: str, principal: str, texts: list[str]) -> None:
    """``texts`` in the (upstream, principal) list; that principal's lists of all upstreams bounded together
    by ``MAX_OWNER_CHARS`` (its least recently sent to dropped), so no principal's sending to many upstreams
    pushes another's list out of ``MAX_CHARS``."""
    _by_pair.keep((upstream, principal), texts)
    own = [k for k in _by_pair.lists if isinstance(k, tuple) and k[1] == principal]  # least recent first
    n = sum(_by_pair.chars[k] for k in own)
    for k in own[:-1]:
        if n <= MAX_OWNER_CHARS or k == (upstream, principal):
            break
        n -= _by_pair.chars[k]
        _by_pair.drop(k)


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
        _keep_pair(upstream, principal or "", texts)


def _values(kept: _Kept, owner: Hashable) -> list[str]:
    with _lock:
        return kept.values(owner)


def _senders_values(upstream: str) -> list[str]:
    """The values of each principal that sent ``upstream`` some lately (the latest ``MAX_SENDERS``), one list
    after another (each principal's whole: none pushes another's out)."""
    with _lock:
        pairs = [k for k in reversed(_by_pair.lists) if isinstance(k, tuple) and k[0] == upstream]
        return [v for k in pairs[:MAX_SENDERS] for v in _by_pair.values(k)]


def masked(text: str, principal: str | None) -> str:
    """``text``, shown to ``principal``'s person, with every value that principal sent lately masked (in any
    escaped spelling: ``secret_values``), nothing else changed: what an upstream asks the person may quote
    no password its caller gave it, and no other principal's value changes what it shows."""
    kept = _values(_by_principal, principal or "")
    return mask_secret_values(text, kept) if kept else text


def scrubbed(text: str, upstream: str, principal: str | None = None) -> str:
    """``text`` (what ``upstream`` wrote on its stderr) with the values sent to it lately masked (in any
    escaped spelling: ``secret_values``) and the recognisable secrets of any text (tokens, codes, cards,
    ``password=...``: ``redactor.scrub_text``). ``principal``: whose own process wrote it (a
    ``per_principal`` upstream's: that principal's values only); None: a process every caller shares (every
    principal's values: a line cannot be told to belong to a call)."""
    kept = _values(_by_pair, (upstream, principal)) if principal is not None else _senders_values(upstream)
    return scrub_text(mask_secret_values(text, kept, limit=len(kept)) if kept else text)
