"""The names waiting beyond the browser's queue (``waiting_names.py``): bounded, looked at oldest first, and
when too many wait the announcer with the most gives one up (its oldest), so a name of another machine keeps
its place however long a flood goes on. (In the browser: ``test_names_heard_in_a_flood.py``.)"""

from __future__ import annotations

from sentinel_mcp.a2a.waiting_names import MAX_LATER, UNREAD, WaitingNames


def test_a_name_of_another_machine_keeps_its_place_and_is_looked_at_in_its_turn() -> None:
    waiting = WaitingNames()
    for i in range(MAX_LATER):
        waiting.add(f"flood-{i}", None, float(i), UNREAD)
    waiting.add("peer", None, 1000.0, "192.0.2.7")
    for i in range(MAX_LATER, 10 * MAX_LATER):  # the flood goes on
        waiting.add(f"flood-{i}", None, float(i), UNREAD)
        assert "peer" in waiting and len(waiting) == MAX_LATER
    looked = [waiting.pop_oldest()[0] for _ in range(2)]
    assert looked[0] == "peer"  # (the flood's older names went before it: its own)


def test_of_equal_announcers_the_newest_gives_up_its_name() -> None:
    waiting = WaitingNames()
    for i in range(MAX_LATER):
        waiting.add(f"n-{i}", None, float(i), f"192.0.2.{i % 250}:{i}")
    waiting.add("newest", None, 999.0, "198.51.100.1")
    assert "newest" not in waiting and "n-0" in waiting and len(waiting) == MAX_LATER
