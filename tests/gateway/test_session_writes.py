"""SessionWrites: one turn per conversation for the writes with effects (gateway/session_writes.py)."""

from __future__ import annotations

import anyio

from sentinel_mcp.gateway.session_writes import SessionWrites


async def test_a_nested_call_is_refused_while_the_turn_is_taken_and_the_table_empties() -> None:
    writes = SessionWrites()
    async with writes.turn("s1", wait=True) as mine:
        assert mine and writes.taken("s1")
        # a call that may not wait (its caller may hold the turn) is refused instead of hanging
        async with writes.turn("s1", wait=False) as nested:
            assert not nested
        async with writes.turn("s2", wait=False) as other:  # another conversation's turn is its own
            assert other
    assert not writes.taken("s1") and not writes._locks and not writes._users


async def test_turns_of_one_conversation_never_overlap() -> None:
    writes, inside, seen = SessionWrites(), [0], []

    async def one() -> None:
        async with writes.turn("s", wait=True) as mine:
            assert mine
            inside[0] += 1
            seen.append(inside[0])
            await anyio.sleep(0)  # let the others run: they must wait for the turn
            inside[0] -= 1

    async with anyio.create_task_group() as tg:
        for _ in range(5):
            tg.start_soon(one)
    assert seen == [1] * 5 and not writes._locks
