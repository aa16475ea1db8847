"""An upstream's result nested deeper than the readers take (the C converter's 256 levels, Python's ~1,000,
pydantic's wire limit) is answered, never a crash or a hang: a structured result past the gateway's 64 levels
is an error naming the bound, a message past the wire reader's is an invalid message, and a JSON text in a
text content is passed on as text, its facts learned only where it can be read (past ~1,000 levels none, and
the read's older facts taken back). After each, a plain call of the same upstream is answered as usual."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from sentinel_mcp.app.runtime import running_gateway
from sentinel_mcp.config import parse_config

pytestmark = pytest.mark.timeout(180)
SERVER = Path(__file__).parent / "deep_result_upstream.py"
RULES = """
fact(owner/2).
binding(owner(D, U), tool('dp__deep_structured', [depth = D]), extract([U = '/owner']), [ttl(600)]).
binding(owner(D, U), tool('dp__deep_text', [depth = D]), extract([U = '/owner']), [ttl(600)]).
binding(sowner(I, U), tool('dp__shallow', [id = I]), extract([U = '/owner']), [ttl(600)]).
"""
DEPTHS = [200, 255, 256, 257, 300, 900, 990, 1_200, 5_000, 100_000]


def config(tmp: Path) -> Any:
    (tmp / "r.pl").write_text(RULES)
    return parse_config({"mcpServers": {"dp": {"command": sys.executable, "args": [str(SERVER)]}},
                         "sentinel": {"rulebases": [str(tmp / "r.pl")], "builtins": [],
                                      "data_dir": str(tmp / "data")}}, base_dir=str(tmp))


async def test_deep_results_are_answered_and_read_only_as_deep_as_they_can_be(tmp_path: Path) -> None:
    async with running_gateway(config(tmp_path)) as rt:
        async with Client(rt.front.server, mode="legacy") as c:
            for d in DEPTHS:
                r = await c.call_tool("dp__deep_structured", {"depth": d})
                assert r.is_error, d
                text = r.content[0].text
                assert "nested more than 64 deep" in text or "invalid message" in text, (d, text[:200])
                t = await c.call_tool("dp__deep_text", {"depth": d})
                assert not t.is_error and t.content[0].text.startswith('{"owner":"u1","v":'), d
                assert not (await c.call_tool("dp__shallow", {"id": f"x{d}"})).is_error, d
            store = rt.gateway.guard.store
            await store._learning.settled()
            session = next(iter(await store.sessions()))
            facts = {f.fact for f in await store.valid(session) if f.predicate == "owner"}
    # the text's JSON is read where Python's reader takes it (the C converter's 256 levels are no bound:
    # past them the text path reads it), and nowhere past it (990 is near the reader's bound: either)
    assert {f"owner({d},u1)" for d in DEPTHS if d <= 900} <= facts, sorted(facts)
    assert not facts & {f"owner({d},u1)" for d in DEPTHS if d > 990}, sorted(facts)
