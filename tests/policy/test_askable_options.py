"""An askable's options: ``ttl(Seconds)`` is how long an answer counts (the user's, the agent's, a yes, a no
and "I don't know" alike), after which the question is asked again; an option the loader does not know, or
of the wrong kind, is an error naming the file and line (a misspelt ttl would keep an answer for the whole
conversation), at start, in ``check`` and at a hot reload, which keeps the version in force and says why.
Real SWI-Prolog and fact store."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from tests.policy.policy_rig import make_guard
from tests.policy.test_answer_once import asked, call

from sentinel_mcp.core.decision import Allow, Answer, Ask
from sentinel_mcp.policy import rulebase as rulebase_module
from sentinel_mcp.policy.checker import check_files
from sentinel_mcp.policy.engine import shared_engine
from sentinel_mcp.policy.rulebase import RulebaseHolder

pytestmark = pytest.mark.timeout(120)

GUARDS = """
guard('shop__pay', [account = A], ( note(A, _) )).
guard('shop__drop', [item = X], ( sure(X) )).
"""


@pytest.mark.parametrize("provenance", ["user", "agent"])
async def test_an_answer_counts_for_its_ttl_then_the_question_is_asked_again(tmp_path: Path,
                                                                               provenance: str) -> None:
    pl = tmp_path / "shop.pl"
    pl.write_text('askable(note(A, N), "A note for ~w?", text, [from([user, agent]), ttl(1)]).\n'
                  'askable(sure(X), "Sure about ~w?", yes_no, [ttl(1)]).\n' + GUARDS)
    guard = await make_guard(None, tmp_path / "facts.db", files=[pl], seeds={})
    try:
        pay = call("pay", {"account": "A1"})
        q = await asked(guard, pay)
        await guard.record_answer(pay, q, Answer(action="accept", content={"answer": "hello"},
                                                 provenance=provenance))  # type: ignore[arg-type]
        assert isinstance(await guard.decide(pay), Allow)
        drop = call("drop", {"item": "x"})
        q = await asked(guard, drop)
        await guard.record_answer(drop, q, Answer(action="accept", content={"answer": "yes"},
                                                  provenance=provenance))  # type: ignore[arg-type]
        assert isinstance(await guard.decide(drop), Allow)
        stored = await guard.store.valid("s1")
        assert stored and all(f.expires_at is not None for f in stored), stored
        await asyncio.sleep(1.3)  # past the answers' ttl (not a timing bound: any later moment is the same)
        assert isinstance(await guard.decide(pay), Ask)
        assert isinstance(await guard.decide(drop), Ask)
    finally:
        await guard.close()


async def test_without_a_ttl_an_answer_counts_for_the_session(tmp_path: Path) -> None:
    pl = tmp_path / "shop.pl"
    pl.write_text('askable(note(A, N), "A note for ~w?", text, []).\n'
                  'askable(sure(X), "Sure about ~w?", yes_no, [ttl(session)]).\n' + GUARDS)
    guard = await make_guard(None, tmp_path / "facts.db", files=[pl], seeds={})
    try:
        pay = call("pay", {"account": "A1"})
        await guard.record_answer(pay, await asked(guard, pay),
                                  Answer(action="accept", content={"answer": "hi"}, provenance="user"))
        assert [f.expires_at for f in await guard.store.valid("s1")] == [None]
    finally:
        await guard.close()


BAD = [
    "from(user)", "from([])", "from([nobody])", "from([user, X])", "from(X)", "from([user|_])",
    "ttl(-3)", "ttl(0)", "ttl(abc)", "ttl('60')", "ttl(\"60\")", "ttl(1.0Inf)", "ttl(nan)", "ttl(X)",
    "bogus(1)", "X", "ttl", "unknown(_)", "unknown(as(_))", "unknown('')", "unknown(42)",
    "ttl(60), ttl(5)", "from([user]), from([agent])",
]


@pytest.mark.parametrize("options", BAD)
async def test_an_askable_option_the_loader_does_not_know_is_an_error_with_its_line(tmp_path: Path,
                                                                                     options: str) -> None:
    pl = tmp_path / "shop.pl"
    pl.write_text(f'% shop\n\naskable(note(A, N), "A note for ~w?", text, [{options}]).\n' + GUARDS)
    problems = await check_files(shared_engine(), [pl])
    errors = [p for p in problems if p.severity == "error" and "askable option" in p.message]
    assert errors and errors[0].line == 3 and errors[0].file.endswith("shop.pl"), problems


@pytest.mark.parametrize("options", ["from([user])", "from([agent, user])", "ttl(600)", "ttl(0.5)",
                                     "ttl(session)", "unknown(as(other))", "unknown('Ask again later.')",
                                     "unknown(\"Ask again.\")", "from([user]), ttl(30), unknown(as(none))"])
async def test_the_askable_options_load(tmp_path: Path, options: str) -> None:
    pl = tmp_path / "shop.pl"
    pl.write_text(f'askable(note(A, N), "A note for ~w?", text, [{options}]).\n'
                  'askable(sure(X), "Sure about ~w?", yes_no, []).\n' + GUARDS)
    problems = await check_files(shared_engine(), [pl])
    assert not [p for p in problems if p.severity == "error"], problems


async def test_a_hot_reload_that_cannot_load_keeps_the_version_in_force_and_says_why(tmp_path: Path,
                                                                                    monkeypatch) -> None:
    pl = tmp_path / "shop.pl"
    good = ('askable(note(A, N), "A note for ~w?", text, []).\n'
            'askable(sure(X), "Sure about ~w?", yes_no, []).\n' + GUARDS)
    pl.write_text(good)
    holder = RulebaseHolder(shared_engine(), [pl])
    await holder.reload(cause="start")
    first = holder.current.version
    try:
        pl.write_text(good + "guard('shop__echo', [], require(fail, 'tightened')).\n"
                      'askable(sure2(X), "Sure ~w?", yes_no, [from(user)]).\n')
        assert await holder.reload(cause="hot reload") is False
        assert holder.current.version == first
        said = holder.last_error or ""
        assert "shop.pl:7" in said and "askable option" in said, said

        # a fault of the loader's own (not a problem of the file) is a failed load too, never a silent one
        async def broken(*_: Any, **__: Any) -> Any:
            raise ValueError("the loader tripped")

        monkeypatch.setattr(rulebase_module, "load_rulebase", broken)
        pl.write_text(good + "% a change\n")
        assert await holder.reload(cause="hot reload") is False
        assert holder.current.version == first and "the loader tripped" in (holder.last_error or "")
    finally:
        await holder.unload_all()
