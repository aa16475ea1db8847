"""A sweep: every JSON-RPC method the front answers, in both eras and over every HTTP transport, sent by one
principal (bob) at another's (alice's) object by its id: her streamable-HTTP session (``Mcp-Session-Id``), her
legacy SSE session (``/messages/?session_id=``), her conversation (a sealed id or its raw id, in
``_meta["sentinel/session"]`` and in ``X-Sentinel-Session``). Each answer is compared whole (status and
body, the id replaced) with the answer to an id nobody was given: nothing tells bob the id exists, nothing of
hers comes back. A request without credentials reaches no handler, whatever it names. One principal over two
transports is one principal: alice's conversation carried from one transport to another is hers, and an
uncarried connection starts its own.

The paths tried one at a time elsewhere (``test_not_yours_reads_as_missing``, ``test_two_principals_http``,
``test_in_flight_ids_stay_with_their_principal``, ``test_sse_in_flight_ids``, ``test_facts_resource_scoped``,
``test_utility_reach``, ``test_shared_upstream_pushes``, ``test_listen_share``) are the cases' detail; this is
the table. stdio serves its local user only (``test_stdio_and_a2a``); A2A task ids have their own table
(``test_not_yours_reads_as_missing``).

One real Sentinel over HTTP (the identity rig: the bookings server and the crossed server, which offers
subscriptions), raw HTTP on 127.0.0.1."""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
import sys
import uuid
from pathlib import Path
from typing import Any, AsyncIterator, Iterator

import httpx2
import pytest

from tests.a2a.test_ws_binding import Peer, ws_connect
from websockets.exceptions import InvalidStatus

from .identity_rig import ALICE, BOB, http_sentinel, write_config
from .test_stdio_and_a2a import tool_call

pytestmark = pytest.mark.timeout(240)
CROSSED = Path(__file__).with_name("crossed_server.py")
ACCEPT = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
HANDSHAKE = "2025-11-25"
MODERN = "2026-07-28"
META = {
    "io.modelcontextprotocol/protocolVersion": MODERN,
    "io.modelcontextprotocol/clientInfo": {"name": "sweep", "version": "1"},
    "io.modelcontextprotocol/clientCapabilities": {},
}
INIT = {"protocolVersion": HANDSHAKE, "capabilities": {}, "clientInfo": {"name": "sweep", "version": "1"}}
BIND = {"context": "booking_of_interest", "value": "BK-789"}
BOUND = "BK-789"
FACTS_TOOL = "sentinel__sentinel_facts"
FACTS_URI = "sentinel://facts"
COMPLETE = {"ref": {"type": "ref/resource", "uri": "doc://alice"}, "argument": {"name": "a", "value": ""},
            "context": {"arguments": {"session": "x"}}}
# a call with a progress token is served by the SDK's transport; one without, by the lean paths
# (``app/lean_calls.py``, ``app/lean_session_calls.py``): each door is tried on both
SDK_PATH_CALL = {"name": FACTS_TOOL, "arguments": {}, "_meta": {"progressToken": 5}}

# every request method of the handshake era (the front's allow list), with params that name something
REQUESTS_2025: list[tuple[str, dict[str, Any]]] = [
    ("ping", {}),
    ("tools/list", {}),
    ("tools/call", {"name": FACTS_TOOL, "arguments": {}}),
    ("tools/call", SDK_PATH_CALL),
    ("resources/list", {}),
    ("resources/templates/list", {}),
    ("resources/read", {"uri": FACTS_URI}),
    ("resources/subscribe", {"uri": "doc://alice"}),
    ("resources/unsubscribe", {"uri": "doc://alice"}),
    ("prompts/list", {}),
    ("prompts/get", {"name": "nothing"}),
    ("completion/complete", COMPLETE),
    ("logging/setLevel", {"level": "debug"}),
]
NOTIFICATIONS_2025: list[tuple[str, dict[str, Any]]] = [
    ("notifications/initialized", {}),
    ("notifications/cancelled", {"requestId": 1, "reason": "sweep"}),
    ("notifications/progress", {"progressToken": 1, "progress": 1}),
    ("notifications/roots/list_changed", {}),
]
# what a client sends back to a request of Sentinel's (an elicitation's answer, roots, sampling)
RESPONSES_2025: list[dict[str, Any]] = [
    {"jsonrpc": "2.0", "id": 0, "result": {"action": "accept", "content": {"approve": True}}},
    {"jsonrpc": "2.0", "id": 1, "error": {"code": -1, "message": "declined"}},
]
# the 2026-07-28 era: single requests (no handshake, no subscribe: a listen stream instead)
REQUESTS_2026: list[tuple[str, dict[str, Any]]] = [
    ("server/discover", {}),
    ("tools/list", {}),
    ("tools/call", {"name": FACTS_TOOL, "arguments": {}}),
    ("tools/call", SDK_PATH_CALL),
    ("resources/list", {}),
    ("resources/templates/list", {}),
    ("resources/read", {"uri": FACTS_URI}),
    ("prompts/list", {}),
    ("prompts/get", {"name": "nothing"}),
    ("completion/complete", COMPLETE),
]
# the methods that read a conversation's state: alice's fact is what bob must never see through them
STATEFUL = {"tools/call", "resources/read"}


