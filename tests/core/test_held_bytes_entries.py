"""``HeldBytes`` (the bytes of request bodies held per caller, ``core/held_bytes.py``) read as a plain dict:
what each caller holds is its own, refused takes count nothing, and nothing is kept for a caller holding
nothing (an empty body included), whatever order takes and give-backs come in."""

from __future__ import annotations

import random

from sentinel_mcp.core.held_bytes import HeldBytes
from sentinel_mcp.gateway.held_bodies import HeldBodies


def test_an_empty_body_keeps_no_entry_for_its_caller() -> None:
    held = HeldBytes(per_holder=100, total=150)
    for who in ("a", "b", "c"):
        assert held.take(who, 0) is None
        held.give_back(who, 0)
    assert list(held._held) == [] and held.held() == 0  # nothing kept per name (it was {"a": 0, ...})


def test_one_callers_bytes_never_move_anothers_share() -> None:
    held = HeldBytes(per_holder=100, total=1000)
    assert held.take("alice", 100) is None
    assert (held.take("alice", 1) or (0, ""))[0] == 429  # at her share
    assert held.take("bob", 100) is None  # bob's share is his own
    assert (held.take("Alice", 1) or (0, "")) == (0, "")  # another spelling is another caller, not alice
    held.give_back("bob", 100)
    assert held.held("alice") == 100 and held.held("bob") == 0 and held.held() == 101
    held.give_back("Alice", 1)
    held.give_back("alice", 100)
    assert list(held._held) == [] and held.held() == 0


def test_refused_takes_count_nothing_and_a_give_back_past_what_is_held_leaves_no_entry() -> None:
    held = HeldBodies(per_principal=50, total=60)
    assert held.take("a", 40) is None
    assert (held.take("a", 11) or (0, ""))[0] == 429 and held.held("a") == 40
    assert (held.take("b", 21) or (0, ""))[0] == 503 and held.held("b") == 0 and held.held() == 40
    assert "b" not in held._held  # a refused first take leaves nothing behind
    held.give_back("a", 45)  # more than held (never by the fronts): no entry left, not a negative one
    assert "a" not in held._held


def test_random_takes_and_give_backs_match_a_plain_count() -> None:
    rng = random.Random(21)
    held = HeldBytes(per_holder=500, total=1200)
    mine: dict[str, list[int]] = {}
    for _ in range(5000):
        who = rng.choice(["a", "b", "c", "d", "A", "a "])
        if mine.get(who) and rng.random() < 0.5:
            n = mine[who].pop()
            held.give_back(who, n)
            continue
        n = rng.choice([0, 1, 7, 64, 200, 300])
        have = sum(mine.get(who, []))
        everyone = sum(sum(v) for v in mine.values())
        refused = held.take(who, n)
        if n and have + n > 500:
            assert refused is not None and refused[0] == 429
        elif n and everyone + n > 1200:
            assert refused is not None and refused[0] == 503
        else:
            assert refused is None
            if n:
                mine.setdefault(who, []).append(n)
        for name in set(mine) | set(held._held):
            assert held.held(name) == sum(mine.get(name, []))
        assert set(held._held) == {k for k, v in mine.items() if sum(v)}  # no entry holding nothing
        assert held.held() == sum(sum(v) for v in mine.values())
