"""Another principal's item answers exactly as one that does not exist, through every door that names one by
id: a streamable-HTTP session id (to send on, listen to with or without ``Last-Event-ID``, end), a sealed
2026-era conversation id (in ``_meta`` and in ``X-Sentinel-Session``), an A2A task id (get, cancel,
subscribe, continue), and the console's session, revoke and activity-row pages. What is compared is the whole
answer (status and body, the id itself replaced), so neither the text nor the status says "exists, not
yours". Regression tests for areas that held in red team "identity" round 3.

One real Sentinel over HTTP (the identity rig: bookings server, alice and bob), raw HTTP on 127.0.0.1."""

from __future__ import annotations

import json
import re
import uuid
from typing import Any, Iterator
from urllib.parse import unquote

import httpx2
import pytest

from tests.console.console_rig import console_config, signed_in

from .identity_rig import ALICE, BOB, http_sentinel
from .test_stdio_and_a2a import rpc, tool_call

pytestmark = pytest.mark.timeout(180)
INIT = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "a", "version": "1"},
    },
}
ACCEPT = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientInfo": {"name": "probe", "version": "1"},
    "io.modelcontextprotocol/clientCapabilities": {},
}
FACTS = {
    "jsonrpc": "2.0",
    "id": 5,
    "method": "tools/call",
    "params": {"name": "sentinel__sentinel_facts", "arguments": {}, "_meta": META},
}
MODERN = {
    **ACCEPT,
    "MCP-Protocol-Version": "2026-07-28",
    "Mcp-Method": "tools/call",
    "Mcp-Name": "sentinel__sentinel_facts",
}


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with http_sentinel(console_config(tmp_path_factory.mktemp("not-yours"))) as (url, _proc):
        yield url


def _shown(r: httpx2.Response, *ids: str) -> tuple[int, str]:
    body = r.text
    for i in ids:
        body = body.replace(i, "<id>")
    return r.status_code, body


async def _answers(
    http: httpx2.AsyncClient, method: str, url: str, headers: dict[str, str], body: Any = None
) -> tuple[int, str]:
    async with http.stream(method, url, headers=headers, json=body) as r:  # a stream's head, not its end
        if r.headers.get("content-type", "").startswith("text/event-stream"):
            return r.status_code, "<stream>"
        await r.aread()
        return r.status_code, r.text


async def test_a_session_id_of_another_principal_is_one_nobody_opened(base: str) -> None:
    async with httpx2.AsyncClient(timeout=30) as http:
        opened = await http.post(
            f"{base}/mcp", json=INIT, headers={**ACCEPT, "Authorization": f"Bearer {ALICE}"}
        )
        sid = opened.headers["mcp-session-id"]
        made_up = uuid.uuid4().hex
        ping = {"jsonrpc": "2.0", "id": 2, "method": "ping"}
        for extra in ({}, {"Last-Event-ID": "0"}, {"Last-Event-ID": f"{sid}_1"}):
            for method, body in (("GET", None), ("POST", ping), ("DELETE", None)):

                def as_bob(s: str) -> dict[str, str]:
                    return {**ACCEPT, **extra, "Authorization": f"Bearer {BOB}", "Mcp-Session-Id": s}

                hers = await _answers(http, method, f"{base}/mcp", as_bob(sid), body)
                nobodys = await _answers(http, method, f"{base}/mcp", as_bob(made_up), body)
                assert hers == nobodys and hers[0] == 404, (method, extra, hers, nobodys)
                bare = {k: v for k, v in as_bob(sid).items() if k != "Authorization"}
                assert (await _answers(http, method, f"{base}/mcp", bare, body))[0] == 401
        mine = {**ACCEPT, "Authorization": f"Bearer {ALICE}", "Mcp-Session-Id": sid}
        assert (await http.post(f"{base}/mcp", json=ping, headers=mine)).status_code == 200  # still hers


