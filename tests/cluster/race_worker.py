"""A replica's side of a race, in its own process (own connections): spend what it can, say what it got."""

from __future__ import annotations

import gc

if __name__ == "__main__":
    gc.disable()  # as a program its imports build long-lived objects only: no collector passes over them

import asyncio
import json
import random
import sys

GRANT_CAP = 40  # confirmations one principal may hold in the "confirmation-grant" race
SEAL_KEY = b"race-worker seal key, the same in every replica " * 2  # confirmations are signed with it


async def spend(url: str, kind: str, keys: list[str], seed: int) -> list[str]:
    from sentinel_mcp.gateway.stored_nonces import SCHEMA, StoredNonceBook
    from sentinel_mcp.policy.fact_store import FactStore
    from sentinel_mcp.storage import open_database
    from sentinel_mcp.storage.open import release

    random.Random(seed).shuffle(keys)
    won: list[str] = []
    if kind == "nonce":
        db = open_database(url, "nonces")
        await db.migrate(SCHEMA)
        book = StoredNonceBook(db)
        results = await asyncio.gather(*(asyncio.to_thread(book.consume, k) for k in keys))
        won = [k for k, ok in zip(keys, results) if ok]
        await release(db)
    elif kind == "default-confirmation":  # the default guard's confirmation of session k's call
        from sentinel_mcp.core.decision import Allow, ToolCall
        from sentinel_mcp.policy.confirmation_book import SharedConfirmationBook
        from sentinel_mcp.policy.default_guard import DefaultGuard

        db = open_database(url, "confirmations")
        guard = DefaultGuard()
        guard.share_confirmations(await SharedConfirmationBook.open(db, 300, key=SEAL_KEY))
        calls = [ToolCall(name="srv__pay", server="srv", tool="pay", arguments={"n": 1}, session_id=k)
                 for k in keys]
        results = await asyncio.gather(*(guard.decide(c) for c in calls))
        won = [k for k, d in zip(keys, results) if isinstance(d, Allow)]
        await release(db)
    elif kind == "confirmation-grant":  # one principal's grants, each in its own session: held up to the cap
        from sentinel_mcp.core.decision import ToolCall
        from sentinel_mcp.policy.confirmation_book import SharedConfirmationBook

        db = open_database(url, "confirmations")
        await SharedConfirmationBook.open(db, 300)
        book = SharedConfirmationBook(db, 300, per_principal=GRANT_CAP, key=SEAL_KEY)
        calls = [ToolCall(name="srv__pay", server="srv", tool="pay", arguments={"n": 1},
                          session_id=f"mallory/{k}-{seed}", principal="mallory") for k in keys]
        await asyncio.gather(*(book.grant(c, "default:fail-safe") for c in calls))
        won = [c.session_id for c in calls]
        await release(db)
    else:  # a confirmation fact of session k
        store = await FactStore(url, key=SEAL_KEY).open()
        results = await asyncio.gather(*(store.spend_confirmation(k, "srv__pay", "digest-1") for k in keys))
        won = [k for k, (n, _) in zip(keys, results) if n]
        await store.close()
    return won


if __name__ == "__main__":
    gc.freeze()  # exit without collecting the imports' objects (~0.1-1 s): a test's gateway waits for it
    gc.enable()
    url, kind, seed = sys.argv[1], sys.argv[2], int(sys.argv[3])
    keys = json.loads(sys.stdin.read())
    print(json.dumps(asyncio.run(spend(url, kind, keys, seed))))
