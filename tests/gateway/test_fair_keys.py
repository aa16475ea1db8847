"""Whose share of an upstream's ``max_in_flight`` slots a call uses (``fair_slots.share_of``): its
principal's; Sentinel's own calls that run for no principal (a built-in's own work, the solver fetching facts
for a call of no known conversation) each by the caller Sentinel names, never one share for all of them: one
built-in's calls that hang made another built-in and the solver wait behind every one of them. A client
cannot pick such a share: no principal's name can spell one (``share_of`` on hostile names).

A real gateway in-process, the toolbox upstream over stdio (its ``held`` call runs until the test creates a
file), real calls through ``Gateway.invoke``; asserted by which call the upstream started next."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from sentinel_mcp.app.runtime import running_gateway
from sentinel_mcp.gateway.fair_slots import share_of
from sentinel_mcp.identity.principal import INTERNAL_NAME

from .helpers import make_config, toolbox_stdio

pytestmark = pytest.mark.timeout(120)


def _started(path: Path) -> int:
    return len(path.read_text().splitlines()) if path.exists() else 0


async def _until(predicate: Any) -> None:
    while not predicate():
        await asyncio.sleep(0.02)


@pytest.mark.parametrize("other", ["builtin:b", "solver"])
async def test_each_of_sentinels_own_callers_has_a_share(data_dir: Path, tmp_path: Path, other: str) -> None:
    cfg = make_config(data_dir, {"tb": toolbox_stdio(max_in_flight=1, concurrent=True, timeout=60)})
    async with running_gateway(cfg) as rt:
        gw, up = rt.gateway, rt.manager.upstreams["tb"]

        def held(path: Path, caller: str) -> asyncio.Future[Any]:
            origin = "solver" if caller == "solver" else "builtin"
            return asyncio.ensure_future(gw.invoke(
                "tb__held", {"path": str(path)}, session_id=f"{caller}-session",
                client=None if origin == "solver" else caller, origin=origin))

        first, second, theirs = tmp_path / "first", tmp_path / "second", tmp_path / "theirs"
        calls = [held(first, "builtin:a")]
        await _until(lambda: _started(first) == 1)
        calls.append(held(second, "builtin:a"))
        await _until(lambda: up.waiting_for_slot == 1)  # a's next one queued first
        calls.append(held(theirs, other))
        await _until(lambda: up.waiting_for_slot == 2)
        Path(f"{first}.go").touch()
        await _until(lambda: _started(second) + _started(theirs) == 1)
        assert _started(theirs) == 1, "the freed slot went to builtin a's next call, not to the other caller"
        for p in (second, theirs):
            Path(f"{p}.go").touch()
        outcomes = await asyncio.gather(*calls)
        assert [o.result.content[0].text for o in outcomes] == ["released"] * 3, outcomes


@pytest.mark.parametrize("name", [
    "alice", "Sentinel", "sentinel:builtin:a", "sentinel:solver", " sentinel", "sentinel ", "sentinel\x00",
    "sentinel\u200b", "\u0455entinel", "SENTINEL", "owner", "a2a peer", "('sentinel', 'solver', None)",
])
def test_no_principal_spells_a_share_of_sentinels_own(name: str) -> None:
    own = {share_of(INTERNAL_NAME, "builtin", "builtin:a"), share_of(INTERNAL_NAME, "solver", None)}
    assert len(own) == 2  # two of Sentinel's own callers, two shares
    # any other principal's share is its name, whatever the call says of itself (its origin, its client)
    said = (("client", "builtin:a"), ("a2a", None), ("solver", None), ("builtin", "builtin:a"))
    for origin, client in said:
        assert share_of(name, origin, client) == name and name not in own
