"""A yes counts only for the text the user was shown (docs/policy-engine.md: "What the user is shown is what
will happen"). A hostile upstream changes what a confirmation shows between the question and its answer (the
cached facts expire meanwhile, as after their time to live): the call is asked again with the new text, in
both protocol eras, and the audit says why; a pushed answer that comes later than a question stays open
(``policy.confirm_ttl``) is refused, as a 2026-era state that old is."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
from mcp import Client
from mcp.types import ElicitResult
from tests.gateway.helpers import make_config
from tests.policy.policy_rig import BOOKINGS_PL, rig
from tests.support.carried_session import Carried

from sentinel_mcp.app.runtime import running_gateway
from sentinel_mcp.core.decision import Allow, Answer, Ask, Question
from sentinel_mcp.gateway.audit import read_audit
from sentinel_mcp.paths import RULEBASES_DIR
from sentinel_mcp.policy.guard import CHANGED_TEXT
from sentinel_mcp.policy.questions import AnswerRefused

pytestmark = pytest.mark.timeout(90)
OFFER_SERVER = str(Path(__file__).with_name("offer_server.py"))
SHOP_PL = """
binding(offer_price(I, P), tool('sh__get_offer', [item = I]), extract([P = '/price']), [ttl(60)]).
binding(offer_date(I, D), tool('sh__get_offer', [item = I]), extract([D = '/first_flight']), [ttl(60)]).
guard('sh__buy', [item = I],
      ( offer_price(I, P), offer_date(I, D), confirmed('Buy ~w? First flight ~w. Price: $~w', [I, D, P]) )).
