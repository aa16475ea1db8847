"""The conversation a request names itself: ``_meta["sentinel/session"]`` and the ``X-Sentinel-Session``
header.

A key is text (a label or an id Sentinel sealed); any other JSON value in ``_meta`` is refused rather than
read as its Python text or, falsy, passed over for the header. When both are sent they must name the same
conversation: the ``_meta`` key won silently, so a client (or a proxy adding the header for it) believed
its calls ran in the header's conversation, with its facts and confirmations, while they ran in another.
Both are checked and what they name compared (a sealed id and the label it was issued for name one
conversation) before the one used is resolved: a disagreement, or either key being refused, refuses the call
and leaves nothing behind (no conversation opened, no label's row written: ``Conversations.identify``).
"""

from __future__ import annotations

from typing import Any, Mapping

from sentinel_mcp.core.call_meta import SESSION_KEY
from sentinel_mcp.gateway.conversations import SESSION_HEADER, Conversation, Conversations, SessionRefused
from sentinel_mcp.identity.principal import Principal


async def named_conversation(conversations: Conversations, meta: Mapping[str, object], headers: Any,
                             principal: Principal) -> Conversation | None:
    """The conversation the request names (None: it names none); raises ``SessionRefused``."""
    named = meta.get(SESSION_KEY)
    if named is not None and type(named) is not str:
        raise SessionRefused("a session key is text: a label of letters, digits, '_', '.', '-' (up to "
                             "64), or an id Sentinel issued")
    header = headers.get(SESSION_HEADER) if headers is not None else None
    if not named:
        return await conversations.resolve(str(header), principal) if header else None
    if header and header.strip() != named.strip():
        # both checked and compared before either is resolved: resolving a label opens its conversation (with
        # replicas, writes its row), which a refused request must not leave behind
        mine = await conversations.identify(named, principal)
        if mine is None or mine != await conversations.identify(str(header), principal):
            raise SessionRefused(f"_meta[{SESSION_KEY!r}] and the X-Sentinel-Session header name different "
                                 "sessions; send one of them, or the same")
    return await conversations.resolve(named, principal)
