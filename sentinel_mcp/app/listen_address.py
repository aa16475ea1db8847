"""The ``--http [HOST:]PORT`` argument of ``serve``: read before the SDK is imported (app/early_start.py)."""

from __future__ import annotations

from sentinel_mcp.core.host_names import is_host, is_ipv6


def parse_listen(value: str, default_host: str = "127.0.0.1") -> tuple[str, int]:
    """``PORT``, ``HOST:PORT`` or ``[V6]:PORT``; anything else is a ValueError quoting the argument (a host
    that names nothing would otherwise be refused under a mangled name, or fail only after start-up)."""
    host, sep, port = value.rpartition(":")
    if not sep:
        port = value
    if host.startswith("[") or host.endswith("]"):
        inner = host[1:-1] if host.startswith("[") and host.endswith("]") else None
        if inner is None or not is_ipv6(inner):
            raise ValueError(f"--http expects [HOST:]PORT with an IPv6 host in brackets, got {value!r}")
        host = inner
    host = host or default_host.removeprefix("[").removesuffix("]")  # the config may bracket an IPv6 one
    if not is_host(host):
        raise ValueError(f"--http expects [HOST:]PORT with an IP address or a DNS name, got {value!r}")
    try:
        number = int(port)
    except ValueError:
        raise ValueError(f"--http expects [HOST:]PORT, got {value!r}") from None
    if not 0 <= number <= 65535:
        raise ValueError(f"port out of range: {number}")
    return host, number
