"""An anyio memory stream's ``receive`` without its opening checkpoint: the caller goes to sleep at once when
nothing is there, without first queueing its task for one more loop turn.

Why (issue 21, the lean 2025 path, ``lean_session_calls.py``): the path hands a call to the session's
dispatcher, which spawns the handler, then waits for the answer on the request's stream. ``receive`` begins
with ``checkpoint()`` (``sleep(0)``): the waiting task's step was queued ahead of the handler's first step, so
the loop never looked idle while the handler ran its audit rows (``gateway/idle_loop.py``) and the handler had
to start a turn late (a ``sleep(0)`` first, now gone): one loop turn and two task steps a call for a
checkpoint that yields to nothing. Here the item is taken at once if there is one; otherwise the task waits
exactly as ``receive`` waits after its checkpoint (the same waiter entries, the same item hand-over, the same
errors: ``EndOfStream`` when the senders are gone, ``ClosedResourceError`` when this end is closed) and is
cancellable there as in ``receive``. The one other difference: a cancellation already pending when an item is
there is raised at the caller's next wait, not here (the item is returned). A stream of an anyio whose
internals are not the ones this was written against is received with ``receive`` itself.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Any, TypeVar

from anyio import ClosedResourceError, EndOfStream, Event, WouldBlock
from anyio.streams import memory
from anyio.streams.memory import MemoryObjectReceiveStream

T = TypeVar("T")

_ITEM_RECEIVER: Any = getattr(memory, "_MemoryObjectItemReceiver", None)


def _waits_as_written(stream: MemoryObjectReceiveStream[Any]) -> bool:
    """The internals ``receive`` uses past its checkpoint, in the shape this module follows (anyio 4.x)."""
    state = getattr(stream, "_state", None)
    waiters = getattr(stream, "_waiters", False)
    return (_ITEM_RECEIVER is not None and isinstance(getattr(state, "waiting_receivers", None), OrderedDict)
            and (waiters is None or isinstance(waiters, set)))


async def receive_asleep(stream: MemoryObjectReceiveStream[T]) -> T:
    """``stream.receive()`` without the checkpoint before it waits (module docstring)."""
    if not _waits_as_written(stream):
        return await stream.receive()
    try:
        return stream.receive_nowait()
    except WouldBlock:
        pass
    # from here as anyio's ``MemoryObjectReceiveStream.receive`` past its checkpoint
    if stream._waiters is None:
        stream._waiters = set()
    event = Event()
    stream._waiters.add(event)
    receiver = _ITEM_RECEIVER()
    stream._state.waiting_receivers[event] = receiver
    try:
        await event.wait()
    finally:
        stream._state.waiting_receivers.pop(event, None)
        if stream._waiters is not None:
            stream._waiters.discard(event)
    try:
        return receiver.item  # type: ignore[no-any-return]
    except AttributeError:
        if stream._closed:
            raise ClosedResourceError from None
        raise EndOfStream from None