def _config(tmp: Path) -> Path:
    cfg = write_config(tmp)
    body = json.loads(cfg.read_text())
    body["mcpServers"]["cx"] = {"command": sys.executable, "args": [str(CROSSED)]}
    cfg.write_text(json.dumps(body))
    return cfg


def _messages(r: httpx2.Response) -> list[Any]:
    """A POST's answer as JSON-RPC messages (a JSON body, or the ``data:`` lines of an event stream)."""
    if r.headers.get("content-type", "").startswith("text/event-stream"):
        data = [line[5:] for line in r.text.splitlines() if line.startswith("data:")]
        return [json.loads(d) for d in data if d.strip()]
    try:
        return [json.loads(r.text)] if r.text else []
    except json.JSONDecodeError:
        return [r.text]


def _shown(status: int, body: Any, *ids: str) -> tuple[int, str]:
    text = json.dumps(body, sort_keys=True) if not isinstance(body, str) else body
    for i in sorted(ids, key=len, reverse=True):
        text = text.replace(i, "<id>")
    return status, text


def _request(method: str, params: dict[str, Any], rid: int = 9, modern: bool = False) -> dict[str, Any]:
    p = json.loads(json.dumps(params))
    if modern:
        p["_meta"] = {**META, **p.get("_meta", {})}
    return {"jsonrpc": "2.0", "id": rid, "method": method, "params": p}


def _modern_headers(token: str | None, method: str, params: dict[str, Any]) -> dict[str, str]:
    h = {**ACCEPT, "MCP-Protocol-Version": MODERN, "Mcp-Method": method}
    if token:
        h["Authorization"] = f"Bearer {token}"
    name = params.get("name") or params.get("uri")
    if method in ("tools/call", "prompts/get", "resources/read") and name:
        h["Mcp-Name"] = name
    return h


class SseSession:
    """A legacy SSE session: its endpoint, and the answers its stream carries, by request id."""

    def __init__(self, http: httpx2.AsyncClient, base: str, token: str, lines: Any, endpoint: str) -> None:
        self.http, self.base, self.token, self.lines, self.endpoint = http, base, token, lines, endpoint
        self.session_id = endpoint.split("session_id=")[1]
        self._ids = iter(range(100, 10_000))

    async def post(self, body: dict[str, Any], token: str | None = None,
                   extra: dict[str, str] | None = None) -> httpx2.Response:
        headers = {"Content-Type": "application/json", **(extra or {})}
        if token or self.token:
            headers["Authorization"] = f"Bearer {token or self.token}"
        return await self.http.post(f"{self.base}{self.endpoint}", content=json.dumps(body), headers=headers)

    async def ask(self, method: str, params: dict[str, Any], extra: dict[str, str] | None = None) -> Any:
        rid = next(self._ids)
        r = await self.post({"jsonrpc": "2.0", "id": rid, "method": method, "params": params}, extra=extra)
        assert r.status_code == 202, (method, r.status_code, r.text)
        while True:
            line = await self.lines.__anext__()
            if line.startswith("data:") and line[5:].strip():
                msg = json.loads(line[5:])
                if isinstance(msg, dict) and msg.get("id") == rid:
                    return msg


