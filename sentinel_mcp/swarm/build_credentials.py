"""A build's credentials: the check of the request that started it, asked before each step and model call.

A build runs up to ``max_minutes`` after ``swarm_build`` answered. The request's credentials can stop holding
meanwhile (the owner's token rotated after a leak, a client certificate revoked): the build then stops at
its next step, FAILED with the reason, and makes no further model call. A check that fails in any way (not
only ``AuthFailed``) proves nothing: the build stops.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from sentinel_mcp.core.display_text import compose, safe_text
from sentinel_mcp.core.errors import SwarmError

log = logging.getLogger("sentinel.swarm")
OUTCOME = "credentials_lapsed"  # the build's audit row, as a call refused for it (gateway/caller_recheck.py)


class CredentialsLapsed(SwarmError):
    """The credentials that started the build no longer hold: it makes no further step or model call."""


@dataclass(frozen=True)
class BuildCredentials:
    """``check``: the starting request's (``RECHECK_KEY``, called: raises when they no longer hold);
    ``recorded``: writes the one audit row of a build they stopped (told why)."""

    check: Callable[[], Any]
    recorded: Callable[[str, str], Awaitable[None]] | None = None  # (task id, reason)

    async def record(self, task_id: str, reason: str) -> None:
        if self.recorded is None:
            return
        try:
            await self.recorded(task_id, reason)
        except Exception:  # noqa: BLE001 - the build has ended FAILED either way; the log says the row is missing
            log.exception("the audit row of a build its lapsed credentials stopped was not written")


def still_holds(credentials: BuildCredentials | None) -> None:
    """Raise ``CredentialsLapsed`` unless the build's credentials (None: credentials that hold for the
    process's life) still hold."""
    if credentials is None:
        return
    try:
        credentials.check()
    except Exception as e:  # noqa: BLE001 - whatever failed, the credentials are not proven: stop
        raise CredentialsLapsed(compose(
            OUTCOME, ": the credentials this build was started with no longer hold (",
            safe_text(str(e), 300), "); it was stopped before its next step",
        )) from None
