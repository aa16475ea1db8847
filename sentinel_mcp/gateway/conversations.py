"""Conversations: what a session is, who it belongs to, and which session a request may name.

A session is one conversation: one stdio process, one handshake-era connection (streamable HTTP's
``Mcp-Session-Id``, an SSE stream, an in-memory client), or, for 2026-07-28 clients (no handshake), an id
Sentinel issues and seals, carried back in ``requestState`` and in ``_meta["sentinel/session"]``. Ids are
the time they were made and 64 random bits, never reused (Python's ``id()`` is), so a session's facts end with
it: they stay in the store for audit, and no later conversation can load them. Every session belongs to the
principal that opened it; a session key a client supplies (``X-Sentinel-Session``,
``_meta["sentinel/session"]``) counts only when it names a live session of the same principal. With replicas
on one database a plain label names the same conversation on every replica (``storage/conversation_names.py``:
the label's row, with its idle time to live).
"""

from __future__ import annotations

import re
import secrets
import time
import weakref
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

from sentinel_mcp.core.random_pool import ordered_token_hex
from sentinel_mcp.core.recent_map import RecentMap
from sentinel_mcp.storage.conversation_names import LabelsUnavailable, SharedLabels
from sentinel_mcp.gateway.nonce_book import NoNonceBook
from sentinel_mcp.gateway.request_state import PREFIX as SEAL_PREFIX
from sentinel_mcp.gateway.request_state import RequestStateSeal
from sentinel_mcp.gateway.session_tables import on_end
from sentinel_mcp.identity.principal import Principal
from sentinel_mcp.core.errors import GatewayError

SESSION_HEADER = "x-sentinel-session"
_LABEL = re.compile(r"^[A-Za-z0-9_.-]{1,64}$")
IDLE_SECONDS = 12 * 3600  # a sealed 2026-era conversation id lapses after this long without a call
RESEAL_SECONDS = 60.0  # a sealed id is handed out again this long (it lapses IDLE_SECONDS - 60 s at worst)
# sealed ids kept to be handed out again: the most recently sealed conversations only. Kept on every one of
# the registry's 20,000, a 2026-era client calling without its id (a conversation a call) filled it with
# tokens never asked for again: ~350 of the ~580 bytes an entry, 7 MB of RSS (issue 21's memory row: +15.8 %
# over 100k calls, against +10 %)
RESEALED = 2048
MODERN_KIND = "conv"  # the kind of a conversation opened for a 2026-era request (no connection to end it)


class SessionRefused(GatewayError):
    """A supplied session key that is not a live session of the caller (the message never says whose)."""


@dataclass(slots=True, weakref_slot=True)  # no per-object __dict__; held weakly while in use (below)
class Conversation:
    id: str
    principal: Principal
    ended: bool = False
    minted: bool = False  # opened here with a fresh random id (``open``), not named by a client or a replica


