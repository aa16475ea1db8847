"""A real Sentinel serving HTTPS with mutual TLS on a non-loopback binding (0.0.0.0, reached via 127.0.0.1):
every front answers over TLS (MCP streamable HTTP in both eras, SSE, A2A JSON-RPC, WSS, the card, /healthz);
a client certificate is a principal that sees only its own facts; unknown, expired, revoked and unmapped
certificates are refused with a clear error and audited; a revocation counts while Sentinel runs."""

from __future__ import annotations

import json
import ssl
from pathlib import Path
from typing import Any

import httpx2
import pytest
from tests.identity.identity_rig import BOB, session_line, text
from tests.tls.tls_rig import audit_rows, client_context, https_sentinel, mcp_over_tls, tls_config
from websockets.asyncio.client import connect
from websockets.exceptions import InvalidStatus

pytestmark = pytest.mark.timeout(240)
BIND = {"context": "booking_of_interest", "value": "BK-789"}
BOUND = 'booking_of_interest = "BK-789"'
ACCEPT = {"Accept": "application/json, text/event-stream"}
PING = {"jsonrpc": "2.0", "id": 1, "method": "ping"}


def chain_text(e: BaseException) -> str:
    parts = []
    while e is not None:
        parts.append(f"{type(e).__name__}: {e}")
        e = e.__cause__ or e.__context__  # type: ignore[assignment]
    return " <- ".join(parts)


async def refused(base: str, ctx: ssl.SSLContext) -> str:
    """The error a client sees when its certificate is refused in the handshake."""
    async with httpx2.AsyncClient(verify=ctx, timeout=10) as http:
        with pytest.raises(
            (httpx2.HTTPError, ssl.SSLError)
        ) as e:  # a TLS 1.3 alert arrives on the first read
            await http.post(f"{base}/mcp", json=PING, headers={**ACCEPT, "Authorization": f"Bearer {BOB}"})
    return chain_text(e.value)


def _operator_of(cfg: Path, pki: Any) -> ssl.SSLContext:
    """``cfg`` with an owner's certificate rule (CN=owner): the operator, who reads /healthz's details; its
    client's context."""
    from tests.tls.tls_rig import subject_of

    data = json.loads(cfg.read_text())
    data["sentinel"]["http"]["tls"]["owner"] = subject_of("owner")
    cfg.write_text(json.dumps(data))
    return client_context(pki, pki.ca.issue_client("owner"))


