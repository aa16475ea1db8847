"""``PolicyGuard.observe`` without a fact store look-up for tools no stored confirmation names
(``policy/confirmed_tools.py``), and everything it must still do: spend a confirmation (also one given under
an earlier rulebase version, by an earlier process, or with the session no longer in the engine), learn from a
bound read tool, apply an effect."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from mcp.types import CallToolResult, TextContent
from tests.policy.policy_rig import BOOKINGS_PL, ClientPort, make_guard, rig

from sentinel_mcp.core.decision import Allow, Answer, Ask
from sentinel_mcp.policy.confirmed_tools import ConfirmedTools
from sentinel_mcp.policy.fact_store import Fact, FactStore
from sentinel_mcp.policy.guard import PolicyGuard

pytestmark = pytest.mark.timeout(60)

# merge is confirmed and nothing else: no binding reads it, no effect names it (observe has only the
# confirmation to spend)
CONFIRMED_MERGE = """
guard('bk__merge_bookings', [first = A, second = B], confirmed('Merge ~w into ~w?', [A, B])).
"""
MERGE = {"first": "BK-789", "second": "BK-456"}
OK = CallToolResult(content=[TextContent(type="text", text="ok")])
FAILED = CallToolResult(content=[TextContent(type="text", text="no")], is_error=True)


def _rulebase(tmp_path: Path, extra: str) -> Path:
    path = tmp_path / "rules.pl"
    path.write_text(BOOKINGS_PL.read_text().replace(
        "guard('bk__merge_bookings'", "was_guard('bk__merge_bookings'") + extra)
    return path


def count_reads(guard: PolicyGuard) -> list[str]:
    """Every query the guard's fact store runs from now on (the SQL text)."""
    seen: list[str] = []
    db = guard.store.db
    real = db.query

    async def query(sql: str, params: Any = ()) -> Any:
        seen.append(sql)
        return await real(sql, params)

    db.query = query  # type: ignore[method-assign]
    return seen


async def _confirm(guard: PolicyGuard, port: ClientPort, arguments: dict[str, Any]) -> Any:
    call = port.call_of("bk__merge_bookings", arguments)
    ask = await guard.decide(call)
    assert isinstance(ask, Ask) and ask.questions[-1].meta["kind"] == "confirm", ask
    await guard.record_answer(call, ask.questions[-1], Answer(action="accept", content={"answer": True}))
    assert isinstance(await guard.decide(call, spend=False), Allow)  # what it would get, nothing used up
    return call


async def test_an_unconfirmed_tool_costs_no_look_up_in_a_private_or_loaded_session(tmp_path: Path) -> None:
    async with rig(tmp_path / "facts.db") as r:
        r.guard.private = lambda session: session.startswith("mine/")
        reads = count_reads(r.guard)
        for i in range(20):
            await r.guard.observe(r.port.call_of("bk__merge_bookings", MERGE, session_id=f"mine/{i}"), OK)
        assert reads == [] and not r.guard.knowledge.is_loaded("mine/3")  # nothing read, nothing loaded
        # a session the engine mirrors: nothing to retract either
        await r.guard.knowledge.ensure("theirs", r.guard.rulebases.current)
        reads.clear()
        retracts = count_engine(r.guard, "retract")
        await r.guard.observe(r.port.call_of("bk__merge_bookings", MERGE, session_id="theirs"), OK)
        assert reads == [] and retracts == []
        # a session another process may write, not loaded: the store is asked, as before
        await r.guard.observe(r.port.call_of("bk__merge_bookings", MERGE, session_id="other"), OK)
        assert len(reads) == 1 and "'$confirmed'" in reads[0]


def count_engine(guard: PolicyGuard, name: str) -> list[Any]:
    seen: list[Any] = []
    real = getattr(guard.engine, name)

    async def counted(*a: Any, **k: Any) -> Any:
        seen.append(a)
        return await real(*a, **k)

    setattr(guard.engine, name, counted)
    return seen


