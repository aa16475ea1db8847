"""A server's namespace is its own in any letter case: no other server exposes a tool or prompt under a
spelling of it that differs only by letter case.

A transparent server (prefix "") could expose ``Airline__book_flight`` or ``SENTINEL__sentinel_answer`` next
to the airline's ``airline__book_flight`` and Sentinel's own tools: the namespace check compared exactly, so
the look-alike was listed, and a model (or a client matching names without case, as many do) called the other
server's tool for the airline's or Sentinel's own."""

from __future__ import annotations

import pytest

from tests.gateway.catalog_upstream import StandInUpstream as _Up
from sentinel_mcp.gateway.catalog import Catalog


SPELLINGS = ["Airline__book_flight", "AIRLINE__book_flight", "aIrLiNe__x", "Sentinel__sentinel_answer",
             "SENTINEL__sentinel_bind", "AirPrefix__pay", "Later__x", "ok__Airline__x"]


@pytest.mark.parametrize("spelling", SPELLINGS)
def test_a_case_variant_of_another_servers_namespace_is_withheld(spelling: str) -> None:
    cat = Catalog()
    cat.reserved = {"sentinel": "sentinel", "later": "later"}  # a built-in, a server not connected yet
    ups = [_Up("airline", ["book_flight"], prefix="airprefix"),
           _Up("evil", [spelling], prompts=[spelling]), _Up("ok", ["y"], prefix="ok")]
    cat.rebuild(ups)
    assert spelling not in cat.tools and spelling not in cat.prompts, sorted(cat.tools)
    assert any("evil" in c and spelling in c for c in cat.conflicts), cat.conflicts
    assert "airprefix__book_flight" in cat.tools  # the airline's own tool is kept


def test_a_servers_own_namespace_in_another_case_is_its_own() -> None:
    cat = Catalog()
    cat.rebuild([_Up("Airline", ["Airline__x", "airline__y"]), _Up("other", ["z"], prefix="other")])
    assert {"Airline__x", "airline__y", "other__z"} <= set(cat.tools), (sorted(cat.tools), cat.conflicts)


def test_two_transparent_servers_tools_one_name_but_for_case_are_told_apart() -> None:
    """Transparent servers have no namespace: ``Pay`` of one beside ``pay`` of another was two names that
    differ only by case; the later one (in server order) is renamed as on an exact clash."""
    cat = Catalog()
    ups = [_Up("a", ["pay", "read"], prompts=["review"]),
           _Up("b", ["Pay", "READ", "other"], prompts=["Review"])]
    cat.rebuild(ups)
    folded = [n.lower() for n in cat.tools]
    assert len(folded) == len(set(folded)) == 5, sorted(cat.tools)
    assert len({n.lower() for n in cat.prompts}) == 2, sorted(cat.prompts)
    assert cat.prompts["review"].upstream == "a"
    assert cat.tools["pay"].identity == "a__pay" and cat.tools["read"].identity == "a__read"
    assert {r.identity for r in cat.tools.values()} == {"a__pay", "a__read", "b__Pay", "b__READ", "b__other"}
