"""The guard on a real MCP server: tools before questions, provenance, confirmations, effects."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from tests.policy.policy_rig import rig

from sentinel_mcp.core.decision import Allow, Answer, Ask, Deny
from sentinel_mcp.policy.questions import AnswerRefused

pytestmark = pytest.mark.timeout(60)


async def test_tools_before_questions_then_allow(tmp_path: Path) -> None:
    async with rig(tmp_path / "facts.db") as r:
        port, guard, state = r.port, r.guard, r.state  # noqa: F841
        call = port.call_of("bk__cancel_booking", {"booking_id": "BK-789"})
        d = await guard.decide(call)
        # the solver fetched both read tools (through the guarded port) before asking anything
        assert state["calls"] == {"list_bookings": 1, "get_booking": 1}
        assert [o for o, _, _ in port.log] == ["solver", "solver"]
        assert isinstance(d, Ask), d
        # the reason first (labelled choices and "I don't know"); the confirmation only once it is known
        assert [q.meta["kind"] for q in d.questions] == ["ask"]
        (q,) = d.questions
        assert [o["const"] for o in q.requested_schema["properties"]["answer"]["oneOf"]] == \
            ["change_of_plan", "health", "other", "i_dont_know"]
        await guard.record_answer(call, q, Answer(action="accept", content={"answer": "health"}))
        d2 = await guard.decide(call)
        assert isinstance(d2, Ask) and [q.meta["kind"] for q in d2.questions] == ["confirm"]
        assert d2.questions[0].requested_schema["properties"]["answer"]["type"] == "boolean"
        assert "Cancel booking BK-789?" in d2.questions[0].message
        await guard.record_answer(call, d2.questions[0], Answer(action="accept", content={"answer": True}))
        d3 = await guard.decide(call)
        assert isinstance(d3, Allow), d3
        assert d3.proof["rulebase"] == guard.version
        assert "cancel_reason('BK-789',health)" in str(d3.proof["tree"])
        # facts were not fetched again
        assert state["calls"] == {"list_bookings": 1, "get_booking": 1}

async def test_failed_fact_denies_without_asking(tmp_path: Path) -> None:
    async with rig(tmp_path / "facts.db") as r:
        port, guard, state = r.port, r.guard, r.state  # noqa: F841
        d = await guard.decide(
            port.call_of("bk__cancel_booking", {"booking_id": "BK-456"})
        )  # pending, not confirmed
        assert isinstance(d, Deny)
        assert d.unmet == ["only confirmed bookings can be cancelled"]
        d = await guard.decide(port.call_of("bk__cancel_booking", {"booking_id": "BK-111"}))  # someone else's
        assert isinstance(d, Deny) and "not a booking of the current user" in d.unmet


async def test_agent_answer_refused_where_user_is_demanded(tmp_path: Path) -> None:
    async with rig(tmp_path / "facts.db") as r:
        port, guard, state = r.port, r.guard, r.state  # noqa: F841
        call = port.call_of("bk__merge_bookings", {"first": "BK-789", "second": "BK-456"})
        d = await guard.decide(call)
        assert isinstance(d, Ask) and d.questions[0].meta["predicate"] == "really_merge"
        q = d.questions[0]
        with pytest.raises(AnswerRefused):
            await guard.record_answer(
                call, q, Answer(action="accept", content={"answer": "yes"}, provenance="agent")
            )
        assert isinstance(await guard.decide(call), Ask)
        # the confirmation of a write must come from the user as well
        cancel = port.call_of("bk__cancel_booking", {"booking_id": "BK-789"})
        await guard.record_answer(
            cancel,
            (await guard.decide(cancel)).questions[0],
            Answer(action="accept", content={"answer": "other"}, provenance="agent"),
        )
        conf = (await guard.decide(cancel)).questions[-1]
        assert conf.meta["kind"] == "confirm"
        with pytest.raises(AnswerRefused):
            await guard.record_answer(
                cancel, conf, Answer(action="accept", content={"answer": True}, provenance="agent")
            )
        await guard.record_answer(
            call, q, Answer(action="accept", content={"answer": "yes"}, provenance="user")
        )
        assert isinstance(await guard.decide(call), Allow)


async def test_confirmation_bound_to_arguments_and_consumed(tmp_path: Path) -> None:
    async with rig(tmp_path / "facts.db") as r:
        port, guard, state = r.port, r.guard, r.state  # noqa: F841
        call = port.call_of("bk__cancel_booking", {"booking_id": "BK-789"})
        await guard.record_answer(
            call,
            (await guard.decide(call)).questions[0],
            Answer(action="accept", content={"answer": "health"}),
        )
        conf = (await guard.decide(call)).questions[-1]
        await guard.record_answer(call, conf, Answer(action="accept", content={"answer": True}))
        # a different argument digest is not confirmed
        other = port.call_of("bk__cancel_booking", {"booking_id": "BK-789", "note": "x"})
        assert isinstance(await guard.decide(other), Ask)
        out = await port.invoke("bk__cancel_booking", {"booking_id": "BK-789"}, session_id="s1")
        assert out.kind == "completed" and state["bookings"]["BK-789"]["status"] == "cancelled"
        # the effect invalidated booking_status, so the next decision re-fetches and sees "cancelled"
        before = state["calls"]["get_booking"]
        d = await guard.decide(call)
        assert state["calls"]["get_booking"] == before + 1
        assert isinstance(d, Deny) and "only confirmed bookings can be cancelled" in d.unmet


async def test_a_no_is_not_remembered_the_next_call_asks_again(tmp_path: Path) -> None:
    """A "no" (false, decline, cancel) ends the call that asked; nothing is stored that blocks the next one,
    so the next call asks again and a "yes" then can allow it."""
    async with rig(tmp_path / "facts.db") as r:
        port, guard, state = r.port, r.guard, r.state  # noqa: F841
        call = port.call_of("bk__cancel_booking", {"booking_id": "BK-789"})
        await guard.record_answer(
            call,
            (await guard.decide(call)).questions[0],
            Answer(action="accept", content={"answer": "health"}),
        )
        for no in (
            Answer(action="accept", content={"answer": False}),
            Answer(action="decline"),
            Answer(action="cancel"),
        ):
            conf = (await guard.decide(call)).questions[-1]
            await guard.record_answer(call, conf, no)
            d = await guard.decide(call)
            assert isinstance(d, Ask) and d.questions[-1].meta["kind"] == "confirm", d
            assert d.questions[-1].key == conf.key
            assert not [f for f in await guard.store.valid(call.session_id) if f.predicate == "$confirmed"]
        # a string is not an approval, and a strict check refuses it rather than reading it as "yes"
        with pytest.raises(AnswerRefused):
            await guard.record_answer(
                call, d.questions[-1], Answer(action="accept", content={"answer": "true"})
            )
        await guard.record_answer(call, d.questions[-1], Answer(action="accept", content={"answer": True}))
        assert isinstance(await guard.decide(call), Allow)


async def test_unguarded_tools_go_to_the_default_guard(tmp_path: Path) -> None:
    async with rig(tmp_path / "facts.db") as r:
        port, guard, state = r.port, r.guard, r.state  # noqa: F841
        d = await guard.decide(port.call_of("bk__get_booking", {"booking_id": "BK-789"}))
        assert isinstance(d, Allow) and "read-only" in d.reason


async def test_strict_symbolic_mode_refuses_made_up_identifiers(tmp_path: Path) -> None:
    from tests.policy.policy_rig import BOOKINGS_PL

    strict = tmp_path / "strict.pl"
    strict.write_text(BOOKINGS_PL.read_text() + "\noption(strict_symbolic).\n")
    async with rig(tmp_path / "facts.db", files=[strict]) as r:
        d = await r.guard.decide(r.port.call_of("bk__cancel_booking", {"booking_id": "BK-789"}))
        assert (
            isinstance(d, Deny)
            and "strict symbolic mode" in d.reason
            and "booking_id='BK-789'" in d.reason[-40:]
        )
        # the client reads its bookings: the result is observed, BK-789 becomes an established value
        out = await r.port.invoke("bk__list_bookings", {"user_id": "u_123"}, session_id="s1")
        assert out.kind == "completed"
        d = await r.guard.decide(r.port.call_of("bk__cancel_booking", {"booking_id": "BK-789"}))
        assert isinstance(d, Ask)
        d = await r.guard.decide(r.port.call_of("bk__cancel_booking", {"booking_id": "BK-000"}))
        assert isinstance(d, Deny) and "strict symbolic mode" in d.reason


async def test_confirmations_expire_and_declines_are_not_remembered(tmp_path: Path) -> None:
    async with rig(tmp_path / "facts.db") as r:
        r.guard.settings = r.guard.settings.model_copy(update={"confirm_ttl": 1.0})
        call = r.port.call_of("bk__cancel_booking", {"booking_id": "BK-789"})
        (q,) = (await r.guard.decide(call)).questions  # the reason first; the confirmation once it is known
        await r.guard.record_answer(call, q, Answer(action="accept", content={"answer": "health"}))
        (conf,) = (await r.guard.decide(call)).questions
        assert conf.meta["kind"] == "confirm"
        await r.guard.record_answer(call, conf, Answer(action="accept", content={"answer": True}))
        assert isinstance(await r.guard.decide(call), Allow)
        await asyncio.sleep(1.2)  # let the 1 s confirmation pass
        d = await r.guard.decide(call)
        assert isinstance(d, Ask) and [x.meta["kind"] for x in d.questions] == ["confirm"]
        await r.guard.record_answer(call, d.questions[0], Answer(action="decline"))
        d = await r.guard.decide(call)  # the decline is not remembered: asked again
        assert isinstance(d, Ask) and [x.meta["kind"] for x in d.questions] == ["confirm"]
