"""A draft is refused for the kinds of finding its writer never makes (a read_only/1, a guard that holds for
every call, an established fact read blind to an unsure write): decided by each problem's ``code``, never by
the words of its message. A tool or argument name is part of a message: a tool named with a refusing phrase
turned any harmless warning about it into a refusal, and a reworded message silently stopped one."""

from __future__ import annotations

from typing import Any

import pytest

from sentinel_mcp.policy import checker
from sentinel_mcp.policy.draft_check import draft_problems

pytestmark = pytest.mark.timeout(120)

SCHEMA = {"type": "object", "properties": {"order": {"type": "string"}}}
PHRASES = ["holds for every call", "which an effect establishes", "is declared read_only"]


def _tool(name: str, **annotations: Any) -> dict[str, Any]:
    return {"name": name, "inputSchema": SCHEMA, "annotations": annotations}


@pytest.mark.parametrize("phrase", PHRASES)
async def test_a_tool_named_with_a_refusing_phrase_is_only_warned_about(phrase: str) -> None:
    tools = [_tool(phrase, readOnlyHint=False, destructiveHint=False)]
    # a deny list over an argument: a warning, never a refusal (the writer may well write one)
    text = f"guard('shop__{phrase}', [order = O], \\+ member(O, [admin])).\n"
    problems = await draft_problems("shop", tools, text)
    about = [p for p in problems if phrase in p.message]
    assert about and {p.severity for p in about} == {"warning"}, problems
    assert not [p for p in problems if p.severity == "error"], problems


@pytest.mark.parametrize("phrase", PHRASES)
async def test_an_argument_named_with_a_refusing_phrase_is_only_warned_about(phrase: str) -> None:
    tools = [{"name": "modify", "inputSchema": {"type": "object", "properties": {phrase: {"type": "string"}}},
              "annotations": {"readOnlyHint": False, "destructiveHint": False}}]
    text = f"guard('shop__modify', ['{phrase}' = O], \\+ member(O, [admin])).\n"
    problems = await draft_problems("shop", tools, text)
    about = [p for p in problems if phrase in p.message]
    assert about and {p.severity for p in about} == {"warning"}, problems


TOOLS = [
    _tool("get", readOnlyHint=True),
    _tool("wipe", destructiveHint=True),
    _tool("modify", readOnlyHint=False, destructiveHint=False),
]
# each finding the draft's writer never makes, and the constant its message is worded with
REFUSED = {
    "read_only_unasked": ("read_only('shop__wipe').\n", "READ_ONLY_UNASKED"),
    "read_only_destructive": (
        "read_only('shop__wipe'). guard('shop__wipe', [], require(true, r)).\n"
        "binding(wiped(X), tool('shop__wipe', []), extract([X = '/x']), []).\n"
        "guard('shop__get', [], wiped(_)).\n",
        None,
    ),
    "tautological_guard": ("guard('shop__modify', [], \\+ fail).\n", "HOLDS_FOR_EVERY_CALL"),
    "unsure_blind_read": (
        "fact(changed/1). effect('shop__modify', [order = O], [establish(changed(O))]).\n"
        "guard('shop__get', [order = O], ( aggregate_all(count, changed(O), N), N =:= 0 )).\n",
        "UNSURE_UNSEEN",
    ),
    # a directive (never run: a warning in a person's file), or a query, which consult runs as one
    "directive": (":- initialization(halt).\n", None),
    "directive_rule": ("?- halt.\n", None),
    # a guard whose goal a top-level comma split into a fourth argument: guard/4, a predicate nothing reads
    "reserved_arity": ("guard('shop__modify', [order = O], atom(O), O \\== admin).\n", None),
    # a guard written as a rule: guard/2
    "reserved_arity_rule": ("guard('shop__wipe', [order = O]) :- atom(O).\n", None),
    # a guard the checker could not finish checking for a refusing finding: out of its budget
    "unchecked_guard": (
        "fact(blocked/1). guard('shop__modify', [order = O], p0(O)).\n"
        + "".join(f"p{i}(A) :- {', '.join([f'p{i + 1}(A)'] * 200)}.\n" for i in range(6))
        + "p6(A) :- blocked(A).\n",
        "UNCHECKED_DRAFT",
    ),
}


@pytest.mark.parametrize("code", list(REFUSED))
async def test_each_refusing_finding_is_refused_by_its_code(code: str) -> None:
    problems = await draft_problems("shop", TOOLS, REFUSED[code][0])
    mine = [p for p in problems if p.code == code.removesuffix("_rule")]
    assert mine and {p.severity for p in mine} == {"error"}, problems


@pytest.mark.parametrize("code", [c for c, (_, constant) in REFUSED.items() if constant])
async def test_a_reworded_finding_is_still_refused(code: str, monkeypatch: pytest.MonkeyPatch) -> None:
    text, constant = REFUSED[code]
    assert constant is not None
    monkeypatch.setattr(checker, constant, "is worded otherwise now")
    problems = await draft_problems("shop", TOOLS, text)
    mine = [p for p in problems if "is worded otherwise now" in p.message]
    assert mine and {p.severity for p in mine} == {"error"}, problems
    assert {p.code for p in mine} == {code}, mine
