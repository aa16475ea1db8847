"""What a call gives back to its own client may hold the value it sent (a careless upstream's error quoting
the password); no other principal is ever shown it. Alice makes every kind of call with a canary password
(allowed, denied, failing upstream with the password in its error, timed out, asked, asking), then bob, a
principal of the same gateway, reads everything he may: the tool and resource lists, every resource, every
Sentinel tool (facts, queries, why-not), the health and metrics pages, and the questions his own calls ask
(the same upstream, which logs and echoes what it was sent). Real gateway, real upstream, real HTTP."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.types import ElicitResult
from tests.gateway.test_observability import get
from tests.gateway.test_secret_canaries import CANARIES, PASSWORD, SERVER, TOOLS

from sentinel_mcp.paths import RULEBASES_DIR
from tests.conftest import free_port, stop_process, wait_http

pytestmark = pytest.mark.timeout(240)
ALICE, BOB = "canary-alice-token-8812-zz", "bob-other-principal-token-0123456789"


def _client(port: int, token: str, asked: list[str]) -> Client:
    async def approve(ctx, params):  # noqa: ANN001
        asked.append(params.message)
        fields = params.requested_schema.get("properties") or {}
        return ElicitResult(action="accept", content={name: True for name in fields})

    http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=60)
    return Client(streamable_http_client(f"http://127.0.0.1:{port}/mcp", http_client=http),
                  elicitation_callback=approve)


# a guard that measures the password (what it may do with a secret), so that the Sentinel tools (facts,
# queries, why-not) and resources are there for bob to read
RULES = """
guard('sec__set_password', [user = U, password = P],
      ( atom_length(P, N), require(N >= 8, 'a password of 8 characters at least'),
        confirmed('Change the password of ~w?', [U]) )).
"""


async def test_no_other_principal_is_shown_a_value_a_principal_sent(tmp_path: Path) -> None:
    cfg = tmp_path / "sentinel.json"
    rules = tmp_path / "sec.pl"
    rules.write_text(RULES)
    cfg.write_text(json.dumps({
        "mcpServers": {"sec": {"command": sys.executable, "args": [SERVER], "timeout": 3}},
        "sentinel": {"data_dir": str(tmp_path / "state"), "policy": {"deny": ["sec__denied_login"]},
                     "rulebases": [str(RULEBASES_DIR / "default.pl"), str(rules)], "builtins": ["sentinel"],
                     "principals": [{"name": "alice", "token": ALICE}, {"name": "bob", "token": BOB}]}}))
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "sentinel_mcp", "-c", str(cfg), "serve", "--http", f"127.0.0.1:{port}"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    shown: dict[str, str] = {}
    own: list[str] = []
    try:
        wait_http(f"http://127.0.0.1:{port}/healthz", proc=proc, timeout=60)
        alice_asked: list[str] = []
        async with _client(port, ALICE, alice_asked) as c:
            for tool in TOOLS:
                own.append((await c.call_tool(f"sec__{tool}", {"user": "ann", "password": PASSWORD}))
                           .model_dump_json())
        asked: list[str] = []
        async with _client(port, BOB, asked) as c:
            tools = (await c.list_tools()).tools
            shown["tools"] = json.dumps([t.model_dump(mode="json") for t in tools])
            resources = (await c.list_resources()).resources
            shown["resources"] = json.dumps([r.model_dump(mode="json") for r in resources])
            for r in resources:
                shown[f"resource {r.uri}"] = (await c.read_resource(r.uri)).model_dump_json()
            for t in tools:
                if t.name.startswith("sentinel"):
                    shown[f"tool {t.name}"] = (await c.call_tool(t.name, {})).model_dump_json()
            # bob's own calls of the same upstream: what it writes back, and asks, of what it was sent
            for tool in ("failing_login", "asking_login", "set_password"):
                result = await c.call_tool(f"sec__{tool}", {"user": "bob", "password": "x-bob-pw-12345"})
                shown[f"bob's {tool}"] = result.model_dump_json()
        shown["bob's questions"] = "\n".join(asked)
        for path in ("/healthz", "/metrics"):
            shown[path] = get(f"http://127.0.0.1:{port}{path}", BOB)[2]
    finally:
        stop_process(proc)
    assert "welcome ann" in own[0] and "failing_login" in own[2], own  # alice was served
    assert shown["bob's questions"], shown
    assert any(name.startswith("tool sentinel") for name in shown), shown
    assert "resource sentinel://facts" in shown, shown
    found = {name: [c for c in CANARIES if c in text] for name, text in shown.items()}
    assert not any(found.values()), {k: v for k, v in found.items() if v}
