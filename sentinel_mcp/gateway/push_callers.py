"""Whose calls one upstream connection has carried: one principal, or several.

A handshake-era upstream over stdio or SSE pushes log lines and requests (elicitation, sampling, roots) that
name no call; they are routed by who is in flight (``PushRelays._push_target``). An upstream may go on working
after it has answered a call (a background task) and push while the next caller's call is in flight: once
the connection has carried calls of more than one principal, such a push may be any of theirs, so it is routed
to no one rather than shown to (and answered by) another principal. A new connection (a new process, a new
session) starts afresh: nothing the old one started can push on it.
"""

from __future__ import annotations


class ConnectionCallers:
    """At most one name kept: the first principal, then only whether another has called since."""

    __slots__ = ("_first", "_several")

    def __init__(self) -> None:
        self._first: str | None = None
        self._several = False

    def called(self, principal: str | None) -> None:
        """A call of ``principal`` goes out on the connection (None: a caller naming none, counted as one)."""
        name = principal if principal is not None else ""
        if self._first is None:
            self._first = name
        elif name != self._first:
            self._several = True

    @property
    def several(self) -> bool:
        """Calls of more than one principal went out on this connection."""
        return self._several

    def reset(self) -> None:
        """A new connection: nothing has been called on it yet."""
        self._first, self._several = None, False