async def test_every_front_over_tls_and_certificates_are_principals(tmp_path, pki):
    cfg = tls_config(tmp_path, pki)
    operator = _operator_of(cfg, pki)
    alice_ctx, bob_ctx = client_context(pki, pki.alice), client_context(pki, pki.bob)
    with https_sentinel(cfg, pki) as (base, _):
        async with httpx2.AsyncClient(verify=operator, timeout=20) as http:
            health = (await http.get(f"{base}/healthz")).json()
            assert health["tls"]["client_certificates"] == "optional" and health["tls"]["crl"] is True
        async with httpx2.AsyncClient(verify=alice_ctx, timeout=20) as http:
            card = (await http.get(f"{base}/.well-known/agent-card.json")).json()
            urls = [i["url"] for i in card["supportedInterfaces"]]
            assert urls[0].startswith("https://127.0.0.1:") and urls[1].startswith("wss://127.0.0.1:"), urls
            assert "mtlsSecurityScheme" in card["securitySchemes"]["mtls"]  # client certificates are welcome
            assert {"schemes": {"mtls": {"list": []}}} in card["securityRequirements"]
            got = (
                await http.post(
                    f"{base}/a2a",
                    json={"jsonrpc": "2.0", "id": 1, "method": "GetTask", "params": {"id": "none"}},
                    headers={"A2A-Version": "1.0"},
                )
            ).json()
            assert got["error"]["code"] == -32001  # past authentication: alice's certificate was enough
        # the WebSocket binding over TLS, the caller known by its certificate
        async with connect(urls[1], ssl=alice_ctx, subprotocols=["a2a.v1.json"]) as ws:  # type: ignore[list-item]
            await ws.send(json.dumps({"jsonrpc": "2.0", "id": 7, "method": "GetTask", "params": {"id": "x"}}))
            assert json.loads(await ws.recv())["error"]["code"] == -32001
        with pytest.raises(InvalidStatus) as no_one:  # neither a certificate nor a token: refused
            async with connect(urls[1], ssl=client_context(pki), subprotocols=["a2a.v1.json"]):  # type: ignore[list-item]
                pass
        # unauthenticated: 401 with its reason in the body and WWW-Authenticate, as a plain request gets
        assert no_one.value.response.status_code == 401

        # plaintext on the TLS port gets a readable refusal
        async with httpx2.AsyncClient(timeout=10) as plain:
            r = await plain.get(base.replace("https", "http") + "/healthz")
            assert r.status_code == 400 and "HTTPS only" in r.text
            # written as bytes before any app: the safe headers all the same (a browser shows it)
            assert r.headers["x-content-type-options"] == "nosniff" and r.headers["x-frame-options"] == "DENY"

        # the real MCP client over TLS, both eras and SSE: each certificate is its principal
        for mode in ("legacy", "auto"):
            async with (
                mcp_over_tls(base, alice_ctx, mode) as alice,
                mcp_over_tls(base, bob_ctx, mode) as bob,
                mcp_over_tls(base, alice_ctx, mode) as alice2,
            ):
                assert not (await alice.call_tool("sentinel__sentinel_bind", BIND)).is_error
                mine = await alice.call_tool("sentinel__sentinel_facts", {})
                assert session_line(mine).startswith("alice/") and BOUND in text(mine)
                theirs = await bob.call_tool("sentinel__sentinel_facts", {})
                assert session_line(theirs).startswith("bob/") and BOUND not in text(theirs)
                stolen = await bob.client.call_tool(
                    "sentinel__sentinel_facts", {}, meta={"sentinel/session": session_line(mine)}
                )
                assert stolen.is_error and BOUND not in text(stolen)
                other_conversation = await alice2.call_tool("sentinel__sentinel_facts", {})
                assert BOUND not in text(other_conversation)
        async with mcp_over_tls(base, bob_ctx, "legacy", transport="sse") as bob:
            assert session_line(await bob.call_tool("sentinel__sentinel_facts", {})).startswith("bob/")
        # bob by token alone (no certificate) is the same principal; a certificate with another's token is not
        async with mcp_over_tls(
            base, client_context(pki), "auto", headers={"Authorization": f"Bearer {BOB}"}
        ) as bob:
            assert session_line(await bob.call_tool("sentinel__sentinel_facts", {})).startswith("bob/")
        async with httpx2.AsyncClient(verify=alice_ctx, timeout=10) as http:
            r = await http.post(
                f"{base}/mcp", json=PING, headers={**ACCEPT, "Authorization": f"Bearer {BOB}"}
            )
            said = r.json()["error"]["message"]
            assert r.status_code == 401 and "names 'alice' but the token does not" in said

        # refused certificates: a clear TLS alert for the client, a line in the audit log for the owner
        assert "CERTIFICATE_EXPIRED" in await refused(base, client_context(pki, pki.expired))
        assert "CERTIFICATE_REVOKED" in await refused(base, client_context(pki, pki.revoked))
        assert "UNKNOWN_CA" in await refused(base, client_context(pki, pki.stranger))
        async with httpx2.AsyncClient(verify=client_context(pki, pki.carol), timeout=10) as http:
            r = await http.post(f"{base}/mcp", json=PING, headers=ACCEPT)
            assert r.status_code == 401 and "names no principal" in r.json()["error"]["message"]
        rows = await audit_rows(cfg, at_least=5)
        reasons = [r["reason"] for r in rows]
        assert any("certificate has expired" in x for x in reasons), reasons
        assert any("certificate revoked" in x for x in reasons), reasons
        assert any("unable to get local issuer certificate" in x for x in reasons), reasons
        carol = next(r for r in rows if "names no principal" in r["reason"])
        assert (
            carol["arguments"]["subject"] == "CN=carol,O=Sentinel"
            and carol["tool"] == "tls/client-certificate"
        )
        assert carol["arguments"]["sha256"] == pki.carol.sha256
        mixed = next(r for r in rows if "but the token does not" in r["reason"])
        assert mixed["principal"] == "alice"
        assert all(r["decision"] == "deny" and r["client"] == "127.0.0.1" for r in rows)


