"""The announcer rig's browser looks only at the names its test handed it. Its socket is on this machine's
loopback mDNS group, which a parallel test run shares: another process's announcement (here a real one,
registered on the group) was queued, resolved and fetched from beside the test's own names, and took the
places its bounds are about (CI: an injected name neither rejected nor taken within the rig's looks)."""

from __future__ import annotations

import asyncio
import socket
import uuid
from collections.abc import AsyncIterator

import pytest
from tests.a2a.a2a_rig import LOOPBACK
from tests.a2a.lan_announcer import HERE, Rig, announced, lan_rig, packet, service
from tests.a2a.raw_listener import Counting, listening

from sentinel_mcp.a2a.card_fetch import NO_CARD
from sentinel_mcp.a2a.discovery import SERVICE_TYPE, txt_record
from sentinel_mcp.a2a.peer_browser import PeerBrowser, open_zeroconf
from sentinel_mcp.a2a.settings import A2ASettings

pytestmark = pytest.mark.timeout(60)


@pytest.fixture
async def rig() -> AsyncIterator[Rig]:
    async for r in lan_rig():
        yield r


async def test_a_name_another_process_announces_is_not_looked_at(rig: Rig) -> None:
    from zeroconf.asyncio import AsyncServiceInfo

    # the control: a plain browser on the same group does hear the other announcer
    plain_registry = type(rig.registry)()
    plain = PeerBrowser(rig.zc, plain_registry, allow_loopback_plaintext=True, resolve_timeout_ms=300)
    other = open_zeroconf(LOOPBACK)
    label = f"elsewhere-{uuid.uuid4().hex[:8]}"
    foreign = AsyncServiceInfo(SERVICE_TYPE, f"{label}.{SERVICE_TYPE}", port=9,
                               addresses=[socket.inet_aton("127.0.0.1")],
                               properties=txt_record(A2ASettings()), server=f"{label}.local.")
    async with listening(Counting()) as local:
        await plain.start()
        try:
            await other.async_register_service(foreign)
            mine = announced(local.port)
            rig.hear(packet(*service(mine), *mine.dns_addresses()), HERE)
            assert NO_CARD == await rig.verdict(mine.name)
            for _ in range(200):  # (a count: the control's browser hears the real announcement)
                if foreign.name in plain_registry.rejected or foreign.name in plain_registry.peers:
                    break
                await asyncio.sleep(0.05)
            assert foreign.name in plain_registry.rejected or foreign.name in plain_registry.peers
            assert foreign.name not in rig.registry.rejected and foreign.name not in rig.registry.peers
            assert rig.browser is not None and foreign.name not in rig.browser.pending
        finally:
            await plain.stop()
            await other.async_unregister_service(foreign)
            await other.async_close()
