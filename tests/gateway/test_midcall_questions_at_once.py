"""A 2026-era upstream's input-required result holding more questions than one call may put to its user
(``midcall_answers.MAX_QUESTIONS_PER_CALL``) is relayed to no one: the call ends saying why. One result of
200 questions was relayed whole to a 2026-era client, and put to a handshake-era client one by one. Real
gateway, the asking upstream over stdio (2026 era), the real ``mcp`` client.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from mcp import Client
from mcp.types import ElicitResult

from sentinel_mcp.app.runtime import running_gateway
from sentinel_mcp.gateway.midcall_answers import MAX_QUESTIONS_PER_CALL
from tests.support.forked_upstreams import forked_spec

from .helpers import make_config

pytestmark = pytest.mark.timeout(120)
WIDE = str(Path(__file__).with_name("wide_asker_upstream.py"))


@pytest.mark.parametrize("mode", ["legacy", "auto"])
@pytest.mark.parametrize("count", [MAX_QUESTIONS_PER_CALL, 200])
async def test_an_upstream_asking_too_many_questions_at_once_is_relayed_to_no_one(
    data_dir: Path, mode: str, count: int
) -> None:
    wide = {**forked_spec(WIDE), "protocol": "modern"}
    cfg = make_config(data_dir, servers={"wd": wide}, policy={"allow": ["wd__*"]}, builtins=[])
    asked: list[str] = []

    async def on_elicit(ctx: Any, params: Any) -> ElicitResult:
        asked.append(params.message)
        return ElicitResult(action="accept", content={"word": "x"})

    async with running_gateway(cfg) as rt:
        async with Client(rt.front.server, mode=mode, elicitation_callback=on_elicit) as c:
            r = await c.session.call_tool("wd__ask_wide", {"count": count}, allow_input_required=True)
    if mode == "auto":
        shown = len(r.input_requests) if type(r).__name__ == "InputRequiredResult" else 0
        asked.extend(["shown"] * shown)
    said = " ".join(getattr(b, "text", "") for b in getattr(r, "content", None) or [])
    if count <= MAX_QUESTIONS_PER_CALL:
        assert len(asked) == count, (len(asked), said)
        if mode == "legacy":
            assert said == f"answered {count}", said
    else:
        assert asked == [], len(asked)
        assert r.is_error and f"{count} questions at once" in said, said
