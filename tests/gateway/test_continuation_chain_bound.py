"""A 2026-era upstream's questions to a 2026-era client are bounded over the call's whole chain of
continuations, not only one result at a time (``gateway/chain_questions.py``).

Each input-required result was capped at ``MAX_QUESTIONS_PER_CALL``, but the client answers it in a new
request continuing the call, and the upstream asked again there: 10 + 10 + ... for 100 rounds, every one
shown to the person. The running count travels in Sentinel's sealed state (the client cannot lower it), which
is used once: an older state replayed is refused, never a fresh count. Real gateway, the asking upstream
over stdio (2026 era), the real ``mcp`` client.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from mcp import Client
from mcp.types import CreateMessageResult, ElicitResult, ListRootsResult, Root, TextContent

from sentinel_mcp.app.runtime import running_gateway
from sentinel_mcp.gateway.midcall_answers import MAX_QUESTIONS_PER_CALL
from tests.support.forked_upstreams import forked_spec

from .helpers import make_config

pytestmark = pytest.mark.timeout(120)
ASKER = str(Path(__file__).with_name("chain_asker_upstream.py"))
SESSION = "sentinel/session"
PER_ROUND = 10
ANSWERS = {
    "elicitation": ElicitResult(action="accept", content={"word": "x"}),
    "sampling": CreateMessageResult(role="assistant", content=TextContent(type="text", text="x"), model="m"),
    "roots": ListRootsResult(roots=[Root(uri="file:///home/user/project")]),
}


def text(r: Any) -> str:
    return " ".join(getattr(b, "text", "") for b in r.content) if getattr(r, "content", None) else repr(r)


async def never(*_args: Any) -> Any:
    raise AssertionError("pushed to a 2026-era client")


def config(data_dir: Path) -> Any:
    asker = {**forked_spec(ASKER), "protocol": "modern"}
    return make_config(data_dir, servers={"ch": asker}, policy={"allow": ["ch__*"]}, builtins=[])


def client(rt: Any) -> Client:
    return Client(rt.front.server, mode="auto", elicitation_callback=never, sampling_callback=never,
                  list_roots_callback=never)


async def answer(c: Client, r: Any, args: dict[str, Any], kind: str, state: str | None = None) -> Any:
    return await c.session.call_tool(
        "ch__ask_chain", args, allow_input_required=True, meta={SESSION: (r.meta or {}).get(SESSION)},
        input_responses={key: ANSWERS[kind] for key in r.input_requests},
        request_state=state or r.request_state,
    )


@pytest.mark.parametrize("kind", sorted(ANSWERS))
async def test_a_chain_of_continuations_puts_at_most_the_bound_to_the_client(
    data_dir: Path, kind: str
) -> None:
    args = {"per_round": PER_ROUND, "kind": kind}
    shown = 0
    async with running_gateway(config(data_dir)) as rt:
        async with client(rt) as c:
            r = await c.session.call_tool("ch__ask_chain", args, allow_input_required=True)
            for _round in range(100):
                if type(r).__name__ != "InputRequiredResult":
                    break
                shown += len(r.input_requests)
                r = await answer(c, r, args, kind)
        rows = await rt.audit.read(tail=5)
    assert shown <= MAX_QUESTIONS_PER_CALL, shown
    assert r.is_error and f"{kind} requests over this call's continuations" in text(r), text(r)
    assert rows[-1]["outcome"] == "tool_error" and "continuations" in str(rows[-1]["error"]), rows[-1]


async def test_an_older_continuation_state_replayed_is_refused(data_dir: Path) -> None:
    """The count cannot be reset by answering with the state of an earlier round: each state is used once."""
    args = {"per_round": PER_ROUND, "kind": "elicitation"}
    async with running_gateway(config(data_dir)) as rt:
        async with client(rt) as c:
            first = await c.session.call_tool("ch__ask_chain", args, allow_input_required=True)
            second = await answer(c, first, args, "elicitation")
            assert second.is_error, text(second)  # 20 questions over the chain: past the bound
            replayed = await answer(c, first, args, "elicitation")
    assert replayed.is_error and "already used" in text(replayed), text(replayed)
