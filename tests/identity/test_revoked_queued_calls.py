"""A call that waits inside Sentinel (for a slot of its upstream's ``max_in_flight``) when its caller's token
is revoked (the owner's, rotated after a leak: ``config token --rotate``) never reaches the upstream, and its
answer says why: the caller is checked again when the call is about to be sent.

What broke (red team "identity10"): the request was authenticated once, when it arrived, and a one-piece
answer is not re-checked as a stream is (``stream_recheck.py``); so the holder of a leaked token queued calls
behind a slow one, the owner rotated the token, and every queued call still ran, as the owner, and its whole
result went back to the old token's holder. A call of a token that still holds runs as before.
"""

from __future__ import annotations

import asyncio
import json
import re
import sys
import time
from pathlib import Path

import httpx2
import pytest
from tests.gateway.helpers import TOOLBOX
from tests.identity.identity_rig import http_sentinel, write_config
from tests.identity.test_secret_rotation import _cli, _mcp_status, _shown

from sentinel_mcp.app.stream_recheck import RECHECK_SECONDS

pytestmark = pytest.mark.timeout(180)

META = {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "t", "version": "1"},
        "io.modelcontextprotocol/clientCapabilities": {}}


def _held(path: Path, rid: int, sid: str | None = None) -> dict:
    """tb__held as a 2026-era request, or (``sid``) on a 2025-era session."""
    params = {"name": "tb__held", "arguments": {"path": str(path)}, **({} if sid else {"_meta": META})}
    return {"jsonrpc": "2.0", "id": rid, "method": "tools/call", "params": params}


def _headers(token: str, sid: str | None = None) -> dict[str, str]:
    era = {"MCP-Protocol-Version": "2025-06-18", "Mcp-Session-Id": sid} if sid else {
        "MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": "tb__held"}
    return {"Content-Type": "application/json", "Accept": "application/json, text/event-stream", **era,
            "Authorization": f"Bearer {token}"}


async def _session(http: httpx2.AsyncClient, base: str, token: str) -> str:
    """A 2025-era session opened with ``token``: its id."""
    hello = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}
    r = await http.post(f"{base}/mcp", json=hello, headers={k: v for k, v in _headers(token, "-").items()
                                                            if k != "Mcp-Session-Id"})
    sid = r.headers["mcp-session-id"]
    done = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    assert (await http.post(f"{base}/mcp", json=done, headers=_headers(token, sid))).status_code == 202
    return sid


def _answer(text: str) -> dict:
    """The JSON-RPC answer of a body sent as JSON or as server-sent events."""
    if text.lstrip().startswith("{"):
        return json.loads(text)
    frames = [json.loads(line[5:]) for line in text.splitlines() if line.startswith("data:")]
    return next(f for f in frames if "result" in f or "error" in f)


def refused(answer: httpx2.Response) -> bool:
    """Whether a call's answer says its caller's credentials no longer hold: the call's refusal (within a
    second of the request, ``caller_recheck.py``), the answer's own (a 401, ``stream_recheck.py``), or a
    stream ended before any answer."""
    text = answer.text
    return answer.status_code == 401 or "no longer hold" in text or (
        answer.status_code == 200 and '"result"' not in text and '"error"' not in text)


async def _waiting(http: httpx2.AsyncClient, base: str, token: str) -> int:
    text = (await http.get(f"{base}/metrics", headers={"Authorization": f"Bearer {token}"})).text
    # held for the slot, or for its turn (a handshake-era upstream's calls of one party take turns)
    found = re.findall(r'^sentinel_upstream_calls_waiting(?:_turn)?\{upstream="tb"\} (\d+)', text, re.M)
    return sum(int(n) for n in found) if len(found) == 2 else -1


