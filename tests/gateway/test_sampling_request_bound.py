"""An upstream's sampling request is bounded in what it asks the client's model to read
(``gateway/sampling_bounds.py``): one of 10 MB, or of 10,000 messages, was relayed whole. Past either bound
it is relayed to no one: a handshake-era upstream's push is refused (audited, ``push_refused``), a 2026-era
upstream's input request ends the call saying why. Real gateway, the hostile upstreams over stdio, the real
``mcp`` client.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest
from mcp import Client
from mcp.types import CreateMessageResult, TextContent

from sentinel_mcp.app.runtime import running_gateway
from sentinel_mcp.gateway.sampling_bounds import MAX_SAMPLING_BYTES, MAX_SAMPLING_MESSAGES

from .helpers import make_config

pytestmark = pytest.mark.timeout(120)
HERE = Path(__file__).parent
SESSION = "sentinel/session"
# (messages, characters each): 10 MB in one message, 10,000 messages; and one within both bounds
HUGE = {"ten_megabytes": (1, 10_000_000), "ten_thousand_messages": (10_000, 10)}
FITS = (MAX_SAMPLING_MESSAGES, MAX_SAMPLING_BYTES // MAX_SAMPLING_MESSAGES // 2)


def text(r: Any) -> str:
    return " ".join(getattr(b, "text", "") for b in r.content) if getattr(r, "content", None) else repr(r)


def config(data_dir: Path, upstream: str) -> Any:
    script, era = ("hostile_asker_upstream.py", "legacy") if upstream == "legacy" else (
        "chain_asker_upstream.py", "modern")
    server = {"command": sys.executable, "args": [str(HERE / script)], "protocol": era}
    return make_config(data_dir, servers={"ak": server}, policy={"allow": ["ak__*"]}, builtins=[])


async def sampled(rt: Any, upstream: str, messages: int, chars: int, seen: list[int]) -> Any:
    """The upstream's call asking the client's model to read ``messages`` of ``chars`` characters: its
    result (``seen``: how many messages each request the client got held)."""

    async def on_sample(ctx: Any, params: Any) -> CreateMessageResult:
        seen.append(len(params.messages))
        return CreateMessageResult(role="assistant", content=TextContent(type="text", text="ok"), model="m")

    async with Client(rt.front.server, mode="legacy", sampling_callback=on_sample) as c:
        if upstream == "legacy":
            return await c.call_tool("ak__sample_huge", {"messages": messages, "chars": chars})
        # a 2026-era upstream's input request, put to a handshake-era client (one round: then it answers)
        args = {"per_round": 1, "kind": "sampling", "messages": messages, "chars": chars}
        return await c.call_tool("ak__ask_chain", args)


@pytest.mark.parametrize("upstream", ["legacy", "modern"])
@pytest.mark.parametrize("huge", sorted(HUGE))
async def test_a_huge_sampling_request_is_relayed_to_no_one(data_dir: Path, upstream: str, huge: str) -> None:
    seen: list[int] = []
    async with running_gateway(config(data_dir, upstream)) as rt:
        r = await sampled(rt, upstream, *HUGE[huge], seen)
        rows = await rt.audit.read(tail=10)
    assert seen == [], seen
    said = text(r)
    assert "at most" in said and "relayed" in said, said
    if upstream == "legacy":  # the upstream was refused, and the refusal is in the audit log
        # the upstream's own text quotes Sentinel's refusal after a colon: headed as the server's words
        header, _, quoted = said.partition("\n")
        assert "it is not Sentinel's" in header, said
        quoted = quoted.lstrip()
        assert quoted.startswith("refused: ") and "sampling request cannot be relayed" in quoted, said
        refusals = [row for row in rows if row.get("outcome") == "push_refused"]
        assert refusals and "at most" in str(refusals[-1]), rows
    else:
        assert r.is_error and "sampling request is not relayed" in said, said


async def test_a_sampling_request_within_the_bounds_is_relayed(data_dir: Path) -> None:
    seen: list[int] = []
    async with running_gateway(config(data_dir, "legacy")) as rt:
        r = await sampled(rt, "legacy", *FITS, seen)
    assert seen == [MAX_SAMPLING_MESSAGES] and text(r) == "answered: ok", (seen, text(r))
