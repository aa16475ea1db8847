"""At each listing of the catalog (start-up, an upstream's list_changed, a reconnect), the rules bound to
a tool whose schema declares an argument secret are walked for it (``policy/schema_secret_flows.py``): a
rule that leaks one is named in the log when the tool appears, not at its first call, and the walk's answer
is kept for the calls. A rulebase reloaded is walked so for every listed tool before it is in force
(``walking_reloads``): its rule that leaks is named in the log at the reload, not at the tool's next call. The
calls are denied either way (the guard walks at the first call what no listing walked)."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable

from sentinel_mcp.core.decision import Guard
from sentinel_mcp.gateway.catalog import Catalog
from sentinel_mcp.policy.guard import PolicyGuard
from sentinel_mcp.policy.rulebase import Rulebase

log = logging.getLogger(__name__)


async def check_listed(guard: Guard, catalog: Catalog, rb: Rulebase | None = None) -> None:
    """Walk the rules bound to each listed tool whose schema declares a secret (each once per rulebase):
    of ``rb``, or of the rulebase in force."""
    if not isinstance(guard, PolicyGuard) or (rb := rb or guard.rulebases.active) is None:
        return
    for name, route in list(catalog.tools.items()):
        if route.secret_arguments:
            await guard.schema_secrets.of(rb, route.identity, name, route.secret_arguments)


def checking_listings(announce: Callable[[], Awaitable[None]], guard: Guard,
                      catalog: Catalog) -> Callable[[], Awaitable[None]]:
    """``announce`` (the front's list_changed fan-out), then the walk of the new listing."""

    async def changed() -> None:
        await announce()
        try:
            await check_listed(guard, catalog)
        except Exception:  # noqa: BLE001 - the calls are still walked (and denied) at their first call
            log.exception("the secret flow check of the listed tools failed")

    return changed


def walking_reloads(guard: Guard, catalog: Catalog) -> None:
    """Each rulebase the guard loads from now on is walked for the listed tools before it is in force."""
    if not isinstance(guard, PolicyGuard):
        return

    async def prepare(rb: Rulebase) -> None:
        await check_listed(guard, catalog, rb)

    guard.rulebases.preparers.append(prepare)
