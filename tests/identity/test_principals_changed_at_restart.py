"""Principals are read at start (README: a removed principal or a changed token takes effect at restart).
Sentinel restarted with alice removed and her former token given to a new principal (dave, another person):
the token signs in dave, never alice; alice's streamable-HTTP session is no session (404) to dave or bob; her
sealed conversation, carried by dave in ``_meta`` on a 2026-era call, shows him nothing of hers (the fact she
bound: a conversation's bound facts do not outlive the process, so alice herself kept would see none either;
the mutant with alice kept fails on the last check, the name her token now signs in). Bob's rotated token:
the old one signs nobody in, the new one is bob. Real gateway over HTTP, the same data directory across the
restart (red team "identity8"; held on main, pinned).
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import httpx2
import pytest

from tests.identity.identity_rig import ALICE, BOB, http_sentinel
from tests.identity.test_every_method_every_door import (
    ACCEPT, BOUND, FACTS_TOOL, HANDSHAKE, _alices, _config, _messages, _modern_headers, _request,
)

pytestmark = pytest.mark.timeout(240)
BOB_NEW = "bob-rotated-token-0123456789abc"


def _restarted_config(cfg: Path) -> None:
    body = json.loads(cfg.read_text())
    kept = [p for p in body["sentinel"]["principals"] if p["name"] not in ("alice", "bob")]
    body["sentinel"]["principals"] = [*kept, {"name": "dave", "token": ALICE},
                                      {"name": "bob", "token": BOB_NEW}]
    cfg.write_text(json.dumps(body))


async def _after(base: str, alices: dict[str, str]) -> None:
    async with httpx2.AsyncClient(timeout=60) as http:
        for token in (BOB, "alice-token-0123456789abcde"):  # bob's old token; a prefix of alice's old one
            r = await http.post(f"{base}/mcp", json=_request("tools/list", {}, modern=True),
                                headers=_modern_headers(token, "tools/list", {}))
            assert r.status_code == 401, (token, r.text)
        for token in (ALICE, BOB_NEW):  # alice's session to its token's new holder, and to bob
            r = await http.post(f"{base}/mcp", json=_request("tools/list", {}),
                                headers={**ACCEPT, "Authorization": f"Bearer {token}",
                                         "Mcp-Session-Id": alices["mcp_session"],
                                         "MCP-Protocol-Version": HANDSHAKE})
            assert r.status_code == 404 and "alice" not in r.text, (token, r.text)
            for key in (alices["sealed"], alices["raw"]):  # her conversation carried on a 2026-era call
                params = {"name": FACTS_TOOL, "arguments": {}, "_meta": {"sentinel/session": key}}
                r = await http.post(f"{base}/mcp", json=_request("tools/call", params, modern=True),
                                    headers=_modern_headers(token, "tools/call", params))
                assert BOUND not in r.text and "alice/" not in r.text, (token, key, r.text)
        # the one who holds alice's former token now is dave: what he binds is his, named so
        params = {"name": FACTS_TOOL, "arguments": {}}
        r = await http.post(f"{base}/mcp", json=_request("tools/call", params, modern=True),
                            headers=_modern_headers(ALICE, "tools/call", params))
        text = json.dumps(_messages(r))
        assert r.status_code == 200 and "alice" not in text and BOUND not in text, r.text


def test_a_principal_removed_or_rotated_at_restart_reaches_nothing_of_before(tmp_path: Path) -> None:
    cfg = _config(tmp_path)
    with http_sentinel(cfg) as (base, _):
        alices = asyncio.run(_alices(base))
    _restarted_config(cfg)
    with http_sentinel(cfg) as (base, _):
        asyncio.run(_after(base, alices))