@pytest.mark.parametrize("where", ["session-in-engine", "session-only-stored", "private-session-only-stored"])
async def test_a_confirmed_call_spends_its_confirmation(tmp_path: Path, where: str) -> None:
    async with rig(tmp_path / "facts.db", files=[_rulebase(tmp_path, CONFIRMED_MERGE)]) as r:
        r.guard.private = lambda session: where.startswith("private")
        call = await _confirm(r.guard, r.port, MERGE)
        if where != "session-in-engine":
            await r.guard.knowledge.forget_sessions()
            assert not r.guard.knowledge.is_loaded(call.session_id)
        out = await r.port.invoke("bk__merge_bookings", MERGE, session_id=call.session_id)
        assert out.kind == "completed"
        assert not [f for f in await r.guard.store.valid(call.session_id) if f.predicate == "$confirmed"]
        again = await r.guard.decide(call)
        assert isinstance(again, Ask) and again.questions[-1].meta["kind"] == "confirm"


async def test_a_failed_call_spends_its_confirmation_too(tmp_path: Path) -> None:
    async with rig(tmp_path / "facts.db", files=[_rulebase(tmp_path, CONFIRMED_MERGE)]) as r:
        r.guard.private = lambda session: True
        call = await _confirm(r.guard, r.port, MERGE)
        await r.guard.observe(call, FAILED)
        assert isinstance(await r.guard.decide(call), Ask)


@pytest.mark.parametrize("decided_first", [True, False], ids=["loaded-by-its-decision", "not-loaded"])
async def test_a_confirmation_stored_by_an_earlier_process_is_spent(
    tmp_path: Path, decided_first: bool
) -> None:
    """The next process on the store has written nothing: a confirmation reaches its engine only by loading
    the session (noted as read), or stays in the store (looked up: not a session of its own)."""
    rules = _rulebase(tmp_path, CONFIRMED_MERGE)
    async with rig(tmp_path / "facts.db", files=[rules]) as r:
        call = await _confirm(r.guard, r.port, MERGE)
        port = r.port
        guard = await make_guard(port, tmp_path / "facts.db", files=[rules])
        try:
            guard.private = lambda session: False
            assert not guard.store.confirmed_tools.may_name("bk__merge_bookings")
            if decided_first:
                # allowed on its confirmation, loaded with the session
                assert isinstance(await guard.decide(call), Allow)
                assert guard.knowledge.is_loaded(call.session_id)
            await guard.observe(call, OK)
            assert isinstance(await guard.decide(call), Ask)
        finally:
            await guard.close()
            port.guard = r.guard


async def test_a_confirmation_of_an_earlier_rulebase_is_spent_by_a_call_the_new_one_does_not_govern(
    tmp_path: Path,
) -> None:
    """Confirmed under version V; V is replaced by a rulebase that never mentions the tool, and the call runs
    (the default guard lets it); V comes back (same text, same version): the confirmation was used, so the
    call is asked again, not allowed on the old "yes"."""
    rules = _rulebase(tmp_path, CONFIRMED_MERGE)
    confirmed_text = rules.read_text()
    async with rig(tmp_path / "facts.db", files=[rules]) as r:
        r.guard.private = lambda session: True
        version = r.guard.version
        call = await _confirm(r.guard, r.port, MERGE)
        rules.write_text(BOOKINGS_PL.read_text().replace("guard('bk__merge", "was('bk__merge"))
        assert await r.guard.rulebases.reload("test") and r.guard.version != version
        assert not r.guard.rulebases.current.info.guards_tool("bk__merge_bookings")
        await r.guard.knowledge.forget_sessions()  # and whether or not the engine holds the session
        await r.guard.observe(call, OK)  # the call ran under the new version
        rules.write_text(confirmed_text)
        assert await r.guard.rulebases.reload("test") and r.guard.version == version
        again = await r.guard.decide(call)
        assert isinstance(again, Ask) and again.questions[-1].meta["kind"] == "confirm", again


