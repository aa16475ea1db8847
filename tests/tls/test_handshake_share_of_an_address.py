"""TCP connections that never finish their TLS handshake, or finish it one byte at a time, cannot keep anyone
else out of the gateway. Every local client shares one address (127.0.0.1): a local process holding its
address's share of handshakes with silent sockets gives way (the oldest a share holds to the newest); a
handshake sent slowly is closed at ``handshake_timeout`` whatever it sends. The bounds are set by the
environment (``SENTINEL_CAP_TLS_*``) as the HTTP front's are.

Before, a new connection from an address at its share was closed at once: a few dozen silent sockets,
reopened as ``handshake_timeout`` closed them, kept every other client of 127.0.0.1 (the owner's) out for as
long as the process liked; and the TLS bounds could not be set by the environment.

A real Sentinel over HTTPS (subprocess), raw sockets and a real TLS client on 127.0.0.1."""

from __future__ import annotations

import asyncio
import json
import ssl

import httpx2
from tests.tls.tls_rig import client_context, https_sentinel, tls_config

CAPS = {"SENTINEL_CAP_TLS_HANDSHAKES": "6", "SENTINEL_CAP_TLS_HANDSHAKES_PER_PEER": "3"}


def _client_hello() -> bytes:
    """A real TLS ClientHello, to be sent a byte at a time."""
    incoming, outgoing = ssl.MemoryBIO(), ssl.MemoryBIO()
    tls = ssl.create_default_context().wrap_bio(incoming, outgoing, server_hostname="localhost")
    try:
        tls.do_handshake()
    except ssl.SSLWantReadError:
        pass
    return outgoing.read()


async def _closed(reader: asyncio.StreamReader, wait: float) -> bool:
    try:
        return await asyncio.wait_for(reader.read(1), wait) == b""
    except asyncio.TimeoutError:  # (first: a TimeoutError is an OSError)
        return False
    except (ConnectionError, OSError):
        return True


async def _alice_served(base: str, pki) -> bool:
    async with httpx2.AsyncClient(verify=client_context(pki, pki.alice), timeout=30) as client:
        try:
            return (await client.get(f"{base}/healthz")).status_code == 200
        except httpx2.TransportError:
            return False


async def test_silent_and_slow_handshakes_keep_nobody_out(tmp_path, pki) -> None:
    cfg = tls_config(tmp_path, pki)
    body = json.loads(cfg.read_text())
    body["sentinel"]["http"]["tls"]["handshake_timeout"] = 3
    cfg.write_text(json.dumps(body))
    with https_sentinel(cfg, pki, bind="127.0.0.1", env=CAPS) as (base, _):
        port = int(base.rsplit(":", 1)[1])
        # a local process holds its address's whole share (3) with silent sockets, accepted before alice's
        silent = [await asyncio.open_connection("127.0.0.1", port) for _ in range(3)]
        assert await _alice_served(base, pki)  # she shares the address, and gets in (the oldest gave way)

        # floods from two other addresses fill the bound in all (6): 127.0.0.1's two silent ones, two each of
        # theirs; alice's address is as big as the biggest, and its oldest gives way to her
        flood = [await asyncio.open_connection("127.0.0.1", port, local_addr=(source, 0))
                 for source in ("127.0.0.2", "127.0.0.4") for _ in range(3)]
        assert await _alice_served(base, pki)

        # a handshake sent a byte at a time is closed at handshake_timeout (3 s), long before it is sent
        hello = _client_hello()
        reader, writer = await asyncio.open_connection("127.0.0.1", port, local_addr=("127.0.0.3", 0))
        sent = 0
        for byte in hello[:160]:  # 160 bytes, 0.25 s apart: 40 s, were it never closed
            try:
                writer.write(bytes([byte]))
                await writer.drain()
            except (ConnectionError, OSError):
                break
            sent += 1
            if await _closed(reader, 0.25):
                break
        assert sent < min(160, len(hello)), sent
        assert await _alice_served(base, pki)
        for _, w in silent + flood + [(reader, writer)]:
            w.close()


async def test_idle_connections_give_way_and_a_begun_request_is_kept(tmp_path, pki) -> None:
    """An address at its share of open TLS connections (3 here) gives up its oldest idle one (between
    requests: none begun, or its last answered and kept alive): a process holding the share with connections
    that finished their handshake and say nothing keeps no other client of 127.0.0.1 out. A connection whose
    request has begun is never the one cut. Before, the newcomer was closed after its handshake."""
    cfg = tls_config(tmp_path, pki)
    caps = {"SENTINEL_CAP_TLS_CONNECTIONS_PER_PEER": "3", "SENTINEL_CAP_HTTP_HEAD_SECONDS": "60"}
    with https_sentinel(cfg, pki, bind="127.0.0.1", env=caps) as (base, _):
        port = int(base.rsplit(":", 1)[1])
        ctx = client_context(pki)

        async def connected() -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
            return await asyncio.open_connection("127.0.0.1", port, ssl=ctx, server_hostname="127.0.0.1")

        begun = await connected()
        begun[1].write(b"GET /healthz HTTP/1.1\r\n")  # a head begun, not finished
        await begun[1].drain()
        kept = await connected()  # one request answered, the connection kept alive: idle
        kept[1].write(b"GET /healthz HTTP/1.1\r\nhost: 127.0.0.1\r\n\r\n")
        head = await asyncio.wait_for(kept[0].readuntil(b"\r\n\r\n"), 30)
        assert head.startswith(b"HTTP/1.1 200"), head
        length = next(int(line.split(b":")[1]) for line in head.split(b"\r\n")
                      if line.lower().startswith(b"content-length:"))
        await asyncio.wait_for(kept[0].readexactly(length), 30)
        idle = await connected()  # none asked
        assert await _alice_served(base, pki)  # the address's fourth: its oldest idle one gave way
        assert await _closed(kept[0], 10)
        assert not await _closed(idle[0], 0.5)  # (alice's own, closed since, left a place free)
        late = await connected()  # the address at its share again; the one never asked gives way now
        assert await _alice_served(base, pki)
        assert await _closed(idle[0], 10)
        begun[1].write(b"host: 127.0.0.1\r\nconnection: close\r\n\r\n")  # the begun request is still served
        answer = await asyncio.wait_for(begun[0].read(), 30)
        assert answer.startswith(b"HTTP/1.1 200"), answer[:200]
        for _, w in (begun, kept, idle, late):
            w.close()
