"""``isolation: "per_principal"``: what a stdio upstream pushes while it works (progress, log lines, form
questions) reaches the principal whose session it came on, and its questions are answered by that principal.
On a shared session a question names no call once the connection carried both principals' calls, so it is
refused (``test_shared_upstream_pushes.py``); a session of one's own carries no one else's calls.

A real Sentinel over HTTP, the crossed upstream over stdio behind it, two real MCP clients."""

from __future__ import annotations

import asyncio
import json
import sys
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.types import ElicitCompleteNotification, ElicitResult, ListRootsResult, Root

from ..gateway.test_relays import RELAY, model
from .identity_rig import ALICE, BOB, http_sentinel, text
from .test_shared_upstream_pushes import Seen, _client, _config, _upstream, _work

pytestmark = pytest.mark.timeout(180)


@pytest.mark.parametrize("protocol", ["legacy", "modern"])
@pytest.mark.parametrize("transport", ["stdio", "http"])
async def test_pushes_reach_and_are_answered_by_the_sessions_own_principal(tmp_path: Path, protocol: str,
                                                                           transport: str) -> None:
    """Over stdio each session is a process of its own, each call alone in it; over HTTP the sessions are
    connections to one process, where alice's and bob's calls are in flight together (its barrier) while
    each pushes progress, a log line and a question naming its caller."""
    server = {"url": "", "protocol": protocol} if transport == "http" else {"protocol": protocol}
    together = 2 if transport == "http" else 1
    with _upstream(server) as server, http_sentinel(_config(tmp_path, isolation="per_principal",
                                                            **server)) as (base, _proc):
        alice_seen, bob_seen = Seen("alice"), Seen("bob")
        async with _client(base, ALICE, alice_seen) as alice, _client(base, BOB, bob_seen) as bob:
            answers: list[dict[str, Any]] = []
            for round_ in range(2):
                answers += await asyncio.gather(_work(alice, alice_seen, f"alice{round_}", together, round_),
                                                _work(bob, bob_seen, f"bob{round_}", together, round_))
            tokens = {who: json.loads(text(await c.call_tool("cx__tokens", {})))
                      for who, c in (("alice", alice), ("bob", bob))}
    assert bob_seen.foreign("alice") == [], bob_seen.got
    assert alice_seen.foreign("bob") == [], alice_seen.got
    for seen, who in ((alice_seen, "alice"), (bob_seen, "bob")):
        for round_ in range(2):
            assert seen.got.count(f"progress:progress-of-{who}{round_}") == 2, seen.got
        if protocol == "legacy":  # its log line too (a 2026-era upstream logs only to a request asking)
            assert seen.got.count(f"log:log-of-{who}0") == 1, seen.got
    for answer in answers:
        mine = "true" if answer["tag"].startswith("alice") else "false"
        if protocol == "legacy":  # the question came on a session only its principal's calls travel on
            assert answer["asked"] == f'accept:{{"ok": {mine}}}', answers
        else:  # 2026-07-28 has no push: the upstream's question fails there, for either
            assert answer["asked"].startswith("refused:") and "alice" not in answer["asked"], answers
    if transport == "stdio":  # each session (process) saw only its own principal's calls
        assert len(tokens["alice"]) == 2 and len(tokens["bob"]) == 2, tokens


async def test_a_resource_update_of_a_principals_own_session_reaches_that_principal_only(
    tmp_path: Path,
) -> None:
    """Both subscribe to the same URI; each one's ``touch`` changes it in their own session (a process each),
    whose ``resources/updated`` is theirs alone. Subscribed on the server's shared session instead, neither
    session's update would be let through (its own session was never subscribed)."""
    cfg = _config(tmp_path, isolation="per_principal", protocol="legacy")
    with http_sentinel(cfg) as (base, _proc):
        alice_seen, bob_seen = Seen("alice"), Seen("bob")
        async with _client(base, ALICE, alice_seen) as alice, _client(base, BOB, bob_seen) as bob:
            await alice.subscribe_resource("doc://alice")
            await bob.subscribe_resource("doc://alice")
            for client, seen in ((alice, alice_seen), (bob, bob_seen), (alice, alice_seen)):
                await client.call_tool("cx__touch", {"uri": "doc://alice"})
                await asyncio.wait_for(seen.updated.wait(), 30)
                seen.updated.clear()
            await bob.unsubscribe_resource("doc://alice")
            await bob.call_tool("cx__touch", {"uri": "doc://alice"})  # to no one: bob's session unsubscribed
            await alice.call_tool("cx__touch", {"uri": "doc://alice"})  # behind it: anything left arrives
            await asyncio.wait_for(alice_seen.updated.wait(), 30)
    assert alice_seen.got == ["updated:doc://alice"] * 3, alice_seen.got
    assert bob_seen.got == ["updated:doc://alice"], bob_seen.got


