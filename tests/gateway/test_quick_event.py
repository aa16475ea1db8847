"""``quick_event``: anyio's event and cancel scope made without the backend look-up are anyio's own objects
(the class ``anyio.Event()`` / ``anyio.CancelScope()`` give on the running loop), and one made where no loop
runs keeps nothing (anyio's adapter is not taken for the class)."""

from __future__ import annotations

import asyncio

import anyio

from sentinel_mcp.gateway import quick_event


def test_made_on_a_loop_they_are_anyios_own_classes_and_work() -> None:
    async def check() -> None:
        event, scope = quick_event.new_event(), quick_event.new_cancel_scope()
        assert type(event) is type(anyio.Event()) and not event.is_set()
        assert type(scope) is type(anyio.CancelScope())
        assert scope.deadline == float("inf") and not scope.shield and not scope.cancel_called
        assert quick_event.new_event() is not event and quick_event.new_cancel_scope() is not scope
        with scope:
            scope.cancel()
            await anyio.sleep(1)  # cancelled at once: the scope is a real one
        assert scope.cancelled_caught
        waiter = asyncio.ensure_future(event.wait())
        await asyncio.sleep(0)
        event.set()
        await asyncio.wait_for(waiter, 5)

    asyncio.run(check())


def test_made_where_no_loop_runs_nothing_is_kept(monkeypatch: object) -> None:
    saved = list(quick_event._EVENT)
    quick_event._EVENT.clear()
    try:
        event = quick_event.new_event()
        assert type(event) is type(anyio.Event())  # anyio's adapter, as anyio itself makes it here
        assert quick_event._EVENT == []  # a later event on a loop is asked of the loop's backend
    finally:
        quick_event._EVENT[:] = saved
