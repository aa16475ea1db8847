"""Which mDNS records reached Sentinel from this machine itself: the provenance a loopback address needs.

An announcement's records say nothing of where they came from, and zeroconf's cache keeps none of it:
browsing loopback and a LAN interface (or loopback alone, while any other process on the host has joined the
mDNS group on a LAN interface: a socket bound to 5353 then hears that interface too), a host on the LAN could
announce a service at ``127.0.0.1`` and a port of its choosing, and the card fetch would be a request from
this machine to its own loopback services (a console, PostgreSQL, an adb server). The packet that carried the
records does say where it came from: here every response zeroconf takes in is looked at on its way to the
cache, and the records of those whose source address is loopback are kept. A kernel drops a packet from a
loopback source that arrives on any other interface (a "martian"), so that source is this machine; a LAN host
can repeat what a local announcer said, never add to it.

``PeerBrowser`` fetches from a loopback address only when the records that chose it (the service's
SRV: host and port; its TXT: card path and scheme; the host's address record) were all heard from loopback.
The set is bounded (the oldest forgotten first): a forgotten record is one not heard, so a flood can only make
Sentinel refuse a local peer, never accept a LAN one.
"""

from __future__ import annotations

import ipaddress
from collections import OrderedDict
from typing import Any

from zeroconf import DNSAddress, DNSService, DNSText, IPVersion, Zeroconf
from zeroconf._handlers.record_manager import RecordManager
from zeroconf._protocol.incoming import DNSIncoming
from zeroconf.asyncio import AsyncServiceInfo, AsyncZeroconf

from sentinel_mcp.a2a.record_size_bound import drop_oversize

MAX_HEARD = 4096

Key = tuple[Any, ...]


def _from_loopback(source: Any) -> bool:
    """(The kernel's own spelling of a packet's source: dotted decimal, or ``::1`` with no zone.)"""
    host = source[0] if isinstance(source, tuple) and source else None
    return isinstance(host, str) and (host.startswith("127.") or host == "::1")


def record_key(record: Any) -> Key | None:
    """What a record says that chooses where a card is fetched from (its TTL and cache bit aside)."""
    name = record.name.lower()
    if isinstance(record, DNSService):
        return ("srv", name, record.server.lower(), record.port, record.priority, record.weight)
    if isinstance(record, DNSText):
        return ("txt", name, bytes(record.text))
    if isinstance(record, DNSAddress):
        return ("addr", name, bytes(record.address))  # (packed: compared with the address's own packing)
    return None


class HeardRecords(RecordManager):  # type: ignore[misc]  # (zeroconf's, compiled: no type information)
    """zeroconf's record manager, keeping the records of responses whose packet came from loopback (and
    caching none over the size bound)."""

    def __init__(self, zc: Zeroconf) -> None:
        super().__init__(zc)
        self.heard: OrderedDict[Key, None] = OrderedDict()

    def async_updates_from_response(self, msg: DNSIncoming) -> None:
        drop_oversize(msg.answers())  # (a size the announcer chose: ``record_size_bound.py``)
        if _from_loopback(msg.source):
            for record in msg.answers():
                key = record_key(record)
                if key is not None:
                    self.heard[key] = None
                    self.heard.move_to_end(key)
            while len(self.heard) > MAX_HEARD:
                self.heard.popitem(last=False)
        super().async_updates_from_response(msg)


class _HeardZeroconf(Zeroconf):
    def start(self) -> None:
        # (before the engine's listeners are made: each takes the record manager it is given then)
        self.record_manager = HeardRecords(self)
        super().start()


def open_heard(interfaces: list[str]) -> AsyncZeroconf:
    """An AsyncZeroconf on ``interfaces`` (IPv4) whose record manager keeps what loopback said."""
    return AsyncZeroconf(zc=_HeardZeroconf(interfaces=interfaces, ip_version=IPVersion.V4Only))


def heard_on_loopback(zc: Zeroconf, info: AsyncServiceInfo, address: str) -> bool:
    """Whether ``info``'s SRV and TXT records and its host's record for ``address`` all came in packets
    from loopback (False when ``zc`` keeps no such record: one not opened by ``open_heard``)."""
    manager = getattr(zc, "record_manager", None)
    if not isinstance(manager, HeardRecords) or not info.server:
        return False
    name, server = info.name.lower(), info.server.lower()
    wanted = [("srv", name, server, info.port, info.priority, info.weight),
              ("txt", name, bytes(info.text or b"")),
              ("addr", server, ipaddress.ip_address(address).packed)]
    return all(key in manager.heard for key in wanted)
