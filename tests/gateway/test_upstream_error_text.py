"""An upstream's JSON-RPC error message, quoted in Sentinel's own result and its audit row, is bounded and
shown safely (gateway/upstream_calls.py, upstream_client.describe_error): on the SDK's path the whole message
went through (2 MB a call into the client's result and the hash-chained audit log), and on either path its
bidi overrides and terminal escapes reached the person reading Sentinel's text as they were."""

from __future__ import annotations

import sys

import pytest
from mcp import Client

from sentinel_mcp.app.runtime import running_gateway
from sentinel_mcp.core.display_text import MESSAGE_LIMIT, is_hidden
from sentinel_mcp.gateway.own_results import sentinel_info

from .error_text_upstream import SPELLINGS
from .helpers import make_config

pytestmark = pytest.mark.timeout(90)


@pytest.mark.parametrize("lean", ["on", "off"])
async def test_an_upstream_error_message_is_bounded_and_shown_safely(data_dir, monkeypatch, lean):
    monkeypatch.setenv("SENTINEL_LEAN_UPSTREAM", lean)  # off: the SDK client's path
    server = {"command": sys.executable, "args": ["-m", "tests.gateway.error_text_upstream"],
              "env": {"SIZE": str(1024 * 1024), "PYTHONPATH": sys.path[0]}}
    async with running_gateway(make_config(data_dir, {"et": server})) as rt:
        async with Client(rt.front.server, mode="legacy") as c:
            for n in range(len(SPELLINGS)):
                r = await c.call_tool("et__fail", {"n": n})
                text = r.content[0].text
                assert r.is_error and sentinel_info(r)["error"] == "upstream_error", text[:200]
                assert text.startswith("upstream et error -31999: ")
                assert len(text) < MESSAGE_LIMIT + 200, (n, len(text))
                assert not any(is_hidden(ch) for ch in text), (n, text[:120])
        await rt.audit.flush()
        rows = await rt.audit.read(tail=len(SPELLINGS))
        assert len(rows) == len(SPELLINGS)
        for row in rows:
            assert len(str(row.get("error"))) < MESSAGE_LIMIT + 200
            assert not any(is_hidden(ch) for ch in str(row.get("error")))
