"""The places of the console's bounded children (a rulebase check, a what-if's check and replay), fairly held.

Each such child costs a core for up to its wall bound (a replay: minutes), so at most ``MAX_RUNNING`` run at
once and one more is refused at once (``ChecksBusy``, HTTP 429), never queued. Within that cap no principal
may hold more than one place, so one principal's replay and reloads can never take every place; and the
principals who are not the owner together hold at most ``MAX_RUNNING - 1``, so readers reloading the policy
page (its check of the rules in force) never take the place the owner's live check of a candidate needs.
The places are the event loop's own: no thread takes one.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from sentinel_mcp.core.errors import PolicyError

MAX_RUNNING = 2  # checks at once (this machine's cores): the excess is refused, never queued
BUSY = f"{MAX_RUNNING} checks are running already; try again when one has finished"
OWN_BUSY = "a check or what-if of yours is running already; try again when it has finished"
KEPT = "the place readers may take is in use (the other is kept for the owner); try again when it is free"
_held: dict[str, bool] = {}  # a principal's name: whether it is the owner (one place each, while it runs)


class ChecksBusy(PolicyError):
    """No place is free for this principal: every place is taken, or one is its own already."""


@contextlib.contextmanager
def check_slot(holder: str, *, owner: bool) -> Iterator[None]:
    """One of the ``MAX_RUNNING`` places, held by the principal ``holder`` (``owner``: the owner) for all the
    checks one request makes; raises ``ChecksBusy`` at once when it may not have one."""
    if holder in _held:
        raise ChecksBusy(OWN_BUSY)
    if len(_held) >= MAX_RUNNING:
        raise ChecksBusy(BUSY)
    if not owner and sum(not o for o in _held.values()) >= MAX_RUNNING - 1:
        raise ChecksBusy(KEPT)
    _held[holder] = owner
    try:
        yield
    finally:
        del _held[holder]
