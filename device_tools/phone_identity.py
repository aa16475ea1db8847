"""Which phone a built-in's adb settings name: the key one gate per phone is kept under.

The device and sensors built-ins may spell the same phone two ways: one names its serial, the other none
("the only phone attached"), or one says ``localhost`` and the other ``127.0.0.1``. Keyed by the settings as
written they got two gates (two records, two rule sets) for one phone. So the key is the phone: the adb
server (loopback spellings are one server) and the serial, a missing serial asked of the adb server when
the gate is made (the only phone attached is that serial). When the server cannot be asked or lists several
phones, the key keeps no serial: the backend then reports the problem on first use, as it always did.
"""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Callable

AskSerials = Callable[[str, int], list[str]]
LOOPBACK = "loopback"


def server_host(host: str) -> str:
    """One spelling per adb server host: loopback names and addresses are one, IP literals compressed."""
    name = host.strip().lower().rstrip(".")
    if name == "localhost":
        return LOOPBACK
    try:
        ip = ipaddress.ip_address(name.removeprefix("[").removesuffix("]"))
    except ValueError:
        return name
    return LOOPBACK if ip.is_loopback else ip.compressed


def attached_serials(host: str, port: int) -> list[str]:
    """The serials of the phones the adb server lists now; [] when it cannot be asked (never starts one)."""
    import adbutils

    try:
        with socket.create_connection((host, port), timeout=1):  # adbutils would spawn a server: we ask only
            pass
        return [d.serial for d in adbutils.AdbClient(host=host, port=port, socket_timeout=2).device_list()]
    except (OSError, adbutils.AdbError):
        return []


PhoneKey = tuple[str, str, int, str | None]


def adb_phone_key(host: str, port: int, serial: str | None, ask: AskSerials = attached_serials) -> PhoneKey:
    """``("adb", server host, port, serial)``; ``ask`` lists the server's phones (a test hands its own)."""
    if serial is None:
        found = ask(host, port)
        serial = found[0] if len(found) == 1 else None
    return ("adb", server_host(host), port, serial)
