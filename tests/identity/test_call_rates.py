"""Each principal's calls a minute (``principals[].calls_per_minute``, ``policy.calls_per_minute``): past its
rate a caller is refused at once with when to come back, nothing is forwarded, and no other principal, the
owner or the policy's own look-ups are held back."""

from __future__ import annotations

import json
import sys
import urllib.request
from pathlib import Path

import pytest

from sentinel_mcp.app.runtime import running_gateway
from sentinel_mcp.config import ConfigError
from sentinel_mcp.core.call_request import CallRequest
from sentinel_mcp.gateway import call_rates
from sentinel_mcp.gateway.call_rates import CallRates
from sentinel_mcp.identity.principal import Principal
from tests.gateway.helpers import TOOLBOX, make_config, sentinel_http

pytestmark = pytest.mark.timeout(120)
ALICE = "alice-token-0123456789abcdef"
OWNER = "owner-token-0123456789abcdef"


class Clock:
    def __init__(self) -> None:
        self.t = 1000.0

    def __call__(self) -> float:
        return self.t


def test_a_bucket_refills_at_the_rate_and_holds_its_burst() -> None:
    rates = CallRates({"alice": 60}, default=6, burst={"alice": 3}, exempt=("owner",))
    rates._now = clock = Clock()
    assert [rates.take("alice") for _ in range(3)] == [None, None, None]
    wait = rates.take("alice")
    assert wait is not None and 0.99 < wait <= 1.0
    clock.t += 0.5
    assert rates.take("alice") is not None  # half a call refilled: still refused
    clock.t += 0.6
    assert rates.take("alice") is None and rates.take("alice") is not None
    clock.t += 3600  # a quiet hour refills the burst, never more
    assert [rates.take("alice") for _ in range(4)][-1] is not None
    # the default applies to names the config does not rate (a minute's worth at once), never to the exempt
    assert [rates.take("peer") for _ in range(7)].count(None) == 6
    assert all(rates.take("owner") is None for _ in range(1000))
    assert rates.refused >= 4


def test_buckets_are_bounded(monkeypatch) -> None:
    monkeypatch.setattr(call_rates, "MAX_BUCKETS", 50)
    rates = CallRates({}, default=1)
    for i in range(500):
        rates.take(f"p{i}")
    assert len(rates._buckets) <= 51


@pytest.mark.parametrize("bad", [0, -1, 1.5, "10", True, 10_000_001])
def test_a_rate_that_is_not_a_positive_whole_number_is_refused_naming_the_key(tmp_path: Path, bad) -> None:
    with pytest.raises(ConfigError) as e:
        make_config(tmp_path, principals=[{"name": "alice", "token": ALICE, "calls_per_minute": bad}])
    assert "calls_per_minute" in str(e.value)
    with pytest.raises(ConfigError) as e:
        make_config(tmp_path, policy={"calls_per_minute": bad})
    assert "calls_per_minute" in str(e.value)


def _call(who: str, marker: Path, depth: int = 0) -> CallRequest:
    return CallRequest("tb__write_marker", {"path": str(marker), "text": "x"}, f"{who}/s", "test", "client",
                       principal=Principal(who, "token"), depth=depth)


def _rated(outcome: object) -> bool:
    return "calls a minute your principal may make" in str(getattr(outcome, "reason", "") or "")


async def test_past_its_rate_a_principal_is_refused_and_nothing_is_forwarded(tmp_path: Path) -> None:
    config = make_config(
        tmp_path / "state",
        principals=[{"name": "alice", "token": ALICE, "calls_per_minute": 2}],
        policy={"calls_per_minute": 3, "allow": ["tb__write_marker"]},
    )
    async with running_gateway(config) as rt:
        gw = rt.gateway
        done = [await gw.run(_call("alice", tmp_path / f"a{i}")) for i in range(2)]
        assert not any(_rated(o) for o in done)
        over = await gw.run(_call("alice", tmp_path / "over"))
        assert _rated(over) and "the 2 calls a minute" in over.reason
        assert "next one is taken in" in over.reason
        assert not (tmp_path / "over").exists()
        # a look-up the policy makes for a call (depth 1) is that call's, not another of the caller's
        assert not _rated(await gw.run(_call("alice", tmp_path / "fetch", depth=1)))
        # the principal's resource reads count too
        with pytest.raises(Exception, match="calls a minute"):
            await gw.read_resource("toolbox://static", Principal("alice", "token"), None)
        # bob has no rate of his own: the default's 3; the owner has none at all
        bob = [await gw.run(_call("bob", tmp_path / f"b{i}")) for i in range(4)]
        assert [_rated(o) for o in bob] == [False, False, False, True]
        owner = [await gw.run(CallRequest("tb__write_marker", {"path": str(tmp_path / f"o{i}"), "text": "x"},
                                          "o/s", "test", "client")) for i in range(10)]
        assert not any(_rated(o) for o in owner)


def test_over_http_the_refusal_reaches_the_client_and_another_token_is_untouched(tmp_path: Path) -> None:
    with sentinel_http(tmp_path, {
        "mcpServers": {"tb": {"command": sys.executable, "args": [TOOLBOX]}},
        "sentinel": {"data_dir": str(tmp_path / "state"), "http": {"token": OWNER},
                     "principals": [{"name": "alice", "token": ALICE, "calls_per_minute": 2}]},
    }) as url:

        def call(token: str, i: int) -> dict:
            body = {"jsonrpc": "2.0", "id": i, "method": "tools/call",
                    "params": {"name": "tb__echo", "arguments": {"text": f"t{i}"},
                               "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                                         "io.modelcontextprotocol/clientInfo": {"name": "t", "version": "1"},
                                         "io.modelcontextprotocol/clientCapabilities": {}}}}
            req = urllib.request.Request(url, json.dumps(body).encode(), {
                "Authorization": f"Bearer {token}", "Content-Type": "application/json",
                "Accept": "application/json, text/event-stream", "MCP-Protocol-Version": "2026-07-28",
                "Mcp-Method": "tools/call", "Mcp-Name": "tb__echo"})
            with urllib.request.urlopen(req, timeout=30) as r:
                return json.loads(r.read())

        answers = [call(ALICE, i) for i in range(3)]
        texts = [a["result"]["content"][0]["text"] for a in answers]
        assert texts[:2] == ["t0", "t1"], answers
        assert answers[2]["result"]["isError"] and "calls a minute" in texts[2]
        assert [call(OWNER, 10 + i)["result"]["content"][0]["text"] for i in range(5)] == [
            f"t{10 + i}" for i in range(5)]
        # operators see the refusals on /metrics (one series: principals' names would be unbounded labels)
        req = urllib.request.Request(url.rsplit("/mcp", 1)[0] + "/metrics",
                                     headers={"Authorization": f"Bearer {OWNER}"})
        with urllib.request.urlopen(req, timeout=30) as r:
            metrics = r.read().decode()
        assert "\nsentinel_calls_over_rate_total 1\n" in metrics, metrics[-800:]
        assert "\nsentinel_tools_held 0\n" in metrics
