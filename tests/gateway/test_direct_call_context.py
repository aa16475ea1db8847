"""A built-in's direct call's dispatch context (``builtin_direct._CallContext``) makes its
``cancel_requested`` event only when something reads it (issue 21: four Python frames a call for an event
nothing on this path sets). What a handler reads is unchanged: an anyio event, not set, the same one at
every read, one per call (no event shared by two calls, whoever makes them), and the rest of the context
as before."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import anyio
import pytest

from sentinel_mcp.gateway import quick_event
from sentinel_mcp.gateway.builtin_direct import _TRANSPORT, _CallContext


async def _on_log(params: Any) -> None:
    pass


@pytest.fixture
def counting() -> Iterator[Callable[[], list[Any]]]:
    """In the running loop: every event ``quick_event.new_event`` makes from then on (its cached class,
    wrapped); the cache as it was afterwards."""
    kept = list(quick_event._EVENT)

    def start() -> list[Any]:
        made: list[Any] = []
        quick_event.new_event()  # the running backend's class cached
        real = quick_event._EVENT[0]

        def counted() -> Any:
            event = real()
            made.append(event)
            return event

        quick_event._EVENT[0] = counted
        return made

    yield start
    quick_event._EVENT[:] = kept


def test_a_call_that_never_reads_it_makes_no_event(counting: Callable[[], list[Any]]) -> None:
    async def main() -> None:
        made = counting()
        contexts = [_CallContext(i, None, _on_log) for i in range(5)]
        assert made == []  # failed before: one event made per call
        assert [c.request_id for c in contexts] == list(range(5))

    anyio.run(main)


def test_a_handler_reading_it_gets_one_unset_event_per_call(counting: Callable[[], list[Any]]) -> None:
    async def main() -> None:
        made = counting()
        alice, bob = _CallContext(1, None, _on_log), _CallContext(2, None, _on_log)
        first = alice.cancel_requested
        assert isinstance(first, anyio.Event) and not first.is_set()
        assert alice.cancel_requested is first  # the same event at every read
        assert bob.cancel_requested is not first  # two calls never share one
        first.set()
        assert not bob.cancel_requested.is_set()
        assert len(made) == 2

    anyio.run(main)


def test_the_rest_of_the_context_is_as_before() -> None:
    async def progress(p: float, t: float | None, m: str | None) -> None:
        pass

    ctx = _CallContext(7, progress, _on_log)
    assert ctx.transport is _TRANSPORT and ctx.transport.can_send_request is False
    assert ctx.message_metadata is None and ctx.can_send_request is False
    assert ctx.on_progress is progress and ctx.on_log is _on_log
    with pytest.raises(AttributeError):  # slots: no stray attribute lands on a call's context
        ctx.stray = 1  # type: ignore[attr-defined]
