"""The bus of the 2026-era ``subscriptions/listen`` streams, knowing whose stream each listener is.

The SDK's ``ListenHandler`` subscribes each stream to one bus and filters only by event kind and URI, so a
plain bus tells every principal's stream that names a URI of every update of it. An update that came on one
principal's own session of an upstream (``isolation: "per_principal"``) is that principal's alone:
``publish_to`` tells only the streams its principal opened. A listener subscribed outside ``listening_as``
(whose stream it is unknown) hears what is told to everyone and nothing of any principal's own.
"""

from __future__ import annotations

import logging
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Callable, Iterator

import anyio.lowlevel
from mcp.server.subscriptions import ServerEvent

log = logging.getLogger(__name__)

Listener = Callable[[ServerEvent], None]
# set by the listen stream's own task while the SDK's handler subscribes it (``ListenStreams.serve``)
_LISTENING_AS: ContextVar[str | None] = ContextVar("listening_as", default=None)


@contextmanager
def listening_as(principal: str) -> Iterator[None]:
    """Listeners subscribed in this block (in this task) are ``principal``'s."""
    token = _LISTENING_AS.set(principal)
    try:
        yield
    finally:
        _LISTENING_AS.reset(token)


class PrincipalBus:
    """An in-process ``SubscriptionBus`` (the SDK's protocol) whose listeners carry their principal."""

    def __init__(self) -> None:
        # a token per subscription: the same callable may be registered twice (bound methods compare equal)
        self._listeners: dict[object, tuple[str | None, Listener]] = {}

    async def publish(self, event: ServerEvent) -> None:
        """``event`` to every listener (a catalog change, an update of an upstream's one shared session)."""
        await self._deliver(event, [listener for _, listener in self._listeners.values()])

    async def publish_to(self, principal: str, event: ServerEvent) -> None:
        """``event`` to ``principal``'s listeners only."""
        mine = [listener for who, listener in self._listeners.values() if who == principal]
        await self._deliver(event, mine)

    async def publish_among(self, principals: set[str], event: ServerEvent) -> None:
        """``event`` to the listeners of ``principals`` (a catalog change told to those whose view it
        changed), and to those whose stream is unknown (they hear what is told to everyone)."""
        among = [listener for who, listener in self._listeners.values() if who is None or who in principals]
        await self._deliver(event, among)

    def principals(self) -> set[str]:
        """The principals with a listener now."""
        return {who for who, _ in self._listeners.values() if who is not None}

    async def _deliver(self, event: ServerEvent, listeners: list[Listener]) -> None:
        for listener in listeners:
            try:
                listener(event)
            except Exception:  # noqa: BLE001 - one bad listener must not starve the others
                log.exception("subscription listener raised; continuing")
        await anyio.lowlevel.checkpoint()  # a burst of publishes lets the streams drain between events

    def subscribe(self, listener: Listener) -> Callable[[], None]:
        token = object()
        self._listeners[token] = (_LISTENING_AS.get(), listener)

        def unsubscribe() -> None:
            self._listeners.pop(token, None)

        return unsubscribe
