"""What one conversation costs the registry (issue 21's memory row: a 2026-era client calling without its id
opens a conversation a call, and the registry keeps 20,000 of them). Measured with tracemalloc over a
registry churned well past its capacity (its tables at their steady size): an entry may cost its id string and
its slots in the map and the order queue, nothing per entry besides (no object per conversation, no per-entry
dict or list node, no copy of the id). On main before 2026-12-05 an entry cost 258 bytes: the id 88, a
``Conversation`` 64, the ``OrderedDict``'s node and index 106."""

from __future__ import annotations

import gc
import sys
import tracemalloc

import pytest

from sentinel_mcp.gateway.conversations import MODERN_KIND, Conversation, Conversations, SessionRefused
from sentinel_mcp.identity.principal import Principal

OWNER = Principal("owner", "token")
# a dict's slot at its steady size after churn (~48 bytes: a 16-byte entry, 2/3 used at most, a 4-byte
# index, a third of the table free again after each resize) and a queue slot (8): 72 leaves room for neither
# a 64-byte object nor a 32-byte node an entry
SLOT_BYTES = 72


def _opened(conv: Conversations, n: int) -> None:
    for _ in range(n):
        conv.open(OWNER, MODERN_KIND)  # the front's call without a session: the object is dropped after it


def test_an_entry_costs_its_id_and_its_slots_only() -> None:
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        conv = Conversations()
        _opened(conv, 3 * conv.capacity)
        gc.collect()
        per_entry = (tracemalloc.get_traced_memory()[0] - before) / conv.capacity
    finally:
        tracemalloc.stop()
    sid = conv.open(OWNER, MODERN_KIND).id
    assert len(conv._by_id) == conv.capacity == 20_000  # the capacity is kept
    assert per_entry <= sys.getsizeof(sid) + SLOT_BYTES, per_entry


def _conversation_objects() -> int:
    gc.collect()
    return sum(type(o) is Conversation for o in gc.get_objects())


def test_no_object_is_kept_per_conversation() -> None:
    before = _conversation_objects()  # (other tests' registries, if any are still alive)
    conv = Conversations(capacity=5_000)
    _opened(conv, 6_000)
    assert _conversation_objects() == before
    held = [conv.open(OWNER, MODERN_KIND) for _ in range(10)]  # while held, one object each, the same one
    assert all(conv.named(c.id, OWNER) is c for c in held)
    assert _conversation_objects() == before + 10
    del held
    assert _conversation_objects() == before


def test_a_conversation_entered_as_its_principal_behaves_as_its_object_did() -> None:
    """Ended while nobody holds it, restored, evicted, named by another caller: as before the entry shrank."""
    other = Principal("mallory", "token")
    conv = Conversations(capacity=4)
    sid = conv.open(OWNER, MODERN_KIND).id  # the object dropped at once
    sealed = conv.sealed(conv.named(sid, OWNER))
    assert conv.minted_here(sid) and conv.principal_of(sid) == OWNER
    for who in (other, Principal("owner", "local"), Principal("Owner", "token")):
        if who.name != OWNER.name:
            with pytest.raises(SessionRefused):
                conv.named(sid, who)
    conv.end(sid)  # a conversation nobody holds ends: its entry says so from now on
    for key in (sid, sealed):
        with pytest.raises(SessionRefused):
            conv.named(key, OWNER)
    assert conv.minted_here(sid)  # (still the one opened here, as before: the guard's shortcut is not asked)
    held = conv.open(OWNER, MODERN_KIND)
    conv.end(held.id)
    assert held.ended  # the object in use is the one ended
    kept = conv.open(OWNER, MODERN_KIND)
    kept_seal = conv.sealed(kept)
    for _ in range(4):
        conv.open(OWNER, MODERN_KIND)
    assert not conv.minted_here(kept.id)  # evicted: not counted as opened here any more
    restored = conv.named(kept_seal, OWNER)  # the seal vouches for it; restored, not minted here
    assert restored is not kept and restored.id == kept.id and not restored.minted
    assert not conv.minted_here(kept.id) and conv.named(kept.id, OWNER) is restored