"""
FIRST = {"price": 1395, "first_flight": "2024-05-27"}
LATER = {"price": 10, "first_flight": "2024-06-30"}
YES = Answer(action="accept", content={"answer": True})


# ---------------------------------------------------------------- the guard alone (the bookings server)


async def test_a_yes_recorded_for_one_text_does_not_allow_another(tmp_path: Path) -> None:
    rules = tmp_path / "bookings.pl"
    shown = "booking_cabin(B, C), confirmed('Cancel booking ~w (~w)?', [B, C])"
    rules.write_text(BOOKINGS_PL.read_text().replace("confirmed('Cancel booking ~w?', [B])", shown))
    async with rig(tmp_path / "facts.db", files=[rules]) as r:
        call = r.port.call_of("bk__cancel_booking", {"booking_id": "BK-789"})
        (reason,) = (await r.guard.decide(call)).questions
        await r.guard.record_answer(call, reason, Answer(action="accept", content={"answer": "health"}))
        (shown,) = (await r.guard.decide(call)).questions
        assert "(economy)" in shown.message and shown.meta["kind"] == "confirm"
        await r.guard.record_answer(call, shown, YES)
        # the upstream changes, and the cached facts expire (as after their time to live)
        r.state["bookings"]["BK-789"]["cabin"] = "business"
        rb = r.guard.rulebases.current
        await r.guard.knowledge.invalidate(call.session_id, "booking_cabin(_, _)", rb)
        d = await r.guard.decide(call)
        assert isinstance(d, Ask), d
        (again,) = d.questions
        assert "(business)" in again.message and again.key != shown.key
        assert d.reason.startswith(CHANGED_TEXT), d.reason  # the audit says why it asks again
        # the yes to the old text, given again, is still no yes to the new one
        await r.guard.record_answer(call, shown, YES)
        assert isinstance(await r.guard.decide(call), Ask)
        await r.guard.record_answer(call, again, YES)
        assert isinstance(await r.guard.decide(call), Allow)
        # one yes, one call: using it takes every yes of this call (the old text's too)
        assert not [f for f in await r.guard.store.valid(call.session_id) if f.predicate == "$confirmed"]
        assert isinstance(await r.guard.decide(call), Ask)
        # the text reads as it did when the user said yes to it: that yes counts
        await r.guard.record_answer(call, again, YES)
        r.state["bookings"]["BK-789"]["cabin"] = "economy"
        await r.guard.knowledge.invalidate(call.session_id, "booking_cabin(_, _)", rb)
        r.state["bookings"]["BK-789"]["cabin"] = "business"
        await r.guard.knowledge.invalidate(call.session_id, "booking_cabin(_, _)", rb)
        assert isinstance(await r.guard.decide(call), Allow)


async def test_a_confirmation_that_does_not_name_its_text_is_refused(tmp_path: Path) -> None:
    async with rig(tmp_path / "facts.db") as r:
        call = r.port.call_of("bk__cancel_booking", {"booking_id": "BK-789"})
        (reason,) = (await r.guard.decide(call)).questions
        await r.guard.record_answer(call, reason, Answer(action="accept", content={"answer": "health"}))
        (shown,) = (await r.guard.decide(call)).questions
        for bad in (None, "", "x" * 64, shown.meta["shown"].upper(), shown.meta["shown"][:16], 7):
            meta = {**shown.meta, "shown": bad}
            if bad is None:
                del meta["shown"]
            forged = Question(key=shown.key, message=shown.message, requested_schema=shown.requested_schema,
                              meta=meta)
            try:
                await r.guard.record_answer(call, forged, YES)
            except AnswerRefused:
                continue
            assert isinstance(await r.guard.decide(call), Ask), bad  # stored, but for no text ever shown


# ---------------------------------------------------------------- through the gateway, both eras


def shop_config(data_dir: Path, **policy: Any) -> Any:
    data_dir.mkdir(parents=True, exist_ok=True)
    rules = data_dir / "shop.pl"
    rules.write_text(SHOP_PL)
    (data_dir / "offer.json").write_text(json.dumps(FIRST))
    env = {"OFFER_FILE": str(data_dir / "offer.json"), "BOUGHT_FILE": str(data_dir / "bought.txt")}
    return make_config(
        data_dir, servers={"sh": {"command": sys.executable, "args": [OFFER_SERVER], "env": env}},
        rulebases=[str(RULEBASES_DIR / "default.pl"), str(rules)], policy=policy,
    )


async def change_offer(rt: Any, data_dir: Path) -> None:
    """The hostile upstream's offer changes, and every conversation's cached offer expires."""
    (data_dir / "offer.json").write_text(json.dumps(LATER))
    guard = rt.gateway.guard
    rb = guard.rulebases.current
    for session in list(guard.knowledge._loaded):
        await guard.knowledge.invalidate(session, "offer_price(_, _)", rb)
        await guard.knowledge.invalidate(session, "offer_date(_, _)", rb)


def bought(data_dir: Path) -> list[str]:
    path = data_dir / "bought.txt"
    return path.read_text().split() if path.exists() else []


async def asked_again_rows(rt: Any) -> list[dict[str, Any]]:
    await rt.audit.flush()
    return [r for r in await read_audit(rt.config.store_path, tail=200)
            if r["decision"] == "ask" and "out of date" in (r.get("reason") or "")]


@pytest.mark.parametrize("second", ["yes", "no"])
async def test_pushed_confirmation_answered_after_the_text_changed_is_asked_again(
    data_dir: Path, second: str
) -> None:
    shown: list[str] = []
    async with running_gateway(shop_config(data_dir)) as rt:

        async def person(ctx: Any, params: Any) -> ElicitResult:
            shown.append(params.message)
            if len(shown) == 1:  # while the person reads it, the upstream changes
                await change_offer(rt, data_dir)
            return ElicitResult(action="accept", content={"answer": len(shown) == 1 or second == "yes"})

        async with Client(rt.front.server, mode="legacy", elicitation_callback=person) as client:
            r = await client.call_tool("sh__buy", {"item": "HKEG34"})
        assert len(shown) == 2, shown
        assert "$1395" in shown[0] and "2024-05-27" in shown[0]
        assert "$10" in shown[1] and "2024-06-30" in shown[1]  # the person saw what will happen
        if second == "yes":
            assert not r.is_error and bought(data_dir) == ["HKEG34"]
        else:
            assert r.is_error and bought(data_dir) == []
        assert await asked_again_rows(rt)


async def test_returned_confirmation_answered_after_the_text_changed_is_asked_again(data_dir: Path) -> None:
    args = {"item": "HKEG34"}
    async with running_gateway(shop_config(data_dir)) as rt:
        async with Client(rt.front.server, mode="auto", elicitation_callback=_never) as client:
            c = Carried(client.session)
            first = await c.call_tool("sh__buy", args, allow_input_required=True)
            ((key, asked),) = first.input_requests.items()
            assert "$1395" in asked.params.message
            await change_offer(rt, data_dir)
            yes = {key: ElicitResult(action="accept", content={"answer": True})}
            again = await c.call_tool("sh__buy", args, allow_input_required=True, input_responses=yes,
                                      request_state=first.request_state)
            assert type(again).__name__ == "InputRequiredResult", again
            ((key2, asked2),) = again.input_requests.items()
            assert key2 != key and "$10" in asked2.params.message and "2024-06-30" in asked2.params.message
            assert bought(data_dir) == []
            assert await asked_again_rows(rt)
            # the old answer with the new state: an answer to a question that was not asked
            stale = await c.call_tool("sh__buy", args, allow_input_required=True, input_responses=yes,
                                      request_state=again.request_state)
            assert stale.is_error and "not asked" in stale.content[0].text and bought(data_dir) == []
            third = await c.call_tool("sh__buy", args, allow_input_required=True)
            ((key3, _),) = third.input_requests.items()
            done = await c.call_tool(
                "sh__buy", args, allow_input_required=True,
                input_responses={key3: ElicitResult(action="accept", content={"answer": True})},
                request_state=third.request_state,
            )
            assert type(done).__name__ == "CallToolResult" and not done.is_error, done
            assert bought(data_dir) == ["HKEG34"]


async def test_a_pushed_answer_later_than_confirm_ttl_is_refused(data_dir: Path) -> None:
    """As a 2026-era state past ``confirm_ttl`` is: the person answered, but too late to count."""
    import asyncio

    async with running_gateway(shop_config(data_dir, confirm_ttl=0.5)) as rt:

        async def slow_person(ctx: Any, params: Any) -> ElicitResult:
            await asyncio.sleep(0.7)  # longer than the question stays open
            return ElicitResult(action="accept", content={"answer": True})

        async with Client(rt.front.server, mode="legacy", elicitation_callback=slow_person) as client:
            r = await client.call_tool("sh__buy", {"item": "HKEG34"})
        assert r.is_error and "later than a question stays open" in r.content[0].text, r
        assert bought(data_dir) == []
        await rt.audit.flush()
        rows = await read_audit(rt.config.store_path, tail=50)
        assert any(x["outcome"] == "answer_refused" for x in rows)


async def _never(ctx: Any, params: Any) -> ElicitResult:
    raise AssertionError("a 2026-era call is not pushed questions")
