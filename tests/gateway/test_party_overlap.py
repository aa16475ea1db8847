"""A handshake-era stdio upstream (its pushed questions name no call): one client session's calls to it
overlap, another client's wait their turn, and every question still reaches only the client whose call asked.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import anyio
import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.types import ElicitResult

from sentinel_mcp.app.runtime import running_gateway
from tests.support.forked_upstreams import forked_spec

from .helpers import TOOLBOX, make_config, sentinel_http

if TYPE_CHECKING:
    from mcp import StdioServerParameters

pytestmark = pytest.mark.timeout(120)


async def _no_questions(ctx, params):  # noqa: ANN001 - declares elicitation: the client itself can be asked
    return ElicitResult(action="decline")


async def _slow(c: Client, out: list[tuple[float, float]], seconds: float) -> None:
    r = await c.call_tool("tb__slow", {"seconds": seconds})
    start, end = (float(x) for x in r.content[0].text.split())
    out.append((start, end))


async def test_one_clients_parallel_calls_overlap(data_dir) -> None:
    async with running_gateway(make_config(data_dir)) as rt:
        async with Client(rt.front.server, mode="legacy", elicitation_callback=_no_questions) as c:
            spans: list[tuple[float, float]] = []
            async with anyio.create_task_group() as tg:
                for _ in range(3):
                    tg.start_soon(_slow, c, spans, 0.8)
    assert len(spans) == 3
    # all three ran at once in the upstream (taking turns, they would run one after another)
    assert max(s for s, _ in spans) < min(e for _, e in spans)


async def test_two_clients_calls_take_turns(data_dir) -> None:
    async with running_gateway(make_config(data_dir)) as rt:
        async with Client(rt.front.server, mode="legacy", elicitation_callback=_no_questions) as one, \
                Client(rt.front.server, mode="legacy", elicitation_callback=_no_questions) as two:
            spans: dict[str, list[tuple[float, float]]] = {"one": [], "two": []}
            async with anyio.create_task_group() as tg:
                for _ in range(2):
                    tg.start_soon(_slow, one, spans["one"], 0.4)
                    tg.start_soon(_slow, two, spans["two"], 0.4)
    for a in spans["one"]:
        for b in spans["two"]:
            assert a[1] <= b[0] or b[1] <= a[0], f"calls of two clients overlapped: {a} {b}"


def _answering(seen: list[str]):  # noqa: ANN202
    async def callback(ctx, params):  # noqa: ANN001
        seen.append(params.message)
        item = re.search(r"a word for (\w+)", params.message).group(1)
        await anyio.sleep(0.05)
        return ElicitResult(action="accept", content={"word": item.upper()})

    return callback


async def test_every_question_reaches_only_the_client_whose_call_asked(data_dir) -> None:
    """Two clients, three asking calls each at once: each client is asked its own items only, and each call
    gets the word for its own item (a question routed to the wrong client would show up in its list)."""
    async with running_gateway(make_config(data_dir)) as rt:
        front = rt.front.server
        await _two_clients_ask(
            lambda seen: Client(front, mode="legacy", elicitation_callback=_answering(seen))
        )


async def _two_clients_ask(connect) -> None:  # noqa: ANN001 - connect(seen list) -> an unopened Client
    """Two clients ask three questions each at once: each is asked only its own, each call gets its word."""
    seen: dict[str, list[str]] = {"one": [], "two": []}
    results: dict[str, str] = {}
    async with connect(seen["one"]) as one, connect(seen["two"]) as two:

        async def ask(c: Client, item: str) -> None:
            r = await c.call_tool("tb__ask_word", {"item": item})
            results[item] = r.content[0].text

        async with anyio.create_task_group() as tg:
            for i in range(3):
                tg.start_soon(ask, one, f"one{i}")
                tg.start_soon(ask, two, f"two{i}")
    assert results == {f"{w}{i}": f"{w}{i}={w.upper()}{i}" for w in ("one", "two") for i in range(3)}
    assert len(seen["one"]) == 3 and all("one" in m and "two" not in m for m in seen["one"])
    assert len(seen["two"]) == 3 and all("two" in m and "one" not in m for m in seen["two"])


async def test_a_refused_answer_to_a_shared_question_says_it_may_be_another_calls() -> None:
    """A question asked on one of a client's calls in flight names no call: a refused answer to it is recorded
    under the call that carried it, saying so."""
    from sentinel_mcp.gateway.front_link import FrontLink

    reasons: list[str] = []

    async def report(reason: str) -> None:
        reasons.append(reason)

    link = FrontLink(object(), on_refused=report)  # type: ignore[arg-type]
    assert link.for_one_of(1) is link
    shared = link.for_one_of(3)
    assert shared is not link and link.on_refused is report
    assert shared.on_refused is not None
    await shared.on_refused("sentinel: the answer does not fit the question: x")
    assert reasons == [
        "sentinel: the answer does not fit the question: x (the question names no call: it may be about "
        "any of the 3 calls this client had in flight at that server)"
    ]


async def test_concurrent_false_runs_one_call_at_a_time_even_for_one_client(data_dir) -> None:
    """``"concurrent": false``: an upstream that cannot take two calls at once gets one at a time."""
    from .helpers import toolbox_stdio

    servers = {"tb": {**toolbox_stdio(), "concurrent": False}}
    async with running_gateway(make_config(data_dir, servers)) as rt:
        async with Client(rt.front.server, mode="legacy", elicitation_callback=_no_questions) as c:
            spans: list[tuple[float, float]] = []
            async with anyio.create_task_group() as tg:
                for _ in range(3):
                    tg.start_soon(_slow, c, spans, 0.3)
    spans.sort()
    assert all(a[1] <= b[0] for a, b in zip(spans, spans[1:])), spans


TOKEN = "party-overlap-owner-token-0123456789"


@pytest.fixture(scope="module")
def http_sentinel(tmp_path_factory: pytest.TempPathFactory):  # noqa: ANN201
    """Sentinel as a process over streamable HTTP (the lean 2025 session path), the toolbox over stdio."""
    tmp: Path = tmp_path_factory.mktemp("party-http")
    with sentinel_http(tmp, {
        "mcpServers": {"tb": forked_spec(TOOLBOX)},
        "sentinel": {"data_dir": str(tmp / "state"), "http": {"token": TOKEN}},
    }) as url:
        yield url


def _over_http(url: str, callback) -> Client:  # noqa: ANN001
    http = httpx2.AsyncClient(timeout=30, headers={"Authorization": f"Bearer {TOKEN}"})
    return Client(streamable_http_client(url, http_client=http), mode="legacy", elicitation_callback=callback)


async def test_over_http_a_sessions_calls_overlap_its_questions_stay_with_it(http_sentinel) -> None:
    """The same over HTTP: each POST of a session is its own request, the session one party."""
    spans: list[tuple[float, float]] = []
    async with _over_http(http_sentinel, _no_questions) as c:
        async with anyio.create_task_group() as tg:
            for _ in range(3):
                tg.start_soon(_slow, c, spans, 0.8)
    assert len(spans) == 3 and max(s for s, _ in spans) < min(e for _, e in spans)

    await _two_clients_ask(lambda seen: _over_http(http_sentinel, _answering(seen)))


async def test_a_caller_that_gives_up_while_waiting_leaves_no_turn_behind(data_dir) -> None:
    """B's call waits behind A's; B gives up (its request cancelled): A's next calls still overlap, B's next
    call runs once A's end, and nothing hangs."""
    async with running_gateway(make_config(data_dir)) as rt:
        front = rt.front.server
        async with Client(front, mode="legacy", elicitation_callback=_no_questions) as a, \
                Client(front, mode="legacy", elicitation_callback=_no_questions) as b:
            first: list[tuple[float, float]] = []
            async with anyio.create_task_group() as tg:
                tg.start_soon(_slow, a, first, 1.0)
                await anyio.sleep(0.3)
                with anyio.move_on_after(0.3):  # waits behind A's call, then is cancelled
                    await b.call_tool("tb__slow", {"seconds": 0.1})
            later: list[tuple[float, float]] = []
            with anyio.fail_after(20):
                async with anyio.create_task_group() as tg:
                    for _ in range(2):
                        tg.start_soon(_slow, a, later, 0.6)
                assert max(s for s, _ in later) < min(e for _, e in later)  # A's calls still overlap
                mine: list[tuple[float, float]] = []
                await _slow(b, mine, 0.1)
    assert len(first) == 1 and len(mine) == 1


