"""``"protocol": "auto"`` and the era each upstream is spoken to in, as the upstream saw it.

auto connects with the handshake first (upstream_client.py): an upstream of the handshake era only that never
answers an unknown method is not sent a ``server/discover`` probe (which would wait out the SDK's 10 s probe
timeout on every connect) and is forwarded to in its own era.
"""

from __future__ import annotations

import json
from pathlib import Path

import anyio
from mcp import Client

from sentinel_mcp.app.runtime import running_gateway
from tests.support.forked_upstreams import forked_spec

from .helpers import make_config

OLD = str(Path(__file__).with_name("handshake_only_upstream.py"))


async def test_auto_forwards_to_a_handshake_only_upstream_without_probing(data_dir):
    servers = {"old": {**forked_spec(OLD), "protocol": "auto"}}
    async with running_gateway(make_config(data_dir, servers=servers)) as rt:
        old = rt.manager.upstreams["old"]
        with anyio.fail_after(60):
            await old.settled.wait()
        assert old.state == "ready", old.last_error
        assert old.protocol_version == "2025-11-25" and not old.modern
        async with Client(rt.front.server, mode="legacy") as c:
            result = await c.call_tool("old__seen", {})
        assert not result.is_error, result
        seen = json.loads(result.content[0].text)
        # what the upstream itself agreed and was sent: the handshake first, never the 2026 probe
        assert seen["era"] == "2025-11-25"
        assert seen["methods"][0] == "initialize"
        assert "server/discover" not in seen["methods"]
        assert seen["methods"][-1] == "tools/call"
