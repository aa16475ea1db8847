"""A streamed answer's caller is checked again while it streams (``app/stream_recheck.py``): a client
certificate revoked while its call streams progress gets nothing more, the result included; a certificate
that stays good gets the whole stream."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import httpx2
import pytest
from tests.gateway.helpers import TOOLBOX
from tests.tls.tls_rig import client_context, https_sentinel, tls_config

pytestmark = pytest.mark.timeout(240)

HEADERS = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream",
           "MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": "tb__slow"}


def _with_toolbox(cfg: Path) -> Path:
    data = json.loads(cfg.read_text())
    data["mcpServers"]["tb"] = {"command": sys.executable, "args": [TOOLBOX]}
    cfg.write_text(json.dumps(data))
    return cfg


def _slow_call(seconds: float) -> dict:
    return {"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {
        "name": "tb__slow", "arguments": {"seconds": seconds},
        "_meta": {"progressToken": "p1", "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                  "io.modelcontextprotocol/clientInfo": {"name": "t", "version": "1"},
                  "io.modelcontextprotocol/clientCapabilities": {}}}}


async def _events(base: str, ctx, on_first_progress=None) -> tuple[list[dict], float]:  # noqa: ANN001
    """The stream's JSON-RPC messages, and seconds from the first progress to its end."""
    got: list[dict] = []
    first = None
    async with httpx2.AsyncClient(verify=ctx, timeout=60) as http:
        async with http.stream("POST", f"{base}/mcp", json=_slow_call(4.0), headers=HEADERS) as r:
            assert r.status_code == 200, await r.aread()
            assert r.headers["content-type"].startswith("text/event-stream")
            async for line in r.aiter_lines():
                if not line.startswith("data:"):
                    continue
                msg = json.loads(line[5:])
                got.append(msg)
                if msg.get("method") == "notifications/progress" and first is None:
                    first = time.monotonic()
                    if on_first_progress is not None:
                        on_first_progress()
    return got, time.monotonic() - (first or time.monotonic())


async def test_a_certificate_revoked_while_its_call_streams_gets_nothing_more(tmp_path, pki):
    cfg = _with_toolbox(tls_config(tmp_path, pki))
    with https_sentinel(cfg, pki) as (base, _):
        # a certificate that stays good: every progress and the result
        whole, _ = await _events(base, client_context(pki, pki.bob))
        assert sum(m.get("method") == "notifications/progress" for m in whole) == 4
        assert whole[-1].get("id") == 7 and "result" in whole[-1]

        cut, after = await _events(base, client_context(pki, pki.alice),
                                   lambda: pki.ca.revoke(f"{pki.alice.serial:x}"))
        assert not any(m.get("id") == 7 for m in cut), cut  # the result never reached the revoked caller
        assert sum(m.get("method") == "notifications/progress" for m in cut) < 4
        assert after < 3.5  # ended at the first chunk past the re-read of the CRL, not when the call ended
