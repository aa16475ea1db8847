"""What each guard's decision may read that another conversation's write can change (guard_reads.pl): the
tools of the bindings it reaches, through the rulebase's rules, and whether it reaches a kept fact. The turns
a write takes are made of them (policy/write_turns.py): a guard that reads another upstream's store waits for
that upstream's writes; a goal the walk cannot follow reads everything (wider, never narrower)."""

from __future__ import annotations

from pathlib import Path

from sentinel_mcp.core.decision import ToolCall
from sentinel_mcp.policy.engine import PrologEngine
from sentinel_mcp.policy.rulebase import load_rulebase
from sentinel_mcp.policy.write_turns import KEPT_TURN, turn_keys

RULES = """
fact(sent/1).
option(kept(sent/1)).
binding(a_val(K, V), tool('a__get', [key = K]), extract([V = '/v']), []).
binding(b_val(K, V), tool('b__get', [key = K]), extract([V = '/v']), []).
binding(deep_val(K, V), tool('x__y__get', [key = K]), extract([V = '/v']), []).
ready(K) :- b_val(K, yes).
ready(K) :- deep(K).
deep(K) :- deep_val(K, yes).
guard('a__set', [key = K], require(a_val(K, no), 'taken')).
guard('a__move', [key = K], require(ready(K), 'not ready')).
guard('a__send', [key = K], require(\\+ sent(K), 'sent already')).
guard('a__any', [key = K, name = N], require((G =.. [N, K, yes], fact_provenance(G, _)), 'read')).
effect('a__*', [key = K], [establish(sent(K))]).
"""


def _call(tool: str) -> ToolCall:
    return ToolCall(name=f"renamed_{tool}", server="a", tool=tool, arguments={"key": "k"})


async def test_a_guard_reads_the_upstreams_its_rules_reach(tmp_path: Path) -> None:
    rules = tmp_path / "t.pl"
    rules.write_text(RULES, encoding="utf-8")
    engine = PrologEngine()
    engine.start()
    info = (await load_rulebase(engine, [rules])).info
    reads = {g.tool: (g.reads, g.kept) for g in info.guard_reads}
    assert reads["a__set"] == (["a__get"], False)
    assert reads["a__move"] == (["b__get", "x__y__get"], False)  # through two rules
    assert reads["a__send"] == ([], True)
    # a fact named at run time may be any: every bound tool, the kept facts
    assert reads["a__any"] == (["a__get", "b__get", "x__y__get"], True)
    keeps = info.keeps("a__send")
    assert turn_keys(info, _call("set"), keeps=False) == ("server:a",)
    assert turn_keys(info, _call("move"), keeps=False) == ("server:a", "server:b", "server:x", "server:x__y")
    assert keeps and turn_keys(info, _call("send"), keeps=keeps) == (KEPT_TURN, "server:a")
    assert turn_keys(info, _call("other"), keeps=False) == ("server:a",)  # no guard: its upstream alone
