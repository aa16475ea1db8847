"""Which guards a call meets: the engine finds a tool's guards by its first-argument index when no guard of
the
rulebase names its tools by a prefix ('server__*'), and matches every guard otherwise. Both must give the
same guards in the same order as the reference path; wildcard, variable and exact guards all still apply."""

from __future__ import annotations

from pathlib import Path

import pytest

from sentinel_mcp.core.decision import ToolCall
from sentinel_mcp.policy.guard import PolicyGuard

pytestmark = pytest.mark.timeout(60)

EXACT = """
guard('t__a', [n = N], require(N > 1, 'more than one')).
guard('t__a', [n = N], require(N < 9, 'less than nine')).
guard('t__b', [], true).
"""
WILD = EXACT + "guard('t__*', [n = N], require(N =\\= 5, 'never five')).\n"
ANY = EXACT + "guard('*', [n = N], require(N =\\= 7, 'never seven')).\n"


def call(tool: str, args: dict, session: str = "s") -> ToolCall:
    server, _, name = tool.partition("__")
    return ToolCall(name=tool, server=server, tool=name, arguments=args, session_id=session)


async def decisions(tmp: Path, text: str, cases: list[tuple[str, dict]]) -> list[list[tuple]]:
    rb = tmp / "rb.pl"
    rb.write_text(text)
    guard = PolicyGuard([rb], None, store_path=tmp / "facts.db")
    await guard.start(watch=False)
    try:
        out = []
        for fast in (True, False):
            guard.fast_path = fast
            row = []
            for tool, args in cases:
                d = await guard.decide(call(tool, args, f"s{fast}"))
                row.append(
                    (
                        type(d).__name__,
                        getattr(d, "unmet", None),
                        (getattr(d, "proof", None) or {}).get("tree"),
                    )
                )
            out.append(row)
        return out
    finally:
        await guard.close()


CASES = [
    ("t__a", {"n": 3}),
    ("t__a", {"n": 0}),
    ("t__a", {"n": 12}),
    ("t__a", {"n": 5}),
    ("t__a", {"n": 7}),
    ("t__b", {"n": 5}),
    ("t__c", {"n": 5}),
    ("t__c", {"n": 7}),
]


async def test_exact_guards_only(tmp_path: Path) -> None:
    fast, ref = await decisions(tmp_path, EXACT, CASES)
    assert fast == ref
    kinds = [k for k, _, _ in fast]
    assert kinds[:5] == ["Allow", "Deny", "Deny", "Allow", "Allow"]
    assert fast[1][1] == ["more than one"] and fast[2][1] == ["less than nine"]


async def test_a_wildcard_guard_applies_beside_exact_ones(tmp_path: Path) -> None:
    fast, ref = await decisions(tmp_path, WILD, CASES)
    assert fast == ref
    assert fast[3][0] == "Deny" and fast[3][1] == ["never five"]  # t__a n=5: the prefix guard
    assert fast[5][0] == "Deny" and fast[6][0] == "Deny"  # t__b and t__c with n=5
    assert fast[7][0] != "Deny"  # t__c n=7: only the prefix guard applies


async def test_a_guard_of_every_tool_applies_to_every_tool(tmp_path: Path) -> None:
    fast, ref = await decisions(tmp_path, ANY, CASES)
    assert fast == ref
    assert fast[4][0] == "Deny" and fast[4][1] == ["never seven"]
    assert fast[7][0] == "Deny" and fast[7][1] == ["never seven"]
    assert fast[6][0] == "Allow"