async def test_a_bound_read_tool_still_learns_and_an_effect_still_applies(tmp_path: Path) -> None:
    async with rig(tmp_path / "facts.db") as r:
        r.guard.private = lambda session: True
        out = await r.port.invoke("bk__list_bookings", {"user_id": "u_123"}, session_id="s1")
        assert out.kind == "completed"
        facts = {f.fact for f in await r.guard.store.valid("s1")}
        assert "user_booking(u_123,'BK-789')" in facts, facts
        await r.port.invoke("bk__get_booking", {"booking_id": "BK-789"}, session_id="s1")
        assert any(f.startswith("booking_status('BK-789'") for f in
                   {f.fact for f in await r.guard.store.valid("s1")})
        # the cancel's effect invalidates the status it learnt (the rulebase's effect/3), confirmed or not
        cancel = r.port.call_of("bk__cancel_booking", {"booking_id": "BK-789"})
        await r.guard.observe(cancel, OK)
        assert not any(f.fact.startswith("booking_status('BK-789'") for f in await r.guard.store.valid("s1"))


async def test_a_read_in_a_conversation_not_loaded_is_learned_without_loading_it(tmp_path: Path) -> None:
    """A fresh conversation's read (a 2026-era call each) goes to the store only: the session is not loaded
    (nor seeded) for it, no live session is pushed out of the engine, and the facts are in the mirror once
    the conversation is loaded for a decision."""
    async with rig(tmp_path / "facts.db") as r:
        r.guard.private = lambda session: True
        knowledge, rb = r.guard.knowledge, r.guard.rulebases.current
        knowledge.max_sessions = 2
        await knowledge.ensure("live", rb)
        for i in range(6):
            call = r.port.call_of("bk__get_booking", {"booking_id": "BK-789"}, session_id=f"fresh/{i}")
            result = await r.port.client.call_tool("get_booking", {"booking_id": "BK-789"})
            await r.guard.observe(call, result)
            assert not knowledge.is_loaded(f"fresh/{i}")
            stored = await r.guard.store.valid(f"fresh/{i}")
            assert any(f.fact.startswith("booking_status('BK-789'") for f in stored)
            assert not [f for f in stored if f.provenance == "seed"]  # seeded when loaded, not before
        assert knowledge.is_loaded("live")  # not evicted by conversations it never needed to mirror
        mod = await knowledge.ensure("fresh/3", rb)
        held = await r.guard.engine.json_query(
            f"findall(F, ( sentinel_core:stored_fact({mod}, G, _, _), format(atom(F), '~q', [G]) ), L), "
            "sentinel_core:to_json_atom(L, Out)"
        )
        assert any(f.startswith("booking_status('BK-789'") for f in held), held
        assert any(f.provenance == "seed" for f in await r.guard.store.valid("fresh/3"))


async def test_observes_says_false_exactly_where_observe_would_do_nothing(tmp_path: Path) -> None:
    """The gateway leaves ``observe`` out (no task) when ``observes`` says False: so it must say True
    wherever observe has something to do (a fact to learn, an effect, a confirmation to spend, a store to
    ask), and False where observe returns at once."""
    async with rig(tmp_path / "facts.db", files=[_rulebase(tmp_path, CONFIRMED_MERGE)]) as r:
        r.guard.private = lambda session: session.startswith("mine/")
        merge = r.port.call_of("bk__merge_bookings", MERGE, session_id="mine/1")
        assert not r.guard.observes(merge, OK) and not r.guard.observes(merge, FAILED)
        await r.guard.knowledge.ensure("theirs", r.guard.rulebases.current)
        assert not r.guard.observes(r.port.call_of("bk__merge_bookings", MERGE, session_id="theirs"), OK)
        # a session another process may write, not loaded: its store must be asked
        assert r.guard.observes(r.port.call_of("bk__merge_bookings", MERGE, session_id="other"), OK)
        # a bound read tool learns, and its error takes back what it said before (Knowledge.unlearn); an
        # effect applies
        read = r.port.call_of("bk__list_bookings", {"user_id": "u_123"}, session_id="mine/2")
        assert r.guard.observes(read, OK) and r.guard.observes(read, FAILED)
        assert r.guard.observes(r.port.call_of("bk__cancel_booking", {"booking_id": "BK-789"},
                                               session_id="mine/2"), OK)
        # once a confirmation names the tool, every call of it is observed (its yes is spent, even on error)
        confirmed = await _confirm(r.guard, r.port, MERGE)
        assert r.guard.observes(confirmed, OK) and r.guard.observes(confirmed, FAILED)
        assert r.guard.observes(r.port.call_of("bk__merge_bookings", MERGE, session_id="mine/9"), OK)