def test_the_party_is_the_channel_and_the_principal() -> None:
    """Two principals never make one party, even on one connection; a caller without one is no party; the
    2026-era requests of one stdio process share its channel, two HTTP requests share nothing."""
    from types import SimpleNamespace

    from sentinel_mcp.core.caller_link import CallerLink
    from sentinel_mcp.gateway.front_link import FrontLink

    def ctx(conn: object | None) -> SimpleNamespace:
        return SimpleNamespace(session=SimpleNamespace(_connection=conn), protocol_version="2025-11-25")

    conn = object()
    alice, alice2 = FrontLink(ctx(conn), principal="alice"), FrontLink(ctx(conn), principal="alice")  # type: ignore[arg-type]
    bob = FrontLink(ctx(conn), principal="bob")  # type: ignore[arg-type]
    elsewhere = FrontLink(ctx(object()), principal="alice")  # type: ignore[arg-type]
    assert alice.party is not None and alice.party == alice2.party
    assert alice.party != bob.party and alice.party != elsewhere.party
    assert FrontLink(ctx(None), principal="alice").party is None  # type: ignore[arg-type]
    assert CallerLink().party is None
    # 2026-era requests over one stdio process: a connection each, on the process's one channel
    channel, nowhere = object(), object()
    class Conn:  # compared by identity, as the SDK's connections are
        def __init__(self, outbound: object, has_channel: bool) -> None:
            self.outbound, self.has_standalone_channel = outbound, has_channel

    on_stdio = [Conn(channel, True) for _ in range(2)]
    over_http = [Conn(nowhere, False) for _ in range(2)]
    a, b = (FrontLink(ctx(c), principal="alice") for c in on_stdio)  # type: ignore[arg-type]
    assert a.party == b.party
    assert FrontLink(ctx(on_stdio[0]), principal="bob").party != a.party  # type: ignore[arg-type]
    h1, h2 = (FrontLink(ctx(c), principal="alice") for c in over_http)  # type: ignore[arg-type]
    assert h1.party != h2.party  # no channel (one HTTP request each): no common party
    # ... unless both carried one conversation back (a 2026-era client's sealed id or label): its channel
    c1, c2 = (FrontLink(ctx(c), principal="alice", conversation="alice/conv-1") for c in over_http)  # type: ignore[arg-type]
    assert c1.party == c2.party and c1.party != h1.party
    assert FrontLink(ctx(over_http[0]), principal="bob", conversation="alice/conv-1").party != c1.party  # type: ignore[arg-type]
    assert FrontLink(ctx(over_http[0]), principal="alice", conversation="alice/conv-2").party != c1.party  # type: ignore[arg-type]
    # a stdio process's one channel stays the party whatever its requests carry
    assert FrontLink(ctx(on_stdio[0]), principal="alice", conversation="alice/conv-1").party == a.party  # type: ignore[arg-type]


