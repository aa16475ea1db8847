"""How a server store's connection crosses the network: over a verified TLS connection, or not at all.

What replicas share travels between them and PostgreSQL: users' answers, consents, the audit record's
arguments, the approvals that let calls through. libpq's default ``sslmode`` is ``prefer``: TLS when the
server offers it, plaintext when it (or anyone on the path) says it does not, without a word, and even with
TLS no check of whose certificate it is (``require`` does not check either). So a store URL naming a host
across the network (``db.internal``, as docs/cluster.md shows) connected in plaintext to whoever answered
there, and a replica served on it (``tests/cluster/test_store_transport.py``).

A server reached over the network must be named with ``sslmode=verify-full`` (or ``verify-ca``) in the URL
(or ``PGSSLMODE``, which libpq reads when the URL says nothing), with the CA in ``sslrootcert``; any other
mode is refused, naming the setting. A Unix socket or a loopback address never leaves the machine: any mode.
"""

from __future__ import annotations

import ipaddress
import os
from collections.abc import Mapping

from sentinel_mcp.core.display_text import compose, safe_text
from sentinel_mcp.storage.location import LocationError, ServerLocation

VERIFIED = ("verify-full", "verify-ca")


class InsecureTransport(LocationError):
    """A server store across the network named without a verified TLS connection: refused."""


def _local(host: str) -> bool:
    if not host or host.startswith("/") or host.startswith("@"):  # a Unix socket's directory, an abstract one
        return True
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False  # a name: resolved by whoever answers DNS, so across the network


def check(location: ServerLocation, env: Mapping[str, str] | None = None) -> None:
    """Raise ``InsecureTransport`` when ``location`` reaches a server over the network without
    ``verify-full`` or ``verify-ca``. Reads the URL as libpq does (``host``, ``hostaddr``, several hosts,
    the environment's ``PG*`` where the URL says nothing); never shows the secret."""
    from psycopg.conninfo import conninfo_to_dict

    names = os.environ if env is None else env
    try:
        params = conninfo_to_dict(location.dsn)
    except Exception:  # noqa: BLE001 - the driver's parse error may quote the URL (its password)
        raise LocationError("sentinel.store: the postgresql:// URL cannot be read (check its parameters)") \
            from None
    hosts = str(params.get("host") or names.get("PGHOST") or "").split(",")
    addrs = [a for a in str(params.get("hostaddr") or names.get("PGHOSTADDR") or "").split(",") if a]
    # libpq connects to hostaddr when it is given (the host is then only the name TLS checks)
    reached = addrs or hosts
    # a service file (pg_service.conf) may name any host and mode: only a verified mode says enough
    service = params.get("service") or names.get("PGSERVICE")
    if not service and all(_local(h.strip()) for h in reached):
        return
    mode = str(params.get("sslmode") or names.get("PGSSLMODE") or "prefer").strip().lower()
    if mode in VERIFIED:
        return
    raise InsecureTransport(compose(
        "sentinel.store names a PostgreSQL server across the network (", safe_text(location.redacted, 200),
        ") with sslmode=", safe_text(mode, 40), ", which lets anyone on the path read and change what "
        "replicas share (the connection may fall back to plaintext, and the server's certificate is not "
        "checked): add sslmode=verify-full&sslrootcert=<the CA's file> to the URL (the server needs TLS), "
        "or reach it over a Unix socket or a loopback address (a tunnel)"))
