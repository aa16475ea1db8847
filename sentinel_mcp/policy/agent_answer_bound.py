"""How many answers the agent gave stand in a conversation (``sentinel_answer``'s facts, provenance
``agent``), counted up to a bound.

Why: an askable the agent may answer covers every value of its inputs (airline's ``cancel_reason(R, W)``:
any ``R``), so each answer naming a new one is a new fact, kept as long as the askable says (the whole
conversation by default). Unbounded, a client wrote facts without end (each up to 16,000 characters) into
the store and into the session the shared engine thread loads for every decision. The user's answers need no
such bound: each answers a question Sentinel put for a call.

A conversation's bound alone let a client open conversation after conversation, each with its 1,000: the
principal's answers are bounded too, across every conversation of theirs (``agent_answer_owners``: which
principal a conversation holding agent answers belongs to, a row written with its first one, gone with its
last: ``forget_owners``)."""

from __future__ import annotations

from sentinel_mcp.core import process_clock
from sentinel_mcp.core.stored_text import stored
from sentinel_mcp.policy.fact_store import FactStore

MAX_AGENT_ANSWERS = 1_000  # standing agent answers in one conversation (airline asks a handful)
MAX_PRINCIPAL_AGENT_ANSWERS = 5_000  # standing agent answers of one principal, in all its conversations
# counted no further than the bound (LIMIT): a full conversation costs one bounded index walk an answer
_STANDING = ("SELECT COUNT(*) FROM (SELECT 1 FROM facts WHERE session = ? AND provenance = 'agent' "
             "AND (expires_at IS NULL OR expires_at > ?) LIMIT ?) AS standing")


async def standing_agent_answers(store: FactStore, session: str, up_to: int) -> int:
    """The agent's answers standing in ``session`` now, counted up to ``up_to``."""
    rows = await store.db.query(_STANDING, (stored(session), process_clock.now(), int(up_to)))
    return int(rows[0][0]) if rows else 0


_OWNER = ("INSERT INTO agent_answer_owners (session, principal) VALUES (?, ?) "
          "ON CONFLICT (session) DO NOTHING")
_PRINCIPAL_STANDING = (
    "SELECT COUNT(*) FROM (SELECT 1 FROM agent_answer_owners o JOIN facts f ON f.session = o.session "
    "WHERE o.principal = ? AND f.provenance = 'agent' AND (f.expires_at IS NULL OR f.expires_at > ?) "
    "LIMIT ?) AS standing")
_FORGET_OWNERS = ("DELETE FROM agent_answer_owners WHERE NOT EXISTS (SELECT 1 FROM facts f "
                  "WHERE f.session = agent_answer_owners.session AND f.provenance = 'agent')")


async def principal_agent_answers(store: FactStore, principal: str, up_to: int) -> int:
    """The agent's answers standing now in every conversation of ``principal``, counted up to ``up_to``."""
    rows = await store.db.query(_PRINCIPAL_STANDING, (stored(principal), process_clock.now(), int(up_to)))
    return int(rows[0][0]) if rows else 0


async def own_conversation(store: FactStore, session: str, principal: str) -> None:
    """Records that ``session`` (about to hold an agent answer) is ``principal``'s (a conversation is the
    principal's that opened it: the first row stands)."""
    await store.db.write(_OWNER, (stored(session), stored(principal)))


async def forget_owners(store: FactStore) -> int:
    """Deletes the rows of conversations that hold no agent answer any more (the store's purge); how many."""
    return (await store.db.write(_FORGET_OWNERS)).rowcount or 0
