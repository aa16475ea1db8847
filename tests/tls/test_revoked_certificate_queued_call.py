"""A call of a client certificate revoked while the call waits inside Sentinel (for its upstream's only
``max_in_flight`` slot) never reaches the upstream, and its answer says why (``gateway/caller_recheck.py``):
the revoked certificate's queued calls ran as its principal, and their one-piece answers were delivered on
the connection made before the revocation. Another principal's queued call runs as before."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

import httpx2
import pytest
from tests.gateway.helpers import TOOLBOX
from tests.identity.test_revoked_queued_calls import _answer, _held, _headers, _waiting, refused
from tests.identity.test_secret_rotation import _cli
from tests.tls.tls_rig import audit_rows, client_context, https_sentinel, tls_config

pytestmark = pytest.mark.timeout(240)


async def test_a_call_queued_when_its_certificate_is_revoked_never_runs(tmp_path: Path, pki) -> None:
    cfg = tls_config(tmp_path, pki, policy={"allow": ["tb__*"]})
    body = json.loads(cfg.read_text())
    body["mcpServers"]["tb"] = {"command": sys.executable, "args": [TOOLBOX], "max_in_flight": 1}
    cfg.write_text(json.dumps(body))
    owner = _cli(cfg, "token").stdout.strip()
    first, queued, kept = tmp_path / "first", tmp_path / "queued", tmp_path / "kept"
    with https_sentinel(cfg, pki) as (base, _):
        alice = httpx2.AsyncClient(verify=client_context(pki, pki.alice), timeout=120)
        bob = httpx2.AsyncClient(verify=client_context(pki, pki.bob), timeout=120)
        operator = httpx2.AsyncClient(verify=client_context(pki), timeout=120)
        async with alice, bob, operator:
            no_token = {k: v for k, v in _headers("").items() if k != "Authorization"}
            running = asyncio.ensure_future(alice.post(f"{base}/mcp", json=_held(first, 1), headers=no_token))
            for _ in range(1200):  # the first call holds the only slot: its file says it started
                if first.exists():
                    break
                await asyncio.sleep(0.05)
            assert first.exists()
            waiting = asyncio.ensure_future(alice.post(f"{base}/mcp", json=_held(queued, 2),
                                                       headers=no_token))
            others = asyncio.ensure_future(bob.post(f"{base}/mcp", json=_held(kept, 3), headers=no_token))
            for _ in range(600):  # both wait for the slot (the operator's figure says so)
                if await _waiting(operator, base, owner) == 2:
                    break
                await asyncio.sleep(0.05)
            assert await _waiting(operator, base, owner) == 2
            pki.ca.revoke(f"{pki.alice.serial:x}")
            for _ in range(200):  # the CRL is re-read within about a second: alice's next request is refused
                try:
                    status = (await alice.get(f"{base}/metrics")).status_code
                except httpx2.HTTPError:
                    status = 0
                if status in (0, 401):
                    break
                await asyncio.sleep(0.05)
            assert status in (0, 401)
            for path in (first, queued, kept):
                Path(str(path) + ".go").touch()  # each released at once, if it ever starts
            await running
            late, fine = await waiting, await others
    assert not queued.exists(), "the queued call of the revoked certificate reached the upstream"
    assert "released" not in late.text, late.text
    assert refused(late), late.text
    assert _answer(fine.text)["result"]["content"][0]["text"] == "released"
    assert kept.read_text() == "started\n"
    rows = await audit_rows(cfg, origin="client", at_least=3)  # the audit says why it was not sent
    lapsed = [r for r in rows if r.get("outcome") == "credentials_lapsed"]
    assert [(r.get("principal"), r.get("tool")) for r in lapsed] == [("alice", "tb__held")], rows
