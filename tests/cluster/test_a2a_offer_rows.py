"""The waiting offers' rows every replica reads (``a2a/shared_offers.py``), on each backend: a row names its
principal only as a replica of the cluster wrote it (signed over context, principal and expiry), only until
it expires, and only until its offer ends; a store that cannot be reached makes no offer and places no
context (the sub-task is refused, never run on the orchestrator's grants alone)."""

from __future__ import annotations

import pytest

from sentinel_mcp.a2a.offer_contexts import OfferContexts, OffersUnavailable
from sentinel_mcp.a2a.on_behalf import asking_principal
from sentinel_mcp.a2a.shared_offers import SharedOffers
from sentinel_mcp.storage import open_database
from sentinel_mcp.storage.local_server import free_port
from sentinel_mcp.storage.open import release

KEY = b"k" * 32


def replicas(shared: SharedOffers) -> tuple[OfferContexts, OfferContexts]:
    a, b = OfferContexts(), OfferContexts()
    a.shared = b.shared = shared
    return a, b


async def test_a_waiting_offer_is_known_to_every_replica_a_made_up_row_to_none(store_location: str) -> None:
    db = open_database(store_location, "a2a_offers")
    try:
        shared = await SharedOffers.open(db, 60.0, KEY)
        a, b = replicas(shared)
        async with a.opened("rover:1", "rover"):
            assert await asking_principal("orch", "orch", "rover:1", b) == "rover"  # another replica
            assert await asking_principal("orch", "rover", "rover:1", b) is None  # not the orchestrator's
            assert await asking_principal("orch", "orch", "rover:2", b) is None  # no such offer
            # rows written in SQL: another principal's name on a signed row, a copied mac, a longer life,
            # another cluster's key, a row of the wrong types
            [(mac, expires)] = await db.query("SELECT mac, expires_at FROM a2a_offers WHERE context_id = ?",
                                              ("rover:1",))
            forged = SharedOffers(db, 60.0, b"other-cluster-key-0123456789abcd")
            other_mac = await forged.add("rover:9", "rover")
            rows = [("rover:3", "bob", expires, mac), ("rover:4", "rover", expires, mac),
                    ("rover:5", "rover", expires + 3600.0, mac), ("rover:6", "rover", expires, "x" * 64),
                    ("rover:7", "rover", expires, "")]
            for row in rows:
                await db.write("INSERT INTO a2a_offers (context_id, principal, expires_at, mac) "
                               "VALUES (?, ?, ?, ?)", row)
            for context in ("rover:3", "rover:4", "rover:5", "rover:6", "rover:7", "rover:9"):
                assert await b.principal_of(context) is None, context
            assert await forged.principal_of("rover:9") == "rover" and other_mac  # its own key: its own rows
            # the row and its mac moved to another context: nobody's
            move = "UPDATE a2a_offers SET context_id = ? WHERE context_id = ?"
            await db.write(move, ("rover:8", "rover:1"))
            assert await b.principal_of("rover:8") is None
            await db.write(move, ("rover:1", "rover:8"))
            assert await b.principal_of("rover:1") == "rover"
        assert await b.principal_of("rover:1") is None  # the offer ended: its row is gone
        assert await a.principal_of("rover:1") is None
        count = "SELECT COUNT(*) FROM a2a_offers WHERE context_id = ?"
        [(left,)] = await db.query(count, ("rover:1",))
        assert left == 0

        # a replica that stopped mid-offer: its row expires by itself, and the next offer sweeps it
        short = SharedOffers(db, -1.0, KEY)
        await short.add("rover:gone", "rover")
        assert await b.principal_of("rover:gone") is None
        async with a.opened("rover:next", "rover"):
            [(gone,)] = await db.query(count, ("rover:gone",))
            assert gone == 0
    finally:
        await release(db)


async def test_a_store_that_cannot_be_reached_makes_no_offer_and_places_no_context() -> None:
    db = open_database(f"postgresql://postgres@127.0.0.1:{free_port()}/nowhere", "a2a_offers")
    try:
        a, b = replicas(await SharedOffers.open(db, 60.0, KEY))
        with pytest.raises(OffersUnavailable):
            async with a.opened("rover:1", "rover"):
                raise AssertionError("an offer no other replica can know of was made")
        with pytest.raises(OffersUnavailable):
            await asking_principal("orch", "orch", "rover:1", b)
        assert await asking_principal("orch", "rover", "rover:1", b) is None  # nobody else's tasks ask it
    finally:
        await release(db)