class Conversations:
    def __init__(self, *, idle: float = IDLE_SECONDS, capacity: int = 20_000) -> None:
        self.idle = idle
        self.epoch = secrets.token_hex(4)  # labels name a different conversation after every restart
        # its own key, so a conversation id is never accepted as a request state (or the other way round);
        # reusable: a client carries it back on every call
        self.seal = RequestStateSeal(max_age=idle, nonces=NoNonceBook())
        self.capacity = capacity
        # up to 20,000 entries, a 2026-era client calling without its id adding one a call: an entry is its id
        # and a slot (RecentMap: no node per key). A conversation opened here and not ended is entered as its
        # principal (shared by all of them), its object made again when asked for; while anyone holds the
        # object, ``_held`` gives that same one back. Anything else (a label's, a restored one, an ended one)
        # is entered as its object. 258 -> ~144 bytes an entry
        # (tests/identity/test_conversation_entry_bytes.py)
        self._by_id: RecentMap[str, Principal | Conversation] = RecentMap(capacity)
        self._held: weakref.WeakValueDictionary[str, Conversation] = weakref.WeakValueDictionary()
        self._by_transport: weakref.WeakKeyDictionary[Any, Conversation] = weakref.WeakKeyDictionary()
        # the conversations of open connections, by id, until they end: named by their sealed id even when the
        # registry (which anyone's new conversations push older ones out of) has forgotten them
        self._connected: dict[str, Conversation] = {}
        # the conversations ended here (a connection closed), never restored from their sealed id: twice the
        # registry's capacity of ids, the oldest forgotten first (a conversation sealed by another replica
        # is restored, as is one evicted from the registry here while it lived)
        self._ended: OrderedDict[str, None] = OrderedDict()
        # a conversation's sealed id as last handed out: (the seal that made it, monotonic time, the token)
        self._sealed: OrderedDict[str, tuple[Any, float, str]] = OrderedDict()
        self.labels: SharedLabels | None = None  # replicas: labels name the cluster's conversations

    # ---------------------------------------------------------------- opening
    def open(self, principal: Principal, kind: str) -> Conversation:
        # the time first (the stores' indexes on sessions grow at their end), then 64 random bits
        conv = Conversation(f"{principal.name}/{kind}-{ordered_token_hex(8)}", principal, minted=True)
        self._remember(conv)
        return conv

    def of_transport(self, transport: Any, principal: Principal, kind: str) -> Conversation:
        """The conversation of a connection object (a ServerSession): opened on its first request, ended when
        the object goes away. A request of another principal on it is refused (a stolen session id)."""
        conv = self._by_transport.get(transport)
        if conv is None:
            conv = self.open(principal, kind)
            self._by_transport[transport] = conv
            self._connected[conv.id] = conv
            weakref.finalize(transport, self.end, conv.id)
            if hasattr(transport, "exit_stack"):  # a live connection (the SDK's): it tells when it closes
                # ended when it closes (DELETE, idle expiry, a closed stream), not only once the collector
                # frees it: until then its sealed id still named it from any request of the caller
                on_end(transport, "conversation", lambda: self.end(conv.id))
        elif conv.principal != principal:
            raise SessionRefused("this connection belongs to another caller; start your own session")
        return conv

    async def resolve(self, key: str, principal: Principal) -> Conversation:
        """``named``; a plain label, when replicas share the store, through the shared row (one round trip
        now and then: ``SharedLabels.refresh``). Raises ``SessionRefused``."""
        key = str(key).strip()
        if self.labels is None or not _LABEL.fullmatch(key):
            return self.named(key, principal)
        try:
            sid = await self.labels.session(principal.name, key)
        except LabelsUnavailable as e:  # fail closed: whose facts a call uses must be known
            raise SessionRefused(f"{e}; call again later") from None
        entry = self._by_id.get(sid)
        if entry is None or _principal(entry).name != principal.name:
            self._remember(Conversation(sid, principal))
        return self._live(sid, principal, restore=False)

    async def identify(self, key: str, principal: Principal) -> str | None:
        """The id of the conversation ``key`` names for ``principal``, checked as ``resolve`` checks it
        (``SessionRefused``) but opening no conversation and writing nothing: two keys of one request are
        compared before either is resolved, so a refused pair leaves nothing behind (``session_key.py``).
        None: a label that names no conversation yet (with replicas, no row in use): no other key names it."""
        key = str(key).strip()
        if key.startswith(SEAL_PREFIX):
            return self._sealed_session(key, principal)
        if "/" in key:
            return key
        if _LABEL.fullmatch(key):
            if self.labels is None:
                return self._label_id(principal, key)
            try:
                return await self.labels.current(principal.name, key)
            except LabelsUnavailable as e:  # fail closed, as ``resolve``
                raise SessionRefused(f"{e}; call again later") from None
        raise SessionRefused(
            "a session key is a label of letters, digits, '_', '.', '-' (up to 64), or an id Sentinel issued"
        )

    def _label_id(self, principal: Principal, label: str) -> str:
        """The id a label names for ``principal`` on this process (no replicas: labels of this epoch)."""
        return f"{principal.name}/label-{label}-{self.epoch}"

    def _sealed_session(self, key: str, principal: Principal) -> str:
        """The session of a sealed id Sentinel issued to ``principal``, unexpired (else refused)."""
        payload = self.seal.open(key)
        if payload is None or payload.get("principal") != principal.name or not payload.get("session"):
            raise SessionRefused(
                "the session key is unknown, expired or not yours; call without it to start a new session"
            )
        return str(payload["session"])

    def named(self, key: str, principal: Principal) -> Conversation:
        """The conversation a client-supplied key names: a sealed id Sentinel issued, the id of a live
        session,
        or a plain label (letters, digits, ``_.-``) naming one of the caller's own conversations."""
        key = str(key).strip()
        if key.startswith(SEAL_PREFIX):
            return self._live(self._sealed_session(key, principal), principal, restore=True)
        if "/" in key:
            return self._live(key, principal, restore=False)
        if _LABEL.fullmatch(key):
            sid = self._label_id(principal, key)
            if sid not in self._by_id:
                self._remember(Conversation(sid, principal))
            return self._live(sid, principal, restore=False)
        raise SessionRefused(
            "a session key is a label of letters, digits, '_', '.', '-' (up to 64), or an id Sentinel issued"
        )

    def _live(self, sid: str, principal: Principal, *, restore: bool) -> Conversation:
        conv = self._entry(sid)
        if conv is None and restore and sid in self._connected:
            conv = self._connected[sid]  # an open connection's, pushed out of the registry
            self._remember(conv)
        if conv is None and restore and sid.startswith(f"{principal.name}/") and sid not in self._ended:
            # sealed by us (or by another replica), evicted from the registry since or never in it here; not
            # one whose connection ended here: restored it would bring its facts back
            conv = Conversation(sid, principal)
            self._remember(conv)
        if conv is None or conv.principal.name != principal.name or conv.ended:
            raise SessionRefused(
                "the session key is unknown, ended or not yours; call without it to start a new session"
            )
        self._by_id.touch(sid)
        return conv

    def _remember(self, conv: Conversation) -> None:
        if conv.minted and not conv.ended:
            self._by_id.put(conv.id, conv.principal)
            self._held[conv.id] = conv
        else:
            self._by_id.put(conv.id, conv)

    def _entry(self, sid: str) -> Conversation | None:
        """The registry's conversation ``sid``: its object, the one in use if any is, else made again."""
        entry = self._by_id.get(sid)
        if entry is None or isinstance(entry, Conversation):
            return entry
        conv = self._held.get(sid)
        if conv is None:
            conv = Conversation(sid, entry, minted=True)
            self._held[sid] = conv
        return conv

    # ---------------------------------------------------------------- state
    def sealed(self, conv: Conversation) -> str:
        """The conversation's id as a client carries it back (``_meta["sentinel/session"]``). The same token
        for a minute: every answer carries one, and sealing (MAC, JSON, base64) was ~3 % of a call's CPU."""
        now = time.monotonic()
        held = self._sealed.get(conv.id)
        if held is not None and held[0] is self.seal and now - held[1] < RESEAL_SECONDS:
            return held[2]
        token = self.seal.seal({"session": conv.id, "principal": conv.principal.name})
        self._sealed[conv.id] = (self.seal, now, token)
        self._sealed.move_to_end(conv.id)
        while len(self._sealed) > RESEALED:
            self._sealed.popitem(last=False)
        return token

    def end(self, sid: str) -> None:
        conv = self._connected.pop(sid, None) or self._entry(sid)
        if conv is not None:
            conv.ended = True
            entry = self._by_id.get(sid)
            if entry is not None and not isinstance(entry, Conversation):
                self._by_id.put(sid, conv)  # entered as its principal: now as its object, ended
        self._ended[sid] = None
        while len(self._ended) > 2 * self.capacity:
            self._ended.popitem(last=False)

    def minted_here(self, sid: str) -> bool:
        """Whether ``sid`` is a conversation this registry opened (``open``: a fresh random id, which no other
        process's conversations can name) and still holds; False for anything else, evicted ones too."""
        entry = self._by_id.get(sid)
        return entry is not None and (not isinstance(entry, Conversation) or entry.minted)

    def principal_of(self, sid: str) -> Principal | None:
        entry = self._by_id.get(sid)
        return _principal(entry) if entry is not None else None


def _principal(entry: Principal | Conversation) -> Principal:
    return entry.principal if isinstance(entry, Conversation) else entry
