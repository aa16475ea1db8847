"""A read's text content is learned from only when it is one JSON reading: a text whose JSON gives a name
twice (``{"owner":"u1",...,"owner":"u2"}``) is passed on as text and no fact is learned from it. Before, the
guard learned the last value (u2) while the text itself went on to the model and the client, where a reader
keeping the first (Go's ``encoding/json``, many stream parsers, a person reading the first line) read u1:
the rule decided on another owner than the one the caller was shown."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from sentinel_mcp.app.runtime import running_gateway
from sentinel_mcp.config import parse_config

from .test_deep_upstream_results import SERVER

pytestmark = pytest.mark.timeout(180)
RULES = """
binding(towner(I, U), tool('dp__twice', [id = I]), extract([U = '/owner']), [ttl(600)]).
binding(sowner(I, U), tool('dp__shallow', [id = I]), extract([U = '/owner']), [ttl(600)]).
"""


def config(tmp: Path) -> Any:
    (tmp / "r.pl").write_text(RULES)
    return parse_config({"mcpServers": {"dp": {"command": sys.executable, "args": [str(SERVER)]}},
                         "sentinel": {"rulebases": [str(tmp / "r.pl")], "builtins": [],
                                      "data_dir": str(tmp / "data")}}, base_dir=str(tmp))


@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
async def test_a_text_giving_a_name_twice_is_passed_on_and_learned_from_nowhere(
        tmp_path: Path, mode: str) -> None:
    async with running_gateway(config(tmp_path)) as rt, Client(rt.front.server, mode=mode) as c:
        t = await c.call_tool("dp__twice", {"id": "a"})
        assert not t.is_error and t.content[0].text == '{"owner":"u1","id":"a","owner":"u2"}', t
        s = await c.call_tool("dp__shallow", {"id": "b"})  # the control: a text of one reading is learned
        assert not s.is_error, s
        store = rt.gateway.guard.store
        await store._learning.settled()
        facts = {f.fact for session in await store.sessions() for f in await store.valid(session)}
    assert "sowner(b,u1)" in facts, sorted(facts)
    assert not {f for f in facts if f.startswith("towner(")}, sorted(facts)
