"""A console page that follows changes (Activity, Agent) misses none made between its rendering and its live
stream's opening: the page says how many such changes it was rendered at (``data-<kind>-seen``), and the
stream says the count as it opens, so the page reloads (console.js). Before, the stream said nothing of them
at its opening: a run that moved on in that moment, then waited for the person, left its trace page showing
the old steps for as long as it waited. The count is the principal's own: another's changes move nothing.
Real Sentinel (subprocess) over HTTP."""

from __future__ import annotations

import asyncio
import re

import pytest
from tests.console.console_rig import ALICE, BOB, console_config, http_sentinel, mcp_client, signed_in

pytestmark = pytest.mark.timeout(120)
SEEN = re.compile(r'data-activity-seen="(\d+)"')


@pytest.fixture(scope="module")
def sentinel(tmp_path_factory):
    cfg = console_config(tmp_path_factory.mktemp("console"))
    with http_sentinel(cfg) as (base, _proc):
        yield base


async def _seen(alice, path: str = "/console/activity") -> str:
    found = SEEN.search(await alice.page(path))
    assert found, "the page does not say which changes it shows"
    return found.group(1)


async def _first_events(alice, n: int) -> list[tuple[str, str]]:
    """The first ``n`` events of a live stream opened now: (event, data)."""
    events: list[tuple[str, str]] = []
    async with alice.http.stream("GET", f"{alice.base}/console/events") as r:
        assert r.status_code == 200
        kind = None
        async for line in r.aiter_lines():
            if line.startswith("event: "):
                kind = line[len("event: "):]
            elif line.startswith("data: ") and kind is not None:
                events.append((kind, line[len("data: "):]))
                if len(events) == n:
                    return events
    return events


async def test_a_change_between_a_page_and_its_stream_is_told_as_the_stream_opens(sentinel) -> None:
    base = sentinel
    async with signed_in(base, ALICE) as alice:
        rendered = await _seen(alice)
        async with mcp_client(base, ALICE) as c:  # alice's call: a row of her activity, after the page
            assert not (await c.call_tool("tb__noop", {})).is_error
        for _ in range(100):  # its outcome row is written as the answer leaves: it may trail the answer
            if await _seen(alice, "/console/sessions") != rendered:
                break
            await asyncio.sleep(0.1)
        events = dict(await asyncio.wait_for(_first_events(alice, 3), 20))
        assert "activity" in events, events
        assert events["activity"] != rendered  # the page rendered before the change reloads
        assert await _seen(alice) == events["activity"]  # a page rendered now shows it: no reload


async def test_another_principals_changes_move_nothing_of_hers(sentinel) -> None:
    base = sentinel
    async with signed_in(base, ALICE) as alice:
        before = await _seen(alice)
        async with mcp_client(base, BOB) as c:
            for _ in range(3):
                assert not (await c.call_tool("tb__noop", {})).is_error
        assert await _seen(alice) == before
