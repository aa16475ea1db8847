"""How many answers the agent gave stand in a conversation (``sentinel_answer``'s facts, provenance
``agent``), counted up to a bound.

Why: an askable the agent may answer covers every value of its inputs (airline's ``cancel_reason(R, W)``:
any ``R``), so each answer naming a new one is a new fact, kept as long as the askable says (the whole
conversation by default). Unbounded, a client wrote facts without end (each up to 16,000 characters) into
the store and into the session the shared engine thread loads for every decision. The user's answers need no
such bound: each answers a question Sentinel put for a call."""

from __future__ import annotations

from sentinel_mcp.core import process_clock
from sentinel_mcp.core.stored_text import stored
from sentinel_mcp.policy.fact_store import FactStore

MAX_AGENT_ANSWERS = 1_000  # standing agent answers in one conversation (airline asks a handful)
# counted no further than the bound (LIMIT): a full conversation costs one bounded index walk an answer
_STANDING = ("SELECT COUNT(*) FROM (SELECT 1 FROM facts WHERE session = ? AND provenance = 'agent' "
             "AND (expires_at IS NULL OR expires_at > ?) LIMIT ?) AS standing")


async def standing_agent_answers(store: FactStore, session: str, up_to: int) -> int:
    """The agent's answers standing in ``session`` now, counted up to ``up_to``."""
    rows = await store.db.query(_STANDING, (stored(session), process_clock.now(), int(up_to)))
    return int(rows[0][0]) if rows else 0
