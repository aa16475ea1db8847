"""An upstream's tool that declares an ``outputSchema`` promises structured content that fits it; the client
checks that promise with the schema Sentinel lists. A hostile upstream breaks it: a result that does not fit
made the client's call raise instead of answering, and a backtracking ``pattern`` with a string that does not
match held the client's checker for minutes (measured: 296 s for 33 characters). So Sentinel checks each
result against the tool's schema itself (bounded: RE2 patterns, no fetched references, work in proportion to
the value) and answers one that does not fit, or cannot be checked, with its own error result, recorded in the
audit log. An error result, or a tool without a schema, is not bound by one."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from mcp import Client

from sentinel_mcp.app.runtime import running_gateway

from .helpers import make_config

UPSTREAM = str(Path(__file__).with_name("output_schema_upstream.py"))
REFUSED = {
    "wrong_type": "does not fit",
    "missing": "no structured content",
    "backtracking": "does not fit",
    "remote_ref": "cannot be checked",
}


@pytest.mark.timeout(120)
@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_a_result_that_breaks_its_output_schema_is_answered_by_sentinel(data_dir, mode):
    servers = {"sc": {"command": sys.executable, "args": [UPSTREAM]}}
    async with running_gateway(make_config(data_dir, servers=servers)) as rt:
        assert await rt.manager.upstreams["sc"].wait_ready(20)
        async with Client(rt.front.server, mode=mode) as c:
            fine = await c.call_tool("sc__fine", {})
            assert not fine.is_error and fine.structured_content == {"n": 1}
            assert (await c.call_tool("sc__failed", {})).is_error
            free = await c.call_tool("sc__free", {})
            assert not free.is_error and free.structured_content == {"anything": ["goes"]}
            for name, why in REFUSED.items():
                r = await c.call_tool(f"sc__{name}", {})  # an answer, never an exception nor a hang
                assert r.is_error and r.structured_content is None, (name, r)
                text = r.content[0].text
                assert text.startswith(f"sc__{name}:") and why in text, (name, text)
                assert r.meta["sentinel/error"] == "result_schema", r.meta
            # structured content that is not an object is no tools/call result at all: refused before
            odd = await c.call_tool("sc__not_an_object", {})
            assert odd.is_error and "not a valid tools/call result" in odd.content[0].text, odd
        rows = await rt.audit.read(tail=50)
    by_tool = {row["tool"]: row for row in rows}
    for name, why in REFUSED.items():
        row = by_tool[f"sc__{name}"]
        assert row["outcome"] == "tool_error" and why in (row["error"] or ""), row
    assert by_tool["sc__fine"]["outcome"] != "tool_error"
    assert "not a valid tools/call result" in (by_tool["sc__not_an_object"]["error"] or "")
