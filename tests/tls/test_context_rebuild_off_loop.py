"""The front's TLS context is rebuilt off the event loop when its files change (red team "config11").

It was rebuilt inside ``current()``, on the event loop, by the first connection or request after a change:
the certificate, key, CA bundle and CRL read and parsed (a CRL may be 16 MiB) while every other connection and
call of the gateway waited. Now a thread builds it and swaps it in whole: a new connection (``_upgrade``) and
a request over TLS (``app_with_tls``) await the rebuild under way without holding the loop, so a CRL written
counts from the next connection and the next request as before; one rebuild at a time, a change made during
one is taken by the next, and a rebuild that took T is followed by at least ``REBUILD_SPACING`` x T without
one (files changed without pause cost a bounded share of a core). A caller with no event loop in its thread
(a CLI, a test) still waits for the rebuild in place."""

from __future__ import annotations

import asyncio
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from sentinel_mcp.tls import server_context
from sentinel_mcp.tls.peer_certificate import from_pem
from sentinel_mcp.tls.server_context import FrontTLS, ServerContexts
from tests.tls.conftest import Pki

pytestmark = pytest.mark.timeout(120)
HANG_GUARD = 30.0  # a held build gives up waiting after this long (only if the test is already failing)


class Builds:
    """``build_server_context`` counted, each call's thread noted, and held until released when asked."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.real = server_context.build_server_context
        self.on_loop: list[bool] = []
        self.hold = threading.Event()
        self.hold.set()
        self.started = threading.Event()
        self.order: list[str] = []
        monkeypatch.setattr(server_context, "build_server_context", self)

    def __call__(self, tls: FrontTLS) -> Any:
        try:
            asyncio.get_running_loop()
            self.on_loop.append(True)
        except RuntimeError:
            self.on_loop.append(False)
        self.started.set()
        if not self.hold.wait(HANG_GUARD):
            self.order.append("guard")
        self.order.append("built")
        return self.real(tls)


def _front(pki: Pki) -> FrontTLS:
    return FrontTLS(pki.server.cert, pki.server.key, pki.ca.ca_cert_path, pki.ca.crl_path, "optional")


async def test_a_change_is_built_off_the_loop_while_the_loop_serves(pki: Pki, monkeypatch) -> None:
    monkeypatch.setattr(server_context, "RECHECK_SECONDS", 0.0)
    contexts = ServerContexts(_front(pki))
    builds = Builds(monkeypatch)
    bob = from_pem(pki.bob.cert.read_text())
    old = contexts.current()
    builds.hold.clear()
    pki.ca.revoke("bob")

    async def ticks() -> None:  # other work of the gateway, while the files are read
        await asyncio.to_thread(builds.started.wait, HANG_GUARD)
        for _ in range(50):
            await asyncio.sleep(0)
        builds.order.append("served")
        builds.hold.set()

    ticker = asyncio.create_task(ticks())
    assert contexts.current() is old  # the connection of the moment: the context in force, at once
    new = await contexts.fresh()  # a request: waits for the rebuild, the loop free meanwhile
    await ticker
    assert builds.on_loop == [False], builds.on_loop
    assert builds.order == ["served", "built"], builds.order
    assert new is not old and contexts.current() is new
    assert contexts.is_revoked(bob)


async def test_one_rebuild_at_a_time_and_a_change_during_it_is_taken_next(pki: Pki, monkeypatch) -> None:
    monkeypatch.setattr(server_context, "RECHECK_SECONDS", 0.0)
    contexts = ServerContexts(_front(pki))
    builds = Builds(monkeypatch)
    bob, alice = (from_pem(p.cert.read_text()) for p in (pki.bob, pki.alice))
    builds.hold.clear()
    pki.ca.revoke("bob")
    waiters = [asyncio.create_task(contexts.fresh()) for _ in range(20)]
    await asyncio.to_thread(builds.started.wait, HANG_GUARD)
    time.sleep(0.01)  # (a new change time for the next write)
    pki.ca.revoke(f"{pki.alice.serial:x}")  # written while the first rebuild reads the files
    for _ in range(20):
        contexts.current()
        await asyncio.sleep(0)
    assert len(builds.on_loop) == 1  # however often it is asked for while one is under way
    builds.hold.set()
    await asyncio.gather(*waiters)
    await contexts.fresh()  # sees alice's CRL: a second rebuild
    assert len(builds.on_loop) == 2 and not any(builds.on_loop), builds.on_loop
    assert contexts.is_revoked(bob) and contexts.is_revoked(alice)


def test_without_a_loop_the_caller_waits_for_the_rebuild(pki: Pki, monkeypatch) -> None:
    monkeypatch.setattr(server_context, "RECHECK_SECONDS", 0.0)
    contexts = ServerContexts(_front(pki))
    alice = from_pem(pki.alice.cert.read_text())
    pki.ca.revoke(f"{pki.alice.serial:x}")
    assert contexts.is_revoked(alice)


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0
        self.slept: list[float] = []

    def monotonic(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        self.now += seconds


def test_rebuilds_are_spaced_by_their_own_length(pki: Pki, monkeypatch, tmp_path: Path) -> None:
    """A rebuild that took T seconds is followed by REBUILD_SPACING x T without one: a file rewritten
    without pause is read a bounded share of the time (on a fake clock: counts, not timings)."""
    monkeypatch.setattr(server_context, "RECHECK_SECONDS", 0.0)
    clock = FakeClock()
    monkeypatch.setattr(server_context, "time", clock)
    contexts = ServerContexts(_front(pki))
    real = server_context.build_server_context

    def slow(tls: FrontTLS) -> Any:
        clock.now += 2.0  # this rebuild "takes" two seconds
        return real(tls)

    monkeypatch.setattr(server_context, "build_server_context", slow)
    pki.ca.revoke("bob")
    contexts.current()
    assert clock.slept == []  # the first change: at once
    time.sleep(0.01)
    pki.ca.revoke(f"{pki.alice.serial:x}")
    clock.now += 1.0
    contexts.current()
    assert clock.slept == [pytest.approx(2.0 * server_context.REBUILD_SPACING - 1.0)], clock.slept
    assert contexts.is_revoked(from_pem(pki.alice.cert.read_text()))
