"""Refused handshakes before the audit log opens are recorded once it does (red team "rt-wire6"). A refusal
while the gateway started (the audit not open yet) went to the log only, and one after it closed was
written into a closed audit (a task that failed, said in the log) or dropped: the audit log, the record an
operator reads, had no trace of them. Now they are held (bounded: ``burst`` one by one, the rest counted) and
written, in order, when the audit opens; refusals after it closed are said in the log. Real TLS on
127.0.0.1: a revoked certificate, another CA's, none at all."""

from __future__ import annotations

import asyncio
import logging
import ssl
from pathlib import Path
from typing import Any

import pytest

from sentinel_mcp.gateway.audit import AuditLog
from sentinel_mcp.tls.refusals import RefusalLog
from sentinel_mcp.tls.server_context import FrontTLS
from tests.tls.conftest import Pki
from tests.tls.tls_rig import client_context, front_in_process

pytestmark = pytest.mark.timeout(240)


async def _refused(port: int, ctx: ssl.SSLContext) -> bool:
    """A connection with ``ctx`` is refused by the server (in the handshake, or at once after it)."""
    try:
        reader, writer = await asyncio.open_connection("127.0.0.1", port, ssl=ctx)
    except (ssl.SSLError, ConnectionError):
        return True
    try:
        writer.write(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
        return await asyncio.wait_for(reader.read(1), 30) == b""
    except (ssl.SSLError, ConnectionError):
        return True
    finally:
        writer.close()


async def _rows(audit: AuditLog, log: RefusalLog) -> list[dict[str, Any]]:
    while log._pending:
        await asyncio.gather(*list(log._pending))
    return list(await audit.read(tail=100))


async def test_refusals_before_the_audit_opens_are_written_when_it_does(tmp_path: Path, pki: Pki) -> None:
    tls = FrontTLS(pki.server.cert, pki.server.key, pki.ca.ca_cert_path, pki.ca.crl_path, "required")
    audit_now: list[AuditLog | None] = [None]
    log = RefusalLog(lambda: audit_now[0], burst=5, window=3600)
    clients = [client_context(pki, pki.revoked), client_context(pki, pki.stranger), client_context(pki)]
    async with front_in_process(tls) as (port, acceptor):
        acceptor.on_refused = lambda peer, reason: log.record(peer, reason)
        for i in range(30):  # a flood while the gateway starts: bounded, never a row or line each
            assert await _refused(port, clients[i % 3])
        assert client_context(pki, pki.alice) is not None
        audit = await AuditLog(tmp_path / "audit.db").open()
        try:
            audit_now[0] = audit
            await log.opened()
            rows = await _rows(audit, log)
            assert len(rows) == 6, rows  # five one by one, then the count of the rest
            assert all(r["origin"] == "tls" and r["decision"] == "deny" for r in rows)
            assert all(r["client"] == "127.0.0.1" for r in rows[:5])
            reasons = " ".join(r["reason"] for r in rows[:5])
            assert "revoked" in reasons and "none presented" in reasons, reasons
            assert "25 more" in rows[5]["reason"], rows[5]
            await log.opened()  # twice: nothing more
            assert len(await _rows(audit, log)) == 6
            # once open, a refusal is written as it happens (a new window: one by one again)
            log.window = 0.0
            assert await _refused(port, clients[0])
            rows = await _rows(audit, log)
            assert len(rows) == 7 and "revoked" in rows[6]["reason"], rows[6:]
            await log.flush()
        finally:
            await audit.close()


async def test_refusals_after_the_audit_closes_are_said_not_lost(tmp_path: Path, pki: Pki,
                                                                caplog: pytest.LogCaptureFixture) -> None:
    audit = await AuditLog(tmp_path / "audit.db").open()
    log = RefusalLog(lambda: audit, burst=3, window=3600)
    await log.opened()
    log.record("10.0.0.1", "client certificate refused: certificate revoked")
    await log.flush()
    log.closed()
    await audit.close()
    with caplog.at_level(logging.WARNING):
        for i in range(10):
            log.record(f"10.0.0.{i}", "client certificate refused: certificate revoked")
        await log.flush()
    assert not log._pending
    said = [r.getMessage() for r in caplog.records if "not audited" in r.getMessage()]
    assert said and len(said) <= 4, said  # the burst one by one, then the count: bounded as the audit is
    assert not [r for r in caplog.records if r.exc_info], caplog.records
    again = await AuditLog(tmp_path / "audit.db").open()
    try:
        assert len(list(await again.read(tail=100))) == 1
    finally:
        await again.close()
