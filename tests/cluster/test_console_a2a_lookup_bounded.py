"""The owner's console inbox shows the A2A tasks waiting for the owner and for every A2A peer, whichever
replica holds them. It read the shared store once per principal (N peers: N + 1 queries each time a page or
its live count looked, each up to ``max_tasks`` rows); now it is one query, bounded by ``max_tasks`` rows in
all, whatever the number of principals. Two real A2A services (replicas) on one real PostgreSQL; the queries
are counted as the store is asked (every one goes through; nothing is answered in place of the store)."""

from __future__ import annotations

from typing import Any

import pytest

from sentinel_mcp.a2a.protocol import SendMessageRequest
from sentinel_mcp.a2a.service import A2AService
from sentinel_mcp.a2a.settings import A2ASettings
from tests.a2a.a2a_rig import open_port, user_message

pytestmark = pytest.mark.timeout(180)


def _asks() -> SendMessageRequest:
    call = {"type": "tool_call", "tool_call_id": "c", "name": "tools__delete_file", "args": {"path": "/x"}}
    return SendMessageRequest.model_validate({"message": user_message({"data": call})})


class Counted:
    """The journal's store, its queries counted (each still asked of PostgreSQL)."""

    def __init__(self, db: Any) -> None:
        self.db, self.queries = db, 0

    async def query(self, *args: Any, **kw: Any) -> Any:
        self.queries += 1
        return await self.db.query(*args, **kw)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.db, name)


@pytest.mark.parametrize("peers", [2, 24])
async def test_the_owners_a2a_look_up_is_one_bounded_query_whatever_the_principals(pg_url: str,
                                                                                   peers: int) -> None:
    names = ["owner", *(f"peer{i}" for i in range(peers))]
    settings = A2ASettings(max_tasks=100)
    async with open_port(with_sensors=False) as port:
        a = A2AService(port, settings)  # type: ignore[arg-type]
        b = A2AService(port, settings)  # type: ignore[arg-type]
        await a.open(pg_url, replica="replica-a")
        await b.open(pg_url, replica="replica-b")
        try:
            made = {}
            for name in names:
                made[(await a.send_message(_asks(), name))["task"]["id"]] = name
            assert b._journal is not None
            counted = Counted(b._journal.db)
            b._journal._db = counted
            seen = await b.waiting_for(names)
            assert counted.queries == 1, counted.queries
            assert {r.task.id: r.owner for r in seen} == made  # every principal's, each its owner's
            assert all(r.replica == "replica-a" for r in seen)
            # one principal alone still sees only its own, in one query
            counted.queries = 0
            mine = await b.waiting_for(["peer1"])
            assert [r.owner for r in mine] == ["peer1"] and counted.queries == 1
            # bounded: never more rows than its max_tasks, however many principals' tasks wait
            small = A2AService(port, A2ASettings(max_tasks=10))  # type: ignore[arg-type]
            await small.open(pg_url, replica="replica-c")
            try:
                assert len(await small.waiting_for(names)) == min(10, len(names))
            finally:
                await small.close()
        finally:
            await a.close()
            await b.close()


async def test_peers_flooding_new_tasks_never_hide_the_viewers_own_or_each_others(pg_url: str) -> None:
    """Red team "rt-limits7": the one look-up took the newest ``max_tasks`` rows of all the principals
    together, so 10+ peers each sending new tasks pushed the owner's own older waiting tasks out of it (and a
    peer flooding hid the other peers'). Now the first principal named (the viewer) has its own first, up to
    the bound, and the others share what is left by turns, each one's newest first: still one query of at
    most ``max_tasks`` rows."""
    peers = [f"peer{i:02d}" for i in range(12)]
    async with open_port(with_sensors=False) as port:
        a = A2AService(port, A2ASettings(max_tasks=500))  # type: ignore[arg-type]
        b = A2AService(port, A2ASettings(max_tasks=10))  # type: ignore[arg-type]
        await a.open(pg_url, replica="replica-a")
        await b.open(pg_url, replica="replica-b")
        try:
            owners_own = [(await a.send_message(_asks(), "owner"))["task"]["id"] for _ in range(3)]
            flooder = [(await a.send_message(_asks(), peers[0]))["task"]["id"] for _ in range(20)]
            for name in peers:  # then every peer, newer than all the owner's
                for _ in range(2):
                    await a.send_message(_asks(), name)
            assert b._journal is not None
            counted = Counted(b._journal.db)
            b._journal._db = counted
            seen = await b.waiting_for(["owner", *peers])
            assert counted.queries == 1 and len(seen) == 10, (counted.queries, len(seen))
            ids = [r.task.id for r in seen]
            assert set(owners_own) <= set(ids), ids  # the viewer's own, older than all the rest: all there
            others = [r.owner for r in seen if r.owner != "owner"]
            assert len(set(others)) == len(others) == 7, others  # by turns: no peer twice before each once
            assert not set(flooder[:-2]) & set(ids)  # the flooder's older ones wait their turn
        finally:
            await a.close()
            await b.close()
