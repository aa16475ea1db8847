"""A write whose result never came (the gateway timed it out) leaves what it would establish unsure
('$unsure'(changed(k))). A guard that says "not yet" where an unsure fact is not seen - under once/1, in an
if-then-else's condition whose branch is tested later, in a collection compared afterwards, in a predicate
with a cut, down a chain of rules - would have let a second write through: the unsure fact is absent there.
The decision now refuses such a call, saying the earlier outcome is unknown; the `\\+` form denies as before,
and a guard that does not read the unsure fact blind still allows. Real gateway, real upstream subprocess
(tests/policy/blind_write_server.py) that does each write and never answers in time."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest
from mcp import Client
from tests.policy.test_compiled_rules import both, call
from tests.upstream_marker import marked, once_marked

from sentinel_mcp.app.runtime import running_gateway
from sentinel_mcp.config import parse_config
from sentinel_mcp.policy.guard import PolicyGuard
from sentinel_mcp.policy.prolog_text import fact_text
from tests.support.forked_upstreams import forked_spec

pytestmark = pytest.mark.timeout(120)
HERE = Path(__file__).parent
RULEBASE = HERE / "rulebases" / "blind_unsure.pl"
BLIND = ["change_once", "change_ite", "change_findall", "change_count", "change_cut", "change_chain"]
FAR = time.time() + 10 * 365 * 86400


def config(tmp: Path) -> Any:
    env = {"MARKER": str(tmp / "marker"), "SLOW": "3600"}
    server = {**forked_spec(str(HERE / "blind_write_server.py")), "env": env,
              "timeout": 1.0}
    sentinel = {"rulebases": [str(RULEBASE)], "builtins": [], "data_dir": str(tmp / "data")}
    return parse_config({"mcpServers": {"u": server}, "sentinel": sentinel}, base_dir=str(tmp))


def ran(tmp: Path) -> list[str]:
    return marked(tmp / "marker")


def text_of(result: Any) -> str:
    return "\n".join(getattr(c, "text", "") for c in result.content)


def unmet(result: Any) -> list[str]:
    return list((result.meta or {}).get("sentinel/unmet", []))


def tips(result: Any) -> str:
    return " ".join((result.meta or {}).get("sentinel/how_to_unblock", []))


@pytest.mark.parametrize("tool", BLIND + ["change_neg"])
async def test_a_second_write_after_an_unknown_outcome_is_refused_whatever_the_not_yet_spelling(
    tmp_path: Path, tool: str
) -> None:
    async with running_gateway(config(tmp_path)) as rt:
        # the write must reach the upstream: a loaded machine may start it after the gateway's start-up wait
        assert await rt.manager.upstreams["u"].wait_ready(60), rt.manager.upstreams["u"].last_error
        async with Client(rt.front.server, mode="legacy") as c:
            first = await c.call_tool(f"u__{tool}", {"o": "k"})  # allowed: nothing changed yet
            assert first.is_error and "Sentinel refused" not in text_of(first), text_of(first)  # timed out
            assert await once_marked(tmp_path / "marker") == [f"{tool} k"]
            again = await c.call_tool(f"u__{tool}", {"o": "k"})
            assert again.is_error and "Sentinel refused" in text_of(again), text_of(again)
            if tool == "change_neg":  # `\\+` sees the unsure fact: denied as before, by its own condition
                assert "unknown_outcome" not in unmet(again), unmet(again)
            else:
                assert "unknown_outcome" in unmet(again), unmet(again)
                assert "the outcome of an earlier call is unknown: changed(k) may have been written" in \
                    text_of(again), text_of(again)
                assert "new session" in tips(again), tips(again)  # what clears it, truly
            # a guard that does not read changed/1 blind is decided as before: allowed, forwarded
            noted = await c.call_tool("u__note", {"o": "k"})
            assert not noted.is_error and text_of(noted) == "noted", text_of(noted)
    assert ran(tmp_path) == [f"{tool} k"]  # never twice


@pytest.mark.parametrize("state", ["none", "unsure", "unsure_other", "done"])
async def test_every_decision_path_refuses_a_blind_read_of_an_unsure_fact(tmp_path: Path, state: str) -> None:
    """The native fast path and the interpreter (the reference) decide alike: an unsure changed(k) refuses
    every blind spelling, one deeper than the walk follows too; an unsure fact of another predicate, or a sure
    one, is decided as before."""
    guard = PolicyGuard([RULEBASE], None, store_path=tmp_path / "facts.db")
    await guard.start(watch=False)
    try:
        for tool in BLIND + ["change_deep", "change_neg", "note"]:
            session = f"s-{tool}"
            mod = await guard.knowledge.ensure(session, guard.rulebases.current)
            fact = {"unsure": f"'$unsure'({fact_text('changed', ['k'])})",
                    "unsure_other": f"'$unsure'({fact_text('elsewhere', ['k'])})",
                    "done": fact_text("changed", ["k"])}.get(state)
            if fact is not None:
                await guard.engine.assert_facts(mod, [(fact, FAR, "observed")])
            fast, ref = await both(guard, call(f"u__{tool}", {"o": "k"}, session))
            assert fast == ref, (tool, fast, ref)
            # past the walk's depth nothing is known of what is read: any unsure fact refuses it
            unsure = ("unsure", "unsure_other") if tool == "change_deep" else ("unsure",)
            expected = tool == "note" or state == "none" or (state == "unsure_other" and state not in unsure)
            assert (fast["status"] == "proved") == expected, (tool, state, fast)
            blind = any("outcome of an earlier call is unknown" in u for u in fast.get("unmet", []))
            assert blind == (state in unsure and tool in BLIND + ["change_deep"]), (tool, state, fast)
    finally:
        await guard.close()
