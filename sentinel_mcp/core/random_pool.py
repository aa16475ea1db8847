"""Random bytes from the operating system, drawn a block at a time.

``os.urandom`` (and ``secrets``, ``uuid.uuid4`` on top of it) lets go of the interpreter for its system call
on every draw. On the gateway's event loop each such point lets a storage writer thread take the interpreter,
and the loop waits for it back: a call drew three times (a conversation id, a seal's nonce, a decision id;
issue 21). These are the same bytes of the same generator, fetched ``BLOCK`` bytes at a time and each handed
out once; a process made by ``fork`` starts with an empty pool, never with its parent's bytes.
"""

from __future__ import annotations

import binascii
import os
import threading
import time

BLOCK = 4096


class RandomPool:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.reset()

    def reset(self) -> None:
        self._block = b""
        self._used = 0

    def take(self, n: int) -> bytes:
        """``n`` fresh random bytes (``os.urandom(n)``'s kind), never handed out before."""
        with self._lock:
            if self._used + n > len(self._block):
                self._block = os.urandom(max(BLOCK, n))
                self._used = 0
            start = self._used
            self._used += n
            return self._block[start : start + n]


_POOL = RandomPool()
os.register_at_fork(after_in_child=_POOL.reset)


def token_bytes(n: int) -> bytes:
    return _POOL.take(n)


def token_hex(n: int) -> str:
    """As ``secrets.token_hex(n)``."""
    return _POOL.take(n).hex()


# ``base64.urlsafe_b64encode``'s own two steps, called directly (it is two Python calls around them)
URLSAFE = bytes.maketrans(b"+/", b"-_")


def urlsafe_b64(data: bytes) -> bytes:
    """``base64.urlsafe_b64encode(data)``: the same bytes."""
    return binascii.b2a_base64(data, newline=False).translate(URLSAFE)


def token_urlsafe(n: int) -> str:
    """As ``secrets.token_urlsafe(n)``."""
    return binascii.b2a_base64(_POOL.take(n), newline=False).translate(URLSAFE).rstrip(b"=").decode("ascii")


# Ids a store indexes (conversations, decisions) begin with the time they were made: later ones sort later,
# so each index grows at its end. A purely random id lands anywhere in the index, and every insert dirtied a
# page of its own, journaled and written: the facts of a conversation per call cost 0.85 ms of SQLite a call
# against 0.52 ms with ordered ids (issue 21). The random part keeps them unguessable and never alike.


def _epoch_ms() -> int:
    """The milliseconds since the epoch, in 48 bits."""
    return time.time_ns() // 1_000_000 & 0xFFFF_FFFF_FFFF


def ordered_token_hex(n: int) -> str:
    """The milliseconds since the epoch (12 hex digits), then ``n`` random bytes in hex."""
    return f"{_epoch_ms():012x}{_POOL.take(n).hex()}"


def uuid7_hex() -> str:
    """A UUID of version 7 (RFC 9562) as 32 hex digits: 48 bits of milliseconds since the epoch, then 74
    random bits."""
    ms = _epoch_ms()
    r = int.from_bytes(_POOL.take(10), "big")
    value = ms << 80 | 0x7 << 76 | (r >> 68 & 0xFFF) << 64 | 0b10 << 62 | (r & 0x3FFF_FFFF_FFFF_FFFF)
    return f"{value:032x}"
