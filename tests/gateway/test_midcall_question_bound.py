"""An upstream's questions during one call are bounded (``midcall_answers.MAX_QUESTIONS_PER_CALL``): a
handshake-era upstream asking 1,000 questions one after another had every one put to the user, pushed to a
handshake-era client or held round after round for a 2026-era one. Past the bound the upstream is refused
without the user being asked, and the refusal is in the audit log. Real gateway, the asking upstream over
stdio, the real ``mcp`` client.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest
from mcp import Client
from mcp.types import CreateMessageResult, ElicitResult, ListRootsResult, Root, TextContent

from sentinel_mcp.app.runtime import running_gateway
from sentinel_mcp.gateway.midcall_answers import MAX_QUESTIONS_PER_CALL

from .helpers import make_config

pytestmark = pytest.mark.timeout(120)
ASKER = str(Path(__file__).with_name("hostile_asker_upstream.py"))
SESSION = "sentinel/session"
TIMES = 1000


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_an_upstream_asking_a_thousand_questions_in_one_call_is_stopped(
    data_dir: Path, mode: str
) -> None:
    asker = {"command": sys.executable, "args": [ASKER], "protocol": "legacy"}
    cfg = make_config(data_dir, servers={"ak": asker}, policy={"allow": ["ak__*"]}, builtins=[])
    asked: list[str] = []

    async def on_elicit(ctx: Any, params: Any) -> ElicitResult:
        asked.append(params.message)
        return ElicitResult(action="accept", content={"word": "x"})

    args = {"times": TIMES}
    async with running_gateway(cfg) as rt:
        async with Client(rt.front.server, mode=mode, elicitation_callback=on_elicit) as c:
            if mode == "legacy":
                r = await c.call_tool("ak__ask_many", args)
            else:  # each question held for the client's next round
                r = await c.session.call_tool("ak__ask_many", args, allow_input_required=True)
                for _round in range(TIMES + 1):
                    if type(r).__name__ != "InputRequiredResult":
                        break
                    key, request = next(iter(r.input_requests.items()))
                    asked.append(request.params.message)
                    session = (r.meta or {}).get(SESSION)
                    r = await c.session.call_tool(
                        "ak__ask_many", args, allow_input_required=True, meta={SESSION: session},
                        input_responses={key: ElicitResult(action="accept", content={"word": "x"})},
                        request_state=r.request_state,
                    )
        rows = await rt.audit.read(tail=10)
    assert len(asked) == MAX_QUESTIONS_PER_CALL, len(asked)
    said = " ".join(getattr(b, "text", "") for b in r.content)
    assert f"accepted {MAX_QUESTIONS_PER_CALL}; refused at {MAX_QUESTIONS_PER_CALL + 1}" in said, said
    refusals = [row for row in rows if row.get("outcome") == "push_refused"]
    assert refusals and "questions already" in str(refusals[-1]), rows


@pytest.mark.parametrize("kind", ["roots", "sampling"])
async def test_an_upstream_asking_roots_or_samples_a_thousand_times_in_one_call_is_stopped(
    data_dir: Path, kind: str
) -> None:
    """Sampling and roots requests are bounded as questions are (each kind apart): 1,000 roots requests in
    one call were each put to the client."""
    asker = {"command": sys.executable, "args": [ASKER], "protocol": "legacy"}
    cfg = make_config(data_dir, servers={"ak": asker}, policy={"allow": ["ak__*"]}, builtins=[])
    asked: list[str] = []

    async def on_roots(ctx: Any) -> ListRootsResult:
        asked.append("roots")
        return ListRootsResult(roots=[Root(uri="file:///home/user/project")])

    async def on_sample(ctx: Any, params: Any) -> CreateMessageResult:
        asked.append("sample")
        return CreateMessageResult(role="assistant", content=TextContent(type="text", text="ok"), model="m")

    async with running_gateway(cfg) as rt:
        async with Client(rt.front.server, mode="legacy", list_roots_callback=on_roots,
                          sampling_callback=on_sample) as c:
            r = await c.call_tool(f"ak__{kind}_many", {"times": TIMES})
        rows = await rt.audit.read(tail=10)
    assert len(asked) == MAX_QUESTIONS_PER_CALL, len(asked)
    said = " ".join(getattr(b, "text", "") for b in r.content)
    assert f"got {MAX_QUESTIONS_PER_CALL}; refused at {MAX_QUESTIONS_PER_CALL + 1}" in said, said
    refusals = [row for row in rows if row.get("outcome") == "push_refused"]
    assert refusals and f"{kind} requests already" in str(refusals[-1]), rows