@contextlib.asynccontextmanager
async def sse_session(http: httpx2.AsyncClient, base: str, token: str, modern: bool = False
                      ) -> AsyncIterator[SseSession]:
    """A legacy SSE session, opened with the handshake (or, ``modern``, by its first enveloped request)."""
    async with http.stream("GET", f"{base}/sse", headers={"Authorization": f"Bearer {token}"}) as stream:
        assert stream.status_code == 200
        lines = stream.aiter_lines()
        endpoint = None
        while endpoint is None:
            line = await lines.__anext__()
            if line.startswith("data:") and "session_id=" in line:
                endpoint = line[5:].strip()
        s = SseSession(http, base, token, lines, endpoint)
        if not modern:
            await s.ask("initialize", INIT)
            ready = {"jsonrpc": "2.0", "method": "notifications/initialized"}
            assert (await s.post(ready)).status_code == 202
        try:
            yield s
        finally:
            await lines.aclose()


async def _handshake(http: httpx2.AsyncClient, base: str, token: str) -> str:
    auth = {**ACCEPT, "Authorization": f"Bearer {token}"}
    opened = await http.post(f"{base}/mcp", json=_request("initialize", INIT, 1), headers=auth)
    assert opened.status_code == 200, opened.text
    sid = opened.headers["mcp-session-id"]
    done = await http.post(f"{base}/mcp", json={"jsonrpc": "2.0", "method": "notifications/initialized"},
                           headers={**auth, "Mcp-Session-Id": sid, "MCP-Protocol-Version": HANDSHAKE})
    assert done.status_code == 202, done.text
    return sid


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with http_sentinel(_config(tmp_path_factory.mktemp("every-door"))) as (url, _proc):
        yield url


@pytest.fixture(scope="module")
def alices(base: str) -> dict[str, str]:
    """Alice's objects: a conversation with a fact bound (sealed and raw ids), a streamable-HTTP session."""
    return asyncio.run(_alices(base))


async def _alices(base: str) -> dict[str, str]:
    async with httpx2.AsyncClient(timeout=60) as http:
        params = {"name": "sentinel__sentinel_bind", "arguments": BIND}
        bound = await http.post(f"{base}/mcp", json=_request("tools/call", params, modern=True),
                                headers=_modern_headers(ALICE, "tools/call", params))
        result = _messages(bound)[-1]["result"]
        assert not result.get("isError"), result
        sealed = result["_meta"]["sentinel/session"]
        params = {"name": FACTS_TOOL, "arguments": {}, "_meta": {"sentinel/session": sealed}}
        facts = await http.post(f"{base}/mcp", json=_request("tools/call", params, modern=True),
                                headers=_modern_headers(ALICE, "tools/call", params))
        text = _messages(facts)[-1]["result"]["content"][0]["text"]
        assert BOUND in text, text
        raw = text.split()[1].rstrip(":")
        assert raw.startswith("alice/"), raw
        return {"sealed": sealed, "raw": raw, "mcp_session": await _handshake(http, base, ALICE)}


def _every_message() -> list[tuple[str, dict[str, Any]]]:
    """Every message a handshake-era client sends: requests, notifications, responses."""
    out = [(m, _request(m, p)) for m, p in REQUESTS_2025 + [("initialize", INIT)]]
    out += [(m, {"jsonrpc": "2.0", "method": m, "params": p}) for m, p in NOTIFICATIONS_2025]
    return out + [(f"response {r['id']}", r) for r in RESPONSES_2025]


def _forged(sealed: str) -> str:
    return sealed[:-6] + ("AAAAAA" if not sealed.endswith("AAAAAA") else "BBBBBB")


def _made_up_raw(raw: str) -> str:
    return raw.split("/", 1)[0] + "/conv-" + uuid.uuid4().hex[:28]


