"""The ``--http [HOST:]PORT`` argument of ``serve``: read before the SDK is imported (app/early_start.py)."""

from __future__ import annotations


def parse_listen(value: str, default_host: str = "127.0.0.1") -> tuple[str, int]:
    """``PORT``, ``HOST:PORT`` or ``[V6]:PORT``."""
    host, sep, port = value.rpartition(":")
    if not sep:
        host, port = default_host, value
    host = host.strip("[]") or default_host
    try:
        number = int(port)
    except ValueError:
        raise ValueError(f"--http expects [HOST:]PORT, got {value!r}") from None
    if not 0 <= number <= 65535:
        raise ValueError(f"port out of range: {number}")
    return host, number