async def test_a_guard_with_the_default_observe_is_never_observed() -> None:
    from mcp.types import CallToolResult as Result

    from sentinel_mcp.core.decision import Guard, ToolCall
    from sentinel_mcp.gateway.closed_guard import ClosedGuard
    from sentinel_mcp.policy.default_guard import DefaultGuard

    call = ToolCall(name="t", server="s", tool="t", arguments={})
    assert not ClosedGuard("no engine").observes(call, OK)

    class Learns(Guard):
        async def observe(self, call: ToolCall, result: Result) -> None:
            return None

    assert Learns().observes(call, OK)  # overrides observe without saying: always observed
    default = DefaultGuard.__new__(DefaultGuard)
    assert default.observes(call, OK) == (type(default).observe is not Guard.observe)


# ---------------------------------------------------------------- the set itself
def _fact(predicate: str, args: list[Any], tool: str | None) -> Fact:
    return Fact(session="s", predicate=predicate, args=args, fact=f"{predicate}{args!r}", provenance="user",
                source_tool=tool)


def test_the_set_knows_nothing_of_a_store_replicas_share() -> None:
    shared = ConfirmedTools(knowable=False)
    assert shared.may_name("t")
    own = ConfirmedTools(knowable=True)
    assert not own.may_name("t")
    own.note([_fact("$confirmed", ["t", "d", "v", "yes"], "src"), _fact("seen", ["u"], "u")])
    assert own.may_name("t") and own.may_name("src") and not own.may_name("u")


@pytest.mark.parametrize("args", [[], [7, "d"], [None], [["t"]], [{"t": 1}]])
def test_a_confirmation_naming_no_tool_plainly_means_always_look_up(args: list[Any]) -> None:
    tools = ConfirmedTools(knowable=True)
    tools.note([_fact("$confirmed", args, "t")])
    assert tools.gave_up and tools.may_name("x")


def test_past_its_capacity_the_set_gives_up() -> None:
    small = ConfirmedTools(knowable=True, capacity=2)
    small.note([_fact("$confirmed", [f"n{i}", "d"], f"n{i}") for i in range(3)])
    assert small.may_name("x")


async def test_the_store_notes_what_it_writes_and_reads(tmp_path: Path) -> None:
    store = await FactStore(tmp_path / "facts.db").open()
    try:
        await store.add([_fact("$confirmed", ["a\ud800", "d", "v", "yes"], "a\ud800"),
                         _fact("other", ["b"], "b")])
        assert store.confirmed_tools.may_name("a\ud800") and not store.confirmed_tools.may_name("b")
        fresh = await FactStore(tmp_path / "facts.db").open()
        try:
            assert not fresh.confirmed_tools.may_name("a\ud800")
            await fresh.valid("s", predicate="other")
            assert not fresh.confirmed_tools.may_name("a\ud800")
            await fresh.valid("s")
            assert fresh.confirmed_tools.may_name("a\ud800")
        finally:
            await fresh.close()
    finally:
        await store.close()


