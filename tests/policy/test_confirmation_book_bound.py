"""The default guard's confirmations held in the process are bounded. An answer grants one and the same call
takes it right after; a call that never takes it (cancelled or timed out once the answer was recorded, a
rulebase reloaded in between) left it held until the process ended, so a client repeating that, each time
for other arguments, filled the process. Expired confirmations are dropped and, past the bound, the oldest
first."""

from __future__ import annotations

from sentinel_mcp.core.decision import Allow, Answer, Ask, ToolCall
from sentinel_mcp.policy.confirmation_book import MAX_HELD, ConfirmationBook
from sentinel_mcp.policy.default_guard import DefaultGuard

YES = Answer(action="accept", content={"approve": True})


def call(n: int, session: str = "alice/s1") -> ToolCall:
    return ToolCall(name="tb__delete", server="tb", tool="delete", arguments={"path": f"/tmp/{n}"},
                    session_id=session, destructive=True)


async def test_answers_never_taken_fill_the_book_only_to_its_bound() -> None:
    guard = DefaultGuard()  # the gateway's fallback guard, with the book it holds by default
    book = guard.confirmations
    assert isinstance(book, ConfirmationBook)
    last = MAX_HELD + 1_000
    for n in range(last + 1):  # each call asked and answered yes, and never made
        c = call(n)
        asked = await guard.decide(c)
        assert isinstance(asked, Ask)
        await guard.record_answer(c, asked.questions[0], YES)
    assert len(book._granted) == MAX_HELD
    assert not await book.held(call(0), guard.version)  # the oldest went first
    assert await book.held(call(last - MAX_HELD + 1), guard.version)
    assert isinstance(await guard.decide(call(last)), Allow)  # the newest is still the user's, used once
    assert isinstance(await guard.decide(call(last)), Ask)


async def test_expired_confirmations_are_dropped_as_new_ones_come() -> None:
    now = [0.0]
    book = ConfirmationBook(60, clock=lambda: now[0])
    for n in range(300):
        await book.grant(call(n), "v")
    now[0] = 61.0
    await book.grant(call(300), "v")
    assert len(book._granted) == 1 and await book.take(call(300), "v")
    await book.grant(call(1), "v")
    await book.grant(call(2), "v")
    await book.grant(call(1), "v")  # granted again: the newest
    book.capacity = 1
    await book.grant(call(3), "v")
    assert len(book._granted) == 1 and await book.held(call(3), "v")


def of(principal: str, n: int) -> ToolCall:
    return call(n, session=f"{principal}/s1").model_copy(update={"principal": principal})


async def test_one_principals_grants_never_push_out_anothers_confirmation() -> None:
    """The bound is shared fairly: past it, the principal holding the most loses its oldest. alice's many
    grants (answers she never used, each for other arguments) used to evict bob's confirmation given a moment
    before his call, so bob's "yes" was lost and he was asked again."""
    book = ConfirmationBook(60, capacity=100)
    await book.grant(of("bob", 0), "v")
    for n in range(1_000):
        await book.grant(of("alice", n), "v")
    assert len(book) == 100
    assert await book.held(of("bob", 0), "v")
    assert await book.held(of("alice", 999), "v") and not await book.held(of("alice", 0), "v")
    assert await book.take(of("bob", 0), "v") and not await book.take(of("bob", 0), "v")
    for n in range(50):  # two principals at the bound: each keeps its share
        await book.grant(of("bob", 100 + n), "v")
    for n in range(1_000, 1_100):
        await book.grant(of("alice", n), "v")
    assert len(book) == 100 and await book.held(of("bob", 100), "v")
    assert sum([await book.held(of("bob", 100 + n), "v") for n in range(50)]) == 50


async def test_a_confirmation_is_for_the_tool_not_the_name_that_exposed_it() -> None:
    """Two transparent servers' tools can be exposed under one name, one after the other (catalog.py): the
    user's yes to ``b``'s tool is never ``a``'s, whatever name either was called by."""
    guard = DefaultGuard()
    args = {"path": "/tmp/x"}
    theirs = ToolCall(
        name="delete", server="b", tool="delete", arguments=args, session_id="s", destructive=True
    )
    asked = await guard.decide(theirs)
    assert isinstance(asked, Ask)
    await guard.record_answer(theirs, asked.questions[0], YES)
    for name in ("delete", "b__delete", "a__delete"):
        other = ToolCall(
            name=name, server="a", tool="delete", arguments=args, session_id="s", destructive=True
        )
        assert not await guard.confirmations.held(other, guard.version), name
        assert isinstance(await guard.decide(other), Ask), name
    assert isinstance(await guard.decide(theirs), Allow)  # still b's, used once
