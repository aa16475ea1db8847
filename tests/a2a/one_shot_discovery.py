"""One-shot discovery in a test, asked again until what the test announced was heard and checked.

``discover_peers`` browses for a fixed time: on a loaded machine, or beside a parallel run whose own peers
announce on the same loopback group and take the browser's few places first, one browse may end before a
test's own name was resolved and its card checked. It is asked again, bounded by count, until ``done`` says
the registry holds what the test announced; the last registry is returned for the test's own assertions."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tests.a2a.a2a_rig import LOOPBACK

from sentinel_mcp.a2a.discovery import PeerRegistry
from sentinel_mcp.a2a.peer_browser import discover_peers

ROUNDS = 4  # of a 3 s browse each (and up to 5 s settling): a quiet machine needs the first


async def discover_until(done: Callable[[PeerRegistry], bool], **options: Any) -> PeerRegistry:
    registry = PeerRegistry()
    for _ in range(ROUNDS):
        registry = await discover_peers(LOOPBACK, timeout=3.0, **options)
        if done(registry):
            break
    return registry


def verified_names(registry: PeerRegistry) -> set[str]:
    return {p.card.name for p in registry.verified()}
