"""The notice queue alone (real asyncio tasks, deliveries that take their time): per destination in order,
one at a time; bounded per destination and in all; at the bounds a log line is dropped and counted, a
progress report replaces its destination's newest waiting one; ``flush`` waits for a destination's notices
and, past its time, drops the rest and gives every slot back.
"""

from __future__ import annotations

import asyncio

import pytest

from sentinel_mcp.gateway import notice_queue
from sentinel_mcp.gateway.notice_queue import MAX_NOTICES_WAITING, MAX_WAITING_FOR_ONE, NoticeQueue


class Client:
    """A destination's client: takes ``hold`` seconds over each notice (or until let go)."""

    def __init__(self, hold: float = 0.0) -> None:
        self.hold = hold
        self.got: list[object] = []
        self.now = self.most = 0
        self.go = asyncio.Event()

    def notice(self, value: object):  # the ``deliver`` of one notice
        async def deliver() -> None:
            self.now += 1
            self.most = max(self.most, self.now)
            try:
                if self.hold:
                    await asyncio.sleep(self.hold)
                else:
                    await self.go.wait()
                self.got.append(value)
            finally:
                self.now -= 1
        return deliver


async def _settled(q: NoticeQueue) -> None:
    for _ in range(200):
        if not q._runners:
            return
        await asyncio.sleep(0.01)
    raise AssertionError(f"still delivering: {q.held}")


async def test_one_destination_in_order_one_at_a_time_bounded() -> None:
    q, c = NoticeQueue("up"), Client()
    q.put("call", "log", c.notice(0))
    await asyncio.sleep(0)  # its delivery starts
    for i in range(1, 500):
        q.put("call", "log", c.notice(i))
    assert q.held == MAX_WAITING_FOR_ONE + 1  # one being delivered, the rest waiting
    assert q.dropped == 500 - (MAX_WAITING_FOR_ONE + 1)
    c.go.set()
    await _settled(q)
    assert c.got == list(range(MAX_WAITING_FOR_ONE + 1)) and c.most == 1
    assert q.held == 0


async def test_at_the_bound_progress_replaces_the_newest_waiting_one() -> None:
    q, c = NoticeQueue("up"), Client()
    q.put("call", "progress", c.notice(0))
    await asyncio.sleep(0)  # being delivered
    q.put("call", "log", c.notice("a line"))
    for i in range(1, 1000):
        q.put("call", "progress", c.notice(i))
    q.put("call", "log", c.notice("dropped"))
    c.go.set()
    await _settled(q)
    kept = MAX_WAITING_FOR_ONE - 1  # waiting: the line, then progress up to the bound
    # the last progress replaced the newest waiting one
    assert c.got == [0, "a line", *range(1, kept), 999], c.got
    assert q.dropped == 1 and q.held == 0  # only the log line at the bound was lost


async def test_all_destinations_together_are_bounded_and_a_quiet_one_still_gets_room() -> None:
    q = NoticeQueue("up")
    clients = [Client() for _ in range(6)]
    for n, c in enumerate(clients):
        for i in range(100):
            q.put(n, "log", c.notice(i))
    assert q.held == MAX_NOTICES_WAITING
    for n in range(4):  # the first four took their share (one each being delivered)
        assert len(q._queues[n]) == MAX_WAITING_FOR_ONE - 1 or len(q._queues[n]) == MAX_WAITING_FOR_ONE
    for c in clients:
        c.go.set()
    await _settled(q)
    assert sum(len(c.got) for c in clients) + q.dropped == 600
    assert q.held == 0


