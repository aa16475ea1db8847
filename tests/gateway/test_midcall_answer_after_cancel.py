"""An answer to an upstream's question that comes after the call was cancelled reaches the upstream as a
refusal, never as the user's accept: the call has ended, and nothing decided lets it act any more
(``midcall_answers.AcceptGate.close``).

The question was relayed while the call ran; the client cancelled the call, then answered the question
still shown (an accept). An upstream that does not stop on the cancellation (hostile, or slow to notice)
got the accept and acted on it, for a call whose audit row says "cancelled". Real gateway, a hostile
upstream over stdio (its question shielded from the cancellation), the real ``mcp`` client.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

import pytest
from mcp import Client
from mcp.types import ElicitResult

from sentinel_mcp.app.runtime import running_gateway

from .helpers import make_config

pytestmark = pytest.mark.timeout(120)
ASKER = str(Path(__file__).with_name("hostile_asker_upstream.py"))


@pytest.mark.parametrize("cancel", [True, False])
async def test_an_accept_after_the_call_was_cancelled_is_refused(data_dir: Path, cancel: bool) -> None:
    asker = {"command": sys.executable, "args": [ASKER], "protocol": "legacy"}
    cfg = make_config(data_dir, servers={"ak": asker}, policy={"allow": ["ak__*"]}, builtins=[])
    marker = data_dir / "marker.txt"
    async with running_gateway(cfg) as rt:
        calling: list[asyncio.Task[Any]] = []

        async def cancelled() -> bool:
            rows = await rt.audit.read(tail=5)
            return any(r.get("tool") == "ak__ask_shielded" and r.get("outcome") == "cancelled" for r in rows)

        async def on_elicit(ctx: Any, params: Any) -> ElicitResult:
            if cancel:
                calling[0].cancel()
                for _ in range(400):  # the call's row says it was cancelled: the call has ended
                    if await cancelled():
                        break
                    await asyncio.sleep(0.02)
                assert await cancelled()
            return ElicitResult(action="accept", content={"word": "blue"})

        async with Client(rt.front.server, mode="legacy", elicitation_callback=on_elicit) as c:
            calling.append(asyncio.ensure_future(c.call_tool("ak__ask_shielded", {"path": str(marker)})))
            try:
                await calling[0]
            except asyncio.CancelledError:
                assert cancel
            for _ in range(400):  # the upstream wrote what it got
                if marker.exists() and marker.read_text().endswith("\n"):
                    break
                await asyncio.sleep(0.02)
    got = marker.read_text()
    if cancel:
        assert got.startswith("refused:") and "has ended" in got, got
    else:
        assert got == "blue\n"
