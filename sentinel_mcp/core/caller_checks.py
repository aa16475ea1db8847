"""The caller's credential check of a call a built-in is handling, for work it goes on with after the call.

A built-in's call carries its caller's identity in ``_meta`` (plain JSON), but the check of the caller's
credentials (``identity.resolver.RECHECK_KEY``: a token rotated, a certificate revoked) is a live object of
the request. Work a built-in starts in a call and runs after it answered (a swarm build, up to its
``max_minutes``) ran on with no check at all. The gateway holds the check here, under the call's decision id
(which only it sets), for as long as the built-in handles the call; the built-in takes it along
(``check_of``). The decision id is a fresh random id per call: one call's check is never another's.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from typing import Any, Protocol

Check = Callable[[], Any]

_held: dict[str, Check] = {}


@contextlib.contextmanager
def held(decision_id: str, check: Check) -> Iterator[None]:
    """``check`` is the one of the call ``decision_id`` while the built-in handles it."""
    _held[decision_id] = check
    try:
        yield
    finally:
        if _held.get(decision_id) is check:
            del _held[decision_id]


def check_of(decision_id: str) -> Check | None:
    """The caller's check of the call being handled (None: a credential that holds for the process's life,
    stdio, or no gateway)."""
    return _held.get(decision_id) if decision_id else None


class LapseRecorder(Protocol):
    """Writes the audit row of a built-in's work ended because its caller's credentials lapsed (outcome
    ``credentials_lapsed``, as a call refused for it): ``tool`` is the built-in's tool that started the work,
    ``reason`` names the work (a build's id)."""

    async def __call__(
        self, *, builtin: str, tool: str, principal: str, session: str, reason: str
    ) -> None: ...
