"""Conversations and confirmations mean the same on every replica: two real replicas (``sentinel-mcp serve
--http`` processes) on one PostgreSQL, haproxy in front, the real ``mcp`` client.

- A plain label (``_meta["sentinel/session"]``, ``X-Sentinel-Session``) names the same conversation of its
  principal on A, on B and through the balancer: a fact answered through A decides on B; another principal's
  same label is its own conversation (alice's answer copied there in SQL, without the seal key, decides
  nothing; nor one made up in her other conversation); the label's row goes idle after its time to live.
- The default guard's confirmation (a tool no rulebase governs) is used once in the cluster: given through A
  (a pushed elicitation), the same call on B asks again; one stored confirmation raced by the same call on A
  and B at once is forwarded exactly once (an upstream that writes down every start says so).
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
import tempfile
from pathlib import Path
from typing import Any, AsyncIterator, Iterator

import httpx2
import psycopg
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.types import ElicitResult

from examples.cluster.recipe import Cluster
from sentinel_mcp.core.decision import ToolCall
from sentinel_mcp.gateway.replica import SharedStore
from sentinel_mcp.paths import RULEBASES_DIR
from sentinel_mcp.policy.confirmation_book import signed_binding
from sentinel_mcp.storage.local_server import LocalServer
from tests.cluster.conftest import new_database
from tests.identity.identity_rig import session_line, text
from tests.records.rig import AUTH, TOKEN

pytestmark = pytest.mark.timeout(300)
SLOW = str(Path(__file__).with_name("slow_upstream.py"))
KEYS = {"alice": "alice-token-0123456789", "bob": "bob-token-0123456789ab"}
SESSION = "sentinel/session"
ROUNDS = 6  # races of one confirmation, bounded by count
# asks__work needs a fact (a colour) answered in the conversation; slow__work is governed by no rule, so the
# fail-safe default guard asks to confirm it (no annotations: its effects are unknown)
RULES = """
askable(colour(M, C), "Which colour for ~w?", choice([red, green, blue]), [from([user, agent])]).
guard('asks__work', [mark = M], colour(M, _)).
"""


def base_config(tmp: Path) -> dict[str, Any]:
    rules = tmp / "colour.pl"
    rules.write_text(RULES)
    upstream = {"command": sys.executable, "args": [SLOW], "env": {"SLOW_LOG": str(tmp / "work.log")}}
    (tmp / "work.log.release").write_text("")  # every call finishes at once
    return {
        "mcpServers": {"slow": upstream, "asks": upstream, "priv": upstream},
        "sentinel": {
            "builtins": ["sentinel"],
            "http": {"token": TOKEN},
            "rulebases": [str(RULEBASES_DIR / "default.pl"), str(rules)],
            "principals": [{"name": who, "token": token} for who, token in KEYS.items()],
            "personal": {"priv__work": "notes"},  # its work reads personal data: the user's consent too
        },
    }


@contextlib.asynccontextmanager
async def client(port: int, who: str, answers: list[Any] | None = None, headers: dict[str, str] | None = None,
                 **kw: Any) -> AsyncIterator[Client]:
    """A real ``mcp`` client of ``who`` on one port; ``answers`` (consumed in order) answer what it is asked,
    and it records every question in ``asked``."""
    asked: list[str] = []

    async def elicit(ctx: Any, params: Any) -> ElicitResult:
        asked.append(params.message)
        if not answers:
            return ElicitResult(action="decline")
        return ElicitResult(action="accept", content=answers.pop(0))

    async with (
        httpx2.AsyncClient(timeout=60, headers={"Authorization": f"Bearer {KEYS[who]}", **(headers or {})})
        as http,
        Client(
            streamable_http_client(f"http://127.0.0.1:{port}/mcp", http_client=http),
            elicitation_callback=elicit,
            **kw,
        ) as c,
    ):
        c.asked = asked  # type: ignore[attr-defined]
        yield c


async def session_of(port: int, who: str, label: str) -> str:
    async with client(port, who) as c:
        r = await c.call_tool("sentinel__sentinel_facts", {}, meta={SESSION: label})
        assert not r.is_error, text(r)
        return session_line(r)


def starts(tmp: Path, mark: str) -> int:
    log = tmp / "work.log"
    return log.read_text().splitlines().count("start:" + mark) if log.exists() else 0


def sql(url: str, statement: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    with psycopg.connect(url, autocommit=True) as conn:
        cur = conn.execute(statement, params)
        return cur.fetchall() if cur.description else []


@pytest.fixture(scope="module")
def cluster(pg_server: LocalServer) -> Iterator[Cluster]:
    """One cluster for the file (its start and stop were half its time): each test works in conversations,
    labels and marks of its own, so none reads what another wrote."""
    tmp = Path(tempfile.mkdtemp(prefix="sentinel-conv-"))
    c = Cluster(tmp, base_config(tmp), store_url=new_database(pg_server))
    try:
        c.up(AUTH)
        yield c
    finally:
        c.down()


async def test_a_label_names_one_conversation_on_every_replica(cluster: Cluster) -> None:
    a, b, lb = cluster.ports["replica-a"], cluster.ports["replica-b"], cluster.port
    sid = await session_of(a, "alice", "trip")
    assert sid.startswith("alice/label-trip-")
    assert await session_of(b, "alice", "trip") == sid
    assert await session_of(lb, "alice", "trip") == sid  # through the balancer too
    async with client(b, "alice", headers={"X-Sentinel-Session": "trip"}) as c:  # the header names it too
        assert session_line(await c.call_tool("sentinel__sentinel_facts", {})) == sid
    # another principal's same label, and another label: other conversations
    bob = await session_of(b, "bob", "trip")
    assert bob.startswith("bob/label-trip-") and bob != sid
    other = await session_of(a, "alice", "other")
    assert other != sid
    # naming another's conversation by its id, on either replica, is refused
    for port in (a, b):
        async with client(port, "bob") as c:
            r = await c.call_tool("sentinel__sentinel_facts", {}, meta={SESSION: sid})
            assert r.is_error and "not yours" in text(r), text(r)

    # a fact answered through A decides on B in the same conversation; not in bob's, not in another label
    async with client(a, "alice", [{"answer": "red"}]) as c:
        r = await c.call_tool("asks__work", {"mark": "m1"}, meta={SESSION: "trip"})
        assert not r.is_error and c.asked, text(r)  # type: ignore[attr-defined]
    async with client(b, "alice") as c:
        r = await c.call_tool("asks__work", {"mark": "m1"}, meta={SESSION: "trip"})
        assert not r.is_error and not c.asked, text(r)  # type: ignore[attr-defined]
    # someone with write access to the database (no seal key): alice's answer copied into bob's conversation,
    # and one made up (unsigned) in her other one; each replica's next read sees them (counters moved)
    url = cluster.store_url or ""
    for target, mac in ((bob, None), (other, "")):
        sql(url, "INSERT INTO facts (session, predicate, args, fact, provenance, source_tool, source_digest, "
            "contexts, established_at, expires_at, mac) SELECT %s, predicate, args, fact, provenance, "
            "source_tool, source_digest, contexts, established_at, expires_at, COALESCE(%s, mac) FROM facts "
            "WHERE session = %s AND predicate = 'colour'", (target, mac, sid))
        sql(url, "INSERT INTO fact_sessions (session, version, prev) VALUES (%s, nextval("
            "'fact_session_versions'), 0) ON CONFLICT (session) DO UPDATE SET version = excluded.version",
            (target,))
    for who, label in (("bob", "trip"), ("alice", "other")):
        async with client(b, who) as c:
            r = await c.call_tool("asks__work", {"mark": "m1"}, meta={SESSION: label})
            assert r.is_error and c.asked, (who, label, text(r))  # type: ignore[attr-defined]
    assert starts(cluster.root, "m1") == 2

    # idle past its time to live (the row aged in the database): the label names a new conversation,
    # the same new one on both replicas once their remembered copy is refreshed (a restart forgets it)
    sql(cluster.store_url or "", "UPDATE conversation_labels SET used_at = used_at - 13 * 3600 "
        "WHERE principal = 'alice' AND label = 'other'")
    old = await session_of(a, "alice", "other")  # remembered by A for up to a minute: still the old one
    for name in ("replica-a", "replica-b"):
        cluster.procs[name].terminate()
        cluster.procs[name].wait(30)
    await asyncio.to_thread(cluster.start_replica, "replica-a")
    await asyncio.to_thread(cluster.start_replica, "replica-b")
    for name in ("replica-a", "replica-b"):
        from examples.cluster.recipe import wait_ok

        await asyncio.to_thread(wait_ok, cluster.ports[name], 60.0, cluster.procs[name], AUTH)
    fresh = await session_of(cluster.ports["replica-b"], "alice", "other")
    assert fresh != old and fresh.startswith("alice/label-other-")
    assert await session_of(cluster.ports["replica-a"], "alice", "other") == fresh
    assert await session_of(cluster.ports["replica-a"], "alice", "trip") == sid  # in use: kept over restarts


async def test_a_confirmation_is_used_once_in_the_cluster(cluster: Cluster) -> None:
    a, b = cluster.ports["replica-a"], cluster.ports["replica-b"]
    url = cluster.store_url or ""
    # handshake era: the question is pushed; confirmed through A, the call runs there once
    async with client(a, "alice", [{"approve": True}], mode="legacy") as c:
        r = await c.call_tool("slow__work", {"mark": "c1"}, meta={SESSION: "pay"})
        assert not r.is_error and len(c.asked) == 1, text(r)  # type: ignore[attr-defined]
    # the same call in the same conversation on B: asked again (the confirmation was used), declined: not run
    async with client(b, "alice", mode="legacy") as c:
        r = await c.call_tool("slow__work", {"mark": "c1"}, meta={SESSION: "pay"})
        assert r.is_error and len(c.asked) == 1, text(r)  # type: ignore[attr-defined]
    assert starts(cluster.root, "c1") == 1
    assert sql(url, "SELECT count(*) FROM confirmations")[0][0] == 0

    # one stored confirmation, the same call on A and on B at once: forwarded exactly once, round after round
    sid = await session_of(a, "alice", "race")
    key = SharedStore(url, "", "", cluster.seal_key.encode()).key("confirmation") or b""
    for n in range(ROUNDS):
        mark = f"r{n}"
        call = ToolCall(name="slow__work", server="slow", tool="work", arguments={"mark": mark})
        # signed as a replica signs it, its expiry too (a row without the cluster key's signature grants
        # nothing)
        expires = sql(url, "SELECT CAST(extract(epoch from now()) AS DOUBLE PRECISION) + 300")[0][0]
        mac = signed_binding(key, "alice", sid, "slow__work", call.digest, "default:fail-safe", expires)
        sql(url, "INSERT INTO confirmations (session, tool, digest, version, principal, mac, expires_at) "
            "VALUES (%s, %s, %s, %s, %s, %s, %s)",
            (sid, "slow__work", call.digest, "default:fail-safe", "alice", mac, expires))

        async def one(port: int) -> Any:
            async with client(port, "alice", mode="legacy") as c:  # declines whatever it is asked
                return await c.call_tool("slow__work", {"mark": mark}, meta={SESSION: "race"})

        results = await asyncio.gather(one(a), one(b))
        assert sorted(r.is_error for r in results) == [False, True], [text(r) for r in results]
        assert starts(cluster.root, mark) == 1
    # another principal's same call in its own "race" conversation finds no confirmation
    async with client(b, "bob", mode="legacy") as c:
        r = await c.call_tool("slow__work", {"mark": "r0"}, meta={SESSION: "race"})
        assert r.is_error and len(c.asked) == 1, text(r)  # type: ignore[attr-defined]
    assert starts(cluster.root, "r0") == 1


async def test_confirmation_and_consent_in_rounds_that_reach_both_replicas(cluster: Cluster) -> None:
    """A destructive tool that reads personal data, 2026-07-28 era through the balancer: its rounds land on
    either replica; the confirmation and the consent are asked once each, in one round, and the call runs
    once."""
    for n in range(3):
        mark = f"p{n}"
        asked: list[str] = []

        async def answer(ctx: Any, params: Any) -> ElicitResult:
            schema = str(params.requested_schema)
            asked.append("confirm" if "approve" in schema else "consent")
            return ElicitResult(action="accept",
                                content={"approve": True} if "approve" in schema else {"allow": True})

        async with (
            httpx2.AsyncClient(timeout=60, headers={"Authorization": f"Bearer {KEYS['alice']}"}) as http,
            Client(streamable_http_client(f"http://127.0.0.1:{cluster.port}/mcp", http_client=http),
                   elicitation_callback=answer) as c,
        ):
            r = await c.call_tool("priv__work", {"mark": mark}, meta={SESSION: "private"})
        assert not r.is_error, text(r)
        assert sorted(asked) == ["confirm", "consent"], asked
        assert starts(cluster.root, mark) == 1


async def test_a_sealed_answer_used_on_one_replica_is_refused_on_the_other(cluster: Cluster) -> None:
    """2026-07-28 era, driven round by round: a confirmation answered in a retry on A runs the call there;
    the same retry replayed on B runs nothing (its sealed state was used); the answered retry sent to A and B
    at once runs the call exactly once."""
    a, b = cluster.ports["replica-a"], cluster.ports["replica-b"]

    async def unused(ctx: Any, params: Any) -> ElicitResult:  # declares elicitation; answers go in retries
        raise AssertionError("nothing is pushed in the 2026-07-28 era")

    async with contextlib.AsyncExitStack() as stack:
        sessions = []
        for port in (a, b):
            http = await stack.enter_async_context(
                httpx2.AsyncClient(timeout=60, headers={"Authorization": f"Bearer {KEYS['alice']}"})
            )
            c = await stack.enter_async_context(Client(
                streamable_http_client(f"http://127.0.0.1:{port}/mcp", http_client=http),
                elicitation_callback=unused,
            ))
            sessions.append(c.session)
        on_a, on_b = sessions
        for n, targets in enumerate(((on_a,), (on_a, on_b), (on_b, on_a))):
            mark = f"s{n}"
            args, meta = {"mark": mark}, {SESSION: "sealed"}
            r = await on_a.call_tool("slow__work", args, allow_input_required=True, meta=meta)
            assert hasattr(r, "input_requests"), r
            answer = {k: ElicitResult(action="accept", content={"approve": True}) for k in r.input_requests}

            async def retry(session: Any, state: str = r.request_state) -> Any:
                return await session.call_tool("slow__work", args, allow_input_required=True, meta=meta,
                                               input_responses=answer, request_state=state)

            results = await asyncio.gather(*(retry(t) for t in targets))
            ran = [x for x in results if type(x).__name__ == "CallToolResult" and not x.is_error]
            assert len(ran) == 1, results
            for replay_on in (on_a, on_b):  # used: a replay on either replica runs nothing
                again = await retry(replay_on)
                assert type(again).__name__ != "CallToolResult" or again.is_error, again
            assert starts(cluster.root, mark) == 1
