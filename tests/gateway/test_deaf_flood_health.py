"""An upstream flooding notices past its budget, so that Sentinel reads it only at the budget's pace, and
never answering the health check's ping, is cut for not answering after ``PING_PATIENCE`` windows, as one
that writes on and never answers without a pause. Before, every window in which the reading was paused was
skipped (the ping's answer might wait behind what Sentinel had not read), so such an upstream was read at
the budget's pace for ever, shown ready, never cut. Beside it the same flood answering its ping
(``test_paced_upstream_health``): its answer waits behind the backlog Sentinel paused, and it is kept. A real
stdio upstream (``notice_storm_upstream.py --deaf``) and a real HTTP one (``hostile_http_upstream.py``:
``notices_forever``), down the lean path and the SDK's."""

from __future__ import annotations

import sys

import anyio
import pytest

from sentinel_mcp.gateway import notice_budget
from sentinel_mcp.gateway.upstream import Upstream
from tests.gateway import test_lean_upstream, test_notices_only_health
from tests.gateway.test_lean_stdio import _with_upstream
from tests.gateway.test_lean_upstream import hostile as hostile  # the module's upstream (a fixture)
from tests.gateway.test_listing_bounds import wait_until

pytestmark = pytest.mark.timeout(240)
HEALTH = 2.0  # seconds: the ping's window is at least 2 s
PATHS = pytest.mark.parametrize("lean", [True, False], ids=["lean", "sdk"])
DEAF = [sys.executable, "-m", "tests.gateway.notice_storm_upstream", "--deaf"]


def _storm(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(notice_budget, "BURST", 10)  # it writes far past 100 a second: paused throughout


async def _verdicts(up: Upstream) -> list[str]:
    """What the health check concluded once the storm had paused the reading, until its first verdict."""
    verdicts = test_notices_only_health.watch_verdicts(up)
    assert not (await up.call_tool("storm", {})).is_error
    await wait_until(lambda: up.notice_budget.pauses >= 1)
    with anyio.fail_after(150):  # a bound, no timing asserted
        while not verdicts:
            await anyio.sleep(0.1)
    return verdicts


@PATHS
def test_a_flood_past_the_budget_that_never_answers_is_cut_for_not_answering(
        lean: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    _storm(monkeypatch)
    verdicts = anyio.run(lambda: _with_upstream(DEAF, _verdicts, protocol="legacy", lean=lean,
                                                health_interval=HEALTH))
    assert "while it kept writing" in verdicts[0], verdicts


@PATHS
async def test_over_http_a_call_streaming_past_the_budget_and_never_answering_is_cut(
        hostile: str, lean: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    """``notices_forever``: progress 20 a second to a call that asked for none, its pings never answered;
    the budget at 5 a second, so its reading is paused throughout. The ping's answer comes on its own
    response, behind no paused stream (``ping_backlog.py``)."""
    monkeypatch.setattr(notice_budget, "PER_SECOND", 5.0)
    monkeypatch.setattr(notice_budget, "BURST", 10)
    paused: list[int] = []

    async def body(up: Upstream) -> list[str]:
        verdicts = await test_notices_only_health._verdicts(up)
        paused.append(up.notice_budget.pauses)
        return verdicts

    verdicts = await test_lean_upstream._with_upstream(hostile, body, protocol="legacy", lean=lean,
                                                       health_interval=HEALTH, timeout=300)
    assert paused[0] >= 1  # its reading was paused: the windows were ones the check used to skip
    assert "while it kept writing" in verdicts[0], verdicts