async def test_flush_waits_for_its_destination_then_drops_the_rest(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(notice_queue, "FLUSH_SECONDS", 0.3)
    q = NoticeQueue("up")
    quick, stuck = Client(hold=0.01), Client()  # ``stuck`` never takes anything
    for i in range(10):
        q.put("quick", "log", quick.notice(i))
        q.put("stuck", "log", stuck.notice(i))
    await q.flush("quick")
    assert quick.got == list(range(10))  # all of them, before flush returned
    loop = asyncio.get_running_loop()
    started = loop.time()
    await q.flush("stuck")
    assert loop.time() - started >= 0.3
    await _settled(q)  # its delivery cancelled: the slots are given back
    assert stuck.got == [] and q.held == 0 and q.dropped == 10
    await q.flush("nobody")  # nothing to wait for


async def test_a_delivery_that_fails_does_not_stop_the_next() -> None:
    q, c = NoticeQueue("up"), Client(hold=0.001)

    async def broken() -> None:
        raise ConnectionError("client gone")

    q.put("call", "log", broken)
    q.put("call", "log", c.notice("next"))
    await q.flush("call")
    assert c.got == ["next"] and q.held == 0


async def test_drop_cancels_a_destination_and_gives_its_slots_back() -> None:
    q, gone, other = NoticeQueue("up"), Client(), Client(hold=0.001)
    for i in range(5):
        q.put("cancelled call", "log", gone.notice(i))
    q.put("other call", "log", other.notice("kept"))
    await asyncio.sleep(0)
    q.drop("cancelled call")
    await q.flush("other call")
    await _settled(q)
    assert gone.got == [] and other.got == ["kept"]
    assert q.dropped == 5 and q.held == 0
    q.drop("nobody")  # nothing to drop


async def test_flush_delivers_a_few_waiting_notices_whole() -> None:
    """A quick tool's few reports, all queued before its answer: every one is delivered, in order."""
    q, c = NoticeQueue("up"), Client(hold=0.001)
    for i in range(4):
        q.put("call", "progress", c.notice(i))
    q.put("call", "log", c.notice("line"))
    await q.flush("call")
    assert c.got == [0, 1, 2, 3, "line"] and q.held == 0


async def test_flush_of_a_flood_keeps_the_lines_and_only_the_latest_progress() -> None:
    q, c = NoticeQueue("up"), Client(hold=0.001)
    for i in range(10):
        q.put("call", "progress", c.notice(i))
        q.put("call", "log", c.notice(f"line {i}"))
    await q.flush("call")
    assert c.got == [f"line {i}" for i in range(9)] + [9, "line 9"], c.got
    assert q.held == 0 and q.dropped == 0  # coalesced, not lost: the latest is there


@pytest.mark.parametrize("newcomers", [1, 2, 3])
async def test_one_principals_flood_at_slow_clients_leaves_others_their_share(newcomers: int) -> None:
    # before: alice's five calls to clients that read nothing held all 256 places of the upstream's notices,
    # and every line and progress report of bob's calls was dropped until hers ended
    q = NoticeQueue("up")
    hers = [Client() for _ in range(5)]  # never let go
    for n, c in enumerate(hers):
        for i in range(100):
            q.put(("alice", n), "log", c.notice(i), who="alice")
    assert q.held == MAX_NOTICES_WAITING  # alone, she may use every place
    theirs = [Client(hold=0.001) for _ in range(newcomers)]
    for k, c in enumerate(theirs):
        for i in range(40):
            q.put(("other", k), "log" if i % 2 else "progress", c.notice(i), who=f"p{k}")
    assert q.held == MAX_NOTICES_WAITING
    await asyncio.sleep(0)
    for c in theirs:
        for _ in range(200):
            if len(c.got) == 40:
                break
            await asyncio.sleep(0.01)
        assert c.got == list(range(40)), c.got  # each newcomer's, every one, in order
    assert q.dropped == 5 * 100 - MAX_NOTICES_WAITING + 40 * newcomers  # hers made room for theirs
    for c in hers:
        c.go.set()
    await _settled(q)
    assert q.held == 0 and not q._held_by


async def test_a_principal_at_its_share_takes_no_more_places_from_another() -> None:
    q = NoticeQueue("up")
    alice, bob = Client(), Client()
    for d in range(4):
        for i in range(MAX_WAITING_FOR_ONE):
            q.put(("a", d), "log", alice.notice(i), who="alice")
    assert q.held == MAX_NOTICES_WAITING
    for d in range(4):
        for i in range(MAX_WAITING_FOR_ONE):
            q.put(("b", d), "log", bob.notice(i), who="bob")
    # each holds half: bob took places up to his share, then his own were dropped, never more of hers
    assert q._held_by == {"alice": MAX_NOTICES_WAITING // 2, "bob": MAX_NOTICES_WAITING // 2}, q._held_by
    alice.go.set()
    bob.go.set()
    await _settled(q)
    assert q.held == 0 and q.dropped == 2 * 4 * MAX_WAITING_FOR_ONE - MAX_NOTICES_WAITING


async def test_a_delivery_cancelled_before_it_started_gives_its_places_back() -> None:
    # ``drop`` in the same turn of the loop as the ``put`` (a call cancelled as its progress came): the
    # delivery task never ran, so nothing it would have done at its end was done: its places stayed held
    q, c = NoticeQueue("up"), Client()
    for i in range(MAX_WAITING_FOR_ONE):
        q.put("call", "log", c.notice(i), who="alice")
    q.drop("call")
    await _settled(q)
    assert q.held == 0 and not q._held_by and q.dropped == MAX_WAITING_FOR_ONE and "call" not in q
    q.put("call", "log", c.notice("again"), who="alice")  # the destination works again
    c.go.set()
    await _settled(q)
    assert c.got == ["again"] and q.held == 0
