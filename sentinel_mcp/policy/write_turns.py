"""Which turns a write with effects takes across conversations (gateway/session_writes.py): the turn of each
upstream whose store its decision may read or its call may change, and the kept facts' turn where it may read
or establish a fact kept for every conversation.

Writes to different upstreams cannot change each other's store, so they need not wait for each other: one
principal's write held by a slow upstream must not hold every other principal's writes elsewhere. But a guard
may decide a write to one upstream on facts bound to another's reads (``binding(..., tool('b__get', ...))``
guarding ``a__set``): that write waits for writes to ``b`` as well. What each guard may read is walked
statically when the rulebase loads (policy/prolog/guard_reads.pl); a goal the walk cannot follow widens the
turns to every bound upstream and the kept facts.

A turn is named by the upstream's configured name (``ToolCall.server``), whatever name the client used for
the tool (a prefix, a namespace, a transparent server): every spelling of one upstream is one turn. A binding
names its tool by identity, ``<server>__<tool>``; a server's name may itself hold ``__``, so every prefix
ending before a ``__`` is taken (wider, never narrower, than the one upstream it is).
"""

from __future__ import annotations

from sentinel_mcp.core.decision import ToolCall
from sentinel_mcp.policy.rulebase import RulebaseInfo

KEPT_TURN = "kept:"  # the turn of the facts kept for every conversation
_SERVER = "server:"
_SEP = "__"
_MADE_MAX = 4096  # tool identities remembered per rulebase (any name may be asked)


def server_turn(server: str) -> str:
    return _SERVER + server


def _servers_of(identity: str) -> list[str]:
    """Every upstream ``identity`` (``<server>__<tool>``) may belong to."""
    out, at = [], identity.find(_SEP)
    while at > 0:
        out.append(server_turn(identity[:at]))
        at = identity.find(_SEP, at + 1)
    return out or [server_turn(identity)]


def turn_keys(info: RulebaseInfo | None, call: ToolCall, *, keeps: bool) -> tuple[str, ...]:
    """The shared turns of ``call`` (a write with effects), sorted: the order every write takes them in."""
    own = server_turn(call.server or call.identity)
    if info is None:
        return (own,)
    made = info.turn_keys_known()
    key = f"{int(keeps)}{call.server}\x00{call.identity}"
    known = made.get(key)
    if known is None:
        keys = {own}
        kept = keeps
        for g in info.reads_of_guards(call.identity):
            kept = kept or g.kept
            for tool in g.reads:
                keys.update(_servers_of(tool))
        if kept:
            keys.add(KEPT_TURN)
        known = tuple(sorted(keys))
        if len(made) >= _MADE_MAX:
            made.clear()
        made[key] = known
    return known
