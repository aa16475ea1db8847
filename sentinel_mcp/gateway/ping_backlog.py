"""Whether the health check's ping answer may still wait behind a backlog of Sentinel's own making: what the
upstream wrote before the ping, not yet read because Sentinel paused its reading (``notice_budget.py``).

While that backlog is read, a window without the answer is Sentinel's doing, not the upstream's; once it has
been read, a window without the answer is the upstream's, paused or not: one flooding past its budget and
never answering is cut after ``PING_PATIENCE`` windows as one that writes on unpaused (``Upstream._pinged``).
Before, every paused window was skipped, and such an upstream was read at the budget's pace for ever, shown
ready. By road:

- stdio: the bytes waiting in the pipe and the reader's buffer when the ping went (``stdout_meter.py``), and
  then what the upstream may still have been writing (unseen, in its own buffers: ``BURST`` messages, what
  the budget takes at once); a flood of 10,000 notices written in one go and then the answer is kept
  (``test_hostile_upstream_life``), one writing on and never answering is cut.
- streamable HTTP: the answer comes on the ping's own response, behind no paused stream; at the hand-over to
  the session it waits only behind the messages the transport's other streams already hold (one each).
- the legacy SSE transport (one stream for everything, its backlog in socket buffers Sentinel cannot see), or
  a process whose stdout cannot be measured: never known to be read, so its paused windows are skipped, as
  before.
"""

from __future__ import annotations

from typing import Any, Callable

from mcp.types import EmptyResult, PingRequest, RequestParams

from sentinel_mcp.config import RemoteServer
from sentinel_mcp.gateway.notice_budget import NoticeBudget
from sentinel_mcp.gateway.stdout_meter import StdoutMeter


# the ping's own wait for its answer: the health check's verdict ends it (silent for a window, or not
# answering through its patience), never the session's read timeout (``timeout``, 60 s): a backlog of
# Sentinel's own making may take longer to read, and a ping timed out was taken as "alive enough" and sent
# again, its count of windows lost (a flood past the budget never answering was never cut)
PING_WAIT = 24 * 3600.0


async def pinged(client: Any) -> Any:
    """A ping sent on ``client``'s session, answered (``MCPError``: refused, or the connection closed)."""
    return await client.session.send_request(PingRequest(params=RequestParams()), EmptyResult,
                                             request_read_timeout_seconds=PING_WAIT)


def backlog_read(target: Any, meter: StdoutMeter | None, budget: NoticeBudget) -> Callable[[], bool]:
    """Made as the ping goes: whether, from then on, what waited ahead of its answer has been read."""
    if isinstance(target, RemoteServer):
        own_response = target.kind != "sse"
        return lambda: own_response
    if meter is None or not meter.usable:
            return lambda: False
    start, ahead = meter.taken(), meter.unread()
    read_at: list[int] = []  # messages heard when the backlog had been read

    def read() -> bool:
        if meter.taken() - start < ahead:
            return False
        if not read_at:
            read_at.append(budget.heard)
        # and what it may still have been writing when the ping came (a server writing in one thread reads
        # the ping only once its own write is done): as many messages as the budget takes at once
        return budget.heard - read_at[0] >= budget.burst

    return read
