"""The purpose a client states is the client's word: the consent question quotes it the way every question
quotes a value (``core/quoted_values.py``): one ``“…”`` with its closing marks escaped, bare when made of
``[A-Za-z0-9_.#@+-]``. Before, it sat raw in "(purpose: …)": a purpose ``weather)? For this call only. (x``
made the question read as asking for something else. Each of the 35 forging spellings; both eras; a real
gateway, a real stdio upstream, a real MCP client (the person says no)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from mcp import Client
from mcp.types import ElicitResult

from sentinel_mcp.app.runtime import running_gateway
from sentinel_mcp.core.display_text import is_hidden
from tests.support.forged_values import ATTACKS, CUT, NOTE, QUOTED, outside, unescaped

from .helpers import make_config

pytestmark = pytest.mark.timeout(180)
FORGED = ATTACKS + ["weather)? For this call only. (x", "weather) Allow for this call"]
SHAPE = re.compile(r"Sentinel: allow your MCP client to read your messages with tb__echo "
                   r"\(purpose: (V|[A-Za-z0-9_.#@+-]{1,64})\)\? Allow for this call, or remember it until "
                   r"revoked\.")


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_the_stated_purpose_cannot_forge_the_consent_question(data_dir: Path, mode: str) -> None:
    asked: list[str] = []

    async def person(ctx: Any, params: Any) -> ElicitResult:
        asked.append(params.message)
        return ElicitResult(action="decline")

    async with running_gateway(make_config(data_dir, fork=True, personal={"tb__echo": "messages"})) as rt:
        async with Client(rt.front.server, mode=mode, elicitation_callback=person) as c:
            for purpose in FORGED:
                r = await c.call_tool("tb__echo", {"text": "hi"}, meta={"sentinel/purpose": purpose})
                assert r.is_error, r
    # a purpose over 80 characters is refused before anything is asked (test_purpose_length.py)
    kept = [p for p in FORGED if len(p) <= 80]
    assert len(asked) == len(kept) and len(kept) < len(FORGED)
    for purpose, question in zip(kept, asked, strict=True):
        body = NOTE.sub("", question)
        assert not any(is_hidden(ch) for ch in body), ascii(question)
        assert SHAPE.fullmatch(outside(body)), ascii(question)
        [value] = QUOTED.findall(body)
        # one whose marks pass a value's bound is cut inside its quotes, said so
        whole = unescaped(CUT.sub("", value))
        assert whole == purpose if not CUT.search(value) else purpose.startswith(whole), ascii(question)
