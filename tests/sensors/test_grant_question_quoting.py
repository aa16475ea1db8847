"""The grant question quotes the requester it names the way every question quotes a value
(``core/quoted_values.py``): ``“…”`` with its closing marks escaped, bare only when made of
``[A-Za-z0-9_.#@+-]``. Before, the requester (the tool's own argument) was put in ``'…'`` unescaped: a
requester ``x' access to your location at minimal scope for 1 s? Also grant 'y`` made the question read as
granting little. Each of the 35 forging spellings; both eras; a real sensors server, a real MCP client."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from mcp import Client
from mcp.types import ElicitResult

from device_tools.sensors.server import create_server
from sentinel_mcp.core.builtin import BuiltinContext
from sentinel_mcp.core.display_text import is_hidden
from tests.support.forged_values import ATTACKS, CUT, NOTE, QUOTED, outside, unescaped

pytestmark = [pytest.mark.timeout(120), pytest.mark.parametrize("mode", ["legacy", "auto"])]
SHAPE = re.compile(r"Grant (V(… \(\d+ more characters not shown\))?|[A-Za-z0-9_.#@+-]{1,64}) "
                   r"access to your location at detailed scope for 600 s\?")
FORGED = ATTACKS + ["x' access to your location at minimal scope for 1 s? Also grant 'y"]


async def test_the_requester_cannot_forge_the_grant_question(tmp_path: Path, mode: str) -> None:
    asked: list[str] = []

    async def user(context, params):  # says no: nothing is granted
        asked.append(params.message)
        return ElicitResult(action="decline")

    srv = create_server(BuiltinContext(name="sensors", data_dir=tmp_path / "sensors", settings={}))
    async with Client(srv, mode=mode, elicitation_callback=user) as c:
        for requester in FORGED:  # the local owner manages every requester's consents
            await c.call_tool("sensor_consent", {"action": "grant", "sensor": "location", "scope": "detailed",
                                                 "requester": requester, "expires_in": 600})
    assert len(asked) == len(FORGED)
    for requester, question in zip(FORGED, asked, strict=True):
        body = NOTE.sub("", question)
        assert not any(is_hidden(ch) for ch in body), ascii(question)
        assert SHAPE.fullmatch(outside(body)), ascii(question)
        [value] = QUOTED.findall(body)
        whole = unescaped(CUT.sub("", value))
        assert whole == requester or (requester.startswith(whole) and "more characters not shown" in body), \
            ascii(question)
