"""The waiting offers' rows every replica reads (``a2a/shared_offers.py``), on each backend: a row names its
principal only as a replica of the cluster wrote it (signed over context, principal and expiry), only until
it expires, and only until its offer ends; a store that cannot be reached makes no offer and places no
context (the sub-task is refused, never run on the orchestrator's grants alone)."""

from __future__ import annotations

import uuid

import pytest

from sentinel_mcp.a2a.offer_contexts import OfferContexts, OffersUnavailable
from sentinel_mcp.a2a.on_behalf import asking_principal
from sentinel_mcp.a2a.shared_offers import SharedOffers
from sentinel_mcp.storage import open_database
from tests.conftest import free_port
from sentinel_mcp.storage.open import release

KEY = b"k" * 32
C = {n: f"rover:{uuid.UUID(int=0xABCDEF << 100 | i)}" for i, n in enumerate(
    ("1", "2", "3", "4", "5", "6", "7", "8", "9", "gone", "next"))}  # contexts of the form offers have


def replicas(shared: SharedOffers) -> tuple[OfferContexts, OfferContexts]:
    a, b = OfferContexts(), OfferContexts()
    a.shared = b.shared = shared
    return a, b


async def test_a_waiting_offer_is_known_to_every_replica_a_made_up_row_to_none(store_location: str) -> None:
    db = open_database(store_location, "a2a_offers")
    try:
        shared = await SharedOffers.open(db, 60.0, KEY)
        a, b = replicas(shared)
        async with a.opened(C["1"], "rover"):
            assert await asking_principal("orch", "orch", C["1"], b) == "rover"  # another replica
            assert await asking_principal("orch", "rover", C["1"], b) is None  # not the orchestrator's
            assert await asking_principal("orch", "orch", C["2"], b) is None  # no such offer
            # rows written in SQL: another principal's name on a signed row, a copied mac, a longer life,
            # another cluster's key, a row of the wrong types
            [(mac, expires)] = await db.query("SELECT mac, expires_at FROM a2a_offers WHERE context_id = ?",
                                              (C["1"],))
            forged = SharedOffers(db, 60.0, b"other-cluster-key-0123456789abcd")
            other_mac = await forged.add(C["9"], "rover")
            rows = [(C["3"], "bob", expires, mac), (C["4"], "rover", expires, mac),
                    (C["5"], "rover", expires + 3600.0, mac), (C["6"], "rover", expires, "x" * 64),
                    (C["7"], "rover", expires, "")]
            for row in rows:
                await db.write("INSERT INTO a2a_offers (context_id, principal, expires_at, mac) "
                               "VALUES (?, ?, ?, ?)", row)
            for context in (C["3"], C["4"], C["5"], C["6"], C["7"], C["9"]):
                assert await b.principal_of(context) is None, context
            # contexts no offer has (nor a store may hold): nobody's, the store not even asked
            for context in ("rover:\x00" + C["1"][6:], C["1"] + "\udc80", "rover:" + "1" * 100_000,
                            C["1"][:-1], C["1"].upper(), C["1"] + "\n", ":" + C["1"][6:], "rover"):
                assert await asking_principal("orch", "orch", context, b) is None, context[:50]
                with pytest.raises(OffersUnavailable):
                    async with a.opened(context, "rover"):
                        raise AssertionError(f"an offer its sub-tasks could not find: {context[:50]!r}")
            assert await forged.principal_of(C["9"]) == "rover" and other_mac  # its own key: its own rows
            # the row and its mac moved to another context: nobody's
            move = "UPDATE a2a_offers SET context_id = ? WHERE context_id = ?"
            await db.write(move, (C["8"], C["1"]))
            assert await b.principal_of(C["8"]) is None
            await db.write(move, (C["1"], C["8"]))
            assert await b.principal_of(C["1"]) == "rover"
        assert await b.principal_of(C["1"]) is None  # the offer ended: its row is gone
        assert await a.principal_of(C["1"]) is None
        count = "SELECT COUNT(*) FROM a2a_offers WHERE context_id = ?"
        [(left,)] = await db.query(count, (C["1"],))
        assert left == 0

        # a replica that stopped mid-offer: its row expires by itself, and the next offer sweeps it
        short = SharedOffers(db, -1.0, KEY)
        await short.add(C["gone"], "rover")
        assert await b.principal_of(C["gone"]) is None
        async with a.opened(C["next"], "rover"):
            [(gone,)] = await db.query(count, (C["gone"],))
            assert gone == 0
    finally:
        await release(db)


async def test_a_store_that_cannot_be_reached_makes_no_offer_and_places_no_context() -> None:
    db = open_database(f"postgresql://postgres@127.0.0.1:{free_port()}/nowhere", "a2a_offers")
    try:
        a, b = replicas(await SharedOffers.open(db, 60.0, KEY))
        with pytest.raises(OffersUnavailable):
            async with a.opened(C["1"], "rover"):
                raise AssertionError("an offer no other replica can know of was made")
        with pytest.raises(OffersUnavailable):
            await asking_principal("orch", "orch", C["1"], b)
        assert await asking_principal("orch", "rover", C["1"], b) is None  # nobody else's tasks ask it
    finally:
        await release(db)