def sentinel_over_stdio(tmp_path: Path) -> "StdioServerParameters":
    """Sentinel as a stdio process (one channel for all its 2026-era requests), the toolbox behind it."""
    from mcp import StdioServerParameters

    cfg = tmp_path / "sentinel.json"
    cfg.write_text(json.dumps({"mcpServers": {"tb": forked_spec(TOOLBOX)},
                               "sentinel": {"data_dir": str(tmp_path / "state")}}))
    return StdioServerParameters(command=sys.executable, args=["-m", "sentinel_mcp", "-c", str(cfg), "serve"])


@pytest.mark.parametrize("asks", [None, _no_questions], ids=["plain", "held"])
async def test_a_2026_stdio_clients_parallel_calls_overlap(tmp_path: Path, asks) -> None:  # noqa: ANN001
    """Sentinel as a stdio process, a 2026-era client (each request a connection of its own on the process's
    one channel): its parallel calls to the handshake-era toolbox overlap, plain, and held (a client that can
    be asked gets the upstream's questions in its calls' rounds)."""
    spans: list[tuple[float, float]] = []
    async with Client(sentinel_over_stdio(tmp_path), mode="auto", elicitation_callback=asks) as c:
        assert c.protocol_version == "2026-07-28"
        async with anyio.create_task_group() as tg:
            for _ in range(3):
                tg.start_soon(_slow, c, spans, 0.8)
    assert len(spans) == 3 and max(s for s, _ in spans) < min(e for _, e in spans)