async def test_every_method_on_another_principals_mcp_session_is_as_on_none(base: str, alices: dict) -> None:
    hers, made_up = alices["mcp_session"], uuid.uuid4().hex
    wrong: list[Any] = []
    async with httpx2.AsyncClient(timeout=30) as http:
        for method, body in _every_message():
            answers = []
            for sid in (hers, made_up):
                h = {**ACCEPT, "Authorization": f"Bearer {BOB}", "Mcp-Session-Id": sid,
                     "MCP-Protocol-Version": HANDSHAKE}
                r = await http.post(f"{base}/mcp", json=body, headers=h)
                answers.append(_shown(r.status_code, _messages(r), sid))
            if answers[0] != answers[1] or answers[0][0] != 404:
                wrong.append((method, answers))
        # her session id under a 2026-era request (which the lean path leaves to the SDK)
        for method, params in REQUESTS_2026:
            answers = []
            for sid in (hers, made_up):
                h = {**_modern_headers(BOB, method, params), "Mcp-Session-Id": sid}
                r = await http.post(f"{base}/mcp", json=_request(method, params, modern=True), headers=h)
                answers.append(_shown(r.status_code, _without_stamps(_messages(r)), sid))
            if answers[0] != answers[1] or BOUND in answers[0][1]:
                wrong.append(("2026", method, answers))
        # her session still answers her
        h = {**ACCEPT, "Authorization": f"Bearer {ALICE}", "Mcp-Session-Id": hers,
             "MCP-Protocol-Version": HANDSHAKE}
        assert (await http.post(f"{base}/mcp", json=_request("ping", {}), headers=h)).status_code == 200
    assert not wrong, wrong


async def test_every_method_on_another_principals_sse_session_is_as_on_none(base: str) -> None:
    wrong: list[Any] = []
    async with httpx2.AsyncClient(timeout=30) as http, sse_session(http, base, ALICE) as hers:
        made_up = uuid.uuid4().hex
        for method, body in _every_message():
            answers = []
            for sid in (hers.session_id, made_up):
                r = await http.post(f"{base}/messages/?session_id={sid}", content=json.dumps(body),
                                    headers={"Content-Type": "application/json",
                                             "Authorization": f"Bearer {BOB}"})
                answers.append(_shown(r.status_code, r.text, sid))
            if answers[0] != answers[1] or answers[0][0] != 404:
                wrong.append((method, answers))
        assert (await hers.ask("ping", {})).get("result") == {}  # still hers
    assert not wrong, wrong


async def _modern_answer(http: httpx2.AsyncClient, base: str, token: str, method: str, params: dict[str, Any],
                         key: str | None, how: str) -> tuple[int, Any]:
    p = json.loads(json.dumps(params))
    headers = _modern_headers(token, method, params)
    if key is not None and how == "meta":
        p["_meta"] = {**p.get("_meta", {}), "sentinel/session": key}
    elif key is not None:
        headers["X-Sentinel-Session"] = key
    r = await http.post(f"{base}/mcp", json=_request(method, p, modern=True), headers=headers)
    return r.status_code, _messages(r)


def _without_stamps(answer: Any) -> Any:
    """An answer with what differs call to call taken out (a decision's id, a sealed session handed back)."""
    text = json.dumps(answer, sort_keys=True)
    return re.sub(r'"(sentinel/decision_id|sentinel/session)": "[^"]*"', r'"\1": "-"', text)