@pytest.mark.parametrize("era", ["2026", "2025"])
@pytest.mark.parametrize("rotate", [True, False])
async def test_a_call_queued_when_its_token_is_revoked_never_runs(
    tmp_path: Path, rotate: bool, era: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    cfg = write_config(tmp_path, policy={"allow": ["tb__*"]})
    body = json.loads(cfg.read_text())
    body["mcpServers"]["tb"] = {"command": sys.executable, "args": [TOOLBOX], "max_in_flight": 1}
    cfg.write_text(json.dumps(body))
    token = _shown(cfg, monkeypatch, "token")  # read in process; the rotation is a real CLI run
    first, queued = tmp_path / "first", tmp_path / "queued"
    with http_sentinel(cfg) as (base, _):
        async with httpx2.AsyncClient(timeout=120) as http:
            sid = await _session(http, base, token) if era == "2025" else None
            running = asyncio.ensure_future(http.post(f"{base}/mcp", json=_held(first, 1, sid),
                                                      headers=_headers(token, sid)))
            for _ in range(1200):  # the first call holds the only slot: its file says it started
                if first.exists():
                    break
                await asyncio.sleep(0.05)
            assert first.exists()
            arrived = time.monotonic()  # after the front took the request (its answer is checked from then)
            waiting = asyncio.ensure_future(http.post(f"{base}/mcp", json=_held(queued, 2, sid),
                                                      headers=_headers(token, sid)))
            for _ in range(600):  # the second waits for the slot (the operator's figure says so)
                if await _waiting(http, base, token) == 1:
                    break
                await asyncio.sleep(0.05)
            assert await _waiting(http, base, token) == 1
            now = token
            if rotate:
                rotated = _cli(cfg, "token", "--rotate")
                assert rotated.returncode == 0, rotated.stderr
                now = rotated.stdout.strip()
                for _ in range(200):  # the old token is refused within about a second
                    if await _mcp_status(http, base, token) == 401:
                        break
                    await asyncio.sleep(0.05)
                assert await _mcp_status(http, base, token) == 401
            # its answer leaves a re-check's interval after the request at least (the front checks an
            # answer's caller once a second: one ready sooner leaves unchecked, its call refused instead)
            await asyncio.sleep(max(0.0, arrived + RECHECK_SECONDS - time.monotonic()))
            Path(str(first) + ".go").touch()
            Path(str(queued) + ".go").touch()  # released at once, if it ever starts
            done = await running
            late = await waiting
            # the running call's answer, ready after the rotation, is withheld too (the next test)
            assert refused(done) if rotate else done.status_code == 200, done.text
            assert await _mcp_status(http, base, now) == 200
    if not rotate:
        answer = _answer(late.text)
        assert answer["result"]["content"][0]["text"] == "released", answer
        assert queued.read_text() == "started\n"
        return
    assert not queued.exists(), "the queued call of the revoked token reached the upstream"
    assert "released" not in late.text, late.text
    assert refused(late), late.text
    assert token not in late.text


@pytest.mark.parametrize("era", ["2026", "2025"])
async def test_an_answer_ready_after_its_token_is_revoked_is_not_delivered(
    tmp_path: Path, era: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A call running when its token is rotated: its answer, ready after, never reaches the old token's
    holder, whether it is sent in one piece (a 2026-era JSON answer) or as the first event of a stream
    (a 2025-era POST's): the stream re-check looked only at the chunks after a first one, so an answer that
    was the first went out whole."""
    cfg = write_config(tmp_path, policy={"allow": ["tb__*"]})
    body = json.loads(cfg.read_text())
    body["mcpServers"]["tb"] = {"command": sys.executable, "args": [TOOLBOX]}
    cfg.write_text(json.dumps(body))
    token = _shown(cfg, monkeypatch, "token")  # read in process; the rotation is a real CLI run
    first = tmp_path / "first"
    with http_sentinel(cfg) as (base, _):
        async with httpx2.AsyncClient(timeout=120) as http:
            sid = await _session(http, base, token) if era == "2025" else None
            running = asyncio.ensure_future(http.post(f"{base}/mcp", json=_held(first, 1, sid),
                                                      headers=_headers(token, sid)))
            for _ in range(1200):  # the call runs: its file says it started
                if first.exists():
                    break
                await asyncio.sleep(0.05)
            assert first.exists()
            arrived = time.monotonic()  # after the front took the request (its answer is checked from then)
            rotated = _cli(cfg, "token", "--rotate")
            assert rotated.returncode == 0, rotated.stderr
            for _ in range(200):  # the old token is refused within about a second
                if await _mcp_status(http, base, token) == 401:
                    break
                await asyncio.sleep(0.05)
            assert await _mcp_status(http, base, token) == 401
            # its answer leaves a re-check's interval after the request at least (the front checks an
            # answer's caller once a second: one ready sooner leaves unchecked, its call refused instead)
            await asyncio.sleep(max(0.0, arrived + RECHECK_SECONDS - time.monotonic()))
            Path(str(first) + ".go").touch()
            late = await running
            assert await _mcp_status(http, base, rotated.stdout.strip()) == 200
    assert "released" not in late.text, late.text
    assert refused(late), late.text
    assert token not in late.text
