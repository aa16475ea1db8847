"""How many streams (SSE responses, WebSocket connections) are open, per caller and in all, bounded.

A stream holds a connection, a subscription and a task's attention for as long as its client likes; each
socket bounded its own requests, but one authenticated caller could open any number of them. Both bindings
take a slot here before they do any work for a stream (a refused ``SendStreamingMessage`` starts no task) and
give it back however the stream ends. A caller's bound is its own: one peer at its bound does not lock the
others out, until all of them together reach the overall bound.
"""

from __future__ import annotations

from sentinel_mcp.a2a.jsonrpc import UNSUPPORTED_OPERATION, RpcError


class TooManyStreams(RpcError):
    """A stream refused at a bound (HTTP 429 on both bindings), naming the bound and its setting."""

    def __init__(self, message: str, setting: str, bound: int) -> None:
        super().__init__(UNSUPPORTED_OPERATION, message, {"setting": setting, "bound": bound})


class StreamSlot:
    """One open stream's slot; ``release`` may be called more than once (each way a stream ends calls it)."""

    def __init__(self, slots: StreamSlots, caller: str) -> None:
        self._slots = slots
        self.caller = caller
        self._held = True

    def release(self) -> None:
        if self._held:
            self._held = False
            self._slots._give_back(self.caller)


class StreamSlots:
    def __init__(self, per_caller: int, total: int) -> None:
        self.per_caller = per_caller
        self.total = total
        self._mine: dict[str, int] = {}  # only callers holding a slot: names do not pile up
        self._open = 0

    def take(self, caller: str) -> StreamSlot:
        """A slot for one more stream of ``caller``, or TooManyStreams."""
        held = self._mine.get(caller, 0)
        if held >= self.per_caller:
            raise TooManyStreams(
                f"too many open streams: you hold {held}, the most one caller may "
                f"(max_streams_per_caller = {self.per_caller}); close one, then retry",
                "max_streams_per_caller",
                self.per_caller,
            )
        if self._open >= self.total:
            raise TooManyStreams(
                f"too many open streams: this agent holds {self._open}, the most it takes "
                f"(max_streams = {self.total}); retry later",
                "max_streams",
                self.total,
            )
        self._mine[caller] = held + 1
        self._open += 1
        return StreamSlot(self, caller)

    def _give_back(self, caller: str) -> None:
        left = self._mine[caller] - 1
        if left:
            self._mine[caller] = left
        else:
            del self._mine[caller]
        self._open -= 1

    def held(self, caller: str | None = None) -> int:
        """Slots held by ``caller``, or by everyone."""
        return self._open if caller is None else self._mine.get(caller, 0)