async def test_every_method_naming_another_principals_conversation_is_as_naming_none(
    base: str, alices: dict
) -> None:
    """2026-era single requests, a 2025-era session of bob's own and a legacy SSE session of bob's own, each
    method naming alice's conversation (sealed id, raw id; in ``_meta`` and in the header)."""
    wrong: list[Any] = []
    pairs = [(alices["sealed"], _forged(alices["sealed"])), (alices["raw"], _made_up_raw(alices["raw"]))]
    async with httpx2.AsyncClient(timeout=60) as http:
        # 2026-07-28
        for method, params in REQUESTS_2026:
            for hers, nobodys in pairs:
                for how in ("meta", "header"):
                    a = await _modern_answer(http, base, BOB, method, params, hers, how)
                    b = await _modern_answer(http, base, BOB, method, params, nobodys, how)
                    shown_a = _shown(a[0], _without_stamps(a[1]), hers)
                    shown_b = _shown(b[0], _without_stamps(b[1]), nobodys)
                    if shown_a != shown_b or BOUND in json.dumps(a[1]) or (
                        method in STATEFUL and "not yours" not in shown_a[1]
                    ):
                        wrong.append(("2026", method, how, shown_a, shown_b))
        # 2025-11-25 over streamable HTTP, bob's own session
        sid = await _handshake(http, base, BOB)
        for method, params in REQUESTS_2025:
            for hers, nobodys in pairs:
                for how in ("meta", "header"):
                    shown = []
                    for key in (hers, nobodys):
                        p = json.loads(json.dumps(params))
                        h = {**ACCEPT, "Authorization": f"Bearer {BOB}", "Mcp-Session-Id": sid,
                             "MCP-Protocol-Version": HANDSHAKE}
                        if how == "meta":
                            p["_meta"] = {**p.get("_meta", {}), "sentinel/session": key}
                        else:
                            h["X-Sentinel-Session"] = key
                        r = await http.post(f"{base}/mcp", json=_request(method, p), headers=h)
                        if BOUND in r.text:
                            wrong.append(("2025", method, how, "her fact", r.text[:300]))
                        shown.append(_shown(r.status_code, _without_stamps(_messages(r)), key))
                    if shown[0] != shown[1] or (method in STATEFUL and "not yours" not in shown[0][1]):
                        wrong.append(("2025", method, how, *shown))
        # 2025-11-25 over legacy SSE, bob's own session
        async with sse_session(http, base, BOB) as bob:
            for method, params in REQUESTS_2025:
                for hers, nobodys in pairs:
                    for how in ("meta", "header"):
                        shown = []
                        for key in (hers, nobodys):
                            p = json.loads(json.dumps(params))
                            extra = {}
                            if how == "meta":
                                p["_meta"] = {**p.get("_meta", {}), "sentinel/session": key}
                            else:
                                extra["X-Sentinel-Session"] = key
                            msg = await bob.ask(method, p, extra)
                            if BOUND in json.dumps(msg):
                                wrong.append(("sse", method, how, "her fact", json.dumps(msg)[:300]))
                            msg.pop("id", None)
                            shown.append(_shown(200, _without_stamps(msg), key))
                        if shown[0] != shown[1] or (method in STATEFUL and "not yours" not in shown[0][1]):
                            wrong.append(("sse", method, how, *shown))
        # 2026-07-28 over legacy SSE, bob's own session
        async with sse_session(http, base, BOB, modern=True) as bob:
            for method, params in REQUESTS_2026:
                for hers, nobodys in pairs:
                    for how in ("meta", "header"):
                        shown = []
                        for key in (hers, nobodys):
                            p = json.loads(json.dumps(params))
                            p["_meta"] = {**META, **p.get("_meta", {})}
                            extra = {}
                            if how == "meta":
                                p["_meta"]["sentinel/session"] = key
                            else:
                                extra["X-Sentinel-Session"] = key
                            msg = await bob.ask(method, p, extra)
                            if BOUND in json.dumps(msg):
                                wrong.append(("sse 2026", method, how, "her fact", json.dumps(msg)[:300]))
                            msg.pop("id", None)
                            shown.append(_shown(200, _without_stamps(msg), key))
                        if shown[0] != shown[1] or (method in STATEFUL and "not yours" not in shown[0][1]):
                            wrong.append(("sse 2026", method, how, *shown))
    assert not wrong, json.dumps(wrong, indent=1)[:6000]


