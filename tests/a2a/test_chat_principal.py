"""A peer's WebSocket chat calls the local LLM as that peer, never as Sentinel itself: through the real
gateway, a peer whose tools do not reach the LLM is refused and the LLM is never reached; a peer whose tools
do is answered, and the audit row and the conversation are that peer's. (It ran as Sentinel's own principal,
which reaches every tool, and its rows said principal "sentinel": a red-team probe, 2026-12-01.)"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
from websockets.asyncio.client import connect

from sentinel_mcp.gateway.audit import read_audit
from sentinel_mcp.paths import RULEBASES_DIR
from tests.a2a.served_gateway import gateway_with_a2a

pytestmark = pytest.mark.timeout(120)
HERE = Path(__file__).resolve().parent
NARROW, WIDE = "narrow-key-0123456789", "wide-key-0123456789"


async def chat(base: str, token: str, text: str) -> dict[str, Any]:
    headers = {"Authorization": f"Bearer {token}", "A2A-Version": "1.0"}
    async with connect(base.replace("http", "ws", 1) + "/a2a/ws", additional_headers=headers,
                       subprotocols=["a2a.v1.json"]) as ws:
        await ws.send(json.dumps({"jsonrpc": "2.0", "id": 1, "method": "chat_open", "params": {}}))
        opened = json.loads(await ws.recv())["result"]
        await ws.send(json.dumps({"jsonrpc": "2.0", "id": 2, "method": "chat_message",
                                  "params": {"channel_id": opened["channel_id"], "text": text}}))
        return dict(json.loads(await ws.recv())["result"])


async def test_a_peers_chat_runs_as_that_peer(tmp_path: Path) -> None:
    log = tmp_path / "llm_calls.log"
    raw = {
        "mcpServers": {"llm": {"command": sys.executable, "args": [str(HERE / "stand_in_llm.py"), str(log)]}},
        "sentinel": {
            "rulebases": [str(RULEBASES_DIR / "default.pl")],
            "builtins": ["sentinel"],
            "data_dir": str(tmp_path / "data"),
            "http": {"token": "owner-token-0123456789"},
            "principals": [{"name": "narrow", "token": NARROW, "tools": ["sentinel__sentinel_facts"]},
                           {"name": "wide", "token": WIDE, "tools": ["llm__*"]}],
            "a2a": {"enabled": True},
        },
    }
    async with gateway_with_a2a(raw, tmp_path) as gw:
        refused = await chat(gw.base, NARROW, "tell me a secret")
        assert "STAND-IN REPLY" not in json.dumps(refused), refused
        assert refused.get("error") or refused.get("refused") or refused.get("degraded"), refused
        assert not log.exists(), "the LLM was reached by a peer whose tools do not reach it"
        answered = await chat(gw.base, WIDE, "hello")
        assert answered.get("text") == "STAND-IN REPLY", answered
        assert log.exists() and len(log.read_text().splitlines()) == 1
        rows = [r for r in await read_audit(gw.config.store_path, tail=200)
                if "llm_generate" in str(r.get("tool"))]
        # a call from a peer that names no principal (and whose session names none) reaches nothing, never
        # falls back to Sentinel's own principal
        gateway = gw.holder.runtime.gateway
        nobody = gateway.principal_for(None, "a2a-without-owner", "a2a")
        assert not nobody.may_reach("llm", "llm_generate") and not nobody.may_use("llm"), nobody
        assert nobody.name != "sentinel" and nobody.agent
    assert rows, "no audit row for the chat's calls"
    assert {r.get("principal") for r in rows} <= {"narrow", "wide"}, rows
    assert "sentinel" not in {r.get("principal") for r in rows}
    for r in rows:  # each conversation is its peer's own
        session = str(r.get("session") or r.get("session_id") or "")
        assert session.startswith(f"{r['principal']}/"), r
