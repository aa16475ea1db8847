"""What a tool's result taught, as rows (``fact_rows.learned``): the very rows, value rows and mirror rows
the ``Fact`` models gave (``fact_rows``, ``values_of``, ``Knowledge.add``), for any text a result can carry
(lone surrogates, the store's escape character, non-ASCII) and any argument value; and read back from a real
SQLite store, the same facts."""

from __future__ import annotations

import random
import time
from pathlib import Path
from typing import Any

import pytest

from sentinel_mcp.policy.fact_rows import Fact, fact_rows, learned, values_of
from sentinel_mcp.policy.fact_store import FactStore

pytestmark = pytest.mark.timeout(120)

_TEXTS = ["", "a", "8C8K4E", "é", "日本", "\ud800", "x\udfffy", "\U0010f7ff", "\U0010f7ff\ud800",
          "\U0010f800", "'quoted'", "new\nline", "\x00", "😀", "$", "\\"]


def _text(rng: random.Random) -> str:
    return "".join(rng.choice(_TEXTS) for _ in range(rng.randrange(0, 3)))


def _value(rng: random.Random, depth: int = 0) -> Any:
    kind = rng.randrange(9 if depth < 3 else 6)
    if kind == 0:
        return _text(rng)
    if kind == 1:
        return rng.randrange(-2**63, 2**63)
    if kind == 2:
        return rng.choice([0.0, -0.0, 1.5, 1e300, -2.5e-300])
    if kind == 3:
        return rng.choice([True, False, None])
    if kind in (4, 5):
        return _text(rng)
    if kind in (6, 7):
        return [_value(rng, depth + 1) for _ in range(rng.randrange(0, 4))]
    return {_text(rng): _value(rng, depth + 1) for _ in range(rng.randrange(0, 4))}


def _extracted(rng: random.Random) -> list[dict[str, Any]]:
    out = []
    for _ in range(rng.randrange(1, 30)):
        predicate = rng.choice(
            ["seat", "reservation_user", "$fetched", "$confirmed", "é_of", "$", _text(rng)]
        )
        args = [_value(rng) for _ in range(rng.randrange(0, 4))]
        out.append({"predicate": predicate, "args": args, "fact": f"{predicate}({_text(rng)})",
                    "ttl": rng.choice([None, 60, 0.5, 86400])})
    return out


def _models(session: str, tool: str, digest: str, extracted: list[dict[str, Any]], now: float) -> list[Fact]:
    """The Fact models the solver built for a result before (what ``learned`` must match)."""
    return [
        Fact(session=session, predicate=e["predicate"], args=e["args"], fact=e["fact"], provenance="observed",
             source_tool=tool, source_digest=digest, established_at=now,
             expires_at=None if e["ttl"] is None else now + float(e["ttl"]))
        for e in extracted
    ]


def test_the_rows_are_the_fact_models_rows() -> None:
    rng = random.Random(21)
    for _ in range(400):
        session, tool, digest = _text(rng) or "s", _text(rng) or "t", _text(rng) or "d"
        extracted, now = _extracted(rng), time.time()
        facts = _models(session, tool, digest, extracted, now)
        got = learned(session, tool, digest, extracted, now)
        assert got.rows == fact_rows(facts)
        assert got.values == values_of(facts)
        assert got.mirror == [(f.fact, f.expires_at, f.provenance) for f in facts]
        assert got.shown == sum(1 for f in facts if not f.internal)
        assert got.confirmations == [f.args for f in facts if f.predicate == "$confirmed"]
        assert got.session == session and got.source_tool == tool


async def test_learned_rows_read_back_as_the_models_learned(tmp_path: Path) -> None:
    rng = random.Random(7)
    by_rows, by_models = FactStore(tmp_path / "rows.db"), FactStore(tmp_path / "models.db")
    await by_rows.open()
    await by_models.open()
    try:
        sessions = [f"s{i}{_text(rng)}" for i in range(5)]
        for i in range(40):
            session = sessions[i % 5]
            extracted, now = _extracted(rng), time.time()
            await by_rows.learn_rows(learned(session, "airline__get", "d", extracted, now))
            await by_models.learn(_models(session, "airline__get", "d", extracted, now))
        for session in sessions:
            a = sorted((f.model_dump() for f in await by_rows.valid(session)), key=repr)
            b = sorted((f.model_dump() for f in await by_models.valid(session)), key=repr)
            assert a == b and a
    finally:
        await by_rows.close()
        await by_models.close()


async def test_a_learned_confirmation_names_its_tools(tmp_path: Path) -> None:
    """A rulebase could bind a '$confirmed' fact to a result: the store notes its tools, as for any write;
    one naming its tool otherwise than by a string makes every tool looked up."""
    store = FactStore(tmp_path / "f.db")
    await store.open()
    try:
        assert not store.confirmed_tools.may_name("airline__cancel")
        one = [{"predicate": "$confirmed", "args": ["airline__cancel", "d", 1, "x", "yes"],
                "fact": "'$confirmed'(airline__cancel)", "ttl": 60}]
        await store.learn_rows(learned("s", "airline__read", "d", one, time.time()))
        assert store.confirmed_tools.may_name("airline__cancel")
        assert store.confirmed_tools.may_name("airline__read")
        assert not store.confirmed_tools.may_name("other")
        odd = [{"predicate": "$confirmed", "args": [["not", "text"]], "fact": "'$confirmed'([n])", "ttl": 60}]
        await store.learn_rows(learned("s", "airline__read", "d", odd, time.time()))
        assert store.confirmed_tools.may_name("other")
    finally:
        await store.close()
