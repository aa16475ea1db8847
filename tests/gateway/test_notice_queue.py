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