async def test_a_sealed_conversation_of_another_principal_is_one_never_issued(base: str) -> None:
    async with httpx2.AsyncClient(timeout=30) as http:
        first = await http.post(
            f"{base}/mcp", json=FACTS, headers={**MODERN, "Authorization": f"Bearer {ALICE}"}
        )
        sealed = first.json()["result"]["_meta"]["sentinel/session"]
        session = json.loads(first.text)["result"]["content"][0]["text"].split()[1].rstrip(":")
        assert session.startswith("alice/")
        forged = sealed[:-6] + ("AAAAAA" if not sealed.endswith("AAAAAA") else "BBBBBB")
        made_up_raw = "alice/conv-" + uuid.uuid4().hex[:28]

        async def as_bob(key: str, how: str) -> tuple[int, str]:
            body = json.loads(json.dumps(FACTS))
            headers = {**MODERN, "Authorization": f"Bearer {BOB}"}
            if how == "meta":
                body["params"]["_meta"] = {**META, "sentinel/session": key}
            else:
                headers["X-Sentinel-Session"] = key
            return _shown(await http.post(f"{base}/mcp", json=body, headers=headers), key)

        for how in ("meta", "header"):
            hers, never = await as_bob(sealed, how), await as_bob(forged, how)
            assert hers == never and "session_refused" in hers[1], (how, hers, never)
            hers, never = await as_bob(session, how), await as_bob(made_up_raw, how)
            assert hers == never and "session_refused" in hers[1], (how, hers, never)
            assert "alice" not in hers[1]


async def test_an_a2a_task_of_another_principal_is_one_that_does_not_exist(base: str) -> None:
    async with httpx2.AsyncClient(timeout=60) as http:
        started = await rpc(
            http, base, ALICE, "SendMessage", {"message": tool_call("sentinel__sentinel_facts", {})}
        )
        task_id = started["result"]["task"]["id"]
        made_up = str(uuid.uuid4())
        for method, params in (
            ("GetTask", {"id": "{id}"}),
            ("CancelTask", {"id": "{id}"}),
            ("SubscribeToTask", {"id": "{id}"}),
            ("SendMessage", {"message": "{message}"}),
        ):

            def for_id(i: str, method: str = method, params: dict[str, Any] = params) -> dict[str, Any]:
                if method == "SendMessage":
                    return {"message": tool_call("sentinel__sentinel_facts", {}, task_id=i)}
                return {k: i for k in params}

            hers = json.dumps(await rpc(http, base, BOB, method, for_id(task_id))).replace(task_id, "<id>")
            nobodys = json.dumps(await rpc(http, base, BOB, method, for_id(made_up))).replace(made_up, "<id>")
            hers = re.sub(r'"messageId": "[^"]+"', "", hers)
            nobodys = re.sub(r'"messageId": "[^"]+"', "", nobodys)
            assert hers == nobodys and "TASK_NOT_FOUND" in hers, (method, hers, nobodys)
        assert "result" in await rpc(http, base, ALICE, "GetTask", {"id": task_id})  # still hers


async def test_the_consoles_pages_of_another_principals_items_are_those_of_none(base: str) -> None:
    async with httpx2.AsyncClient(timeout=30) as http:  # one call of alice's: a session and an activity row
        first = await http.post(
            f"{base}/mcp", json=FACTS, headers={**MODERN, "Authorization": f"Bearer {ALICE}"}
        )
        assert first.status_code == 200
    async with signed_in(base, ALICE) as alice, signed_in(base, BOB) as bob:
        listing = await alice.page("/console/sessions")
        # each link's segment is encoded whole: alice%2Fhttp-…
        links = set(re.findall(r"/console/sessions/(alice%2F[^\"?/]+)", listing))
        sessions = sorted(unquote(s) for s in links)
        rows = sorted(set(re.findall(r"/console/activity/([^\"?/]+)", await alice.page("/console/activity"))))
        assert sessions and rows, (sessions, rows)
        sid, row = sessions[0], rows[0]
        made_up_sid = sid[:-6] + "ffffff" if not sid.endswith("ffffff") else sid[:-6] + "eeeeee"
        made_up_row = row.rsplit(".", 1)[0] + ".999999"
        for hers, nobodys in (
            (f"/console/sessions/{sid}", f"/console/sessions/{made_up_sid}"),
            (f"/console/activity/{row}", f"/console/activity/{made_up_row}"),
        ):
            a, b = await bob.get(hers), await bob.get(nobodys)
            assert _shown(a, hers) == _shown(b, nobodys) and a.status_code == 404, hers
        fact = {"fact": "today('2025-01-15')"}
        a = await bob.post(f"/console/sessions/{sid}/revoke", fact)
        b = await bob.post(f"/console/sessions/{made_up_sid}/revoke", fact)
        assert _shown(a, sid) == _shown(b, made_up_sid) and a.status_code == 404
        assert "today(" in await alice.page(f"/console/sessions/{sid}")  # nothing of hers was revoked