async def test_no_request_without_credentials_reaches_a_handler(base: str, alices: dict) -> None:
    wrong: list[Any] = []
    async with httpx2.AsyncClient(timeout=30) as http:
        for method, params in REQUESTS_2025 + NOTIFICATIONS_2025 + [("initialize", INIT)]:
            body = _request(method, params)
            for sid in (None, alices["mcp_session"], uuid.uuid4().hex):
                h = {**ACCEPT, **({"Mcp-Session-Id": sid} if sid else {})}
                r = await http.post(f"{base}/mcp", json=body, headers=h)
                if r.status_code != 401 or "mcp-session-id" in r.headers:
                    wrong.append(("2025", method, sid, r.status_code, r.text[:200]))
        for method, params in REQUESTS_2026:
            for key in (None, alices["sealed"]):
                p = json.loads(json.dumps(params))
                if key:
                    p["_meta"] = {**p.get("_meta", {}), "sentinel/session": key}
                r = await http.post(f"{base}/mcp", json=_request(method, p, modern=True),
                                    headers=_modern_headers(None, method, params))
                if r.status_code != 401 or BOUND in r.text:
                    wrong.append(("2026", method, key, r.status_code, r.text[:200]))
        if (await http.get(f"{base}/sse")).status_code != 401:
            wrong.append(("sse", "GET"))
        for method in ("SendMessage", "GetTask", "CancelTask", "ListTasks", "SubscribeToTask"):
            r = await http.post(f"{base}/a2a", headers={"A2A-Version": "1.0"}, json={
                "jsonrpc": "2.0", "id": 1, "method": method, "params": {"id": "x"}})
            if r.status_code != 401:
                wrong.append(("a2a", method, r.status_code, r.text[:200]))
        try:
            async with ws_connect(base.replace("http", "ws") + "/a2a/ws",
                                  additional_headers={"A2A-Version": "1.0"}):
                wrong.append(("a2a/ws", "upgraded without credentials"))
        except InvalidStatus as e:
            if e.response.status_code not in (401, 403):  # (a socket refused before it is accepted: 403)
                wrong.append(("a2a/ws", e.response.status_code))
        async with sse_session(http, base, ALICE) as hers:
            for method, params in REQUESTS_2025 + [("initialize", INIT)]:
                r = await http.post(f"{base}{hers.endpoint}", content=json.dumps(_request(method, params)),
                                    headers={"Content-Type": "application/json"})
                if r.status_code != 401:
                    wrong.append(("sse", method, r.status_code, r.text[:200]))
            assert (await hers.ask("ping", {})).get("result") == {}
    assert not wrong, wrong


async def test_one_principal_over_two_transports_is_one_principal_and_each_connection_its_own(
    base: str, alices: dict
) -> None:
    """Alice's conversation, carried by her over a 2025-era session and over legacy SSE, is hers there too;
    a connection of hers that carries nothing starts a conversation of its own (no fact of the other)."""
    async with httpx2.AsyncClient(timeout=60) as http:
        sid = await _handshake(http, base, ALICE)
        h = {**ACCEPT, "Authorization": f"Bearer {ALICE}", "Mcp-Session-Id": sid,
             "MCP-Protocol-Version": HANDSHAKE}
        call = _request("tools/call", {"name": FACTS_TOOL, "arguments": {}})
        uncarried = await http.post(f"{base}/mcp", json=call, headers=h)
        assert uncarried.status_code == 200 and BOUND not in uncarried.text, uncarried.text
        carried = await http.post(
            f"{base}/mcp",
            json=_request("tools/call", {"name": FACTS_TOOL, "arguments": {},
                                         "_meta": {"sentinel/session": alices["sealed"]}}), headers=h)
        assert BOUND in carried.text, carried.text
        async with sse_session(http, base, ALICE) as sse:
            plain = await sse.ask("resources/read", {"uri": FACTS_URI})
            assert BOUND not in json.dumps(plain), plain
            named = await sse.ask("resources/read", {"uri": FACTS_URI},
                                  {"X-Sentinel-Session": alices["sealed"]})
            assert BOUND in json.dumps(named), named


