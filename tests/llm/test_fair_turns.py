"""Who gets the model next: round-robin between parties, bounded waiting, a caller that leaves is forgotten.

``FairTurns`` is plain data under a lock, so the order of grants is exact and checked turn by turn.
"""

from __future__ import annotations

import pytest

from sentinel_mcp.llm.errors import ModelBusy
from sentinel_mcp.llm.fair_turns import FairTurns, Turn


def serve_all(turns: FairTurns) -> list[str]:
    """Grant and finish turns until nobody waits; the parties in the order they were served."""
    order = []
    while (turn := turns.next_turn()) is not None:
        assert turns.take(turn)
        order.append(turn.party)
        turns.done(turn)
    return order


def test_three_parties_one_flooding_are_served_round_robin():
    turns = FairTurns(per_party=4, total=64)
    a1 = turns.join("dave")
    assert turns.take(a1)  # dave holds the model
    for _ in range(3):
        turns.join("dave")  # and floods it
    b = [turns.join("owner"), turns.join("owner")]
    turns.join("builtin:agent")
    assert turns.waiting() == {"dave": 3, "owner": 2, "builtin:agent": 1}
    # only the next turn may take the model, and only once it is free
    assert not turns.take(b[0])
    turns.done(a1)
    assert not turns.take(b[1]) and turns.next_turn() is b[0]
    assert serve_all(turns) == ["owner", "builtin:agent", "dave", "owner", "dave", "dave"]
    assert turns.waiting() == {} and turns.holder is None and turns.waiting_count == 0


def test_a_party_arriving_late_waits_for_at_most_one_turn_of_each_other_party():
    turns = FairTurns(per_party=4, total=64)
    for _ in range(4):
        turns.join("dave")
    for _ in range(4):
        turns.join("erin")
    served = []
    for _ in range(3):  # dave, erin, dave
        t = turns.next_turn()
        assert t is not None and turns.take(t)
        served.append(t.party)
        turns.done(t)
    running = turns.next_turn()
    assert running is not None and running.party == "erin" and turns.take(running)
    turns.join("owner")  # arrives while erin's turn runs; dave is ahead in the ring, erin behind
    turns.done(running)
    assert serve_all(turns)[:2] == ["dave", "owner"]
    assert served == ["dave", "erin", "dave"]


def test_a_flooding_party_that_rejoins_goes_behind_the_others():
    turns = FairTurns(per_party=4, total=64)
    t = turns.join("dave")
    assert turns.take(t)
    turns.join("owner")
    turns.done(t)
    again = turns.join("dave")  # dave asks again at once: owner was waiting first
    assert turns.next_turn() is not again
    assert serve_all(turns) == ["owner", "dave"]


def test_per_party_bound_refuses_at_once_with_the_reason():
    turns = FairTurns(per_party=2, total=64)
    running = turns.join("dave")
    assert turns.take(running)
    turns.join("dave")
    turns.join("dave")  # the running turn does not count against dave's waiting ones
    with pytest.raises(ModelBusy, match="busy with dave's own earlier requests") as err:
        turns.join("dave")
    assert "nothing was queued" in str(err.value)
    assert turns.waiting() == {"dave": 2}  # the refused call was not queued
    assert isinstance(turns.join("owner"), Turn)  # others are not refused for dave's flood
    turns.done(running)
    nxt = turns.next_turn()
    assert nxt is not None and nxt.party == "owner" and turns.take(nxt)
    turns.done(nxt)
    dave = turns.next_turn()
    assert dave is not None and turns.take(dave)  # one of dave's has started: he may ask once more
    turns.join("dave")
    assert turns.waiting() == {"dave": 2}


def test_total_bound_refuses_at_once():
    turns = FairTurns(per_party=4, total=3)
    for party in ("a", "b", "c"):
        turns.join(party)
    with pytest.raises(ModelBusy, match="the most requests it queues are waiting"):  # no count: others'
        turns.join("d")
    assert turns.waiting_count == 3 and "d" not in turns.waiting()


def test_a_waiter_that_leaves_is_taken_out_of_the_queue():
    turns = FairTurns(per_party=4, total=64)
    running = turns.join("dave")
    assert turns.take(running)
    gone = turns.join("owner")
    kept = turns.join("erin")
    turns.leave(gone)
    assert gone.state == "left" and turns.waiting() == {"erin": 1}
    turns.done(running)
    assert turns.next_turn() is kept  # the one who left is not served
    assert not turns.take(gone)
    assert serve_all(turns) == ["erin"]
    # a party's last waiting turn leaving takes the party out of the ring; its later turn rejoins at the back
    turns.join("dave")
    t = turns.join("owner")
    turns.leave(t)
    turns.join("erin")
    turns.join("owner")
    assert serve_all(turns) == ["dave", "erin", "owner"]


def test_leaving_while_holding_frees_the_model():
    turns = FairTurns()
    t = turns.join("dave")
    assert turns.take(t)
    nxt = turns.join("owner")
    turns.leave(t)
    assert turns.holder is None and turns.take(nxt)


def test_the_engines_shutdown_goes_next_and_is_never_refused():
    turns = FairTurns(per_party=1, total=1)
    running = turns.join("dave")
    assert turns.take(running)
    turns.join("owner")  # the queue is full now
    close = turns.join("sentinel:engine", first=True)
    assert turns.next_turn() is close
    turns.done(running)
    assert serve_all(turns) == ["sentinel:engine", "owner"]


def test_a_party_is_in_the_ring_once_even_when_its_shutdown_came_first():
    turns = FairTurns()
    running = turns.join("sentinel:engine")
    assert turns.take(running)
    turns.join("owner")
    turns.join("sentinel:engine", first=True)
    turns.done(running)
    assert serve_all(turns) == ["sentinel:engine", "owner"]
