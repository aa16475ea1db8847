"""One principal's calls running at once are bounded (``SENTINEL_CAP_CALLS_IN_FLIGHT``, 256 by default):
a flooding caller is refused past its share, at once and with the reason, while another principal's calls and
the policy's own fetches for a running call go on; a call that ends frees its place."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from sentinel_mcp.app.runtime import running_gateway
from sentinel_mcp.core.call_request import CallRequest
from sentinel_mcp.gateway.core import MAX_CALLS_IN_FLIGHT
from sentinel_mcp.identity.principal import Principal
from tests.gateway.helpers import make_config

pytestmark = pytest.mark.timeout(120)


def _call(who: str, seconds: float, depth: int = 0) -> CallRequest:
    return CallRequest("tb__slow", {"seconds": seconds}, f"{who}/s", "test", "client",
                       principal=Principal(who, "token"), depth=depth)


def _refused(outcome: object) -> bool:
    return "calls of yours are already running" in str(getattr(outcome, "reason", "") or "")


async def test_a_flooding_principal_is_refused_past_its_share_and_no_one_else_is(tmp_path: Path,
                                                                                monkeypatch) -> None:
    monkeypatch.setenv("SENTINEL_CAP_CALLS_IN_FLIGHT", "3")
    async with running_gateway(make_config(tmp_path)) as rt:
        gw = rt.gateway
        assert gw.max_calls_in_flight == 3
        flood = [asyncio.ensure_future(gw.run(_call("mallory", 1.0))) for _ in range(3)]
        await asyncio.sleep(0.2)
        over = await asyncio.gather(*(gw.run(_call("mallory", 0.0)) for _ in range(5)))
        assert all(_refused(o) for o in over), over
        # another principal, and a fetch the policy makes for a running call (depth 1), are not held back
        others = await asyncio.gather(gw.run(_call("alice", 0.0)), gw.run(_call("mallory", 0.0, depth=1)))
        assert not any(_refused(o) for o in others), others
        done = await asyncio.gather(*flood)
        assert not any(_refused(o) for o in done)
        assert gw.calls_in_flight == {}  # every place freed, nothing kept per name
        assert not _refused(await gw.run(_call("mallory", 0.0)))


async def test_a_refused_call_is_never_forwarded_and_the_cap_has_a_sane_default(tmp_path: Path,
                                                                                 monkeypatch) -> None:
    monkeypatch.setenv("SENTINEL_CAP_CALLS_IN_FLIGHT", "not a number")
    async with running_gateway(make_config(tmp_path)) as rt:
        assert rt.gateway.max_calls_in_flight == MAX_CALLS_IN_FLIGHT
    monkeypatch.setenv("SENTINEL_CAP_CALLS_IN_FLIGHT", "1")
    marker = tmp_path / "written.txt"
    async with running_gateway(make_config(tmp_path / "two")) as rt:
        gw = rt.gateway
        held = asyncio.ensure_future(gw.run(_call("bob", 1.0)))
        await asyncio.sleep(0.2)
        write = CallRequest("tb__write_marker", {"path": str(marker), "text": "x"}, "bob/s", "test", "client",
                            principal=Principal("bob", "token"))
        assert _refused(await gw.run(write))
        await held
    assert not marker.exists()


async def test_resource_reads_prompts_and_completions_count_in_the_share(tmp_path: Path, monkeypatch) -> None:
    """A slow upstream's resource reads were outside the share: one principal could hold any number open
    (red team "front"). They count with its calls, and are refused past it; another principal's are not."""
    monkeypatch.setenv("SENTINEL_CAP_CALLS_IN_FLIGHT", "2")
    async with running_gateway(make_config(tmp_path)) as rt:
        gw = rt.gateway
        mallory, alice = Principal("mallory", "token"), Principal("alice", "token")
        held = [asyncio.ensure_future(gw.read_resource("toolbox://item/slow-1.5", mallory, None)),
                asyncio.ensure_future(gw.run(_call("mallory", 1.5)))]
        await asyncio.sleep(0.4)
        over = await asyncio.gather(
            gw.read_resource("toolbox://item/k1", mallory, None),
            gw.read_resource("TOOLBOX://item/k2", mallory, None),
            gw.get_prompt("tb__review", {"code": "x"}, mallory),
            return_exceptions=True,
        )
        assert all("calls of yours are already running" in str(o) for o in over), over
        assert _refused(await gw.run(_call("mallory", 0.0)))  # a read holds a place a call would take
        assert (await gw.read_resource("toolbox://item/k3", alice, None)).contents[0].text == "item k3"
        await asyncio.gather(*held)
        assert gw.calls_in_flight == {}  # every place freed
        assert (await gw.read_resource("toolbox://item/k4", mallory, None)).contents[0].text == "item k4"
        assert "x" in str(await gw.get_prompt("tb__review", {"code": "x"}, mallory))
