"""``receive_asleep`` (app/receive_asleep.py) against anyio's own ``receive``, on real memory streams: the
same items in the same order, the same errors (the senders gone, this end closed, before and while waiting),
the same cancellation (no waiter left behind), and the one difference it exists for: no loop turn taken
before it waits or returns (counted with a callback queued before the call)."""

from __future__ import annotations

import asyncio
from typing import Any

import anyio
import pytest

from sentinel_mcp.app import receive_asleep as module
from sentinel_mcp.app.receive_asleep import receive_asleep

pytestmark = pytest.mark.timeout(60)


async def _outcome(receive: Any, script: str) -> list[Any]:
    """What a receiver sees of ``script`` (items sent, ends closed, before it waits or while it waits)."""
    send, recv = anyio.create_memory_object_stream[int](1 if "buffered" in script else 0)
    seen: list[Any] = []

    async def receiver() -> None:
        for _ in range(4):
            try:
                seen.append(await receive(recv))
            except Exception as e:  # noqa: BLE001 - the error is what is compared
                seen.append(type(e).__name__)
                return

    async with anyio.create_task_group() as tg:
        if "ready" in script:
            send.send_nowait(1) if "buffered" in script else None
        if "closed-first" in script:
            await send.aclose()
        if "mine-closed-first" in script:
            recv.close()
        tg.start_soon(receiver)
        await anyio.sleep(0.01)
        if "sent-later" in script and not send._closed:
            await send.send(2)
            await send.send(3)
        if "closed-later" in script and not send._closed:
            await send.aclose()
        if "mine-closed-later" in script:
            recv.close()
        await anyio.sleep(0.01)
        tg.cancel_scope.cancel()
    return seen


@pytest.mark.parametrize("script", [
    "buffered ready", "buffered ready closed-first", "sent-later", "sent-later closed-later",
    "buffered ready sent-later closed-later", "closed-first", "closed-later", "mine-closed-first",
    "mine-closed-later", "buffered ready mine-closed-later", "sent-later mine-closed-later",
])
async def test_the_same_items_and_errors_as_receive(script: str) -> None:
    mine = await _outcome(receive_asleep, script)
    theirs = await _outcome(lambda r: r.receive(), script)
    assert mine == theirs, script
    assert mine  # every script ends with something seen


async def test_a_cancelled_wait_leaves_no_waiter() -> None:
    send, recv = anyio.create_memory_object_stream[int](0)
    with anyio.move_on_after(0.01):
        await receive_asleep(recv)
    stats = send.statistics()
    assert stats.tasks_waiting_receive == 0 and not recv._waiters
    with pytest.raises(anyio.WouldBlock):  # no receiver left to hand an item to
        send.send_nowait(5)
    async with anyio.create_task_group() as tg:  # and the stream still works
        tg.start_soon(send.send, 6)
        assert await receive_asleep(recv) == 6


async def _a_turn_before_it_returns(receive: Any) -> bool:
    """Whether a callback queued just before the call, an item ready, ran before the call returned."""
    send, recv = anyio.create_memory_object_stream[int](1)
    send.send_nowait(1)
    ran: list[str] = []
    asyncio.get_running_loop().call_soon(ran.append, "callback")
    assert await receive(recv) == 1
    return bool(ran)


async def test_no_turn_before_it_returns_or_waits() -> None:
    assert await _a_turn_before_it_returns(lambda r: r.receive())  # anyio's checkpoint: a turn
    assert not await _a_turn_before_it_returns(receive_asleep)


async def test_another_streams_shape_is_received_by_receive(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(module, "_ITEM_RECEIVER", None)  # an anyio whose internals differ
    send, recv = anyio.create_memory_object_stream[int](1)
    send.send_nowait(7)
    ran: list[int] = []
    asyncio.get_running_loop().call_soon(ran.append, 1)
    assert await receive_asleep(recv) == 7
    assert ran  # receive's own checkpoint
    await send.aclose()
    with pytest.raises(anyio.EndOfStream):
        await receive_asleep(recv)
