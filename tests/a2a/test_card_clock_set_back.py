"""A signed agent card whose signature has expired (``exp``) stays expired when the wall clock is set back:
``check_card`` reads the process clock (``core/process_clock.py``), which never goes back. Compared with the
wall clock, a clock set back an hour (or a year) made an expired signature, an old card replayed by whoever
took the peer's port, pass again for the step. Real HTTP on 127.0.0.1, real ECDSA (``test_card_signature_age``
has the rig)."""

from __future__ import annotations

import time

import pytest
from tests.a2a.test_card_signature_age import dated, keys
from tests.a2a.test_card_signatures import fetched

from sentinel_mcp.a2a.discovery import PeerRejected

pytestmark = pytest.mark.timeout(60)
_time, _mono = time.time, time.monotonic


@pytest.mark.parametrize("wall_by", [61, 3600, 86400 * 365])
async def test_an_expired_card_signature_stays_expired_when_the_clock_is_set_back(monkeypatch, wall_by):
    now = int(time.time())
    with pytest.raises(PeerRejected, match="expired"):
        await fetched(lambda port: dated(port, iat=now - 120, exp=now - 30), keys())
    monkeypatch.setattr(time, "time", lambda: _time() - wall_by)
    monkeypatch.setattr(time, "monotonic", lambda: _mono() + 1)
    with pytest.raises(PeerRejected, match="expired"):
        await fetched(lambda port: dated(port, iat=now - 120, exp=now - 30), keys())
