"""The store's rows of conversations that hold nothing but their seeds, forgotten at the purge.

Why: every conversation is seeded in the store (the config's and the rulebase's ``seed`` facts, no expiry),
and a conversation's rows are never deleted when it ends. A 2026-era client that carries no session back
opens a conversation a call, so once its reads' facts expired and were purged, one row per seed stayed for
good: the store grew by a row a call for the life of the data dir (200 calls: 200 rows left of 800). Seeds
are nobody's word and nothing to audit: the mirror of a conversation loaded again is seeded again
(``Knowledge._seed`` writes what the store lacks), so forgetting them loses nothing a decision reads.

A conversation's seed rows go only while it holds no other fact and no bound context, checked again in the
deleting statement itself (a fact learned meanwhile keeps them); the kept facts' scope is never touched."""

from __future__ import annotations

from sentinel_mcp.core.stored_text import stored
from sentinel_mcp.policy.fact_store import PURGE_BATCH, FactStore
from sentinel_mcp.policy.kept_effects import KEPT_SCOPE
from sentinel_mcp.storage import Statement

MAX_BATCHES = 50  # one purge's most (100,000 conversations); the next purge goes on
# a session holding nothing but seeds (``{alias}``: a row of it)
_ONLY_SEEDS = ("NOT EXISTS (SELECT 1 FROM facts g WHERE g.session = {alias}.session "
               "AND g.provenance <> 'seed') "
               "AND NOT EXISTS (SELECT 1 FROM contexts c WHERE c.session = {alias}.session)")
_FOUND = (f"SELECT DISTINCT f.session FROM facts f WHERE f.provenance = 'seed' AND f.session <> ? AND "
          f"{_ONLY_SEEDS.format(alias='f')} LIMIT ?")
_VALUES = (f"DELETE FROM fact_values WHERE session = ? AND fact IN (SELECT s.fact FROM facts s WHERE "
           f"s.session = fact_values.session AND s.provenance = 'seed' AND {_ONLY_SEEDS.format(alias='s')})")
_FACTS = ("DELETE FROM facts WHERE session = ? AND provenance = 'seed' AND "
          f"{_ONLY_SEEDS.format(alias='facts')}")


async def forget_seed_only(store: FactStore) -> int:
    """Delete the seed rows of conversations holding nothing else; how many conversations' rows went."""
    gone = 0
    for _ in range(MAX_BATCHES):
        found = await store.db.query(_FOUND, (stored(KEPT_SCOPE), PURGE_BATCH))
        if not found:
            break
        sessions = [(r[0],) for r in found]
        await store.db.run([Statement(_VALUES, sessions, many=True), Statement(_FACTS, sessions, many=True)])
        gone += len(found)
        if len(found) < PURGE_BATCH:
            break
    return gone