async def test_a_listen_stream_hears_its_own_principals_session_only(tmp_path: Path) -> None:
    """2026-era clients listening on both documents: each ``touch`` is one principal's own session's update,
    heard on that principal's streams only. A leak would come first: the update told to a stream before the
    marker its own principal touched next (one publish reaches every stream at once)."""
    cfg = _config(tmp_path, isolation="per_principal", protocol="legacy")
    docs = ["doc://alice", "doc://bob"]
    with http_sentinel(cfg) as (base, _proc):
        async with AsyncExitStack() as stack:
            streams = {}
            for who, token in (("alice", ALICE), ("bob", BOB)):
                http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=60)
                client = await stack.enter_async_context(
                    Client(streamable_http_client(f"{base}/mcp", http_client=http), mode="2026-07-28"))
                sub = await stack.enter_async_context(client.listen(resource_subscriptions=docs))
                assert sub.honored.resource_subscriptions == docs
                streams[who] = (client, sub)
            heard: list[tuple[str, str]] = []
            for round_ in range(2):  # each touches a document, then the other principal its marker
                for who, uri in (("alice", docs[0]), ("bob", docs[1]), ("bob", docs[0]), ("alice", docs[1])):
                    client, sub = streams[who]
                    await client.call_tool("cx__touch", {"uri": uri})
                    with anyio.fail_after(30):
                        async for event in sub:
                            heard.append((who, getattr(event, "uri", str(event))))
                            break
    mine = [("alice", docs[0]), ("bob", docs[1]), ("bob", docs[0]), ("alice", docs[1])]
    assert heard == mine * 2, heard


async def test_sampling_roots_and_url_completions_stay_with_their_own_principal(
    tmp_path: Path,
) -> None:
    """Sampling and roots requests reach the caller whose call asked. Each principal's session is a process
    of its own, choosing its URL elicitations' ids: bob's may name
    the id alice's asked her with (a counter, a guess). Its completion notice is bob's session's: it never
    tells alice that her sign-in finished; her own session's does."""
    cfg = _config(tmp_path, isolation="per_principal", protocol="legacy", command=sys.executable,
                  args=[RELAY])
    with http_sentinel(cfg) as (base, _proc):
        completed: dict[str, list[str]] = {"alice": [], "bob": []}
        asked: dict[str, list[str]] = {"alice": [], "bob": []}
        prompts: dict[str, list[str]] = {"alice": [], "bob": []}

        def handlers(who: str) -> dict[str, Any]:
            async def on_elicit(ctx: Any, params: Any) -> ElicitResult:
                asked[who].append(getattr(params, "elicitation_id", ""))
                return ElicitResult(action="accept")

            async def on_message(message: Any) -> None:
                if isinstance(message, ElicitCompleteNotification):
                    completed[who].append(message.params.elicitation_id)

            async def on_roots(ctx: Any) -> ListRootsResult:
                return ListRootsResult(roots=[Root(uri=f"file:///home/{who}", name=who)])

            return {"elicitation_callback": on_elicit, "message_handler": on_message,
                    "sampling_callback": model(who, prompts[who]), "list_roots_callback": on_roots}

        async with AsyncExitStack() as stack:
            clients = {}
            for who, token in (("alice", ALICE), ("bob", BOB)):
                http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=60)
                clients[who] = await stack.enter_async_context(
                    Client(streamable_http_client(f"{base}/mcp", http_client=http), mode="legacy",
                           **handlers(who)))
            alice, bob = clients["alice"], clients["bob"]
            # the sampling and roots requests of calls in flight together: each answered by its own caller
            sampled = await asyncio.gather(*(clients[w].call_tool("cx__sample", {"tag": w}) for w in clients),
                                           *(clients[w].call_tool("cx__roots", {}) for w in clients))
            assert [text(r) for r in sampled] == ["alice<-model alice", "bob<-model bob",
                                                  "file:///home/alice", "file:///home/bob"]
            assert prompts == {"alice": ["prompt alice"], "bob": ["prompt bob"]}
            for tag in ("0", "1"):
                assert text(await alice.call_tool("cx__open_link", {"tag": tag})) == "open_link:accept"
            assert asked == {"alice": ["link-0", "link-1"], "bob": []}

            async def alice_told(count: int) -> None:
                with anyio.fail_after(30):
                    while len(completed["alice"]) < count:
                        await anyio.sleep(0.02)

            assert text(await bob.call_tool("cx__complete", {"tag": "link-0"})) == "completed"
            # then alice's own session completes her other one: anything of bob's would have come first
            assert text(await alice.call_tool("cx__complete", {"tag": "link-1"})) == "completed"
            await alice_told(1)
            assert text(await alice.call_tool("cx__complete", {"tag": "link-0"})) == "completed"
            await alice_told(2)
    assert completed == {"alice": ["link-1", "link-0"], "bob": []}, completed
