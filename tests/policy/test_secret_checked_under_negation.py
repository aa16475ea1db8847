"""A secret may be checked under a negation (``\\+ G``, ``forall/2``): the proof keeps ``not(G)`` with the
value whole (masked), never what G's goals made of it, so the flow check lets G take it apart; what G shows a
person (a question, a denial's reason) is still refused. The device's ``type_text`` checks the typed text's
characters so (its ``text`` is sensitive by the device's schema): before, the walk of schema secrets denied
every ``device__type_text`` call, and the characters of a typed password were in the proof.
Real SWI-Prolog."""

from __future__ import annotations

from pathlib import Path

import pytest

from sentinel_mcp.core.decision import Allow, Deny, ToolCall
from sentinel_mcp.policy.guard import PolicyGuard
from sentinel_mcp.policy.schema_secret_flows import LEAKING_GUARD

pytestmark = pytest.mark.timeout(120)

SECRET = "Hunter2-canary-7731"
# each checks the secret's characters where the proof keeps nothing of them
CHECKED = {
    "double negation": "\\+ \\+ ( atom_codes(P, Cs), forall(member(C, Cs), C >= 32) )",
    "forall": "atom_length(P, N), N > 3, forall(sub_atom(P, _, 1, _, Ch), Ch \\== '\\n')",
    "a negated rule": "\\+ shaped_badly(P)",
    "a require of a negation": "require(\\+ sub_atom(P, _, _, _, '0000'), 'no 0000 in it')",
}
# the same under a negation, shown to a person (or kept after it): refused still
SHOWN = {
    "a question under a negation": "\\+ ( sub_atom(P, 0, 2, _, H), confirmed('~w?', [H]) )",
    "a reason under a negation": "\\+ ( sub_atom(P, 0, 2, _, H), require(fail, H) )",
    "kept after the negation": "\\+ \\+ atom_length(P, 1), sub_atom(P, 0, 2, _, H), confirmed('~w?', [H])",
    "a rule shaped badly kept": "shaped_badly(P)",
}


def _rules() -> str:
    out = ["shaped_badly(P) :- atom_codes(P, Cs), member(C, Cs), C < 32.\n"]
    for n, body in enumerate(CHECKED.values()):
        out.append(f"guard('x__c{n}', [word = P], ( {body} )).\n")
    for n, body in enumerate(SHOWN.values()):
        out.append(f"guard('x__s{n}', [word = P], ( {body} )).\n")
    return "".join(out)


def _call(tool: str) -> ToolCall:
    return ToolCall(name=f"exposed_{tool}", server="x", tool=tool, session_id=f"s-{tool}",
                    arguments={"word": SECRET}, secret_arguments=frozenset({"word"}))


@pytest.fixture
async def guard(tmp_path: Path):  # noqa: ANN201
    rb = tmp_path / "neg.pl"
    rb.write_text(_rules())
    g = PolicyGuard([rb], None, store_path=tmp_path / "facts.db")
    await g.start(watch=False)
    try:
        yield g
    finally:
        await g.close()


@pytest.mark.parametrize(("n", "name"), list(enumerate(CHECKED)))
async def test_a_secret_checked_under_a_negation_is_decided_and_nothing_of_it_is_kept(
        guard: PolicyGuard, n: int, name: str) -> None:
    decision = await guard.decide(_call(f"c{n}"))
    assert isinstance(decision, Allow), decision
    # the value whole may be in the decision (the audit and every display mask it as sent): no piece of it
    shown = decision.model_dump_json().replace(SECRET, "[the secret]")
    codes = ",".join(str(ord(c)) for c in SECRET[:4])
    assert "Hunt" not in shown and codes not in shown and "'H'" not in shown, shown


@pytest.mark.parametrize(("n", "name"), list(enumerate(SHOWN)))
async def test_what_a_negation_shows_of_a_secret_is_refused_still(
        guard: PolicyGuard, n: int, name: str) -> None:
    decision = await guard.decide(_call(f"s{n}"))
    assert isinstance(decision, Deny) and decision.unmet == [LEAKING_GUARD], decision
    assert "Hunter2" not in decision.model_dump_json(), decision
