"""A session's mark that it may hold an unsure fact (fact_terms.pl's '$unsure_held'): begin_query/4 reads it
instead of looking the facts up by their first argument alone (a walk over 50k facts when '$unsure' shared
the JIT's bucket with a fact name). A missing mark would hide an unsure fact from every decision, so it must
be there whenever one is stored, by any path, and is dropped only when none is left."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from tests.policy.test_unsure_facts import RULES

from sentinel_mcp.policy.guard import PolicyGuard
from sentinel_mcp.policy.prolog_text import fact_text, quote_atom

pytestmark = pytest.mark.timeout(120)

FAR = time.time() + 10 * 365 * 86400
UNSURE = f"'$unsure'({fact_text('changed', ['k'])})"


async def _marked(guard: PolicyGuard, mod: str) -> bool:
    rows = await guard.engine.run(lambda p: list(p.query(f"{quote_atom(mod)}:'$unsure_held'", maxresult=1)))
    return bool(rows)


async def _allowed(guard: PolicyGuard, session: str) -> bool:
    from tests.policy.test_compiled_rules import both, call

    fast, ref = await both(guard, call("t__once", {"x": "k"}, session))
    assert fast == ref
    return bool(fast["status"] == "proved")


async def test_the_mark_follows_the_unsure_facts_on_every_path(tmp_path: Path) -> None:
    rb = tmp_path / "unsure.pl"
    rb.write_text(RULES)
    guard = PolicyGuard([rb], None, store_path=tmp_path / "facts.db")
    await guard.start(watch=False)
    try:
        mod = await guard.knowledge.ensure("s1", guard.rulebases.current)
        await guard.engine.assert_facts(mod, [(fact_text("open", ["k"]), FAR, "observed")])
        assert not await _marked(guard, mod) and await _allowed(guard, "s1")
        # stored in bulk (lines), one at a time (sn_assert), as a list (a text with a line break)
        for how in ("lines", "one", "list"):
            if how == "lines":
                await guard.engine.assert_facts(mod, [(UNSURE, FAR, "observed")])
            elif how == "one":
                await guard.engine.goal(f"sentinel_core:sn_assert({quote_atom(mod)}, {quote_atom(UNSURE)}, "
                                        f"{FAR!r}, observed)")
            else:
                two = [(UNSURE, FAR, "observed"), ("'a\\nb'", FAR, "observed")]
                await guard.engine.assert_facts(mod, two)
            assert await _marked(guard, mod), how
            assert not await _allowed(guard, "s1"), how  # the unsure fact denies where it would
            # another fact's removal leaves the mark (an unsure fact is still there)
            await guard.engine.retract(mod, fact_text("open", ["zz"]))
            assert await _marked(guard, mod)
            assert not await _allowed(guard, "s1")
            await guard.engine.retract(mod, UNSURE)
            assert not await _marked(guard, mod), how
            assert await _allowed(guard, "s1"), how
        # two unsure facts: removing one keeps the mark; an observed one's removal; expiry
        other = f"'$unsure'({fact_text('changed', ['j'])})"
        soon = time.time() + 1
        await guard.engine.assert_facts(mod, [(UNSURE, FAR, "observed"), (other, soon, "observed")])
        await guard.engine.retract_observed(mod, [UNSURE])
        assert await _marked(guard, mod)
        await guard.engine.purge(mod, time.time() + 5)
        assert not await _marked(guard, mod)
        assert await _allowed(guard, "s1")
        await guard.engine.assert_facts(mod, [(UNSURE, FAR, "observed")])
        await guard.engine.drop_session(mod)
        mod = await guard.knowledge.ensure("s1", guard.rulebases.current)
        await guard.engine.assert_facts(mod, [(fact_text("open", ["k"]), FAR, "observed")])
        assert not await _marked(guard, mod) and await _allowed(guard, "s1")
    finally:
        await guard.close()