# ------------------------------------------------------- one confirmation, one call, at decision time
@pytest.mark.parametrize("lazy", [False, True], ids=["proof-written", "proof-kept (the gateway's guard)"])
async def test_one_yes_lets_one_of_several_identical_calls_through(tmp_path: Path, lazy: bool) -> None:
    """A confirmation is used up when the call it allows is decided, not after that call ran: identical calls
    decided meanwhile (one after the other, or together) are asked again, never allowed on the same "yes"."""
    async with rig(tmp_path / "facts.db", files=[_rulebase(tmp_path, CONFIRMED_MERGE)]) as r:
        r.guard.lazy_proofs = lazy
        call = await _confirm(r.guard, r.port, MERGE)
        assert isinstance(await r.guard.decide(call), Allow)
        again = await r.guard.decide(call)
        assert isinstance(again, Ask) and again.questions[-1].meta["kind"] == "confirm", again
        assert not [f for f in await r.guard.store.valid(call.session_id) if f.predicate == "$confirmed"]
        for n in (2, 5, 16):
            await _confirm(r.guard, r.port, MERGE)
            decisions = await asyncio.gather(*(r.guard.decide(call) for _ in range(n)))
            assert [type(d).__name__ for d in decisions].count("Allow") == 1, decisions
            assert all(isinstance(d, (Allow, Ask)) for d in decisions), decisions


@pytest.mark.parametrize("lazy", [False, True], ids=["proof-written", "proof-kept (the gateway's guard)"])
async def test_identical_calls_through_the_gateway_run_once_on_one_yes(tmp_path: Path, lazy: bool) -> None:
    async with rig(tmp_path / "facts.db", files=[_rulebase(tmp_path, CONFIRMED_MERGE)]) as r:
        r.guard.lazy_proofs = lazy
        call = await _confirm(r.guard, r.port, MERGE)
        outs = await asyncio.gather(*(r.port.invoke("bk__merge_bookings", MERGE, session_id=call.session_id)
                                      for _ in range(4)))
        assert sorted(o.kind for o in outs) == ["completed"] + ["needs_input"] * 3, outs


async def test_asking_what_a_call_would_get_uses_nothing_up(tmp_path: Path) -> None:
    """``spend=False`` (``why_not``): the answer a call would get, its confirmation still there for it."""
    async with rig(tmp_path / "facts.db", files=[_rulebase(tmp_path, CONFIRMED_MERGE)]) as r:
        call = await _confirm(r.guard, r.port, MERGE)
        for _ in range(3):
            assert isinstance(await r.guard.decide(call, spend=False), Allow)
        assert isinstance(await r.guard.decide(call), Allow)
        assert isinstance(await r.guard.decide(call, spend=False), Ask)


async def test_a_confirmation_is_taken_even_from_a_session_evicted_since_its_proof(tmp_path: Path) -> None:
    """Taking loads the session first: a mirror dropped between proof and take must not leave the stored
    confirmation for the next load (which would allow the call again)."""
    async with rig(tmp_path / "facts.db", files=[_rulebase(tmp_path, CONFIRMED_MERGE)]) as r:
        call = await _confirm(r.guard, r.port, MERGE)
        await r.guard.knowledge.forget_sessions()
        assert await r.guard.knowledge.take_confirmation(call.session_id, r.guard.rulebases.current,
                                                         call.identity, call.digest)
        await r.guard.knowledge.forget_sessions()
        assert isinstance(await r.guard.decide(call), Ask)


async def test_the_default_guard_looks_without_using_up_too() -> None:
    from sentinel_mcp.core.decision import ToolCall
    from sentinel_mcp.policy.default_guard import DefaultGuard

    guard = DefaultGuard()
    call = ToolCall(name="up__wipe", server="up", tool="wipe", arguments={"x": 1}, destructive=True)
    ask = await guard.decide(call)
    assert isinstance(ask, Ask)
    await guard.record_answer(call, ask.questions[0], Answer(action="accept", content={"approve": True}))
    assert isinstance(await guard.decide(call, spend=False), Allow)
    assert isinstance(await guard.decide(call, spend=False), Allow)
    assert isinstance(await guard.decide(call), Allow)
    assert isinstance(await guard.decide(call), Ask)
