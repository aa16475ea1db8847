"""A flood of wrong secrets at a known name no longer locks its principal out, and whether a name is a
principal's cannot be learned from the form (red team "rt-limits7").

What broke:
1. A named sign-in was counted against the name across every address: 21 wrong secrets at ``alice`` from
   anywhere closed the form to alice for up to an hour (blocks doubling), her right secret refused unchecked.
   Now a name is counted per address too (one address alone is stopped before it reaches the name's count)
   and, past the name's count, a browser alice signed in on before still signs her in: it carries a device
   token (``sign_in_devices.py``) and is counted against that device alone.
2. Real names were counted in a table of their own, made-up names in a bounded one whose oldest were
   forgotten: 21 guesses at a name, 4,096 made-up names, one more guess; still blocked meant real. Now every
   name is counted alike (``sign_in_limit.py``): the same answers, in the same order, for a real name and a
   made-up one.

In-process console app on 127.0.0.1 with a test clock, real HTTP; the addresses of a flood from many
addresses are counted into the same ``SignInLimit`` the app reads (one test host has one address)."""

from __future__ import annotations

import re

import httpx2
import pytest
from tests.console.test_console_sign_in_forms import (ALICE_SECRET, BOB_SECRET, Clock, console_app,
                                                      session_set, sign_in)

from sentinel_mcp.console.sign_in_limit import (MAX_FAILED_PER_ADDRESS_AND_NAME, MAX_FAILED_PER_DEVICE,
                                                MAX_FAILED_PER_NAME, NAME_SLOTS, SignInLimit)

pytestmark = pytest.mark.timeout(240)
CSRF_VALUE = re.compile(r'value="[0-9a-f]{64}"')


def flood(limit: SignInLimit, name: str, count: int, first: int = 0) -> None:
    """``count`` wrong secrets under ``name``, each from its own address."""
    for i in range(first, first + count):
        limit.failed(f"10.{i // 62500 % 250}.{i // 250 % 250}.{i % 250}", name)


async def test_a_flood_at_a_known_name_leaves_its_principal_signing_in_from_her_own_browser():
    limit = SignInLimit(Clock())
    async with console_app(limit, None) as base:
        async with httpx2.AsyncClient(timeout=60, follow_redirects=False) as alice:
            r = await sign_in(alice, base, ALICE_SECRET, name="alice")  # an ordinary day: her browser marked
            assert r.status_code == 303 and session_set(r), r.status_code
            alice.cookies.delete("sentinel_console")  # signed out since
            flood(limit, "alice", MAX_FAILED_PER_NAME * 5)  # then the flood, from many addresses
            async with httpx2.AsyncClient(timeout=60, follow_redirects=False) as stranger:
                r = await sign_in(stranger, base, ALICE_SECRET, name="alice")  # a new browser: blocked
                assert r.status_code == 429 and not session_set(r), r.status_code
            r = await sign_in(alice, base, ALICE_SECRET, name="alice")
            assert r.status_code == 303 and session_set(r), (r.status_code, r.text[:300])
            # her own wrong secrets there are counted against her browser alone, and bounded
            alice.cookies.delete("sentinel_console")
            statuses = [(await sign_in(alice, base, f"typo-{i:03d}-0123456789", name="alice")).status_code
                        for i in range(MAX_FAILED_PER_DEVICE + 1)]
            assert statuses == [401] * MAX_FAILED_PER_DEVICE + [429], statuses
            r = await sign_in(alice, base, ALICE_SECRET, name="alice")
            assert r.status_code == 429 and not session_set(r), r.status_code


