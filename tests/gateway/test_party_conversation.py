"""2026-era HTTP requests that carry one conversation back (the id Sentinel sealed for it, or a label of the
principal's own) are one party at a handshake-era stdio upstream: their calls overlap, and a question is asked
in one of them, marked as naming no call. A request that carries nothing is a party of its own (its calls take
turns with everyone's), another conversation is another party, and another principal never shares one, even
under the same label. Sentinel as a process over streamable HTTP, the toolbox over stdio behind it, the real
``mcp`` client.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import anyio
import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from .helpers import TOOLBOX, sentinel_http
from .test_party_held import NOTE, asking_at_once
from .test_party_overlap import _answering, _no_questions, _slow

pytestmark = pytest.mark.timeout(180)
ALICE, BOB = "alice-conversation-token-0123456789", "bob-conversation-token-0123456789ab"
MODERN = "2026-07-28"


@pytest.fixture(scope="module")
def url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    yield from _sentinel(tmp_path_factory)


@pytest.fixture
def alice_only_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A Sentinel whose upstream only alice calls: once another principal's calls went to it, what it pushes
    naming no call reaches no one (tests/identity/test_pushes_naming_no_call.py)."""
    yield from _sentinel(tmp_path_factory)


def _sentinel(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    tmp: Path = tmp_path_factory.mktemp("party-conversation")
    with sentinel_http(tmp, {
        "mcpServers": {"tb": {"command": sys.executable, "args": [TOOLBOX]}},
        "sentinel": {"data_dir": str(tmp / "state"),
                     "principals": [{"name": "alice", "token": ALICE}, {"name": "bob", "token": BOB}]},
    }) as mcp_url:
        yield mcp_url


def _client(url: str, token: str = ALICE, label: str | None = None, asks=None) -> Client:  # noqa: ANN001
    headers = {"Authorization": f"Bearer {token}"}
    if label is not None:
        headers["X-Sentinel-Session"] = label
    http = httpx2.AsyncClient(timeout=60, headers=headers)
    return Client(streamable_http_client(url, http_client=http), mode=MODERN, elicitation_callback=asks)


def _overlapped(spans: list[tuple[float, float]]) -> bool:
    return max(s for s, _ in spans) < min(e for _, e in spans)


def _in_turn(spans: list[tuple[float, float]]) -> bool:
    spans = sorted(spans)
    return all(a[1] <= b[0] for a, b in zip(spans, spans[1:]))


@pytest.mark.parametrize("asks", [None, _no_questions], ids=["plain", "held"])
async def test_requests_carrying_one_label_overlap(url: str, asks) -> None:  # noqa: ANN001
    spans: list[tuple[float, float]] = []
    async with _client(url, label="trip", asks=asks) as c:
        assert c.protocol_version == MODERN
        async with anyio.create_task_group() as tg:
            for _ in range(3):
                tg.start_soon(_slow, c, spans, 0.8)
    assert len(spans) == 3 and _overlapped(spans), spans


async def test_requests_carrying_the_sealed_id_overlap(url: str) -> None:
    """No label: the conversation sealed in the first result's ``_meta``, carried back in each call's."""
    spans: list[tuple[float, float]] = []
    async with _client(url) as c:
        first = await c.call_tool("tb__noop", {})
        sealed = first.meta["sentinel/session"]

        async def slow() -> None:
            r = await c.call_tool("tb__slow", {"seconds": 0.8}, meta={"sentinel/session": sealed})
            start, end = (float(x) for x in r.content[0].text.split())
            spans.append((start, end))

        async with anyio.create_task_group() as tg:
            for _ in range(3):
                tg.start_soon(slow)
    assert len(spans) == 3 and _overlapped(spans), spans


async def test_requests_carrying_nothing_take_turns(url: str) -> None:
    spans: list[tuple[float, float]] = []
    async with _client(url) as c:
        async with anyio.create_task_group() as tg:
            for _ in range(3):
                tg.start_soon(_slow, c, spans, 0.4)
    assert len(spans) == 3 and _in_turn(spans), spans


@pytest.mark.parametrize("other", [("alice", "another-trip"), ("bob", "trip")], ids=["label", "principal"])
async def test_another_conversation_or_principal_takes_turns(url: str, other: tuple[str, str]) -> None:
    """Alice's "trip" against Alice's other label, and against Bob's "trip" (a label names a conversation of
    its own principal's only): never one party, so their calls run one after another."""
    token = {"alice": ALICE, "bob": BOB}[other[0]]
    spans: dict[str, list[tuple[float, float]]] = {"one": [], "two": []}
    async with _client(url, label="trip") as one, _client(url, token=token, label=other[1]) as two:
        async with anyio.create_task_group() as tg:
            tg.start_soon(_slow, one, spans["one"], 0.6)
            tg.start_soon(_slow, two, spans["two"], 0.6)
    assert _in_turn(spans["one"] + spans["two"]), spans


async def test_asking_calls_of_one_conversation_each_get_their_own_word(alice_only_url: str) -> None:
    """Four asking calls at once carrying one label, the client answering in the calls' rounds: each
    question is asked once, marked as naming no call when others were in flight, and every call gets the
    word for its own item, whichever round carried its question."""
    shown: list[str] = []
    async with _client(alice_only_url, label="asking", asks=_answering(shown)) as c:
        results = await asking_at_once(c, 4)
    assert results == {f"item{i}": f"item{i}=ITEM{i}" for i in range(4)}
    assert sorted(m.split("a word for ")[1].split()[0].strip(".?:") for m in shown) == [
        f"item{i}" for i in range(4)
    ], shown
    assert any(NOTE in m for m in shown), shown  # at least the first, asked while all four were in flight
