"""Requests an upstream sends DURING the handshake (before its ``initialize`` answer: roots, sampling,
elicitation, a method no MCP version has) are refused in Sentinel's words and audited, as the same requests
after it are (``undeclared_requests.py``, ``upstream_relays``); only ``ping`` is answered. Checked, not
fixed: it held on main (the screen is in place before the SDK's session sends ``initialize``). The real
gateway (a connection bob may share: no roots declared), a raw stdio upstream that waits for each answer
before its own (``handshake_asker_upstream.py``), the real SQLite audit."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from mcp import Client

from sentinel_mcp.app.runtime import running_gateway
from tests.gateway.handshake_asker_upstream import ASKED
from tests.gateway.helpers import make_config
from tests.gateway.test_push_refusals_audited import _rows

pytestmark = pytest.mark.timeout(180)
ROOT = Path(__file__).resolve().parents[2]
BOB = "bob-token-0123456789abcdef00"
CAUSES = {"roots/list": ("roots", "not_declared"), "sampling/createMessage": ("sampling", "unattributed"),
          "elicitation/create": ("elicitation", "unattributed"), ASKED[3]: ("other", "unknown_method")}


async def test_requests_before_the_initialize_answer_are_refused_and_audited(data_dir: Path) -> None:
    server = {"command": sys.executable, "args": ["-m", "tests.gateway.handshake_asker_upstream"],
              "cwd": str(ROOT)}
    config = make_config(data_dir, {"hs": server}, principals=[{"name": "bob", "token": BOB}])
    async with running_gateway(config) as rt:
        assert await rt.manager.upstreams["hs"].wait_ready(30)
        async with Client(rt.front.server, mode="legacy") as c:
            result = await c.call_tool("hs__heard", {})
    assert not result.is_error, result
    text = result.content[0].text
    heard = json.loads(text[text.index("{"):])  # after the gateway's header naming the server's words
    assert set(heard) == set(ASKED) and heard["ping"] == {}, heard
    for method in CAUSES:
        answer = heard[method]
        assert answer["message"].startswith("sentinel: ") and "cannot be relayed" in answer["message"], answer
        assert answer["code"] == (-32601 if method == ASKED[3] else -32600), answer
    rows = [r for r in _rows(config.store_path) if r["outcome"] == "push_refused"]
    seen = sorted((json.loads(r["arguments"])["push"], json.loads(r["arguments"])["cause"]) for r in rows)
    assert seen == sorted(CAUSES.values()), rows
    for row in rows:
        assert (row["upstream"], row["decision"], row["principal"]) == ("hs", "deny", None), row
        assert "\u202e" not in row["reason"], row  # the probe's hidden mark is escaped in the record
