"""Another principal's conversation key in the spellings a client should not send (red team "red26"): bob,
holding alice's sealed id or her raw id (a label's id, which anyone can guess: ``alice/label-work-<epoch>``),
sends it in ``_meta["sentinel/session"]`` and in ``X-Sentinel-Session`` spelt with a look-alike letter, a
full-width or doubled slash, an encoded slash, invisible or Unicode-space characters, a control character, in
capitals, the seal's prefix in capitals, as another JSON type, or a megabyte long, in both eras (a 2026-era
request on the lean path, a call on a handshake-era session, one on a legacy SSE session). Every spelling is
refused or names a conversation of bob's own: nothing of alice's comes back. ``test_two_principals_http``
tries the exact key and four spellings; ``test_every_method_every_door`` every method with the exact key.

A legacy SSE session's id is read as a UUID by the SDK (capitals, dashes, braces and ``urn:uuid:`` name the
same session), so those spellings of alice's id reach her session: bob's post under any of them is answered
as one under an id nobody was given, alice's own is taken (what shows the spelling names her session, so the
owner check, ``sse_session_owners``, is all that stands between).

A real Sentinel over HTTP (the identity rig), raw HTTP on 127.0.0.1."""

from __future__ import annotations

import asyncio
import json
import uuid
from typing import Any, Iterator

import httpx2
import pytest

from .identity_rig import ALICE, BOB, http_sentinel, write_config
from .test_every_method_every_door import (
    ACCEPT,
    BIND,
    BOUND,
    FACTS_TOOL,
    HANDSHAKE,
    _handshake,
    _messages,
    _modern_headers,
    _request,
    sse_session,
)

pytestmark = pytest.mark.timeout(240)
LABEL = "work"


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with http_sentinel(write_config(tmp_path_factory.mktemp("key-spellings"))) as (url, _proc):
        yield url


async def _modern(http: httpx2.AsyncClient, base: str, token: str, name: str, arguments: dict[str, Any],
                  meta: dict[str, Any] | None = None, headers: dict[str, str] | None = None) -> Any:
    params: dict[str, Any] = {"name": name, "arguments": arguments, "_meta": meta or {}}
    r = await http.post(f"{base}/mcp", json=_request("tools/call", params, modern=True),
                        headers={**_modern_headers(token, "tools/call", params), **(headers or {})})
    return r.status_code, _messages(r)


@pytest.fixture(scope="module")
def alices(base: str) -> dict[str, str]:
    """Alice's labelled conversation, a fact bound in it: its sealed id and its raw id."""
    async def made() -> dict[str, str]:
        async with httpx2.AsyncClient(timeout=60) as http:
            _, bound = await _modern(http, base, ALICE, "sentinel__sentinel_bind", BIND,
                                     {"sentinel/session": LABEL})
            sealed = bound[-1]["result"]["_meta"]["sentinel/session"]
            _, seen = await _modern(http, base, ALICE, FACTS_TOOL, {}, {"sentinel/session": sealed})
            text = seen[-1]["result"]["content"][0]["text"]
            assert BOUND in text, text  # the rig works: her own key shows her fact
            raw = text.split()[1].rstrip(":")
            assert raw.startswith(f"alice/label-{LABEL}-"), raw
            return {"sealed": sealed, "raw": raw}
    return asyncio.run(made())


def _spellings(sealed: str, raw: str) -> dict[str, Any]:
    rest = raw.split("/", 1)[1]
    return {
        "raw": raw,
        "sealed": sealed,
        "look-alike a (Cyrillic)": "\u0430lice/" + rest,
        "full-width slash": "alice\uff0f" + rest,
        "doubled slash": "alice//" + rest,
        "encoded slash": "alice%2F" + rest,
        "zero-width space after": raw + "\u200b",
        "no-break space after": raw + "\u00a0",
        "line separator around the seal": "\u2028" + sealed + "\u2028",
        "unit separator after": raw + "\x1f",
        "capitals": raw.upper(),
        "the seal's prefix in capitals": sealed[:len("sentinel2.")].upper() + sealed[len("sentinel2."):],
        "her label's id as a label": raw.split("/", 1)[1],
        "a number": 5,
        "a list": [raw],
        "an object": {"session": raw},
        "a megabyte": raw + "x" * 1_000_000,
    }


def _hers(answer: Any) -> bool:
    """Whether anything of alice's conversation is in an answer."""
    text = json.dumps(answer)
    return BOUND in text or "alice/" in text


def _own_or_refused(answer: Any) -> bool:
    """A refusal (an HTTP error, a JSON-RPC error, a result marked refused), or bob's own conversation."""
    status, messages = answer
    if status >= 400 or not messages or "error" in messages[-1]:
        return True
    result = messages[-1]["result"]
    if result.get("_meta", {}).get("sentinel/error") == "session_refused":
        return True
    return not result.get("isError") and result["content"][0]["text"].startswith("Session bob/")


