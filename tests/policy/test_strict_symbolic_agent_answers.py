"""Strict symbolic mode: an identifier the LLM made up is not grounded by the LLM's own answer about it.

``option(strict_symbolic)`` refuses a guarded call whose string arguments are not values of the session's
facts (a read's result, the user's answer, a seed) or of a bound context: "reservation ZZZ999", invented,
is refused before any proof. The agent answers askables itself (``sentinel_answer``, provenance ``agent``),
with the inputs it chooses: its answer ``cancel_reason('BK-000', health)`` made ``BK-000`` a value of a
valid fact, and the invented id passed the check it exists for. The user's own answer still grounds what
it says, and a read's result what it holds.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from sentinel_mcp.core.decision import Answer, Ask, Deny
from sentinel_mcp.policy.policy_service import PolicyService
from tests.policy.policy_rig import BOOKINGS_PL, rig

pytestmark = pytest.mark.timeout(60)

MADE_UP = "BK-000"


def strict_rules(tmp_path: Path) -> Path:
    strict = tmp_path / "strict.pl"
    strict.write_text(BOOKINGS_PL.read_text() + "\noption(strict_symbolic).\n")
    return strict


def refused_as_made_up(d: object) -> bool:
    return isinstance(d, Deny) and "strict symbolic mode" in d.reason and MADE_UP in d.reason


async def test_the_agents_answer_about_a_made_up_id_does_not_ground_it(tmp_path: Path) -> None:
    async with rig(tmp_path / "facts.db", files=[strict_rules(tmp_path)]) as r:
        call = r.port.call_of("bk__cancel_booking", {"booking_id": MADE_UP})
        assert refused_as_made_up(await r.guard.decide(call))
        # the agent answers a question nobody asked, about the id it invented: recorded, as its own word
        recorded = await PolicyService(r.guard).answer("s1", "cancel_reason", [MADE_UP], "health")
        assert MADE_UP in recorded
        assert refused_as_made_up(await r.guard.decide(call))
        assert not any(MADE_UP in entry[2].get("booking_id", "") for entry in r.port.log)  # nothing fetched


async def test_the_users_answer_and_a_reads_result_still_ground_their_values(tmp_path: Path) -> None:
    async with rig(tmp_path / "facts.db", files=[strict_rules(tmp_path)]) as r:
        # the client reads its bookings: BK-789 is the upstream's
        out = await r.port.invoke("bk__list_bookings", {"user_id": "u_123"}, session_id="s1")
        assert out.kind == "completed"
        call = r.port.call_of("bk__cancel_booking", {"booking_id": "BK-789"})
        d = await r.guard.decide(call)
        assert isinstance(d, Ask), d
        # the user's answer to the question Sentinel asked is the user's word: its value grounds
        (q,) = [q for q in d.questions if q.meta.get("kind") == "ask"]
        await r.guard.record_answer(call, q, Answer(action="accept", content={"answer": "health"},
                                                    provenance="user"))
        assert "health" in await r.guard.store.known_values("s1", ["health", MADE_UP])


async def test_a_context_without_a_check_does_not_ground_what_the_agent_bound_it_to(tmp_path: Path) -> None:
    """``context(focus)`` (no check) takes any value the agent binds; the checked context of the same
    rulebase still grounds the booking its check proved the user's."""
    rules = strict_rules(tmp_path)
    rules.write_text(rules.read_text() + "context(focus).\n")
    async with rig(tmp_path / "facts.db", files=[rules]) as r:
        service = PolicyService(r.guard)
        bound = await service.bind("s1", "focus", MADE_UP)
        assert bound["value"] == MADE_UP
        call = r.port.call_of("bk__cancel_booking", {"booking_id": MADE_UP})
        assert refused_as_made_up(await r.guard.decide(call))
        await service.bind("s1", "booking_of_interest", "BK-789")  # its check reads the user's bookings
        d = await r.guard.decide(r.port.call_of("bk__cancel_booking", {"booking_id": "BK-789"}))
        assert isinstance(d, Ask), d
