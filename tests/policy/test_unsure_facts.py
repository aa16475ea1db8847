"""What a write whose outcome is unknown would establish is kept as '$unsure'(Fact) (observe_step.py): it
may have happened, so it counts where its presence denies (under one negation, or any odd number), and it
may not have, so it never grants (a positive goal, or under two negations). The same on the compiled path
and the interpreter, in a rule's body and in a guard's own goal."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from tests.policy.test_compiled_rules import both, call

from sentinel_mcp.policy.guard import PolicyGuard
from sentinel_mcp.policy.prolog_text import fact_text

pytestmark = pytest.mark.timeout(120)

FAR = time.time() + 10 * 365 * 86400

RULES = """
fact(changed/1). fact(open/1).
once_only(X) :- open(X), \\+ changed(X).
granted(X) :- open(X), changed(X).
twice(X) :- open(X), \\+ \\+ changed(X).
unchanged(X) :- \\+ changed(X).
notnot(X) :- open(X), \\+ unchanged(X).
thrice(X) :- open(X), \\+ \\+ \\+ changed(X).
guard('t__once', [x = X], once_only(X)).
guard('t__grant', [x = X], granted(X)).
guard('t__twice', [x = X], twice(X)).
guard('t__notnot', [x = X], notnot(X)).
guard('t__thrice', [x = X], thrice(X)).
guard('t__direct', [x = X], ( open(X), \\+ changed(X) )).
guard('t__required', [x = X], require(\\+ changed(X), 'only once')).
"""
DENY_WHEN_UNSURE = ["t__once", "t__thrice", "t__direct", "t__required"]  # presence denies: it counts
NEVER_GRANTS = ["t__grant", "t__twice", "t__notnot"]  # presence grants: it does not count


@pytest.mark.parametrize("changed", ["none", "unsure", "done"])
async def test_an_unsure_fact_denies_where_it_would_and_never_grants(tmp_path: Path, changed: str) -> None:
    rb = tmp_path / "unsure.pl"
    rb.write_text(RULES)
    guard = PolicyGuard([rb], None, store_path=tmp_path / "facts.db")
    await guard.start(watch=False)
    try:
        for tool in DENY_WHEN_UNSURE + NEVER_GRANTS:
            session = f"s-{tool}"
            mod = await guard.knowledge.ensure(session, guard.rulebases.current)
            facts = [(fact_text("open", ["k"]), FAR, "observed")]
            if changed == "unsure":
                facts.append((f"'$unsure'({fact_text('changed', ['k'])})", FAR, "observed"))
            elif changed == "done":
                facts.append((fact_text("changed", ["k"]), FAR, "observed"))
            await guard.engine.assert_facts(mod, facts)
            fast, ref = await both(guard, call(tool, {"x": "k"}, session))
            assert fast == ref, tool
            proved = fast["status"] == "proved"
            if tool in DENY_WHEN_UNSURE:  # allowed only when nothing may have changed the order
                assert proved == (changed == "none"), (tool, changed, fast)
            else:  # allowed only when the change is known to have happened
                assert proved == (changed == "done"), (tool, changed, fast)
    finally:
        await guard.close()
