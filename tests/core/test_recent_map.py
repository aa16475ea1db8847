"""``RecentMap``: a bounded map that forgets its least recently used key first, with no object of its own per
key (the conversation registry's 20,000 entries: issue 21's memory row). Checked against
``collections.OrderedDict`` driven the same way (``move_to_end`` on a use, ``popitem(last=False)`` past the
capacity), over many random mixes of inserts, updates and uses, and its order queue stays bounded however
often one key is used."""

from __future__ import annotations

import random
from collections import OrderedDict

import pytest

from sentinel_mcp.core.recent_map import RecentMap


class Reference:
    def __init__(self, capacity: int) -> None:
        self.capacity, self.d = capacity, OrderedDict[str, int]()

    def put(self, k: str, v: int) -> None:
        self.d[k] = v  # an existing key keeps its place
        while len(self.d) > self.capacity:
            self.d.popitem(last=False)

    def touch(self, k: str) -> None:
        if k in self.d:
            self.d.move_to_end(k)


@pytest.mark.parametrize("seed", range(40))
def test_it_forgets_exactly_what_an_ordered_dict_would(seed: int) -> None:
    rng = random.Random(seed)
    capacity = rng.choice([1, 2, 3, 10, 64])
    keys = [f"k{i}" for i in range(rng.choice([2, capacity + 1, 3 * capacity + 5]))]
    ours, ref = RecentMap[str, int](capacity), Reference(capacity)
    for step in range(3000):
        k = rng.choice(keys)
        if rng.random() < 0.5:
            ours.put(k, step)
            ref.put(k, step)
        else:
            ours.touch(k)
            ref.touch(k)
        assert len(ours) == len(ref.d) <= capacity
        assert (k in ours) == (k in ref.d) and ours.get(k) == ref.d.get(k)
    assert list(ours) == list(ref.d)  # oldest first, the same order
    assert all(ours.get(k) == v for k, v in ref.d.items())
    assert all(ours.get(k) is None and k not in ours for k in keys if k not in ref.d)


def test_a_key_used_again_and_again_keeps_the_order_queue_bounded() -> None:
    m = RecentMap[str, int](100)
    for i in range(100):
        m.put(f"k{i}", i)
    for _ in range(100_000):
        m.touch("k5")  # one conversation carried back on every call
        assert len(m._order) <= 2 * len(m) + 256
    assert list(m)[-1] == "k5" and len(m) == 100
    m.put("new", 0)
    assert "k0" not in m and "k5" in m and list(m)[0] == "k1"


def test_a_use_of_a_key_it_does_not_hold_changes_nothing() -> None:
    m = RecentMap[str, int](2)
    m.put("a", 1)
    m.put("b", 2)
    for _ in range(1000):
        m.touch("gone")
    assert list(m) == ["a", "b"] and len(m._order) == 2
    m.put("c", 3)
    assert list(m) == ["b", "c"]


def test_a_capacity_below_one_is_refused() -> None:
    for bad in (0, -1):
        with pytest.raises(ValueError):
            RecentMap[str, int](bad)
