"""One console session (a copied cookie, a script reopening the page in a loop) cannot hold its principal's
whole share of live streams (/console/events) from the principal's other sessions: past
``MAX_STREAMS_PER_SESSION`` its own oldest stream ends. Real HTTP on 127.0.0.1 against a real Sentinel."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator

import pytest
from sentinel_mcp.console.inbox import MAX_STREAMS_PER_PRINCIPAL, MAX_STREAMS_PER_SESSION
from tests.console.console_rig import ALICE, console_config, http_sentinel, signed_in

pytestmark = pytest.mark.timeout(180)


@pytest.fixture(scope="module")
def sentinel(tmp_path_factory):
    cfg = console_config(tmp_path_factory.mktemp("stream-share"))
    with http_sentinel(cfg) as (base, _proc):
        yield base


async def _rest(chunks: AsyncIterator[bytes]) -> bytes:
    return b"".join([c async for c in chunks])


async def test_one_session_holds_at_most_its_own_streams(sentinel):
    base = sentinel
    async with signed_in(base, ALICE) as looping, signed_in(base, ALICE) as person, \
            contextlib.AsyncExitStack() as held:
        opened = []
        for _ in range(MAX_STREAMS_PER_PRINCIPAL):  # as many as the principal may have, all by one session
            r = await held.enter_async_context(looping.http.stream("GET", f"{base}/console/events"))
            assert r.status_code == 200, r.status_code
            chunks = r.aiter_raw()
            assert b"event: inbox" in await anext(chunks)
            opened.append(chunks)
        # the oldest ended as newer ones came: only the newest MAX_STREAMS_PER_SESSION go on
        for old in opened[:-MAX_STREAMS_PER_SESSION]:
            # ends: the server closed it (on main it stayed open, sending keep-alives, for good)
            rest = await asyncio.wait_for(_rest(old), 60)
            assert b"event: inbox" not in rest
        # the principal's other session still opens its own
        async with person.http.stream("GET", f"{base}/console/events") as mine:
            assert mine.status_code == 200, mine.status_code
