"""A call for a name the catalog does not have waits for the upstreams its caller may reach that are still in
their first connection attempt (started with the gateway, never ready yet, not failed yet): the name may be
one of theirs. A client started with the gateway (Claude Desktop) sends its first call while a slow upstream
(npx, a container, a cold interpreter) still starts; without the wait it was told "unknown tool" for a tool
about to exist. resources/read, prompts/get and completion/complete wait the same way (catalog_view.py).

Bounded: the wait for each upstream ends when its first attempt's outcome is in the catalog, at its
``connect_timeout`` counted from that attempt's start, at ``FIRST_CONNECT_WAIT_CAP``, or when it is stopped;
the whole wait ends as soon as the name is one the caller may reach (one slow upstream holds up no call of
another's tool), and on the caller's cancel (the waiting call holds one of its principal's places, as every
call does). Only upstreams the caller may reach are waited for, and a name of a tool it may not reach waits as
long as a name nobody has: another principal's server and tools, their existence and state, show in no
answer, nor in when it comes."""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable, Iterable

import anyio

if TYPE_CHECKING:
    from sentinel_mcp.gateway.upstream import Upstream

# the longest a call waits for first connections, whatever the upstreams' connect_timeout (up to an hour)
FIRST_CONNECT_WAIT_CAP = 60.0


def first_connecting(upstreams: Iterable[Upstream], reach: Callable[[str], bool]) -> list[Upstream]:
    """The upstreams in their first connection attempt that ``reach`` (by upstream name) allows."""
    return [up for up in upstreams
            if up.first_deadline is not None and not up.first_listed.is_set() and reach(up.name)]


async def until_first_listed(upstreams: Iterable[Upstream], reach: Callable[[str], bool],
                             found: Callable[[], bool]) -> bool:
    """Wait for the first attempts of ``first_connecting``'s upstreams to be over (each within its bound), or
    until ``found()`` (the name is there for the caller) after one of them; True if there was any to wait for
    (the caller looks its name up again)."""
    pending = first_connecting(upstreams, reach)
    if not pending:
        return False
    cap = anyio.current_time() + FIRST_CONNECT_WAIT_CAP
    async with anyio.create_task_group() as tg:
        for up in pending:
            tg.start_soon(_listed, up, min(up.first_deadline or cap, cap), found, tg.cancel_scope)
    return True


async def _listed(up: Upstream, deadline: float, found: Callable[[], bool], all_: anyio.CancelScope) -> None:
    with anyio.CancelScope(deadline=deadline):
        await up.first_listed.wait()
    if found():
        all_.cancel()
