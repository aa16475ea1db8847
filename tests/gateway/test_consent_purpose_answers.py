"""A consent is the person's yes to the purpose they were shown: an answer given to "(purpose: weather)" never
grants another purpose the client states when it calls again (the question's key names what it shows, as a
confirmation's does). Through the real gateway and the real mcp Client: the console inbox's answer to a client
that cannot elicit, and a 2026-era client's own answer returned with its ``requestState``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from mcp import Client
from mcp.types import ElicitResult
from starlette.datastructures import FormData

from sentinel_mcp.app.runtime import running_gateway
from sentinel_mcp.console.answer_form import read_answer
from sentinel_mcp.console.asking import InboxAsking
from sentinel_mcp.console.inbox import Inbox

from .helpers import make_config

pytestmark = pytest.mark.timeout(120)
SHOWN, OTHER = "show the weather", "sell to advertisers"
SAID = {SHOWN: "\u201cshow the weather\u201d", OTHER: "\u201csell to advertisers\u201d"}  # as quoted


def purpose(text: str) -> dict[str, Any]:
    return {"sentinel/purpose": text}


def granted(rt: Any) -> list[tuple[str, str]]:
    return [(c.kind, c.purpose) for c in rt.gateway.consent_gate.book.list("owner")]


async def test_the_consoles_yes_to_one_purpose_grants_no_other(data_dir: Path) -> None:
    async with running_gateway(make_config(data_dir, fork=True, personal={"tb__echo": "messages"})) as rt:
        inbox = Inbox(hold_seconds=0)  # nobody watching: the client is blocked, the answer waits for a retry
        rt.front.inbox = InboxAsking(inbox, rt.gateway)
        async with Client(rt.front.server, mode="legacy") as c:  # declares no elicitation
            first = await c.call_tool("tb__echo", {"text": "hi"}, meta=purpose(SHOWN))
            assert first.is_error and "waiting for the user" in first.content[0].text
            [item] = inbox.open_items("owner")
            assert f"(purpose: {SAID[SHOWN]})" in item.questions[0].message
            # the person allows it and ticks "remember", in the console, for the purpose shown
            given = {}
            for i, q in enumerate(item.questions):
                answer, problem = read_answer(i, q, FormData([(f"q{i}.remember", "on")]), approve=True)
                assert answer is not None, problem
                given[q.key] = answer
            assert await inbox.give(item, given)
            # the client calls again, same tool and arguments, stating another purpose
            other = await c.call_tool("tb__echo", {"text": "hi"}, meta=purpose(OTHER))
            assert other.is_error and f"(purpose: {SAID[OTHER]})" in other.content[0].text, other.content
            assert granted(rt) == []  # nothing granted for a purpose nobody was shown
            [again] = inbox.open_items("owner")
            assert f"(purpose: {SAID[OTHER]})" in again.questions[0].message
            # the purpose the person allowed is still theirs to allow
            remember = FormData([("q0.remember", "on")])
            assert await inbox.give(again, {q.key: read_answer(0, q, remember, True)[0]
                                            for q in again.questions})
            ok = await c.call_tool("tb__echo", {"text": "hi"}, meta=purpose(OTHER))
            assert not ok.is_error and granted(rt) == [("messages", OTHER)]


async def test_a_2026_answer_to_one_purpose_grants_no_other(data_dir: Path) -> None:
    async def allow_and_remember(ctx: Any, params: Any) -> ElicitResult:
        return ElicitResult(action="accept", content={"allow": True, "remember": True})

    async with running_gateway(make_config(data_dir, fork=True, personal={"tb__echo": "messages"})) as rt:
        async with Client(rt.front.server, mode="auto", elicitation_callback=allow_and_remember) as c:
            first = await c.session.call_tool("tb__echo", {"text": "hi"}, allow_input_required=True,
                                              meta=purpose(SHOWN))
            assert type(first).__name__ == "InputRequiredResult", first
            [(key, request)] = first.input_requests.items()
            assert f"(purpose: {SAID[SHOWN]})" in request.params.message
            yes = ElicitResult(action="accept", content={"allow": True, "remember": True})
            swapped = await c.session.call_tool(
                "tb__echo", {"text": "hi"}, allow_input_required=True, input_responses={key: yes},
                request_state=first.request_state, meta={**purpose(OTHER), **(first.meta or {})},
            )
            # asked again, as the question reads now; nothing granted
            assert type(swapped).__name__ == "InputRequiredResult", swapped
            [(_, asked)] = swapped.input_requests.items()
            assert f"(purpose: {SAID[OTHER]})" in asked.params.message
            assert granted(rt) == []
            same = await c.session.call_tool("tb__echo", {"text": "hi"}, allow_input_required=True,
                                             meta=purpose(SHOWN))
            done = await c.session.call_tool(
                "tb__echo", {"text": "hi"}, allow_input_required=True,
                input_responses={next(iter(same.input_requests)): yes},
                request_state=same.request_state, meta={**purpose(SHOWN), **(same.meta or {})},
            )
            assert not done.is_error, done
            assert granted(rt) == [("messages", SHOWN)]


def test_a_one_call_consent_holds_for_the_purpose_it_was_given_for(tmp_path: Path) -> None:
    """"Allow" without "remember" waits (up to 300 s) for its call: when that call is asked something more
    first, its next round may state another purpose, which the one-call consent must not cover."""
    from sentinel_mcp.core.decision import Allow, Answer, Ask, ToolCall
    from sentinel_mcp.gateway.consent_gate import ConsentGate
    from sentinel_mcp.gateway.consents import ConsentBook

    gate = ConsentGate(ConsentBook(tmp_path / "consents.db"), {"tb__echo": "messages"})

    def call(why: str) -> ToolCall:
        return ToolCall(name="tb__echo", server="tb", tool="echo", arguments={"text": "hi"},
                        principal="alice", purpose=why, session_id="alice/conv-1")

    asked = gate.asks(call(SHOWN), None)
    assert isinstance(asked, Ask)
    [q] = asked.questions
    gate.record(call(SHOWN), q, Answer(action="accept", content={"allow": True}, provenance="user"))
    assert gate.asks(call(SHOWN), None) is None  # the call it was given for holds it
    again = gate.asks(call(OTHER), None)  # the same call, stating another purpose, is asked
    assert isinstance(again, Ask) and f"(purpose: {SAID[OTHER]})" in again.questions[0].message
    assert isinstance(gate._consented(call(SHOWN), [("messages", False)], Allow()), Allow)
