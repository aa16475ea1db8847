"""Policy search and the agent's memory through the real gateway (Sentinel's own tools, both eras), and the
index underneath: words and vectors fused, hostile queries as plain words, lifetimes, per-principal scope."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path

import pytest
from tests.words.words_rig import AnsweringUser, airline_gateway, data_of, text_of

from sentinel_mcp.search.embedding import HashingEmbedder
from sentinel_mcp.search.passage_index import NewPassage, PassageIndex, fts_query
from sentinel_mcp.search.search_service import MemoryRefused, SearchService

pytestmark = pytest.mark.timeout(90)


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_policy_search_returns_cited_passages(tmp_path: Path, mode: str) -> None:
    async with airline_gateway(tmp_path, "mia_li_3668", AnsweringUser([]), mode=mode) as c:
        r = await c.call_tool("sentinel__sentinel_policy_search",
                              {"query": "how many free checked bags does a gold member get", "k": 3})
        assert not r.is_error, text_of(r)
        passages = data_of(r)["passages"]
        assert len(passages) == 3
        top = passages[0]
        assert top["document"] == "airline" and top["heading"].endswith("Book flight › Checked bag allowance")
        assert top["text"].startswith("If the booking user is a gold member") and top["lines"] == [91, 94]
        assert "airline lines 91-94" in text_of(r)
        # hostile or odd queries are plain words, never FTS syntax or an error
        for q in ['"', 'NEAR(a b) OR *', "bags) OR 1=1 --", "\u202eevil\u0000", "x" * 5000, ""]:
            r = await c.call_tool("sentinel__sentinel_policy_search", {"query": q, "k": 2})
            assert not r.is_error, (q, text_of(r))


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_memory_through_the_gateway(tmp_path: Path, mode: str) -> None:
    async with airline_gateway(tmp_path, "mia_li_3668", AnsweringUser([]), mode=mode) as c:
        for text, tags in [("Mia prefers aisle seats on long flights", ["preference"]),
                           ("Mia's trip to Seattle is for a conference in May", ["trip"])]:
            r = await c.call_tool("sentinel__memory_store", {"text": text, "tags": tags})
            assert not r.is_error, text_of(r)
        r = await c.call_tool("sentinel__memory_search", {"query": "which seat does she like"})
        assert data_of(r)["memories"][0]["text"] == "Mia prefers aisle seats on long flights"
        r = await c.call_tool("sentinel__memory_recent", {"n": 5})
        assert [m["text"] for m in data_of(r)["memories"]][0].startswith("Mia's trip to Seattle")
        # too long: refused by the rulebase's guard before the tool runs; empty: refused by the tool
        r = await c.call_tool("sentinel__memory_store", {"text": "x" * 5000})
        assert r.is_error and "at most 4000 characters" in text_of(r)
        r = await c.call_tool("sentinel__memory_store", {"text": "   "})
        assert r.is_error and "needs some text" in text_of(r)


async def test_memories_belong_to_their_principal_and_expire(tmp_path: Path) -> None:
    svc = SearchService(
        tmp_path / "p.db", embedder=HashingEmbedder(256), redact=lambda t: t.replace("1234", "****")
    )
    try:
        now = time.time()
        out = await svc.memory_store("alice", "alice's PIN hint: 1234", ["secret"], now=now)
        assert out["stored"] == "alice's PIN hint: ****" and out["redacted"]
        await svc.memory_store("alice", "short lived note about gates", ttl=0.2, now=time.time())
        assert await svc.memory_search("bob", "PIN hint") == [] and await svc.memory_recent("bob") == []
        assert len(await svc.memory_recent("alice")) == 2
        await asyncio.sleep(0.3)
        assert [m["text"] for m in await svc.memory_recent("alice")] == ["alice's PIN hint: ****"]
        assert await svc.memory_search("alice", "gates") == [] or all(
            "gates" not in m["text"] for m in await svc.memory_search("alice", "gates")
        )
        for bad in [
            dict(text=""),
            dict(text="a" * 5000),
            dict(text="ok", tags=["t"] * 40),
            dict(text="ok", ttl=-1),
        ]:
            with pytest.raises(MemoryRefused):
                await svc.memory_store("alice", **bad, now=now)  # type: ignore[arg-type]
    finally:
        await svc.close()


async def test_lone_surrogates_in_memories(tmp_path: Path) -> None:
    """JSON allows a lone surrogate; SQLite cannot keep one: a principal name with one is still its own key,
    a memory text or tag with one is refused clearly, a query with one finds nothing (none raise)."""
    svc = SearchService(tmp_path / "p.db", embedder=HashingEmbedder(256))
    try:
        now = time.time()
        await svc.memory_store("al\ud800ice", "window seat please", now=now)
        await svc.memory_store("al\udfffice", "aisle seat please", now=now)
        assert [m["text"] for m in await svc.memory_recent("al\ud800ice")] == ["window seat please"]
        assert [m["text"] for m in await svc.memory_recent("al\udfffice")] == ["aisle seat please"]
        assert await svc.memory_recent("alice") == []
        for bad in [dict(text="a\ud800"), dict(text="\udc00"), dict(text="ok", tags=["t\udbff"])]:
            with pytest.raises(MemoryRefused, match="lone surrogate"):
                await svc.memory_store("alice", **bad, now=now)  # type: ignore[arg-type]
        for q in ["seat\ud800", "\udfff", "\U0010f7ff\ud800"]:
            assert isinstance(await svc.memory_search("al\ud800ice", q), list)
    finally:
        await svc.close()


async def test_words_and_vectors_are_fused(tmp_path: Path) -> None:
    idx = await PassageIndex(tmp_path / "i.db", HashingEmbedder(256)).open()
    try:
        texts = [
            "Checked bags are free for gold members",
            "The refund arrives within a week",
            "Pets travel in the cabin",
            "Gold members board first",
        ]
        await idx.replace_source("ns", "doc", [NewPassage(text=t, source="doc") for t in texts], "d1")
        assert not await idx.replace_source("ns", "doc", [], "d1")  # same digest: nothing to do
        hits = await idx.search("ns", "free bags for gold", 2)
        assert hits[0].text == texts[0] and set(hits[0].by) == {"words", "vector"}
        assert await idx.search("other", "bags", 2) == []
        assert fts_query('bags" OR NEAR(') == '"bags" OR "near"'  # "or" is a stop word
    finally:
        await idx.close()


def test_the_question_set_names_real_paragraphs() -> None:
    from sentinel_mcp.paths import PROJECT_ROOT
    from sentinel_mcp.search.paragraphs import normalize, split_markdown

    data = json.loads((PROJECT_ROOT / "benchmarks" / "data" / "airline_policy_questions.json").read_text())
    paras = split_markdown((PROJECT_ROOT / "examples/airline/data/policy.md").read_text(), "airline")
    assert len(data["questions"]) >= 40
    for item in data["questions"]:
        assert any(normalize(item["a"]) in normalize(p.text) for p in paras), item
