"""The cluster's turns (``storage/server_turn.py``) are exact: one turn per name, never shared by two names.

They were advisory locks keyed by a 64-bit hash of the name: two names whose hashes collide shared one lock (a
write to one upstream refused, or held, by a write to another), and two multi-name turns whose names collide
crosswise (``x1 < x2`` hashing like ``y2 < y1``) take the same locks in opposite orders: a deadlock. Here the
hash is forced to collide in the database itself (a ``hashtextextended`` of the test's own, ahead of the
server's on the search path: any code hashing names there gets it), and every turn must still be its own.
"""

from __future__ import annotations

import asyncio
import contextlib

import psycopg

from sentinel_mcp.storage.location import server_location
from sentinel_mcp.storage.server_turn import server_turn

# x1 and y2 hash alike, x2 and y1: each pair of names sorted takes the other pair's locks in the other order
COLLIDING = """
CREATE FUNCTION public.hashtextextended(t text, seed bigint) RETURNS bigint LANGUAGE sql IMMUTABLE AS $$
  SELECT CASE WHEN t IN ('x1', 'y2') THEN 1 WHEN t IN ('x2', 'y1') THEN 2 ELSE 3 END::bigint $$
"""


def collide(url: str) -> None:
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(COLLIDING)
        name = conn.execute("SELECT current_database()").fetchone()[0]  # type: ignore[index]
        conn.execute(f'ALTER DATABASE "{name}" SET search_path = public, pg_catalog')
    with psycopg.connect(url, autocommit=True) as conn:  # the forced hash is what a session now calls
        got = conn.execute("SELECT hashtextextended('x1', 0), hashtextextended('y2', 0)").fetchone()
        assert got == (1, 1)


async def test_names_whose_hashes_collide_are_still_two_turns(pg_url: str) -> None:
    collide(pg_url)
    location = server_location(pg_url)
    async with server_turn(location, ("x1", "x2"), wait=0) as mine:
        assert mine is None
        async with server_turn(location, ("y1", "y2"), wait=0) as theirs:  # shares no name: not busy
            assert theirs is None
        async with server_turn(location, "other", wait=0) as third:  # any other name hashing alike
            assert third is None
            async with server_turn(location, "z", wait=0) as fourth:
                assert fourth is None
        for name in ("x1", "x2", ("x2", "y1")):  # a name held is still held, exactly
            async with server_turn(location, name, wait=0) as again:
                assert again is not None and again.busy


async def test_crosswise_collisions_never_deadlock(pg_url: str) -> None:
    """Each of two takers holds its first turn, then both want their second at once: with hashed locks that is
    a cycle (the server kills one after its deadlock timeout); exact turns share nothing, both get theirs."""
    collide(pg_url)
    location = server_location(pg_url)
    results: list[object] = []
    gate = asyncio.Barrier(2)

    async def taker(names: tuple[str, str]) -> None:
        async with contextlib.AsyncExitStack() as stack:
            first = await stack.enter_async_context(server_turn(location, names[0], wait=5.0))
            await gate.wait()
            second = await stack.enter_async_context(server_turn(location, names[1], wait=5.0))
            results.append((first, second))
            await gate.wait()

    await asyncio.wait_for(asyncio.gather(taker(("x1", "x2")), taker(("y1", "y2"))), 30)
    assert results == [(None, None), (None, None)]


async def test_one_new_name_taken_at_once_by_many_is_one_turn(pg_url: str) -> None:
    """The first takers of a name never seen before race to register it: still one turn, held by one."""
    location = server_location(pg_url)
    for round_ in range(3):
        name = f"fresh-{round_}"
        got: list[bool] = []
        tried = asyncio.Event()

        async def take() -> None:
            async with server_turn(location, name, wait=0) as refused:
                got.append(refused is None)
                if len(got) == 6:
                    tried.set()
                if refused is None:
                    await asyncio.wait_for(tried.wait(), 20)

        await asyncio.gather(*(take() for _ in range(6)))
        assert sorted(got) == [False] * 5 + [True]
    # other names, other turns
    for a, b in (("t", "t "), ("t", "T"), ("caf\u00e9", "cafe\u0301"), ("a\x01", "a")):
        async with server_turn(location, a, wait=0) as one, server_turn(location, b, wait=0) as two:
            assert one is None and two is None