async def test_an_a2a_peer_naming_another_peers_task_chat_or_context_is_as_naming_none(base: str) -> None:
    """A2A over HTTP JSON-RPC and over the WebSocket binding: bob naming alice's task, her chat channel or her
    context gets the answer a made-up one gets."""
    def a2a(token: str) -> dict[str, str]:
        return {"Authorization": f"Bearer {token}", "A2A-Version": "1.0"}

    async with httpx2.AsyncClient(timeout=60) as http:
        started = await http.post(f"{base}/a2a", headers=a2a(ALICE), json={
            "jsonrpc": "2.0", "id": 1, "method": "SendMessage",
            "params": {"message": tool_call("sentinel__sentinel_bind", BIND, context_id="alices-plans")}})
        task = started.json()["result"]["task"]
        hers = {"task": task["id"], "context": task["contextId"]}
        made_up = {"task": str(uuid.uuid4()), "context": "made-up-" + uuid.uuid4().hex[:8]}

        def params_for(method: str, ids: dict[str, str]) -> dict[str, Any]:
            if method == "SendMessage":
                return {"message": tool_call("sentinel__sentinel_facts", {}, task_id=ids["task"])}
            if method == "SendMessage in her context":
                return {"message": tool_call("sentinel__sentinel_facts", {}, context_id=ids["context"])}
            if method == "ListTasks":
                return {"contextId": ids["context"]}
            return {"id": ids["task"]}

        methods = ["GetTask", "CancelTask", "SubscribeToTask", "SendMessage", "ListTasks"]
        wrong: list[Any] = []

        def shown(answer: Any, ids: dict[str, str]) -> str:
            text = json.dumps(answer, sort_keys=True)
            text = re.sub(r'"(messageId|id|contextId|timestamp)": "[^"]*"', "", text)
            for i in ids.values():
                text = text.replace(i, "<id>")
            return re.sub(r"/a2a-[^\"]*", "", text)

        for method in methods:
            answers = []
            for ids in (hers, made_up):
                r = await http.post(f"{base}/a2a", headers=a2a(BOB), json={
                    "jsonrpc": "2.0", "id": 2, "method": method, "params": params_for(method, ids)})
                answers.append((r.status_code, shown(r.text if "stream" in r.headers.get("content-type", "")
                                                     else r.json(), ids)))
            if answers[0] != answers[1] or BOUND in answers[0][1]:
                wrong.append(("http", method, answers))
        url = base.replace("http", "ws") + "/a2a/ws"
        async with ws_connect(url, additional_headers=a2a(ALICE)) as ws:
            channel = (await Peer(ws).call("chat_open", {}))["result"]["channel_id"]
        async with ws_connect(url, additional_headers=a2a(BOB)) as ws:
            bob = Peer(ws)
            for method in methods + ["chat_message", "chat_close"]:
                answers = []
                for ids, chan in ((hers, channel), (made_up, str(uuid.uuid4()))):
                    if method.startswith("chat_"):
                        params = {"channel_id": chan, **({"text": "hi"} if method == "chat_message" else {})}
                    else:
                        params = params_for(method, ids)
                    got = await bob.call(method, params)
                    got.pop("id", None)  # the frame's own id, one per request
                    answers.append(shown(got, {**ids, "channel": chan}))
                if answers[0] != answers[1] or BOUND in answers[0]:
                    wrong.append(("ws", method, answers))
        # her context named by bob is a context of bob's: her fact is not in it
        mine = await http.post(f"{base}/a2a", headers=a2a(BOB), json={
            "jsonrpc": "2.0", "id": 3, "method": "SendMessage",
            "params": params_for("SendMessage in her context", hers)})
        if BOUND in mine.text:
            wrong.append(("http", "SendMessage in her context", mine.text[:300]))
        got = (await http.post(f"{base}/a2a", headers=a2a(ALICE), json={
            "jsonrpc": "2.0", "id": 4, "method": "GetTask", "params": {"id": hers["task"]}})).json()
        assert "result" in got, got  # still hers
    assert not wrong, json.dumps(wrong, indent=1)[:6000]


async def test_another_principals_request_state_is_answered_as_one_never_issued(base: str) -> None:
    """A 2026-era answer round: alice's sealed state (with answers) retried by bob reads exactly as a state
    Sentinel never issued (her state is not even confirmed live), and her round is still hers to finish."""
    asks = {**META, "io.modelcontextprotocol/clientCapabilities": {"elicitation": {"form": {}}}}
    params: dict[str, Any] = {"name": "bk__get_booking", "arguments": {"booking_id": "BK-789"}}

    async def call(http: httpx2.AsyncClient, token: str, extra: dict[str, Any]) -> Any:
        p = {**params, **extra, "_meta": asks}
        body = {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": p}
        r = await http.post(f"{base}/mcp", json=body, headers=_modern_headers(token, "tools/call", params))
        return _messages(r)[-1]

    async with httpx2.AsyncClient(timeout=60) as http:
        asked = (await call(http, ALICE, {}))["result"]
        state, key = asked["requestState"], next(iter(asked["inputRequests"]))
        yes = {key: {"action": "accept", "content": {"allow": True, "remember": False}}}
        hers = await call(http, BOB, {"inputResponses": yes, "requestState": state})
        never = await call(http, BOB, {"inputResponses": yes, "requestState": _forged(state)})
        shown = [_shown(200, _without_stamps(m), s) for m, s in ((hers, state), (never, _forged(state)))]
        assert shown[0] == shown[1] and "request state" in shown[0][1], shown
        done = (await call(http, ALICE, {"inputResponses": yes, "requestState": state}))["result"]
        assert not done.get("isError"), done  # still hers, and unused
