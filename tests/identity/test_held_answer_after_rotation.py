"""A 2026-era client's call held open for a handshake-era upstream's question (``held_calls.py``), its token
rotated while the question is open: the answer reaches the upstream under neither token. The old token's
request is refused at the door (401); the new token's answers a call allowed for, and still checked against,
the request that began it, whose credentials no longer hold: it is refused, fail-closed, and nothing is
written (the new token's request does not ride the old check; the client calls again). Real gateway over
HTTP, the toolbox as a handshake-era upstream over stdio, ``config token --rotate`` from the CLI.
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

import httpx2
import pytest
from tests.gateway.helpers import TOOLBOX
from tests.identity.identity_rig import http_sentinel, write_config
from tests.identity.test_revoked_queued_calls import _answer
from tests.identity.test_secret_rotation import _cli, _mcp_status

pytestmark = pytest.mark.timeout(180)

META = {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "t", "version": "1"},
        "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}}}
TOOL = "tb__write_marker_asking"


def _call(rid: int, path: Path, **more: Any) -> dict[str, Any]:
    meta = {**META, **more.pop("meta", {})}
    params = {"name": TOOL, "arguments": {"path": str(path)}, "_meta": meta, **more}
    return {"jsonrpc": "2.0", "id": rid, "method": "tools/call", "params": params}


def _headers(token: str) -> dict[str, str]:
    return {"Content-Type": "application/json", "Accept": "application/json, text/event-stream",
            "MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": TOOL,
            "Authorization": f"Bearer {token}"}


@pytest.mark.parametrize("rotate", [True, False])
async def test_a_held_calls_answer_after_its_token_is_rotated_reaches_no_upstream(
    tmp_path: Path, rotate: bool
) -> None:
    cfg = write_config(tmp_path, policy={"allow": ["tb__*"]})
    body = json.loads(cfg.read_text())
    body["mcpServers"]["tb"] = {"command": sys.executable, "args": [TOOLBOX], "protocol": "legacy"}
    cfg.write_text(json.dumps(body))
    token = _cli(cfg, "token").stdout.strip()
    marker = tmp_path / "marker.txt"
    with http_sentinel(cfg) as (base, _):
        async with httpx2.AsyncClient(timeout=120) as http:
            first = _answer((await http.post(f"{base}/mcp", json=_call(1, marker),
                                             headers=_headers(token))).text)["result"]
            [key] = first["inputRequests"]
            session = first.get("_meta", {}).get("sentinel/session")
            reply = {
                "inputResponses": {key: {"action": "accept", "content": {"word": "blue"}}},
                "requestState": first["requestState"],
                **({"meta": {"sentinel/session": session}} if session else {}),
            }
            now = token
            if rotate:
                rotated = _cli(cfg, "token", "--rotate")
                assert rotated.returncode == 0, rotated.stderr
                now = rotated.stdout.strip()
                for _ in range(200):  # the old token is refused within about a second
                    if await _mcp_status(http, base, token) == 401:
                        break
                    await asyncio.sleep(0.05)
                old = await http.post(f"{base}/mcp", json=_call(2, marker, **reply), headers=_headers(token))
                assert old.status_code == 401, old.text
            late = await http.post(f"{base}/mcp", json=_call(3, marker, **reply), headers=_headers(now))
    said = json.dumps(_answer(late.text))
    if rotate:
        assert "no longer hold" in said, said
        assert not marker.exists(), "the answer reached the upstream after the token was rotated"
    else:
        assert "wrote blue" in said, said
        assert marker.read_text() == "blue\n"

