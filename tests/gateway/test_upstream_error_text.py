"""An upstream's JSON-RPC error message, quoted in Sentinel's own result and its audit row, is bounded, and
shown safely where it is shown (the row holds it raw; gateway/upstream_calls.py,
upstream_client.describe_error): on the SDK's path the whole message
went through (2 MB a call into the client's result and the hash-chained audit log), and on either path its
bidi overrides and terminal escapes reached the person reading Sentinel's text as they were."""

from __future__ import annotations

import sys

import pytest
from mcp import Client

from sentinel_mcp.app.runtime import running_gateway
from sentinel_mcp.core.display_text import MESSAGE_LIMIT, is_hidden, safe_text
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
            results = []
            for n in range(len(SPELLINGS)):
                r = await c.call_tool("et__fail", {"n": n})
                text = r.content[0].text
                results.append(text)
                assert r.is_error and sentinel_info(r)["error"] == "upstream_error", text[:200]
                assert text.startswith("upstream et error -31999: ")
                assert len(text) < MESSAGE_LIMIT + 200, (n, len(text))
                assert not any(is_hidden(ch) for ch in text), (n, text[:120])
        await rt.audit.flush()
        rows = await rt.audit.read(tail=len(SPELLINGS))
        assert len(rows) == len(SPELLINGS)
        for row, said in zip(rows, results):
            # the row holds the upstream's words raw, bounded: every reader marks them once where it shows
            # them (tests/console/test_audit_error_marks.py), as Sentinel's result was marked
            assert len(str(row.get("error"))) < MESSAGE_LIMIT + 200
            # (a NUL is stored as the text "\\x00": PostgreSQL's text holds none, audit._text)
            said = said.replace("⟨U+0000⟩", "\\x00")
            shown = safe_text(str(row.get("error")), 10_000)  # a cut is said in plain words in the row
            assert shown.rsplit("…", 1)[0] == said.rsplit("…", 1)[0], (shown[:100], said[:100])
            assert ("…⟨" in said) == ("more characters not shown)" in shown), shown[-80:]
