"""The console's check places are shared fairly: within the cap (``MAX_RUNNING``) a principal holds at most
one place (its second check or what-if is refused at once), and the principals who are not the owner
together hold at most ``MAX_RUNNING - 1``, so readers reloading the policy page never take
the owner's place."""

from __future__ import annotations

import contextlib

import pytest

from sentinel_mcp.policy.check_places import BUSY, KEPT, MAX_RUNNING, OWN_BUSY, ChecksBusy, check_slot


def test_a_principal_holds_one_place_at_most() -> None:
    for owner, name in ((True, "owner"), (False, "alice")):
        with check_slot(name, owner=owner):
            with pytest.raises(ChecksBusy, match=OWN_BUSY), check_slot(name, owner=owner):
                pass
        with check_slot(name, owner=owner):  # given back at its end
            pass


def test_readers_never_take_the_owners_place() -> None:
    assert MAX_RUNNING >= 2
    with contextlib.ExitStack() as held:
        for i in range(MAX_RUNNING - 1):
            held.enter_context(check_slot(f"reader{i}", owner=False))
        with pytest.raises(ChecksBusy) as refused, check_slot("another-reader", owner=False):
            pass
        assert str(refused.value) == KEPT
        with check_slot("owner", owner=True):  # the owner's place is still free
            pass


def test_the_cap_holds_for_everyone() -> None:
    with contextlib.ExitStack() as held:
        held.enter_context(check_slot("owner", owner=True))
        for i in range(MAX_RUNNING - 1):
            held.enter_context(check_slot(f"reader{i}", owner=False))
        for name, owner in (("other-owner-name", True), ("late-reader", False)):
            with pytest.raises(ChecksBusy, match=BUSY), check_slot(name, owner=owner):
                pass
    with check_slot("late-reader", owner=False):  # every place given back
        pass


def test_a_refused_place_is_not_held() -> None:
    with check_slot("alice", owner=False):
        with pytest.raises(ChecksBusy), check_slot("alice", owner=False):
            pass
    with contextlib.ExitStack() as held:  # the refusal above took nothing: all places are free again
        held.enter_context(check_slot("owner", owner=True))
        held.enter_context(check_slot("alice", owner=False))
