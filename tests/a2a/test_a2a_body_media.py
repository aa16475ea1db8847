"""The A2A door (``POST /a2a``) reads a body only as what its head says it is, by the MCP door's rule: JSON in
UTF-8 (``core/media_type.py``), Content-Type sent once, no content coding but ``identity``. Red team
"rt-front": the A2A door parsed the body as UTF-8 JSON whatever the head said (``charset=utf-16``,
``charset=iso-8859-1``, ``Content-Encoding: gzip``, a second Content-Type behind the first), so what ran
was not what a reader honouring the head (a proxy, a filter, an audit of the raw request) sees; the MCP door
has refused these (415) since it was given the rule. Both doors are asked the same table here, over a real
front, and a second caller is served after every refusal."""

from __future__ import annotations

import json
from pathlib import Path

import httpx2
import pytest

from tests.identity.identity_rig import ALICE, BOB, http_sentinel, write_config

pytestmark = pytest.mark.timeout(180)
MODERN = "2026-07-28"
LIST_TASKS = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "ListTasks", "params": {}}).encode()
PING = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": {"_meta": {
    "io.modelcontextprotocol/protocolVersion": MODERN,
    "io.modelcontextprotocol/clientCapabilities": {}}}}).encode()
TAKEN = (
    [("content-type", "application/json")],
    [("content-type", "Application/JSON; charset=UTF-8")],
    [("content-type", 'application/json;charset="utf-8"')],
    [("content-type", "application/json"), ("content-encoding", "identity")],
)
REFUSED = (
    [("content-type", "application/json; charset=utf-16")],
    [("content-type", "application/json; charset=iso-8859-1")],
    [("content-type", "application/json; version=2")],
    [("content-type", "application/json"), ("content-type", "text/plain")],
    [("content-type", "application/json"), ("content-encoding", "gzip")],
    [("content-type", "application/json"), ("content-encoding", "identity"), ("content-encoding", "gzip")],
    [("content-type", "application/json"), ("content-encoding", "br, identity")],
)


def door_headers(door: str, token: str, sent: list[tuple[str, str]]) -> list[tuple[str, str]]:
    extra = ([("a2a-version", "1.0")] if door == "/a2a" else
             [("accept", "application/json, text/event-stream"), ("mcp-protocol-version", MODERN),
              ("mcp-method", "server/discover")])
    return [("authorization", f"Bearer {token}"), *extra, *sent]


async def test_both_doors_read_a_body_only_as_its_head_declares_it(tmp_path: Path) -> None:
    cfg = write_config(tmp_path)
    with http_sentinel(cfg) as (base, _):
        async with httpx2.AsyncClient(timeout=60) as http:
            for door, body in (("/a2a", LIST_TASKS), ("/mcp", PING)):

                async def served(token: str, sent: list[tuple[str, str]]) -> httpx2.Response:
                    return await http.post(base + door, content=body,  # noqa: B023 - awaited in this turn
                                           headers=door_headers(door, token, sent))  # noqa: B023

                for sent in TAKEN:
                    r = await served(ALICE, sent)
                    assert r.status_code == 200 and "result" in r.json(), (door, sent, r.status_code, r.text)
                for sent in REFUSED:
                    r = await served(ALICE, sent)
                    assert r.status_code == 415, (door, sent, r.status_code, r.text[:300])
                    answer = r.json()
                    assert answer["jsonrpc"] == "2.0" and answer["id"] is None, answer
                    assert answer["error"]["code"] == -32600 and "result" not in answer, answer
                    # the refusal cost nobody else anything: another caller is served next
                    other = await served(BOB, [("content-type", "application/json")])
                    assert other.status_code == 200 and "result" in other.json(), other.text
