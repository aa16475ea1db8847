"""Random bytes drawn a block at a time (``core/random_pool.py``) and the seal's HMAC with its key's blocks
hashed once (``gateway/request_state.Sha256Mac``): the same kinds of values as ``secrets``/``uuid``/``hmac``
give, every value fresh, a forked child never repeating its parent's bytes."""

from __future__ import annotations

import base64
import hmac
import os
import re
import time
import uuid

import pytest

from sentinel_mcp.core import random_pool
from sentinel_mcp.core.random_pool import (
    BLOCK,
    RandomPool,
    ordered_token_hex,
    token_hex,
    token_urlsafe,
    urlsafe_b64,
    uuid7_hex,
)
from sentinel_mcp.gateway.request_state import RequestStateSeal, Sha256Mac


def test_draws_are_fresh_across_blocks() -> None:
    pool = RandomPool()
    seen = {pool.take(16) for _ in range(3 * BLOCK // 16 + 7)}  # past several refills
    assert len(seen) == 3 * BLOCK // 16 + 7
    assert len(pool.take(BLOCK + 5)) == BLOCK + 5  # larger than a block: a block of its own
    assert all(len(pool.take(n)) == n for n in (0, 1, 31, 4095))


def test_values_have_the_shapes_of_the_standard_ones() -> None:
    assert re.fullmatch(r"[0-9a-f]{16}", token_hex(8))
    assert re.fullmatch(r"[A-Za-z0-9_-]{22}", token_urlsafe(16))
    ids = [uuid7_hex() for _ in range(2000)]
    assert len(set(ids)) == len(ids)
    for value in ids[:50]:
        parsed = uuid.UUID(hex=value)
        assert parsed.version == 7 and parsed.variant == uuid.RFC_4122 and parsed.hex == value


def test_urlsafe_base64_is_the_standard_librarys_byte_for_byte() -> None:
    # the seals' and tokens' text: every length (padding), every byte value ("+" and "/" made "-" and "_")
    for n in range(0, 200):
        data = os.urandom(n)
        assert urlsafe_b64(data) == base64.urlsafe_b64encode(data)
    every = bytes(range(256)) * 3
    assert urlsafe_b64(every) == base64.urlsafe_b64encode(every)
    assert b"-" in urlsafe_b64(every) and b"_" in urlsafe_b64(every)


def test_ordered_ids_sort_by_the_time_they_were_made_and_stay_unguessable() -> None:
    """Made a millisecond or more apart, a later id sorts after an earlier one (an index on them grows at its
    end); within one millisecond they differ in their random part, which never repeats."""
    for make, width, random_digits in ((uuid7_hex, 32, 19), (lambda: ordered_token_hex(8), 28, 16)):
        before_ms = time.time_ns() // 1_000_000
        first = make()
        time.sleep(0.002)
        second = make()
        assert len(first) == len(second) == width and first < second, (first, second)
        assert abs(int(first[:12], 16) - before_ms) <= 1  # the milliseconds since the epoch come first
        burst = [make() for _ in range(5000)]
        assert len(set(burst)) == len(burst)
        tails = {v[-random_digits:] for v in burst}  # the random part alone already tells them apart
        assert len(tails) == len(burst)


def test_a_forked_child_does_not_repeat_its_parents_bytes() -> None:
    random_pool.token_bytes(1)  # the parent holds a block
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: what it draws next goes to the parent
        os.write(write, random_pool.token_bytes(32))
        os._exit(0)
    os.close(write)
    child = os.read(read, 32)
    os.waitpid(pid, 0)
    assert child != random_pool.token_bytes(32)


@pytest.mark.parametrize("key_len", [0, 1, 32, 63, 64, 65, 200])
def test_the_seal_mac_is_hmac_sha256(key_len: int) -> None:
    key = os.urandom(key_len)
    mac = Sha256Mac(key)
    for n in (0, 1, 55, 63, 64, 65, 2047, 2048, 5000):
        message = os.urandom(n)
        assert mac.digest(message) == hmac.digest(key, message, "sha256")
        assert mac.digest(message) == mac.digest(message)  # the kept states are never used up


def test_a_seal_opens_only_under_its_key() -> None:
    seal = RequestStateSeal()
    token = seal.seal({"a": 1})
    assert seal.open(token) == {**seal.open(token), "a": 1}  # type: ignore[dict-item]
    assert RequestStateSeal().open(token) is None
    seal.key = os.urandom(32)  # a replaced key: states sealed under the old one no longer open
    assert seal.open(token) is None
    assert seal.open(seal.seal({"b": 2}))["b"] == 2  # type: ignore[index]