async def test_a_device_token_counts_only_for_its_own_name_and_cannot_be_made():
    limit = SignInLimit(Clock())
    async with console_app(limit, None) as base:
        async with httpx2.AsyncClient(timeout=60, follow_redirects=False) as bob:
            assert (await sign_in(bob, base, BOB_SECRET, name="bob")).status_code == 303
            bob.cookies.delete("sentinel_console")
            token = bob.cookies.get("sentinel_console_device")
            # it names nobody: 16 random bytes, the second it was issued and a MAC, no room for a name (a
            # "bob" inside the random part is chance: it once was)
            assert token and re.fullmatch(r"[A-Za-z0-9_-]{22}\.[0-9]+\.[0-9a-f]{32}", token), token
            flood(limit, "alice", MAX_FAILED_PER_NAME * 5)
            # bob's browser is not alice's: her name's block holds there
            r = await sign_in(bob, base, ALICE_SECRET, name="alice")
            assert r.status_code == 429 and not session_set(r), r.status_code
            device, _, mac = token.partition(".")
            forged = [f"{device}.{'0' * 32}", f"{device}.", f".{mac}", f"{device}x.{mac}", token + "0",
                      f"{device}.{mac.upper()}", f"{device}.{mac[:-1]}", "x" * 500, f"{device}.{mac}.{mac}"]
            for value in forged:
                async with httpx2.AsyncClient(timeout=60, follow_redirects=False) as other:
                    other.cookies.set("sentinel_console_device", value)
                    r = await sign_in(other, base, ALICE_SECRET, name="alice")
                    assert r.status_code == 429 and not session_set(r), (value[:40], r.status_code)


def test_one_address_alone_never_closes_a_name_to_others():
    clock = Clock()
    limit = SignInLimit(clock)
    for _ in range(50):  # an hour of one address's flood at alice: each block waited out, guessing again
        while limit.wait("203.0.113.7", "alice") == 0:
            limit.failed("203.0.113.7", "alice")
        assert limit.wait("198.51.100.9", "alice") == 0  # alice from anywhere else: checked
        clock.now += limit.wait("203.0.113.7", "alice")
    assert MAX_FAILED_PER_ADDRESS_AND_NAME < MAX_FAILED_PER_NAME


def test_the_guesses_at_one_name_from_many_addresses_are_bounded():
    clock = Clock()
    limit = SignInLimit(clock)
    checked = 0
    for i in range(10_000):  # every guess from a fresh address, within one window
        address = f"10.{i // 62500 % 250}.{i // 250 % 250}.{i % 250}"
        if limit.wait(address, "alice") == 0:
            checked += 1
            limit.failed(address, "alice")
    assert checked == MAX_FAILED_PER_NAME + 1, checked


def test_no_flood_of_made_up_names_forgets_a_names_count():
    """(Moved here from ``test_console_sign_in_forms``: the names' table no longer forgets.) Made-up names
    share slots with real ones, so such a flood may close a real name sooner to new browsers, never later."""
    clock = Clock()
    limit = SignInLimit(clock)
    flood(limit, "alice", MAX_FAILED_PER_NAME)
    assert limit.wait("198.51.100.9", "alice") == 0
    for i in range(NAME_SLOTS * 5):
        limit.failed(f"10.1.{i // 250 % 250}.{i % 250}", f"made-up-{i}")
    flood(limit, "alice", 1, first=99_000)
    assert limit.wait("198.51.100.9", "alice") > 0


async def _answers(name: str, secret: str) -> list[tuple[int, str]]:
    """The form's answers to one sequence of sign-ins under ``name``: guesses from this host, a flood at the
    name from many addresses, then made-up names enough to fill any bounded table, then more guesses."""
    limit = SignInLimit(Clock())
    said: list[tuple[int, str]] = []
    async with console_app(limit, None) as base:
        async with httpx2.AsyncClient(timeout=60, follow_redirects=False) as http:
            async def one(guess: str) -> None:
                r = await sign_in(http, base, guess, name=name)
                said.append((r.status_code, CSRF_VALUE.sub("", r.text)))

            for i in range(MAX_FAILED_PER_ADDRESS_AND_NAME - 1):
                await one(f"guess-{i:04d}-0123456789")
            flood(limit, name, MAX_FAILED_PER_NAME + 1)
            await one(secret)  # the right secret of one of them, the wrong of the other
            for i in range(NAME_SLOTS + 200):
                limit.failed(f"10.9.{i // 250 % 250}.{i % 250}", f"made-up-{i}")
            for i in range(3):
                await one(f"late-{i:04d}-0123456789")
    return said


async def test_a_real_name_and_a_made_up_one_are_answered_alike():
    real = await _answers("alice", ALICE_SECRET)
    made_up = await _answers("nobody-here", ALICE_SECRET)
    assert len(real) == len(made_up) == MAX_FAILED_PER_ADDRESS_AND_NAME + 3
    assert [s for s, _ in real] == [s for s, _ in made_up], ([s for s, _ in real], [s for s, _ in made_up])
    assert [t for _, t in real] == [t for _, t in made_up]