async def test_no_spelling_of_alices_key_opens_her_conversation_to_bob_in_the_2026_era(
        base: str, alices: dict[str, str]) -> None:
    wrong: list[tuple[str, str, Any]] = []
    async with httpx2.AsyncClient(timeout=60) as http:
        for name, key in _spellings(alices["sealed"], alices["raw"]).items():
            answer = await _modern(http, base, BOB, FACTS_TOOL, {}, {"sentinel/session": key})
            if _hers(answer) or not _own_or_refused(answer):
                wrong.append((name, "_meta", answer))
            if isinstance(key, str) and key.isascii() and key.isprintable():  # what a header can carry
                answer = await _modern(http, base, BOB, FACTS_TOOL, {}, headers={"X-Sentinel-Session": key})
                if _hers(answer) or not _own_or_refused(answer):
                    wrong.append((name, "header", answer))
    assert not wrong, [(n, w, json.dumps(a)[:300]) for n, w, a in wrong]


async def test_no_spelling_of_alices_key_opens_her_conversation_to_bob_on_a_handshake_session(
        base: str, alices: dict[str, str]) -> None:
    wrong: list[tuple[str, str, Any]] = []
    async with httpx2.AsyncClient(timeout=60) as http:
        sid = await _handshake(http, base, BOB)
        session = {**ACCEPT, "Authorization": f"Bearer {BOB}", "Mcp-Session-Id": sid,
                   "MCP-Protocol-Version": HANDSHAKE}
        for i, (name, key) in enumerate(_spellings(alices["sealed"], alices["raw"]).items()):
            # with and without a progress token: the SDK's path and the lean one (lean_session_calls.py)
            for road, extra in (("lean", {}), ("sdk", {"progressToken": 1000 + i})):
                params = {"name": FACTS_TOOL, "arguments": {}, "_meta": {"sentinel/session": key, **extra}}
                r = await http.post(f"{base}/mcp", json=_request("tools/call", params, rid=10 + i),
                                    headers=session)
                answer = (r.status_code, _messages(r))
                if _hers(answer) or not _own_or_refused(answer):
                    wrong.append((name, road, answer))
    assert not wrong, [(n, w, json.dumps(a)[:300]) for n, w, a in wrong]


def _sse_spellings(sid: str) -> dict[str, str]:
    return {"as given": sid, "capitals": sid.upper(), "dashed": str(uuid.UUID(hex=sid)),
            "braces": "{" + sid + "}", "urn": "urn:uuid:" + sid}


async def test_every_spelling_of_alices_sse_session_id_is_as_unknown_to_bob(base: str) -> None:
    ids = iter(range(1000, 2000))  # each post its own id: none is refused as one still in flight
    async with httpx2.AsyncClient(timeout=60) as http, sse_session(http, base, ALICE) as hers:
        def post(sid: str, token: str) -> Any:
            ping = json.dumps({"jsonrpc": "2.0", "id": next(ids), "method": "ping"})
            return http.post(f"{base}/messages/?session_id={sid}", content=ping,
                             headers={"Content-Type": "application/json", "Authorization": f"Bearer {token}"})

        def answer(r: Any) -> tuple[int, Any]:  # whole, but for the request's own id
            body = r.json() if r.headers.get("content-type", "").startswith("application/json") else r.text
            return r.status_code, {**body, "id": None} if isinstance(body, dict) else body

        nobodys = answer(await post(uuid.uuid4().hex, BOB))
        assert nobodys[0] == 404, nobodys
        wrong = []
        for name, sid in _sse_spellings(hers.session_id).items():
            bobs = answer(await post(sid, BOB))
            if bobs != nobodys:
                wrong.append((name, bobs))
            # the spelling does name her session: she may post under it
            assert (await post(sid, ALICE)).status_code == 202, name
        assert not wrong, wrong


async def test_no_spelling_of_alices_key_opens_her_conversation_to_bob_on_a_legacy_sse_session(
        base: str, alices: dict[str, str]) -> None:
    wrong: list[tuple[str, str, Any]] = []
    async with httpx2.AsyncClient(timeout=60) as http, sse_session(http, base, BOB) as bobs:
        for name, key in _spellings(alices["sealed"], alices["raw"]).items():
            params = {"name": FACTS_TOOL, "arguments": {}, "_meta": {"sentinel/session": key}}
            answer = (200, [await bobs.ask("tools/call", params)])
            if _hers(answer) or not _own_or_refused(answer):
                wrong.append((name, "_meta", answer))
            if isinstance(key, str) and key.isascii() and key.isprintable() and len(key) < 8192:
                params = {"name": FACTS_TOOL, "arguments": {}}  # (a megabyte head is refused whole: 431)
                answer = (200, [await bobs.ask("tools/call", params, extra={"X-Sentinel-Session": key})])
                if _hers(answer) or not _own_or_refused(answer):
                    wrong.append((name, "header", answer))
    assert not wrong, [(n, w, json.dumps(a)[:300]) for n, w, a in wrong]
