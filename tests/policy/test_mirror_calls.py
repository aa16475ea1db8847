"""Facts mirrored into a session's module (``PrologEngine.assert_facts``: one direct call of ``sn_mirror``):
every text the fact store can hold reads back as the same term, a refreshed fact replaces the older one,
and a text that is not one a line (a raw tab or line break between quotes) still goes in whole, as a list."""

from __future__ import annotations

from typing import Any

import pytest

from sentinel_mcp.policy.engine import PrologEngine
from sentinel_mcp.policy.prolog_text import fact_text

pytestmark = pytest.mark.timeout(60)

TEXTS = ["plain", "it's", "caf\u00e9", "\U0001f600 smile", "lone \ud800 half", "back\\slash", "x" * 5000]


@pytest.fixture
async def engine() -> Any:
    eng = PrologEngine()
    eng.start()
    yield eng


async def _dump(eng: PrologEngine, session: str) -> list[str]:
    return sorted(line for line in (await eng.dump_session(session)).splitlines() if line)


async def test_every_text_reads_back_as_the_fact_it_was(engine: PrologEngine) -> None:
    facts = []
    for i, t in enumerate(TEXTS):
        j = await engine.fact_json(fact_text("note", [f"k{i}", t, i, {"nested": [t]}]))
        facts.append((j["fact"], 1e12 + i, "observed"))
    await engine.assert_facts("s_mirror", facts)
    back = await _dump(engine, "s_mirror")
    assert len(back) == len(TEXTS)
    for text, exp, prov in facts:  # the canonical text round-trips: the same term is stored
        again = (await engine.fact_json(text))["fact"]
        assert again == text
        fields = [line.split("\t") for line in back]
        assert any(f[2] == prov and f[1].startswith(str(exp)[:6]) for f in fields)


async def test_a_refreshed_fact_replaces_the_older_one(engine: PrologEngine) -> None:
    text = (await engine.fact_json("seat('R1', '1A')"))["fact"]
    await engine.assert_facts("s_refresh", [(text, 100.0, "observed")])
    await engine.assert_facts("s_refresh", [(text, 200.0, "user"), (text, 300.0, "observed")])
    back = await _dump(engine, "s_refresh")
    assert len(back) == 1 and back[0].split("\t")[1:] == ["300.0", "observed"]


@pytest.mark.parametrize("raw", ["a\tb", "line\nbreak", "both\t\n"])
async def test_a_text_with_a_raw_tab_or_line_break_goes_in_whole(engine: PrologEngine, raw: str) -> None:
    text = "note('" + raw + "')"  # valid Prolog: a quoted atom may hold them as they are
    session = f"s_raw_{len(raw)}_{raw.count(chr(9))}"  # SWI-Prolog's modules outlive an engine object
    await engine.assert_facts(session, [(text, None, "agent"), ("other(1)", None, "agent")])
    back = await _dump(engine, session)
    assert len(back) == 2  # note/1 and other/1: nothing split into lines of their own
    assert [line.split("\t")[0] for line in back] == [(await engine.fact_json(text))["fact"], "other(1)"]
