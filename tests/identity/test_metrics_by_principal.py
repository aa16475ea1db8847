"""What /metrics and /healthz tell one principal of another's calls.

/metrics counted every principal's calls in one set of series (tool, upstream, decision, outcome, latency):
bob, a person configured with ``*`` reach, read how often alice called which tool, what was denied and how
long it took, and /healthz showed him every party's figures of the local model. The whole view is the
operator's (the owner's credential, as the console's); every other person gets its own calls' series only,
and /healthz's status word. What is compared is the body bob gets, so no spelling of a request (query
parameters naming another principal, headers that claim an identity, case and confusable variants) widens it.

One real Sentinel over HTTP (the identity rig: the bookings server over stdio), the real MCP client in both
protocol eras for the calls, raw HTTP on 127.0.0.1 for the reads."""

from __future__ import annotations

import contextlib
import re

import httpx2
import pytest
from mcp.shared.exceptions import MCPError

from .identity_rig import ALICE, BOB, CAROL, OWNER_TOKEN, http_client, http_sentinel, write_config

pytestmark = pytest.mark.timeout(240)

OWNER = OWNER_TOKEN
ROVER = "rover-key-0123456789abcdef"  # another agent's A2A key
SERIES = re.compile(r"^(sentinel_[a-z_]+)(\{[^}]*\})? (\S+)$")


def _series(body: str) -> dict[str, str]:
    """Every sample line (name and labels -> value), comments left out."""
    out: dict[str, str] = {}
    for line in body.splitlines():
        found = SERIES.match(line)
        if found:
            out[found.group(1) + (found.group(2) or "")] = found.group(3)
    return out


def _calls(body: str) -> int:
    """The calls ``sentinel_calls_total`` counts, all series together."""
    return sum(int(v) for k, v in _series(body).items() if k.startswith("sentinel_calls_total"))


async def _get(http: httpx2.AsyncClient, url: str, token: str | None, **headers: str) -> tuple[int, str]:
    sent = {"Authorization": f"Bearer {token}"} if token else {}
    r = await http.get(url, headers={**sent, **headers})
    return r.status_code, r.text


# what bob may add to his request: none of it names anyone to Sentinel but his token
SPELLINGS: list[tuple[str, dict[str, str]]] = [
    ("", {}),
    ("?principal=alice", {}),
    ("?principal=ALICE", {}),
    ("?principal=%D0%B0lice", {}),  # Cyrillic a
    ("?principal=alice%00", {}),
    ("?principal=owner&principal=alice", {}),
    ("?principal[]=alice", {}),
    ("?name=owner", {}),
    ("?view=all&operator=1", {}),
    ("?principal=+alice+", {}),
    ("", {"X-Sentinel-Principal": "owner"}),
    ("", {"X-Forwarded-User": "owner"}),
    ("", {"X-Remote-User": "alice"}),
    ("", {"X-API-Key": OWNER}),  # a second credential beside the bearer: never the stronger of the two
]


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_a_person_reads_only_its_own_calls_on_metrics(tmp_path, mode):
    cfg = write_config(tmp_path, http={"token": OWNER},
                       a2a={"name": "identity-test", "task_db": "", "api_keys": {"rover": ROVER}})
    with http_sentinel(cfg) as (base, _):
        async with httpx2.AsyncClient(timeout=30) as http:
            status, before = await _get(http, f"{base}/metrics", BOB)
            assert status == 200, before
            assert _calls(before) == 0, before  # nobody has called: bob's own view is empty

            async with http_client(base, ALICE, mode) as alice:
                for _ in range(3):
                    await alice.call_tool("bk__list_bookings", {"user_id": "u_123"})
                with contextlib.suppress(MCPError):
                    await alice.call_tool("bk__no_such_tool", {})
            status, owner = await _get(http, f"{base}/metrics", OWNER)
            assert status == 200 and _calls(owner) >= 4, owner  # the operator sees alice's calls
            assert 'sentinel_upstream_up{upstream="bk"} 1' in owner

            # bob, who may reach every tool, sees none of them: no count, tool, latency or upstream figure
            for query, headers in SPELLINGS:
                status, body = await _get(http, f"{base}/metrics{query}", BOB, **headers)
                if status != 200:  # a request with two credentials may be refused whole: then nothing shows
                    assert status in (400, 401, 403) and "sentinel_" not in body, (query, headers, body)
                    continue
                assert _calls(body) == 0, (query, headers, body)
                assert "bk__list_bookings" not in body and "sentinel_upstream" not in body, (query, body)
                assert "sentinel_call_duration_seconds_count" not in body, (query, body)
                assert "sentinel_session_table_entries" not in body, (query, body)
                assert _series(body) == _series(before), (query, headers, body)

            # bob's own calls are his to see, and only they
            async with http_client(base, BOB, mode) as bob:
                await bob.call_tool("bk__list_bookings", {"user_id": "u_123"})
            status, mine = await _get(http, f"{base}/metrics", BOB)
            assert status == 200 and _calls(mine) == 1, mine
            assert 'tool="bk__list_bookings"' in mine
            assert 'sentinel_decisions_total{decision="allow"} 1' in mine, mine
            status, alices = await _get(http, f"{base}/metrics", ALICE)
            assert status == 200 and _calls(alices) == 4, alices  # her own four, not bob's
            status, owner_after = await _get(http, f"{base}/metrics", OWNER)
            assert _calls(owner_after) == _calls(owner) + 1

            # carol (limited to one tool) gets her own (none); another agent and strangers get nothing
            status, carols = await _get(http, f"{base}/metrics", CAROL)
            assert status == 200 and _calls(carols) == 0 and "bk__" not in carols, carols
            for token in (ROVER, BOB + "x", OWNER.upper(), OWNER[:-1], "owner"):
                status, body = await _get(http, f"{base}/metrics", token)
                assert status in (401, 403) and "sentinel_calls_total" not in body, (token, status, body)


async def test_health_details_are_the_operators(tmp_path):
    """/healthz's details (upstreams and their errors, problems, storage paths, every party's figures of the
    local model) are the operator's: a person who may reach every tool but is not the operator gets the
    status word, whatever it adds to its request."""
    cfg = write_config(tmp_path, http={"token": OWNER})
    with http_sentinel(cfg) as (base, _):
        async with httpx2.AsyncClient(timeout=30) as http:
            full = (await http.get(f"{base}/healthz", headers={"Authorization": f"Bearer {OWNER}"})).json()
            assert "upstreams" in full and "storage" in full, full
            for token in (ALICE, BOB, CAROL):
                for query, headers in SPELLINGS:
                    status, body = await _get(http, f"{base}/healthz{query}", token, **headers)
                    if status != 200:
                        assert status in (400, 401, 403) and "upstreams" not in body, (token, query, body)
                        continue
                    assert httpx2.Response(200, text=body).json() == {
                        "status": full["status"]}, (token, query, headers, body)
