"""A 2026-era client that declared no elicitation (only sampling, say: an LLM host that shows its user no
form) is shown no upstream's question and answers none of them: its answer would be marked the user's. The
question goes where it goes for any caller that cannot be asked (the console inbox, or refused), whether the
upstream asks by push (a held call) or by an input request, and a request state issued to a client that
could elicit counts for no connection of the conversation that cannot. Through the real gateway and the real
mcp Client; the in-process probe reports who answered (``answer_probe.py``)."""

from __future__ import annotations

from typing import Any

import pytest
from mcp import Client
from mcp.types import CreateMessageResult, ElicitResult, TextContent

from sentinel_mcp.app.runtime import running_gateway
from sentinel_mcp.gateway.audit import read_audit
from tests.gateway.helpers import make_config
from tests.gateway.test_answer_provenance import Person, mount_probe

pytestmark = pytest.mark.timeout(90)
ERAS = ["legacy", "modern"]  # the probe asks by push (the call is held) or by an input request
YES = ElicitResult(action="accept", content={"ok": True})


async def sample(ctx: Any, params: Any) -> CreateMessageResult:
    return CreateMessageResult(role="assistant", content=TextContent(type="text", text="x"), model="m")


async def yes(ctx: Any, params: Any) -> ElicitResult:
    return YES


def is_input_required(r: Any) -> bool:
    return type(r).__name__ == "InputRequiredResult"


@pytest.mark.parametrize("era", ERAS)
async def test_a_client_without_elicitation_is_shown_no_upstream_question(data_dir, era):
    async with running_gateway(make_config(data_dir, servers={})) as rt:
        await mount_probe(rt, era)
        async with Client(rt.front.server, mode="auto", sampling_callback=sample) as c:
            r = await c.session.call_tool("pr__ask", {}, allow_input_required=True)
            assert not is_input_required(r), r.input_requests
            assert r.is_error and "elicitation" in r.content[0].text, r
            # with the console running, the person is asked there instead, and the answer is theirs
            person = Person()
            rt.gateway.person_inbox = person
            r = await c.session.call_tool("pr__ask", {}, allow_input_required=True)
            assert not is_input_required(r) and not r.is_error, r
            assert r.structured_content["answered_by"] == "user" and len(person.questions) == 1


@pytest.mark.parametrize("era", ERAS)
async def test_a_state_issued_to_an_eliciting_client_is_answered_by_no_other_connection(data_dir, era):
    async with running_gateway(make_config(data_dir, servers={})) as rt:
        await mount_probe(rt, era)
        async with (
            Client(rt.front.server, mode="auto", elicitation_callback=yes) as asked,
            Client(rt.front.server, mode="auto", sampling_callback=sample) as other,
        ):
            first = await asked.session.call_tool("pr__ask", {}, allow_input_required=True)
            assert is_input_required(first), first
            [key] = first.input_requests
            # the same principal's other connection, in the same conversation, declaring no elicitation
            r = await other.session.call_tool(
                "pr__ask", {}, allow_input_required=True, request_state=first.request_state,
                input_responses={key: YES}, meta={"sentinel/session": first.meta["sentinel/session"]},
            )
            told = r.content[0].text
            assert r.is_error and "not accepted" in told and "elicitation" in told, r
            assert not (r.structured_content or {}).get("heard")
        await rt.audit.flush()
        rows = await read_audit(rt.config.store_path, tail=100)
        assert [x for x in rows if x["outcome"] == "answer_refused"]
