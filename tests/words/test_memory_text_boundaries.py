"""A memory's text and tags at every edge of Unicode: each code point that is a valid Unicode scalar value
(private use up to plane 16, the non-characters, the escape character ``stored_text`` uses for SQLite) is kept
and given back exactly; a lone surrogate (JSON allows one, UTF-8 cannot hold one) is refused with a message
that
names it and where it is. Never a wrong reason, never a raise of another kind."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from sentinel_mcp.core.stored_text import lone_surrogate
from sentinel_mcp.search.embedding import HashingEmbedder
from sentinel_mcp.search.search_service import MemoryRefused, SearchService
from sentinel_mcp.search.settings import SearchSettings

pytestmark = pytest.mark.timeout(60)

# both sides of every boundary of the class: BMP private use, the non-characters, the supplementary private
# use planes, stored_text's escape (U+10F7FF) and stand-ins (U+10F800..), the last code point
KEPT = [
    0xD7FF,
    0xE000,
    0xF8FF,
    0xF900,
    0xFDCF,
    0xFDD0,
    0xFDEF,
    0xFDF0,
    0xFFFD,
    0xFFFE,
    0xFFFF,
    0x10000,
    0x1FFFE,
    0x1FFFF,
    0xEFFFF,
    0xF0000,
    0xFFFFD,
    0xFFFFF,
    0x100000,
    0x10F7FE,
    0x10F7FF,
    0x10F800,
    0x10FBFF,
    0x10FC00,
    0x10FFFD,
    0x10FFFE,
    0x10FFFF,
]
SURROGATES = [0xD800, 0xDBFF, 0xDC00, 0xDFFF]


@pytest.fixture
async def svc(tmp_path: Path):  # type: ignore[no-untyped-def]
    s = SearchService(tmp_path / "m.db", SearchSettings(max_results=100), embedder=HashingEmbedder(64))
    try:
        yield s
    finally:
        await s.close()


async def test_every_valid_code_point_at_a_boundary_is_kept_exactly(svc: SearchService) -> None:
    now = time.time()
    texts = [f"note {chr(cp)} end" for cp in KEPT] + ["".join(chr(cp) for cp in KEPT)]
    texts += [
        "\U0010f7ff",
        "\U0010f7ff\U0010f800",
        "x\U0010f7ff\U0010f7ffy",
    ]  # what an escaped string looks like
    for i, text in enumerate(texts):
        out = await svc.memory_store("alice", text, tags=[f"t{chr(KEPT[i % len(KEPT)])}"], now=now)
        assert out["stored"] == text and not out["redacted"], hex(KEPT[i % len(KEPT)])
    recent = await svc.memory_recent("alice", 100)
    assert sorted(m["text"] for m in recent) == sorted(texts)
    assert sorted(m["tags"][0] for m in recent) == sorted(
        f"t{chr(KEPT[i % len(KEPT)])}" for i in range(len(texts))
    )
    # a query with the escape character finds the memory that has it (it is not rewritten on the way)
    hits = await svc.memory_search("alice", "x\U0010f7ff\U0010f7ffy", 3)
    assert "x\U0010f7ff\U0010f7ffy" in [h["text"] for h in hits]


@pytest.mark.parametrize("cp", SURROGATES)
async def test_a_lone_surrogate_is_refused_naming_it(svc: SearchService, cp: int) -> None:
    now = time.time()
    for text, tags, where in [
        (f"ab{chr(cp)}c", [], "text"),
        (f"\U0010f7ff{chr(cp)}", [], "text"),
        ("fine", ["ok", f"t{chr(cp)}"], "tag 2"),
    ]:
        with pytest.raises(MemoryRefused) as e:
            await svc.memory_store("alice", text, tags=tags, now=now)
        msg = str(e.value)
        assert f"U+{cp:04X}" in msg and "lone surrogate" in msg and where in msg, msg
    assert await svc.memory_recent("alice") == []


def test_lone_surrogate_finds_the_first_one() -> None:
    assert lone_surrogate("\U0010f7ff\U0010ffff\ufffe") is None
    assert lone_surrogate("ab\udc00\ud800") == (2, "\udc00")
    assert lone_surrogate("\U0001f600") is None  # a pair, once decoded, is one character
