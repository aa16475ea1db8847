"""A run's credentials: the check of the request that started it, asked before each model decision and call.

A run acts on the phone up to its time cap, each step a call the agent makes itself. The request's
credentials can stop holding meanwhile (the owner's token rotated after a leak, a client certificate revoked):
the run then stops before its next decision or call, ``credentials_lapsed``, and nothing further reaches the
phone. Each call also carries the check, so the gateway asks it again right before sending (what changed
between the run's look and the send). A check that fails in any way (not only ``AuthFailed``) proves nothing.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from mcp.types import CallToolResult

from sentinel_mcp.core.display_text import compose, safe_text

log = logging.getLogger(__name__)
OUTCOME = "credentials_lapsed"  # the run's status and its audit row's outcome, as a call refused for it
_GATEWAY_SAID = "sentinel/error"  # the kind of Sentinel's own error result (gateway/own_results.py)


@dataclass(frozen=True)
class RunCredentials:
    """``check``: the starting request's (``RECHECK_KEY``, called: raises when they no longer hold);
    ``recorded``: writes the one audit row of a run they stopped (told the run's id and why)."""

    check: Callable[[], Any]
    recorded: Callable[[str, str], Awaitable[None]] | None = None

    def lapsed(self) -> str | None:
        """Why the run must stop now (None: its credentials still hold)."""
        try:
            self.check()
        except Exception as e:  # noqa: BLE001 - whatever failed, the credentials are not proven: stop
            return str(compose(  # plain text: the run's record keeps it (and signs it)
                OUTCOME, ": the credentials this run was started with no longer hold (",
                safe_text(str(e), 300), "); it was stopped before its next step",
            ))
        return None

    async def record(self, run_id: str, reason: str) -> None:
        if self.recorded is None:
            return
        try:
            await self.recorded(run_id, reason)
        except Exception:  # noqa: BLE001 - the run has ended either way; the log says the row is missing
            log.exception("the audit row of an agent run its lapsed credentials stopped was not written")


def refused_as_lapsed(result: CallToolResult) -> bool:
    """Whether the gateway refused a step's call because the caller's credentials no longer hold (its own
    row says so; another upstream claiming it only ends the run sooner)."""
    return bool(result.is_error) and (result.meta or {}).get(_GATEWAY_SAID) == OUTCOME


def checked_invoker(call_tool: Any, principal: str, check: Callable[[], Any] | None) -> Any:
    """The gateway's invoker with every call (the run's model calls through a built-in) made as the run's
    ``principal`` (its reach, its fair share of the model, its audit rows: they were Sentinel's own) and
    under the run's check, whatever the backend passes."""
    if call_tool is None:
        return None
    own, own_check = principal, check

    async def invoke(name: Any, arguments: dict[str, Any], *, principal: str | None = None,
                     recheck: Callable[[], Any] | None = None) -> Any:
        return await call_tool(name, arguments, principal=own, recheck=own_check)

    return invoke