async def test_required_mode_and_a_revocation_while_running(tmp_path, pki):
    cfg = tls_config(tmp_path, pki, mode="required")
    operator = _operator_of(cfg, pki)
    bob_ctx = client_context(pki, pki.bob)
    with https_sentinel(cfg, pki) as (base, _):
        # a token is not enough when certificates are required: refused in the handshake
        assert "CERTIFICATE_REQUIRED" in await refused(base, client_context(pki))
        async with httpx2.AsyncClient(verify=bob_ctx, timeout=10) as kept_alive:
            r = await kept_alive.post(f"{base}/mcp", json=PING, headers=ACCEPT)
            assert r.status_code not in (401, 403, 421), r.text
            async with httpx2.AsyncClient(verify=operator, timeout=10) as http:
                health = (await http.get(f"{base}/healthz")).json()
            assert health["tls"]["client_certificates"] == "required"
            # the owner revokes bob's certificate while Sentinel runs: new connections are refused, and so is
            # the next request on a connection opened before
            pki.ca.revoke(f"{pki.bob.serial:x}")
            import asyncio

            await asyncio.sleep(1.1)  # the front looks at its files at most once a second
            r = await kept_alive.post(f"{base}/mcp", json=PING, headers=ACCEPT)
            assert r.status_code == 401 and "revoked" in r.json()["error"]["message"]
        assert "CERTIFICATE_REVOKED" in await refused(base, bob_ctx)
        rows = await audit_rows(cfg, at_least=3)
        reasons = [r["reason"] for r in rows]
        assert any("none presented" in x for x in reasons), reasons
        assert any("has been revoked" in x for x in reasons) and any(
            "certificate revoked" in x for x in reasons
        )


async def test_metrics_and_oauth_metadata_over_tls_by_certificate(tmp_path, pki):
    """main's /metrics (the whole view for the operator's certificate, its own calls' series for any other
    person's) and OAuth protected-resource metadata served on the TLS front: the principal is the client
    certificate's; the metadata names https."""
    from tests.tls.tls_rig import subject_of

    principals = [
        {"name": "alice", "certificate": subject_of("alice"), "tools": ["bk__list_bookings"]},
        {"name": "bob", "token": BOB, "certificate": subject_of("bob")},
    ]
    tls = {
        "cert": str(pki.server.cert),
        "key": str(pki.server.key),
        "ca": str(pki.ca.ca_cert_path),
        "crl": str(pki.ca.crl_path),
        "owner": subject_of("owner"),
    }
    owner = pki.ca.issue_client("owner")
    cfg = tls_config(
        tmp_path, pki, principals=principals, http={"tls": tls}, oauth={"issuer": "https://auth.example"}
    )
    with https_sentinel(cfg, pki) as (base, _):
        async with httpx2.AsyncClient(verify=client_context(pki, owner), timeout=20) as operator:
            metrics = await operator.get(f"{base}/metrics")
            assert metrics.status_code == 200 and "sentinel_upstream_up" in metrics.text  # the operator's
        async with httpx2.AsyncClient(verify=client_context(pki, pki.bob), timeout=20) as bob:
            metrics = await bob.get(f"{base}/metrics")
            # bob may reach everything, but the upstreams' figures move with everyone's calls: not his
            assert metrics.status_code == 200 and "sentinel_upstream" not in metrics.text, metrics.text
            prm = (await bob.get(f"{base}/.well-known/oauth-protected-resource")).json()
            assert prm["authorization_servers"] == ["https://auth.example"] and prm["resource"].startswith(
                "https://"
            )
        async with httpx2.AsyncClient(verify=client_context(pki, pki.alice), timeout=20) as alice:
            metrics = await alice.get(f"{base}/metrics")  # restricted: her own calls, no catalog
            assert metrics.status_code == 200 and "sentinel_upstream" not in metrics.text, metrics.text
        async with httpx2.AsyncClient(verify=client_context(pki, pki.carol), timeout=20) as carol:
            unmapped = await carol.get(f"{base}/metrics")  # the CA's certificate, but nobody's
            assert unmapped.status_code == 401 and "names no principal" in unmapped.text
            assert "resource_metadata=" in unmapped.headers["www-authenticate"]
        async with httpx2.AsyncClient(verify=client_context(pki), timeout=20) as anonymous:
            assert (await anonymous.get(f"{base}/metrics")).status_code == 401
