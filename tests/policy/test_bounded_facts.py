"""Facts learned from a tool's result are kept within ``FACT_VALUE``'s limits (``core/record_bounds.py``):
a hostile upstream's megabyte field or fifty thousand list entries are never stored as facts. A fact cannot
be kept cut (a cut value is another value: the guard would decide on something the upstream never said), so
a binding whose facts are past the limits is a look-up that failed: the facts stay unknown and a decision on
them is denied, saying so. Real SWI-Prolog, real SQLite, a real in-process MCP server."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from tests.policy.test_unreadable_lookups import RESERVATION, decide_cancel, reaches_confirmation

from sentinel_mcp.core.decision import Deny
from sentinel_mcp.core.record_bounds import FACT_VALUE

pytestmark = pytest.mark.timeout(180)
BIG = "A" * 1_000_000
LEG = RESERVATION["flights"][0]


def _largest_fact(store: Path) -> int:
    with sqlite3.connect(store) as db:
        (largest,) = db.execute("SELECT coalesce(max(length(args) + length(fact)), 0) FROM facts").fetchone()
    return int(largest)


@pytest.mark.parametrize(
    ("hostile", "denied"),
    [
        ({**RESERVATION, "cabin": "business" + BIG}, True),  # what the cancel is decided on: unknown, denied
        # the passengers are not what a cancel is decided on: their binding unread, the decision as it was
        ({**RESERVATION, "passengers": [{"first_name": BIG, "last_name": "x", "dob": "1957-03-21"}]}, False),
        ({**RESERVATION, "flights": [LEG] * 50_000}, True),
        ({**RESERVATION, "passengers": [{"first_name": f"p{i}", "last_name": "x", "dob": "1957-03-21"}
                                        for i in range(50_000)]}, True),
    ],
    ids=["megabyte cabin", "megabyte passenger name", "fifty thousand legs", "fifty thousand passengers"],
)
async def test_a_hostile_results_huge_facts_are_never_stored(
    tmp_path: Path, hostile: dict, denied: bool
) -> None:
    d = await decide_cancel(tmp_path, {"reservation": ("raw", hostile)})
    if denied:
        assert isinstance(d, Deny) and not reaches_confirmation(d), d
    else:
        assert reaches_confirmation(d), d
    assert _largest_fact(tmp_path / "facts.db") <= 2 * FACT_VALUE.chars + 200


async def test_a_result_within_the_limits_still_reaches_the_confirmation(tmp_path: Path) -> None:
    d = await decide_cancel(tmp_path, {"reservation": ("raw", {**RESERVATION, "notes": "n" * 5_000})})
    assert reaches_confirmation(d), d


def test_a_binding_with_one_fact_too_large_keeps_none_of_its_facts_nor_its_marker() -> None:
    """Its legs without the one left out would read as "no leg flown": the binding is not read at all."""
    from sentinel_mcp.policy.fact_bounds import kept_facts

    def fact(pred: str, *args: object) -> dict:
        return {"predicate": pred, "args": list(args), "fact": f"{pred}({','.join(map(repr, args))})"}

    extracted = [fact("$fetched", "leg", 2, "t", {}), fact("leg", "r1", "f1"),
                 fact("leg", "r1", "x" * 20_000), fact("$fetched", "cabin", 2, "t", {}),
                 fact("cabin", "r1", "business")]
    kept, unread = kept_facts(extracted)
    assert [(f["predicate"], f["args"][0]) for f in kept] == [("$fetched", "cabin"), ("cabin", "r1")]
    assert len(unread) == 1 and unread[0].startswith("leg/2 (a fact is past the limits")
